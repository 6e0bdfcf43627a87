package dev.floe.tail;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * A transaction block's own versions of a keyed log's keys (docs/tail.md, "Keyed tables"): what its
 * statements decided, which its later statements read over the versions its {@link Pin} holds, and
 * which its COMMIT appends to the log as one record, unless a key it changed got a newer version in
 * the log meanwhile (first committer wins, 40001).
 *
 * <p>Its versions take offsets from the pin's end on, as if appended right after what the block reads,
 * so a reader picks a key's newest version among the pin's and the block's as among any. They are
 * provisional: the log gives the versions their offsets at COMMIT.
 *
 * <p>It is one session's, used by that session's thread only; the DuckDB table SQL reads it from is a
 * temporary table of the session's connection, dropped with the block.
 */
public final class Draft {
  private final Pin pin;
  private final Schema schema;
  private final Connection duck;
  private final String table = "__floe_draft_" + UUID.randomUUID().toString().replace("-", "");
  private final KeyIndex index;
  /** Every version, as a log record holds it (the tombstone flag last); the i-th has offset start + i. */
  private final List<Object[]> versions = new ArrayList<>();
  /** How many of {@link #versions} the DuckDB table holds (the first ones). */
  private int loaded;
  private boolean created;
  private boolean dropped;

  Draft(Pin pin, Schema schema, Connection duck) {
    this.pin = pin;
    this.schema = schema;
    this.duck = duck;
    this.index = KeyIndex.of(schema);
  }

  private long start() {
    return pin.end();
  }

  /** Whether the block has changed no key (or rolled back to before its first change). */
  public boolean isEmpty() {
    return versions.isEmpty();
  }

  /** How many versions the block queued: a savepoint's mark ({@link #truncate}). */
  public int size() {
    return versions.size();
  }

  /** Where the block's statements put the versions they decide (see {@link TailLog.Versions}). */
  public TailLog.Versions versions() {
    return (deleted, added) -> {
      checkLive();
      long first = start() + versions.size();
      for (Object[] row : TailLog.records(schema, deleted, added)) {
        index.add(start() + versions.size(), row);
        versions.add(row);
      }
      return first;
    };
  }

  /** ROLLBACK TO SAVEPOINT: forgets the versions queued after the first {@code size}. */
  public void truncate(int size) {
    checkLive();
    if (size >= versions.size()) {
      return;
    }
    index.dropFrom(start() + size);
    versions.subList(size, versions.size()).clear();
    if (loaded > size) {
      execute("DELETE FROM temp.main." + Lexer.quoteIdentifier(table) + " WHERE "
          + Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN) + " >= " + (start() + size));
      loaded = size;
    }
  }

  /** The block's newest version of a key (normalized), or null when it has not changed the key. */
  KeyIndex.Version version(Object key) {
    return index.newest(key, start(), Long.MAX_VALUE);
  }

  /** A SELECT of every version, all columns and the tombstone flag, as a memtable generation has them. */
  String sql() {
    load();
    return "SELECT * FROM temp.main." + Lexer.quoteIdentifier(table);
  }

  /** Moves the versions not yet in the DuckDB table into it, for SQL that reads them. */
  private void load() {
    checkLive();
    if (!created) {
      execute("CREATE TEMPORARY TABLE " + Lexer.quoteIdentifier(table) + " (" + Memtable.columnsDdl(schema) + ")");
      created = true;
    }
    if (loaded == versions.size()) {
      return;
    }
    List<Types.NestedField> columns = schema.columns();
    try (DuckDBAppender a = duck.unwrap(DuckDBConnection.class).createAppender("temp", "main", table)) {
      for (int i = loaded; i < versions.size(); i++) {
        Object[] row = versions.get(i);
        a.beginRow();
        int v = 0;
        for (Types.NestedField c : columns) {
          Memtable.appendValue(a, c.type(), c.name().equals(TailLog.OFFSET_COLUMN) ? (Object) (start() + i) : row[v++]);
        }
        Memtable.appendValue(a, Types.BooleanType.get(), row[v]); // the tombstone flag
        a.endRow();
      }
      a.flush();
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot hold the transaction's versions: " + e.getMessage(), e);
    }
    loaded = versions.size();
  }

  /**
   * COMMIT: appends the newest version of each key the block changed to the log as one record, and
   * returns once it is durable. Inside the log's keyed change (so no other change of the log runs),
   * {@code validate} checks what the log does not know of (the table's files), then every key is
   * checked: one with a version in the log newer than what the block read fails the COMMIT with 40001,
   * and nothing is appended.
   */
  public void commit(Runnable validate) {
    checkLive();
    if (versions.isEmpty()) {
      return;
    }
    pin.log().change(queue -> {
      validate.run();
      List<KeyIndex.Version> newest = index.newestOfEach();
      List<Object[]> deleted = new ArrayList<>();
      List<Object[]> rows = new ArrayList<>();
      for (KeyIndex.Version v : newest) {
        if (pin.changedSince(index.keyOf(v.row()))) {
          throw new FloeException(SqlState.SERIALIZATION_FAILURE, "could not serialize access due to concurrent "
              + "update", "A row this transaction changed was changed by another since the transaction read it.",
              "Retry the transaction.", 0, null);
        }
        Object[] values = java.util.Arrays.copyOf(v.row(), v.row().length - 1);
        (v.deleted() ? deleted : rows).add(values);
      }
      queue.append(deleted, rows);
      return null;
    });
  }

  /** Drops the DuckDB table (the block ended); the draft is not used again. */
  void drop() {
    if (dropped) {
      return;
    }
    dropped = true;
    if (created) {
      try (var st = duck.createStatement()) {
        st.execute("DROP TABLE IF EXISTS temp.main." + Lexer.quoteIdentifier(table));
      } catch (SQLException e) {
        // the session's connection is gone, and its temporary tables with it
      }
    }
  }

  private void checkLive() {
    if (dropped) {
      throw new IllegalStateException("the transaction's versions were dropped");
    }
  }

  private void execute(String sql) {
    try (var st = duck.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot hold the transaction's versions: " + e.getMessage(), e);
    }
  }
}
