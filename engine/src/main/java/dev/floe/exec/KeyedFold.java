package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.commit.TableChange;
import dev.floe.read.ScanPlan;
import dev.floe.read.ScanSql;
import dev.floe.sql.Lexer;
import dev.floe.tail.TailLog;
import dev.floe.write.DeltaWriter;
import dev.floe.write.Inserter;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBConnection;

/**
 * A keyed tail's seal (see {@link TailLog.Host#fold}): the newest version of each key in the sealed
 * window becomes the table's row of that key. The table's live row of each such key is found by a scan
 * planned with the window's keys (so files whose key bounds exclude them are never opened; a table
 * sorted by its key reads the few files that can hold them), deleted by position (deletion vectors on
 * v3, position deletes on v2: never equality deletes), and the newest versions that are not deletions
 * are written as new rows, in one row delta.
 */
final class KeyedFold {
  /** Up to this many keys of one column, the scan is planned with their IN list. */
  static final int PLANNED_KEYS = 10_000;

  private KeyedFold() {}

  static TableChange fold(Engine engine, DuckDBConnection duck, Table table, String versions) {
    Schema schema = table.schema();
    List<String> keys = new ArrayList<>();
    for (int id : schema.identifierFieldIds()) {
      keys.add(Lexer.quoteIdentifier(schema.findField(id).name()));
    }
    String keyList = String.join(", ", keys);
    String offset = Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN);
    try (var st = duck.createStatement()) {
      st.execute("CREATE OR REPLACE TEMP TABLE __floe_fold AS SELECT * FROM (" + versions + ") AS v QUALIFY "
          + "row_number() OVER (PARTITION BY " + keyList + " ORDER BY " + offset + " DESC) = 1");
      try {
        Optional<org.apache.iceberg.Snapshot> snapshot = Optional.ofNullable(table.currentSnapshot());
        Expression filter = keyFilter(duck, schema);
        ScanPlan plan = ScanPlan.plan(engine.planner(), table, snapshot, filter, false);
        String on = keys.stream().map(k -> "r." + k + " = f." + k).reduce((a, b) -> a + " AND " + b).orElseThrow();
        String deletedSql = "SELECT r." + ScanSql.ROW_FILE + ", r." + ScanSql.ROW_POSITION + " FROM (" + ScanSql.relation(
            plan, table.io(), engine.files(), true) + ") AS r SEMI JOIN __floe_fold AS f ON " + on;
        st.execute("CREATE OR REPLACE TEMP TABLE __floe_fold_deleted AS " + deletedSql);
        long deleted = count(st, "__floe_fold_deleted");
        StringBuilder columns = new StringBuilder();
        for (Types.NestedField f : schema.columns()) {
          columns.append(columns.length() > 0 ? ", " : "").append(Lexer.quoteIdentifier(f.name()));
        }
        long rows = count(st, "__floe_fold WHERE " + TailLog.DELETED_COLUMN + " IS NOT TRUE");
        int formatVersion = ((HasTableOperations) table).operations().current().formatVersion();
        DeltaWriter.Delta delta;
        try {
          delta = DeltaWriter.write(duck, table, plan, engine.files(), deleted == 0 ? null
              : new DeltaWriter.Deleted("SELECT * FROM __floe_fold_deleted", deleted, null), rows == 0 ? null
              : Inserter.Rows.query("SELECT " + columns + " FROM __floe_fold WHERE " + TailLog.DELETED_COLUMN
                  + " IS NOT TRUE", rows), DeltaWriter.Mode.MERGE_ON_READ, formatVersion, engine.scratch());
        } catch (Inserter.WriteFailure e) {
          throw e.as("fold the versions of " + table.name());
        }
        // Validated against what was committed since the snapshot planned: a change of the rows of
        // these keys, or of the files deleted from, fails the seal (the next one tries again).
        TableChange.Validation validation = new TableChange.Validation(filter, null,
            !delta.referencedDataFiles().isEmpty() || !delta.removedDataFiles().isEmpty(),
            delta.referencedDataFiles());
        return TableChange.rowDelta(snapshot.map(org.apache.iceberg.Snapshot::snapshotId).orElse(null),
            delta.addedDataFiles(), delta.addedDeleteFiles(), delta.removedDataFiles(), delta.removedDeleteFiles(),
            validation, delta.writtenLocations());
      } finally {
        st.execute("DROP TABLE IF EXISTS __floe_fold");
        st.execute("DROP TABLE IF EXISTS __floe_fold_deleted");
      }
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot fold the versions of " + table.name() + ": "
          + e.getMessage(), e);
    }
  }

  private static long count(java.sql.Statement st, String from) throws SQLException {
    try (var rs = st.executeQuery("SELECT count(*) FROM " + from)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * The filter the scan is planned with: the window's keys, when the key is one column of a type whose
   * values Iceberg's bounds compare and there are not too many; otherwise every row.
   */
  private static Expression keyFilter(DuckDBConnection duck, Schema schema) throws SQLException {
    if (schema.identifierFieldIds().size() != 1) {
      return Expressions.alwaysTrue();
    }
    Types.NestedField key = schema.findField(schema.identifierFieldIds().iterator().next());
    return keyFilter(duck, key, "__floe_fold", key.name());
  }

  /**
   * A filter on column {@code key} to the values of {@code column} in DuckDB relation {@code relation},
   * for planning a scan that reads only the files whose bounds may hold them: an IN list of up to
   * {@value #PLANNED_KEYS} values of a type Iceberg's bounds compare; otherwise every row.
   */
  static Expression keyFilter(DuckDBConnection duck, Types.NestedField key, String relation, String column)
      throws SQLException {
    switch (key.type().typeId()) {
      case INTEGER, LONG, STRING -> { }
      default -> {
        return Expressions.alwaysTrue();
      }
    }
    List<Object> values = new ArrayList<>();
    try (var st = duck.createStatement();
        var rs = st.executeQuery("SELECT DISTINCT " + Lexer.quoteIdentifier(column) + " FROM " + relation + " LIMIT "
            + (PLANNED_KEYS + 1))) {
      while (rs.next()) {
        Object v = rs.getObject(1);
        values.add(switch (key.type().typeId()) {
          case INTEGER -> ((Number) v).intValue();
          case LONG -> ((Number) v).longValue();
          default -> v.toString();
        });
      }
    }
    if (values.isEmpty() || values.size() > PLANNED_KEYS) {
      return Expressions.alwaysTrue();
    }
    return Expressions.in(key.name(), values);
  }
}
