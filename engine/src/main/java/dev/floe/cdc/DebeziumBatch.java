package dev.floe.cdc;

import java.util.List;

/**
 * A large batch of plain Debezium events decoded and folded per key in columns, on every core, without a
 * tree or an object per event: what {@code exec.ChangeBulk} hands to DuckDB to reconcile with the stored
 * state. Each key's newest deletion, its newest write's position (the row marker's) and image, and each
 * cell's newest write (the row's, unless a write left the column as it was: not in its after image, or
 * Debezium's unchanged-TOAST placeholder).
 *
 * <p>It takes only batches it decodes exactly as {@link DebeziumEvents} does, and returns null for any
 * other (the caller folds it with {@link Fold}, which also names a bad event and why): every line valid
 * JSON, an event (plain, or the payload of a schema envelope whose schema the tree decoder reads) or a
 * tombstone ({@code null}, or an envelope's null payload); {@code op} c, u, d, m, or r (but the read that
 * starts an initial snapshot, which also deletes every older row); a PostgreSQL LSN as an integer, or
 * MySQL's binlog file, pos and row; an after image naming every key column, each value NULL (but in a key
 * column), the placeholder (but in a key column) or of its column's JSON type (true/false, an integer in
 * range, a number, a string without NUL); a before image with the key where a delete or an update
 * needs it; a key change (the old key deleted at its position) but one with the placeholder (the new key
 * takes the old key's value: the fold's {@link Carry}); no two writes of a key at one position
 * (Cassandra's tie-break of their values is the fold's).
 * Column types: {@link FoldedColumns#fits}.
 */
public final class DebeziumBatch extends ColumnarBatch {
  private static final com.fasterxml.jackson.databind.ObjectReader SCHEMA =
      new com.fasterxml.jackson.databind.ObjectMapper().readerFor(com.fasterxml.jackson.databind.JsonNode.class);
  private static final int[] NO_COLUMNS = {};
  private static final byte NONE = 0;
  private static final byte WRITE = 1;
  private static final byte DELETE = 2;

  private DebeziumBatch(TableShape shape, Kind[] kinds) {
    super(shape, kinds);
  }

  /** The batch folded per key, or null when it has an event this decoder does not read exactly. */
  public static FoldedColumns fold(TableShape shape, List<String> lines) {
    Kind[] kinds = kinds(shape);
    if (kinds == null) {
      return null;
    }
    DebeziumBatch batch = new DebeziumBatch(shape, kinds);
    List<Chunk> chunks = chunks(lines, (from, to) -> batch.decode(lines, from, to));
    return chunks == null ? null : batch.fold(chunks);
  }

  /** A chunk of lines decoded: per line what it does, its position, key and after image. */
  private final class Chunk {
    final int n;
    final byte[] op;
    final long[] lsn;
    final Values values;
    /** Per column, per line: whether the after image leaves it as it is (missing, or an unchanged TOAST value). */
    final boolean[][] unwritten;
    /** Whether a write of the chunk leaves a column as it is. */
    boolean partial;
    /** Per line: whether an update changed the key, which also deletes the old key ({@link #oldKeys}). */
    final boolean[] keyChange;
    /** The old key of a line that changed it (made at the chunk's first key change). */
    Values oldKeys;

    Chunk(int n) {
      this.n = n;
      op = new byte[n];
      lsn = new long[n];
      values = new Values(n);
      unwritten = new boolean[kinds.length][n];
      keyChange = new boolean[n];
    }
  }

  private Chunk decode(List<String> lines, int from, int to) {
    Chunk d = new Chunk(to - from);
    Event e = new Event();
    for (int i = from; i < to; i++) {
      e.read(lines.get(i), d, i - from);
    }
    return d;
  }

  /** One event being read, its scratch reused line after line. */
  private final class Event {
    private final JsonCursor in = new JsonCursor(shape, kinds);
    /** The before image's key values. */
    private final Values before = new Values(1);
    private final boolean[] seen = new boolean[kinds.length];
    /** The text of the last schema envelope read and found to be one the tree decoder reads. */
    private String schemaRead;
    /** What that schema says of each field, as the tree decoder reads it. */
    private java.util.Map<String, JsonValues.Hint> schemaHints = java.util.Map.of();
    /** What the images being read take their hints from: none (a plain event), a schema, or null (not known yet). */
    private java.util.Map<String, JsonValues.Hint> imageHints;
    /** The hints of a payload read before its schema ({@link #parse}). */
    private java.util.Map<String, JsonValues.Hint> payloadHints;
    /** Whether the after image last read leaves a column as it is; whether one as Debezium's placeholder. */
    private boolean afterPartial;
    private boolean afterPlaceholder;

