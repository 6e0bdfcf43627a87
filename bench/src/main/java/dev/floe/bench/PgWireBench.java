package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.server.pg.PgServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Floe's PostgreSQL server beside a real PostgreSQL 15 on the same machine and the same rows, measured
 * through the same clients: point lookups through pgjdbc prepared statements, select-only throughput with
 * pgbench, a filtered aggregate, and a 1M-row result transfer. Appends the Floe/PostgreSQL ratios to
 * bench/RESULTS.md.
 *
 * <p>The data is QueryBench's {@code events} table (generated once by Floe); PostgreSQL gets the same
 * rows through COPY of a CSV DuckDB writes from Floe's Parquet files, with a primary key on {@code id}
 * (Floe's table is sorted by id, which is what its point lookups prune with). PostgreSQL's cluster is
 * created once under bench/data and started for each run.
 */
public final class PgWireBench {
  private static final String LOOKUP = "SELECT * FROM events WHERE id = ?";
  private static final String AGGREGATE = "SELECT category, count(*), sum(amount) FROM events WHERE user_id < 1000 "
      + "GROUP BY category ORDER BY 1";
  private static final String TRANSFER = "SELECT * FROM events WHERE id < 1000000";

  public static void main(String[] args) throws Exception {
    long rows = 10_000_000L;
    int lookups = 2000;
    int warmups = 200;
    int seconds = 10;
    int clients = 4;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[++i].replace("_", ""));
        case "--lookups" -> lookups = Integer.parseInt(args[++i]);
        case "--warmups" -> warmups = Integer.parseInt(args[++i]);
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        case "--clients" -> clients = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path warehouse = data.resolve("events-" + rows).toAbsolutePath();
    List<String> files;
    try (Database db = Floe.open(FloeConfig.builder(warehouse).build())) {
      QueryBench.generate(db, rows, Math.max(1000, rows / 100));
      files = dataFiles(db);
    }
    Postgres pg = new Postgres(data.resolve("pg15-events-" + rows).toAbsolutePath(), freePort());
    List<String[]> table = new ArrayList<>();
    try (Database db = Floe.open(FloeConfig.builder(warehouse).fenced(true).build());
        PgServer floe = PgServer.start(db, PgServer.Config.defaults().withPort(0))) {
      pg.start();
      pg.loadIfNeeded(files, rows);
      String floeUrl = "jdbc:postgresql://127.0.0.1:" + floe.port() + "/floe";
      String pgUrl = "jdbc:postgresql://127.0.0.1:" + pg.port + "/postgres";

      double[] floeLookups = lookups(floeUrl, lookups, warmups, rows);
      double[] pgLookups = lookups(pgUrl, lookups, warmups, rows);
      table.add(row("point lookup p50 (pgjdbc prepared, `" + LOOKUP + "`)", pct(floeLookups, 50), pct(pgLookups, 50),
          "ms"));
      table.add(row("point lookup p99", pct(floeLookups, 99), pct(pgLookups, 99), "ms"));

      double floeAgg = median(repeat(floeUrl, AGGREGATE, 5));
      double pgAgg = median(repeat(pgUrl, AGGREGATE, 5));
      table.add(row("filtered aggregate (`" + AGGREGATE + "`), median of 5", floeAgg, pgAgg, "ms"));

      double floeTransfer = median(transfer(floeUrl, 3));
      double pgTransfer = median(transfer(pgUrl, 3));
      table.add(row("1M-row result transfer (`" + TRANSFER + "`, fetch size 10,000, every column read), median of 3",
          floeTransfer, pgTransfer, "ms"));

      double floeTps = pgbench(floe.port(), "floe", clients, seconds, rows);
      double pgTps = pgbench(pg.port, "postgres", clients, seconds, rows);
      table.add(new String[] {"select-only throughput, pgbench `-M prepared -c " + clients + " -j 2 -T " + seconds
          + "` (`SELECT amount FROM events WHERE id = :id`, random id)", fmt(floeTps) + " tps", fmt(pgTps) + " tps",
          String.format(Locale.ROOT, "%.3f", floeTps / pgTps)});
      for (String[] r : table) {
        System.err.println(String.join(" | ", r));
      }
    } finally {
      pg.stop();
    }
    write(out, rows, lookups, warmups, table, args);
  }

  private static String[] row(String what, double floe, double pg, String unit) {
    return new String[] {what, fmt(floe) + " " + unit, fmt(pg) + " " + unit,
        String.format(Locale.ROOT, "%.2f", floe / pg)};
  }

  private static String fmt(double v) {
    return v >= 100 ? String.format(Locale.ROOT, "%,.0f", v) : String.format(Locale.ROOT, "%.2f", v);
  }

  private static Connection connect(String url) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", "floe");
    return DriverManager.getConnection(url, p);
  }

  /** Point lookups of random ids (the same sequence for both servers), after {@code warmups} others. */
  private static double[] lookups(String url, int n, int warmups, long rows) throws SQLException {
    try (Connection c = connect(url); PreparedStatement ps = c.prepareStatement(LOOKUP)) {
      Random r = new Random(42);
      double[] ms = new double[n];
      for (int i = -warmups; i < n; i++) {
        ps.setLong(1, Math.floorMod(r.nextLong(), rows));
        long t0 = System.nanoTime();
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            throw new IllegalStateException("lookup found nothing on " + url);
          }
        }
        if (i >= 0) {
          ms[i] = (System.nanoTime() - t0) / 1e6;
        }
      }
      Arrays.sort(ms);
      return ms;
    }
  }

  private static double[] repeat(String url, String sql, int n) throws SQLException {
    try (Connection c = connect(url); Statement st = c.createStatement()) {
      double[] ms = new double[n];
      for (int i = -1; i < n; i++) {
        long t0 = System.nanoTime();
        try (ResultSet rs = st.executeQuery(sql)) {
          while (rs.next()) {
            rs.getObject(3);
          }
        }
        if (i >= 0) {
          ms[i] = (System.nanoTime() - t0) / 1e6;
        }
      }
      return ms;
    }
  }

  private static double[] transfer(String url, int n) throws SQLException {
    try (Connection c = connect(url)) {
      c.setAutoCommit(false); // pgjdbc streams with a fetch size only inside a transaction
      double[] ms = new double[n];
      for (int i = -1; i < n; i++) {
        long t0 = System.nanoTime();
        long count = 0;
        try (Statement st = c.createStatement()) {
          st.setFetchSize(10_000);
          try (ResultSet rs = st.executeQuery(TRANSFER)) {
            int cols = rs.getMetaData().getColumnCount();
            while (rs.next()) {
              for (int k = 1; k <= cols; k++) {
                rs.getObject(k);
              }
              count++;
            }
          }
        }
        c.commit();
        if (count != 1_000_000) {
          throw new IllegalStateException(url + " returned " + count + " rows");
        }
        if (i >= 0) {
          ms[i] = (System.nanoTime() - t0) / 1e6;
        }
      }
      return ms;
    }
  }

  private static double pgbench(int port, String database, int clients, int seconds, long rows)
      throws IOException, InterruptedException {
    Path script = Files.createTempFile("pgbench-select", ".sql");
    Files.writeString(script, "\\set id random(0, " + (rows - 1) + ")\nSELECT amount FROM events WHERE id = :id;\n");
    try {
      List<String> cmd = List.of(Postgres.tool("pgbench"), "-n", "-M", "prepared", "-c", Integer.toString(clients), "-j",
          "2", "-T", Integer.toString(seconds), "-f", script.toString(), "-h", "127.0.0.1", "-p", Integer.toString(port),
          "-U", "floe", database);
      String output = Postgres.run(cmd, false);
      Matcher m = Pattern.compile("tps = ([0-9.]+) \\(without initial connection time\\)").matcher(output);
      Matcher failed = Pattern.compile("number of failed transactions: (\\d+)").matcher(output);
      if (!m.find()) {
        throw new IllegalStateException("pgbench printed no tps:\n" + output);
      }
      if (failed.find() && !failed.group(1).equals("0")) {
        throw new IllegalStateException("pgbench transactions failed:\n" + output);
      }
      return Double.parseDouble(m.group(1));
    } finally {
      Files.deleteIfExists(script);
    }
  }

  private static List<String> dataFiles(Database db) {
    List<String> files = new ArrayList<>();
    try (Result r = db.sql("SELECT file_path FROM \"events$files\" WHERE content = 0")) {
      for (Row row : r) {
        String p = row.getString(0);
        files.add(p.startsWith("file:") ? Path.of(java.net.URI.create(p)).toString() : p);
      }
    }
    return files;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static double pct(double[] sorted, int p) {
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * p / 100.0) - 1)];
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  private static void write(Path out, long rows, int lookups, int warmups, List<String[]> table, String[] args)
      throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("## PostgreSQL protocol: Floe server vs PostgreSQL 15 — ").append(LocalDate.now()).append("\n\n");
    md.append("- Command: `bench/run pgwire").append(args.length > 0 ? " " + String.join(" ", args) : "").append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append("; PostgreSQL ").append(Postgres.version())
        .append(" (Debian package, `shared_buffers=512MB`, otherwise defaults) on the same machine\n");
    md.append(String.format(Locale.ROOT, "- Data: QueryBench's `events`, %,d rows, the same rows in both; Floe: "
        + "the Iceberg table sorted by `id` (no index; files and row groups pruned by `id`), PostgreSQL: a heap "
        + "table with a primary key on `id`, vacuumed and analyzed. Both servers on loopback, reached through the "
        + "same clients (pgjdbc %s, pgbench); %,d point lookups after %,d warm-ups, the same ids for both.%n%n",
        rows, org.postgresql.Driver.getVersion(), lookups, warmups));
    md.append("| measure | Floe | PostgreSQL | Floe/PostgreSQL |\n|---|---:|---:|---:|\n");
    for (String[] r : table) {
      md.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    md.append('\n');
    QueryBench.appendResults(out, md);
  }

  /** A PostgreSQL cluster of the Debian package, created once, run as the postgres user when we are root. */
  static final class Postgres {
    final Path dir;
    final int port;

    Postgres(Path dir, int port) {
      this.dir = dir;
      this.port = port;
    }

    static String bin() {
      Path base = Path.of("/usr/lib/postgresql");
      try (var versions = Files.list(base)) {
        return versions.filter(p -> Files.isExecutable(p.resolve("bin/initdb")))
            .max(Comparator.comparingInt(p -> Integer.parseInt(p.getFileName().toString().replaceAll("\\D", "0"))))
            .map(p -> p.resolve("bin").toString())
            .orElseThrow(() -> new IllegalStateException("no PostgreSQL server under " + base
                + ": install it with `apt-get install postgresql` (.ci/install-clients does)"));
      } catch (IOException e) {
        throw new IllegalStateException("no PostgreSQL server under " + base + ": " + e.getMessage(), e);
      }
    }

    static String tool(String name) {
      Path p = Path.of(bin(), name);
      return Files.isExecutable(p) ? p.toString() : name;
    }

    static String version() {
      try {
        return run(List.of(tool("postgres"), "--version"), false).replace("postgres (PostgreSQL) ", "").strip();
      } catch (IOException | InterruptedException e) {
        return "15";
      }
    }

    private static boolean root() {
      return "root".equals(System.getProperty("user.name"));
    }

    /** Runs a PostgreSQL program, as the postgres user if needed (initdb and postgres refuse root). */
    static String run(List<String> cmd, boolean asPostgres) throws IOException, InterruptedException {
      List<String> full = new ArrayList<>();
      if (asPostgres && root()) {
        full.addAll(List.of("runuser", "-u", "postgres", "--"));
      }
      full.addAll(cmd);
      Process p = new ProcessBuilder(full).redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes());
      if (p.waitFor() != 0) {
        throw new IllegalStateException(String.join(" ", full) + " failed:\n" + output);
      }
      return output;
    }

    void start() throws IOException, InterruptedException {
      if (!Files.exists(dir.resolve("PG_VERSION"))) {
        Files.createDirectories(dir);
        if (root()) {
          run(List.of("chown", "postgres:postgres", dir.toString()), false);
        }
        run(List.of(tool("initdb"), "-D", dir.toString(), "-U", "floe", "--auth=trust", "-E", "UTF8", "--locale=C",
            "--no-sync"), true);
      }
      run(List.of(tool("pg_ctl"), "-D", dir.toString(), "-l", dir.resolve("server.log").toString(), "-w", "-t", "120",
          "-o", "-p " + port + " -k /tmp -c listen_addresses=127.0.0.1 -c shared_buffers=512MB", "start"), true);
    }

    void stop() {
      try {
        if (Files.exists(dir.resolve("postmaster.pid"))) {
          run(List.of(tool("pg_ctl"), "-D", dir.toString(), "-m", "fast", "-w", "stop"), true);
        }
      } catch (IOException | InterruptedException | RuntimeException e) {
        System.err.println("could not stop PostgreSQL: " + e.getMessage());
      }
    }

    /** Loads the Parquet files' rows once: COPY of a CSV that DuckDB writes, then the primary key. */
    void loadIfNeeded(List<String> files, long rows) throws Exception {
      String url = "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
      try (Connection c = connect(url); Statement st = c.createStatement()) {
        try (ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_class WHERE relname = 'events_loaded'")) {
          rs.next();
          if (rs.getLong(1) > 0) {
            return;
          }
        }
        System.err.println("loading " + rows + " rows into PostgreSQL (once) ...");
        long t0 = System.nanoTime();
        Path csv = Path.of("/tmp/floe-bench-events-" + rows + ".csv");
        try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement d = duck.createStatement()) {
          String list = files.stream().map(f -> "'" + f.replace("'", "''") + "'").reduce((a, b) -> a + ", " + b)
              .orElseThrow();
          d.execute("SET TimeZone = 'UTC'");
          d.execute("COPY (SELECT id, ts, user_id, category, amount, quantity, note FROM read_parquet([" + list
              + "]) ORDER BY id) TO '" + csv + "' (FORMAT csv, HEADER false)");
        }
        csv.toFile().setReadable(true, false);
        try {
          st.execute("DROP TABLE IF EXISTS events");
          st.execute("CREATE TABLE events (id bigint NOT NULL, ts timestamptz, user_id integer, category varchar, "
              + "amount numeric(12,2), quantity integer, note varchar)");
          st.execute("SET TimeZone = 'UTC'");
          st.execute("COPY events FROM '" + csv + "' (FORMAT csv)");
          st.execute("ALTER TABLE events ADD PRIMARY KEY (id)");
          st.execute("VACUUM ANALYZE events");
          st.execute("CREATE TABLE events_loaded (at timestamptz DEFAULT now())");
        } finally {
          Files.deleteIfExists(csv);
        }
        System.err.printf("loaded in %.1f s%n", (System.nanoTime() - t0) / 1e9);
      }
    }
  }

  private PgWireBench() {}
}
