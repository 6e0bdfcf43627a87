package dev.floe.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Cell-level last-write-wins envelopes, Cassandra's semantics (docs/cdc.md). One envelope is one
 * mutation of one key, at one timestamp:
 *
 * <pre>
 * {"key": {"id": 7, "seq": 2}, "ts": 1700000000000000, "ttl": 60, "insert": true, "cells": {"a": 1, "b": null}}
 * {"key": {"id": 7, "seq": 2}, "ts": 1700000000000001, "delete": true}
 * {"key": {"id": 7}, "ts": 1700000000000002, "delete": true}
 * {"key": {"id": 7}, "ts": 1700000000000003, "delete": {"from": {"seq": 2}, "to": {"seq": 9}, "to_inclusive": false}}
 * </pre>
 *
 * {@code ts} is the write's timestamp (Cassandra's writetime: microseconds since the epoch, by
 * convention). {@code cells} writes values; a null is a cell tombstone. {@code insert: true} also writes
 * the row marker, as a CQL INSERT does: the row exists while the marker lives even if every cell is null.
 * {@code ttl} (seconds, counted from {@code ts}) or {@code expires_at} (seconds since the epoch) makes the
 * values and the marker expire. {@code delete: true} deletes the row whose key is given in full, or every
 * row of a key prefix (a partition); {@code delete: {from, to}} deletes a range of the key columns after
 * the prefix ({@code from_inclusive} and {@code to_inclusive} default to true).
 */
final class LwwEnvelopes implements ChangeFormat.Decoder {
  private final TableShape shape;

  LwwEnvelopes(TableShape shape) {
    this.shape = shape;
  }

  @Override
  public List<Change> decode(JsonNode e) {
    if (!e.isObject()) {
      throw ChangeFormat.invalid("an LWW envelope is a JSON object, not " + e.getNodeType().toString().toLowerCase());
    }
    for (Iterator<String> names = e.fieldNames(); names.hasNext(); ) {
      String n = names.next();
      if (!List.of("key", "ts", "ttl", "expires_at", "insert", "cells", "delete").contains(n)) {
        throw ChangeFormat.invalid("unknown field \"" + n + "\" (an LWW envelope has key, ts, cells, insert, ttl, "
            + "expires_at and delete)");
      }
    }
    JsonNode ts = e.get("ts");
    if (ts == null || !ts.isIntegralNumber() || !ts.canConvertToLong()) {
      throw ChangeFormat.invalid("\"ts\" must be an integer timestamp");
    }
    long at = ts.longValue();
    JsonNode keyNode = e.get("key");
    if (keyNode == null || !keyNode.isObject()) {
      throw ChangeFormat.invalid("\"key\" must be an object of the primary key's columns " + shape.keyNames());
    }
    Object[] key = keyValues(keyNode);
    JsonNode delete = e.get("delete");
    JsonNode insertNode = e.get("insert");
    if (insertNode != null && !insertNode.isNull() && !insertNode.isBoolean()) {
      throw ChangeFormat.invalid("\"insert\" must be true or false");
    }
    boolean insert = insertNode != null && insertNode.isBoolean() && insertNode.booleanValue();
    boolean writes = e.has("cells") || insert;
    if (delete != null && !delete.isNull() && !(delete.isBoolean() && !delete.booleanValue())) {
      if (writes) {
        throw ChangeFormat.invalid("an envelope either deletes or writes cells, not both");
      }
      return List.of(deletion(key, delete, at));
    }
    if (key.length < shape.keySize()) {
      throw ChangeFormat.invalid("a write names every column of the primary key " + shape.keyNames());
    }
    long expires = 0;
    if (e.has("ttl") && e.has("expires_at")) {
      throw ChangeFormat.invalid("give \"ttl\" or \"expires_at\", not both");
    }
    if (e.has("ttl")) {
      JsonNode ttl = e.get("ttl");
      if (!ttl.isIntegralNumber() || ttl.longValue() <= 0) {
        throw ChangeFormat.invalid("\"ttl\" must be a positive number of seconds");
      }
      expires = Math.floorDiv(at, 1_000_000L) + ttl.longValue();
    } else if (e.has("expires_at")) {
      JsonNode x = e.get("expires_at");
      if (!x.isIntegralNumber() || x.longValue() <= 0) {
        throw ChangeFormat.invalid("\"expires_at\" must be seconds since the epoch");
      }
      expires = x.longValue();
    }
    RowState row = new RowState(new Key(key), shape.cellCount());
    if (insert) {
      row.mark(Cell.marker(at, expires));
    }
    JsonNode cells = e.get("cells");
    if (cells != null && !cells.isNull()) {
      if (!cells.isObject()) {
        throw ChangeFormat.invalid("\"cells\" must be an object of column names to values");
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = cells.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> c = it.next();
        int column = shape.column(c.getKey());
        if (column < 0) {
          throw DebeziumEvents.noColumn(c.getKey(), shape);
        }
        int cell = shape.cellOf(column);
        if (cell < 0) {
          throw ChangeFormat.invalid("\"" + c.getKey() + "\" is a primary key column: it goes in \"key\"");
        }
        Object v = JsonValues.convert(c.getValue(), shape, column, JsonValues.Hint.NONE);
        row.write(cell, Cell.write(at, v, expires), shape);
      }
    }
    return List.of(Change.row(row, at));
  }

