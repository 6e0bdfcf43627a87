package dev.floe.cdc;

import dev.floe.SqlType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * A large batch of plain Debezium events decoded and folded per key in columns, on every core, without a
 * tree or an object per event: what {@code exec.DebeziumBulk} hands to DuckDB to reconcile with the stored
 * state. Each key's newest deletion, newest write and that write's image.
 *
 * <p>It takes only batches it decodes exactly as {@link DebeziumEvents} does, and returns null for any
 * other (the caller folds it with {@link Fold}, which also names a bad event and why): every line valid
 * JSON, a plain event (no schema envelope) or a tombstone ({@code null}); {@code op} c, u, d, m, or r outside
 * an initial snapshot; a PostgreSQL LSN as an integer; an after image naming every column once, each value
 * NULL (but in a key column) or of its column's JSON type (true/false, an integer in range, a number, a
 * string without NUL that is not the unchanged-TOAST placeholder); a before image with the key where a
 * delete needs it; no key change; no two writes of a key at one position (Cassandra's tie-break of their
 * values is the fold's).
 *
 * <p>Column types: boolean, integer, bigint, double precision, text and unbounded varchar ({@link #fits});
 * a key of integers or text.
 */
public final class DebeziumBatch {
  /** Below this many lines a batch is decoded on one thread. */
  private static final int CHUNK = 16_384;

  /** How each column's values are held: booleans, ints and longs and doubles' bits in a long, text as a String. */
  enum Kind {
    BOOLEAN, INTEGER, BIGINT, DOUBLE, TEXT
  }

  /** The batch folded: one row per key, in no particular order. */
  public static final class Folded {
    /** How many keys. */
    public final int size;
    /** Per key column: its values ({@code long[]} or {@code String[]}). */
    public final Object[] keys;
    /** Per key: its newest deletion's position, or {@link Long#MIN_VALUE}. */
    public final long[] deletedAt;
    /** Per key: its newest write's position, or {@link Long#MIN_VALUE}. */
    public final long[] writtenAt;
    /** Per cell: the newest write's values ({@code long[]}, doubles as bits, or {@code String[]}). */
    public final Object[] cells;
    /** Per cell: whether the newest write's value is NULL (or there is no write). */
    public final boolean[][] cellNulls;
    /** The events that are changes (c, u, d, r). */
    public final long changes;
    /** The greatest position of a change, or {@link Long#MIN_VALUE}. */
    public final long maxPosition;

    Folded(int size, Object[] keys, long[] deletedAt, long[] writtenAt, Object[] cells, boolean[][] cellNulls,
        long changes, long maxPosition) {
      this.size = size;
      this.keys = keys;
      this.deletedAt = deletedAt;
      this.writtenAt = writtenAt;
      this.cells = cells;
      this.cellNulls = cellNulls;
      this.changes = changes;
      this.maxPosition = maxPosition;
    }
  }

  private final TableShape shape;
  /** Per column, how its values are read. */
  private final Kind[] kinds;

  private DebeziumBatch(TableShape shape, Kind[] kinds) {
    this.shape = shape;
    this.kinds = kinds;
  }

  /** Whether a table's columns are all of types this decoder reads (a key of integers or text). */
  public static boolean fits(TableShape shape) {
    return kinds(shape) != null;
  }

  private static Kind[] kinds(TableShape shape) {
    if (shape.cellCount() == 0) {
      return null;
    }
    Kind[] kinds = new Kind[shape.columns().size()];
    for (int c = 0; c < kinds.length; c++) {
      SqlType sql = shape.sqlType(c);
      kinds[c] = switch (sql.kind()) {
        case BOOLEAN -> Kind.BOOLEAN;
        case INTEGER -> Kind.INTEGER;
        case BIGINT -> Kind.BIGINT;
        case DOUBLE -> Kind.DOUBLE;
        case TEXT -> Kind.TEXT;
        case VARCHAR -> sql.precision() > 0 ? null : Kind.TEXT;
        default -> null;
      };
      if (kinds[c] == null || shape.keyPosition(c) >= 0 && (kinds[c] == Kind.BOOLEAN || kinds[c] == Kind.DOUBLE)) {
        return null;
      }
    }
    return kinds;
  }

  /** The kind of column {@code c}'s values in {@link Folded} (for its reader). */
  public static String kindOf(TableShape shape, int c) {
    Kind[] kinds = kinds(shape);
    return kinds == null ? null : kinds[c].name();
  }

  /** The batch folded per key, or null when it has an event this decoder does not read exactly. */
  public static Folded fold(TableShape shape, List<String> lines) {
    Kind[] kinds = kinds(shape);
    if (kinds == null) {
      return null;
    }
    DebeziumBatch batch = new DebeziumBatch(shape, kinds);
    int chunks = (lines.size() + CHUNK - 1) / CHUNK;
    List<Decoded> decoded = IntStream.range(0, chunks).parallel()
        .mapToObj(i -> batch.decode(lines, i * CHUNK, Math.min(lines.size(), (i + 1) * CHUNK))).toList();
    for (Decoded d : decoded) {
      if (d == null) {
        return null;
      }
    }
    return batch.fold(decoded);
  }

  // ------------------------------------------------------------------ decoding

  private static final byte OP_NONE = 0;
  private static final byte OP_WRITE = 1;
  private static final byte OP_DELETE = 2;

  /** A chunk of lines decoded: per line what it does, its position, key and after image. */
  private final class Decoded {
    final int n;
    final byte[] op;
    final long[] lsn;
    /** Per column: long[] or String[]. */
    final Object[] values;
    final boolean[][] nulls;

    Decoded(int n) {
      this.n = n;
      op = new byte[n];
      lsn = new long[n];
      values = new Object[kinds.length];
      nulls = new boolean[kinds.length][];
      for (int c = 0; c < kinds.length; c++) {
        values[c] = kinds[c] == Kind.TEXT ? new String[n] : new long[n];
        nulls[c] = new boolean[n];
      }
    }
  }

  /** Thrown to stop decoding a batch this decoder does not take; no stack trace. */
  private static final class Refused extends RuntimeException {
    static final Refused INSTANCE = new Refused();

    private Refused() {
      super(null, null, false, false);
    }
  }

  private Decoded decode(List<String> lines, int from, int to) {
    Decoded d = new Decoded(to - from);
    Event e = new Event();
    try {
      for (int i = from; i < to; i++) {
        e.read(lines.get(i), d, i - from);
      }
      return d;
    } catch (Refused r) {
      return null;
    }
  }

  /** One event being read, its scratch reused line after line. */
  private final class Event {
    private String s;
    private int p;
    private final long[] beforeLongs = new long[kinds.length];
    private final String[] beforeTexts = new String[kinds.length];
    private final boolean[] beforeSeen = new boolean[kinds.length];
    private final boolean[] afterSeen = new boolean[kinds.length];

    void read(String line, Decoded d, int row) {
      s = line;
      p = 0;
      ws();
      if (p < s.length() && s.charAt(p) == 'n') {
        literal("null");
        end();
        d.op[row] = OP_NONE; // a tombstone
        return;
      }
      expect('{');
      String op = null;
      int before = 0; // 0 absent or null, 1 an object with the key, 2 an object without it, 3 something else
      int after = 0; // 0 absent or null, 1 an object with every column, 2 an object without, 3 something else
      boolean source = false;
      long lsn = 0;
      boolean lsnSeen = false;
      boolean initial = false;
      boolean beforeField = false;
      boolean afterField = false;
      ws();
      if (peek() != '}') {
        while (true) {
          ws();
          String name = string();
          ws();
          expect(':');
          ws();
          switch (name) {
            case "op" -> {
              if (op != null || peek() != '"') {
                throw Refused.INSTANCE;
              }
              op = string();
            }
            case "before" -> {
              if (beforeField) {
                throw Refused.INSTANCE; // named twice
              }
              beforeField = true;
              before = peek() == '{' ? (image(d, row, true) ? 1 : 2) : nullOrOther();
            }
            case "after" -> {
              if (afterField) {
                throw Refused.INSTANCE;
              }
              afterField = true;
              after = peek() == '{' ? (image(d, row, false) ? 1 : 2) : nullOrOther();
            }
            case "source" -> {
              if (source || peek() != '{') {
                throw Refused.INSTANCE;
              }
              source = true;
              p++;
              ws();
              if (peek() != '}') {
                while (true) {
                  ws();
                  String field = string();
                  ws();
                  expect(':');
                  ws();
                  if (field.equals("lsn")) {
                    if (lsnSeen) {
                      throw Refused.INSTANCE;
                    }
                    lsnSeen = true;
                    lsn = integer();
                  } else if (field.equals("snapshot")) {
                    initial = !quietSnapshot();
                  } else {
                    skip();
                  }
                  ws();
                  if (peek() == ',') {
                    p++;
                    continue;
                  }
                  break;
                }
              }
              expect('}');
            }
            case "schema", "payload" -> throw Refused.INSTANCE; // an envelope: its payload is read as a tree
            default -> skip();
          }
          ws();
          if (peek() == ',') {
            p++;
            continue;
          }
          break;
        }
      }
      expect('}');
      end();
      if (op == null) {
        throw Refused.INSTANCE;
      }
      switch (op) {
        case "m" -> d.op[row] = OP_NONE;
        case "d" -> {
          if (!lsnSeen || before != 1) {
            throw Refused.INSTANCE;
          }
          d.op[row] = OP_DELETE;
          d.lsn[row] = lsn;
          int[] key = shape.key();
          for (int k : key) { // the key from the before image
            d.nulls[k][row] = false;
            if (kinds[k] == Kind.TEXT) {
              ((String[]) d.values[k])[row] = beforeTexts[k];
            } else {
              ((long[]) d.values[k])[row] = beforeLongs[k];
            }
          }
        }
        case "c", "u", "r" -> {
          if (!lsnSeen || after != 1 || op.equals("r") && initial) {
            throw Refused.INSTANCE;
          }
          if (op.equals("u") && before != 0 && before != 3) {
            // a before image that is an object holds the old key: the same key, or a key change (the fold's)
            if (before != 1) {
              throw Refused.INSTANCE;
            }
            for (int k : shape.key()) {
              boolean same = kinds[k] == Kind.TEXT ? beforeTexts[k].equals(((String[]) d.values[k])[row])
                  : beforeLongs[k] == ((long[]) d.values[k])[row];
              if (!same) {
                throw Refused.INSTANCE;
              }
            }
          }
          d.op[row] = OP_WRITE;
          d.lsn[row] = lsn;
        }
        default -> throw Refused.INSTANCE; // t, and what is no op
      }
    }

    /** {@code null} (0) or any other value that is not an object (3). */
    private int nullOrOther() {
      if (peek() == 'n') {
        literal("null");
        return 0;
      }
      skip();
      return 3;
    }

    /**
     * Reads an image object: the after image into the row's columns (true when it names every column once
     * with values of their types; false when not), or the before image's key columns into scratch (true
     * when it holds each key column once, of its type; other columns are skipped).
     */
    private boolean image(Decoded d, int row, boolean before) {
      boolean[] seen = before ? beforeSeen : afterSeen;
      java.util.Arrays.fill(seen, false);
      boolean ok = true;
      int count = 0;
      p++; // {
      ws();
      if (peek() != '}') {
        while (true) {
          ws();
          String name = string();
          ws();
          expect(':');
          ws();
          int c = shape.column(name);
          if (c < 0 || before && shape.keyPosition(c) < 0) {
            if (!before) {
              ok = false; // a column the table does not have: the fold's error
            }
            skip();
          } else if (seen[c]) {
            throw Refused.INSTANCE; // a column named twice: which one a tree keeps is the fold's business
          } else {
            seen[c] = true;
            count++;
            if (!value(c, d, row, before)) {
              ok = false;
            }
          }
          ws();
          if (peek() == ',') {
            p++;
            continue;
          }
          break;
        }
      }
      expect('}');
      return ok && count == (before ? shape.keySize() : kinds.length);
    }

    /**
     * Reads column {@code c}'s value into the row (or, for a before image, into scratch): whether it is
     * NULL where allowed or of the column's JSON type, read as {@link JsonValues} reads it.
     */
    private boolean value(int c, Decoded d, int row, boolean before) {
      boolean key = shape.keyPosition(c) >= 0;
      char ch = peek();
      if (ch == 'n') {
        literal("null");
        if (!before) {
          d.nulls[c][row] = true;
        }
        return !key;
      }
      switch (kinds[c]) {
        case TEXT -> {
          if (ch != '"') {
            skip();
            return false;
          }
          String v = string();
          if (v.indexOf('\0') >= 0 || v.equals(ChangeFormat.UNAVAILABLE) || v.equals(ChangeFormat.UNAVAILABLE_BYTES)) {
            return false;
          }
          if (before) {
            beforeTexts[c] = v;
          } else {
            ((String[]) d.values[c])[row] = v;
            d.nulls[c][row] = false;
          }
          return true;
        }
        case BOOLEAN -> {
          long v;
          if (ch == 't') {
            literal("true");
            v = 1;
          } else if (ch == 'f') {
            literal("false");
            v = 0;
          } else {
            skip();
            return false;
          }
          ((long[]) d.values[c])[row] = v;
          d.nulls[c][row] = false;
          return true;
        }
        default -> {
          if (ch != '-' && (ch < '0' || ch > '9')) {
            skip();
            return false;
          }
          int start = p;
          boolean integral = number();
          long v;
          if (kinds[c] == Kind.DOUBLE) {
            if (integral) {
              Long l = parseLong(start, p);
              if (l == null) {
                return false;
              }
              v = Double.doubleToRawLongBits((double) l);
            } else {
              v = Double.doubleToRawLongBits(Double.parseDouble(s.substring(start, p)));
            }
          } else {
            Long l = integral ? parseLong(start, p) : null;
            if (l == null || kinds[c] == Kind.INTEGER && (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE)) {
              return false;
            }
            v = l;
          }
          if (before) {
            beforeLongs[c] = v;
          } else {
            ((long[]) d.values[c])[row] = v;
            d.nulls[c][row] = false;
          }
          return true;
        }
      }
    }

    /** A source's {@code snapshot} that does not make a read part of an initial snapshot: null, false, "false", "incremental". */
    private boolean quietSnapshot() {
      char ch = peek();
      if (ch == 'n') {
        literal("null");
        return true;
      }
      if (ch == 'f') {
        literal("false");
        return true;
      }
      if (ch == '"') {
        String v = string();
        return v.equals("false") || v.equals("incremental");
      }
      skip();
      return false;
    }

    /** A JSON integer in the range of a long. */
    private long integer() {
      int start = p;
      if (peek() != '-' && (peek() < '0' || peek() > '9') || !number()) {
        throw Refused.INSTANCE;
      }
      Long l = parseLong(start, p);
      if (l == null) {
        throw Refused.INSTANCE;
      }
      return l;
    }

    private Long parseLong(int start, int end) {
      try {
        return Long.parseLong(s, start, end, 10);
      } catch (NumberFormatException e) {
        return null; // out of range
      }
    }

    // ---------------------------------------------------------------- JSON's grammar

    private char peek() {
      if (p >= s.length()) {
        throw Refused.INSTANCE;
      }
      return s.charAt(p);
    }

    private void ws() {
      while (p < s.length()) {
        char c = s.charAt(p);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
          return;
        }
        p++;
      }
    }

    private void end() {
      ws();
      if (p != s.length()) {
        throw Refused.INSTANCE;
      }
    }

    private void expect(char c) {
      if (peek() != c) {
        throw Refused.INSTANCE;
      }
      p++;
    }

    private void literal(String word) {
      if (!s.startsWith(word, p)) {
        throw Refused.INSTANCE;
      }
      p += word.length();
    }

    /** A number as JSON has it; whether it is an integer (no fraction, no exponent). */
    private boolean number() {
      boolean integral = true;
      if (peek() == '-') {
        p++;
      }
      char c = peek();
      if (c == '0') {
        p++;
      } else if (c >= '1' && c <= '9') {
        while (p < s.length() && s.charAt(p) >= '0' && s.charAt(p) <= '9') {
          p++;
        }
      } else {
        throw Refused.INSTANCE;
      }
      if (p < s.length() && s.charAt(p) == '.') {
        integral = false;
        p++;
        digits();
      }
      if (p < s.length() && (s.charAt(p) == 'e' || s.charAt(p) == 'E')) {
        integral = false;
        p++;
        if (p < s.length() && (s.charAt(p) == '+' || s.charAt(p) == '-')) {
          p++;
        }
        digits();
      }
      return integral;
    }

    private void digits() {
      int start = p;
      while (p < s.length() && s.charAt(p) >= '0' && s.charAt(p) <= '9') {
        p++;
      }
      if (p == start) {
        throw Refused.INSTANCE;
      }
    }

    /** A string's value, its escapes decoded; no raw control character, no unpaired surrogate. */
    private String string() {
      expect('"');
      int start = p;
      while (true) {
        char c = peek();
        if (c == '"') {
          String v = s.substring(start, p);
          p++;
          return v;
        }
        if (c == '\\' || c < 0x20 || Character.isSurrogate(c)) {
          break;
        }
        p++;
      }
      StringBuilder b = new StringBuilder(p - start + 16).append(s, start, p);
      while (true) {
        char c = peek();
        p++;
        if (c == '"') {
          break;
        } else if (c < 0x20) {
          throw Refused.INSTANCE;
        } else if (c == '\\') {
          char e = peek();
          p++;
          switch (e) {
            case '"', '\\', '/' -> b.append(e);
            case 'b' -> b.append('\b');
            case 'f' -> b.append('\f');
            case 'n' -> b.append('\n');
            case 'r' -> b.append('\r');
            case 't' -> b.append('\t');
            case 'u' -> {
              if (p + 4 > s.length()) {
                throw Refused.INSTANCE;
              }
              int u = 0;
              for (int i = 0; i < 4; i++) {
                int h = Character.digit(s.charAt(p + i), 16);
                if (h < 0) {
                  throw Refused.INSTANCE;
                }
                u = u * 16 + h;
              }
              p += 4;
              b.append((char) u);
            }
            default -> throw Refused.INSTANCE;
          }
        } else {
          b.append(c);
        }
      }
      String v = b.toString();
      for (int i = 0; i < v.length(); i++) { // surrogates in pairs only (from the text or from escapes)
        char c = v.charAt(i);
        if (Character.isHighSurrogate(c) && i + 1 < v.length() && Character.isLowSurrogate(v.charAt(i + 1))) {
          i++;
        } else if (Character.isSurrogate(c)) {
          throw Refused.INSTANCE;
        }
      }
      return v;
    }

    /** Skips any JSON value, checking its grammar. */
    private void skip() {
      char c = peek();
      switch (c) {
        case '{' -> {
          p++;
          ws();
          if (peek() != '}') {
            while (true) {
              ws();
              string();
              ws();
              expect(':');
              ws();
              skip();
              ws();
              if (peek() == ',') {
                p++;
                continue;
              }
              break;
            }
          }
          expect('}');
        }
        case '[' -> {
          p++;
          ws();
          if (peek() != ']') {
            while (true) {
              ws();
              skip();
              ws();
              if (peek() == ',') {
                p++;
                continue;
              }
              break;
            }
          }
          expect(']');
        }
        case '"' -> string();
        case 't' -> literal("true");
        case 'f' -> literal("false");
        case 'n' -> literal("null");
        default -> number();
      }
    }
  }

  // ------------------------------------------------------------------ folding

  /** Folds the decoded chunks per key: the newest deletion, the newest write and its row. */
  private Folded fold(List<Decoded> decoded) {
    int[] key = shape.key();
    boolean oneLongKey = key.length == 1 && kinds[key[0]] != Kind.TEXT;
    LongSlots longSlots = oneLongKey ? new LongSlots() : null;
    Map<Object, Integer> slots = oneLongKey ? null : new HashMap<>();
    int size = 0;
    long[] del = new long[1024];
    long[] wp = new long[1024];
    long[] winner = new long[1024]; // (chunk << 32) | row of the newest write
    long changes = 0;
    long maxPosition = Long.MIN_VALUE;
    for (int ci = 0; ci < decoded.size(); ci++) {
      Decoded d = decoded.get(ci);
      for (int r = 0; r < d.n; r++) {
        byte op = d.op[r];
        if (op == OP_NONE) {
          continue;
        }
        changes++;
        long at = d.lsn[r];
        maxPosition = Math.max(maxPosition, at);
        int slot;
        if (oneLongKey) {
          slot = longSlots.slot(((long[]) d.values[key[0]])[r], size);
        } else {
          Object k = keyOf(d, r);
          Integer found = slots.putIfAbsent(k, size);
          slot = found == null ? size : found;
        }
        if (slot == size) {
          if (size == del.length) {
            del = java.util.Arrays.copyOf(del, size * 2);
            wp = java.util.Arrays.copyOf(wp, size * 2);
            winner = java.util.Arrays.copyOf(winner, size * 2);
          }
          del[size] = Long.MIN_VALUE;
          wp[size] = Long.MIN_VALUE;
          size++;
        }
        if (op == OP_DELETE) {
          del[slot] = Math.max(del[slot], at);
        } else if (at > wp[slot]) {
          wp[slot] = at;
          winner[slot] = ((long) ci << 32) | r;
        } else if (at == wp[slot]) {
          return null; // two writes of a key at one position: Cassandra's tie-break, in the fold
        }
      }
    }
    Object[] keys = new Object[key.length];
    for (int k = 0; k < key.length; k++) {
      keys[k] = kinds[key[k]] == Kind.TEXT ? new String[size] : new long[size];
    }
    int[] cells = shape.cells();
    Object[] cellValues = new Object[cells.length];
    boolean[][] cellNulls = new boolean[cells.length][size];
    for (int i = 0; i < cells.length; i++) {
      cellValues[i] = kinds[cells[i]] == Kind.TEXT ? new String[size] : new long[size];
    }
    // each key's values from the row of its newest write, or of any of its events (a deletion's key)
    long[] any = new long[size];
    if (oneLongKey) {
      longSlots.forEach((k, slot) -> ((long[]) keys[0])[slot] = k);
    } else {
      for (Map.Entry<Object, Integer> e : slots.entrySet()) {
        Object k = e.getKey();
        int slot = e.getValue();
        for (int i = 0; i < key.length; i++) {
          Object v = key.length == 1 ? k : ((Key) k).values()[i];
          if (keys[i] instanceof String[] t) {
            t[slot] = (String) v;
          } else {
            ((long[]) keys[i])[slot] = (Long) v;
          }
        }
      }
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
      Decoded d = decoded.get((int) (winner[slot] >>> 32));
      int r = (int) winner[slot];
      for (int i = 0; i < cells.length; i++) {
        int c = cells[i];
        cellNulls[i][slot] = d.nulls[c][r];
        if (cellValues[i] instanceof String[] t) {
          t[slot] = ((String[]) d.values[c])[r];
        } else {
          ((long[]) cellValues[i])[slot] = ((long[]) d.values[c])[r];
        }
      }
    }
    return new Folded(size, keys, del, wp, cellValues, cellNulls, changes, maxPosition);
  }

  /** A key of row {@code r} as a map key: its one value, or a {@link Key} of its values. */
  private Object keyOf(Decoded d, int r) {
    int[] key = shape.key();
    if (key.length == 1) {
      return kinds[key[0]] == Kind.TEXT ? ((String[]) d.values[key[0]])[r] : (Object) ((long[]) d.values[key[0]])[r];
    }
    Object[] values = new Object[key.length];
    for (int k = 0; k < key.length; k++) {
      values[k] = kinds[key[k]] == Kind.TEXT ? ((String[]) d.values[key[k]])[r] : (Object) ((long[]) d.values[key[k]])[r];
    }
    return new Key(values);
  }

  /** An open-addressing map of long keys to slots. */
  private static final class LongSlots {
    private long[] keys = new long[1 << 16];
    private int[] slots = new int[1 << 16];
    private boolean[] used = new boolean[1 << 16];
    private int count;

    /** The slot of {@code k}, given {@code next} if it is new. */
    int slot(long k, int next) {
      if (count * 2 >= keys.length) {
        grow();
      }
      int mask = keys.length - 1;
      int i = hash(k) & mask;
      while (used[i]) {
        if (keys[i] == k) {
          return slots[i];
        }
        i = (i + 1) & mask;
      }
      used[i] = true;
      keys[i] = k;
      slots[i] = next;
      count++;
      return next;
    }

    private static int hash(long k) {
      long h = k * 0x9E3779B97F4A7C15L;
      return (int) (h ^ (h >>> 32));
    }

    private void grow() {
      long[] oldKeys = keys;
      int[] oldSlots = slots;
      boolean[] oldUsed = used;
      keys = new long[oldKeys.length * 2];
      slots = new int[oldKeys.length * 2];
      used = new boolean[oldKeys.length * 2];
      int mask = keys.length - 1;
      for (int j = 0; j < oldKeys.length; j++) {
        if (oldUsed[j]) {
          int i = hash(oldKeys[j]) & mask;
          while (used[i]) {
            i = (i + 1) & mask;
          }
          used[i] = true;
          keys[i] = oldKeys[j];
          slots[i] = oldSlots[j];
        }
      }
    }

    interface Each {
      void accept(long key, int slot);
    }

    void forEach(Each each) {
      for (int j = 0; j < keys.length; j++) {
        if (used[j]) {
          each.accept(keys[j], slots[j]);
        }
      }
    }
  }
}
