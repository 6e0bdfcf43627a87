package dev.floe.tail;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A keyed memtable's versions by key, in the JVM: what a point read or a one-key change of a keyed tail
 * looks up instead of asking DuckDB to pick the newest version of the key among the memtable's rows.
 * It holds exactly the versions the memtable's DuckDB tables hold (added as they are loaded, dropped
 * with their generation), so both give the same newest version for any pinned range. Guarded by the
 * log's monitor, as the memtable is.
 */
final class KeyIndex {
  /** A version: its offset, and its row as a log record holds it (the tombstone flag last). */
  record Version(long offset, Object[] row) {
    /** Whether it deletes its key. */
    boolean deleted() {
      return Boolean.TRUE.equals(row[row.length - 1]);
    }
  }

  /** Positions of the key columns in a record's row. */
  private final int[] keys;
  private final Map<Object, List<Version>> byKey = new HashMap<>();
  /** Every version's key, in offset order: what {@link #dropBelow} walks. */
  private final ArrayDeque<Object> order = new ArrayDeque<>();
  private final ArrayDeque<Long> offsets = new ArrayDeque<>();

  KeyIndex(int[] keys) {
    this.keys = keys;
  }

  /** An index of the records of a keyed log of a table of {@code schema}. */
  static KeyIndex of(org.apache.iceberg.Schema schema) {
    List<org.apache.iceberg.types.Types.NestedField> columns = TailLog.recordColumns(schema);
    int[] keys = new int[schema.identifierFieldIds().size()];
    int k = 0;
    for (int i = 0; i < columns.size(); i++) {
      if (schema.identifierFieldIds().contains(columns.get(i).fieldId())) {
        keys[k++] = i;
      }
    }
    return new KeyIndex(keys);
  }

  /** Adds a version; offsets arrive in increasing order. */
  void add(long offset, Object[] row) {
    Object key = keyOf(row);
    byKey.computeIfAbsent(key, k -> new ArrayList<>(2)).add(new Version(offset, row));
    order.addLast(key);
    offsets.addLast(offset);
  }

  /** The newest version of {@code key} with an offset in [from, end), or null when there is none. */
  Version newest(Object key, long from, long end) {
    List<Version> versions = byKey.get(key);
    if (versions == null) {
      return null;
    }
    for (int i = versions.size() - 1; i >= 0; i--) {
      Version v = versions.get(i);
      if (v.offset() < from) {
        return null;
      }
      if (v.offset() < end) {
        return v;
      }
    }
    return null;
  }

  /** Forgets the versions with offsets below {@code end} (their generation was dropped). */
  void dropBelow(long end) {
    while (!offsets.isEmpty() && offsets.peekFirst() < end) {
      offsets.removeFirst();
      Object key = order.removeFirst();
      List<Version> versions = byKey.get(key);
      versions.remove(0); // a key's versions are in offset order too: the oldest is this one
      if (versions.isEmpty()) {
        byKey.remove(key);
      }
    }
  }

  /** Forgets the versions with offsets from {@code from} on (the newest ones). */
  void dropFrom(long from) {
    while (!offsets.isEmpty() && offsets.peekLast() >= from) {
      offsets.removeLast();
      Object key = order.removeLast();
      List<Version> versions = byKey.get(key);
      versions.remove(versions.size() - 1); // the newest of the key is this one
      if (versions.isEmpty()) {
        byKey.remove(key);
      }
    }
  }

  /** The newest version of every key, in no particular order. */
  List<Version> newestOfEach() {
    List<Version> newest = new ArrayList<>(byKey.size());
    for (List<Version> versions : byKey.values()) {
      newest.add(versions.get(versions.size() - 1));
    }
    return newest;
  }

  void clear() {
    byKey.clear();
    order.clear();
    offsets.clear();
  }

  /** The key of a record's row, normalized. */
  Object keyOf(Object[] row) {
    if (keys.length == 1) {
      return normalize(row[keys[0]]);
    }
    List<Object> key = new ArrayList<>(keys.length);
    for (int k : keys) {
      key.add(normalize(row[k]));
    }
    return key;
  }

  /**
   * A key value as the index compares it: integers as Long, text as String, binary as a read-only
   * buffer (equal by content); values of one column have one type, so nothing else needs care.
   */
  static Object normalize(Object v) {
    if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    if (v instanceof CharSequence cs) {
      return cs.toString();
    }
    if (v instanceof byte[] b) {
      return ByteBuffer.wrap(b).asReadOnlyBuffer();
    }
    if (v instanceof List<?> values) {
      List<Object> key = new ArrayList<>(values.size());
      values.forEach(x -> key.add(normalize(x)));
      return key;
    }
    return v;
  }
}