    private final Members outerMembers = new Members();
    private final Members payloadMembers = new Members();

    /** The members of an event object read so far. */
    private final class Members {
      String op;
      int beforeIs; // 0 absent or null, 1 an object with the key, 2 an object without it, 3 something else
      int afterIs; // 0 absent or null, 1 an object with every column, 2 an object without, 3 something else
      boolean beforeNamed;
      boolean afterNamed;
      boolean sourceNamed;
      long lsn;
      boolean lsnSeen;
      String binlogFile; // MySQL's position, read where there is no lsn
      long binlogPos = -1;
      long binlogRow = -1;
      int snapshot; // 0 no initial snapshot, 1 a read of one, 2 the read that starts one
      boolean schema;
      int payload; // 0 absent, 1 null, 2 an object
      Members inner;

      /** Made ready for another object's members (one at the top and one for a payload, reused line after line). */
      Members clear() {
        op = null;
        beforeIs = 0;
        afterIs = 0;
        beforeNamed = false;
        afterNamed = false;
        sourceNamed = false;
        lsn = 0;
        lsnSeen = false;
        binlogFile = null;
        binlogPos = -1;
        binlogRow = -1;
        snapshot = 0;
        schema = false;
        payload = 0;
        inner = null;
        return this;
      }

      boolean event() {
        return op != null || beforeNamed || afterNamed || sourceNamed;
      }
    }

    void read(String line, Chunk d, int row) {
      Members outer = parse(line, d, row, null);
      if (outer == null) {
        d.op[row] = NONE; // a tombstone
        return;
      }
      if (in.hintMissing && outer.schema) { // a payload before its schema, read again with the schema known
        outer = parse(line, d, row, schemaHints);
      }
      Members m = outer;
      if (outer.schema && outer.payload != 0) { // an envelope: the event is its payload
        if (outer.event()) {
          throw Refused.INSTANCE; // beside an event's members: which ones count is the tree decoder's business
        }
        if (outer.payload == 1) {
          d.op[row] = NONE; // a tombstone with its schema
          return;
        }
        m = outer.inner;
      } else if (outer.schema || outer.payload != 0) {
        throw Refused.INSTANCE; // half an envelope: the tree decoder's error
      }
      if (m.op == null) {
        throw Refused.INSTANCE;
      }
      switch (m.op) {
        case "m" -> d.op[row] = NONE;
        case "d" -> {
          if (!m.lsnSeen || m.beforeIs != 1) {
            throw Refused.INSTANCE;
          }
          d.op[row] = DELETE;
          d.lsn[row] = m.lsn;
          for (int k : key) { // the key from the before image
            d.values.nulls[k][row] = false;
            if (kinds[k].textual()) {
              ((String[]) d.values.values[k])[row] = before.textAt(k, 0);
            } else {
              ((long[]) d.values.values[k])[row] = before.longAt(k, 0);
            }
          }
        }
        case "c", "u", "r" -> {
          if (!m.lsnSeen || m.afterIs != 1 || m.op.equals("r") && m.snapshot == 2) {
            throw Refused.INSTANCE; // the read that starts a snapshot also deletes every older row: the fold's
          }
          if (m.op.equals("u") && (m.beforeIs == 1 || m.beforeIs == 2)) {
            // a before image that is an object holds the old key: the same key, or a key change, which also
            // deletes the old key at the change
            if (m.beforeIs != 1) {
              throw Refused.INSTANCE;
            }
            boolean same = true;
            for (int k : key) {
              same &= kinds[k].textual() ? before.textAt(k, 0).equals(d.values.textAt(k, row))
                  : before.longAt(k, 0) == d.values.longAt(k, row);
            }
            if (!same && afterPlaceholder) {
              throw Refused.INSTANCE; // the new key takes the old key's unchanged values: the fold's Carry
            }
            d.keyChange[row] = !same;
            if (!same && d.oldKeys == null) {
              d.oldKeys = new Values(d.n);
            }
            for (int k : same ? NO_COLUMNS : key) {
              d.oldKeys.nulls[k][row] = false;
              if (kinds[k].textual()) {
                ((String[]) d.oldKeys.values[k])[row] = before.textAt(k, 0);
              } else {
                ((long[]) d.oldKeys.values[k])[row] = before.longAt(k, 0);
              }
            }
          }
          d.op[row] = WRITE;
          d.partial |= afterPartial;
          // an initial snapshot's reads rank below every streamed change
          d.lsn[row] = m.op.equals("r") && m.snapshot == 1 ? m.lsn - DebeziumEvents.SNAPSHOT_RANK : m.lsn;
        }
        default -> throw Refused.INSTANCE; // t, and what is no op
      }
    }

