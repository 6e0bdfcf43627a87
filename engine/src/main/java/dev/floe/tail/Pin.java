package dev.floe.tail;

import dev.floe.sql.Lexer;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * A reader's hold on the unsealed rows after a watermark: they stay in the memtable until it is
 * closed. Close it once the query reading them has started (DuckDB then sees them to its end).
 */
public final class Pin implements AutoCloseable {
  private final TailLog log;
  private final Memtable memtable;
  private final Schema schema;
  private final boolean keyed;
  private final long from;
  private final long end;
  private final List<String> tables;
  private final List<org.apache.iceberg.DataFile> bounds;
  private boolean released;
  /** A transaction block's own versions over the pinned ones (null: it changed nothing). */
  private Draft draft;

  Pin(TailLog log, Memtable memtable, Schema schema, boolean keyed, long from, long end, List<String> tables,
      List<org.apache.iceberg.DataFile> bounds) {
    this.log = log;
    this.memtable = memtable;
    this.schema = schema;
    this.keyed = keyed;
    this.from = from;
    this.end = end;
    this.tables = tables;
    this.bounds = bounds;
  }

  /** The first offset this reader takes from the memtable (the watermark of the snapshot it read). */
  public long from() {
    return from;
  }

  /** The offset after the last row this reader sees. */
  public long end() {
    return end;
  }

  /** Whether there are unsealed rows to read (or versions of the block holding it). */
  public boolean isEmpty() {
    return end <= from && (draft == null || draft.isEmpty());
  }

  TailLog log() {
    return log;
  }

  /**
   * The versions a transaction block holding this pin decides itself, read over the pinned ones by
   * every read through the pin (a keyed log's only); made at the block's first change, its DuckDB table
   * on the block's session's connection {@code duck}.
   */
  public Draft draft(java.sql.Connection duck) {
    if (!keyed) {
      throw new IllegalStateException("the table has no primary key");
    }
    if (draft == null) {
      draft = new Draft(this, schema, duck);
    }
    return draft;
  }

  /** The block's versions, if it made any ({@link #draft}). */
  public java.util.Optional<Draft> draft() {
    return java.util.Optional.ofNullable(draft);
  }

  /**
   * Whether the log has a version of {@code key} (normalized) that this pin does not see: appended
   * after it was taken. The memtable keeps them while the pin holds.
   */
  boolean changedSince(Object key) {
    synchronized (log) {
      if (released) {
        throw new IllegalStateException("the pin was released");
      }
      return memtable.version(key, end, Long.MAX_VALUE) != null;
    }
  }

  /**
   * Whether the rows are versions of keys (the table has a primary key): a reader takes the newest
   * version of each key from here ({@link #newest}) and the table's rows of the others only
   * ({@link #versionKeys}).
   */
  public boolean keyed() {
    return keyed;
  }

  /** Every version pinned, all columns and the tombstone flag, then the block's own ({@link #draft}). */
  private String versions() {
    loadPinned();
    List<String> parts = new ArrayList<>();
    for (String t : tables) {
      parts.add("SELECT * FROM memory.main." + Lexer.quoteIdentifier(t) + " WHERE " + Lexer.quoteIdentifier(
          TailLog.OFFSET_COLUMN) + " >= " + from + " AND " + Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN) + " < " + end);
    }
    if (draft != null && !draft.isEmpty()) {
      parts.add(draft.sql());
    }
    return String.join(" UNION ALL ", parts);
  }

  /**
   * A keyed log's newest pinned version of {@code key} (the key's value, or for a key of several
   * columns the list of their values, in the table's internal representation), read in the JVM; empty
   * when no version of the key is pinned, so the table's files hold its row, if any.
   */
  public java.util.Optional<Version> version(Object key) {
    synchronized (log) {
      if (released) {
        throw new IllegalStateException("the pin was released");
      }
      Object normalized = KeyIndex.normalize(key);
      KeyIndex.Version v = draft == null ? null : draft.version(normalized);
      if (v == null) {
        v = memtable.version(normalized, from, end);
      }
      if (v == null) {
        return java.util.Optional.empty();
      }
      return java.util.Optional.of(new Version(v.offset(), v.deleted(),
          java.util.Arrays.copyOf(v.row(), v.row().length - 1)));
    }
  }

  /** Makes the memtable's DuckDB tables hold the pinned rows a keyed memtable has only indexed. */
  private void loadPinned() {
    synchronized (log) {
      if (!released && keyed) {
        memtable.flushUnloaded();
      }
    }
  }

  /** The columns of a {@link Version}'s values. */
  public List<Types.NestedField> columns() {
    return TailLog.logColumns(schema);
  }

  /** The key columns, quoted and joined, prefixed by {@code qualifier}. */
  public String keyList(String qualifier) {
    StringBuilder keys = new StringBuilder();
    for (int id : schema.identifierFieldIds()) {
      keys.append(keys.length() > 0 ? ", " : "").append(qualifier).append(Lexer.quoteIdentifier(
          schema.findField(id).name()));
    }
    return keys.toString();
  }

  /** A keyed log's: a SELECT of the key columns of every version pinned (the keys the table's rows lose). */
  public String versionKeys() {
    return "SELECT DISTINCT " + keyList("") + " FROM (" + versions() + ") AS __floe_v";
  }

  /**
   * A keyed log's: a SELECT of {@code columns} (DuckDB expressions over the table's columns) of the
   * newest version pinned of each key, keys deleted by it left out.
   */
  public String newest(String columns) {
    return "SELECT " + columns + " FROM (SELECT * FROM (" + versions() + ") AS __floe_v QUALIFY row_number() OVER "
        + "(PARTITION BY " + keyList("") + " ORDER BY " + Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN) + " DESC) = 1) "
        + "AS __floe_n WHERE " + TailLog.DELETED_COLUMN + " IS NOT TRUE";
  }

  /**
   * A SELECT of the pinned unsealed rows: {@code columns} (DuckDB expressions over the table's
   * columns, quoted names) in order.
   */
  public String sql(String columns) {
    return sql(columns, null).orElseThrow();
  }

  /**
   * As {@link #sql(String)}, leaving out the memtable generations whose column bounds show no row can
   * match {@code filter} (Iceberg's own file-skipping rules); empty if none can.
   */
  public java.util.Optional<String> sql(String columns, org.apache.iceberg.expressions.Expression filter) {
    loadPinned();
    org.apache.iceberg.expressions.InclusiveMetricsEvaluator matches = filter == null ? null
        : new org.apache.iceberg.expressions.InclusiveMetricsEvaluator(schema, filter, false);
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < tables.size(); i++) {
      if (matches != null && !matches.eval(bounds.get(i))) {
        continue;
      }
      String t = tables.get(i);
      parts.add("SELECT " + columns + " FROM memory.main." + Lexer.quoteIdentifier(t) + " WHERE "
          + Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN) + " >= " + from + " AND " + Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN)
          + " < " + end);
    }
    return parts.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(String.join(" UNION ALL ", parts));
  }

  @Override
  public void close() {
    synchronized (log) {
      if (released) {
        return;
      }
      released = true;
      memtable.unpin(from);
    }
    if (draft != null) {
      draft.drop();
    }
  }

  /**
   * A version of a key in a keyed log: its offset, whether it deletes the key, and its values (of
   * {@link TailLog#rowColumns()}, Iceberg's internal representation; of a deletion only the key's are set).
   */
  public record Version(long offset, boolean deleted, Object[] values) {}
}
