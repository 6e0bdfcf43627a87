package dev.floe.tail;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The bytes of a log record: rows of a log's columns (every table column but {@code _offset}, which
 * the record's first offset implies) in Iceberg's internal representation. A row is a null bitmap
 * followed by its non-null values, fixed-width little-endian or length-prefixed.
 */
final class RowCodec {
  private final Type.PrimitiveType[] types;
  private final int bitmapBytes;

  RowCodec(List<Types.NestedField> columns) {
    types = new Type.PrimitiveType[columns.size()];
    for (int i = 0; i < types.length; i++) {
      Type t = columns.get(i).type();
      if (!t.isPrimitiveType()) {
        throw unsupported(columns.get(i));
      }
      types[i] = t.asPrimitiveType();
    }
    bitmapBytes = (types.length + 7) / 8;
  }

  /** Whether a table with these columns can have a tail. */
  static void check(List<Types.NestedField> columns) {
    new RowCodec(columns);
  }

  private static FloeException unsupported(Types.NestedField f) {
    return new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "column \"" + f.name() + "\" is of type " + f.type()
        + ": a table with a tail has columns of primitive types only");
  }

  int columns() {
    return types.length;
  }

  /** Appends the rows' encoding to {@code out}. */
  void encode(List<Object[]> rows, Buffer out) {
    for (Object[] row : rows) {
      int bitmapAt = out.position();
      out.skip(bitmapBytes);
      for (int i = 0; i < types.length; i++) {
        Object v = row[i];
        if (v == null) {
          out.setBit(bitmapAt, i);
          continue;
        }
        switch (types[i].typeId()) {
          case BOOLEAN -> out.putByte((Boolean) v ? 1 : 0);
          case INTEGER, DATE -> out.putInt((Integer) v);
          case LONG, TIME, TIMESTAMP, TIMESTAMP_NANO -> out.putLong((Long) v);
          case FLOAT -> out.putInt(Float.floatToRawIntBits((Float) v));
          case DOUBLE -> out.putLong(Double.doubleToRawLongBits((Double) v));
          case STRING -> out.putBytes(((CharSequence) v).toString().getBytes(StandardCharsets.UTF_8));
          case UUID -> {
            UUID u = (UUID) v;
            out.putLong(u.getMostSignificantBits());
            out.putLong(u.getLeastSignificantBits());
          }
          case BINARY, FIXED -> {
            ByteBuffer b = ((ByteBuffer) v).duplicate();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            out.putBytes(bytes);
          }
          case DECIMAL -> out.putBytes(((BigDecimal) v).unscaledValue().toByteArray());
          default -> throw new IllegalStateException("unexpected type " + types[i]);
        }
      }
    }
  }

  /** Decodes {@code count} rows from {@code in} (positioned at the first). */
  List<Object[]> decode(ByteBuffer in, int count) {
    in.order(ByteOrder.LITTLE_ENDIAN);
    List<Object[]> rows = new ArrayList<>(count);
    for (int r = 0; r < count; r++) {
      int bitmapAt = in.position();
      in.position(bitmapAt + bitmapBytes);
      Object[] row = new Object[types.length];
      for (int i = 0; i < types.length; i++) {
        if ((in.get(bitmapAt + (i >>> 3)) & (1 << (i & 7))) != 0) {
          continue;
        }
        row[i] = switch (types[i].typeId()) {
          case BOOLEAN -> in.get() != 0;
          case INTEGER, DATE -> in.getInt();
          case LONG, TIME, TIMESTAMP, TIMESTAMP_NANO -> in.getLong();
          case FLOAT -> Float.intBitsToFloat(in.getInt());
          case DOUBLE -> Double.longBitsToDouble(in.getLong());
          case STRING -> new String(bytes(in), StandardCharsets.UTF_8);
          case UUID -> new UUID(in.getLong(), in.getLong());
          case BINARY, FIXED -> ByteBuffer.wrap(bytes(in));
          case DECIMAL -> new BigDecimal(new BigInteger(bytes(in)), ((Types.DecimalType) types[i]).scale());
          default -> throw new IllegalStateException("unexpected type " + types[i]);
        };
      }
      rows.add(row);
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException(in.remaining() + " bytes after the last row");
    }
    return rows;
  }

  private static byte[] bytes(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0 || n > in.remaining()) {
      throw new IllegalArgumentException("value length " + n + " exceeds the record");
    }
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  /** A growable little-endian byte buffer. */
  static final class Buffer {
    private byte[] bytes;
    private int position;

    Buffer(int capacity) {
      bytes = new byte[Math.max(16, capacity)];
    }

    int position() {
      return position;
    }

    byte[] array() {
      return bytes;
    }

    void reset() {
      position = 0;
    }

    private void ensure(int n) {
      if (position + n > bytes.length) {
        bytes = java.util.Arrays.copyOf(bytes, Math.max(bytes.length * 2, position + n));
      }
    }

    void skip(int n) {
      ensure(n);
      java.util.Arrays.fill(bytes, position, position + n, (byte) 0);
      position += n;
    }

    void setBit(int at, int bit) {
      bytes[at + (bit >>> 3)] |= (byte) (1 << (bit & 7));
    }

    void putByte(int b) {
      ensure(1);
      bytes[position++] = (byte) b;
    }

    void putInt(int v) {
      ensure(4);
      putIntAt(position, v);
      position += 4;
    }

    void putIntAt(int at, int v) {
      bytes[at] = (byte) v;
      bytes[at + 1] = (byte) (v >>> 8);
      bytes[at + 2] = (byte) (v >>> 16);
      bytes[at + 3] = (byte) (v >>> 24);
    }

    void putLong(long v) {
      ensure(8);
      putLongAt(position, v);
      position += 8;
    }

    void putLongAt(int at, long v) {
      putIntAt(at, (int) v);
      putIntAt(at + 4, (int) (v >>> 32));
    }

    void putBytes(byte[] b) {
      putInt(b.length);
      ensure(b.length);
      System.arraycopy(b, 0, bytes, position, b.length);
      position += b.length;
    }
  }
}
