package dev.floe.cdc;

import dev.floe.SqlType;
import java.util.List;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/**
 * What the columnar decoders of large batches ({@link DebeziumBatch}, {@link LwwBatch}) share: the column
 * types they read and how their values are held, decoding a batch's lines in chunks on every core (each
 * line read by a {@link JsonCursor}, which reads a column's value as {@link JsonValues} does or says it
 * does not), and a map of keys to the fold's slots. A decoder takes a batch only if it reads every line exactly as the format's tree decoder
 * does; otherwise it refuses it ({@link Refused}) and the batch is folded by {@link Fold}.
 */
abstract class ColumnarBatch {
  /** Lines decoded on one thread at a time. */
  private static final int CHUNK = 16_384;

  /**
   * How a column's values are held: booleans, smallints, ints, longs, doubles' and reals' bits (a real
   * as the double of its float), dates (days), times of day and timestamps (microseconds) in a long; text,
   * uuids (in their canonical form), decimals (at the column's scale, plain) and bytes (one
   * char a byte, ISO 8859-1) as a String.
   */
  enum Kind {
    BOOLEAN, SMALLINT, INTEGER, BIGINT, REAL, DOUBLE, TEXT, UUID, DATE, TIME, TIMESTAMP, DECIMAL, BYTEA;

    /** Whether values of this kind are held as Strings. */
    boolean textual() {
      return this == TEXT || this == UUID || this == DECIMAL || this == BYTEA;
    }
  }

  final TableShape shape;
  /** The key's columns and the cells' ({@link TableShape#key}, {@link TableShape#cells}: copies, made once). */
  final int[] key;
  final int[] cells;
  /** Per column, how its values are read. */
  final Kind[] kinds;

  ColumnarBatch(TableShape shape, Kind[] kinds) {
    this.shape = shape;
    this.kinds = kinds;
    this.key = shape.key();
    this.cells = shape.cells();
  }

  /** Per column, how its values are read, or null when a column is of a type these decoders do not read. */
  static Kind[] kinds(TableShape shape) {
    if (shape.cellCount() == 0) {
      return null;
    }
    Kind[] kinds = new Kind[shape.columns().size()];
    for (int c = 0; c < kinds.length; c++) {
      SqlType sql = shape.sqlType(c);
      kinds[c] = switch (sql.kind()) {
        case BOOLEAN -> Kind.BOOLEAN;
        case SMALLINT -> Kind.SMALLINT;
        case INTEGER -> Kind.INTEGER;
        case BIGINT -> Kind.BIGINT;
        case REAL -> Kind.REAL;
        case DOUBLE -> Kind.DOUBLE;
        case TEXT, VARCHAR, CHAR -> Kind.TEXT;
        case UUID -> Kind.UUID;
        case DATE -> Kind.DATE;
        case TIME -> Kind.TIME;
        case TIMESTAMP, TIMESTAMPTZ -> Kind.TIMESTAMP;
        case DECIMAL -> Kind.DECIMAL;
        case BYTEA -> Kind.BYTEA;
        default -> null;
      };
      if (kinds[c] == null || shape.keyPosition(c) >= 0 && (kinds[c] == Kind.BOOLEAN || kinds[c] == Kind.DOUBLE
          || kinds[c] == Kind.REAL || kinds[c] == Kind.BYTEA)) {
        return null;
      }
    }
    return kinds;
  }

  /** Decodes the lines in chunks on every core; null if any chunk refused. */
  static <T> List<T> chunks(List<String> lines, ChunkDecoder<T> decoder) {
    int chunks = (lines.size() + CHUNK - 1) / CHUNK;
    IntFunction<T> one = i -> {
      try {
        return decoder.decode(i * CHUNK, Math.min(lines.size(), (i + 1) * CHUNK));
      } catch (Refused r) {
        return null;
      }
    };
    List<T> out = IntStream.range(0, chunks).parallel().mapToObj(one).toList();
    return out.contains(null) ? null : out;
  }

  interface ChunkDecoder<T> {
    T decode(int from, int to);
  }

