package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.Session;
import dev.floe.server.pg.PgServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The OLTP benchmark (issue 19): Floe's server beside a real PostgreSQL 15, both started here, through
 * pgbench with prepared statements on a table of {@code --rows} accounts with a primary key.
 *
 * <ul>
 *   <li>the mix {@code UPDATE acc SET bal = bal + 1 WHERE id = :id; SELECT bal FROM acc WHERE id = :id} at
 *       each client count: tps, failed transactions, average latency, the first and last interval's tps,
 *       and the Floe table's files and bytes at the end. Floe's table has a keyed tail (the default
 *       advancer seals it);
 *   <li>the same mix's UPDATE alone on a Floe table without a tail (synchronous: one Iceberg commit per
 *       statement), to compare the two write paths;
 *   <li>prepared point lookups at 4 clients (tps, p50 from pgbench's per-transaction log);
 *   <li>single-row autocommit INSERTs at 4 clients into a keyed tail, and into a table without a key,
 *       synchronous (group commit) and with a tail;
 *   <li>a keyed upsert's acknowledgement latency (p50, p99), embedded (Session API) and over pgwire (pgjdbc).
 * </ul>
 */
public final class OltpBench {
  private static final String MIX = "\\set id random(1, %d)\nUPDATE acc SET bal = bal + 1 WHERE id = :id;\n"
      + "SELECT bal FROM acc WHERE id = :id;\n";
  /** The mix inside a transaction block, as a driver with autocommit off sends it. */
  private static final String BLOCK_MIX = "\\set id random(1, %d)\nBEGIN;\nUPDATE acc SET bal = bal + 1 WHERE id = :id;\n"
      + "SELECT bal FROM acc WHERE id = :id;\nEND;\n";
  private static final String SYNC_UPDATE = "\\set id random(1, %d)\nUPDATE acc_sync SET bal = bal + 1 WHERE id = :id;\n";
  private static final String LOOKUP = "\\set id random(1, %d)\nSELECT bal FROM acc WHERE id = :id;\n";
  private static final String INSERT_KEYED = "\\set id random(%d, 1000000000000)\n"
      + "INSERT INTO ins_keyed VALUES (:id, 1);\n";
  private static final String INSERT_PLAIN = "\\set id random(1, 1000000000000)\nINSERT INTO ins_plain VALUES (:id, 1);\n";
  private static final String INSERT_TAIL = "\\set id random(1, 1000000000000)\nINSERT INTO ins_tail VALUES (:id, 1);\n";

  public static void main(String[] args) throws Exception {
    long rows = 1_000_000;
    int seconds = 60;
    int[] clientCounts = {1, 4, 8};
    int upserts = 2000;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[++i]);
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        case "--clients" -> clientCounts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
        case "--upserts" -> upserts = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path warehouse = data.resolve("oltp-warehouse").toAbsolutePath();
    TransactionBench.deleteTree(warehouse);
    PgWireBench.Postgres pg = new PgWireBench.Postgres(data.resolve("pg15-oltp").toAbsolutePath(),
        TransactionBench.freePort());
    List<String[]> table = new ArrayList<>();
    try (Database db = Floe.open(FloeConfig.builder(warehouse).fenced(true).build());
        PgServer floe = PgServer.start(db, PgServer.Config.defaults().withPort(0));
        AutoCloseable advancer = db.startTailAdvancer(Duration.ofSeconds(1)); // as floe serve runs it,
        AutoCloseable maintainer = db.startMaintainer(Duration.ofSeconds(30))) { // both at its defaults
      pg.start();
      String floeUrl = "jdbc:postgresql://127.0.0.1:" + floe.port() + "/floe";
      String pgUrl = "jdbc:postgresql://127.0.0.1:" + pg.port + "/postgres";
      System.err.println("oltp: loading " + rows + " accounts into each ...");
      setUp(db, rows);
      setUpPostgres(pgUrl, rows);

      for (int clients : clientCounts) {
        Pgbench f = pgbench(floe.port(), "floe", clients, seconds, String.format(Locale.ROOT, MIX, rows), null);
        Pgbench p = pgbench(pg.port, "postgres", clients, seconds, String.format(Locale.ROOT, MIX, rows), null);
        String what = "UPDATE + SELECT by key, " + clients + " client" + (clients > 1 ? "s" : "") + ", " + seconds + " s";
        table.add(ratio(what + ": tps", f.tps, p.tps, "tps"));
        table.add(new String[] {what + ": failed transactions", Long.toString(f.failed), Long.toString(p.failed), ""});
        table.add(ratio(what + ": latency average", f.latency, p.latency, "ms"));
        table.add(new String[] {what + ": Floe's tps, last interval / first", String.format(Locale.ROOT,
            "%.0f → %.0f (%.2f)", f.firstInterval, f.lastInterval, f.lastInterval / f.firstInterval), "", ""});
      }
      Pgbench fBlock = pgbench(floe.port(), "floe", 4, Math.min(seconds, 30),
          String.format(Locale.ROOT, BLOCK_MIX, rows), null);
      Pgbench pBlock = pgbench(pg.port, "postgres", 4, Math.min(seconds, 30),
          String.format(Locale.ROOT, BLOCK_MIX, rows), null);
      table.add(ratio("the mix in a transaction block (BEGIN; UPDATE; SELECT; END), 4 clients: tps", fBlock.tps,
          pBlock.tps, "tps"));
      table.add(new String[] {"the mix in a transaction block, 4 clients: failed transactions (40001)",
          Long.toString(fBlock.failed), Long.toString(pBlock.failed), ""});
      table.add(new String[] {"Floe's keyed-tail table after the mix: data files, delete files, bytes on disk "
          + "(data + metadata) / bytes of its live rows' Parquet", files(db, warehouse), "", ""});

      for (int clients : clientCounts) {
        Pgbench f = pgbench(floe.port(), "floe", clients, Math.min(seconds, 30),
            String.format(Locale.ROOT, SYNC_UPDATE, rows), null);
        table.add(new String[] {"synchronous one-row UPDATE (a Floe table without a tail), " + clients + " client"
            + (clients > 1 ? "s" : "") + ": tps (failed: 40001)", String.format(Locale.ROOT, "%.1f (%d failed)",
            f.tps, f.failed), "", ""});
      }

      Path logs = Files.createTempDirectory("oltp-pgbench-logs");
      Pgbench f = pgbench(floe.port(), "floe", 4, Math.min(seconds, 30), String.format(Locale.ROOT, LOOKUP, rows),
          logs.resolve("floe"));
      Pgbench p = pgbench(pg.port, "postgres", 4, Math.min(seconds, 30), String.format(Locale.ROOT, LOOKUP, rows),
          logs.resolve("pg"));
      table.add(ratio("prepared point lookup `SELECT bal FROM acc WHERE id = $1`, 4 clients: tps", f.tps, p.tps, "tps"));
      table.add(ratio("prepared point lookup, 4 clients: p50", f.p50, p.p50, "ms"));

      f = pgbench(floe.port(), "floe", 4, Math.min(seconds, 30), String.format(Locale.ROOT, INSERT_KEYED, rows + 1),
          null);
      Pgbench fPlain = pgbench(floe.port(), "floe", 4, Math.min(seconds, 30), INSERT_PLAIN, null);
      Pgbench fTail = pgbench(floe.port(), "floe", 4, Math.min(seconds, 30), INSERT_TAIL, null);
      p = pgbench(pg.port, "postgres", 4, Math.min(seconds, 30), String.format(Locale.ROOT, INSERT_KEYED, rows + 1),
          null);
      Pgbench pPlain = pgbench(pg.port, "postgres", 4, Math.min(seconds, 30), INSERT_PLAIN, null);
      table.add(ratio("single-row autocommit INSERT, 4 clients, into a keyed tail (PostgreSQL: a table with a "
          + "primary key): tps", f.tps, p.tps, "tps"));
      table.add(ratio("single-row autocommit INSERT, 4 clients, into a table without a key, synchronous (no tail; "
          + "group commit; PostgreSQL: a table without a key): tps", fPlain.tps, pPlain.tps, "tps"));
      table.add(ratio("single-row autocommit INSERT, 4 clients, into a table without a key, with a tail "
          + "(PostgreSQL: a table without a key): tps", fTail.tps, pPlain.tps, "tps"));

      double[] embedded = embeddedUpserts(db, upserts, rows);
      double[] wire = wireUpserts(floeUrl, upserts, rows);
      double[] pgWire = wireUpserts(pgUrl, upserts, rows);
      table.add(ratio("keyed upsert `INSERT … ON CONFLICT (id) DO UPDATE`, 1 client, ack p50 over pgwire", wire[0],
          pgWire[0], "ms"));
      table.add(ratio("keyed upsert, ack p99 over pgwire", wire[1], pgWire[1], "ms"));
      table.add(new String[] {"keyed upsert, ack p50 / p99 embedded (Session API)", String.format(Locale.ROOT,
          "%.3f / %.3f ms", embedded[0], embedded[1]), "", ""});
      for (String[] r : table) {
        System.err.println(String.join(" | ", r));
      }
    } finally {
      pg.stop();
    }
    write(out, rows, seconds, table, args);
  }

  private static void setUp(Database db, long rows) {
    db.sql("CREATE TABLE acc (id bigint PRIMARY KEY, bal bigint NOT NULL) WITH (tail = true)").close();
    db.sql("INSERT INTO acc SELECT i, 0 FROM range(1, " + (rows + 1) + ") t(i)").close();
    db.openLog("acc").seal(true);
    db.sql("CREATE TABLE acc_sync (id bigint PRIMARY KEY, bal bigint NOT NULL)").close();
    db.sql("INSERT INTO acc_sync SELECT i, 0 FROM range(1, " + (rows + 1) + ") t(i)").close();
    db.sql("CREATE TABLE ins_keyed (id bigint PRIMARY KEY, v int) WITH (tail = true)").close();
    db.sql("CREATE TABLE ins_plain (id bigint, v int)").close();
    db.sql("CREATE TABLE ins_tail (id bigint, v int) WITH (tail = true)").close();
  }

  private static void setUpPostgres(String url, long rows) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "floe", ""); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS acc");
      st.execute("DROP TABLE IF EXISTS ins_keyed");
      st.execute("DROP TABLE IF EXISTS ins_plain");
      st.execute("CREATE TABLE acc (id bigint PRIMARY KEY, bal bigint NOT NULL)");
      st.execute("INSERT INTO acc SELECT i, 0 FROM generate_series(1, " + rows + ") AS g(i)");
      st.execute("CREATE TABLE ins_keyed (id bigint PRIMARY KEY, v int)");
      st.execute("CREATE TABLE ins_plain (id bigint, v int)");
      st.execute("VACUUM ANALYZE acc");
    }
  }

  /** What one pgbench run reported. */
  record Pgbench(double tps, long failed, double latency, double firstInterval, double lastInterval, double p50) {}

  private static final Pattern TPS = Pattern.compile("tps = ([0-9.]+)");
  private static final Pattern FAILED = Pattern.compile("number of failed transactions: (\\d+)");
  private static final Pattern LATENCY = Pattern.compile("latency average = ([0-9.]+) ms");
  private static final Pattern PROGRESS = Pattern.compile("progress: [0-9.]+ s, ([0-9.]+) tps");

  /** Runs pgbench (prepared statements); with {@code log}, a per-transaction log there gives the p50. */
  private static Pgbench pgbench(int port, String database, int clients, int seconds, String script, Path log)
      throws IOException, InterruptedException {
    Path file = Files.createTempFile("oltp", ".sql");
    Files.writeString(file, script);
    int interval = Math.max(1, seconds / 6);
    List<String> cmd = new ArrayList<>(List.of(PgWireBench.Postgres.tool("pgbench"), "-n", "-M", "prepared", "-c",
        Integer.toString(clients), "-j", Integer.toString(Math.min(clients, 2)), "-T", Integer.toString(seconds),
        "-P", Integer.toString(interval), "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "floe", "-f",
        file.toString()));
    if (log != null) {
      Files.createDirectories(log);
      cmd.addAll(List.of("-l", "--log-prefix=" + log.resolve("tx")));
    }
    cmd.add(database);
    System.err.println("oltp: " + database + ", " + clients + " clients, " + seconds + " s: " + script.lines()
        .skip(1).findFirst().orElse(""));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    Files.deleteIfExists(file);
    Matcher tps = TPS.matcher(output);
    if (!tps.find()) {
      throw new IllegalStateException("pgbench printed no tps:\n" + output);
    }
    Matcher failed = FAILED.matcher(output);
    Matcher latency = LATENCY.matcher(output);
    List<Double> intervals = new ArrayList<>();
    Matcher progress = PROGRESS.matcher(output);
    while (progress.find()) {
      intervals.add(Double.parseDouble(progress.group(1)));
    }
    double p50 = Double.NaN;
    if (log != null) {
      List<Double> micros = new ArrayList<>();
      try (var files = Files.list(log)) {
        for (Path f : files.toList()) {
          for (String line : Files.readAllLines(f)) {
            String[] cols = line.split(" ");
            if (cols.length > 2) {
              micros.add(Double.parseDouble(cols[2]));
            }
          }
        }
      }
      micros.sort(null);
      p50 = micros.isEmpty() ? Double.NaN : micros.get(micros.size() / 2) / 1000.0;
    }
    return new Pgbench(Double.parseDouble(tps.group(1)), failed.find() ? Long.parseLong(failed.group(1)) : 0,
        latency.find() ? Double.parseDouble(latency.group(1)) : Double.NaN,
        intervals.isEmpty() ? Double.NaN : intervals.get(0),
        intervals.isEmpty() ? Double.NaN : intervals.get(intervals.size() - 1), p50);
  }

  /** Keyed upserts through the embedded Session API: p50 and p99 of the statement's return, ms. */
  private static double[] embeddedUpserts(Database db, int n, long rows) {
    double[] ms = new double[n];
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(7);
    try (Session s = db.connect()) {
      for (int i = -n / 4; i < n; i++) {
        long id = 1 + rnd.nextLong(rows);
        long t0 = System.nanoTime();
        s.sql("INSERT INTO acc VALUES (" + id + ", " + i + ") ON CONFLICT (id) DO UPDATE SET bal = excluded.bal")
            .close();
        if (i >= 0) {
          ms[i] = (System.nanoTime() - t0) / 1e6;
        }
      }
    }
    Arrays.sort(ms);
    return new double[] {ms[n / 2], ms[n * 99 / 100]};
  }

  /** Keyed upserts through pgjdbc (a prepared statement, autocommit): p50 and p99, ms. */
  private static double[] wireUpserts(String url, int n, long rows) throws SQLException {
    double[] ms = new double[n];
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(8);
    try (Connection c = DriverManager.getConnection(url, "floe", "");
        PreparedStatement ps = c.prepareStatement("INSERT INTO acc VALUES (?, ?) ON CONFLICT (id) DO UPDATE "
            + "SET bal = excluded.bal")) {
      for (int i = -n / 4; i < n; i++) {
        ps.setLong(1, 1 + rnd.nextLong(rows));
        ps.setLong(2, i);
        long t0 = System.nanoTime();
        ps.executeUpdate();
        if (i >= 0) {
          ms[i] = (System.nanoTime() - t0) / 1e6;
        }
      }
    }
    Arrays.sort(ms);
    return new double[] {ms[n / 2], ms[n * 99 / 100]};
  }

  /** The table's data and delete files, and its bytes on disk against its live data files' bytes. */
  private static String files(Database db, Path warehouse) throws IOException {
    long data = 0;
    long deletes = 0;
    long liveBytes = 0;
    try (Result r = db.sql("SELECT content, count(*), sum(file_size_in_bytes) FROM \"acc$files\" GROUP BY content")) {
      for (Row row : r) {
        if (row.getLong(0) == 0) {
          data = row.getLong(1);
          liveBytes = row.getLong(2);
        } else {
          deletes += row.getLong(1);
        }
      }
    }
    long disk = 0;
    Path dir = warehouse.resolve("public").resolve("acc");
    try (var walk = Files.walk(dir)) {
      for (Path f : walk.filter(Files::isRegularFile).toList()) {
        disk += Files.size(f);
      }
    }
    return String.format(Locale.ROOT, "%d data, %d delete, %.1f MB on disk / %.1f MB (%.2f×)", data, deletes,
        disk / 1e6, liveBytes / 1e6, (double) disk / liveBytes);
  }

  private static String[] ratio(String what, double floe, double pg, String unit) {
    return new String[] {what, fmt(floe) + " " + unit, fmt(pg) + " " + unit, String.format(Locale.ROOT, "%.3f",
        floe / pg)};
  }

  private static String fmt(double v) {
    return v >= 100 ? String.format(Locale.ROOT, "%,.0f", v) : String.format(Locale.ROOT, "%.3f", v);
  }

  private static void write(Path out, long rows, int seconds, List<String[]> table, String[] args) throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("## OLTP: Floe server (keyed tail) vs PostgreSQL 15 — ").append(LocalDate.now()).append("\n\n");
    md.append("- Command: `bench/run oltp").append(args.length > 0 ? " " + String.join(" ", args) : "")
        .append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append("; PostgreSQL ")
        .append(PgWireBench.Postgres.version()).append(" (Debian package, heap table with a primary key) on the "
            + "same machine\n");
    md.append(String.format(Locale.ROOT, "- %,d accounts `acc (id bigint PRIMARY KEY, bal bigint)`; Floe's with a "
        + "keyed tail, sealed by the server's advancer (every 1 s, by the default triggers); pgbench -M prepared, "
        + "%d s per client count for the mix (other measures up to 30 s).%n%n", rows, seconds));
    md.append("| measure | Floe | PostgreSQL | Floe/PostgreSQL |\n|---|---:|---:|---:|\n");
    for (String[] r : table) {
      md.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    md.append('\n');
    QueryBench.appendResults(out, md);
  }

  private OltpBench() {}
}
