package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.Log;
import dev.floe.server.pg.PgServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The durable tail (docs/tail.md) beside the usual ways to make one row durable, on the same disk in one
 * run: Floe's {@code Log.append} (acknowledged after the log's fsync, concurrent appenders sharing fsyncs),
 * SQLite with {@code synchronous=FULL} (WAL journal) one-row transactions, and PostgreSQL 15 single-row
 * INSERTs through pgjdbc (autocommit, {@code synchronous_commit=on}). It measures one writer's ack latency,
 * eight writers' throughput and latency, batch throughput ({@code Log.extend} of 10,000 rows vs a
 * 10,000-row transaction), and an INSERT over pgwire into a table with a tail vs into a plain table (one
 * Iceberg commit per statement), and window queries on a tail table (recent rows unsealed, older ones
 * published to an Iceberg table on s3proxy, a real S3-compatible server the benchmark starts) vs a DuckDB
 * table. Results are appended to bench/RESULTS.md.
 *
 * <pre>bench/run tail [--appends 5000] [--seconds 5] [--writers 8] [--batches 50] [--window-rows 2000000]</pre>
 */
public final class TailBench {
  private static final int BATCH = 10_000;

  /** One way of making rows durable. */
  private interface Sink extends AutoCloseable {
    /** A writer of its own (a connection), for one thread. */
    Writer writer() throws Exception;

    @Override
    void close() throws Exception;
  }

  private interface Writer extends AutoCloseable {
    void one(long i) throws Exception;

    void batch(long first, int n) throws Exception;

    @Override
    default void close() throws Exception {}
  }

  public static void main(String[] args) throws Exception {
    int appends = 5000;
    int seconds = 5;
    int writers = 8;
    int batches = 50;
    int windowRows = 2_000_000;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--appends" -> appends = Integer.parseInt(args[++i]);
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        case "--writers" -> writers = Integer.parseInt(args[++i]);
        case "--batches" -> batches = Integer.parseInt(args[++i]);
        case "--window-rows" -> windowRows = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = data.resolve("tail").toAbsolutePath();
    TransactionBench.deleteTree(root);
    Files.createDirectories(root);
    PgWireBench.Postgres pg = new PgWireBench.Postgres(data.resolve("pg15-tail").toAbsolutePath(), TransactionBench.freePort());
    List<String[]> table = new ArrayList<>();
    double[][] wire;
    double[][] window;
    try (Database db = Floe.open(FloeConfig.builder(root.resolve("warehouse")).fenced(true).build())) {
      pg.start();
      Sink floe = floe(db);
      Sink sqlite = sqlite(root.resolve("bench.sqlite"));
      Sink postgres = postgres("jdbc:postgresql://127.0.0.1:" + pg.port + "/postgres");
      List<Sink> sinks = List.of(floe, sqlite, postgres);
      for (Sink s : sinks) {
        latencies(s, appends / 5); // warm-up: JIT, connections, files
      }
      double[][] one = new double[3][];
      for (int k = 0; k < 3; k++) {
        one[k] = latencies(sinks.get(k), appends);
      }
      table.add(row("1 writer: ack latency p50", pct(one[0], 50), pct(one[1], 50), pct(one[2], 50), "ms"));
      table.add(row("1 writer: ack latency p99", pct(one[0], 99), pct(one[1], 99), pct(one[2], 99), "ms"));
      double[][] many = new double[3][];
      for (int k = 0; k < 3; k++) {
        many[k] = concurrent(sinks.get(k), writers, seconds);
      }
      table.add(row(writers + " writers: single-row appends/s", many[0][0], many[1][0], many[2][0], "/s"));
      table.add(row(writers + " writers: ack latency p50", many[0][1], many[1][1], many[2][1], "ms"));
      table.add(row(writers + " writers: ack latency p99", many[0][2], many[1][2], many[2][2], "ms"));
      double[] batch = new double[3];
      for (int k = 0; k < 3; k++) {
        batch[k] = batches(sinks.get(k), batches);
      }
      table.add(row("batches of " + BATCH + " rows (extend / one transaction): rows/s", batch[0], batch[1], batch[2],
          "/s"));
      for (Sink s : sinks) {
        s.close();
      }
      wire = pgwire(db, appends / 5);
      // the window queries' published table lives on a real S3-compatible server (s3proxy)
      System.setProperty("floe.s3proxy.jar", "bench/target/s3proxy/s3proxy.jar");
      dev.floe.testing.S3Server.useCredentials();
      try (dev.floe.testing.S3Server s3 = dev.floe.testing.S3Server.start(root.resolve("s3"))) {
        window = windows(db, windowRows, appends / 10, s3, root.resolve("warehouse"));
      }
    } finally {
      pg.stop();
    }
    for (String[] r : table) {
      System.err.println(String.join(" | ", r));
    }
    System.err.println("pgwire INSERT p50/p99: tail " + fmt(wire[0][0]) + "/" + fmt(wire[0][1]) + " ms, plain "
        + fmt(wire[1][0]) + "/" + fmt(wire[1][1]) + " ms");
    write(out, appends, seconds, writers, batches, table, wire, window, windowRows, args);
  }

