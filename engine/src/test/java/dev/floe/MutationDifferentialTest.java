package dev.floe;

import static org.junit.jupiter.api.Assertions.fail;

import dev.floe.testing.Canonical;
import dev.floe.testing.JdbcRows;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Randomized differential test of Floe's row-level mutations (INSERT, UPDATE, DELETE, MERGE, ON CONFLICT,
 * TRUNCATE) against a trusted model: the same statements on a native in-memory DuckDB table.
 *
 * <p>Each configuration (merge-on-read / copy-on-write, format v2 / v3, partitioned or not, with or
 * without a PRIMARY KEY) runs a seeded random sequence of statements on both sides. After every statement
 * the affected-row count (Floe's command tag, DuckDB's update count), RETURNING rows when present, and the
 * full contents of the changed table must be equal; a statement that fails must fail on both sides (with
 * the same SQLSTATE where DuckDB's error identifies one) and must not create a new Floe version. Some
 * statements are generated to fail (duplicate key 23505, NULL into NOT NULL 23502, a MERGE that would
 * change a row twice 21000). Floe's version is recorded after every statement with the model's contents
 * at that point, and at the end every recorded version must read back by time travel. Some
 * configurations close and reopen the warehouse mid-sequence.
 *
 * <p>Shapes where DuckDB differs from PostgreSQL are not generated (per-row vs per-statement key checks on
 * UPDATE, duplicate proposals in ON CONFLICT DO UPDATE, UPDATE ... FROM with several matching source rows).
 * Where a statement has no DuckDB equivalent (ON CONFLICT on a table without a key) the model runs its
 * PostgreSQL meaning.
 *
 * <p>Seeds: each configuration has a fixed default seed. {@code -Dmutation.seed=N} runs every configuration
 * with seed N, {@code -Dmutation.config=NAME} runs one configuration, {@code -Dmutation.statements=N}
 * sets the sequence length.
 */
class MutationDifferentialTest {
  private static final int DEFAULT_STATEMENTS = 44;
  /**
   * The columns of t (and src). {@code batch} is the number of the statement that wrote the row: every
   * statement that writes rows sets it, so that in a table whose files are never split (by size) the rows
   * of one (batch, partition) are the rows of one data file.
   */
  private static final List<String> COLUMNS = List.of("id", "grp", "name", "qty", "price", "d", "flag", "batch");
  /** The columns a statement may change (not the id, which has its own rules, nor batch). */
  private static final List<String> VALUE_COLUMNS = COLUMNS.subList(1, COLUMNS.size() - 1);
  private static final String OTHER_COLUMNS = "grp int NOT NULL, name text, qty bigint, price numeric(10,2), "
      + "d date, flag boolean, batch int";
  private static final LocalDate EPOCH = LocalDate.of(2023, 1, 1);

  // ------------------------------------------------------------------ configurations

  private static final String MOR = "merge-on-read";
  private static final String COW = "copy-on-write";

  /**
   * One table setup.
   *
   * @param mode the write.delete/update/merge.mode, or null for the default (merge-on-read)
   * @param partitionedBy the PARTITIONED BY fields, or null
   */
  record Config(String name, int formatVersion, String mode, String partitionedBy, boolean primaryKey,
      boolean restart, List<String> options, long seed, boolean maintain) {
    Config(String name, int formatVersion, String mode, String partitionedBy, boolean primaryKey, boolean restart,
        List<String> options, long seed) {
      this(name, formatVersion, mode, partitionedBy, primaryKey, restart, options, seed, false);
    }

    @Override
    public String toString() {
      return name;
    }

    boolean copyOnWrite() {
      return COW.equals(mode);
    }
  }

  static Stream<Config> configs() {
    return Stream.of(
        new Config("mor-v2-pk", 2, null, null, true, false,
            List.of("'write.parquet.row-group-size-rows' = '64'", "'write.target-file-size-bytes' = '8192'"), 101),
        new Config("mor-v2-bucket", 2, MOR, "bucket(4, id)", false, true, List.of(), 102),
        new Config("mor-v3", 3, MOR, null, false, true, List.of(), 103),
        new Config("mor-v3-grp-pk", 3, MOR, "grp", true, false, List.of(), 104),
        new Config("cow-v2", 2, COW, null, false, false, List.of("'write.target-file-size-bytes' = '4096'"), 105),
        new Config("cow-v2-grp-pk", 2, COW, "grp", true, true, List.of(), 106),
        new Config("cow-v3-pk", 3, COW, null, true, true,
            List.of("sorted_by = ARRAY['name ASC NULLS FIRST']", "'write.parquet.row-group-size-rows' = '64'"), 107),
        new Config("cow-v3-bucket-grp", 3, COW, "bucket(4, id), grp", false, false, List.of(), 108),
        // maintenance interleaved at random moments: compaction, expiry and orphan removal change no row
        new Config("maint-mor-v2-pk", 2, null, null, true, false,
            List.of("'write.parquet.row-group-size-rows' = '64'"), 111, true),
        new Config("maint-mor-v3-bucket", 3, MOR, "bucket(4, id)", false, true, List.of(), 112, true),
        new Config("maint-cow-v2-grp-pk", 2, COW, "grp", true, false, List.of(), 113, true));
  }

  @TempDir
  Path temp;

  @ParameterizedTest(name = "{0}")
  @MethodSource("configs")
  void randomMutations(Config config) throws Exception {
    String only = System.getProperty("mutation.config");
    Assumptions.assumeTrue(only == null || only.isBlank() || only.trim().equals(config.name()),
        "-Dmutation.config=" + only);
    String replay = System.getProperty("mutation.seed");
    long seed = replay == null || replay.isBlank() ? config.seed() : Long.parseLong(replay.trim());
    int statements = Integer.getInteger("mutation.statements", DEFAULT_STATEMENTS);
    System.out.println("[MutationDifferentialTest] " + config.name() + ": seed " + seed + " (replay: -Dmutation.seed="
        + seed + " -Dmutation.config=" + config.name() + ")");
    try (Workload w = new Workload(config, seed, temp.resolve(config.name()))) {
      w.run(statements);
    }
  }

  // ------------------------------------------------------------------ the workload

  /**
   * A generated statement: the SQL for Floe and for the model (null: not run on the model, Floe must fail;
   * empty: nothing to do on the model, e.g. a partition spec change).
   */
  record Stmt(String label, String verb, String table, String sql, String modelSql, String expectState) {
    static Stmt same(String label, String verb, String table, String sql) {
      return new Stmt(label, verb, table, sql, sql, null);
    }

    static Stmt failing(String label, String verb, String sql, String state) {
      return new Stmt(label, verb, "t", sql, sql, state);
    }
  }

  /** What one side did with a statement: a count (and RETURNING rows), or an error. */
  record Outcome(long count, String tag, List<List<String>> rows, String error, String state) {
    boolean ok() {
      return error == null;
    }
  }

  static final class Workload implements AutoCloseable {
    final Config cfg;
    final long seed;
    final SplittableRandom rnd;
    final Path dir;
    final Connection model;
    Database db;
    final List<String> history = new ArrayList<>();
    final Map<String, Integer> stats = new TreeMap<>();
    /** Floe version -> the model's contents of t after the statement that made it. */
    final Map<Long, List<List<String>>> versions = new TreeMap<>();

    /** The model's rows of t (sorted canonically), their canonical text, and its ids. */
    List<Object[]> rows = List.of();
    List<List<String>> contents = List.of();
    List<Integer> ids = List.of();
    Set<Integer> idSet = Set.of();
    /** The model's src rows' ids (unique by construction). */
    List<Integer> srcIds = List.of();
    /** Ids from here up have never been used in t or src. */
    int nextId = 1;
    long lastVersion;
    int step;
    int floeFailures;
    long floeNanos;
    long modelNanos;
    long compareNanos;
    long timeTravelNanos;
    final Map<String, Long> floeMillisByLabel = new TreeMap<>();

    Workload(Config cfg, long seed, Path dir) throws SQLException {
      this.cfg = cfg;
      this.seed = seed;
      this.rnd = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + cfg.name().hashCode());
      this.dir = dir;
      this.model = DriverManager.getConnection("jdbc:duckdb:");
      this.db = Floe.open(dir);
    }

    @Override
    public void close() throws Exception {
      try {
        db.close();
      } finally {
        model.close();
      }
    }

    void run(int statements) throws SQLException {
      try {
        runChecked(statements);
      } catch (FloeException e) {
        throw new AssertionError(context("after statement " + step, "(see the stack trace)") + "Floe failed: "
            + e.sqlState() + " " + e.getMessage(), e);
      }
    }

    void runChecked(int statements) throws SQLException {
      long start = System.nanoTime();
      setup();
      for (int i = 0; i < statements; i++) {
        if (cfg.restart() && i == statements / 2) {
          restart();
        }
        execute(next());
      }
      if (cfg.maintain()) {
        icebergReads();
      }
      long ttStart = System.nanoTime();
      timeTravel();
      timeTravelNanos = System.nanoTime() - ttStart;
      checkStrategy();
      System.out.println("[MutationDifferentialTest] " + cfg.name() + ": " + step + " statements " + stats + ", "
          + floeFailures + " failed as expected, " + versions.size() + " versions, " + rows.size()
          + " rows at the end; " + fileStats() + "; Floe statements " + floeNanos / 1_000_000 + " ms "
          + floeMillisByLabel + ", model " + modelNanos / 1_000_000 + " ms, comparisons " + compareNanos / 1_000_000
          + " ms, time travel " + timeTravelNanos / 1_000_000 + " ms, total " + (System.nanoTime() - start) / 1_000_000
          + " ms");
    }

    // ---------------------------------------------------------------- setup, restart, checks

    void setup() throws SQLException {
      String key = cfg.primaryKey() ? "id int PRIMARY KEY" : "id int NOT NULL";
      List<String> options = new ArrayList<>();
      options.add("format_version = " + cfg.formatVersion());
      if (cfg.mode() != null) {
        for (String kind : List.of("delete", "update", "merge")) {
          options.add("'write." + kind + ".mode' = '" + cfg.mode() + "'");
        }
      }
      options.addAll(cfg.options());
      String floeDdl = "CREATE TABLE t (" + key + ", " + OTHER_COLUMNS + ")"
          + (cfg.partitionedBy() == null ? "" : " PARTITIONED BY (" + cfg.partitionedBy() + ")")
          + " WITH (" + String.join(", ", options) + ")";
      ddl(floeDdl, "CREATE TABLE t (" + key + ", " + OTHER_COLUMNS + ")");
      // The source of UPDATE ... FROM, DELETE ... USING, MERGE: ids unique, grp never NULL.
      String srcDdl = "CREATE TABLE src (id int, " + OTHER_COLUMNS.replace(" NOT NULL", "") + ")";
      ddl(srcDdl, srcDdl);

      // The configuration really is what the test claims.
      TableInfo info = db.table("t");
      if (info.formatVersion() != cfg.formatVersion()) {
        failWith("setup", floeDdl, "format version " + info.formatVersion());
      }
      for (String kind : List.of("delete", "update", "merge")) {
        String mode = info.properties().getOrDefault("write." + kind + ".mode", MOR);
        if (!mode.equals(cfg.mode() == null ? MOR : cfg.mode())) {
          failWith("setup", floeDdl, "write." + kind + ".mode is " + mode);
        }
      }
      int fields = cfg.partitionedBy() == null ? 0
          : cfg.partitionedBy().replaceAll("\\([^)]*\\)", "").split(",").length;
      if (info.partitioning().size() != fields) {
        failWith("setup", floeDdl, "partitioning " + info.partitioning());
      }

      int n = 400 + rnd.nextInt(800);
      execute(Stmt.same("insert-select", "INSERT", "t", "INSERT INTO t " + bulkSelect(nextId, nextId + n, 1)));
      int srcStart = 1 + rnd.nextInt(50);
      execute(Stmt.same("src", "INSERT", "src", "INSERT INTO src " + bulkSelect(srcStart, srcStart + 3 * (nextId + 100),
          3 + rnd.nextInt(5))));
    }

    private void ddl(String floeSql, String modelSql) throws SQLException {
      history.add("     " + floeSql);
      try (Result r = db.sql(floeSql)) {
        // DDL: nothing to read
      }
      try (Statement st = model.createStatement()) {
        st.execute(modelSql);
      }
    }

    void restart() {
      long before = version();
      history.add("     -- close and reopen the warehouse");
      db.close();
      db = Floe.open(dir);
      if (version() != before) {
        failWith("restart", "(reopen)", "version " + before + " became " + version());
      }
      compare("t", "after restart");
      compare("src", "after restart");
    }

    /** Iceberg's generic reader reads the model's rows (by id) from what the maintenance left. */
    void icebergReads() {
      List<Integer> read = new ArrayList<>();
      try (org.apache.iceberg.jdbc.JdbcCatalog catalog = dev.floe.testing.IcebergClients.jdbcCatalog(dir);
          org.apache.iceberg.io.CloseableIterable<org.apache.iceberg.data.Record> it = org.apache.iceberg.data
              .IcebergGenerics.read(catalog.loadTable(org.apache.iceberg.catalog.TableIdentifier.of("public", "t")))
              .build()) {
        it.forEach(r -> read.add((Integer) r.getField("id")));
      } catch (Exception e) {
        throw new AssertionError(context("Iceberg's reader", "(generic read)") + e, e);
      }
      Collections.sort(read);
      List<Integer> expected = new ArrayList<>(ids);
      Collections.sort(expected);
      if (!read.equals(expected)) {
        failWith("Iceberg's reader", "(generic read)", read.size() + " rows read, the model has " + expected.size());
      }
    }

    /** Every recorded version reads back, by time travel, as the model's contents at that point. */
    void timeTravel() {
      for (Map.Entry<Long, List<List<String>>> e : versions.entrySet()) {
        if (e.getKey() == 0) {
          continue; // no snapshot yet
        }
        String sql = "SELECT * FROM t AS OF VERSION " + e.getKey();
        String diff = Canonical.diff(e.getValue(), floeRows(sql, "time travel"), 10);
        if (diff != null) {
          failWith("time travel", sql, diff);
        }
      }
    }

    /**
     * The configured write strategy was used: copy-on-write never wrote a delete file; merge-on-read wrote
     * position deletes (v2) or deletion vectors (v3).
     */
    void checkStrategy() {
      String sql = "SELECT file_format, count(*) FROM \"t$all_delete_files\" GROUP BY file_format";
      Map<String, Long> formats = new TreeMap<>();
      try (Result r = db.sql(sql)) {
        for (Row row : r) {
          formats.put(String.valueOf(row.get(0)), row.getLong(1));
        }
      }
      String expected = cfg.formatVersion() >= 3 ? "PUFFIN" : "PARQUET";
      boolean ok = cfg.copyOnWrite() ? formats.isEmpty() : formats.keySet().equals(Set.of(expected));
      if (!ok) {
        failWith("strategy check", sql, "delete files by format: " + formats);
      }
    }

    /** Every file under t's directory (data and metadata), relative to it. */
    Set<String> tableFiles() {
      Path root = dir.resolve("public").resolve("t");
      try (Stream<Path> files = Files.walk(root)) {
        Set<String> out = new TreeSet<>();
        files.filter(Files::isRegularFile).forEach(f -> out.add(root.relativize(f).toString()));
        return out;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** How the statements changed files, from the snapshot summaries, and the files live at the end. */
    String fileStats() {
      StringBuilder b = new StringBuilder("files: ");
      try (Result r = db.sql("SELECT count(*) FILTER (WHERE content = 0), count(*) FILTER (WHERE content <> 0) "
          + "FROM \"t$files\"")) {
        Row row = r.iterator().next();
        b.append(row.get(0)).append(" data + ").append(row.get(1)).append(" delete files live");
      }
      try (Result r = db.sql("SELECT coalesce(sum(CAST(summary['added-data-files'] AS bigint)), 0), "
          + "coalesce(sum(CAST(summary['deleted-data-files'] AS bigint)), 0), "
          + "coalesce(sum(CAST(summary['added-delete-files'] AS bigint)), 0), "
          + "coalesce(sum(CAST(summary['removed-delete-files'] AS bigint)), 0) FROM \"t$snapshots\"")) {
        Row row = r.iterator().next();
        b.append(", ").append(row.get(0)).append(" data files added, ").append(row.get(1)).append(" removed, ")
            .append(row.get(2)).append(" delete files added, ").append(row.get(3)).append(" removed");
      }
      return b.toString();
    }

    long version() {
      return db.table("t").currentVersion().orElse(0L);
    }

    // ---------------------------------------------------------------- running one statement

    void execute(Stmt s) {
      step++;
      stats.merge(s.label(), 1, Integer::sum);
      Outcome m = s.modelSql() == null ? null
          : s.modelSql().isEmpty() ? new Outcome(0, null, null, null, null) : runModel(s.modelSql());
      // The version before, for statements that must fail (the model ran first): they must not make one.
      boolean mayFail = m == null || !m.ok() || s.expectState() != null;
      long before = mayFail ? version() : -1;
      Set<String> filesBefore = mayFail ? tableFiles() : null;
      long floeStart = System.nanoTime();
      Outcome f = runFloe(s.sql());
      floeMillisByLabel.merge(s.label(), (System.nanoTime() - floeStart) / 1_000_000, Long::sum);
      String expectState = s.expectState();
      boolean expectFailure;
      if (m == null) {
        expectFailure = true;
      } else if (!m.ok()) {
        expectFailure = true;
        if (expectState == null) {
          expectState = m.state();
        } else if (m.state() != null && !m.state().equals(expectState)) {
          failWith(s, "generator: meant to fail with " + expectState + " but the model failed with " + m.error());
        }
      } else {
        expectFailure = false;
        if (expectState != null) {
          failWith(s, "generator: meant to fail with " + expectState + " but the model accepted it: " + m.count());
        }
      }
      history.add(String.format("%4d %s%n        -> Floe: %s; model: %s", step, s.sql()
          + (s.modelSql() != null && !s.modelSql().equals(s.sql()) ? "\n        (model: " + s.modelSql() + ")" : ""),
          f.ok() ? f.tag() : "ERROR " + f.state() + " " + f.error(),
          m == null ? "not run" : m.ok() ? m.count() + " rows" : "ERROR " + m.error()));
      if (expectFailure) {
        if (f.ok()) {
          failWith(s, "Floe accepted a statement that must fail" + (expectState == null ? "" : " with " + expectState)
              + ": " + f.tag() + (m == null ? "" : "; model: " + m.error()));
        }
        if (expectState != null && !expectState.equals(f.state())) {
          failWith(s, "Floe failed with " + f.state() + " " + f.error() + ", expected " + expectState
              + (m == null ? "" : " (model: " + m.error() + ")"));
        }
        floeFailures++;
        if (version() != before) {
          failWith(s, "a failed statement made a new version: " + before + " -> " + version());
        }
        Set<String> filesAfter = tableFiles();
        if (!filesAfter.equals(filesBefore)) {
          Set<String> added = new TreeSet<>(filesAfter);
          added.removeAll(filesBefore);
          Set<String> removed = new TreeSet<>(filesBefore);
          removed.removeAll(filesAfter);
          failWith(s, "a failed statement left files behind: added " + added + ", removed " + removed);
        }
      } else {
        if (!f.ok()) {
          failWith(s, "Floe failed: " + f.state() + " " + f.error() + "; model: " + m.count() + " rows");
        }
        String expectedTag = switch (s.verb()) {
          case "INSERT" -> "INSERT 0 " + m.count();
          case "TRUNCATE" -> "TRUNCATE TABLE";
          case "ALTER" -> "ALTER TABLE";
          case "VACUUM" -> "VACUUM";
          default -> s.verb() + " " + m.count();
        };
        if (!expectedTag.equals(f.tag())) {
          failWith(s, "command tag " + f.tag() + ", expected " + expectedTag);
        }
        if (f.rows() == null && s.modelSql() != null && !s.modelSql().isEmpty() && !s.verb().equals("TRUNCATE")
            && f.count() != m.count()) {
          failWith(s, "Result.rowCount() " + f.count() + ", expected " + m.count());
        }
        if (m.rows() != null || f.rows() != null) {
          String diff = m.rows() == null || f.rows() == null ? "RETURNING rows on one side only"
              : Canonical.diff(m.rows(), f.rows(), 10);
          if (diff != null) {
            failWith(s, "RETURNING: " + diff);
          }
        }
      }
      compare(s.table(), "statement " + step);
      if (s.verb().equals("ALTER")) {
        // The table's metadata tables still read.
        for (String meta : List.of("files", "partitions", "all_files", "entries")) {
          floeRows("SELECT count(*) FROM \"t$" + meta + "\"", "statement " + step + " (" + s.label() + ")");
        }
      }
      if (s.table().equals("t") && !expectFailure) {
        long after = version();
        if (after < lastVersion) {
          failWith(s, "version went back from " + lastVersion + " to " + after);
        }
        lastVersion = after;
        versions.put(after, contents);
        if (s.label().equals("expire") || s.label().startsWith("vacuum")) {
          // expired versions no longer read: keep the model's record of those the table still has
          Set<Long> kept = new HashSet<>();
          for (List<String> v : floeRows("SELECT sequence_number FROM \"t$snapshots\"", "statement " + step)) {
            kept.add(Long.parseLong(v.get(0).substring(v.get(0).indexOf(':') + 1)));
          }
          versions.keySet().removeIf(v -> v != 0 && !kept.contains(v));
        }
      }
    }

    Outcome runModel(String sql) {
      long start = System.nanoTime();
      try (Statement st = model.createStatement()) {
        if (st.execute(sql)) {
          try (ResultSet rs = st.getResultSet()) {
            List<List<String>> returned = JdbcRows.canonical(JdbcRows.values(rs));
            return new Outcome(returned.size(), null, returned, null, null);
          }
        }
        return new Outcome(st.getUpdateCount(), null, null, null, null);
      } catch (SQLException e) {
        String msg = e.getMessage().replace('\n', ' ');
        return new Outcome(-1, null, null, msg, duckState(msg));
      } finally {
        modelNanos += System.nanoTime() - start;
      }
    }

    /** The SQLSTATE PostgreSQL gives for the errors of DuckDB's this test provokes; null for others. */
    static String duckState(String msg) {
      if (msg.contains("Duplicate key") || msg.contains("PRIMARY KEY or UNIQUE constraint violation")) {
        return "23505";
      }
      if (msg.contains("NOT NULL constraint failed")) {
        return "23502";
      }
      if (msg.contains("cannot affect the same target row more than once")) {
        return "21000";
      }
      return null;
    }

    Outcome runFloe(String sql) {
      long start = System.nanoTime();
      try (Result r = db.sql(sql)) {
        List<List<String>> returned = null;
        if (r.hasRows()) {
          returned = new ArrayList<>();
          for (Row row : r) {
            returned.add(Canonical.row(row));
          }
        }
        return new Outcome(r.rowCount(), r.commandTag(), returned, null, null);
      } catch (FloeException e) {
        return new Outcome(-1, null, null, e.getMessage(), e.sqlState());
      } catch (RuntimeException e) {
        throw new AssertionError(context("statement " + step, sql) + "Floe threw " + e, e);
      } finally {
        floeNanos += System.nanoTime() - start;
      }
    }

    /** The table's contents in Floe equal the model's; for t, remembers them for the generator. */
    void compare(String table, String what) {
      long start = System.nanoTime();
      try {
        compareNow(table, what);
      } finally {
        compareNanos += System.nanoTime() - start;
      }
    }

    void compareNow(String table, String what) {
      List<Object[]> modelRows;
      try (Statement st = model.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM " + table)) {
        modelRows = JdbcRows.values(rs);
      } catch (SQLException e) {
        throw new AssertionError(e);
      }
      List<List<String>> expected = JdbcRows.canonical(modelRows);
      String sql = "SELECT * FROM " + table;
      String diff = Canonical.diff(expected, floeRows(sql, what), 10);
      if (diff != null) {
        failWith(what, sql, diff);
      }
      // Sorted, so that the generator's choices do not depend on the model's scan order.
      List<Integer> order = new ArrayList<>();
      for (int i = 0; i < modelRows.size(); i++) {
        order.add(i);
      }
      order.sort(Comparator.comparing(i -> expected.get(i).toString()));
      List<Object[]> sorted = order.stream().map(modelRows::get).toList();
      List<Integer> idList = sorted.stream().map(r -> (Integer) r[0]).toList();
      int max = idList.stream().mapToInt(Integer::intValue).max().orElse(0);
      nextId = Math.max(nextId, max + 1);
      if (table.equals("t")) {
        rows = sorted;
        contents = order.stream().map(expected::get).toList();
        ids = idList;
        idSet = new HashSet<>(idList);
      } else {
        srcIds = idList;
      }
    }

    List<List<String>> floeRows(String sql, String what) {
      try {
        return Canonical.rows(db.sql(sql));
      } catch (FloeException e) {
        failWith(what, sql, "Floe failed: " + e.sqlState() + " " + e.getMessage());
        return null;
      }
    }

    void failWith(Stmt s, String problem) {
      failWith("statement " + step + " (" + s.label() + ")", s.sql(), problem);
    }

    void failWith(String what, String sql, String problem) {
      fail(context(what, sql) + problem);
    }

    String context(String what, String sql) {
      return cfg.name() + ", seed " + seed + " (replay: -Dmutation.seed=" + seed + " -Dmutation.config=" + cfg.name()
          + "), " + what + "\n  SQL: " + sql + "\n  history:\n" + String.join("\n", history) + "\n  ";
    }

    // ---------------------------------------------------------------- choosing the next statement

    Stmt next() {
      if (cfg.maintain() && rnd.nextInt(100) < 15) {
        return maintenance();
      }
      if (rows.size() < 150) {
        return rnd.nextInt(4) == 0 ? insertValues() : insertSelect();
      }
      if (rows.size() > 3500) {
        return rnd.nextBoolean() ? delete(true) : deleteUsing();
      }
      int roll = rnd.nextInt(100);
      if (roll < 8) {
        return insertValues();
      } else if (roll < 15) {
        return insertSelect();
      } else if (roll < 31) {
        return withClause(update());
      } else if (roll < 38) {
        return updateFrom();
      } else if (roll < 49) {
        return withClause(delete(false));
      } else if (roll < 55) {
        return deleteUsing();
      } else if (roll < 70) {
        return withClause(merge());
      } else if (roll < 79) {
        return onConflict();
      } else if (roll < 81) {
        return truncate();
      } else if (roll < 90) {
        return mustFail();
      } else if (roll < 97) {
        return srcChange();
      } else {
        return evolvePartitioning();
      }
    }

    /** A maintenance statement: the rows stay, the model does nothing. */
    Stmt maintenance() {
      return switch (rnd.nextInt(6)) {
        case 0 -> new Stmt("vacuum-full", "VACUUM", "t", "VACUUM FULL t", "", null);
        case 1 -> new Stmt("vacuum", "VACUUM", "t", "VACUUM t", "", null);
        case 2 -> new Stmt("optimize", "ALTER", "t", "ALTER TABLE t EXECUTE optimize", "", null);
        case 3 -> new Stmt("expire", "ALTER", "t",
            "ALTER TABLE t EXECUTE expire_snapshots(retention_threshold => '" + (rnd.nextBoolean() ? "0s" : "1h") + "')",
            "", null);
        case 4 -> new Stmt("orphans", "ALTER", "t",
            "ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '0s', dry_run => false)", "", null);
        default -> new Stmt("optimize-small", "ALTER", "t",
            "ALTER TABLE t EXECUTE optimize(file_size_threshold => '2kB')", "", null);
      };
    }

    // ---------------------------------------------------------------- values

    /** The batch value of the statement being generated (the number it will run as). */
    String stamp() {
      return Integer.toString(step + 1);
    }

    static String and(String a, String b) {
      return a.isEmpty() ? b : b.isEmpty() ? a : a + " AND " + b;
    }

    static String where(String condition) {
      return condition.isEmpty() ? "" : " WHERE " + condition;
    }

    <T> T pick(List<T> list) {
      return list.get(rnd.nextInt(list.size()));
    }

    @SafeVarargs
    final <T> T oneOf(T... options) {
      return options[rnd.nextInt(options.length)];
    }

    String oneOf(List<Supplier<String>> options) {
      return options.get(rnd.nextInt(options.size())).get();
    }

    int existingId() {
      return ids.isEmpty() ? nextId + rnd.nextInt(10) : pick(ids);
    }

    int freshId() {
      int id = nextId + rnd.nextInt(3);
      nextId = id + 1;
      return id;
    }

    /** An id for a new row: fresh with a key; without one, sometimes an existing id (a duplicate). */
    int newRowId() {
      return !cfg.primaryKey() && !ids.isEmpty() && rnd.nextInt(4) == 0 ? existingId() : freshId();
    }

    static String text(String s) {
      return "'" + s.replace("'", "''") + "'";
    }

    String nameValue() {
      int r = rnd.nextInt(100);
      if (r < 12) {
        return "NULL";
      } else if (r < 18) {
        return text(oneOf("it's", "ünï", "", "N7", "n1 ", "Zed", "n12"));
      }
      return text("n" + rnd.nextInt(40));
    }

    String qtyValue() {
      return rnd.nextInt(100) < 12 ? "NULL" : Integer.toString(rnd.nextInt(1200) - 100);
    }

    BigDecimal price() {
      return BigDecimal.valueOf(rnd.nextInt(100_000), 2);
    }

    String priceValue() {
      int r = rnd.nextInt(100);
      if (r < 12) {
        return "NULL";
      } else if (r < 18) {
        return "'" + price().toPlainString() + "'";
      }
      return price().toPlainString();
    }

    LocalDate date() {
      return EPOCH.plusDays(rnd.nextInt(800));
    }

    String dateValue() {
      int r = rnd.nextInt(100);
      if (r < 12) {
        return "NULL";
      } else if (r < 18) {
        return "'" + date() + "'";
      }
      return "DATE '" + date() + "'";
    }

    String flagValue() {
      return rnd.nextInt(100) < 15 ? "NULL" : Boolean.toString(rnd.nextBoolean());
    }

    String grpValue() {
      return Integer.toString(rnd.nextInt(6));
    }

    String value(String column, int id) {
      return switch (column) {
        case "id" -> Integer.toString(id);
        case "batch" -> stamp();
        case "grp" -> grpValue();
        case "name" -> nameValue();
        case "qty" -> qtyValue();
        case "price" -> priceValue();
        case "d" -> dateValue();
        case "flag" -> flagValue();
        default -> throw new IllegalArgumentException(column);
      };
    }

    String valuesRow(int id) {
      List<String> v = new ArrayList<>();
      for (String c : COLUMNS) {
        v.add(value(c, id));
      }
      return "(" + String.join(", ", v) + ")";
    }

    /**
     * A VALUES row whose column types do not depend on the other rows (typed NULLs, DATE literals, prices
     * with a scale): for VALUES lists used as a source relation rather than as INSERT's rows.
     */
    String typedRow(int id) {
      return typedRow(id, 0);
    }

    String typedRow(int id, int batch) {
      String name = nameValue();
      String qty = qtyValue();
      String price = rnd.nextInt(8) == 0 ? "CAST(NULL AS numeric(10,2))" : price().toPlainString();
      String d = rnd.nextInt(8) == 0 ? "CAST(NULL AS date)" : "DATE '" + date() + "'";
      String flag = rnd.nextInt(8) == 0 ? "CAST(NULL AS boolean)" : Boolean.toString(rnd.nextBoolean());
      return "(" + id + ", " + grpValue() + ", " + (name.equals("NULL") ? "CAST(NULL AS text)" : name) + ", "
          + (qty.equals("NULL") ? "CAST(NULL AS bigint)" : qty) + ", " + price + ", " + d + ", " + flag + ", " + batch
          + ")";
    }

    String typedValues(List<Integer> rowIds) {
      List<String> r = new ArrayList<>();
      for (int id : rowIds) {
        r.add(typedRow(id));
      }
      return "(VALUES " + String.join(", ", r) + ") AS s(" + String.join(", ", COLUMNS) + ")";
    }

    /** Distinct ids, mostly existing ones, some new. */
    List<Integer> someIds(int n, int freshPercent) {
      Set<Integer> out = new LinkedHashSet<>();
      for (int i = 0; i < n; i++) {
        out.add(ids.isEmpty() || rnd.nextInt(100) < freshPercent ? freshId() : existingId());
      }
      return new ArrayList<>(out);
    }

    /** Ids for IN lists: mostly existing ones, some that are not there. */
    List<String> idList(int n) {
      List<String> out = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        out.add(Integer.toString(rnd.nextInt(10) == 0 ? nextId + rnd.nextInt(100) : existingId()));
      }
      return out;
    }

    /** A SELECT of generated rows for the ids of {@code range(from, to, step)}. */
    String bulkSelect(int from, int to, int stride) {
      int a = 1 + rnd.nextInt(11);
      int b = 3 + rnd.nextInt(9);
      int c = 1 + rnd.nextInt(37);
      return "SELECT i, (i * " + a + ") % 6, CASE WHEN i % " + b + " = 0 THEN NULL ELSE 'n' || ((i * " + c
          + ") % 40) END, CASE WHEN i % 7 = 0 THEN NULL ELSE (i * " + a + ") % 1000 - 100 END, CASE WHEN i % 9 = 0 "
          + "THEN NULL ELSE ((i * " + c + ") % 100000) * 0.01 END, CASE WHEN i % 13 = 0 THEN NULL ELSE DATE "
          + "'2023-01-01' + CAST((i * " + b + ") % 800 AS integer) END, CASE WHEN i % 5 = 0 THEN NULL ELSE (i * "
          + c + ") % 3 = 0 END, " + stamp() + " FROM range(" + from + ", " + to + (stride == 1 ? "" : ", " + stride)
          + ") AS r(i)";
    }

    // ---------------------------------------------------------------- predicates

    /**
     * A random WHERE condition over the columns of t (or src, which has the same columns), qualified with
     * {@code q}: "" (then no correlated subqueries), "t." or an alias.
     */
    String pred(String q) {
      return pred(q, 0);
    }

    String pred(String q, int depth) {
      int r = rnd.nextInt(depth >= 2 ? 80 : 100);
      if (r < 80) {
        return atom(q, depth);
      } else if (r < 88) {
        return pred(q, depth + 1) + " AND " + pred(q, depth + 1);
      } else if (r < 95) {
        return "(" + pred(q, depth + 1) + " OR " + pred(q, depth + 1) + ")";
      }
      return "NOT (" + pred(q, depth + 1) + ")";
    }

    String atom(String q, int depth) {
      Object[] row = rows.isEmpty() ? null : pick(rows);
      switch (rnd.nextInt(depth >= 2 ? 12 : 13)) {
        case 0: {
          int a = existingId();
          return q + "id BETWEEN " + a + " AND " + (a + oneOf(0, 3, 40, 300, 1500));
        }
        case 1:
          return q + "id " + oneOf("<", "<=", ">", ">=") + " " + existingId();
        case 2:
          return switch (rnd.nextInt(5)) {
            case 0 -> q + "id NOT IN (" + String.join(", ", idList(1 + rnd.nextInt(8))) + ")";
            case 1 -> q + "qty " + oneOf("IN", "NOT IN") + " (" + qtyValue() + ", " + qtyValue() + ")"; // maybe NULL
            case 2 -> q + "name " + oneOf("IN", "NOT IN") + " (" + nameValue() + ", " + nameValue() + ")";
            default -> q + "id IN (" + String.join(", ", idList(1 + rnd.nextInt(8))) + ")";
          };
        case 3:
          return q + "id % " + (2 + rnd.nextInt(9)) + " = " + rnd.nextInt(2);
        case 4:
          return oneOf(q + "grp = " + grpValue(), q + "grp IN (" + grpValue() + ", " + grpValue() + ")",
              q + "grp <> " + grpValue());
        case 5: {
          String name = row != null && row[2] != null && rnd.nextBoolean() ? text((String) row[2]) : nameValue();
          return name.equals("NULL") ? q + "name IS NULL" : oneOf(q + "name = " + name, q + "name IS NOT NULL",
              q + "name LIKE 'n1%'", q + "name > " + name, q + "name IS NULL");
        }
        case 6: {
          long k = row != null && row[3] != null ? (Long) row[3] : rnd.nextInt(1000);
          return oneOf(q + "qty > " + k, q + "qty IS NULL", q + "qty BETWEEN " + k + " AND " + (k + rnd.nextInt(300)),
              q + "qty <= " + k);
        }
        case 7: {
          String p = price().toPlainString();
          return oneOf(q + "price >= " + p, q + "price IS NULL", q + "price < " + p);
        }
        case 8: {
          String d = "DATE '" + date() + "'";
          return oneOf(q + "d < " + d, q + "d IS NULL", q + "d >= " + d, q + "d BETWEEN " + d + " AND DATE '"
              + date() + "'");
        }
        case 9:
          return oneOf(q + "flag", "NOT " + q + "flag", q + "flag IS NULL", q + "flag IS NOT TRUE",
              q + "flag IS DISTINCT FROM " + flagValue(), q + "qty IS NOT DISTINCT FROM " + qtyValue());
        case 10:
          return q + "id % 5 = " + rnd.nextInt(5);
        case 11:
          return nearValue(q, row);
        default: {
          List<String> o = new ArrayList<>(List.of(
              q + "id IN (SELECT id FROM src WHERE " + pred("", 2) + ")",
              q + "qty > (SELECT avg(qty) FROM t)",
              q + "id IN (SELECT max(id) FROM t GROUP BY grp)"));
          if (!q.isEmpty()) {
            o.add("EXISTS (SELECT 1 FROM src AS z WHERE z.id = " + q + "id AND z.grp = " + q + "grp)");
            o.add("NOT EXISTS (SELECT 1 FROM src AS z WHERE z.id = " + q + "id)");
          }
          return pick(o);
        }
      }
    }

    /**
     * A comparison with a literal of another type just beside a value the table holds (so at the edge of
     * some file's min/max): numerics with more scale, integers against decimals, dates against timestamps.
     * Floe converts such literals for Iceberg's pruning of the target scan.
     */
    String nearValue(String q, Object[] row) {
      Object[] r = row != null ? row : new Object[8];
      int id = r[0] != null ? (Integer) r[0] : existingId();
      long qty = r[3] != null ? (Long) r[3] : rnd.nextInt(1000);
      BigDecimal price = r[4] != null ? (BigDecimal) r[4] : price();
      LocalDate d = r[5] != null ? (LocalDate) r[5] : date();
      BigDecimal half = new BigDecimal("0.5");
      BigDecimal tiny = new BigDecimal("0.005");
      return switch (rnd.nextInt(12)) {
        case 0 -> q + "price " + oneOf(">", ">=") + " " + price.subtract(tiny).toPlainString();
        case 1 -> q + "price " + oneOf("<", "<=") + " " + price.add(tiny).toPlainString();
        case 2 -> q + "price " + oneOf("=", "<>", "<=", ">") + " " + price.setScale(3).toPlainString();
        case 3 -> q + "qty " + oneOf("<", "<=") + " " + BigDecimal.valueOf(qty).add(half).toPlainString();
        case 4 -> q + "qty " + oneOf(">", ">=") + " " + BigDecimal.valueOf(qty).subtract(half).toPlainString();
        case 5 -> q + "qty " + oneOf("=", "<>") + " " + qty + ".0";
        case 6 -> q + "d " + oneOf("<", "<=", ">", ">=") + " TIMESTAMP '" + d + " 12:00:00'";
        case 7 -> q + "d " + oneOf("=", ">=", "<") + " TIMESTAMP '" + d + " 00:00:00'";
        case 8 -> q + "d " + oneOf("<", ">") + " '" + d + "'";
        case 9 -> q + "id " + oneOf("<=", ">", "<", ">=") + " " + id + ".5";
        case 10 -> q + "id IN (" + id + ".0, " + existingId() + ".5)";
        default -> q + "grp " + oneOf("<", ">") + " " + rnd.nextInt(6) + ".5";
      };
    }

    // ---------------------------------------------------------------- SET expressions

    /**
     * A new value for {@code column}: over the target's columns qualified with {@code q}, and a source's
     * columns qualified with {@code s} when not null.
     */
    String setExpr(String column, String q, String s) {
      List<Supplier<String>> o = new ArrayList<>();
      switch (column) {
        case "grp" -> {
          o.add(this::grpValue);
          o.add(() -> "(" + q + "grp + 1) % 6");
          o.add(() -> "CASE WHEN " + q + "grp = 0 THEN 5 ELSE " + q + "grp - 1 END");
        }
        case "name" -> {
          o.add(this::nameValue);
          o.add(() -> "'u' || " + q + "id");
          o.add(() -> "upper(" + q + "name)");
          o.add(() -> q + "name || 'x'");
          o.add(() -> "coalesce(" + q + "name, 'was null')");
          o.add(() -> "CASE WHEN " + q + "flag THEN NULL ELSE lower(" + q + "name) END");
        }
        case "qty" -> {
          o.add(() -> q + "qty + " + (rnd.nextInt(200) - 50));
          o.add(() -> q + "qty * -1");
          o.add(this::qtyValue);
          o.add(() -> "CASE WHEN " + q + "qty > 100 THEN " + q + "qty - 100 ELSE " + q + "qty + 1 END");
          o.add(() -> q + "id * 3");
          o.add(() -> "length(" + q + "name)");
        }
        case "price" -> {
          o.add(() -> q + "price + 1.25");
          o.add(() -> q + "price - 0.5");
          o.add(this::priceValue);
          o.add(() -> "-" + q + "price");
          o.add(() -> "CASE WHEN " + q + "price > 500 THEN NULL ELSE " + q + "price + 10 END");
        }
        case "d" -> {
          o.add(() -> q + "d + " + (1 + rnd.nextInt(30)));
          o.add(() -> q + "d - " + (1 + rnd.nextInt(30)));
          o.add(this::dateValue);
          o.add(() -> "CASE WHEN " + q + "flag THEN " + q + "d + 7 ELSE " + q + "d END");
        }
        case "flag" -> {
          o.add(() -> "NOT " + q + "flag");
          o.add(this::flagValue);
          o.add(() -> q + "qty > 50");
          o.add(() -> q + "flag IS NULL");
          o.add(() -> q + "qty IS DISTINCT FROM " + qtyValue());
          o.add(() -> q + "name IS NOT DISTINCT FROM " + nameValue());
        }
        default -> throw new IllegalArgumentException(column);
      }
      if (!q.isEmpty() && rnd.nextInt(6) == 0) {
        // A correlated scalar subquery: at most one row (src ids are unique), or an aggregate.
        switch (column) {
          case "name" -> o.add(() -> "(SELECT z.name FROM src AS z WHERE z.id = " + q + "id)");
          case "qty" -> o.add(() -> "(SELECT max(z.qty) FROM src AS z WHERE z.grp = " + q + "grp)");
          case "d" -> o.add(() -> "coalesce((SELECT z.d FROM src AS z WHERE z.id = " + q + "id), " + q + "d)");
          case "flag" -> o.add(() -> "EXISTS (SELECT 1 FROM src AS z WHERE z.id = " + q + "id)");
          default -> { }
        }
      }
      if (s != null) {
        switch (column) {
          case "grp" -> o.add(() -> s + "grp");
          case "name" -> {
            o.add(() -> s + "name");
            o.add(() -> s + "name || '/' || " + q + "name");
          }
          case "qty" -> {
            o.add(() -> s + "qty");
            o.add(() -> q + "qty + " + s + "qty");
            o.add(() -> "coalesce(" + s + "qty, " + q + "qty)");
          }
          case "price" -> o.add(() -> "coalesce(" + s + "price, " + q + "price)");
          case "d" -> o.add(() -> s + "d");
          case "flag" -> {
            o.add(() -> s + "flag");
            o.add(() -> q + "grp IS DISTINCT FROM " + s + "grp");
          }
          default -> { }
        }
        // Source values are more interesting than constants: weight them up.
        int own = o.size();
        for (int i = 0; i < own; i++) {
          if (rnd.nextBoolean()) {
            o.add(o.get(rnd.nextInt(own)));
          }
        }
      }
      return oneOf(o);
    }

    /** A new key for the rows an UPDATE touches, or null if none is safe (see {@link #keyUpdate}). */
    String keyExpr(String q) {
      if (!cfg.primaryKey()) {
        return oneOf(q + "id + " + (rnd.nextInt(11) - 5), "-" + q + "id", q + "id + " + nextId, q + "id * 2");
      }
      return keyUpdate(q);
    }

    /**
     * With a primary key, only key changes whose new keys cannot collide with any existing key, whatever
     * rows they touch: PostgreSQL checks uniqueness row by row during an UPDATE (so moving keys onto keys the
     * same statement moves away fails there, depending on the order), Floe and DuckDB at the end.
     */
    String keyUpdate(String q) {
      if (ids.isEmpty()) {
        return null;
      }
      int min = Collections.min(ids);
      int max = Collections.max(ids);
      if (rnd.nextBoolean() && ids.stream().noneMatch(i -> idSet.contains(-i))) {
        return "-" + q + "id";
      }
      int offset = nextId - min + rnd.nextInt(5);
      nextId = max + offset + 1;
      return q + "id + " + offset;
    }

    /** 1..3 distinct assignments; the key only where {@link #keyExpr} allows; none to {@code except}. */
    String assignments(String q, String s, boolean allowKey, String... except) {
      List<String> cols = new ArrayList<>(VALUE_COLUMNS);
      cols.removeAll(List.of(except));
      Collections.shuffle(cols, new java.util.Random(rnd.nextLong()));
      int n = 1 + rnd.nextInt(3);
      List<String> out = new ArrayList<>();
      if (allowKey && rnd.nextInt(8) == 0) {
        String key = keyExpr(q);
        if (key != null) {
          out.add("id = " + key);
        }
      }
      for (String c : cols.subList(0, n)) {
        // grp is NOT NULL: its DEFAULT (NULL) is for the statements that must fail.
        out.add(!c.equals("grp") && rnd.nextInt(25) == 0 ? c + " = DEFAULT" : c + " = " + (setExpr(c, q, s)));
      }
      out.add("batch = " + stamp());
      Collections.shuffle(out, new java.util.Random(rnd.nextLong()));
      return String.join(", ", out);
    }

    // ---------------------------------------------------------------- statements

    Stmt insertValues() {
      int n = 1 + rnd.nextInt(rnd.nextBoolean() ? 5 : 40);
      List<String> cols = new ArrayList<>(COLUMNS);
      boolean subset = rnd.nextInt(4) == 0;
      if (subset) {
        cols = new ArrayList<>(List.of("id", "grp", "batch"));
        for (String c : VALUE_COLUMNS.subList(1, VALUE_COLUMNS.size())) {
          if (rnd.nextBoolean()) {
            cols.add(c);
          }
        }
        Collections.shuffle(cols, new java.util.Random(rnd.nextLong()));
      }
      List<String> values = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int id = newRowId();
        List<String> v = new ArrayList<>();
        for (String c : cols) {
          v.add(value(c, id));
        }
        values.add("(" + String.join(", ", v) + ")");
      }
      String sql = "INSERT INTO t " + (subset ? "(" + String.join(", ", cols) + ") " : "") + "VALUES "
          + String.join(", ", values) + returning();
      return Stmt.same("insert-values", "INSERT", "t", sql);
    }

    Stmt insertSelect() {
      int roll = rnd.nextInt(10);
      if (rows.size() < 150 || roll < 4) {
        int n = oneOf(50, 200, 600, 1500);
        int from = nextId + rnd.nextInt(3);
        nextId = from + n;
        return Stmt.same("insert-select", "INSERT", "t", "INSERT INTO t " + bulkSelect(from, from + n, 1));
      }
      if (roll < 8) {
        // A copy of some rows, changed; with a key, onto ids above every existing id.
        String off;
        if (cfg.primaryKey()) {
          int min = Collections.min(ids);
          int offset = nextId - min + rnd.nextInt(5);
          nextId = Collections.max(ids) + offset + 1;
          off = Integer.toString(offset);
        } else {
          off = Integer.toString(oneOf(0, 1, 1000, nextId));
        }
        return Stmt.same("insert-select", "INSERT", "t", "INSERT INTO t SELECT id + " + off
            + ", grp, name || '*', qty + 1, price, d + 1, NOT flag, " + stamp() + " FROM t WHERE " + pred("")
            + returning());
      }
      String off = "0";
      if (cfg.primaryKey()) {
        int offset = nextId;
        nextId += srcIds.isEmpty() ? 1 : Collections.max(srcIds) + 1;
        off = Integer.toString(offset);
      }
      return Stmt.same("insert-select", "INSERT", "t", "INSERT INTO t (" + String.join(", ", COLUMNS)
          + ") SELECT id + " + off + ", grp, name, qty, price, d, flag, " + stamp() + " FROM src WHERE " + pred("")
          + (rnd.nextInt(3) == 0 ? " ORDER BY id " + oneOf("ASC", "DESC") + " LIMIT " + (1 + rnd.nextInt(60)) : ""));
    }

    String returning() {
      return rnd.nextInt(10) == 0 ? oneOf(" RETURNING *", " RETURNING id, qty", " RETURNING name, id + 1 AS next") : "";
    }

    Stmt update() {
      boolean alias = rnd.nextInt(3) == 0;
      String q = alias ? "x." : rnd.nextBoolean() ? "t." : "";
      String where = where(rnd.nextInt(25) == 0 ? "" : pred(q));
      String sql = "UPDATE t" + (alias ? " AS x" : "") + " SET " + assignments(q, null, true) + where + returning();
      return Stmt.same("update", "UPDATE", "t", sql);
    }

    Stmt updateFrom() {
      boolean alias = rnd.nextBoolean();
      String q = alias ? "x." : "t.";
      String target = "UPDATE t" + (alias ? " AS x" : "");
      String from;
      String join;
      switch (rnd.nextInt(4)) {
        case 0 -> {
          from = "src AS s";
          join = q + "id = s.id";
        }
        case 1 -> {
          from = typedValues(someIds(1 + rnd.nextInt(12), 15));
          join = q + "id = s.id";
        }
        case 2 -> {
          // One source row (ids are unique in src) joined to a whole group.
          from = "src AS s";
          join = q + "grp = s.grp AND s.id = " + (srcIds.isEmpty() ? 1 : pick(srcIds));
        }
        default -> {
          // One row per group.
          from = "(SELECT grp, max(id) AS id, min(name) AS name, sum(qty) AS qty, max(price) AS price, min(d) AS d, "
              + "bool_or(flag) AS flag FROM src GROUP BY grp) AS s";
          join = q + "grp = s.grp";
        }
      }
      String where = " WHERE " + join + (rnd.nextBoolean() ? " AND " + pred(q) : "")
          + (rnd.nextInt(3) == 0 ? " AND s.qty > " + (rnd.nextInt(800) - 100) : "");
      String sql = target + " SET " + assignments(q, "s.", true) + " FROM " + from + where + returning();
      return Stmt.same("update-from", "UPDATE", "t", sql);
    }

    Stmt delete(boolean large) {
      boolean alias = rnd.nextInt(3) == 0;
      String q = alias ? "x." : rnd.nextBoolean() ? "t." : "";
      String where;
      if (large) {
        where = oneOf(q + "id % 2 = " + rnd.nextInt(2), q + "grp IN (" + grpValue() + ", " + grpValue() + ")",
            q + "id < " + existingId(), "(" + q + "qty > 300 OR " + q + "name IS NULL)");
      } else {
        where = rnd.nextInt(40) == 0 ? "" : pred(q);
      }
      String sql = "DELETE FROM t" + (alias ? " AS x" : "") + where(where) + returning();
      return Stmt.same("delete", "DELETE", "t", sql);
    }

    Stmt deleteUsing() {
      boolean alias = rnd.nextBoolean();
      String q = alias ? "x." : "t.";
      String sql = "DELETE FROM t" + (alias ? " AS x" : "") + " USING ";
      switch (rnd.nextInt(3)) {
        case 0 -> sql += "src AS s WHERE " + q + "id = s.id" + (rnd.nextBoolean() ? " AND " + pred(q) : "")
            + (rnd.nextBoolean() ? " AND s.flag" : "");
        case 1 -> {
          // Several source rows per target row: still deleted once.
          int a = srcIds.isEmpty() ? 1 : pick(srcIds);
          sql += "src AS s WHERE " + q + "grp = s.grp AND s.id BETWEEN " + a + " AND " + (a + rnd.nextInt(40))
              + " AND " + q + "qty > s.qty";
        }
        default -> sql += "(VALUES (" + String.join("), (", idList(1 + rnd.nextInt(10))) + ")) AS v(id) WHERE " + q
            + "id = v.id";
      }
      return Stmt.same("delete-using", "DELETE", "t", sql + returning());
    }

    Stmt merge() {
      boolean alias = rnd.nextBoolean();
      String q = alias ? "x." : "t.";
      String source;
      int roll = rnd.nextInt(10);
      // A target row matched by two source rows of which only one (s.batch 1, not 2) may update or delete it.
      boolean duplicates = !ids.isEmpty() && rnd.nextInt(5) == 0;
      if (duplicates) {
        List<String> r = new ArrayList<>();
        for (int id : someIds(rnd.nextInt(6), 30)) {
          r.add(typedRow(id));
        }
        int twice = existingId();
        r.add(rnd.nextInt(r.size() + 1), typedRow(twice, 1));
        r.add(rnd.nextInt(r.size() + 1), typedRow(twice, 2));
        source = "(VALUES " + String.join(", ", r) + ") AS s(" + String.join(", ", COLUMNS) + ")";
      } else if (roll < 4) {
        source = "(SELECT * FROM src WHERE " + pred("") + ") AS s";
      } else if (roll < 7) {
        List<Integer> sourceIds = someIds(1 + rnd.nextInt(20), 30);
        if (rnd.nextInt(6) == 0) {
          // A new id twice: both rows are inserted (without a key), or 23505 (with one).
          int id = freshId();
          sourceIds.add(rnd.nextInt(sourceIds.size() + 1), id);
          sourceIds.add(rnd.nextInt(sourceIds.size() + 1), id);
        }
        source = typedValues(sourceIds);
      } else {
        // The target itself, shifted: some rows match themselves or their neighbours, some match nothing.
        int shift = oneOf(0, 0, 1, -3, 500);
        source = cfg.primaryKey()
            ? "(SELECT id + " + shift + " AS id, grp, name, qty, price, d, flag FROM t WHERE " + pred("") + ") AS s"
            : "(SELECT id + " + shift + " AS id, min(grp) AS grp, min(name) AS name, max(qty) AS qty, max(price) "
                + "AS price, max(d) AS d, bool_and(flag) AS flag FROM t WHERE " + pred("") + " GROUP BY id) AS s";
      }
      String on = q + "id = s.id" + (rnd.nextInt(6) == 0 ? " AND s.grp <> " + grpValue() : "")
          + (rnd.nextInt(8) == 0 ? " AND " + q + "grp < 4" : "")
          + (rnd.nextInt(12) == 0 ? " AND " + ("CASE WHEN s.qty IS NULL THEN true ELSE s.qty >= 0 END") : "");
      List<String> clauses = new ArrayList<>();
      int matched = duplicates ? 1 + rnd.nextInt(3) : rnd.nextInt(4);
      for (int i = 0; i < matched; i++) {
        String cond = i < matched - 1 || rnd.nextBoolean() ? mergeCondition(q) : "";
        String action = switch (rnd.nextInt(5)) {
          case 0, 1 -> "UPDATE SET " + assignments(q, "s.", true);
          case 2, 3 -> "DELETE";
          default -> "DO NOTHING";
        };
        if (duplicates && !action.equals("DO NOTHING")) {
          cond = cond.isEmpty() ? "s.batch <> 2" : "s.batch <> 2 AND (" + cond + ")";
        }
        cond = cond.isEmpty() ? "" : " AND " + cond;
        clauses.add("WHEN MATCHED" + cond + " THEN " + action);
      }
      int notMatched = matched == 0 ? 1 + rnd.nextInt(2) : rnd.nextInt(3);
      for (int i = 0; i < notMatched; i++) {
        String cond = i < notMatched - 1 || rnd.nextInt(3) == 0 ? " AND " + sourceCondition() : "";
        String action = rnd.nextInt(5) == 0 ? "DO NOTHING" : mergeInsert();
        clauses.add("WHEN NOT MATCHED" + cond + " THEN " + action);
      }
      String sql = "MERGE INTO t" + (alias ? " AS x" : "") + " USING " + source + " ON " + on + " "
          + String.join(" ", clauses);
      return Stmt.same("merge", "MERGE", "t", sql);
    }

    String sourceCondition() {
      return oneOf("s.qty > " + (rnd.nextInt(800) - 100), "s.name IS NOT NULL", "s.flag", "s.grp IN (1, 2, 3)",
          "s.id % 2 = 0", "s.d < DATE '" + date() + "'");
    }

    String mergeCondition(String q) {
      return rnd.nextBoolean() ? sourceCondition() : (oneOf(q + "qty < s.qty", q + "grp = s.grp",
          q + "name IS NULL", pred(q, 2), "(" + q + "flag OR s.flag)", "CASE WHEN " + q + "qty > 100 THEN s.flag ELSE "
          + q + "flag END"));
    }

    String mergeInsert() {
      if (rnd.nextInt(4) == 0) {
        return "INSERT VALUES (s.id, s.grp, s.name, s.qty, s.price, s.d, s.flag, " + stamp() + ")";
      }
      List<String> cols = new ArrayList<>(List.of("id", "grp", "batch"));
      List<String> vals = new ArrayList<>(List.of("s.id", oneOf("s.grp", "(s.grp + 1) % 6", "3"), stamp()));
      for (String c : VALUE_COLUMNS.subList(1, VALUE_COLUMNS.size())) {
        if (rnd.nextInt(3) > 0) {
          cols.add(c);
          vals.add(switch (c) {
            case "name" -> oneOf("s.name", "'new ' || s.id", "NULL");
            case "qty" -> oneOf("s.qty", "s.qty + 1", "7");
            case "price" -> oneOf("s.price", "1.50", "s.price + 1");
            case "d" -> oneOf("s.d", "DATE '2025-05-05'");
            default -> oneOf("s.flag", "NOT s.flag", "true");
          });
        }
      }
      return "INSERT (" + String.join(", ", cols) + ") VALUES (" + String.join(", ", vals) + ")";
    }

    Stmt onConflict() {
      if (!cfg.primaryKey()) {
        // Without a key nothing conflicts: PostgreSQL inserts every row (DuckDB wants a key, so the model
        // runs the plain INSERT).
        String rowsSql = rnd.nextBoolean() ? "VALUES " + valuesRow(newRowId()) + ", " + valuesRow(newRowId())
            : srcRows();
        String plain = "INSERT INTO t " + rowsSql;
        return new Stmt("on-conflict", "INSERT", "t", plain + " ON CONFLICT DO NOTHING", plain, null);
      }
      boolean alias = rnd.nextBoolean();
      String q = alias ? "x." : "t.";
      boolean doNothing = rnd.nextInt(3) == 0;
      String rowsSql;
      if (rnd.nextInt(3) == 0) {
        rowsSql = srcRows();
      } else {
        List<Integer> keys = someIds(1 + rnd.nextInt(15), 40);
        if (doNothing && !keys.isEmpty() && rnd.nextBoolean()) {
          keys.add(pick(keys)); // a repeat within the statement is skipped like an existing key
        }
        List<String> r = new ArrayList<>();
        for (int k : keys) {
          r.add(valuesRow(k));
        }
        rowsSql = "VALUES " + String.join(", ", r);
      }
      String action;
      if (doNothing) {
        action = "ON CONFLICT" + (rnd.nextBoolean() ? " (id)" : "") + " DO NOTHING";
      } else {
        List<String> set = new ArrayList<>();
        for (String c : List.of("name", "qty", "price", "d", "flag", "grp")) {
          if (rnd.nextInt(3) == 0 || set.isEmpty() && c.equals("grp")) {
            set.add(c + " = " + switch (c) {
              case "name" -> oneOf("EXCLUDED.name", q + "name || EXCLUDED.name",
                  "coalesce(EXCLUDED.name, " + q + "name)");
              case "qty" -> oneOf("EXCLUDED.qty", q + "qty + EXCLUDED.qty", q + "qty + 1");
              case "price" -> oneOf("EXCLUDED.price", "coalesce(EXCLUDED.price, " + q + "price)");
              case "d" -> oneOf("EXCLUDED.d", q + "d + 1");
              case "flag" -> oneOf("EXCLUDED.flag", "NOT " + q + "flag");
              default -> oneOf("EXCLUDED.grp", "(" + q + "grp + 1) % 6");
            });
          }
        }
        set.add("batch = EXCLUDED.batch");
        String where = where(rnd.nextInt(3) == 0 ? oneOf(q + "grp <> " + grpValue(), "EXCLUDED.qty > " + q + "qty",
            q + "name IS NOT NULL") : "");
        action = "ON CONFLICT (id) DO UPDATE SET " + String.join(", ", set) + where;
      }
      String sql = "INSERT INTO t" + (alias ? " AS x" : "") + " " + rowsSql + " " + action;
      return Stmt.same("on-conflict", "INSERT", "t", sql);
    }

    /** Rows of src to insert into t, stamped with this statement's batch. */
    String srcRows() {
      return "SELECT id, grp, name, qty, price, d, flag, " + stamp() + " FROM src WHERE " + pred("");
    }

    /** A new partition spec for new data: later statements change rows in files of older specs. */
    Stmt evolvePartitioning() {
      int buckets = 2 + rnd.nextInt(3);
      String spec = oneOf("", "'grp'", "'bucket(id, " + buckets + ")'", "'truncate(name, " + (1 + rnd.nextInt(3)) + ")'", "'month(d)'", "'bucket(id, " + buckets + ")', 'grp'");
      return new Stmt("partitioning", "ALTER", "t", "ALTER TABLE t SET (partitioning = ARRAY[" + spec + "])", "", null);
    }

    /** Sometimes a WITH clause before the statement. */
    Stmt withClause(Stmt s) {
      if (rnd.nextInt(5) > 0 || s.sql().contains(" RETURNING ")) {
        return s;
      }
      String sql = "WITH chosen AS (SELECT id FROM src WHERE " + pred("") + ") " + s.sql();
      return Stmt.same(s.label() + "-with", s.verb(), s.table(), sql);
    }

    Stmt truncate() {
      return Stmt.same("truncate", "TRUNCATE", "t", oneOf("TRUNCATE t", "TRUNCATE TABLE t"));
    }

    /** A change to src, the source of the joins (its ids stay unique). */
    Stmt srcChange() {
      int r = rnd.nextInt(3);
      if (r == 0 && srcIds.size() > 40) {
        return Stmt.same("src", "DELETE", "src", "DELETE FROM src WHERE " + pred(""));
      } else if (r == 1 && !srcIds.isEmpty()) {
        return Stmt.same("src", "UPDATE", "src", "UPDATE src SET " + assignments("", null, false) + " WHERE "
            + pred(""));
      }
      int from = 1 + rnd.nextInt(Math.max(1, nextId));
      int stride = 1 + rnd.nextInt(9);
      return Stmt.same("src", "INSERT", "src", "INSERT INTO src " + bulkSelect(from, from + stride * (20
          + rnd.nextInt(150)), stride) + " WHERE i NOT IN (SELECT id FROM src)");
    }

    // ---------------------------------------------------------------- statements that must fail

    Stmt mustFail() {
      List<Supplier<Stmt>> o = new ArrayList<>();
      // NULL into NOT NULL columns.
      o.add(() -> Stmt.failing("fail-not-null", "INSERT", "INSERT INTO t VALUES " + valuesRow(freshId()) + ", "
          + valuesRow(freshId()).replaceFirst(", \\d+, ", ", NULL, "), "23502"));
      o.add(() -> Stmt.failing("fail-not-null", "INSERT", "INSERT INTO t (id, name) VALUES (" + freshId() + ", 'x')",
          "23502"));
      o.add(() -> Stmt.failing("fail-not-null", "INSERT", "INSERT INTO t VALUES " + valuesRow(freshId())
          .replaceFirst("\\(\\d+,", "(NULL,"), "23502"));
      o.add(() -> Stmt.failing("fail-not-null", "MERGE", "MERGE INTO t USING (VALUES (" + freshId() + ", 'm')) "
          + "AS s(id, name) ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, s.name)", "23502"));
      if (!ids.isEmpty()) {
        o.add(() -> Stmt.failing("fail-not-null", "UPDATE", "UPDATE t SET grp = NULL WHERE id = " + existingId()
            + " OR " + pred(""), "23502"));
        o.add(() -> Stmt.failing("fail-not-null", "UPDATE", "UPDATE t SET " + assignments("", null, false, "grp")
            + ", grp = CASE WHEN id = " + existingId() + " THEN NULL ELSE grp END", "23502"));
        o.add(() -> Stmt.failing("fail-not-null", "MERGE", "MERGE INTO t USING (VALUES (" + existingId() + ")) "
            + "AS s(id) ON t.id = s.id WHEN MATCHED THEN UPDATE SET grp = NULL", "23502"));
        o.add(() -> Stmt.failing("fail-not-null", "INSERT", "INSERT INTO t SELECT id + " + nextId
            + ", NULL, name, qty, price, d, flag, batch FROM t WHERE id = " + existingId(), "23502"));
        // A target row matched by two source rows that both act on it.
        o.add(() -> {
          int id = existingId();
          String action = rnd.nextBoolean() ? "UPDATE SET qty = s.k" : "DELETE";
          return Stmt.failing("fail-merge-twice", "MERGE", "MERGE INTO t USING (VALUES (" + id + ", 1), (" + id
              + ", 2), (" + freshId() + ", 3)) AS s(id, k) ON t.id = s.id WHEN MATCHED THEN " + action
              + " WHEN NOT MATCHED THEN INSERT (id, grp) VALUES (s.id, s.k)", "21000");
        });
      }
      if (cfg.primaryKey()) {
        o.add(() -> Stmt.failing("fail-duplicate-key", "INSERT", "INSERT INTO t VALUES " + valuesRow(freshId()) + ", "
            + valuesRow(existingId()), "23505"));
        o.add(() -> {
          int id = freshId();
          return Stmt.failing("fail-duplicate-key", "INSERT", "INSERT INTO t VALUES " + valuesRow(id) + ", "
              + valuesRow(freshId()) + ", " + valuesRow(id), "23505");
        });
        o.add(() -> {
          int id = freshId();
          return Stmt.failing("fail-duplicate-key", "MERGE", "MERGE INTO t USING (VALUES (" + id + ", 1), (" + id
              + ", 2)) AS s(id, k) ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, grp) VALUES (s.id, s.k)", "23505");
        });
        if (ids.size() >= 2) {
          o.add(() -> {
            int a = existingId();
            int b = existingId();
            while (b == a) {
              b = pick(ids);
            }
            return rnd.nextBoolean()
                ? Stmt.failing("fail-duplicate-key", "UPDATE", "UPDATE t SET id = " + b + " WHERE id = " + a, "23505")
                : Stmt.failing("fail-duplicate-key", "MERGE", "MERGE INTO t USING (VALUES (" + a + ")) AS s(id) ON "
                    + "t.id = s.id WHEN MATCHED THEN UPDATE SET id = " + b, "23505");
          });
          o.add(() -> Stmt.failing("fail-duplicate-key", "INSERT", "INSERT INTO t SELECT * FROM t WHERE id = "
              + existingId(), "23505"));
        }
        // Two proposed rows with one key: PostgreSQL's 21000 (DuckDB takes one of them, so no model).
        o.add(() -> {
          int id = rnd.nextBoolean() ? existingId() : freshId();
          String sql = "INSERT INTO t VALUES " + valuesRow(id) + ", " + valuesRow(freshId()) + ", " + valuesRow(id)
              + " ON CONFLICT (id) DO UPDATE SET qty = EXCLUDED.qty";
          return new Stmt("fail-conflict-twice", "INSERT", "t", sql, null, "21000");
        });
      }
      return o.get(rnd.nextInt(o.size())).get();
    }
  }
}