  /** The key's values in key order: every key column, or (for a deletion) a prefix of them. */
  private Object[] keyValues(JsonNode keyNode) {
    int[] key = shape.key();
    List<Object> values = new ArrayList<>();
    for (int k = 0; k < key.length; k++) {
      String name = shape.columns().get(key[k]).name();
      JsonNode v = keyNode.get(name);
      if (v == null) {
        break;
      }
      if (v.isNull()) {
        throw ChangeFormat.invalid("key column \"" + name + "\" is null");
      }
      values.add(JsonValues.convert(v, shape, key[k], JsonValues.Hint.NONE));
    }
    if (keyNode.size() != values.size()) {
      for (Iterator<String> it = keyNode.fieldNames(); it.hasNext(); ) {
        String n = it.next();
        int column = shape.column(n);
        if (column < 0) {
          throw DebeziumEvents.noColumn(n, shape);
        }
        if (shape.keyPosition(column) < 0) {
          throw ChangeFormat.invalid("\"" + n + "\" is not a primary key column " + shape.keyNames());
        }
      }
      throw ChangeFormat.invalid("\"key\" must name a prefix of the primary key " + shape.keyNames());
    }
    return values.toArray();
  }

  private Change deletion(Object[] prefix, JsonNode delete, long at) {
    if (delete.isBoolean()) {
      if (prefix.length == shape.keySize()) {
        return Change.row(new RowState(new Key(prefix), shape.cellCount()).delete(at), at);
      }
      return Change.range(new RangeDeletion(prefix, null, true, null, true, at), at);
    }
    if (!delete.isObject()) {
      throw ChangeFormat.invalid("\"delete\" is true or an object with \"from\" and \"to\"");
    }
    Object[] from = bound(prefix.length, delete.get("from"), "from");
    Object[] to = bound(prefix.length, delete.get("to"), "to");
    return Change.range(new RangeDeletion(prefix, from, delete.path("from_inclusive").asBoolean(true), to,
        delete.path("to_inclusive").asBoolean(true), at), at);
  }

  /** A range bound: values of the key columns after the prefix, a prefix of them. */
  private Object[] bound(int after, JsonNode b, String what) {
    if (b == null || b.isNull()) {
      return null;
    }
    if (!b.isObject()) {
      throw ChangeFormat.invalid("\"" + what + "\" must be an object of key columns");
    }
    int[] key = shape.key();
    List<Object> values = new ArrayList<>();
    for (int k = after; k < key.length; k++) {
      JsonNode v = b.get(shape.columns().get(key[k]).name());
      if (v == null) {
        break;
      }
      values.add(JsonValues.convert(v, shape, key[k], JsonValues.Hint.NONE));
    }
    if (values.isEmpty() || values.size() != b.size()) {
      throw ChangeFormat.invalid("\"" + what + "\" must name the key columns after the deletion's key, in order, "
          + "from the first: " + shape.keyNames());
    }
    return values.toArray();
  }
}
