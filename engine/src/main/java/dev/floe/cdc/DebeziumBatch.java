package dev.floe.cdc;

import java.util.List;

/**
 * A large batch of plain Debezium events decoded and folded per key in columns, on every core, without a
 * tree or an object per event: what {@code exec.ChangeBulk} hands to DuckDB to reconcile with the stored
 * state. Each key's newest deletion, and its newest write's position (the row marker's and every cell's:
 * an after image writes every column) and image.
 *
 * <p>It takes only batches it decodes exactly as {@link DebeziumEvents} does, and returns null for any
 * other (the caller folds it with {@link Fold}, which also names a bad event and why): every line valid
 * JSON, a plain event (no schema envelope) or a tombstone ({@code null}); {@code op} c, u, d, m, or r outside
 * an initial snapshot; a PostgreSQL LSN as an integer; an after image naming every column once, each value
 * NULL (but in a key column) or of its column's JSON type (true/false, an integer in range, a number, a
 * string without NUL that is not the unchanged-TOAST placeholder); a before image with the key where a
 * delete needs it; no key change; no two writes of a key at one position (Cassandra's tie-break of their
 * values is the fold's). Column types: {@link FoldedColumns#fits}.
 */
public final class DebeziumBatch extends ColumnarBatch {
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

    Chunk(int n) {
      this.n = n;
      op = new byte[n];
      lsn = new long[n];
      values = new Values(n);
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
    private final Cursor in = new Cursor();
    /** The before image's key values. */
    private final Values before = new Values(1);
    private final boolean[] seen = new boolean[kinds.length];

    void read(String line, Chunk d, int row) {
      in.reset(line);
      in.ws();
      if (in.peek() == 'n') {
        in.literal("null");
        in.end();
        d.op[row] = NONE; // a tombstone
        return;
      }
      String op = null;
      int beforeIs = 0; // 0 absent or null, 1 an object with the key, 2 an object without it, 3 something else
      int afterIs = 0; // 0 absent or null, 1 an object with every column, 2 an object without, 3 something else
      boolean beforeNamed = false;
      boolean afterNamed = false;
      boolean sourceNamed = false;
      long lsn = 0;
      boolean lsnSeen = false;
      boolean initial = false;
      if (in.open()) {
        do {
          String name = in.name();
          switch (name) {
            case "op" -> {
              if (op != null || in.peek() != '"') {
                throw Refused.INSTANCE; // named twice, or not a string
              }
              op = in.string();
            }
            case "before" -> {
              if (beforeNamed) {
                throw Refused.INSTANCE;
              }
              beforeNamed = true;
              beforeIs = in.peek() == '{' ? (image(d, row, true) ? 1 : 2) : nullOrOther();
            }
            case "after" -> {
              if (afterNamed) {
                throw Refused.INSTANCE;
              }
              afterNamed = true;
              afterIs = in.peek() == '{' ? (image(d, row, false) ? 1 : 2) : nullOrOther();
            }
            case "source" -> {
              if (sourceNamed || in.peek() != '{') {
                throw Refused.INSTANCE;
              }
              sourceNamed = true;
              if (in.open()) {
                do {
                  String field = in.name();
                  if (field.equals("lsn")) {
                    if (lsnSeen) {
                      throw Refused.INSTANCE;
                    }
                    lsnSeen = true;
                    lsn = in.integer();
                  } else if (field.equals("snapshot")) {
                    initial = !quietSnapshot();
                  } else {
                    in.skip();
                  }
                } while (in.next());
              }
            }
            case "schema", "payload" -> throw Refused.INSTANCE; // an envelope: the tree decoder's
            default -> in.skip();
          }
        } while (in.next());
      }
      in.end();
      if (op == null) {
        throw Refused.INSTANCE;
      }
      switch (op) {
        case "m" -> d.op[row] = NONE;
        case "d" -> {
          if (!lsnSeen || beforeIs != 1) {
            throw Refused.INSTANCE;
          }
          d.op[row] = DELETE;
          d.lsn[row] = lsn;
          for (int k : shape.key()) { // the key from the before image
            d.values.nulls[k][row] = false;
            if (kinds[k] == Kind.TEXT) {
              ((String[]) d.values.values[k])[row] = before.textAt(k, 0);
            } else {
              ((long[]) d.values.values[k])[row] = before.longAt(k, 0);
            }
          }
        }
        case "c", "u", "r" -> {
          if (!lsnSeen || afterIs != 1 || op.equals("r") && initial) {
            throw Refused.INSTANCE;
          }
          if (op.equals("u") && (beforeIs == 1 || beforeIs == 2)) {
            // a before image that is an object holds the old key: the same key, or a key change (the fold's)
            if (beforeIs != 1) {
              throw Refused.INSTANCE;
            }
            for (int k : shape.key()) {
              boolean same = kinds[k] == Kind.TEXT ? before.textAt(k, 0).equals(d.values.textAt(k, row))
                  : before.longAt(k, 0) == d.values.longAt(k, row);
              if (!same) {
                throw Refused.INSTANCE;
              }
            }
          }
          d.op[row] = WRITE;
          d.lsn[row] = lsn;
        }
        default -> throw Refused.INSTANCE; // t, and what is no op
      }
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
     * Reads an image object: the after image into the row's columns (true when it names every column once
     * with values of their types), or the before image's key columns into scratch (true when it holds
     * each key column once, of its type; other columns are skipped).
     */
    private boolean image(Chunk d, int row, boolean isBefore) {
      java.util.Arrays.fill(seen, false);
      boolean ok = true;
      int count = 0;
      if (in.open()) {
        do {
          int c = shape.column(in.name());
          if (c < 0 || isBefore && shape.keyPosition(c) < 0) {
            ok &= isBefore; // a column the table does not have: the fold's error
            in.skip();
          } else {
            count += seen[c] ? 0 : 1; // a column named twice: the last value, as in Jackson's tree
            seen[c] = true;
            ok &= in.value(c, shape.keyPosition(c) < 0, true);
            if (isBefore) {
              before.set(c, 0, in);
            } else {
              d.values.set(c, row, in);
            }
          }
        } while (in.next());
      }
      return ok && count == (isBefore ? shape.keySize() : kinds.length);
    }

