package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.Result;
import dev.floe.Row;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Collectors;

/**
 * The engine-core benchmark: the same query set through Floe's embedded API and through plain DuckDB
 * {@code read_parquet} over the very same Parquet files, in one run, reporting per-query medians and
 * the ratio Floe/DuckDB. Also measures JVM start to first query result for both.
 *
 * <p>Usage: {@code QueryBench --rows N --data DIR --out bench/RESULTS.md [--iterations 9]}
 */
public final class QueryBench {
  private record Query(String name, String sql, boolean pointLookup) {}

  private static final List<Query> QUERIES = List.of(
      new Query("full scan aggregate", "SELECT count(*), sum(amount), avg(quantity) FROM events", false),
      new Query("filtered aggregate",
          "SELECT count(*), sum(amount) FROM events WHERE category = 'c07' AND quantity > 5", false),
      new Query("group-by", "SELECT category, count(*), sum(amount), max(ts) FROM events GROUP BY category ORDER BY 1",
          false),
      new Query("point lookup (sort column)", "SELECT * FROM events WHERE id = %d", true),
      new Query("join with dimension", "SELECT u.country, count(*), sum(e.amount) FROM events e JOIN users u"
          + " ON e.user_id = u.id GROUP BY u.country ORDER BY 3 DESC LIMIT 10", false),
      new Query("top-N", "SELECT id, user_id, amount FROM events ORDER BY amount DESC, id LIMIT 10", false));