  /** Thrown to stop decoding a batch a decoder does not take; no stack trace. */
  static final class Refused extends RuntimeException {
    static final Refused INSTANCE = new Refused();

    private Refused() {
      super(null, null, false, false);
    }
  }

  /** Column values of a chunk's rows: per column {@code long[]} (text: {@code String[]}) and NULLs. */
  final class Values {
    final Object[] values;
    final boolean[][] nulls;

    Values(int n) {
      values = new Object[kinds.length];
      nulls = new boolean[kinds.length][];
      for (int c = 0; c < kinds.length; c++) {
        values[c] = kinds[c].textual() ? new String[n] : new long[n];
        nulls[c] = new boolean[n];
      }
    }

    /** Stores the value the cursor last read into column {@code c} of row {@code row}. */
    void set(int c, int row, JsonCursor from) {
      nulls[c][row] = from.isNull;
      if (kinds[c].textual()) {
        ((String[]) values[c])[row] = from.text;
      } else {
        ((long[]) values[c])[row] = from.bits;
      }
    }

    long longAt(int c, int row) {
      return ((long[]) values[c])[row];
    }

    String textAt(int c, int row) {
      return ((String[]) values[c])[row];
    }
  }

  /** A key's values as a map key: its one value, or a {@link Key} of its values. */
  Object keyOf(Values v, int row) {
    if (key.length == 1) {
      return kinds[key[0]].textual() ? v.textAt(key[0], row) : (Object) v.longAt(key[0], row);
    }
    Object[] values = new Object[key.length];
    for (int k = 0; k < key.length; k++) {
      values[k] = kinds[key[k]].textual() ? v.textAt(key[k], row) : (Object) v.longAt(key[k], row);
    }
    return new Key(values);
  }

  /** Key slots of a fold: keys to consecutive numbers (a primitive map for one integer key). */
  final class Slots {
    private final boolean oneLong;
    private final LongSlots longs;
    private final java.util.Map<Object, Integer> objects;
    int size;

    /** Slots sized for about {@code expected} keys (a batch's lines), so that they seldom grow. */
    Slots(int expected) {
      oneLong = key.length == 1 && !kinds[key[0]].textual();
      longs = new LongSlots(oneLong ? expected : 0);
      objects = new java.util.HashMap<>(oneLong ? 16 : Math.max(16, expected * 4 / 3));
    }

    /** The slot of row {@code row}'s key; a new one ({@link #size} grows) if it is new. */
    int of(Values v, int row) {
      int slot;
      if (oneLong) {
        slot = longs.slot(v.longAt(key[0], row), size);
      } else {
        Integer found = objects.putIfAbsent(keyOf(v, row), size);
        slot = found == null ? size : found;
      }
      if (slot == size) {
        size++;
      }
      return slot;
    }

    /** Each slot's key values, per key column ({@code long[]} or {@code String[]}). */
    Object[] keys() {
      Object[] out = new Object[key.length];
      for (int k = 0; k < key.length; k++) {
        out[k] = kinds[key[k]].textual() ? new String[size] : new long[size];
      }
      if (oneLong) {
        longs.forEach((k, slot) -> ((long[]) out[0])[slot] = k);
        return out;
      }
      for (java.util.Map.Entry<Object, Integer> e : objects.entrySet()) {
        int slot = e.getValue();
        for (int k = 0; k < key.length; k++) {
          Object v = key.length == 1 ? e.getKey() : ((Key) e.getKey()).values()[k];
          if (out[k] instanceof String[] t) {
            t[slot] = (String) v;
          } else {
            ((long[]) out[k])[slot] = (Long) v;
          }
        }
      }
      return out;
    }
  }

  /** An open-addressing map of long keys to slots. */
  private static final class LongSlots {
    private long[] keys;
    private int[] slots;
    private boolean[] used;
    private int count;

    /** Room for {@code expected} keys at most half full. */
    LongSlots(int expected) {
      int capacity = Integer.highestOneBit(Math.max(16, Math.min(expected, 1 << 29)) * 2 - 1) << 1;
      keys = new long[capacity];
      slots = new int[capacity];
      used = new boolean[capacity];
    }

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
