package dev.floe.write;

import dev.floe.Column;
import dev.floe.catalog.TableFiles;
import dev.floe.read.ScanFiles;
import dev.floe.read.ScanPlan;
import dev.floe.read.ScanSql;
import dev.floe.sql.Lexer;
import dev.floe.types.TypeMapping;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.BaseFileScanTask;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.Table;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.ResidualEvaluator;
import org.apache.iceberg.types.Type;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * Where a rewrite (a compaction, Floe's or another engine's) put rows it moved: given rows of source
 * files by position, the positions of rows with the same values among the live rows of the files the
 * rewrite wrote. A rewrite keeps every live row and changes none, so the rows a change deleted by
 * position in a file that was rewritten since are found again by their values (equal rows are
 * interchangeable: each found position is claimed once).
 *
 * <p>It runs in DuckDB, as a scan does (field ids, renamed columns and name mappings alike): the source
 * rows read by position (DuckDB reads only the row groups that hold them), matched to the targets' rows
 * by a hash join (so a file's rows are read once, whatever the number of rows sought), claimed in file
 * and position order. It runs under the table's commit lock, so its cost is every writer's wait: with
 * Iceberg's generic reader a 2-row DELETE over a 2M-row file that a compaction rewrote took 1 s to
 * commit, one of 200k rows 3.2 s.
 */
public final class MovedRows {
  private MovedRows() {}

  private static final String SOUGHT = "__floe_moved_sought";
  private static final String GONE = "__floe_moved_gone";
  private static final String ROWS = "__floe_moved_rows";
  private static final String CANDIDATES = "__floe_moved_candidates";
  private static final String FILES = "__floe_moved_files";

  /**
   * The positions, per target file, of rows equal to those at {@code positions} of each source file, among
   * the targets' rows not in {@code deleted}; empty when a row cannot be found (it was deleted since, so
   * whoever deleted it first wins) or a file is not Parquet.
   *
   * @param byKey compare only the primary key's columns (a table with one, when the targets hold the same
   *     versions of the rows as the sources: a compaction's own output); otherwise a newer version of a
   *     key may be among the targets, and only equal values are the same row
   */
  public static Optional<Map<String, long[]>> find(Connection duck, ScanFiles files, Table table,
      Map<DataFile, long[]> sources, List<DataFile> targets, Map<String, PositionDeleteIndex> deleted,
      boolean byKey) {
    if (sources.isEmpty()) {
      return Optional.of(Map.of());
    }
    for (DataFile f : sources.keySet()) {
      if (f.format() != FileFormat.PARQUET) {
        return Optional.empty();
      }
    }
    for (DataFile f : targets) {
      if (f.format() != FileFormat.PARQUET) {
        return Optional.empty();
      }
    }
    Set<Integer> key = table.schema().identifierFieldIds();
    List<Column> all = TypeMapping.columns(table.schema(), table.properties());
    List<Column> compared = !byKey || key.isEmpty() ? all : all.stream().filter(c -> key.contains(c.fieldId())).toList();
    try (Statement st = duck.createStatement()) {
      try {
        return find(duck, st, files, table, sources, targets, deleted, compared);
      } finally {
        st.execute("DROP TABLE IF EXISTS " + SOUGHT);
        st.execute("DROP TABLE IF EXISTS " + GONE);
        st.execute("DROP TABLE IF EXISTS " + ROWS);
        st.execute("DROP TABLE IF EXISTS " + CANDIDATES);
        st.execute("DROP TABLE IF EXISTS " + FILES);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot find the rows a rewrite of " + table.name() + " moved: "
          + e.getMessage(), e);
    }
  }

  private static Optional<Map<String, long[]>> find(Connection duck, Statement st, ScanFiles files, Table table,
      Map<DataFile, long[]> sources, List<DataFile> targets, Map<String, PositionDeleteIndex> deleted,
      List<Column> compared) throws SQLException {
    // the positions sought and those of the targets already deleted, by file number (FILES: the paths as
    // the scan names files)
    List<String> paths = new ArrayList<>();
    Map<String, DataFile> byPath = new HashMap<>();
    long sought;
    try (Positions p = new Positions(duck, st, SOUGHT)) {
      for (Map.Entry<DataFile, long[]> e : sources.entrySet()) {
        int no = paths.size();
        paths.add(TableFiles.path(table.io(), e.getKey().location()).toString());
        long[] at = e.getValue().clone();
        java.util.Arrays.sort(at);
        for (int i = 0; i < at.length; i++) {
          if (i == 0 || at[i] != at[i - 1]) {
            p.add(no, at[i]);
          }
        }
      }
      sought = p.rows;
    }
    try (Positions p = new Positions(duck, st, GONE)) {
      for (DataFile f : targets) {
        int no = paths.size();
        String path = TableFiles.path(table.io(), f.location()).toString();
        paths.add(path);
        byPath.put(path, f);
        PositionDeleteIndex gone = deleted.get(f.location());
        if (gone != null) {
          p.addAll(no, gone);
        }
      }
    }
    st.execute("CREATE OR REPLACE TEMP TABLE " + FILES + " (no INTEGER, path VARCHAR)");
    try (DuckDBAppender a = duck.unwrap(DuckDBConnection.class).createAppender("temp", "main", FILES)) {
      for (int i = 0; i < paths.size(); i++) {
        a.beginRow();
        a.append(i);
        a.append(paths.get(i));
        a.endRow();
      }
    }
    // the rows sought, by value: each distinct row and how many times it is sought
    List<String> values = new ArrayList<>();
    List<String> on = new ArrayList<>();
    for (int i = 0; i < compared.size(); i++) {
      Column c = compared.get(i);
      Type type = table.schema().findField(c.fieldId()).type();
      String column = "r." + Lexer.quoteIdentifier(c.name());
      // a float's text tells -0.0 from 0.0, which compare equal
      boolean floating = type.typeId() == Type.TypeID.FLOAT || type.typeId() == Type.TypeID.DOUBLE;
      values.add((floating ? "CAST(" + column + " AS VARCHAR)" : column) + " AS m" + i);
      boolean required = table.schema().findField(c.fieldId()).isRequired();
      on.add("s.m" + i + (required ? " = " : " IS NOT DISTINCT FROM ") + "t.m" + i);
    }
    String match = String.join(" AND ", on);
    long read = count(st, "CREATE OR REPLACE TEMP TABLE " + ROWS + " AS SELECT " + String.join(", ", values)
        + " FROM (" + ScanSql.relation(plan(table, compared, List.copyOf(sources.keySet())), table.io(), files, true)
        + ") AS r SEMI JOIN (SELECT x.path, p.pos FROM " + SOUGHT + " AS p JOIN " + FILES + " AS x USING (no)) AS p ON r."
        + ScanSql.ROW_FILE + " = p.path AND r." + ScanSql.ROW_POSITION + " = p.pos");
    if (read < sought) {
      return Optional.empty(); // positions past a file's end: not rows of it
    }
    Map<String, List<Long>> found = new LinkedHashMap<>();
    long claimed = 0;
    if (!targets.isEmpty()) {
      String ms = String.join(", ", java.util.stream.IntStream.range(0, compared.size()).mapToObj(i -> "m" + i)
          .toList());
      // the targets' live rows equal to a row sought
      st.execute("CREATE OR REPLACE TEMP TABLE " + CANDIDATES + " AS SELECT t.* FROM (SELECT " + String.join(", ",
          values) + ", r." + ScanSql.ROW_FILE + " AS f, r." + ScanSql.ROW_POSITION + " AS p FROM ("
          + ScanSql.relation(plan(table, compared, targets), table.io(), files, true) + ") AS r ANTI JOIN (SELECT "
          + "x.path, g.pos FROM " + GONE + " AS g JOIN " + FILES + " AS x USING (no)) AS g ON r." + ScanSql.ROW_FILE
          + " = g.path AND r." + ScanSql.ROW_POSITION + " = g.pos) AS t SEMI JOIN "
          + ROWS + " AS s ON " + match);
      boolean once;
      try (ResultSet rs = st.executeQuery("SELECT (SELECT count(*) FROM " + CANDIDATES + "), (SELECT count(*) FROM "
          + "(SELECT DISTINCT " + ms + " FROM " + ROWS + ")), (SELECT count(*) FROM (SELECT DISTINCT " + ms + " FROM "
          + CANDIDATES + "))")) {
        rs.next();
        once = rs.getLong(1) == read && rs.getLong(2) == read && rs.getLong(3) == read;
      }
      // each row sought once and found once (as many candidates, all different): every candidate is
      // claimed; otherwise equal rows are claimed in file and position order, as many as are sought
      String claims = once ? "SELECT f, p FROM " + CANDIDATES
          : "SELECT t.f, t.p FROM (SELECT *, row_number() OVER (PARTITION BY " + ms + " ORDER BY f, p) AS k FROM "
              + CANDIDATES + ") AS t JOIN (SELECT " + ms + ", count(*) AS n FROM " + ROWS + " GROUP BY ALL) AS s ON "
              + match + " AND t.k <= s.n";
      try (ResultSet rs = st.executeQuery(claims)) {
        while (rs.next()) {
          DataFile target = byPath.get(rs.getString(1));
          if (target == null) {
            throw new SQLException("a row was found in " + rs.getString(1) + ", which is none of the targets");
          }
          found.computeIfAbsent(target.location(), k -> new ArrayList<>()).add(rs.getLong(2));
          claimed++;
        }
      }
    }
    if (claimed < read) {
      return Optional.empty(); // a row is not among the targets' live rows: deleted since
    }
    Map<String, long[]> out = new LinkedHashMap<>();
    found.forEach((f, p) -> out.put(f, p.stream().mapToLong(Long::longValue).sorted().toArray()));
    return Optional.of(out);
  }

  /** A temp table of file numbers and positions ({@code no}, {@code pos}), filled through DuckDB's appender. */
  private static final class Positions implements AutoCloseable {
    private final DuckDBAppender appender;
    long rows;

    Positions(Connection duck, Statement st, String name) throws SQLException {
      st.execute("CREATE OR REPLACE TEMP TABLE " + name + " (no INTEGER, pos BIGINT)");
      appender = duck.unwrap(DuckDBConnection.class).createAppender("temp", "main", name);
    }

    void add(int no, long pos) throws SQLException {
      appender.beginRow();
      appender.append(no);
      appender.append(pos);
      appender.endRow();
      rows++;
    }

    void addAll(int no, PositionDeleteIndex positions) throws SQLException {
      SQLException[] failed = {null};
      positions.forEach(pos -> {
        if (failed[0] == null) {
          try {
            add(no, pos);
          } catch (SQLException e) {
            failed[0] = e;
          }
        }
      });
      if (failed[0] != null) {
        throw failed[0];
      }
    }

    @Override
    public void close() throws SQLException {
      appender.close();
    }
  }

  /** A scan of {@code data}'s rows with their positions (no deletes applied): the compared columns. */
  private static ScanPlan plan(Table table, List<Column> columns, List<DataFile> data) {
    String schema = SchemaParser.toJson(table.schema());
    ResidualEvaluator residual = ResidualEvaluator.unpartitioned(Expressions.alwaysTrue());
    List<FileScanTask> tasks = new ArrayList<>();
    Map<Integer, String> specs = new HashMap<>();
    for (DataFile f : data) {
      String spec = specs.computeIfAbsent(f.specId(), id -> PartitionSpecParser.toJson(table.specs().get(id)));
      tasks.add(new BaseFileScanTask(f, new DeleteFile[0], schema, spec, residual));
    }
    return new ScanPlan(table, Optional.ofNullable(table.currentSnapshot()), table.schema(), columns, tasks);
  }

  private static long count(Statement st, String create) throws SQLException {
    st.execute(create);
    try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + ROWS)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
