package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.server.pg.PgServer;
import java.io.IOException;
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
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Transaction blocks, Floe's server beside PostgreSQL 15 (REPEATABLE READ) on the same machine, through
 * pgjdbc: commit latency of a one-row and a two-table transaction, and the bank workload (transfers between
 * 20 accounts in two tables, retried on 40001) at 1, 2, 4 and 8 clients: committed transfers per second and
 * the share of attempts that failed with 40001 (or, in PostgreSQL, a deadlock). Results are appended to bench/RESULTS.md.
 *
 * <pre>bench/run transactions [--iterations 200] [--seconds 10] [--clients 1,2,4,8]</pre>
 */
public final class TransactionBench {
  private static final int ACCOUNTS = 20;

  public static void main(String[] args) throws Exception {
    int iterations = 200;
    int seconds = 10;
    int[] clientCounts = {1, 2, 4, 8};
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        case "--clients" -> clientCounts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path warehouse = data.resolve("transactions-warehouse").toAbsolutePath();
    deleteTree(warehouse);
    PgWireBench.Postgres pg = new PgWireBench.Postgres(data.resolve("pg15-transactions").toAbsolutePath(),
        freePort());
    List<String[]> table = new ArrayList<>();
    try (Database db = Floe.open(FloeConfig.builder(warehouse).fenced(true).build());
        PgServer floe = PgServer.start(db, PgServer.Config.defaults().withPort(0))) {
      pg.start();
      String floeUrl = "jdbc:postgresql://127.0.0.1:" + floe.port() + "/floe";
      String pgUrl = "jdbc:postgresql://127.0.0.1:" + pg.port + "/postgres";
      setUp(floeUrl, "");
      setUp(pgUrl, " PRIMARY KEY");
      System.err.println("transactions: warming up ...");
      latencies(floeUrl, iterations, false);
      latencies(pgUrl, iterations / 4, false);

      for (boolean twoTables : new boolean[] {false, true}) {
        double[][] f = latencies(floeUrl, iterations, twoTables);
        double[][] p = latencies(pgUrl, iterations, twoTables);
        String what = twoTables ? "two-table transaction (UPDATE a row of each table)" : "one-row transaction (UPDATE)";
        table.add(row("COMMIT of a " + what + ", p50", pct(f[0], 50), pct(p[0], 50), "ms"));
        table.add(row("whole " + what + " (BEGIN … COMMIT), p50", pct(f[1], 50), pct(p[1], 50), "ms"));
      }
      for (int clients : clientCounts) {
        double[] f = bank(floeUrl, clients, seconds);
        double[] p = bank(pgUrl, clients, seconds);
        table.add(new String[] {"bank workload, " + clients + " client" + (clients > 1 ? "s" : "")
            + ": committed transfers/s (share of attempts aborted: 40001, or PostgreSQL's 40P01)",
            String.format(Locale.ROOT, "%.1f/s (%.0f%%)", f[0], 100 * f[1]),
            String.format(Locale.ROOT, "%.1f/s (%.0f%%)", p[0], 100 * p[1]),
            String.format(Locale.ROOT, "%.3f", f[0] / p[0])});
      }
      for (String[] r : table) {
        System.err.println(String.join(" | ", r));
      }
    } finally {
      pg.stop();
    }
    write(out, iterations, seconds, table, args);
  }