    /**
     * The line's members, or null for a tombstone; a payload read before its envelope's schema takes its
     * hints from {@code payloadHints} (null: not known, and a value that depends on them is not read).
     */
    private Members parse(String line, Chunk d, int row, java.util.Map<String, JsonValues.Hint> payloadHints) {
      this.payloadHints = payloadHints;
      imageHints = java.util.Map.of();
      in.reset(line);
      in.ws();
      if (in.peek() == 'n') {
        in.literal("null");
        in.end();
        return null;
      }
      Members outer = members(d, row, true);
      in.end();
      return outer;
    }

    /** An event object's members (at the top, also a schema envelope's {@code schema} and {@code payload}). */
    private Members members(Chunk d, int row, boolean top) {
      Members m = (top ? outerMembers : payloadMembers).clear(); // a payload's members are never a payload's
      if (in.peek() != '{') {
        throw Refused.INSTANCE;
      }
      if (in.open()) {
        do {
          String name = in.name();
          switch (name) {
            case "op" -> {
              if (m.op != null || in.peek() != '"') {
                throw Refused.INSTANCE; // named twice, or not a string
              }
              m.op = in.word();
            }
            case "before" -> {
              if (m.beforeNamed) {
                throw Refused.INSTANCE;
              }
              m.beforeNamed = true;
              m.beforeIs = in.peek() == '{' ? (image(d, row, true) ? 1 : 2) : nullOrOther();
            }
            case "after" -> {
              if (m.afterNamed) {
                throw Refused.INSTANCE;
              }
              m.afterNamed = true;
              m.afterIs = in.peek() == '{' ? (image(d, row, false) ? 1 : 2) : nullOrOther();
            }
            case "source" -> {
              if (m.sourceNamed || in.peek() != '{') {
                throw Refused.INSTANCE;
              }
              m.sourceNamed = true;
              if (in.open()) {
                do {
                  String field = in.name();
                  if (field.equals("lsn")) {
                    if (m.lsnSeen) {
                      throw Refused.INSTANCE;
                    }
                    m.lsnSeen = true;
                    m.lsn = in.integer();
                  } else if (field.equals("snapshot")) {
                    m.snapshot = snapshot();
                  } else if (field.equals("file")) {
                    if (m.binlogFile != null || in.peek() != '"') {
                      throw Refused.INSTANCE; // twice, or not text: the tree decoder's business
                    }
                    m.binlogFile = in.string();
                  } else if (field.equals("pos") || field.equals("row")) {
                    long v = in.integer();
                    if (v < 0 || (field.equals("pos") ? m.binlogPos : m.binlogRow) >= 0) {
                      throw Refused.INSTANCE;
                    }
                    if (field.equals("pos")) {
                      m.binlogPos = v;
                    } else {
                      m.binlogRow = v;
                    }
                  } else {
                    in.skip();
                  }
                } while (in.next());
              }
              if (!m.lsnSeen && m.binlogFile != null && m.binlogPos >= 0) {
                try { // MySQL's, as the tree decoder orders it
                  m.lsn = DebeziumEvents.binlog(m.binlogFile, m.binlogPos, Math.max(m.binlogRow, 0));
                } catch (dev.floe.FloeException e) {
                  throw Refused.INSTANCE;
                }
                m.lsnSeen = true;
              }
            }
            case "schema" -> {
              if (!top) {
                in.skip(); // a member of the payload like any other
              } else if (m.schema) {
                throw Refused.INSTANCE;
              } else {
                m.schema = true;
                schema();
              }
            }
            case "payload" -> {
              if (!top) {
                in.skip();
              } else if (m.payload != 0) {
                throw Refused.INSTANCE;
              } else if (in.peek() == 'n') {
                in.literal("null");
                m.payload = 1;
              } else {
                m.payload = 2;
                imageHints = m.schema ? schemaHints : payloadHints; // before its schema: known on a second read
                m.inner = members(d, row, false);
              }
            }
            default -> in.skip();
          }
        } while (in.next());
      }
      return m;
    }

    /**
     * Reads an envelope's schema, which says what temporal and decimal fields mean (nothing for the
     * types this decoder reads): refused if the tree decoder would refuse it. One table's events repeat
     * one schema, so it is checked once and then only compared.
     */
    private void schema() {
      int from = in.position();
      in.skip();
      if (in.sameText(from, schemaRead)) {
        return;
      }
      String text = in.textFrom(from);
      try {
        schemaHints = DebeziumEvents.hintsOf(SCHEMA.readTree(text));
      } catch (com.fasterxml.jackson.core.JsonProcessingException | RuntimeException e) {
        throw Refused.INSTANCE;
      }
      schemaRead = text;
    }

