package dev.floe.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Debezium change events (docs/cdc.md): the event's value as JSON, with its Kafka Connect schema
 * ({@code {"schema": ..., "payload": ...}}) or without. The source position orders them: PostgreSQL's
 * {@code source.lsn}, MySQL's binlog file, position and row. An event at position p is, in LWW terms:
 *
 * <ul>
 *   <li>{@code c}, {@code r} (snapshot read; an initial snapshot's reads rank below every streamed
 *       change: {@link #SNAPSHOT_RANK}, and its first read deletes every row older than the snapshot, so
 *       a snapshot started over after a stop leaves no row it no longer reads), {@code u}: the after image's key gets a row marker and
 *       every column in the image written at p (an update whose key changed also deletes the old key at
 *       p); a column Debezium marks unavailable (an unchanged TOAST value) is left as it is;
 *   <li>{@code d}: the before image's key deleted at p;
 *   <li>{@code t}: every row deleted at p;
 *   <li>a tombstone ({@code null}, what follows a delete for Kafka's compaction) and {@code m}
 *       (a logical message): nothing.
 * </ul>
 *
 * Within one key, PostgreSQL and MySQL order changes by their position (a row is locked until its
 * change commits), so the newest change of a key wins whatever order the events arrive in.
 */
final class DebeziumEvents implements ChangeFormat.Decoder {
  /** Debezium's default {@code unavailable.value.placeholder}. */
  static final String UNAVAILABLE = "__debezium_unavailable_value";
  /** The same placeholder in a bytea column: its bytes, base64. */
  static final String UNAVAILABLE_BYTES = java.util.Base64.getEncoder().encodeToString(
      UNAVAILABLE.getBytes(java.nio.charset.StandardCharsets.UTF_8));

  /**
   * Where an initial snapshot's reads rank: below every streamed change. A snapshot reads each row as of
   * its consistent point; a transaction that changed the row before that point and committed after it is
   * streamed with its change's (smaller) position, yet is newer than the read. Every streamed change
   * committed after the snapshot's point, so all of them outrank its reads.
   */
  static final long SNAPSHOT_RANK = 1L << 62;

  private final TableShape shape;
  private final Map<JsonNode, Map<String, JsonValues.Hint>> hints = new HashMap<>();

  DebeziumEvents(TableShape shape) {
    this.shape = shape;
  }

  @Override
  public List<Change> decode(JsonNode event) {
    if (event == null || event.isNull()) {
      return List.of(); // a tombstone
    }
    if (!event.isObject()) {
      throw ChangeFormat.invalid("a Debezium event is a JSON object");
    }
    JsonNode value = event;
    Map<String, JsonValues.Hint> fieldHints = Map.of();
    if (event.has("payload") && event.has("schema")) {
      value = event.get("payload");
      if (value.isNull()) {
        return List.of();
      }
      fieldHints = hints.computeIfAbsent(event.get("schema"), DebeziumEvents::hintsOf);
    }
    JsonNode op = value.get("op");
    if (op == null || !op.isTextual()) {
      throw ChangeFormat.invalid("no \"op\" (a Debezium event's operation: c, r, u, d, t or m)");
    }
    long at;
    switch (op.textValue()) {
      case "m" -> {
        return List.of();
      }
      case "c", "r", "u", "d", "t" -> at = position(value.get("source"));
      default -> throw ChangeFormat.invalid("unknown op \"" + op.textValue() + "\" (c, r, u, d, t or m)");
    }
    boolean snapshotStarts = false;
    if (op.textValue().equals("r") && initialSnapshot(value.get("source"))) {
      at -= SNAPSHOT_RANK;
      snapshotStarts = snapshotStart(value.get("source"));
    }
    return switch (op.textValue()) {
      case "t" -> List.of(Change.range(new RangeDeletion(new Object[0], null, true, null, true, at), at));
      case "d" -> List.of(Change.row(new RowState(key(image(value, "before"), fieldHints), shape.cellCount())
          .delete(at), at));
      default -> {
        JsonNode after = image(value, "after");
        Key key = key(after, fieldHints);
        RowState row = new RowState(key, shape.cellCount()).mark(Cell.marker(at, 0));
        java.util.BitSet left = null; // cells of unchanged TOAST values
        for (Iterator<Map.Entry<String, JsonNode>> it = after.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> f = it.next();
          int column = shape.column(f.getKey());
          if (column < 0) {
            throw noColumn(f.getKey(), shape);
          }
          int cell = shape.cellOf(column);
          if (cell >= 0 && unavailable(f.getValue())) {
            left = left == null ? new java.util.BitSet() : left;
            left.set(cell);
          }
          if (cell < 0 || unavailable(f.getValue())) {
            continue;
          }
          Object v = JsonValues.convert(f.getValue(), shape, column, fieldHints.getOrDefault(f.getKey(),
              JsonValues.Hint.NONE));
          row.write(cell, Cell.write(at, v, 0), shape);
        }
        List<Change> out = new ArrayList<>(2);
        JsonNode before = value.get("before");
        if (op.textValue().equals("u") && before != null && before.isObject()) {
          Key old = key(before, fieldHints);
          if (!old.equals(key)) {
            if (left != null) { // before the old key's deletion: the fold sees the old key as it was
              out.add(Change.carry(new Carry(old, key, at, left, null), at));
            }
            out.add(Change.row(new RowState(old, shape.cellCount()).delete(at), at));
          }
        }
        out.add(Change.row(row, at));
        if (snapshotStarts) {
          // the table is what the snapshot reads: every row older than it goes (the rows of a snapshot that
          // was cut short and started over, which may have been deleted since, among them)
          out.add(Change.range(new RangeDeletion(new Object[0], null, true, null, true, at - 1), at - 1));
        }
        yield out;
      }
    };
  }

  /** The placeholder's bytes: in an int[] or bigint[] column, they are the array. */
  private static final byte[] UNAVAILABLE_UTF8 = UNAVAILABLE.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  /** The placeholder in a uuid[] column: the name-based uuid of its bytes. */
  private static final String UNAVAILABLE_UUID = java.util.UUID.nameUUIDFromBytes(UNAVAILABLE_UTF8).toString();

  /**
   * Whether a value is Debezium's placeholder for an unchanged TOAST value: the text, bytea's base64 of it,
   * or, for an array (which lands in a text column as its JSON), the array Debezium's PostgreSQL connector
   * makes of it: the text, the base64 or the uuid of its bytes as the one element (text[], bytea[], uuid[]),
   * or its bytes as numbers (int[], bigint[]).
   */
  private static boolean unavailable(JsonNode v) {
    if (v.isTextual()) {
      return UNAVAILABLE.equals(v.textValue()) || UNAVAILABLE_BYTES.equals(v.textValue());
    }
    if (!v.isArray()) {
      return false;
    }
    if (v.size() == 1 && v.get(0).isTextual()) {
      String t = v.get(0).textValue();
      return UNAVAILABLE.equals(t) || UNAVAILABLE_BYTES.equals(t) || UNAVAILABLE_UUID.equals(t);
    }
    byte[] bytes = UNAVAILABLE_UTF8;
    if (v.size() != bytes.length) {
      return false;
    }
    for (int i = 0; i < bytes.length; i++) {
      if (!v.get(i).isIntegralNumber() || v.get(i).longValue() != bytes[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether a read is part of an initial (or blocking) snapshot: {@code source.snapshot} is set and is
   * neither {@code false} nor {@code incremental} (an incremental snapshot's reads are placed in the
   * stream by Debezium's watermarks, at their own positions).
   */
  private static boolean initialSnapshot(JsonNode source) {
    JsonNode snapshot = source.get("snapshot");
    if (snapshot == null || snapshot.isNull()) {
      return false;
    }
    String s = snapshot.asText();
    return !s.equals("false") && !s.equals("incremental");
  }

  /** Whether a read is a snapshot's first ({@code source.snapshot}: first, or first_in_data_collection). */
  private static boolean snapshotStart(JsonNode source) {
    String s = source.path("snapshot").asText("");
    return s.equals("first") || s.equals("first_in_data_collection");
  }

  private static JsonNode image(JsonNode value, String which) {
    JsonNode image = value.get(which);
    if (image == null || !image.isObject()) {
      throw ChangeFormat.invalid("a Debezium \"" + value.get("op").textValue() + "\" event has a \"" + which
          + "\" object");
    }
    return image;
  }

  private Key key(JsonNode image, Map<String, JsonValues.Hint> fieldHints) {
    int[] key = shape.key();
    Object[] values = new Object[key.length];
    for (int k = 0; k < key.length; k++) {
      String name = shape.columns().get(key[k]).name();
      JsonNode v = image.get(name);
      if (v == null || v.isNull()) {
        throw ChangeFormat.invalid("the event's row has no value for primary key column \"" + name + "\"");
      }
      values[k] = JsonValues.convert(v, shape, key[k], fieldHints.getOrDefault(name, JsonValues.Hint.NONE));
    }
    return new Key(values);
  }

  /**
   * The event's source position as one number: PostgreSQL's LSN; MySQL's binlog file sequence, position
   * and row ({@code seq * 2^40 + pos * 2^8 + row}).
   */
  static long position(JsonNode source) {
    if (source == null || !source.isObject()) {
      throw ChangeFormat.invalid("no \"source\" block (a Debezium event's source position: its lsn, or its "
          + "binlog file and pos)");
    }
    JsonNode lsn = source.get("lsn");
    if (lsn != null && lsn.isIntegralNumber()) {
      return lsn.longValue();
    }
    JsonNode file = source.get("file");
    JsonNode pos = source.get("pos");
    if (file != null && file.isTextual() && pos != null && pos.isIntegralNumber()) {
      return binlog(file.textValue(), pos.longValue(), source.path("row").asLong(0));
    }
    throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot order this Debezium event: its source has no "
        + "lsn (PostgreSQL) or binlog file and pos (MySQL)", null, null, 0, null);
  }

  /** A MySQL binlog position as one number: {@code seq * 2^40 + pos * 2^8 + row}; 22P02 when out of range. */
  static long binlog(String file, long pos, long row) {
    int dot = file.lastIndexOf('.');
    long seq;
    try {
      seq = Long.parseLong(file.substring(dot + 1));
    } catch (NumberFormatException e) {
      throw ChangeFormat.invalid("binlog file \"" + file + "\" has no sequence number");
    }
    if (seq < 0 || seq >= (1L << 22) || pos >= (1L << 32) || row >= 256 || pos < 0 || row < 0) {
      throw ChangeFormat.invalid("binlog position " + file + ":" + pos + " row " + row + " is out of range");
    }
    return (seq << 40) + (pos << 8) + row;
  }

  /** What each field of the after (or before) image's schema says; 22023 for a scale that is no integer. */
  static Map<String, JsonValues.Hint> hintsOf(JsonNode schema) {
    Map<String, JsonValues.Hint> out = new HashMap<>();
    for (JsonNode f : schema.path("fields")) {
      String which = f.path("field").asText();
      if (!which.equals("after") && !which.equals("before")) {
        continue;
      }
      for (JsonNode column : f.path("fields")) {
        String name = column.path("name").isTextual() ? column.get("name").textValue() : null;
        JsonNode scale = column.path("parameters").get("scale");
        Integer digits;
        try {
          digits = scale == null ? null : Integer.valueOf(scale.asText());
        } catch (NumberFormatException e) {
          throw ChangeFormat.invalid("the schema gives field \"" + column.path("field").asText() + "\" the scale \""
              + scale.asText() + "\", which is no integer");
        }
        out.putIfAbsent(column.path("field").asText(), new JsonValues.Hint(name, digits));
      }
    }
    return out;
  }

  static FloeException noColumn(String name, TableShape shape) {
    return new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + name + "\" of relation \"" + shape.table()
        + "\" does not exist");
  }
}
