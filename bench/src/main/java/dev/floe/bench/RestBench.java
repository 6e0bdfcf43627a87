package dev.floe.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Floe's REST catalog as other engines use it (issue 22), side by side in one run on the same table: small queries
 * (a point lookup, a filtered aggregate, a top-N) and a full aggregate through Floe's own PostgreSQL port (pgjdbc),
 * through Spark local over Floe's REST catalog (a child JVM with the bench-spark module's classpath, as
 * MutationBench's Spark) and through Trino (the trino-server tarball, started with the trino-harness module);
 * their start-ups; and the freshness of a table with a tail: from an INSERT's acknowledgement to the first REST load
 * whose table holds the row, at the default bound ({@code floe.tail.rest-freshness-ms} = 1000) and at 200 ms, and to
 * the first Trino query that counts it.
 */
public final class RestBench {
  private RestBench() {}

  static final String TRINO_VERSION = "476";

  public static void main(String[] args) throws Exception {
    long rows = 10_000_000;
    int runs = 9;
    int sparkRuns = 5;
    int appends = 30;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    Path sparkClasspath = Path.of("bench/target/spark-classpath.txt");
    String label = "";
    Path trinoTarball = Path.of(System.getProperty("user.home"), ".m2", "repository", "io", "trino", "trino-server",
        TRINO_VERSION, "trino-server-" + TRINO_VERSION + ".tar.gz");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[++i].replace("_", ""));
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--spark-runs" -> sparkRuns = Integer.parseInt(args[++i]);
        case "--appends" -> appends = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--spark-classpath" -> sparkClasspath = Path.of(args[++i]);
        case "--label" -> label = args[++i];
        case "--trino-tarball" -> trinoTarball = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path warehouse = data.resolve("rest-warehouse").toAbsolutePath();
    TransactionBench.deleteTree(warehouse);
    Files.createDirectories(warehouse.getParent());
    String floe = Path.of("").toAbsolutePath().resolve("bin/floe").toString();
    int restPort = TransactionBench.freePort();
    Map<String, String> queries = new LinkedHashMap<>();
    Random random = new Random(42);
    long id = random.nextLong(rows);
    queries.put("point lookup by id", "SELECT * FROM {t} WHERE id = " + id);
    long from = random.nextLong(rows - 10_000);
    queries.put("aggregate of a key range (10,000 rows)", "SELECT count(*), sum(amount) FROM {t} WHERE id BETWEEN "
        + from + " AND " + (from + 9_999));
    queries.put("filtered aggregate (10% of the rows, all files)", "SELECT count(*), sum(amount) FROM {t} "
        + "WHERE category = 7");
    queries.put("top-10 by amount", "SELECT id, amount FROM {t} ORDER BY amount DESC LIMIT 10");
    queries.put("full aggregate", "SELECT count(*), sum(amount), avg(amount), max(note) FROM {t}");
    Map<String, double[]> floeMs = new LinkedHashMap<>();
    Map<String, double[]> sparkMs = new LinkedHashMap<>();
    String[] sparkInfo = {"", "", ""}; // startup ms, versions, why not
    List<double[]> freshness = new ArrayList<>(); // per bound: latencies
    final int n = runs;
    final int sparkN = sparkRuns;
    final int appendCount = appends;
    final long rowCount = rows;
    final Path classpathFile = sparkClasspath;
    final Path scratch = data.resolve("rest-spark-scratch");
    final Path tarball = trinoTarball;
    final Path trinoRoot = data.resolve("trino");
    Map<String, double[]> trinoMs = new LinkedHashMap<>();
    String[] trinoInfo = {"", ""}; // start-up ms, why not
    List<Double> trinoFreshness = new ArrayList<>();
    // builds bin/floe's caches (and the CLI, if its sources changed): not part of the start-up measured below
    StartupBench.timed(floe + " sql -w " + data.resolve("rest-warm").toAbsolutePath() + " -c 'SELECT 1'");
    TransactionBench.deleteTree(data.resolve("rest-warm").toAbsolutePath());
    double floeStart = StartupBench.serveUntilListening(floe + " serve -w " + warehouse + " --pg-port 0 --rest-port " + restPort
        + " --maintain-ms 0", (pid, port) -> {
          try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/floe", "floe", "");
              Statement st = c.createStatement()) {
            st.execute("CREATE TABLE events (id bigint, category integer, amount double precision, note text) "
                + "WITH (sort_by = 'id')");
            st.execute("INSERT INTO events SELECT i, (i * 7919) % 100, (i * 104729) % 1000003 / 100.0, "
                + "'note ' || (i % 1000) FROM generate_series(0, " + (rowCount - 1) + ") g(i)");
            for (Map.Entry<String, String> q : queries.entrySet()) {
              String sql = q.getValue().replace("{t}", "events");
              st.executeQuery(sql).close(); // warm
              double[] ms = new double[n];
              for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                try (ResultSet rs = st.executeQuery(sql)) {
                  while (rs.next()) {
                    rs.getObject(1);
                  }
                }
                ms[i] = (System.nanoTime() - t0) / 1e6;
              }
              floeMs.put(q.getKey(), ms);
            }
          }
          String restUri = "http://127.0.0.1:" + restPort;
          spark(classpathFile, restUri, scratch, sparkN, queries, sparkMs, sparkInfo);
          for (long bound : new long[] {1000, 200}) {
            freshness.add(freshness(port, restUri, bound, appendCount));
          }
          trino(tarball, trinoRoot, restUri, port, n, queries, trinoMs, trinoInfo, trinoFreshness,
              appendCount);
        });

    StringBuilder md = new StringBuilder();
    md.append("## REST catalog: Floe's PostgreSQL port vs Spark and Trino over Floe's REST catalog — ").append(LocalDate.now())
        .append(label.isEmpty() ? "" : " (" + label + ")").append("\n\n");
    md.append("- Command: `bench/run rest").append(args.length == 0 ? "" : " " + String.join(" ", args)).append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append("; ").append(sparkInfo[1].isEmpty() ? "Spark: "
        + sparkInfo[2] : sparkInfo[1] + ", local[2], its own JVM").append("\n");
    md.append(String.format(Locale.ROOT, "- One table of %,d rows (`events`: id bigint sorted, category, amount "
        + "double, note text) in a warehouse served by `floe serve` (bin/floe); the same table read by Floe through "
        + "pgjdbc (median of %d after a warm-up) and by Spark through the REST catalog (median of %d after a "
        + "warm-up, every row collected).%n", rows, runs, sparkRuns));
    md.append(String.format(Locale.ROOT, "- Start-up: `floe serve` until it listens %.0f ms; Spark's session %s ms; "
        + "Trino until it runs a query %s ms.%n", floeStart, sparkInfo[0].isEmpty() ? "—" : sparkInfo[0],
        trinoInfo[0].isEmpty() ? "—" : trinoInfo[0]));
    md.append(trinoInfo[1].isEmpty() ? String.format(Locale.ROOT, "- Trino %s (the trino-server tarball, Iceberg "
        + "connector on the REST catalog, `fs.hadoop.enabled`), started once; the same queries through trino-jdbc "
        + "(median of %d after a warm-up).%n", TRINO_VERSION, runs)
        : "- Trino: not measured (" + trinoInfo[1] + ")\n");
    md.append("\n| query | Floe (pgwire) | Spark over REST | Trino over REST | Spark / Floe | Trino / Floe |\n"
        + "|---|---:|---:|---:|---:|---:|\n");
    for (String q : queries.keySet()) {
      double f = StartupBench.median(toList(floeMs.get(q)));
      double[] s = sparkMs.get(q);
      double sm = s == null ? Double.NaN : StartupBench.median(toList(s));
      double[] t = trinoMs.get(q);
      double tm = t == null ? Double.NaN : StartupBench.median(toList(t));
      md.append(String.format(Locale.ROOT, "| %s | %.2f ms | %s | %s | %s | %s |%n", q, f,
          s == null ? "—" : String.format(Locale.ROOT, "%.1f ms", sm),
          t == null ? "—" : String.format(Locale.ROOT, "%.1f ms", tm),
          s == null ? "—" : String.format(Locale.ROOT, "%.0f×", sm / f),
          t == null ? "—" : String.format(Locale.ROOT, "%.0f×", tm / f)));
    }
    md.append(String.format(Locale.ROOT, "%nFreshness of a table with a tail through the REST catalog: %d one-row "
        + "INSERTs through pgjdbc at random intervals, each followed by REST loads (Iceberg's RESTCatalog, every "
        + "20 ms) until the loaded table holds the row (its `floe.tail.through` watermark past it):%n%n",
        appends));
    md.append("| `floe.tail.rest-freshness-ms` | p50 | p99 | max |\n|---:|---:|---:|---:|\n");
    long[] bounds = {1000, 200};
    for (int i = 0; i < freshness.size(); i++) {
      double[] v = freshness.get(i).clone();
      java.util.Arrays.sort(v);
      md.append(String.format(Locale.ROOT, "| %d | %.0f ms | %.0f ms | %.0f ms |%n", bounds[i], v[v.length / 2],
          v[Math.min(v.length - 1, (int) Math.ceil(v.length * 0.99) - 1)], v[v.length - 1]));
    }
    if (!trinoFreshness.isEmpty()) {
      double[] v = trinoFreshness.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      md.append(String.format(Locale.ROOT, "%nThe same as Trino sees it (default bound; each INSERT followed by "
          + "`SELECT count(*)` in Trino every 20 ms until it counts the row): p50 %.0f ms, p99 %.0f ms, max %.0f ms "
          + "(%d appends).%n", v[v.length / 2], v[Math.min(v.length - 1, (int) Math.ceil(v.length * 0.99) - 1)],
          v[v.length - 1], v.length));
    }
    md.append('\n');
    System.out.print(md);
    QueryBench.appendResults(out, md);
  }

  private static List<Double> toList(double[] v) {
    List<Double> out = new ArrayList<>();
    for (double d : v) {
      out.add(d);
    }
    return out;
  }

  /** Runs the queries in Spark (RestQueries in a child JVM), filling {@code ms} and {@code info}. */
  private static void spark(Path classpathFile, String restUri, Path scratch, int runs, Map<String, String> queries,
      Map<String, double[]> ms, String[] info) throws Exception {
    if (!Files.isRegularFile(classpathFile)) {
      Path error = Path.of(classpathFile + ".error");
      info[2] = Files.exists(error) ? Files.readString(error).strip() : "no classpath at " + classpathFile;
      return;
    }
    TransactionBench.deleteTree(scratch);
    Files.createDirectories(scratch.resolve("tmp"));
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(SparkPeer.JVM_OPTIONS);
    cmd.add("-Xmx3g");
    cmd.add("-Djava.io.tmpdir=" + scratch.resolve("tmp"));
    cmd.addAll(List.of("-cp", Files.readString(classpathFile).strip(), "dev.floe.bench.spark.RestQueries", restUri,
        scratch.toString(), Integer.toString(runs)));
    List<String> names = new ArrayList<>();
    int k = 0;
    for (Map.Entry<String, String> q : queries.entrySet()) {
      names.add(q.getKey());
      cmd.add("q" + k++ + "=" + q.getValue().replace("{t}", "floe.public.events"));
    }
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(scratch.toFile()).redirectErrorStream(true);
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    Process p = pb.start();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        if (!line.startsWith("SPARKBENCH ")) {
          continue;
        }
        String[] f = line.split(" ", 3);
        if (f[1].equals("startup_ms")) {
          info[0] = f[2];
        } else if (f[1].equals("versions")) {
          info[1] = f[2];
        } else if (f[1].startsWith("q")) {
          String[] parts = f[2].split(",");
          double[] v = new double[parts.length];
          for (int i = 0; i < v.length; i++) {
            v[i] = Double.parseDouble(parts[i]);
          }
          ms.put(names.get(Integer.parseInt(f[1].substring(1))), v);
        }
      }
    }
    if (p.waitFor() != 0) {
      info[2] = "the Spark child exited with " + p.exitValue();
    }
    TransactionBench.deleteTree(scratch);
  }

  /**
   * Trino over the REST catalog: started once (if a Java 24+ and the tarball are there), the queries timed through
   * trino-jdbc, then the freshness of a tail table as a Trino query sees it.
   */
  private static void trino(Path tarball, Path root, String restUri, int pgPort, int runs, Map<String, String> queries,
      Map<String, double[]> ms, String[] info, List<Double> freshness, int appends) throws Exception {
    java.util.Optional<Path> java = dev.floe.trino.TrinoServerProcess.findJava();
    if (java.isEmpty() || !Files.isRegularFile(tarball)) {
      info[1] = java.isEmpty() ? "no Java 24+ JDK" : "no tarball at " + tarball
          + " (the trino-tests module's build downloads it)";
      return;
    }
    Path home = dev.floe.trino.TrinoServerProcess.unpacked(tarball, root, TRINO_VERSION);
    Path run = root.resolve("run");
    TransactionBench.deleteTree(run);
    long t0 = System.nanoTime();
    try (dev.floe.trino.TrinoServerProcess trino = new dev.floe.trino.TrinoServerProcess(java.get(), home, run,
        Map.of("floe", dev.floe.trino.TrinoServerProcess.catalogProperties(restUri)));
        Connection c = trino.connect(); Statement st = c.createStatement()) {
      info[0] = String.format(Locale.ROOT, "%.0f", (System.nanoTime() - t0) / 1e6);
      for (Map.Entry<String, String> q : queries.entrySet()) {
        String sql = q.getValue().replace("{t}", "floe.public.events");
        dev.floe.trino.TrinoServerProcess.awaitScan(st, sql); // warm (and wait for Trino's scheduler)
        double[] v = new double[runs];
        for (int i = 0; i < runs; i++) {
          long t = System.nanoTime();
          drain(st, sql);
          v[i] = (System.nanoTime() - t) / 1e6;
        }
        ms.put(q.getKey(), v);
      }
      try (Connection pg = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pgPort + "/floe", "floe", "");
          Statement ps = pg.createStatement()) {
        ps.execute("CREATE TABLE ticks_trino (n bigint) WITH (tail = true)");
        Random random = new Random(7);
        for (int i = 0; i < appends; i++) {
          Thread.sleep(random.nextInt(300));
          ps.executeUpdate("INSERT INTO ticks_trino VALUES (" + i + ")");
          long t = System.nanoTime();
          while (true) {
            try (ResultSet rs = st.executeQuery("SELECT count(*) FROM floe.public.ticks_trino")) {
              rs.next();
              if (rs.getLong(1) >= i + 1) {
                break;
              }
            }
            Thread.sleep(20);
          }
          freshness.add((System.nanoTime() - t) / 1e6);
        }
      }
    }
  }

  private static void drain(Statement st, String sql) throws java.sql.SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        rs.getObject(1);
      }
    }
  }

  /** Milliseconds from each one-row INSERT into a tail table to the first REST load whose table holds it. */
  private static double[] freshness(int pgPort, String restUri, long bound, int appends) throws Exception {
    String table = "ticks_" + bound;
    RESTCatalog rest = new RESTCatalog();
    rest.initialize("bench", Map.of(CatalogProperties.URI, restUri,
        CatalogProperties.FILE_IO_IMPL, "dev.floe.catalog.LocalFileIO"));
    Random random = new Random(bound);
    double[] ms = new double[appends];
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pgPort + "/floe", "floe", "");
        Statement st = c.createStatement()) {
      st.execute("CREATE TABLE " + table + " (n bigint) WITH (tail = true)");
      st.execute("ALTER TABLE " + table + " SET TBLPROPERTIES ('floe.tail.rest-freshness-ms' = '" + bound + "')");
      TableIdentifier id = TableIdentifier.of("public", table);
      try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + table + " VALUES (?)")) {
        for (int i = 0; i < appends; i++) {
          Thread.sleep(random.nextInt(300));
          insert.setLong(1, i);
          insert.executeUpdate();
          long t0 = System.nanoTime();
          while (Long.parseLong(rest.loadTable(id).properties().getOrDefault("floe.tail.through", "0")) < i + 1) {
            Thread.sleep(20);
          }
          ms[i] = (System.nanoTime() - t0) / 1e6;
        }
      }
    } finally {
      rest.close();
    }
    return ms;
  }
}