    /**
     * What a source's {@code snapshot} says of a read: 0 not part of an initial snapshot (null, false,
     * "false", "incremental"), 2 the read that starts one ("first", "first_in_data_collection"), 1 any
     * other read of one.
     */
    private int snapshot() {
      char ch = in.peek();
      if (ch == 'n' || ch == 'f') {
        in.bool(false); // null or false
        return 0;
      }
      if (ch == '"') {
        String v = in.string();
        return v.equals("false") || v.equals("incremental") ? 0
            : v.equals("first") || v.equals("first_in_data_collection") ? 2 : 1;
      }
      in.skip();
      return 1;
    }

    /** {@code null} (0) or any other value that is not an object (3). */
    private int nullOrOther() {
      if (in.peek() == 'n') {
        in.literal("null");
        return 0;
      }
      in.skip();
      return 3;
    }

    /**
     * Reads an image object: the after image into the row's columns (true when it names every key column,
     * each column with a value of its type; a column it does not name, or whose value is Debezium's
     * unchanged-TOAST placeholder, is left as it is), or the before image's key columns into scratch (true
     * when it holds each key column once, of its type; other columns are skipped).
     */
    private boolean image(Chunk d, int row, boolean isBefore) {
      java.util.Arrays.fill(seen, false);
      if (!isBefore) {
        afterPlaceholder = false;
        for (int c : cells) {
          d.unwritten[c][row] = true; // until the image names it
        }
      }
      boolean ok = true;
      if (in.open()) {
        do {
          String name = in.name();
          int c = shape.column(name);
          if (c < 0 || isBefore && shape.keyPosition(c) < 0) {
            ok &= isBefore; // a column the table does not have: the fold's error
            in.skip();
            continue;
          }
          seen[c] = true; // a column named twice: the last value, as in Jackson's tree
          if (!isBefore && shape.keyPosition(c) < 0 && in.placeholder()) {
            d.unwritten[c][row] = true; // an unchanged TOAST value: left as it is
            afterPlaceholder = true;
            continue;
          }
          in.hint = imageHints == null ? null : imageHints.getOrDefault(name, JsonValues.Hint.NONE);
          ok &= in.value(c, shape.keyPosition(c) < 0, true);
          if (isBefore) {
            before.set(c, 0, in);
          } else {
            d.values.set(c, row, in);
            d.unwritten[c][row] = false;
          }
        } while (in.next());
      }
      for (int k : key) {
        ok &= seen[k];
      }
      if (!isBefore) {
        afterPartial = false;
        for (int c : cells) {
          afterPartial |= d.unwritten[c][row];
        }
      }
      return ok;
    }
  }