  private static Sink floe(Database db) {
    Log log = db.newLog("events", "ts timestamptz NOT NULL, sym text, px double precision, qty bigint", "ts");
    return new Sink() {
      @Override
      public Writer writer() {
        return new Writer() {
          @Override
          public void one(long i) {
            log.append(Instant.ofEpochMilli(1_700_000_000_000L + i), "S" + (i % 100), i * 0.01, i);
          }

          @Override
          public void batch(long first, int n) {
            List<Object[]> rows = new ArrayList<>(n);
            for (long i = first; i < first + n; i++) {
              rows.add(new Object[] {Instant.ofEpochMilli(1_700_000_000_000L + i), "S" + (i % 100), i * 0.01, i});
            }
            log.extend(rows);
          }
        };
      }

      @Override
      public void close() {
        log.advance(true);
      }
    };
  }

  /** A JDBC database: one connection per writer, autocommit for single rows, one transaction per batch. */
  private static Sink jdbc(String url, String user, String insert) {
    return new Sink() {
      @Override
      public Writer writer() throws SQLException {
        Connection c = DriverManager.getConnection(url, user, "");
        if (url.startsWith("jdbc:sqlite")) {
          try (Statement st = c.createStatement()) {
            st.execute("PRAGMA journal_mode=WAL");
            st.execute("PRAGMA synchronous=FULL");
            st.execute("PRAGMA busy_timeout=60000");
          }
        }
        PreparedStatement ps = c.prepareStatement(insert);
        return new Writer() {
          private void bind(long i) throws SQLException {
            ps.setLong(1, 1_700_000_000_000L + i);
            ps.setString(2, "S" + (i % 100));
            ps.setDouble(3, i * 0.01);
            ps.setLong(4, i);
          }

          @Override
          public void one(long i) throws SQLException {
            bind(i);
            ps.executeUpdate();
          }

          @Override
          public void batch(long first, int n) throws SQLException {
            c.setAutoCommit(false);
            for (long i = first; i < first + n; i++) {
              bind(i);
              ps.addBatch();
            }
            ps.executeBatch();
            c.commit();
            c.setAutoCommit(true);
          }

          @Override
          public void close() throws SQLException {
            ps.close();
            c.close();
          }
        };
      }

      @Override
      public void close() {}
    };
  }

