package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.ObjectStore;
import dev.floe.Session;
import dev.floe.testing.S3Server;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What keeping a warehouse's tables on S3 costs (issue 22 item 4): the same statements through the embedded API on
 * a warehouse whose tables are in its directory and on one whose tables are on s3proxy (a real S3-compatible
 * server on loopback, started here, storing on the same disk): a bulk INSERT, a full aggregate with the local
 * copies present and after they were cleared (every data file fetched again), a point lookup, and a one-row INSERT
 * and UPDATE by key. Loopback s3proxy has no network latency: against AWS S3 each upload and fetch also pays a
 * round trip of tens of milliseconds. Results are appended to bench/RESULTS.md.
 *
 * <pre>bench/run s3 [--rows 1000000] [--iterations 50]</pre>
 */
public final class ObjectStoreBench {
  public static void main(String[] args) throws Exception {
    int rows = 1_000_000;
    int iterations = 50;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Integer.parseInt(args[++i]);
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = data.resolve("object-store").toAbsolutePath();
    TransactionBench.deleteTree(root);
    System.setProperty("floe.s3proxy.jar", "bench/target/s3proxy/s3proxy.jar");
    System.setProperty("floe.s3proxy.dir", root.resolve("s3").toString());
    S3Server.useCredentials();
    List<String[]> table = new ArrayList<>();
    try (S3Server s3 = S3Server.start(root.resolve("s3"))) {
      FloeConfig local = FloeConfig.builder(root.resolve("local")).fenced(true).build();
      FloeConfig onS3 = FloeConfig.builder(root.resolve("on-s3")).fenced(true)
          .objectStore(new ObjectStore("s3://" + S3Server.BUCKET + "/bench", s3.storage())).build();
      // a first round of each warms the JVM and the S3 client for both; the second round is reported
      measure(local, rows, iterations);
      measure(onS3, rows, iterations);
      double[][] l = measure(local, rows, iterations);
      double[][] r = measure(onS3, rows, iterations);
      String[] what = {"bulk INSERT of " + String.format(Locale.ROOT, "%,d", rows) + " rows",
          "full aggregate, local copies present (median)", "full aggregate, first after the copies were cleared",
          "point lookup by key, p50", "one-row INSERT, p50", "one-row UPDATE by key, p50"};
      for (int k = 0; k < what.length; k++) {
        table.add(RemoteCatalogBench.row(what[k], RemoteCatalogBench.pct(l[k], 50),
            RemoteCatalogBench.pct(r[k], 50)));
      }
    }
    write(out, rows, iterations, table, args);
  }

  /** Each measure's times in ms, sorted. */
  private static double[][] measure(FloeConfig config, int rows, int iterations) throws Exception {
    double[][] ms = new double[6][];
    TransactionBench.deleteTree(config.warehouse());
    config.objectStore().ifPresent(o -> {
      try {
        TransactionBench.deleteTree(Path.of(System.getProperty("floe.s3proxy.dir")).resolve("data")
            .resolve(S3Server.BUCKET).resolve("bench"));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    String aggregate = "SELECT count(*), sum(v), avg(k) FROM t";
    try (Database db = Floe.open(config); Session s = db.connect()) {
      s.sql("CREATE TABLE t (id bigint PRIMARY KEY, k int, v double precision, note text)").close();
      long t0 = System.nanoTime();
      s.sql("INSERT INTO t SELECT i, i % 1000, i * 0.5, 'note ' || (i % 97) FROM range(" + rows + ") r(i)").close();
      ms[0] = new double[] {(System.nanoTime() - t0) / 1e6};
      RemoteCatalogBench.timed(s, aggregate);
      ms[1] = new double[7];
      for (int i = 0; i < ms[1].length; i++) {
        ms[1][i] = RemoteCatalogBench.timed(s, aggregate);
      }
    }
    // the local copies of data files cleared (a restart on a fresh disk, or trimmed by the budget)
    Path copies = config.warehouse().resolve(".floe").resolve("objects");
    if (Files.isDirectory(copies)) {
      try (var files = Files.walk(copies)) {
        for (Path p : files.filter(p -> p.toString().endsWith(".parquet")).toList()) {
          Files.delete(p);
        }
      }
    }
    try (Database db = Floe.open(config); Session s = db.connect()) {
      ms[2] = new double[] {RemoteCatalogBench.timed(s, aggregate)};
      java.util.Random random = new java.util.Random(42);
      for (int i = 0; i < iterations / 5; i++) {
        RemoteCatalogBench.timed(s, "SELECT v FROM t WHERE id = " + random.nextInt(rows)); // warm-up
      }
      ms[3] = new double[iterations];
      ms[4] = new double[iterations];
      ms[5] = new double[iterations];
      for (int i = 0; i < iterations; i++) {
        int key = random.nextInt(rows);
        ms[3][i] = RemoteCatalogBench.timed(s, "SELECT v FROM t WHERE id = " + key);
        ms[4][i] = RemoteCatalogBench.timed(s, "INSERT INTO t VALUES (" + (rows + i) + ", 1, 1.0, 'new')");
        ms[5][i] = RemoteCatalogBench.timed(s, "UPDATE t SET v = v + 1 WHERE id = " + key);
      }
    }
    for (double[] m : ms) {
      Arrays.sort(m);
    }
    return ms;
  }

  private static void write(Path out, int rows, int iterations, List<String[]> table, String[] args)
      throws java.io.IOException {
    StringBuilder md = new StringBuilder();
    md.append("## A warehouse on S3 (s3proxy) vs in its directory — ").append(LocalDate.now()).append("\n\n");
    md.append("- Command: `bench/run s3").append(args.length > 0 ? " " + String.join(" ", args) : "").append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append('\n');
    md.append(String.format(Locale.ROOT, "- The embedded API, one session, a table of %,d rows (bigint key, int, "
        + "double, text). S3 is s3proxy on loopback over the same disk (no network latency; AWS S3 adds a round trip "
        + "per upload and fetch). Point lookups, INSERTs and UPDATEs: %d iterations after a warm-up. Each warehouse is measured twice, "
        + "alternately, and the second round is reported (the first warms the JVM and the S3 client).%n%n", rows,
        iterations));
    md.append("| measure | directory | S3 (s3proxy) | S3/directory |\n|---|---:|---:|---:|\n");
    for (String[] r : table) {
      md.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    md.append('\n');
    QueryBench.appendResults(out, md);
  }
}
