package dev.floe.cdc;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;
import org.apache.iceberg.types.Type;

/**
 * One column's write: its timestamp, whether it is a value, an expiring value or a tombstone, its local
 * deletion time (for an expiring value, when it expires, in seconds since the epoch; 0 otherwise) and
 * its value (Iceberg's internal representation; null for a tombstone, and for a written NULL, which
 * Cassandra stores as a tombstone too).
 *
 * <p>Of two writes of one cell, the one {@link #compare greater} in Cassandra's order wins: the higher
 * timestamp; on a tie a tombstone, then an expiring value, then a value; of two tombstones or two
 * expiring values the later local deletion time; then the greater value, comparing the bytes Cassandra
 * would serialize it as, unsigned ({@code Cells.resolveRegular}).
 */
public record Cell(long ts, Kind kind, long localDeletionTime, Object value) {
  /** What a cell write is. The order is the tie-break: a later kind wins at the same timestamp. */
  public enum Kind { VALUE, EXPIRING, TOMBSTONE }

  public Cell {
    Objects.requireNonNull(kind, "kind");
    if (kind == Kind.TOMBSTONE) {
      value = null;
    }
  }

  /** A write of {@code value} (null: a tombstone), expiring at {@code expiresAtSeconds} unless that is 0. */
  public static Cell write(long ts, Object value, long expiresAtSeconds) {
    if (value == null) {
      return tombstone(ts);
    }
    return expiresAtSeconds == 0 ? new Cell(ts, Kind.VALUE, 0, value) : new Cell(ts, Kind.EXPIRING, expiresAtSeconds, value);
  }

  /** A row marker: the row exists from {@code ts} on (until {@code expiresAtSeconds}, if not 0). */
  public static Cell marker(long ts, long expiresAtSeconds) {
    return new Cell(ts, expiresAtSeconds == 0 ? Kind.VALUE : Kind.EXPIRING, expiresAtSeconds, null);
  }

  public static Cell tombstone(long ts) {
    return new Cell(ts, Kind.TOMBSTONE, 0, null);
  }

  /** Whether this cell holds a value at {@code nowSeconds}: a value, or an expiring value not yet expired. */
  public boolean live(long nowSeconds) {
    return kind == Kind.VALUE || kind == Kind.EXPIRING && nowSeconds < localDeletionTime;
  }

  /** Cassandra's order of two writes of one cell of type {@code type}: the greater one wins. */
  public static int compare(Cell a, Cell b, Type type) {
    int c = Long.compare(a.ts, b.ts);
    if (c != 0) {
      return c;
    }
    c = a.kind.compareTo(b.kind);
    if (c != 0) {
      return c;
    }
    c = Long.compare(a.localDeletionTime, b.localDeletionTime);
    if (c != 0 || a.kind == Kind.TOMBSTONE) {
      return c;
    }
    if (a.value == null || b.value == null) { // row markers: a value of no column
      return Boolean.compare(a.value != null, b.value != null);
    }
    return Arrays.compareUnsigned(serialized(type, a.value), serialized(type, b.value));
  }

  /** The winner of two writes of one cell (either, if they are equal). */
  public static Cell max(Cell a, Cell b, Type type) {
    if (a == null) {
      return b;
    }
    if (b == null) {
      return a;
    }
    return compare(a, b, type) >= 0 ? a : b;
  }

  /**
   * A value as Cassandra serializes it for the tie-break of equal timestamps: integers and timestamps
   * big-endian two's complement, floating point as its IEEE bits, a date as unsigned days offset by
   * 2^31, text as UTF-8, a uuid as its 16 bytes, a decimal as its scale then its unscaled bytes.
   */
  static byte[] serialized(Type type, Object v) {
    return switch (type.typeId()) {
      case BOOLEAN -> new byte[] {(byte) (((Boolean) v) ? 1 : 0)};
      case INTEGER -> ByteBuffer.allocate(4).putInt(((Number) v).intValue()).array();
      case DATE -> ByteBuffer.allocate(4).putInt(((Number) v).intValue() ^ Integer.MIN_VALUE).array();
      case LONG, TIME, TIMESTAMP, TIMESTAMP_NANO -> ByteBuffer.allocate(8).putLong(((Number) v).longValue()).array();
      case FLOAT -> ByteBuffer.allocate(4).putInt(Float.floatToIntBits(((Number) v).floatValue())).array();
      case DOUBLE -> ByteBuffer.allocate(8).putLong(Double.doubleToLongBits(((Number) v).doubleValue())).array();
      case STRING -> v.toString().getBytes(StandardCharsets.UTF_8);
      case UUID -> {
        UUID u = (UUID) v;
        yield ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits()).array();
      }
      case DECIMAL -> {
        BigDecimal d = (BigDecimal) v;
        byte[] unscaled = d.unscaledValue().toByteArray();
        yield ByteBuffer.allocate(4 + unscaled.length).putInt(d.scale()).put(unscaled).array();
      }
      case BINARY, FIXED -> {
        ByteBuffer b = ((ByteBuffer) v).duplicate();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        yield out;
      }
      default -> v.toString().getBytes(StandardCharsets.UTF_8);
    };
  }
}