  private static Sink sqlite(Path file) throws SQLException {
    String url = "jdbc:sqlite:" + file;
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute("PRAGMA journal_mode=WAL");
      st.execute("CREATE TABLE events (ts INTEGER NOT NULL, sym TEXT, px REAL, qty INTEGER)");
    }
    return jdbc(url, null, "INSERT INTO events VALUES (?, ?, ?, ?)");
  }

  private static Sink postgres(String url) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "floe", ""); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS events");
      st.execute("CREATE TABLE events (ts timestamptz NOT NULL, sym text, px double precision, qty bigint)");
    }
    return jdbc(url, "floe", "INSERT INTO events VALUES (to_timestamp(? / 1000.0), ?, ?, ?)");
  }

  private static double[] latencies(Sink sink, int n) throws Exception {
    double[] ms = new double[n];
    try (Writer w = sink.writer()) {
      for (int i = 0; i < n; i++) {
        long t0 = System.nanoTime();
        w.one(i);
        ms[i] = (System.nanoTime() - t0) / 1e6;
      }
    }
    Arrays.sort(ms);
    return ms;
  }

  /** {rows/s, p50 ms, p99 ms} of {@code writers} threads appending single rows for {@code seconds}. */
  private static double[] concurrent(Sink sink, int writers, int seconds) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    CountDownLatch start = new CountDownLatch(1);
    long deadline = System.nanoTime() + seconds * 1_000_000_000L + 200_000_000L;
    List<Future<double[]>> results = new ArrayList<>();
    try {
      for (int t = 0; t < writers; t++) {
        long base = 1_000_000_000L * (t + 1);
        Callable<double[]> task = () -> {
          double[] ms = new double[1 << 16];
          int n = 0;
          try (Writer w = sink.writer()) {
            start.await();
            while (System.nanoTime() < deadline) {
              long t0 = System.nanoTime();
              w.one(base + n);
              double d = (System.nanoTime() - t0) / 1e6;
              if (n == ms.length) {
                ms = Arrays.copyOf(ms, n * 2);
              }
              ms[n++] = d;
            }
          }
          return Arrays.copyOf(ms, n);
        };
        results.add(pool.submit(task));
      }
      long t0 = System.nanoTime();
      start.countDown();
      List<Double> all = new ArrayList<>();
      for (Future<double[]> f : results) {
        for (double d : f.get()) {
          all.add(d);
        }
      }
      double elapsed = (System.nanoTime() - t0) / 1e9;
      double[] sorted = all.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      return new double[] {sorted.length / elapsed, pct(sorted, 50), pct(sorted, 99)};
    } finally {
      pool.shutdown();
    }
  }

  private static double batches(Sink sink, int n) throws Exception {
    try (Writer w = sink.writer()) {
      w.batch(10_000_000_000L, BATCH); // warm-up
      long t0 = System.nanoTime();
      for (int b = 0; b < n; b++) {
        w.batch(20_000_000_000L + (long) b * BATCH, BATCH);
      }
      return (double) n * BATCH / ((System.nanoTime() - t0) / 1e9);
    }
  }

  private static final int WINDOW_RECENT = 20_000;

  /**
   * p50 of window queries, {Floe, DuckDB} for {recent, older}, then {Floe's first older-window query
   * after its local copies were dropped (fetching from S3), Floe's recent window with S3 stopped}: a
   * tail table whose {@code rows} older rows, one millisecond apart, are published to {@code s3}, and
   * {@value #WINDOW_RECENT} unsealed ones after them.
   */
  private static double[][] windows(Database db, int rows, int n, dev.floe.testing.S3Server s3, Path warehouse)
      throws Exception {
    long t0 = 1_700_000_000_000L;
    Log log = db.newLog("win", "ts timestamptz NOT NULL, sym text, px double precision, qty bigint", "ts",
        Log.Config.DEFAULT.withPublishTo("s3://" + dev.floe.testing.S3Server.BUCKET + "/bench/win", s3.storage()));
    String source = "SELECT to_timestamp((" + t0 + " + range) / 1000.0) AS ts, 'S' || (range % 100) AS "
        + "sym, range * 0.01 AS px, range AS qty FROM range(" + rows + ")";
    try (dev.floe.Result r = db.sql(source); org.apache.arrow.vector.ipc.ArrowReader batches = r.arrow()) {
      log.ingest(batches);
    }
    log.compact(true);
    log.publish();
    log.evict(); // the staging table lets the published files go: older rows are read from the published table
    if (log.publishedThrough() != rows || log.columnStatistics("table").rows() != 0) {
      throw new IllegalStateException("the older rows were not published: " + log.publishedThrough());
    }
    List<Object[]> recent = new ArrayList<>();
    for (long i = rows; i < rows + WINDOW_RECENT; i++) {
      recent.add(new Object[] {Instant.ofEpochMilli(t0 + i), "S" + (i % 100), i * 0.01, i});
    }
    log.extend(recent);
    String recentFrom = literal(t0 + rows + WINDOW_RECENT / 2);
    String olderFrom = literal(t0 + rows / 2);
    String olderTo = literal(t0 + rows / 2 + WINDOW_RECENT / 2);
    String recentQ = "SELECT count(*), avg(px) FROM %s WHERE ts >= " + recentFrom;
    String olderQ = "SELECT count(*), avg(px) FROM %s WHERE ts >= " + olderFrom + " AND ts < " + olderTo;
    java.util.Properties p = new java.util.Properties();
    p.setProperty("autoinstall_known_extensions", "false");
    p.setProperty("autoload_known_extensions", "false");
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:", p); Statement st = duck.createStatement()) {
      st.execute("CREATE TABLE win AS " + source.replace("range(" + rows + ")", "range(" + (rows + WINDOW_RECENT) + ")"));
      double[][] out = new double[3][2];
      String[] qs = {recentQ, olderQ};
      for (int k = 0; k < 2; k++) {
        String q = String.format(qs[k], "win");
        long floeCount = -1;
        long duckCount = -2;
        double[] f = new double[n];
        double[] d = new double[n];
        for (int i = -n / 5; i < n; i++) {
          long a = System.nanoTime();
          try (dev.floe.Result r = db.sql(q)) {
            floeCount = r.iterator().next().getLong(0);
          }
          long b = System.nanoTime();
          try (java.sql.ResultSet rs = st.executeQuery(q)) {
            rs.next();
            duckCount = rs.getLong(1);
          }
          long c = System.nanoTime();
          if (i >= 0) {
            f[i] = (b - a) / 1e6;
            d[i] = (c - b) / 1e6;
          }
        }
        if (floeCount != duckCount || floeCount != WINDOW_RECENT / 2) {
          throw new IllegalStateException("window query counts differ: Floe " + floeCount + ", DuckDB " + duckCount);
        }
        Arrays.sort(f);
        Arrays.sort(d);
        out[k] = new double[] {pct(f, 50), pct(d, 50)};
      }
      // the older window once its files' local copies are gone: fetched from s3proxy
      try (java.util.stream.Stream<Path> files = Files.walk(warehouse.resolve(".floe").resolve("cache"))) {
        for (Path f : files.filter(f -> f.toString().endsWith(".parquet")).toList()) {
          Files.delete(f);
        }
      }
      long a = System.nanoTime();
      try (dev.floe.Result r = db.sql(String.format(olderQ, "win"))) {
        r.iterator().next();
      }
      out[2][0] = (System.nanoTime() - a) / 1e6;
      // the recent window with S3 stopped: it reads local tiers only
      s3.stop();
      double[] f = new double[n];
      for (int i = -n / 5; i < n; i++) {
        long b = System.nanoTime();
        try (dev.floe.Result r = db.sql(String.format(recentQ, "win"))) {
          if (r.iterator().next().getLong(0) != WINDOW_RECENT / 2) {
            throw new IllegalStateException("the recent window without S3 counted wrong");
          }
        }
        if (i >= 0) {
          f[i] = (System.nanoTime() - b) / 1e6;
        }
      }
      Arrays.sort(f);
      out[2][1] = pct(f, 50);
      return out;
    }
  }

  /** A timestamptz literal (a constant a filter can prune with) of epoch milliseconds. */
  private static String literal(long millis) {
    return "TIMESTAMPTZ '" + java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS")
        .withZone(java.time.ZoneOffset.UTC).format(Instant.ofEpochMilli(millis)) + "+00'";
  }

  /** p50 of a one-row INSERT through Floe's server: {tail}, {plain}. */
  private static double[][] pgwire(Database db, int n) throws Exception {
    try (PgServer server = PgServer.start(db, PgServer.Config.defaults().withPort(0));
        Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + server.port() + "/floe",
            "floe", "")) {
      try (Statement st = c.createStatement()) {
        st.execute("CREATE TABLE wire_tail (ts timestamptz, sym text, px double precision, qty bigint) "
            + "WITH (tail = true, sort_by = 'ts')");
        st.execute("CREATE TABLE wire_plain (ts timestamptz, sym text, px double precision, qty bigint)");
      }
      double[][] result = new double[2][];
      for (String t : List.of("wire_tail", "wire_plain")) {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " VALUES (now(), ?, ?, ?)")) {
          double[] ms = new double[n];
          for (int i = -n / 5; i < n; i++) {
            long t0 = System.nanoTime();
            ps.setString(1, "S" + (i % 100));
            ps.setDouble(2, i * 0.01);
            ps.setLong(3, i);
            ps.executeUpdate();
            if (i >= 0) {
              ms[i] = (System.nanoTime() - t0) / 1e6;
            }
          }
          Arrays.sort(ms);
          result[t.equals("wire_tail") ? 0 : 1] = new double[] {pct(ms, 50), pct(ms, 99)};
        }
      }
      return result;
    }
  }

  private static String[] row(String what, double floe, double sqlite, double pg, String unit) {
    boolean rate = unit.equals("/s");
    String f = rate ? String.format(Locale.ROOT, "%,.0f/s", floe) : fmt(floe) + " ms";
    String s = rate ? String.format(Locale.ROOT, "%,.0f/s", sqlite) : fmt(sqlite) + " ms";
    String p = rate ? String.format(Locale.ROOT, "%,.0f/s", pg) : fmt(pg) + " ms";
    return new String[] {what, f, s, p, String.format(Locale.ROOT, "%.2f / %.2f", floe / sqlite, floe / pg)};
  }

  private static String fmt(double v) {
    return String.format(Locale.ROOT, v < 1 ? "%.3f" : "%.2f", v);
  }

  private static double pct(double[] sorted, int p) {
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
  }

  private static void write(Path out, int appends, int seconds, int writers, int batches, List<String[]> table,
      double[][] wire, double[][] window, int windowRows, String[] args) throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("## Durable tail: Floe Log.append vs SQLite (synchronous=FULL) and PostgreSQL 15 — ")
        .append(LocalDate.now()).append("\n\n");
    md.append("- Command: `bench/run tail").append(args.length > 0 ? " " + String.join(" ", args) : "")
        .append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append("; PostgreSQL ")
        .append(PgWireBench.Postgres.version()).append(" (Debian package, synchronous_commit=on) and SQLite ")
        .append("(sqlite-jdbc, WAL journal, synchronous=FULL) on the same disk\n");
    md.append(String.format(Locale.ROOT, "- Rows of (ts, sym, px, qty). Floe: the embedded API, each call "
        + "returns after the log's fsync. SQLite and PostgreSQL: one autocommitted INSERT per row through JDBC. "
        + "1 writer: %d appends after warm-up; %d writers: %d s of appends, each writer on its own connection; "
        + "batches: %d of %d rows (Floe: one extend, one log record; the others: one transaction of a JDBC "
        + "batch).%n%n", appends, writers, seconds, batches, BATCH));
    md.append("| measure | Floe | SQLite | PostgreSQL | Floe/SQLite / Floe/PostgreSQL |\n"
        + "|---|---:|---:|---:|---:|\n");
    for (String[] r : table) {
      md.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    md.append(String.format(Locale.ROOT, "%nOne-row INSERT through Floe's server (pgjdbc, prepared, autocommit), "
        + "%d after warm-up:%n%n| table | p50 | p99 |%n|---|---:|---:|%n"
        + "| with a tail (acknowledged after the log's fsync) | %s ms | %s ms |%n"
        + "| plain (one Iceberg commit per INSERT) | %s ms | %s ms |%n"
        + "| tail / plain | %.3f | %.3f |%n", appends / 5, fmt(wire[0][0]), fmt(wire[0][1]), fmt(wire[1][0]),
        fmt(wire[1][1]), wire[0][0] / wire[1][0], wire[0][1] / wire[1][1]));
    md.append(String.format(Locale.ROOT, "%nWindow queries on a tail table whose %,d older rows (ingested, compacted "
        + "into files sorted by ts) are published to s3proxy (a real S3-compatible server on this machine, started "
        + "by the benchmark) and let go of by the local staging table, and whose %,d most recent rows are unsealed, "
        + "vs a DuckDB in-memory table of the same rows, `SELECT count(*), avg(px) FROM t WHERE ts >= …` (p50 of "
        + "%d):%n%n| window | Floe | DuckDB table | Floe/DuckDB |%n|---|---:|---:|---:|%n"
        + "| recent (only unsealed rows match) | %s ms | %s ms | %.2f |%n"
        + "| older (only published rows match; the files' local copies) | %s ms | %s ms | %.2f |%n"
        + "| older, first query after the local copies were dropped (fetched from s3proxy) | %s ms | | |%n"
        + "| recent, with s3proxy stopped (no request leaves the machine) | %s ms | | %.2f |%n", windowRows,
        WINDOW_RECENT, appends / 10, fmt(window[0][0]), fmt(window[0][1]), window[0][0] / window[0][1],
        fmt(window[1][0]), fmt(window[1][1]), window[1][0] / window[1][1], fmt(window[2][0]), fmt(window[2][1]),
        window[2][1] / window[0][1]));
    md.append('\n');
    QueryBench.appendResults(out, md);
  }
}
