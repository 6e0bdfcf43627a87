package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.IcebergClients;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random transaction blocks against a model (DuckDB native tables, with its own transactions): each block
 * runs a few random INSERT/UPDATE/DELETE statements on both, sometimes while another session appends
 * outside it, and ends with COMMIT or ROLLBACK on both. Inside a block Floe must show the block's own
 * changes (and the model's view of them), outside it the last committed state; after every block the
 * committed contents must match. At the end Iceberg's reader reads the same rows, and every file left
 * in the table is one a snapshot names (rolled-back and folded statements leave nothing behind).
 */
class TransactionDifferentialTest {
  @TempDir
  Path dir;

  private static final int BLOCKS = Integer.getInteger("tx.blocks", 40);

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {
      "WITH (format_version = 2)",
      "WITH (format_version = 3)",
      "WITH (format_version = 2, 'write.update.mode' = 'copy-on-write', 'write.delete.mode' = 'copy-on-write')",
      "PARTITIONED BY (bucket(3, id)) WITH (format_version = 3)"})
  void randomBlocksMatchTheModel(String layout) throws Exception {
    long seed = Long.getLong("tx.seed", 42L);
    SplittableRandom rnd = new SplittableRandom(seed + layout.hashCode());
    try (Database db = Floe.open(dir); Session s = db.connect();
        Connection model = DriverManager.getConnection("jdbc:duckdb:");
        Connection outsideModel = ((org.duckdb.DuckDBConnection) model).duplicate()) {
      String columns = "(id int NOT NULL, grp int, v bigint)";
      db.sql("CREATE TABLE t " + columns + " " + layout).close();
      exec(model, "CREATE TABLE t " + columns);
      String seedRows = "INSERT INTO t SELECT i, i % 5, i * 10 FROM range(0, 60) r(i)";
      db.sql(seedRows).close();
      exec(model, seedRows);
      int nextId = 1000;
      List<String> log = new ArrayList<>();
      for (int block = 0; block < BLOCKS; block++) {
        List<List<String>> committed = rows(db, "SELECT * FROM t");
        s.sql("BEGIN").close();
        exec(model, "BEGIN");
        log.add("BEGIN");
        int statements = 1 + rnd.nextInt(4);
        for (int k = 0; k < statements; k++) {
          String sql = switch (rnd.nextInt(6)) {
            case 0 -> "INSERT INTO t VALUES (" + nextId++ + ", " + rnd.nextInt(5) + ", " + rnd.nextInt(1000) + "), ("
                + nextId++ + ", " + rnd.nextInt(5) + ", NULL)";
            case 1 -> "UPDATE t SET v = coalesce(v, 0) + " + (1 + rnd.nextInt(9)) + " WHERE grp = " + rnd.nextInt(5);
            case 2 -> "UPDATE t SET grp = " + rnd.nextInt(5) + " WHERE id % 7 = " + rnd.nextInt(7);
            case 3 -> "DELETE FROM t WHERE id % 11 = " + rnd.nextInt(11);
            case 4 -> "UPDATE t SET v = v * 2 WHERE id = " + rnd.nextInt(nextId);
            default -> "DELETE FROM t WHERE v > " + rnd.nextInt(2000);
          };
          log.add(sql);
          long floeCount = count(s, sql);
          long modelCount = update(model, sql);
          assertThat(floeCount).as("%s\n%s", sql, String.join("\n", log)).isEqualTo(modelCount);
          assertThat(rows(s, "SELECT * FROM t")).as("inside the block after %s\n%s", sql, String.join("\n", log))
              .isEqualTo(rows(model, "SELECT * FROM t"));
          assertThat(rows(db, "SELECT * FROM t")).as("outside the block after %s", sql).isEqualTo(committed);
          if (rnd.nextInt(4) == 0) {
            // another session appends meanwhile: invisible inside the block, kept by its COMMIT
            String outside = "INSERT INTO t VALUES (" + nextId++ + ", " + rnd.nextInt(5) + ", 7)";
            log.add("-- outside: " + outside);
            db.sql(outside).close();
            exec(outsideModel, outside);
            committed = rows(db, "SELECT * FROM t");
          }
        }
        boolean commit = rnd.nextInt(3) > 0;
        log.add(commit ? "COMMIT" : "ROLLBACK");
        s.sql(commit ? "COMMIT" : "ROLLBACK").close();
        exec(model, commit ? "COMMIT" : "ROLLBACK");
        assertThat(rows(db, "SELECT * FROM t")).as("after block %d\n%s", block, String.join("\n", log))
            .isEqualTo(rows(model, "SELECT * FROM t"));
      }
      System.out.println("[TransactionDifferentialTest] " + layout + ": " + BLOCKS + " blocks, "
          + rows(db, "SELECT count(*) FROM t").get(0) + " rows, "
          + rows(db, "SELECT count(*) FROM \"t$snapshots\"").get(0) + " snapshots");
    }
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      Table table = catalog.loadTable(TableIdentifier.of("public", "t"));
      long icebergRows = 0;
      try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
        for (Record ignored : records) {
          icebergRows++;
        }
      }
      try (Database db = Floe.open(dir)) {
        assertThat(rows(db, "SELECT count(*) FROM t").get(0)).isEqualTo(List.of(String.valueOf(icebergRows)));
      }
      Set<String> named = new TreeSet<>();
      for (Snapshot snap : table.snapshots()) {
        named.add(snap.manifestListLocation());
        snap.allManifests(table.io()).forEach(m -> named.add(m.path()));
        snap.addedDataFiles(table.io()).forEach(f -> named.add(f.location()));
        snap.addedDeleteFiles(table.io()).forEach(f -> named.add(f.location()));
      }
      Path root = dir.resolve("public").resolve("t");
      try (Stream<Path> files = Files.walk(root)) {
        Set<String> left = files.filter(Files::isRegularFile).map(Path::toString)
            .filter(p -> !p.endsWith(".metadata.json") && !p.endsWith("version-hint.text"))
            .filter(p -> named.stream().noneMatch(n -> n.endsWith(p)))
            .collect(Collectors.toCollection(TreeSet::new));
        assertThat(left).as("files no snapshot names").isEmpty();
      }
    }
  }

  private static void exec(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static long update(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      return st.executeUpdate(sql);
    }
  }

  private static long count(Session s, String sql) {
    try (Result r = s.sql(sql)) {
      return r.rowCount();
    }
  }

  private static List<List<String>> rows(Database db, String sql) {
    try (Result r = db.sql(sql + " ORDER BY ALL")) {
      return text(r);
    }
  }

  private static List<List<String>> rows(Session s, String sql) {
    try (Result r = s.sql(sql + " ORDER BY ALL")) {
      return text(r);
    }
  }

  private static List<List<String>> text(Result r) {
    List<List<String>> out = new ArrayList<>();
    for (Row row : r) {
      List<String> values = new ArrayList<>();
      for (int k = 0; k < r.columns().size(); k++) {
        values.add(String.valueOf(row.get(k)));
      }
      out.add(values);
    }
    return out;
  }

  private static List<List<String>> rows(Connection c, String sql) throws SQLException {
    List<List<String>> out = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql + " ORDER BY ALL")) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<String> values = new ArrayList<>();
        for (int k = 1; k <= n; k++) {
          values.add(String.valueOf(rs.getObject(k)));
        }
        out.add(values);
      }
    }
    return out;
  }
}