  /**
   * Folds the decoded chunks per key: the newest deletion, the newest write and its row; where a write
   * leaves columns as they are, each cell's newest write and its row too.
   */
  private FoldedColumns fold(List<Chunk> chunks) {
    int lines = chunks.stream().mapToInt(c -> c.n).sum();
    Slots slots = new Slots(lines);
    boolean partial = chunks.stream().anyMatch(c -> c.partial);
    int capacity = Math.max(16, lines); // a key a line, but for key changes' old keys
    long[] del = new long[capacity];
    long[] wp = new long[capacity];
    long[] winner = new long[capacity]; // (chunk << 32) | row of the newest write
    long[][] cellWp = new long[partial ? cells.length : 0][capacity]; // each cell's newest write, where writes are partial
    long[][] cellWinner = new long[partial ? cells.length : 0][capacity];
    long changes = 0;
    long maxPosition = Long.MIN_VALUE;
    for (int ci = 0; ci < chunks.size(); ci++) {
      Chunk d = chunks.get(ci);
      for (int r = 0; r < d.n; r++) {
        byte op = d.op[r];
        if (op == NONE) {
          continue;
        }
        for (int part = d.keyChange[r] ? 0 : 1; part < 2; part++) { // 0: a key change's deletion of the old key
          changes++;
          long at = d.lsn[r];
          maxPosition = Math.max(maxPosition, at);
          int size = slots.size;
          int slot = slots.of(part == 0 ? d.oldKeys : d.values, r);
          if (slot == size) {
            if (size == del.length) {
              del = java.util.Arrays.copyOf(del, size * 2);
              wp = java.util.Arrays.copyOf(wp, size * 2);
              winner = java.util.Arrays.copyOf(winner, size * 2);
              for (int i = 0; i < cellWp.length; i++) {
                cellWp[i] = java.util.Arrays.copyOf(cellWp[i], size * 2);
                cellWinner[i] = java.util.Arrays.copyOf(cellWinner[i], size * 2);
              }
            }
            del[slot] = Long.MIN_VALUE;
            wp[slot] = Long.MIN_VALUE;
            for (long[] w : cellWp) {
              w[slot] = Long.MIN_VALUE;
            }
          }
          if (part == 0 || op == DELETE) {
            del[slot] = Math.max(del[slot], at);
            continue;
          }
          if (at == wp[slot]) {
            return null; // two writes of a key at one position: Cassandra's tie-break, in the fold
          }
          if (at > wp[slot]) {
            wp[slot] = at;
            winner[slot] = ((long) ci << 32) | r;
          }
          for (int i = 0; i < cellWp.length; i++) {
            if (!d.unwritten[cells[i]][r] && at > cellWp[i][slot]) {
              cellWp[i][slot] = at;
              cellWinner[i][slot] = ((long) ci << 32) | r;
            }
          }
        }
      }
    }
    int size = slots.size;
    if (partial) {
      return foldCells(chunks, slots, del, wp, cellWp, cellWinner, changes, maxPosition);
    }
    Object[] cellValues = new Object[cells.length];
    boolean[][] cellNulls = new boolean[cells.length][size];
    for (int i = 0; i < cells.length; i++) {
      cellValues[i] = kinds[cells[i]].textual() ? new String[size] : new long[size];
    }
    for (int slot = 0; slot < size; slot++) {
      if (wp[slot] <= del[slot]) {
        wp[slot] = Long.MIN_VALUE; // a write the key's deletion outranks is no write (RowState.prune)
      }
      if (wp[slot] == Long.MIN_VALUE) {
        for (boolean[] n : cellNulls) {
          n[slot] = true;
        }
        continue;
      }
      for (int i = 0; i < cells.length; i++) {
        copy(chunks, winner[slot], cells[i], cellValues[i], cellNulls[i], slot);
      }
    }
    long[] marker = java.util.Arrays.copyOf(wp, size);
    long[][] cellAt = new long[cells.length][];
    java.util.Arrays.fill(cellAt, marker); // an after image writes every cell at its position
    return new FoldedColumns(size, slots.keys(), java.util.Arrays.copyOf(del, size), marker, cellAt, cellValues,
        cellNulls, changes, maxPosition);
  }

  /** Column {@code c}'s value in the row {@code from} ({@code (chunk << 32) | row}) into a cell's slot. */
  private static void copy(List<Chunk> chunks, long from, int c, Object values, boolean[] nulls, int slot) {
    Chunk d = chunks.get((int) (from >>> 32));
    int r = (int) from;
    nulls[slot] = d.values.nulls[c][r];
    if (values instanceof String[] t) {
      t[slot] = d.values.textAt(c, r);
    } else {
      ((long[]) values)[slot] = d.values.longAt(c, r);
    }
  }

  /** The fold's result where writes leave cells as they are: each cell from its own newest write. */
  private FoldedColumns foldCells(List<Chunk> chunks, Slots slots, long[] del, long[] wp, long[][] cellWp,
      long[][] cellWinner, long changes, long maxPosition) {
    int size = slots.size;
    Object[] cellValues = new Object[cells.length];
    boolean[][] cellNulls = new boolean[cells.length][size];
    long[][] cellAt = new long[cells.length][size];
    for (int i = 0; i < cells.length; i++) {
      int c = cells[i];
      cellValues[i] = kinds[c].textual() ? new String[size] : new long[size];
      for (int slot = 0; slot < size; slot++) {
        long at = cellWp[i][slot] <= del[slot] ? Long.MIN_VALUE : cellWp[i][slot]; // outranked: no write
        cellAt[i][slot] = at;
        if (at == Long.MIN_VALUE) {
          cellNulls[i][slot] = true;
          continue;
        }
        copy(chunks, cellWinner[i][slot], c, cellValues[i], cellNulls[i], slot);
      }
    }
    long[] marker = java.util.Arrays.copyOf(wp, size);
    for (int slot = 0; slot < size; slot++) {
      if (marker[slot] <= del[slot]) {
        marker[slot] = Long.MIN_VALUE; // RowState.prune
      }
    }
    return new FoldedColumns(size, slots.keys(), java.util.Arrays.copyOf(del, size), marker, cellAt, cellValues,
        cellNulls, changes, maxPosition);
  }
}
