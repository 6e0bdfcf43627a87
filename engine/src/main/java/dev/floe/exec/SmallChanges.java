package dev.floe.exec;

import dev.floe.Column;
import dev.floe.sql.Ast;
import dev.floe.types.IcebergValues;
import dev.floe.types.TypeMapping;
import dev.floe.write.DeltaWriter;
import dev.floe.write.Inserter;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;

/**
 * Small changes (at most {@link Inserter#FEW_ROWS} rows) read once into the JVM: the positions of the
 * rows they delete, and their new rows as Iceberg records when nothing is left for DuckDB to do to them.
 * A one-row statement then runs fewer DuckDB statements (docs/decisions/0003). Whatever cannot be read
 * so is left to DuckDB, which raises the precise error where there is one.
 */
final class SmallChanges {
  private static final String FILE = dev.floe.read.ScanSql.ROW_FILE;
  private static final String POS = dev.floe.read.ScanSql.ROW_POSITION;

  private final SessionContext session;
  private final TempTables temps;
  private final KeyChecks keys;
  /** Per new-rows table, its rows as records, or null when they cannot be written in the JVM. */
  private final Map<String, List<Record>> records = new HashMap<>();

  SmallChanges(SessionContext session, TempTables temps, KeyChecks keys) {
    this.session = session;
    this.temps = temps;
    this.keys = keys;
  }

  /**
   * A small change table, read: its column types, the rows it deletes with their positions, and when
   * asked its values after {@code __floe_file} and {@code __floe_pos} as JDBC gives them
   * ({@link IcebergValues#jdbcValue}; null when a value could not be read so).
   */
  record Few(List<String> types, DeltaWriter.Deleted deleted, List<Object[]> values) {}

  /**
   * Reads a small change table whose first two columns are {@code __floe_file} and {@code __floe_pos}:
   * one query that gives the column types and the positions, which the delete writers then use without
   * a query of their own.
   */
  Few read(String changes, boolean withValues) {
    Map<String, List<Long>> byFile = new LinkedHashMap<>();
    List<String> types = new ArrayList<>();
    List<Object[]> values = withValues ? new ArrayList<>() : null;
    try (var st = session.duck().createStatement(); var rs = st.executeQuery("SELECT * FROM " + changes)) {
      ResultSetMetaData md = rs.getMetaData();
      for (int i = 1; i <= md.getColumnCount(); i++) {
        types.add(md.getColumnTypeName(i));
      }
      while (rs.next()) {
        byFile.computeIfAbsent(rs.getString(1), f -> new ArrayList<>()).add(rs.getLong(2));
        if (values != null) {
          Object[] row = new Object[types.size() - 2];
          try {
            for (int i = 0; i < row.length; i++) {
              row[i] = IcebergValues.jdbcValue(rs, i + 3, types.get(i + 2));
            }
            values.add(row);
          } catch (SQLException | RuntimeException e) {
            values = null; // a value the driver cannot give as such: the rows are written by DuckDB
          }
        }
      }
    } catch (SQLException e) {
      throw DuckErrors.map(e, o -> 0);
    }
    Map<String, long[]> positions = new LinkedHashMap<>();
    long rows = 0;
    for (Map.Entry<String, List<Long>> e : byFile.entrySet()) {
      long[] sorted = e.getValue().stream().mapToLong(Long::longValue).sorted().distinct().toArray();
      positions.put(e.getKey(), sorted);
      rows += sorted.length;
    }
    return new Few(types, new DeltaWriter.Deleted("SELECT " + FILE + ", " + POS + " FROM " + changes, rows,
        positions), values);
  }

  /**
   * The new rows of a small UPDATE as Iceberg records, taken from its change table's values when nothing
   * is left for DuckDB to do to them: every value already has its column's stored type, no assigned
   * value needs a check beyond that (a length or range limit), and no NOT NULL column is assigned a
   * NULL. Otherwise null, and DuckDB writes them.
   */
  List<Record> updated(ChangeTarget t, Few few, Map<String, Ast.Assignment> set) {
    if (few.values() == null || !Inserter.writesInJvm(t.live(), t.schema())) {
      return null;
    }
    int n = t.columns().size();
    Types.NestedField[] fields = new Types.NestedField[n];
    for (int k = 0; k < n; k++) {
      Column col = t.columns().get(k);
      fields[k] = t.schema().findField(col.fieldId());
      // unchanged values come as the target's scan gives them (smallint columns as SMALLINT)
      if (fields[k] == null || !TypeMapping.isDuckdbType(few.types().get(2 + k), TypeMapping.duckdbType(col,
          fields[k].type()))) {
        return null;
      }
      if (set.containsKey(col.name()) && !Inserts.castOnly(col)) {
        return null;
      }
    }
    List<Record> out = new ArrayList<>(few.values().size());
    for (Object[] values : few.values()) {
      GenericRecord row = GenericRecord.create(t.schema());
      for (int k = 0; k < n; k++) {
        Column col = t.columns().get(k);
        if (values[k] == null && !col.nullable() && set.containsKey(col.name())) {
          return null;
        }
        try {
          Object value = IcebergValues.internal(fields[k].type(), values[k]);
          if (set.containsKey(col.name()) && !StoredValues.storable(fields[k].type(), value)) {
            return null; // DuckDB's write raises the error
          }
          row.setField(fields[k].name(), value);
        } catch (RuntimeException e) {
          return null;
        }
      }
      out.add(row);
    }
    return out;
  }

  /**
   * The rows of a small temporary table of new rows (the target's columns, checked and of their stored
   * types), read once as Iceberg records, when the table's rows can be written in the JVM; their keys
   * go to {@link KeyChecks}. Null otherwise (DuckDB writes them).
   */
  List<Record> newRows(ChangeTarget t, String table) {
    Long size = temps.size(table);
    if (size == null || size < 1 || size > Inserter.FEW_ROWS || !Inserter.writesInJvm(t.live(), t.schema())) {
      return null;
    }
    if (records.containsKey(table)) {
      return records.get(table);
    }
    List<Record> rows = new ArrayList<>();
    try (var st = session.duck().createStatement(); var rs = st.executeQuery("SELECT * FROM " + table)) {
      ResultSetMetaData md = rs.getMetaData();
      int n = t.columns().size();
      Types.NestedField[] fields = new Types.NestedField[n];
      String[] types = new String[n];
      for (int k = 0; k < n; k++) {
        fields[k] = t.schema().findField(t.columns().get(k).fieldId());
        types[k] = md.getColumnTypeName(k + 1);
        if (md.getColumnCount() != n || fields[k] == null
            || !TypeMapping.isDuckdbType(types[k], TypeMapping.duckdbType(fields[k].type()))) {
          records.put(table, null);
          return null;
        }
      }
      while (rs.next()) {
        GenericRecord row = GenericRecord.create(t.schema());
        for (int k = 0; k < n; k++) {
          row.setField(fields[k].name(), IcebergValues.internal(fields[k].type(),
              IcebergValues.jdbcValue(rs, k + 1, types[k])));
        }
        rows.add(row);
      }
    } catch (SQLException | RuntimeException e) {
      records.put(table, null); // a value the driver cannot give as such: DuckDB writes the rows
      return null;
    }
    keys.remember(t, table, rows);
    records.put(table, rows);
    return rows;
  }
}