    /** A source's {@code snapshot} that does not make a read part of an initial snapshot: null, false, "false", "incremental". */
    private boolean quietSnapshot() {
      char ch = in.peek();
      if (ch == 'n' || ch == 'f') {
        return !in.bool(false);
      }
      if (ch == '"') {
        String v = in.string();
        return v.equals("false") || v.equals("incremental");
      }
      in.skip();
      return false;
    }
  }

  /** Folds the decoded chunks per key: the newest deletion, the newest write and its row. */
  private FoldedColumns fold(List<Chunk> chunks) {
    Slots slots = new Slots();
    long[] del = new long[1024];
    long[] wp = new long[1024];
    long[] winner = new long[1024]; // (chunk << 32) | row of the newest write
    long changes = 0;
    long maxPosition = Long.MIN_VALUE;
    for (int ci = 0; ci < chunks.size(); ci++) {
      Chunk d = chunks.get(ci);
      for (int r = 0; r < d.n; r++) {
        byte op = d.op[r];
        if (op == NONE) {
          continue;
        }
        changes++;
        long at = d.lsn[r];
        maxPosition = Math.max(maxPosition, at);
        int size = slots.size;
        int slot = slots.of(d.values, r);
        if (slot == size) {
          if (size == del.length) {
            del = java.util.Arrays.copyOf(del, size * 2);
            wp = java.util.Arrays.copyOf(wp, size * 2);
            winner = java.util.Arrays.copyOf(winner, size * 2);
          }
          del[slot] = Long.MIN_VALUE;
          wp[slot] = Long.MIN_VALUE;
        }
        if (op == DELETE) {
          del[slot] = Math.max(del[slot], at);
        } else if (at > wp[slot]) {
          wp[slot] = at;
          winner[slot] = ((long) ci << 32) | r;
        } else if (at == wp[slot]) {
          return null; // two writes of a key at one position: Cassandra's tie-break, in the fold
        }
      }
    }
    int size = slots.size;
    int[] cells = shape.cells();
    Object[] cellValues = new Object[cells.length];
    boolean[][] cellNulls = new boolean[cells.length][size];
    for (int i = 0; i < cells.length; i++) {
      cellValues[i] = kinds[cells[i]] == Kind.TEXT ? new String[size] : new long[size];
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
      Chunk d = chunks.get((int) (winner[slot] >>> 32));
      int r = (int) winner[slot];
      for (int i = 0; i < cells.length; i++) {
        int c = cells[i];
        cellNulls[i][slot] = d.values.nulls[c][r];
        if (cellValues[i] instanceof String[] t) {
          t[slot] = d.values.textAt(c, r);
        } else {
          ((long[]) cellValues[i])[slot] = d.values.longAt(c, r);
        }
      }
    }
    long[] marker = java.util.Arrays.copyOf(wp, size);
    long[][] cellAt = new long[cells.length][];
    java.util.Arrays.fill(cellAt, marker); // an after image writes every cell at its position
    return new FoldedColumns(size, slots.keys(), java.util.Arrays.copyOf(del, size), marker, cellAt, cellValues,
        cellNulls, changes, maxPosition);
  }
}
