package dev.floe.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Base64;
import org.apache.iceberg.types.Conversions;

/**
 * A deletion of every row whose key starts with {@code prefix} (the first columns of the key; none: the
 * whole table, as a TRUNCATE) and whose next key columns lie between {@code lower} and {@code upper}
 * (each a prefix of those columns, compared column by column; null: unbounded), at timestamp
 * {@code ts}: Cassandra's partition and range tombstones. Kept after the rows it deleted, so that a late
 * write at or before {@code ts} stays dead.
 */
public record RangeDeletion(Object[] prefix, Object[] lower, boolean lowerInclusive, Object[] upper,
    boolean upperInclusive, long ts) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Whether this deletion covers {@code key}. */
  public boolean covers(Key key, TableShape shape) {
    Object[] k = key.values();
    for (int i = 0; i < prefix.length; i++) {
      if (shape.compareKey(i, prefix[i], k[i]) != 0) {
        return false;
      }
    }
    if (lower != null) {
      int c = compare(k, lower, shape);
      if (c < 0 || c == 0 && !lowerInclusive) {
        return false;
      }
    }
    if (upper != null) {
      int c = compare(k, upper, shape);
      return c < 0 || c == 0 && upperInclusive;
    }
    return true;
  }

  /** The key's columns after the prefix compared with {@code bound}, over the bound's length. */
  private int compare(Object[] key, Object[] bound, TableShape shape) {
    for (int i = 0; i < bound.length; i++) {
      int c = shape.compareKey(prefix.length + i, key[prefix.length + i], bound[i]);
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }

  /** Whether {@code other} deletes the same rows (at whatever timestamp). */
  public boolean sameRows(RangeDeletion other) {
    return Arrays.equals(prefix, other.prefix) && Arrays.equals(lower, other.lower)
        && Arrays.equals(upper, other.upper) && (lower == null || lowerInclusive == other.lowerInclusive)
        && (upper == null || upperInclusive == other.upperInclusive);
  }

  /** Its rows, without the timestamp, as text that {@link #decode} reads back (the state table keeps it). */
  public String encode(TableShape shape) {
    ObjectNode n = JSON.createObjectNode();
    n.set("prefix", values(prefix, 0, shape));
    if (lower != null) {
      n.set("lower", values(lower, prefix.length, shape));
      n.put("lower_inclusive", lowerInclusive);
    }
    if (upper != null) {
      n.set("upper", values(upper, prefix.length, shape));
      n.put("upper_inclusive", upperInclusive);
    }
    return n.toString();
  }

  private static ArrayNode values(Object[] values, int from, TableShape shape) {
    ArrayNode a = JSON.createArrayNode();
    for (int i = 0; i < values.length; i++) {
      ByteBuffer b = Conversions.toByteBuffer(shape.keyType(from + i), values[i]);
      byte[] bytes = new byte[b.remaining()];
      b.duplicate().get(bytes);
      a.add(Base64.getEncoder().encodeToString(bytes));
    }
    return a;
  }

  /** The deletion {@link #encode} wrote, at {@code ts}. */
  public static RangeDeletion decode(String text, long ts, TableShape shape) {
    try {
      JsonNode n = JSON.readTree(text);
      Object[] prefix = values(n.get("prefix"), 0, shape);
      Object[] lower = n.has("lower") ? values(n.get("lower"), prefix.length, shape) : null;
      Object[] upper = n.has("upper") ? values(n.get("upper"), prefix.length, shape) : null;
      return new RangeDeletion(prefix, lower, n.path("lower_inclusive").asBoolean(), upper,
          n.path("upper_inclusive").asBoolean(), ts);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("a range deletion of the change state is not valid: " + text, e);
    }
  }

  private static Object[] values(JsonNode a, int from, TableShape shape) {
    Object[] out = new Object[a.size()];
    for (int i = 0; i < out.length; i++) {
      Object v = Conversions.fromByteBuffer(shape.keyType(from + i),
          ByteBuffer.wrap(Base64.getDecoder().decode(a.get(i).asText())));
      out[i] = v instanceof CharSequence s ? s.toString() : v;
    }
    return out;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RangeDeletion r && sameRows(r) && ts == r.ts;
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(prefix) * 31 + Long.hashCode(ts);
  }

  @Override
  public String toString() {
    return "delete " + Arrays.toString(prefix) + (lower == null ? "" : (lowerInclusive ? " [" : " (")
        + Arrays.toString(lower)) + (upper == null ? "" : " .. " + Arrays.toString(upper) + (upperInclusive ? "]" : ")"))
        + " @" + ts;
  }
}