  public static void main(String[] args) throws Exception {
    long rows = 10_000_000L;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    int iterations = 9;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[++i].replace("_", ""));
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    final long totalRows = rows;
    Path warehouse = data.resolve("events-" + rows);
    long users = Math.max(1000, rows / 100);
    try (Database db = Floe.open(FloeConfig.builder(warehouse).build())) {
      generate(db, rows, users);
    }
    List<String> lines = new ArrayList<>();
    try (Database db = Floe.open(FloeConfig.builder(warehouse).build());
        Connection duck = DriverManager.getConnection("jdbc:duckdb:")) {
      String eventFiles = fileList(db, "events");
      String userFiles = fileList(db, "users");
      try (Statement st = duck.createStatement()) {
        st.execute("SET autoinstall_known_extensions = false");
        st.execute("SET integer_division = true");
        st.execute("SET parquet_metadata_cache = true"); // Floe caches footers too: compare like with like
      }
      System.err.printf("%-28s %12s %12s %8s%n", "query", "Floe ms", "DuckDB ms", "ratio");
      for (Query q : QUERIES) {
        double floe = median(time(iterations, n -> runFloe(db, sql(q, n, totalRows))));
        String direct = sql(q, 0, rows).replace("FROM events", "FROM read_parquet(" + eventFiles + ")")
            .replace("JOIN users", "JOIN read_parquet(" + userFiles + ")");
        double duckMs = median(time(iterations, n -> runDuck(duck,
            q.pointLookup() ? direct.replaceAll("id = \\d+", "id = " + lookupId(n, totalRows)) : direct)));
        String line = String.format(Locale.ROOT, "| %s | %.2f | %.2f | %.2f |", q.name(), floe, duckMs, floe / duckMs);
        lines.add(line);
        System.err.printf(Locale.ROOT, "%-28s %12.2f %12.2f %8.2f%n", q.name(), floe, duckMs, floe / duckMs);
      }
    }
    Path fileList = data.resolve("events-" + rows + ".files");
    try (Database db = Floe.openReadOnly(warehouse)) {
      Files.writeString(fileList, fileList(db, "events"));
    }
    String startup = startup(warehouse, fileList);
    write(out, rows, iterations, lines, startup, args);
  }

  private static String sql(Query q, int n, long rows) {
    return q.pointLookup() ? String.format(Locale.ROOT, q.sql(), lookupId(n, rows)) : q.sql();
  }

  /** A different id each iteration, spread over the table, the same sequence for both engines. */
  private static long lookupId(int n, long rows) {
    return Math.floorMod(new Random(n * 7919L).nextLong(), rows);
  }

  /** Creates and fills {@code events} and {@code users} once (a no-op when they exist). */
  static void generate(Database db, long rows, long users) {
    boolean exists;
    try (Result r = db.sql("SHOW TABLES")) {
      exists = r.toList().stream().anyMatch(row -> row.get(0).equals("events"));
    }
    if (exists) {
      return;
    }
    System.err.println("generating " + rows + " rows ...");
    long t0 = System.nanoTime();
    db.sql("CREATE TABLE users (id integer NOT NULL, name varchar, country varchar, signup date)").close();
    db.sql("INSERT INTO users SELECT i, 'user' || i, 'country' || lpad(CAST(hash(i) % 40 AS VARCHAR), 2, '0'),"
        + " DATE '2020-01-01' + CAST(hash(i * 3) % 1500 AS INTEGER) FROM range(" + users + ") t(i)").close();
    db.sql("CREATE TABLE events (id bigint NOT NULL, ts timestamptz, user_id integer, category varchar,"
        + " amount numeric(12,2), quantity integer, note varchar) WITH (sorted_by = ARRAY['id'])").close();
    long batch = 2_500_000L;
    for (long start = 0; start < rows; start += batch) {
      long end = Math.min(rows, start + batch);
      db.sql("INSERT INTO events SELECT i, TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(CAST(i * 3 AS BIGINT)),"
          + " CAST(hash(i) % " + users + " AS INTEGER), 'c' || lpad(CAST(hash(i * 7) % 20 AS VARCHAR), 2, '0'),"
          + " CAST((hash(i * 13) % 100000) / 100.0 AS DECIMAL(12,2)), CAST(hash(i * 17) % 10 AS INTEGER),"
          + " CASE WHEN i % 10 = 0 THEN 'note ' || i END FROM range(" + start + ", " + end + ") t(i)").close();
      System.err.printf("  %,d rows%n", end);
    }
    System.err.printf("generated in %.1f s%n", (System.nanoTime() - t0) / 1e9);
  }

  private static String fileList(Database db, String table) {
    List<String> files = new ArrayList<>();
    try (Result r = db.sql("SELECT file_path FROM \"" + table + "$files\" WHERE content = 0")) {
      for (Row row : r) {
        files.add("'" + row.get(0).toString().replaceFirst("^file:", "") + "'");
      }
    }
    return files.stream().collect(Collectors.joining(", ", "[", "]"));
  }

  private interface Body {
    void run(int iteration) throws Exception;
  }

  private static double[] time(int iterations, Body body) throws Exception {
    for (int w = 0; w < 2; w++) {
      body.run(1000 + w);
    }
    double[] ms = new double[iterations];
    for (int i = 0; i < iterations; i++) {
      long t0 = System.nanoTime();
      body.run(i);
      ms[i] = (System.nanoTime() - t0) / 1e6;
    }
    return ms;
  }

  private static double median(double[] values) {
    double[] s = values.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static void runFloe(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      for (Row row : r) {
        row.size();
      }
    }
  }

  private static void runDuck(Connection duck, String sql) throws SQLException {
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        for (int c = 1; c <= n; c++) {
          rs.getObject(c);
        }
      }
    }
  }

  /** JVM start to first query result: a fresh JVM per measurement, median of 3, for each engine. */
  private static String startup(Path warehouse, Path fileList) throws IOException, InterruptedException {
    double[] floe = new double[3];
    double[] duck = new double[3];
    for (int i = 0; i < 3; i++) {
      floe[i] = childMillis("floe", warehouse, fileList);
      duck[i] = childMillis("duckdb", warehouse, fileList);
    }
    return String.format(Locale.ROOT, "| JVM start → first result (`SELECT count(*) FROM events`) | %.0f | %.0f | %.2f |",
        median(floe), median(duck), median(floe) / median(duck));
  }

  private static double childMillis(String engine, Path warehouse, Path fileList)
      throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), FirstResult.class.getName(), engine, warehouse.toString(),
        fileList.toString());
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String line;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
      String last = null;
      while ((line = r.readLine()) != null) {
        if (line.startsWith("RESULT ")) {
          last = line;
          break;
        }
      }
      double ms = (System.nanoTime() - t0) / 1e6;
      p.waitFor();
      if (last == null) {
        throw new IllegalStateException("child " + engine + " printed no result");
      }
      return ms;
    }
  }

  private static void write(Path out, long rows, int iterations, List<String> lines, String startup, String[] args)
      throws IOException {
    String machine = machine();
    StringBuilder md = new StringBuilder();
    md.append("## Engine core: Floe vs DuckDB read_parquet — ").append(LocalDate.now()).append("\n\n");
    md.append("- Command: `bench/run").append(args.length > 0 ? " " + String.join(" ", args) : "").append("`\n");
    md.append("- Machine: ").append(machine).append("\n");
    md.append(String.format(Locale.ROOT, "- Data: `events` %,d rows (sorted by id), `users` dimension; median of %d runs"
        + " after 2 warm-ups; same JVM, same Parquet files, both with DuckDB's default threads and its Parquet"
        + " footer cache on.%n%n", rows, iterations));
    md.append("| query | Floe ms | DuckDB ms | Floe/DuckDB |\n|---|---:|---:|---:|\n");
    lines.forEach(l -> md.append(l).append('\n'));
    md.append(startup).append("\n\n");
    appendResults(out, md);
  }

  /** Appends a benchmark's dated section to the results file (created with its heading if missing). */
  static void appendResults(Path out, CharSequence section) throws IOException {
    String existing = Files.exists(out) ? Files.readString(out) : "# Benchmark results\n\n"
        + "Absolute times on a shared 2-core machine are noisy; compare the ratios.\n\n";
    // one blank line between sections, whatever the last one (or a hand edit) ended with
    Files.writeString(out, existing.stripTrailing() + "\n\n" + section);
    System.err.println("results appended to " + out);
  }

  static String machine() {
    String cpu = "unknown CPU";
    try {
      for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (l.startsWith("model name")) {
          cpu = l.substring(l.indexOf(':') + 1).strip();
          break;
        }
      }
    } catch (IOException ignored) {
      // not Linux
    }
    return Runtime.getRuntime().availableProcessors() + " cores (" + cpu + "), "
        + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB max heap, Java " + System.getProperty("java.version");
  }
}
