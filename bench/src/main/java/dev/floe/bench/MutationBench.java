package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The mutation benchmark: what Floe's row-level statements cost, beside DuckDB's native tables doing
 * the same statements in the same run. Three parts, each selectable with {@code --only}:
 *
 * <ol>
 *   <li><b>amplification</b> — DELETE 3 rows by key from a ~1 GB table in each write mode (merge-on-read
 *       v2 position deletes, merge-on-read v3 deletion vectors, copy-on-write): the bytes the commit adds,
 *       the files it touches, beside a whole-file rewrite of those files and the table's size;
 *   <li><b>latency</b> — a one-row UPDATE by key and a one-row INSERT (also into a table with a PRIMARY
 *       KEY), repeated: p50 / p99 / mean, Floe vs DuckDB in-memory and file-backed;
 *   <li><b>bulk</b> — an UPDATE of every row (and of every other row) of a 10M-row table in each write
 *       mode vs DuckDB's native UPDATE on a database file with the same rows; then Floe's UPDATE again
 *       in a child JVM with a small heap ({@code -Xmx512m}), since rows are meant to stream from DuckDB
 *       to Parquet without being collected in the JVM.
 * </ol>
 *
 * With the bulk UPDATE, the same UPDATEs by Spark local on fresh copies of the same Iceberg tables
 * ({@link SparkPeer}: a child JVM with the {@code bench-spark} module's classpath), with Floe/Spark ratios
 * and Floe's reading of Spark's result.
 *
 * <p>Floe is driven only through its embedded SQL API ({@code Floe.open}, {@code Database.sql}). Tables
 * too big to rebuild on every run are generated once under {@code bench/data/mutations/} by Floe's own
 * INSERT ... SELECT, kept as a pristine copy, and restored before each measured statement (see
 * {@link Pristine}).
 *
 * <p>Usage: {@code MutationBench [--quick] [--only amplification,latency,bulk] [--rows N] [--amp-rows N]
 * [--latency-rows N] [--iterations N] [--bulk-runs N] [--child-heap 512m] [--no-spark]
 * [--spark-classpath FILE] [--spark-heap 4g] [--data DIR] [--out FILE]}
 */
public final class MutationBench {
  static final String FLOE_COLUMNS = "id bigint NOT NULL, k integer, a bigint, b double precision, c varchar,"
      + " d date, e timestamp, v bigint";
  static final String DUCK_COLUMNS = "id BIGINT NOT NULL, k INTEGER, a BIGINT, b DOUBLE, c VARCHAR, d DATE,"
      + " e TIMESTAMP, v BIGINT";

  /** The same deterministic rows for every engine: 8 columns, ~38 bytes a row in zstd Parquet. */
  static String rows(long from, long to) {
    return "SELECT i, CAST(hash(i) % 1000 AS INTEGER), CAST(hash(i * 3) >> 1 AS BIGINT),"
        + " (hash(i * 5) % 1000000) / 7.0, md5(CAST(i AS VARCHAR)),"
        + " DATE '2020-01-01' + CAST(hash(i * 11) % 2000 AS INTEGER),"
        + " TIMESTAMP '2024-01-01 00:00:00' + to_seconds(CAST(i AS BIGINT)), i FROM range(" + from + ", " + to
        + ") AS r(i)";
  }

  /** One literal row with key {@code id}, for the one-row INSERTs. */
  static String valuesRow(long id) {
    return "(" + id + ", " + (id % 1000) + ", " + (id * 31) + ", " + (id % 977) / 7.0 + ", 'row " + id
        + "', DATE '2025-06-01', TIMESTAMP '2025-06-01 12:00:00', " + id + ")";
  }

  /** A write mode of a Floe table. */
  enum Mode {
    MOR_V2("merge-on-read v2 (position deletes)", 2, false),
    MOR_V3("merge-on-read v3 (deletion vectors)", 3, false),
    COW("copy-on-write", 2, true);

    final String label;
    final int formatVersion;
    final boolean copyOnWrite;

    Mode(String label, int formatVersion, boolean copyOnWrite) {
      this.label = label;
      this.formatVersion = formatVersion;
      this.copyOnWrite = copyOnWrite;
    }

    /** The pristine table this mode starts from: one per format version. */
    String table() {
      return "t" + formatVersion;
    }

    /** Makes the restored table write this way (copy-on-write is a table property). */
    void configure(Database db) {
      if (copyOnWrite) {
        exec(db, "ALTER TABLE " + table() + " SET ('write.delete.mode' = 'copy-on-write',"
            + " 'write.update.mode' = 'copy-on-write', 'write.merge.mode' = 'copy-on-write')");
      }
    }

    /**
     * Sets the three write-mode properties whatever the mode, for another engine: without them Floe writes
     * merge-on-read, but Iceberg's default, which Spark follows, is copy-on-write.
     */
    void configureForPeer(Database db) {
      String m = copyOnWrite ? "copy-on-write" : "merge-on-read";
      exec(db, "ALTER TABLE " + table() + " SET ('write.delete.mode' = '" + m + "', 'write.update.mode' = '" + m
          + "', 'write.merge.mode' = '" + m + "')");
    }
  }

  /**
   * An engine that reads and writes the same Iceberg tables, run on a restored copy of a Floe table: Spark local
   * ({@link SparkPeer}). It gets the warehouse directory (catalog {@code catalog.db}, SQLite, Iceberg's JDBC catalog
   * schema) after Floe has closed it, the table and the statement, and returns its timings and what it committed.
   */
  interface IcebergPeer {
    String name();

    /** Why this peer cannot run here, or null if it can. */
    String unavailable();

    /** Runs {@code sql} (naming the table as {@code {table}}) on {@code table} of {@code warehouse}. */
    PeerRun run(Path warehouse, String table, String sql) throws Exception;
  }

  /**
   * One statement by a peer: its wall time, the engine's start-up (SparkSession) and warm-up before it, the
   * child JVM's start to exit, the summary of the snapshot the statement committed, peak RSS (-1 if unknown).
   */
  record PeerRun(double statementSeconds, double startupSeconds, double warmUpSeconds, double jvmSeconds,
      String versions, Map<String, String> summary, long peakRssKb) {}

  /** The peer failed; {@code started} is whether it got as far as starting its engine. */
  static final class PeerFailure extends Exception {
    final boolean started;

    PeerFailure(String message, boolean started) {
      super(message);
      this.started = started;
    }
  }

  // ---------------------------------------------------------------- options

  static final class Options {
    boolean quick;
    Set<String> only = new LinkedHashSet<>(List.of("amplification", "latency", "bulk"));
    Long bulkRows;
    Long ampRows;
    Long latencyRows;
    Integer iterations;
    Integer jitWarmup;
    Integer bulkRuns;
    Long targetFileSize;
    String childHeap = "512m";
    boolean spark = true;
    Path sparkClasspath = Path.of("bench/target/spark-classpath.txt");
    String sparkHeap = "4g";
    Path data = Path.of("bench/data/mutations");
    Path out = Path.of("bench/RESULTS.md");

    long bulkRows() {
      return bulkRows != null ? bulkRows : quick ? 500_000L : 10_000_000L;
    }

    /** ~1 GB of Parquet with the 8 columns above. */
    long ampRows() {
      return ampRows != null ? ampRows : quick ? 2_000_000L : 27_000_000L;
    }

    long latencyRows() {
      return latencyRows != null ? latencyRows : quick ? 10_000L : 1_000_000L;
    }

    int iterations() {
      return iterations != null ? iterations : quick ? 20 : 200;
    }

    /** Runs of each bulk UPDATE (each on a fresh copy); the best is reported. */
    int bulkRuns() {
      return bulkRuns != null ? bulkRuns : quick ? 1 : 2;
    }

    int warmup() {
      return Math.max(3, iterations() / 10);
    }

    /**
     * Statements of each latency kind run on scratch tables before any is timed, so that the timed ones
     * meet a JVM whose JIT has settled, as a running server's has (HotSpot keeps compiling for the
     * first few thousand statements, on the same two cores).
     */
    int jitWarmup() {
      return jitWarmup != null ? jitWarmup : quick ? 50 : 1_000;
    }

    /** The quick run splits its small table into several files, so that the spread DELETE touches some. */
    Long targetFileSize() {
      return targetFileSize != null ? targetFileSize : quick ? Long.valueOf(32L << 20) : null;
    }
  }

  static Options parse(String[] args) {
    Options o = new Options();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> o.quick = true;
        case "--only" -> {
          o.only = new LinkedHashSet<>(Arrays.asList(args[++i].split(",")));
          for (String s : o.only) {
            if (!List.of("amplification", "latency", "bulk").contains(s)) {
              throw new IllegalArgumentException("--only takes amplification, latency, bulk; not " + s);
            }
          }
        }
        case "--rows" -> o.bulkRows = count(args[++i]);
        case "--amp-rows" -> o.ampRows = count(args[++i]);
        case "--latency-rows" -> o.latencyRows = count(args[++i]);
        case "--iterations" -> o.iterations = Integer.parseInt(args[++i]);
        case "--jit-warmup" -> o.jitWarmup = Integer.parseInt(args[++i]);
        case "--bulk-runs" -> o.bulkRuns = Integer.parseInt(args[++i]);
        case "--target-file-size" -> o.targetFileSize = count(args[++i]);
        case "--child-heap" -> o.childHeap = args[++i];
        case "--no-spark" -> o.spark = false;
        case "--spark-classpath" -> o.sparkClasspath = Path.of(args[++i]);
        case "--spark-heap" -> o.sparkHeap = args[++i];
        case "--data" -> o.data = Path.of(args[++i]);
        case "--out" -> o.out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    o.data = o.data.toAbsolutePath().normalize();
    return o;
  }

  private static long count(String s) {
    return Long.parseLong(s.replace("_", "").replace(",", ""));
  }

  // ---------------------------------------------------------------- main

  /** Problems seen in this run (wrong counts, failures), printed and written with the results. */
  static final List<String> PROBLEMS = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    Options o = parse(args);
    Files.createDirectories(o.data);
    warmUp(o);
    StringBuilder md = new StringBuilder();
    if (o.only.contains("amplification")) {
      md.append(amplification(o));
    }
    if (o.only.contains("latency")) {
      md.append(latency(o));
    }
    if (o.only.contains("bulk")) {
      IcebergPeer spark = o.spark ? new SparkPeer(o.sparkClasspath.toAbsolutePath(), o.sparkHeap,
          o.data.resolve("spark-scratch"), SPARK_WARM_UP_ROWS) : null;
      md.append(bulk(o, spark));
    } else {
      md.append(PEER_HEADING).append("Spark: not measured in this run (it runs with the `bulk` section)\n\n");
    }
    write(o, args, md.toString());
  }

  /**
   * Runs each kind of statement once in every mode on a small scratch table, so that no measured statement
   * is the first of its kind in this JVM (class loading, JIT).
   */
  static void warmUp(Options o) throws Exception {
    Path dir = o.data.resolve("warmup");
    deleteTree(dir);
    try (Database db = Floe.open(dir)) {
      for (Mode mode : Mode.values()) {
        createAndFill(db, mode.table(), mode.formatVersion, 50_000, null);
        mode.configure(db);
        update(db, "DELETE FROM " + mode.table() + " WHERE id IN (1, 2, 3)");
        update(db, "UPDATE " + mode.table() + " SET v = v + 1 WHERE id = 10");
        update(db, "UPDATE " + mode.table() + " SET v = v * 2 WHERE id % 2 = 0");
        update(db, "INSERT INTO " + mode.table() + " VALUES " + valuesRow(1_000_000));
        files(db, mode.table());
        lastSummary(db, mode.table());
        exec(db, "DROP TABLE " + mode.table());
      }
    }
    deleteTree(dir);
  }

  // ---------------------------------------------------------------- 1. write amplification

  /** A data or delete file of a table's current snapshot. */
  record FileEntry(int content, String path, String format, long records, long size, String referencedDataFile) {}

  static String amplification(Options o) throws Exception {
    long n = o.ampRows();
    Pristine amp = Pristine.of(o.data.resolve("amp-" + n + (o.targetFileSize() != null ? "-tfs" + o.targetFileSize()
        : "")), dir -> {
          try (Database db = Floe.open(dir)) {
            for (int version : new int[] {2, 3}) {
              createAndFill(db, "t" + version, version, n, o.targetFileSize());
            }
          }
        });
    Map<String, long[]> scenarios = new LinkedHashMap<>();
    scenarios.put("3 adjacent keys", new long[] {n / 3, n / 3 + 1, n / 3 + 2});
    scenarios.put("3 keys spread over the table", new long[] {7, n / 2, n - 7});

    StringBuilder md = new StringBuilder();
    List<FileEntry> base;
    amp.restore();
    try (Database db = Floe.open(amp.work())) {
      base = files(db, "t2");
    }
    List<FileEntry> baseData = base.stream().filter(f -> f.content() == 0).toList();
    long tableBytes = baseData.stream().mapToLong(FileEntry::size).sum();
    md.append("### Write amplification: DELETE 3 rows by key\n\n");
    md.append(String.format(Locale.ROOT, "- Table: %,d rows, 8 columns (`%s`), written by one Floe `INSERT ... SELECT"
        + " FROM range()` %s: **%d data files** (%s), %s in total. Format v2 and v3 tables are generated"
        + " alike; copy-on-write is the v2 table with `write.delete.mode` = `copy-on-write`. Each DELETE runs on a"
        + " fresh copy of the generated table.%n", n, FLOE_COLUMNS,
        o.targetFileSize() == null ? "with the default target file size (Iceberg's 512 MB)"
            : "with `write.target-file-size-bytes` = " + o.targetFileSize(),
        baseData.size(), baseData.stream().map(f -> mib(f.size())).collect(Collectors.joining(", ")),
        mib(tableBytes)));
    md.append("- *added on disk*: bytes of the files the commit added (distinct files; a Puffin file holds"
        + " several deletion vectors). *Iceberg added-files-size*: the snapshot summary's figure (for deletion"
        + " vectors Iceberg counts only the vectors' content bytes). *rewrite*: the size of the touched data"
        + " files, i.e. what rewriting them whole costs.\n\n");
    md.append("| mode | rows deleted | files touched | added on disk | Iceberg added-files-size | files added"
        + " | rewrite of touched files | added / rewrite | added / table | DELETE ms |\n");
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Map.Entry<String, long[]> sc : scenarios.entrySet()) {
      for (Mode mode : Mode.values()) {
        amp.restore();
        try (Database db = Floe.open(amp.work())) {
          mode.configure(db);
          String t = mode.table();
          List<FileEntry> before = files(db, t);
          String keys = Arrays.stream(sc.getValue()).mapToObj(Long::toString).collect(Collectors.joining(", "));
          String sql = "DELETE FROM " + t + " WHERE id IN (" + keys + ")";
          // Warms the fresh engine up (and checks the keys exist), so the DELETE is not its first statement.
          long present = scalarLong(db, "SELECT count(*) FROM " + t + " WHERE id IN (" + keys + ")");
          expect(present == 3, "before " + sql + " (" + mode.label + "): " + present + " of the 3 keys present");
          long t0 = System.nanoTime();
          long deleted = update(db, sql);
          double ms = (System.nanoTime() - t0) / 1e6;
          expect(deleted == 3, sql + " (" + mode.label + ") reported " + deleted + " rows, expected 3");
          List<FileEntry> after = files(db, t);
          Map<String, String> summary = lastSummary(db, t);
          long live = scalarLong(db, "SELECT count(*) FROM " + t);
          expect(live == n - 3, "after " + sql + " (" + mode.label + "): count(*) = " + live + ", expected " + (n - 3));

          Set<String> beforePaths = before.stream().map(FileEntry::path).collect(Collectors.toSet());
          Set<String> afterPaths = after.stream().map(FileEntry::path).collect(Collectors.toSet());
          Map<String, Long> added = new LinkedHashMap<>();
          for (FileEntry f : after) {
            if (!beforePaths.contains(f.path())) {
              added.put(f.path(), diskSize(f));
            }
          }
          Set<String> touched = new LinkedHashSet<>();
          before.stream().filter(f -> f.content() == 0 && !afterPaths.contains(f.path()))
              .forEach(f -> touched.add(f.path()));
          after.stream().filter(f -> f.content() != 0 && !beforePaths.contains(f.path())
              && f.referencedDataFile() != null).forEach(f -> touched.add(f.referencedDataFile()));
          long rewrite = before.stream().filter(f -> f.content() == 0 && touched.contains(f.path()))
              .mapToLong(FileEntry::size).sum();
          long addedBytes = added.values().stream().mapToLong(Long::longValue).sum();
          md.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %d | %s | %s | %s | %.0f |%n",
              mode.label, sc.getKey(), touched.size(), bytes(addedBytes),
              bytes(Long.parseLong(summary.getOrDefault("added-files-size", "0"))), added.size(), bytes(rewrite),
              ratio(addedBytes, rewrite), ratio(addedBytes, tableBytes), ms));
          System.err.printf(Locale.ROOT, "amplification %-36s %-30s touched %d, added %,d B, rewrite %,d B, %.0f ms%n",
              mode.label, sc.getKey(), touched.size(), addedBytes, rewrite, ms);
        }
      }
    }
    amp.discardWork();
    return md.append('\n').toString();
  }

  static void createAndFill(Database db, String table, int formatVersion, long n, Long targetFileSize) {
    String with = "format_version = " + formatVersion
        + (targetFileSize != null ? ", 'write.target-file-size-bytes' = '" + targetFileSize + "'" : "");
    exec(db, "CREATE TABLE " + table + " (" + FLOE_COLUMNS + ") WITH (" + with + ")");
    long t0 = System.nanoTime();
    long inserted = update(db, "INSERT INTO " + table + " " + rows(0, n));
    expect(inserted == n, "INSERT INTO " + table + " reported " + inserted + " rows, expected " + n);
    System.err.printf(Locale.ROOT, "  %s: %,d rows in %.1f s%n", table, n, (System.nanoTime() - t0) / 1e9);
  }

  static List<FileEntry> files(Database db, String table) {
    List<FileEntry> out = new ArrayList<>();
    try (Result r = db.sql("SELECT content, file_path, file_format, record_count, file_size_in_bytes,"
        + " referenced_data_file FROM \"" + table + "$files\"")) {
      for (Row row : r) {
        out.add(new FileEntry(((Number) row.get(0)).intValue(), path(row.getString(1)), row.getString(2),
            row.getLong(3), row.getLong(4), row.isNull(5) ? null : path(row.getString(5))));
      }
    }
    return out;
  }

  private static String path(String location) {
    return location.replaceFirst("^file:", "");
  }

  /** The file's size on disk (the metadata's figure if it cannot be read). */
  private static long diskSize(FileEntry f) {
    try {
      return Files.size(Path.of(f.path()));
    } catch (IOException | RuntimeException e) {
      return f.size();
    }
  }

  static Map<String, String> lastSummary(Database db, String table) {
    try (Result r = db.sql("SELECT summary FROM \"" + table + "$snapshots\" ORDER BY sequence_number DESC,"
        + " committed_at DESC LIMIT 1")) {
      Map<String, String> out = new LinkedHashMap<>();
      for (Row row : r) {
        Object s = row.get(0);
        if (s instanceof Map<?, ?> m) {
          m.forEach((k, v) -> out.put(String.valueOf(k), String.valueOf(v)));
        }
      }
      return out;
    }
  }

  // ---------------------------------------------------------------- 2. latency

  /** One engine's session for the latency statements. */
  interface Engine extends AutoCloseable {
    /** Runs a statement and returns the rows it affected. */
    long run(String sql) throws Exception;

    @Override
    void close() throws Exception;
  }

  static Engine floe(Database db) {
    return new Engine() {
      @Override
      public long run(String sql) {
        return update(db, sql);
      }

      @Override
      public void close() {
        db.close();
      }
    };
  }

  static Engine duck(String url) throws SQLException {
    Connection c = DriverManager.getConnection(url);
    try (Statement st = c.createStatement()) {
      st.execute("SET autoinstall_known_extensions = false");
    }
    return new Engine() {
      @Override
      public long run(String sql) throws SQLException {
        try (Statement st = c.createStatement()) {
          return st.execute(sql) ? -1 : st.getLargeUpdateCount(); // CHECKPOINT returns a result
        }
      }

      @Override
      public void close() throws SQLException {
        c.close();
      }
    };
  }

  record Latency(String statement, String engine, double[] ms) {}

  static String latency(Options o) throws Exception {
    long n = o.latencyRows();
    int iterations = o.iterations();
    int warmup = o.warmup();
    Path dir = o.data.resolve("latency-" + n);
    deleteTree(dir);
    Files.createDirectories(dir);
    String update = "UPDATE %s SET v = v + 1 WHERE id = %d";
    List<Latency> results = new ArrayList<>();
    String floeFiles;

    // Floe: v2 and v3 tables for the UPDATE, a plain and a PRIMARY KEY table for the INSERT.
    Path warehouse = dir.resolve("floe");
    try (Database db = Floe.open(warehouse)) {
      System.err.println("latency: generating Floe tables of " + n + " rows ...");
      latencyTables(db, "", n);
      Engine e = floe(db);
      jitWarmUp(db, e, o.jitWarmup());
      results.add(new Latency("UPDATE one row by id", "Floe, merge-on-read v2",
          timeEach(e, warmup, iterations, i -> String.format(Locale.ROOT, update, "u2", key(i, n)), 1)));
      results.add(new Latency("UPDATE one row by id", "Floe, merge-on-read v3",
          timeEach(e, warmup, iterations, i -> String.format(Locale.ROOT, update, "u3", key(i, n)), 1)));
      results.add(new Latency("INSERT one row", "Floe",
          timeEach(e, warmup, iterations, i -> "INSERT INTO ins VALUES " + valuesRow(n + i), 1)));
      results.add(new Latency("INSERT one row, PRIMARY KEY", "Floe",
          timeEach(e, warmup, iterations, i -> "INSERT INTO ins_pk VALUES " + valuesRow(n + i), 1)));
      results.add(new Latency(PARTITIONED_INSERT, "Floe",
          timeEach(e, warmup, iterations, i -> "INSERT INTO ins_day VALUES " + valuesRow(n + i), 1)));
      List<FileEntry> u2 = files(db, "u2");
      List<FileEntry> ins = files(db, "ins");
      floeFiles = String.format(Locale.ROOT, "after the runs Floe's v2 UPDATE table has %d data + %d delete files"
          + " and its INSERT table %d data files (one commit per statement, no compaction)",
          u2.stream().filter(f -> f.content() == 0).count(), u2.stream().filter(f -> f.content() != 0).count(),
          ins.stream().filter(f -> f.content() == 0).count());
    }
    for (String[] peer : new String[][] {{"DuckDB in-memory", "jdbc:duckdb:"},
        {"DuckDB file", "jdbc:duckdb:" + dir.resolve("duck.db")}}) {
      try (Engine e = duck(peer[1])) {
        e.run("CREATE TABLE u (" + DUCK_COLUMNS + ")");
        e.run("INSERT INTO u " + rows(0, n));
        e.run("CREATE TABLE ins (" + DUCK_COLUMNS + ")");
        e.run("INSERT INTO ins " + rows(0, n));
        e.run("CREATE TABLE ins_pk (" + DUCK_COLUMNS.replace("id BIGINT NOT NULL", "id BIGINT PRIMARY KEY") + ")");
        e.run("INSERT INTO ins_pk " + rows(0, n));
        e.run("CHECKPOINT");
        results.add(new Latency("UPDATE one row by id", peer[0],
            timeEach(e, warmup, iterations, i -> String.format(Locale.ROOT, update, "u", key(i, n)), 1)));
        results.add(new Latency("INSERT one row", peer[0],
            timeEach(e, warmup, iterations, i -> "INSERT INTO ins VALUES " + valuesRow(n + i), 1)));
        results.add(new Latency("INSERT one row, PRIMARY KEY", peer[0],
            timeEach(e, warmup, iterations, i -> "INSERT INTO ins_pk VALUES " + valuesRow(n + i), 1)));
        results.add(new Latency(PARTITIONED_INSERT, peer[0],
            timeEach(e, warmup, iterations, i -> "INSERT INTO ins VALUES " + valuesRow(2 * n + i), 1)));
      }
    }
    deleteTree(dir);

    StringBuilder md = new StringBuilder("### Latency of one-row statements\n\n");
    md.append(String.format(Locale.ROOT, "- Tables of %,d rows (the same 8 columns); %d statements timed after %d"
        + " warm-ups (Floe's JVM first ran %d statements of each kind on scratch tables, so the timed ones meet"
        + " a settled JIT), each its own autocommit statement sent as SQL text (`Database.sql` / JDBC `Statement.execute`);"
        + " UPDATE keys are random, the same sequence for every engine; INSERTs add new keys. Floe's tables use"
        + " the default write mode (merge-on-read) and are unpartitioned but for the last row's, partitioned by"
        + " day (the DuckDB engines insert into their plain table there); DuckDB file is `jdbc:duckdb:<file>`"
        + " (commits go to its WAL)."
        + " Ratio: Floe's p50 (the v2 row for UPDATE) over the engine's p50. *first → last*: mean of the first"
        + " and of the last tenth of the timed statements (each Floe statement adds files).%n", n, iterations, warmup,
        o.jitWarmup()));
    md.append("- Floe state: ").append(floeFiles).append(".\n\n");
    md.append("| statement | engine | p50 ms | p99 ms | mean ms | first → last ms | Floe/engine (p50) |\n"
        + "|---|---|---:|---:|---:|---:|---:|\n");
    for (String statement : List.of("UPDATE one row by id", "INSERT one row", "INSERT one row, PRIMARY KEY",
        PARTITIONED_INSERT)) {
      double floeP50 = Double.NaN;
      for (Latency l : results) {
        if (!l.statement().equals(statement)) {
          continue;
        }
        double p50 = percentile(l.ms(), 50);
        boolean isFloe = l.engine().startsWith("Floe");
        if (isFloe && Double.isNaN(floeP50)) {
          floeP50 = p50;
        }
        int tenth = Math.max(1, l.ms().length / 10);
        String drift = ms(mean(Arrays.copyOfRange(l.ms(), 0, tenth))) + " → "
            + ms(mean(Arrays.copyOfRange(l.ms(), l.ms().length - tenth, l.ms().length)));
        String line = String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |", statement, l.engine(), ms(p50),
            ms(percentile(l.ms(), 99)), ms(mean(l.ms())), drift, isFloe ? "—" : String.format(Locale.ROOT, "%.0f×",
                floeP50 / p50));
        md.append(line).append('\n');
        System.err.println(line);
      }
    }
    return md.append('\n').toString();
  }

  /** A different key each iteration, spread over the table, the same sequence for every engine. */
  static long key(int i, long n) {
    return Math.floorMod(new Random(i * 7919L + 17).nextLong(), n);
  }

  interface StatementFor {
    String sql(int iteration);
  }

  /**
   * A one-row INSERT into a table partitioned by day (Floe; the peer's table is the plain one): where
   * DuckDB's COPY would stage the row, Floe writes it in the JVM (docs/decisions/0003).
   */
  static final String PARTITIONED_INSERT = "INSERT one row, PARTITIONED BY (day(e))";

  /**
   * The latency tables, each of {@code n} rows: {@code u2}, {@code u3} (format 2 and 3, for the UPDATE),
   * {@code ins}, {@code ins_pk} (with a PRIMARY KEY) and {@code ins_day} (partitioned by day), for the
   * INSERTs; their names start with prefix.
   */
  static void latencyTables(Database db, String prefix, long n) {
    createAndFill(db, prefix + "u2", 2, n, null);
    createAndFill(db, prefix + "u3", 3, n, null);
    createAndFill(db, prefix + "ins", 2, n, null);
    exec(db, "CREATE TABLE " + prefix + "ins_pk (" + FLOE_COLUMNS.replace("id bigint NOT NULL", "id bigint PRIMARY KEY")
        + ")");
    update(db, "INSERT INTO " + prefix + "ins_pk " + rows(0, n));
    exec(db, "CREATE TABLE " + prefix + "ins_day (" + FLOE_COLUMNS + ") PARTITIONED BY (day(e))");
    update(db, "INSERT INTO " + prefix + "ins_day " + rows(0, n));
  }

  /** Runs {@code n} statements of each timed kind on scratch tables of 100,000 rows, then drops them. */
  static void jitWarmUp(Database db, Engine e, int n) throws Exception {
    if (n <= 0) {
      return;
    }
    long rows = 100_000;
    System.err.println("latency: warming the JIT with " + n + " statements of each kind ...");
    latencyTables(db, "jit_", rows);
    String update = "UPDATE %s SET v = v + 1 WHERE id = %d";
    timeEach(e, 0, n, i -> String.format(Locale.ROOT, update, "jit_u2", key(i + 7, rows)), 1);
    timeEach(e, 0, n, i -> String.format(Locale.ROOT, update, "jit_u3", key(i + 7, rows)), 1);
    timeEach(e, 0, n, i -> "INSERT INTO jit_ins VALUES " + valuesRow(rows + i), 1);
    timeEach(e, 0, n, i -> "INSERT INTO jit_ins_pk VALUES " + valuesRow(rows + i), 1);
    timeEach(e, 0, n, i -> "INSERT INTO jit_ins_day VALUES " + valuesRow(rows + i), 1);
    for (String t : List.of("jit_u2", "jit_u3", "jit_ins", "jit_ins_pk", "jit_ins_day")) {
      exec(db, "DROP TABLE " + t);
    }
  }

  static double[] timeEach(Engine e, int warmup, int iterations, StatementFor s, long expectedRows) throws Exception {
    for (int w = 0; w < warmup; w++) {
      e.run(s.sql(100_000 + w));
    }
    double[] ms = new double[iterations];
    for (int i = 0; i < iterations; i++) {
      String sql = s.sql(i);
      long t0 = System.nanoTime();
      long affected = e.run(sql);
      ms[i] = (System.nanoTime() - t0) / 1e6;
      expect(affected == expectedRows, sql + " affected " + affected + " rows, expected " + expectedRows);
    }
    return ms;
  }

  // ---------------------------------------------------------------- 3. bulk UPDATE

  static String bulk(Options o, IcebergPeer peer) throws Exception {
    long n = o.bulkRows();
    Pristine bulk = Pristine.of(o.data.resolve("bulk-" + n), dir -> {
      try (Database db = Floe.open(dir)) {
        for (int version : new int[] {2, 3}) {
          createAndFill(db, "t" + version, version, n, null);
        }
      }
    });
    record Variant(String label, String where, long rows) {}
    List<Variant> variants = List.of(new Variant("every row", "", n),
        new Variant("every other row", " WHERE id % 2 = 0", (n + 1) / 2));
    StringBuilder md = new StringBuilder("### Bulk UPDATE\n\n");
    List<String> lines = new ArrayList<>();
    String layout = null;
    String peerUnavailable = peer == null ? "`--no-spark`" : peer.unavailable();
    if (peerUnavailable != null) {
      System.err.println("Spark: not measured in this run: " + peerUnavailable);
    }
    List<String> peerLines = new ArrayList<>();
    List<PeerRun> peerAll = new ArrayList<>();
    for (Variant variant : variants) {
      String statement = "`UPDATE t SET v = v * 2" + variant.where() + "`";
      Map<String, double[]> floeSeconds = new LinkedHashMap<>();
      Map<String, String> floeDetail = new LinkedHashMap<>();
      Map<Mode, long[]> floeResult = new LinkedHashMap<>();
      for (int run = 0; run < o.bulkRuns(); run++) {
        for (Mode mode : Mode.values()) {
          bulk.restore();
          try (Database db = Floe.open(bulk.work())) {
            mode.configure(db);
            String t = mode.table();
            if (layout == null) {
              List<FileEntry> fs = files(db, t);
              layout = String.format(Locale.ROOT, "%d data file%s, %s", fs.size(), fs.size() == 1 ? "" : "s",
                  mib(fs.stream().mapToLong(FileEntry::size).sum()));
            }
            long sumBefore = scalarLong(db, "SELECT sum(v) FROM " + t);
            String sql = "UPDATE " + t + " SET v = v * 2" + variant.where();
            long t0 = System.nanoTime();
            long updated = update(db, sql);
            double s = (System.nanoTime() - t0) / 1e9;
            expect(updated == variant.rows(), sql + " (" + mode.label + ") reported " + updated + " rows, expected "
                + variant.rows());
            long sumAfter = scalarLong(db, "SELECT sum(v) FROM " + t);
            long count = scalarLong(db, "SELECT count(*) FROM " + t);
            expect(count == n, "after " + sql + " (" + mode.label + "): count(*) = " + count + ", expected " + n);
            floeResult.put(mode, new long[] {count, sumAfter});
            expectSum(sumBefore, sumAfter, variant.where(), n, sql + " (" + mode.label + ")");
            Map<String, String> summary = lastSummary(db, t);
            floeSeconds.computeIfAbsent(mode.label, k -> new double[o.bulkRuns()])[run] = s;
            floeDetail.put(mode.label, String.format(Locale.ROOT, "%s data + %s delete file(s) added, %s",
                summary.getOrDefault("added-data-files", "0"), summary.getOrDefault("added-delete-files", "0"),
                mib(Long.parseLong(summary.getOrDefault("added-files-size", "0")))));
            System.err.printf(Locale.ROOT, "bulk %-16s %-36s %.1f s (%s)%n", variant.label(), mode.label, s,
                floeDetail.get(mode.label));
          }
        }
      }
      DuckBulk[] duckRuns = new DuckBulk[o.bulkRuns()];
      for (int run = 0; run < o.bulkRuns(); run++) {
        duckRuns[run] = duckBulk(o.data.resolve("bulk-" + n + ".duckdb"), n, "UPDATE t SET v = v * 2"
            + variant.where(), variant.rows());
      }
      DuckBulk duck = Arrays.stream(duckRuns).min((a, b) -> Double.compare(a.seconds(), b.seconds())).orElseThrow();
      for (Map.Entry<String, double[]> e : floeSeconds.entrySet()) {
        double best = Arrays.stream(e.getValue()).min().orElseThrow();
        lines.add(String.format(Locale.ROOT, "| %s | Floe, %s | %.2f | %s | %.2f | %s |", statement, e.getKey(),
            best, runs(e.getValue()), best / duck.seconds(), floeDetail.get(e.getKey())));
      }
      lines.add(String.format(Locale.ROOT, "| %s | DuckDB file, native table | %.2f | %s | 1.00 | WAL after the UPDATE:"
          + " %s%s; explicit `CHECKPOINT` then %.2f s |", statement, duck.seconds(),
          runs(Arrays.stream(duckRuns).mapToDouble(DuckBulk::seconds).toArray()), bytes(duck.walBytes()),
          duck.walBytes() < (1 << 20) ? " (DuckDB checkpointed at commit: the change passed its 16 MB"
              + " checkpoint_threshold, so the UPDATE time includes writing the table file)" : "",
          duck.checkpointSeconds()));

      // The same UPDATE by Spark, on a fresh copy of the same table, each run in its own JVM.
      if (peerUnavailable == null) {
        for (Mode mode : Mode.values()) {
          PeerRun[] runs = new PeerRun[o.bulkRuns()];
          String failure = null;
          String check = null;
          for (int run = 0; run < o.bulkRuns() && peerUnavailable == null; run++) {
            bulk.restore();
            try (Database db = Floe.open(bulk.work())) {
              mode.configureForPeer(db);
            }
            String sql = "UPDATE {table} SET v = v * 2" + variant.where();
            String what = peer.name() + " " + sql.replace("{table}", mode.table()) + " (" + mode.label + ")";
            try {
              runs[run] = peer.run(bulk.work(), mode.table(), sql);
              peerAll.add(runs[run]);
              System.err.printf(Locale.ROOT, "bulk %-16s %-36s Spark %.1f s (SparkSession start %.1f s, warm-up %.1f s,"
                  + " JVM %.1f s; %s)%n", variant.label(), mode.label, runs[run].statementSeconds(),
                  runs[run].startupSeconds(), runs[run].warmUpSeconds(), runs[run].jvmSeconds(),
                  written(runs[run].summary()));
              check = checkPeerResult(bulk.work(), mode, variant.where(), n, floeResult.get(mode), what);
            } catch (PeerFailure e) {
              failure = "**failed**: " + e.getMessage().replace('`', '\'').replace('|', '/');
              PROBLEMS.add(what + " failed: " + e.getMessage());
              System.err.println("PROBLEM: " + what + " failed: " + e.getMessage());
              if (!e.started) {
                peerUnavailable = "could not start (" + e.getMessage() + ")";
              }
            }
          }
          double floeBest = Arrays.stream(floeSeconds.get(mode.label)).min().orElseThrow();
          PeerRun best = Arrays.stream(runs).filter(r -> r != null)
              .min((a, b) -> Double.compare(a.statementSeconds(), b.statementSeconds())).orElse(null);
          if (best == null) {
            peerLines.add(String.format(Locale.ROOT, "| %s | %s | — | — | %.2f | — | — | — | %s | — |", statement,
                mode.label, floeBest, failure != null ? failure : "not run"));
            continue;
          }
          peerLines.add(String.format(Locale.ROOT, "| %s | %s | %.2f | %s | %.2f | %.2f | %.1f | %.1f | %s%s | %s |",
              statement, mode.label, best.statementSeconds(),
              Arrays.stream(runs).map(r -> r == null ? "failed" : String.format(Locale.ROOT, "%.2f",
                  r.statementSeconds())).collect(Collectors.joining(", ")),
              floeBest, floeBest / best.statementSeconds(), best.startupSeconds(), best.warmUpSeconds(),
              written(best.summary()), failure != null ? "; another run " + failure : "", check));
        }
      }
    }
    String child = childRun(o, bulk, n);
    bulk.discardWork();

    md.append(String.format(Locale.ROOT, "- Table: %,d rows, the same 8 columns, generated by Floe (%s per format"
        + " version); DuckDB: a database file with the same rows (`CREATE TABLE` + `INSERT ... SELECT` of the same"
        + " expression, then `CHECKPOINT`). Each Floe UPDATE runs on a fresh copy of the generated table, in this"
        + " JVM (-Xmx%d MiB); DuckDB's on a fresh database file. %s Ratio: Floe/DuckDB"
        + " of the best UPDATE wall times; *written*: from the Floe commit's snapshot summary.%n", n, layout,
        Runtime.getRuntime().maxMemory() >> 20, o.bulkRuns() == 1 ? "One run each."
            : "Best of " + o.bulkRuns() + " runs each, every run on a fresh copy (all runs listed)."));
    md.append("- When an UPDATE takes every live row of a file, Floe drops the file instead of writing deletes,"
        + " so the three modes do the same work for *every row*; *every other row* separates them.\n\n");
    md.append("| statement | engine | wall s | runs s | Floe/DuckDB | written |\n|---|---|---:|---:|---:|---|\n");
    lines.forEach(l -> md.append(l).append('\n'));
    md.append('\n').append(child).append("\n\n");
    md.append(PEER_HEADING);
    if (peerLines.isEmpty()) {
      md.append("Spark: not measured in this run: ").append(peerUnavailable).append("\n\n");
      return md.toString();
    }
    PeerRun any = peerAll.isEmpty() ? null : peerAll.get(0);
    md.append(String.format(Locale.ROOT, "- %s (iceberg-spark-runtime) in `local[2]`, `spark.sql.shuffle.partitions` ="
        + " 2, UI off, session time zone UTC, catalog `floe` = Iceberg's `JdbcCatalog` on the warehouse's `catalog.db`"
        + " (as in spark-tests and docs/spark.md); each statement in its own JVM (`-Xmx%s`, Spark's `--add-opens`),"
        + " started with the `bench-spark` module's classpath.%n", any != null ? any.versions() : "Spark",
        o.sparkHeap));
    md.append(String.format(Locale.ROOT, "- Each Spark UPDATE runs on a fresh copy of the same generated table as"
        + " Floe's, in the same write mode: the table's format version, and `write.update.mode` (Floe sets the"
        + " three `write.*.mode` properties on the copy first, `merge-on-read` included: Floe's default when they"
        + " are absent, whereas Iceberg's default, which Spark follows, is `copy-on-write`); %s. In the child JVM: SparkSession"
        + " start-up (*start s*), a warm-up (*warm-up s*: copying the table's first %,d rows into a scratch table"
        + " with the same properties and running the same UPDATE on it, so the measured UPDATE is not the first of"
        + " its kind in the JVM, as Floe's is not), then the measured `spark.sql(\"UPDATE floe.public.t ...\")`"
        + " (*Spark s*). JVM start to exit: %s s; peak RSS of the child %s MiB.%n",
        o.bulkRuns() == 1 ? "one run" : "best of " + o.bulkRuns() + " runs, each on a fresh copy",
        SPARK_WARM_UP_ROWS, range(peerAll.stream().mapToDouble(PeerRun::jvmSeconds).toArray()),
        range(peerAll.stream().mapToDouble(r -> r.peakRssKb() / 1024.0).toArray())));
    md.append("- *Floe s*: Floe's best time for the same UPDATE and mode (the table above); Floe/Spark: their ratio."
        + " *Spark wrote*: the summary of Spark's snapshot. *Floe reads Spark's result*: after Spark's UPDATE, Floe"
        + " reads the table: `count(*)` and `sum(v)` against Floe's own result for the same UPDATE, and the rows whose"
        + " `v` is not what the UPDATE sets.\n\n");
    md.append("| statement | mode | Spark s | runs s | Floe s | Floe/Spark | start s | warm-up s | Spark wrote"
        + " | Floe reads Spark's result |\n|---|---|---:|---:|---:|---:|---:|---:|---|---|\n");
    peerLines.forEach(l -> md.append(l).append('\n'));
    if (peerUnavailable != null) {
      md.append("\nSpark stopped: ").append(peerUnavailable).append('\n');
    }
    return md.append('\n').toString();
  }

  static final String PEER_HEADING = "### Floe vs Spark local on the same table\n\n";

  /** Rows of the scratch table each Spark child runs the statement on first. */
  static final long SPARK_WARM_UP_ROWS = 50_000;

  static String range(double[] values) {
    double[] v = Arrays.stream(values).filter(x -> x >= 0).toArray();
    if (v.length == 0) {
      return "?";
    }
    double lo = Arrays.stream(v).min().orElseThrow();
    double hi = Arrays.stream(v).max().orElseThrow();
    return hi - lo < 0.05 ? String.format(Locale.ROOT, "%.1f", lo) : String.format(Locale.ROOT, "%.1f–%.1f", lo, hi);
  }

  /** What a commit wrote, from its snapshot summary. */
  static String written(Map<String, String> summary) {
    String deleted = summary.getOrDefault("deleted-data-files", "0");
    String positions = summary.get("added-position-deletes");
    String dvs = summary.get("added-dvs");
    return String.format(Locale.ROOT, "%s data + %s delete file(s) added%s%s, %s",
        summary.getOrDefault("added-data-files", "0"), summary.getOrDefault("added-delete-files", "0"),
        positions == null ? "" : String.format(Locale.ROOT, " (%s%,d position deletes)",
            dvs == null ? "" : dvs + " deletion vector(s), ", Long.parseLong(positions)),
        deleted.equals("0") ? "" : ", " + deleted + " data file(s) removed",
        mib(Long.parseLong(summary.getOrDefault("added-files-size", "0"))));
  }

  /**
   * Floe reads the table a peer updated: {@code count(*)} and {@code sum(v)} against Floe's own result for the same
   * statement ({@code floe} = {count, sum}), and the rows whose {@code v} is not what the UPDATE sets ({@code v = id}
   * in a fresh copy). Mismatches and failures are problems of the run.
   */
  static String checkPeerResult(Path warehouse, Mode mode, String where, long n, long[] floe, String what) {
    String t = mode.table();
    String expectedV = where.isEmpty() ? "id * 2" : "CASE WHEN id % 2 = 0 THEN id * 2 ELSE id END";
    try (Database db = Floe.open(warehouse)) {
      long count = scalarLong(db, "SELECT count(*) FROM " + t);
      long sum = scalarLong(db, "SELECT sum(v) FROM " + t);
      long wrong = scalarLong(db, "SELECT count(*) FROM " + t + " WHERE v IS DISTINCT FROM " + expectedV);
      List<String> bad = new ArrayList<>();
      if (floe == null) {
        bad.add("no Floe result to compare with");
      } else {
        if (count != floe[0]) {
          bad.add(String.format(Locale.ROOT, "count(*) = %,d, Floe's UPDATE left %,d", count, floe[0]));
        }
        if (sum != floe[1]) {
          bad.add(String.format(Locale.ROOT, "sum(v) = %d, Floe's UPDATE left %d", sum, floe[1]));
        }
      }
      if (wrong != 0) {
        bad.add(String.format(Locale.ROOT, "%,d rows with v <> %s", wrong, expectedV));
      }
      if (!bad.isEmpty()) {
        String problem = "Floe reading the table after " + what + ": " + String.join("; ", bad);
        PROBLEMS.add(problem);
        System.err.println("PROBLEM: " + problem);
        return "**mismatch**: " + String.join("; ", bad);
      }
      return String.format(Locale.ROOT, "same: %,d rows, sum(v) %d; 0 wrong v", count, sum);
    } catch (RuntimeException e) {
      String problem = "Floe reading the table after " + what + " failed: " + e;
      PROBLEMS.add(problem);
      System.err.println("PROBLEM: " + problem);
      return "**Floe failed**: " + e.toString().replace('|', '/');
    }
  }

  private static void expectSum(long before, long after, String where, long n, String what) {
    // v = i in a fresh copy, so the UPDATE adds the sum of the updated ids: all of 0..n-1, or the even ones.
    long m = (n + 1) / 2;
    long updatedSum = where.isEmpty() ? n * (n - 1) / 2 : m * (m - 1);
    expect(after == before + updatedSum, "after " + what + ": sum(v) = " + after + ", expected " + (before + updatedSum));
  }

  record DuckBulk(double seconds, long walBytes, double checkpointSeconds) {}

  static String runs(double[] seconds) {
    return Arrays.stream(seconds).mapToObj(v -> String.format(Locale.ROOT, "%.2f", v))
        .collect(Collectors.joining(", "));
  }

  /** DuckDB's native UPDATE on a fresh database file with the same rows. */
  static DuckBulk duckBulk(Path file, long n, String sql, long expectedRows) throws Exception {
    Files.deleteIfExists(file);
    Files.deleteIfExists(Path.of(file + ".wal"));
    try (Engine e = duck("jdbc:duckdb:" + file)) {
      e.run("CREATE TABLE t (" + DUCK_COLUMNS + ")");
      e.run("INSERT INTO t " + rows(0, n));
      e.run("CHECKPOINT");
      long t0 = System.nanoTime();
      long updated = e.run(sql);
      double s = (System.nanoTime() - t0) / 1e9;
      expect(updated == expectedRows, "DuckDB " + sql + " reported " + updated + " rows, expected " + expectedRows);
      Path wal = Path.of(file + ".wal");
      long walBytes = Files.exists(wal) ? Files.size(wal) : 0;
      long t1 = System.nanoTime();
      e.run("CHECKPOINT");
      double checkpoint = (System.nanoTime() - t1) / 1e9;
      System.err.printf(Locale.ROOT, "bulk DuckDB file: %s: %,d rows, %.2f s (WAL %,d B) + CHECKPOINT %.2f s%n", sql,
          updated, s, walBytes, checkpoint);
      return new DuckBulk(s, walBytes, checkpoint);
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(Path.of(file + ".wal"));
    }
  }

  /** Floe's every-row UPDATE (v2, merge-on-read) in a child JVM with a small heap. */
  static String childRun(Options o, Pristine bulk, long n) throws Exception {
    bulk.restore();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String sql = "UPDATE t2 SET v = v * 2";
    List<String> cmd = List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx" + o.childHeap, "-cp",
        System.getProperty("java.class.path"), BulkUpdateChild.class.getName(), bulk.work().toString(), sql);
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String result = null;
    Deque<String> tail = new ArrayDeque<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.startsWith("RESULT ")) {
          result = line;
        }
        tail.addLast(line);
        if (tail.size() > 8) {
          tail.removeFirst();
        }
      }
    }
    int exit = p.waitFor();
    double wall = (System.nanoTime() - t0) / 1e9;
    String head = String.format(Locale.ROOT, "- Floe `%s` (merge-on-read v2, %,d rows) in a child JVM with `-Xmx%s`: ",
        sql.replace("t2", "t"), n, o.childHeap);
    if (exit == 0 && result != null) {
      // RESULT <rows> <statement ms> <peak heap used bytes> <peak RSS kB>
      String[] f = result.split(" ");
      long rows = Long.parseLong(f[1]);
      expect(rows == n, "child " + sql + " reported " + rows + " rows, expected " + n);
      String line = head + String.format(Locale.ROOT, "**completed**, %,d rows in %.2f s (JVM start to exit %.1f s);"
          + " peak JVM heap used %s MiB; peak RSS of the process %s MiB (DuckDB's memory is native, outside the"
          + " heap).", rows, Long.parseLong(f[2]) / 1e3, wall, Long.parseLong(f[3]) >> 20,
          Long.parseLong(f[4]) >> 10);
      System.err.println(line);
      return line;
    }
    String line = head + "**failed** (exit " + exit + ", " + String.format(Locale.ROOT, "%.1f s", wall)
        + "): `" + String.join(" / ", tail).replace('`', '\'') + "`";
    PROBLEMS.add(line);
    System.err.println(line);
    return line;
  }

  // ---------------------------------------------------------------- tables generated once, restored per run

  /**
   * A warehouse generated once into {@code <dir>/work} and kept as {@code <dir>/pristine}; {@link #restore}
   * puts a fresh copy back at {@code work}. Iceberg metadata names files by absolute path, so the copy must
   * live where the tables were generated. Data files are immutable (Floe only ever adds or drops whole files),
   * so they are hard links; everything else (the SQLite catalog, metadata) is copied.
   */
  record Pristine(Path dir) {
    interface Generator {
      void generate(Path work) throws Exception;
    }

    static Pristine of(Path dir, Generator generator) throws Exception {
      Pristine p = new Pristine(dir);
      Path marker = p.pristine().resolve(".complete");
      if (Files.exists(marker) && Files.readString(marker).equals(p.work().toString())) {
        return p;
      }
      System.err.println("generating " + dir + " (once; reused by later runs) ...");
      deleteTree(dir);
      Files.createDirectories(dir);
      long t0 = System.nanoTime();
      generator.generate(p.work());
      copyTree(p.work(), p.pristine());
      Files.writeString(marker, p.work().toString());
      System.err.printf(Locale.ROOT, "generated in %.1f s%n", (System.nanoTime() - t0) / 1e9);
      return p;
    }

    Path work() {
      return dir.resolve("work");
    }

    Path pristine() {
      return dir.resolve("pristine");
    }

    void restore() throws IOException {
      deleteTree(work());
      copyTree(pristine(), work());
      Files.deleteIfExists(work().resolve(".complete"));
    }

    void discardWork() throws IOException {
      deleteTree(work());
    }
  }

  static void copyTree(Path from, Path to) throws IOException {
    Files.walkFileTree(from, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
        Files.createDirectories(to.resolve(from.relativize(d)));
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
        Path target = to.resolve(from.relativize(f));
        String name = f.getFileName().toString();
        if (name.endsWith(".parquet") || name.endsWith(".puffin")) {
          Files.createLink(target, f);
        } else if (!name.endsWith(".lock")) {
          Files.copy(f, target);
        }
        return FileVisitResult.CONTINUE;
      }
    });
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
        Files.delete(p);
      }
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  // ---------------------------------------------------------------- helpers

  static void exec(Database db, String sql) {
    db.sql(sql).close();
  }

  /** Runs a command and returns the rows it affected. */
  static long update(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      return r.rowCount();
    }
  }

  static long scalarLong(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      Object v = r.toList().get(0).get(0);
      return ((Number) v).longValue();
    }
  }

  static void expect(boolean ok, String problem) {
    if (!ok) {
      PROBLEMS.add(problem);
      System.err.println("PROBLEM: " + problem);
    }
  }

  static double percentile(double[] values, double p) {
    double[] s = values.clone();
    Arrays.sort(s);
    int rank = (int) Math.ceil(p / 100 * s.length);
    return s[Math.max(0, Math.min(s.length - 1, rank - 1))];
  }

  static double mean(double[] values) {
    return Arrays.stream(values).average().orElse(Double.NaN);
  }

  static String ms(double v) {
    return String.format(Locale.ROOT, v < 10 ? "%.2f" : "%.1f", v);
  }

  static String bytes(long b) {
    if (b < 10_000) {
      return String.format(Locale.ROOT, "%,d B", b);
    }
    if (b < 10L << 20) {
      return String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
    }
    return mib(b);
  }

  static String mib(long b) {
    return String.format(Locale.ROOT, "%.1f MiB", b / 1048576.0);
  }

  /** A small ratio readably: 1.00, 0.0021, 1.4e-06. */
  static String ratio(long a, long b) {
    if (b == 0) {
      return "—";
    }
    double r = (double) a / b;
    return r >= 0.01 ? String.format(Locale.ROOT, "%.2f", r) : String.format(Locale.ROOT, "%.2g", r);
  }

  static void write(Options o, String[] args, String body) throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("## Mutations: Floe vs DuckDB native tables — ").append(LocalDate.now()).append("\n\n");
    md.append("- Command: `bench/run mutations").append(args.length > 0 ? " " + String.join(" ", args) : "")
        .append("`\n");
    md.append("- Machine: ").append(machine()).append("\n");
    md.append("- DuckDB ").append(duckVersion()).append(" (Floe's engine and the peer, same library, same JVM,"
        + " default threads and memory limit).\n");
    if (!PROBLEMS.isEmpty()) {
      md.append("- **Problems seen in this run:**\n");
      PROBLEMS.forEach(p -> md.append("  - ").append(p.replace("\n", " ")).append('\n'));
    }
    md.append('\n').append(body);
    QueryBench.appendResults(o.out, md);
  }

  private static String duckVersion() {
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT version()")) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      return "(version unknown)";
    }
  }

  static String machine() {
    String cpu = "unknown CPU";
    String memory = "unknown memory";
    try {
      for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (l.startsWith("model name")) {
          cpu = l.substring(l.indexOf(':') + 1).strip();
          break;
        }
      }
      for (String l : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (l.startsWith("MemTotal:")) {
          long kb = Long.parseLong(l.replaceAll("[^0-9]", ""));
          memory = String.format(Locale.ROOT, "%.1f GiB RAM", kb / 1048576.0);
          break;
        }
      }
    } catch (IOException ignored) {
      // not Linux
    }
    return Runtime.getRuntime().availableProcessors() + " cores (" + cpu + "), " + memory + ", bench JVM "
        + (Runtime.getRuntime().maxMemory() >> 20) + " MiB max heap, Java " + System.getProperty("java.version");
  }
}