  /** Two tables of 10 accounts each, 100 in every account. */
  private static void setUp(String url, String key) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "floe", ""); Statement st = c.createStatement()) {
      for (String t : List.of("bank_a", "bank_b")) {
        st.execute("DROP TABLE IF EXISTS " + t);
        st.execute("CREATE TABLE " + t + " (id integer NOT NULL" + key + ", balance integer NOT NULL)");
      }
      st.execute("INSERT INTO bank_a SELECT i, 100 FROM generate_series(0, 9) AS g(i)");
      st.execute("INSERT INTO bank_b SELECT i, 100 FROM generate_series(10, 19) AS g(i)");
    }
  }

  private static Connection connect(String url) throws SQLException {
    Connection c = DriverManager.getConnection(url, "floe", "");
    c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    c.setAutoCommit(false);
    return c;
  }

  /** COMMIT times and whole-transaction times, in ms, sorted. */
  private static double[][] latencies(String url, int n, boolean twoTables) throws SQLException {
    double[] commit = new double[n];
    double[] whole = new double[n];
    try (Connection c = connect(url);
        PreparedStatement a = c.prepareStatement("UPDATE bank_a SET balance = balance + 0 WHERE id = ?");
        PreparedStatement b = c.prepareStatement("UPDATE bank_b SET balance = balance + 0 WHERE id = ?")) {
      Random r = new Random(7);
      for (int i = 0; i < n; i++) {
        long t0 = System.nanoTime();
        a.setInt(1, r.nextInt(10));
        a.executeUpdate();
        if (twoTables) {
          b.setInt(1, 10 + r.nextInt(10));
          b.executeUpdate();
        }
        long t1 = System.nanoTime();
        c.commit();
        long t2 = System.nanoTime();
        commit[i] = (t2 - t1) / 1e6;
        whole[i] = (t2 - t0) / 1e6;
      }
    }
    Arrays.sort(commit);
    Arrays.sort(whole);
    return new double[][] {commit, whole};
  }

  /** Committed transfers per second, and the share of attempts that failed with 40001. */
  private static double[] bank(String url, int clients, int seconds) throws Exception {
    AtomicLong committed = new AtomicLong();
    AtomicLong aborted = new AtomicLong();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    List<Future<?>> futures = new ArrayList<>();
    long start = System.nanoTime();
    for (int k = 0; k < clients; k++) {
      long seed = 31L * k + 1;
      futures.add(pool.submit(() -> {
        Random r = new Random(seed);
        try (Connection c = connect(url)) {
          while (System.nanoTime() < deadline) {
            int from = r.nextInt(ACCOUNTS);
            int to = (from + 1 + r.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
            int amount = 1 + r.nextInt(5);
            try {
              int balance = balance(c, from);
              balance(c, to);
              if (balance >= amount) {
                move(c, from, -amount);
                move(c, to, amount);
              }
              c.commit();
              committed.incrementAndGet();
            } catch (SQLException e) {
              c.rollback();
              // 40001: a serialization failure (both); 40P01: a deadlock (PostgreSQL's row locks, taken
              // in the order the accounts come; Floe takes none)
              if (!"40001".equals(e.getSQLState()) && !"40P01".equals(e.getSQLState())) {
                throw e;
              }
              aborted.incrementAndGet();
            }
          }
        }
        return null;
      }));
    }
    for (Future<?> f : futures) {
      f.get();
    }
    pool.shutdown();
    double elapsed = (System.nanoTime() - start) / 1e9;
    long attempts = committed.get() + aborted.get();
    return new double[] {committed.get() / elapsed, attempts == 0 ? 0 : (double) aborted.get() / attempts};
  }

  private static String table(int account) {
    return account < 10 ? "bank_a" : "bank_b";
  }

  private static int balance(Connection c, int account) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT balance FROM " + table(account) + " WHERE id = ?")) {
      ps.setInt(1, account);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static void move(Connection c, int account, int amount) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + table(account) + " SET balance = balance + ? "
        + "WHERE id = ?")) {
      ps.setInt(1, amount);
      ps.setInt(2, account);
      ps.executeUpdate();
    }
  }

  private static String[] row(String what, double floe, double pg, String unit) {
    return new String[] {what, fmt(floe) + " " + unit, fmt(pg) + " " + unit,
        String.format(Locale.ROOT, "%.1f", floe / pg)};
  }

  private static String fmt(double v) {
    return String.format(Locale.ROOT, v < 10 ? "%.2f" : "%.1f", v);
  }

  private static double pct(double[] sorted, int p) {
    return sorted[Math.min(sorted.length - 1, (int) Math.floor(sorted.length * p / 100.0))];
  }

  static int freePort() throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private static void write(Path out, int iterations, int seconds, List<String[]> table, String[] args)
      throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("## Transactions: Floe server vs PostgreSQL 15 (REPEATABLE READ) — ").append(LocalDate.now())
        .append("\n\n");
    md.append("- Command: `bench/run transactions").append(args.length > 0 ? " " + String.join(" ", args) : "")
        .append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append("; PostgreSQL ")
        .append(PgWireBench.Postgres.version()).append(" (Debian package) on the same machine\n");
    md.append(String.format(Locale.ROOT, "- Two tables of 10 accounts (Floe: its default table format, "
        + "merge-on-read; PostgreSQL: heap tables with a primary key), pgjdbc %s with autocommit off and "
        + "REPEATABLE READ. Latency: %d transactions each after warm-up. Bank: each client repeatedly reads two "
        + "random accounts, moves 1–5 between them (often across the two tables) and commits; a 40001 is "
        + "rolled back and counted (so is PostgreSQL's deadlock, 40P01); %d s per client count.%n%n",
        org.postgresql.Driver.getVersion(), iterations, seconds));
    md.append("| measure | Floe | PostgreSQL | Floe/PostgreSQL |\n|---|---:|---:|---:|\n");
    for (String[] r : table) {
      md.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    md.append('\n');
    QueryBench.appendResults(out, md);
  }
}
