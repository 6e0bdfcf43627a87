package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.RemoteCatalog;
import dev.floe.Result;
import dev.floe.Session;
import dev.floe.server.rest.RestServer;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What keeping the tables in a REST catalog costs (issue 22 item 3): the same statements through the embedded API
 * by a Floe on its own catalog.db and by a Floe on another Floe's REST catalog (served in this process, over
 * loopback HTTP), p50 and p99 of each: a one-row INSERT, a one-row UPDATE by key, a point lookup, a two-table
 * transaction block and CREATE + DROP TABLE. Results are appended to bench/RESULTS.md.
 *
 * <pre>bench/run remote [--iterations 200] [--rows 10000]</pre>
 */
public final class RemoteCatalogBench {
  public static void main(String[] args) throws Exception {
    int iterations = 200;
    int rows = 10_000;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--rows" -> rows = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = data.resolve("remote-catalog").toAbsolutePath();
    TransactionBench.deleteTree(root);
    List<String[]> table = new ArrayList<>();
    try (Database local = Floe.open(FloeConfig.builder(root.resolve("local")).fenced(true).build());
        Database serving = Floe.open(FloeConfig.builder(root.resolve("served")).fenced(true).build());
        RestServer server = RestServer.start(serving, RestServer.Config.defaults().withPort(0));
        Database remote = Floe.open(FloeConfig.builder(root.resolve("client")).fenced(true).remoteCatalog(
            RemoteCatalog.at(server.uri()).with("warehouse", root.resolve("served").toString())).build())) {
      double[][] l = measure(local, iterations, rows);
      double[][] r = measure(remote, iterations, rows);
      String[] what = {"one-row INSERT", "one-row UPDATE by key", "point lookup by key",
          "two-table block (BEGIN; 2 UPDATEs; COMMIT)", "CREATE TABLE + DROP TABLE"};
      for (int k = 0; k < what.length; k++) {
        table.add(row(what[k] + ", p50", pct(l[k], 50), pct(r[k], 50)));
        table.add(row(what[k] + ", p99", pct(l[k], 99), pct(r[k], 99)));
      }
    }
    write(out, iterations, rows, table, args);
  }

  /** Each measure's latencies in ms, sorted, after a warm-up of the same statements. */
  private static double[][] measure(Database db, int iterations, int rows) {
    try (Session s = db.connect()) {
      s.sql("CREATE TABLE a (id int PRIMARY KEY, v int)").close();
      s.sql("CREATE TABLE b (id int PRIMARY KEY, v int)").close();
      s.sql("INSERT INTO a SELECT i, 0 FROM range(" + rows + ") t(i)").close();
      s.sql("INSERT INTO b SELECT i, 0 FROM range(" + rows + ") t(i)").close();
      run(s, iterations / 4, rows, rows); // warm-up
      return run(s, iterations, rows, rows + iterations);
    }
  }

  /** The measures, {@code iterations} times; new rows get keys from {@code fresh} on. */
  private static double[][] run(Session s, int iterations, int rows, int fresh) {
    double[][] ms = new double[5][iterations];
    java.util.Random random = new java.util.Random(42);
    for (int i = 0; i < iterations; i++) {
      int key = random.nextInt(rows);
      ms[0][i] = timed(s, "INSERT INTO a VALUES (" + (fresh + i) + ", 1)");
      ms[1][i] = timed(s, "UPDATE a SET v = v + 1 WHERE id = " + key);
      ms[2][i] = timed(s, "SELECT v FROM b WHERE id = " + key);
      long t0 = System.nanoTime();
      s.sql("BEGIN").close();
      s.sql("UPDATE a SET v = v - 1 WHERE id = " + key).close();
      s.sql("UPDATE b SET v = v + 1 WHERE id = " + key).close();
      s.sql("COMMIT").close();
      ms[3][i] = (System.nanoTime() - t0) / 1e6;
      t0 = System.nanoTime();
      s.sql("CREATE TABLE scratch (id int)").close();
      s.sql("DROP TABLE scratch").close();
      ms[4][i] = (System.nanoTime() - t0) / 1e6;
    }
    for (double[] m : ms) {
      Arrays.sort(m);
    }
    return ms;
  }

  /** One statement's time in ms, its rows read. */
  static double timed(Session s, String sql) {
    long t0 = System.nanoTime();
    try (Result r = s.sql(sql)) {
      r.forEach(row -> { });
    }
    return (System.nanoTime() - t0) / 1e6;
  }

  /** A table row: the measure, both figures, and the second over the first. */
  static String[] row(String what, double local, double remote) {
    return new String[] {what, fmt(local) + " ms", fmt(remote) + " ms",
        String.format(Locale.ROOT, "%.1f", remote / local)};
  }

  static String fmt(double v) {
    return String.format(Locale.ROOT, v < 10 ? "%.2f" : "%.1f", v);
  }

  /** The {@code p}th percentile of sorted figures. */
  static double pct(double[] sorted, int p) {
    return sorted[Math.min(sorted.length - 1, (int) Math.floor(sorted.length * p / 100.0))];
  }

  private static void write(Path out, int iterations, int rows, List<String[]> table, String[] args)
      throws java.io.IOException {
    StringBuilder md = new StringBuilder();
    md.append("## Floe on a REST catalog vs on its own catalog.db — ").append(LocalDate.now()).append("\n\n");
    md.append("- Command: `bench/run remote").append(args.length > 0 ? " " + String.join(" ", args) : "")
        .append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append('\n');
    md.append(String.format(Locale.ROOT, "- The embedded API, one session; tables a and b of %,d rows with a primary "
        + "key. The REST catalog is a second Floe's (`RestServer`) in the same process, over loopback HTTP: every "
        + "statement loads its tables from it, and every commit is a POST of the change (several tables: "
        + "`/v1/transactions/commit`). %d iterations after a warm-up.%n%n", rows, iterations));
    md.append("| measure | own catalog.db | REST catalog | REST/own |\n|---|---:|---:|---:|\n");
    for (String[] r : table) {
      md.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    md.append('\n');
    QueryBench.appendResults(out, md);
  }
}
