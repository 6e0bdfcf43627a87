package dev.floe.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Exports (issue 21, item 6): the same rows taken out of {@code floe serve} and of PostgreSQL 15 side by side,
 * in the same run, each measure alternating between the two: {@code COPY (SELECT * FROM t) TO STDOUT} and a
 * whole {@code SELECT * FROM t} through psql, the same SELECT fetched by psycopg2 ({@code fetchall}, Debian's
 * python3-psycopg2), and {@code floe sql --format csv} (embedded, a JVM start included) beside
 * {@code psql --csv}. Two tables: {@code t} (bigint, text, numeric: the start-up benchmark's export) and
 * {@code w} (eight columns: text, numeric, double, boolean, date, timestamp, timestamptz). Also checks that
 * Floe's COPY bytes are PostgreSQL's (sha-256 of both outputs).
 */
public final class ExportBench {
  private ExportBench() {}

  private static final String PYTHON = "/usr/bin/python3";
  private static final String FETCH = """
      import sys, time, psycopg2
      conn = psycopg2.connect(host="127.0.0.1", port=int(sys.argv[1]), user="floe", dbname=sys.argv[2])
      cur = conn.cursor()
      t0 = time.perf_counter()
      cur.execute(sys.argv[3])
      rows = cur.fetchall()
      t1 = time.perf_counter()
      print(len(rows), t1 - t0)
      """;

  record Table(String name, String create, String fill) {}

  record Measure(String what, String table, double floe, double pg, String note) {}

  public static void main(String[] args) throws Exception {
    long rows = 1_000_000;
    int runs = 3;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    String label = "";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[++i]);
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--label" -> label = args[++i];
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    List<Table> tables = List.of(
        new Table("t", "CREATE TABLE t (i bigint, s text, x numeric(21,1))",
            "INSERT INTO t SELECT i, 'row ' || i, i * 1.5 FROM generate_series(1, " + rows + ") AS g(i)"),
        new Table("w", "CREATE TABLE w (i bigint, s text, x numeric(12,2), f double precision, b boolean, d date, "
            + "ts timestamp, tz timestamptz)",
            "INSERT INTO w SELECT i, 'name ' || i, i * 0.01, i / 8.0, i % 2 = 0, DATE '2020-01-01' + (i % 3000)::integer, "
            + "TIMESTAMP '2020-01-01 00:00:00' + i * INTERVAL '1 second', "
            + "TIMESTAMPTZ '2020-01-01 00:00:00.5+00' + i * INTERVAL '1 minute' FROM generate_series(1, " + rows
            + ") AS g(i)"));
    Path root = Path.of("").toAbsolutePath();
    String floe = root.resolve("bin/floe").toString();
    Path warehouse = data.resolve("export-warehouse").toAbsolutePath();
    TransactionBench.deleteTree(warehouse);
    Files.createDirectories(warehouse.getParent());
    Path script = Files.createTempFile("floe-export-fetch", ".py");
    Files.writeString(script, FETCH);
    StartupBench.timed(floe + " sql -w " + warehouse + " -c 'SELECT 1'"); // builds bin/floe's caches: not timed

    PgWireBench.Postgres pg = new PgWireBench.Postgres(data.resolve("pg15-export").toAbsolutePath(),
        TransactionBench.freePort());
    List<Measure> measures = new ArrayList<>();
    Map<String, String> sameBytes = new LinkedHashMap<>();
    final int n = runs;
    final long count = rows;
    try {
      pg.start();
      String pgPsql = "PGTZ=UTC psql -X -q -h 127.0.0.1 -p " + pg.port + " -U floe -d postgres ";
      for (Table t : tables) {
        StartupBench.timed(pgPsql + "-c 'DROP TABLE IF EXISTS " + t.name + "'");
        StartupBench.timed(pgPsql + "-c \"" + t.create + "\"");
        StartupBench.timed(pgPsql + "-c \"" + t.fill + "\"");
        StartupBench.timed(pgPsql + "-c 'VACUUM ANALYZE " + t.name + "'");
      }
      StartupBench.serveUntilListening(floe + " serve -w " + warehouse + " --pg-port 0", (pid, port) -> {
        String floePsql = "PGTZ=UTC psql -X -q -h 127.0.0.1 -p " + port + " -U floe -d floe ";
        for (Table t : tables) {
          StartupBench.timed(floePsql + "-c \"" + t.create + "\"");
          StartupBench.timed(floePsql + "-c \"" + t.fill + "\"");
        }
        for (Table t : tables) {
          String copy = "-c 'COPY (SELECT * FROM " + t.name + ") TO STDOUT'";
          sameBytes.put(t.name, sha(floePsql + copy).equals(sha(pgPsql + copy)) ? "yes" : "NO");
          double[] c = alternate(n, () -> StartupBench.timed(floePsql + copy).wall() / 1000,
              () -> StartupBench.timed(pgPsql + copy).wall() / 1000);
          measures.add(new Measure("`COPY (SELECT * FROM " + t.name + ") TO STDOUT` through psql", t.name, c[0], c[1],
              "wall time of psql"));
          String select = "-c 'SELECT * FROM " + t.name + "'";
          double[] s = alternate(n, () -> StartupBench.timed(floePsql + select).wall() / 1000,
              () -> StartupBench.timed(pgPsql + select).wall() / 1000);
          measures.add(new Measure("`SELECT * FROM " + t.name + "` through psql", t.name, s[0], s[1],
              "wall time of psql"));
          double[] f = alternate(n, () -> fetch(script, port, "floe", t.name, count),
              () -> fetch(script, pg.port, "postgres", t.name, count));
          measures.add(new Measure("`SELECT * FROM " + t.name + "` fetched by psycopg2 (`fetchall`)", t.name, f[0], f[1],
              "execute to fetchall's end, in Python"));
          // the servers' own rates: the same answers read by a client that only counts them
          try (RawReader fr = new RawReader(port, "floe", "floe");
              RawReader pr = new RawReader(pg.port, "floe", "postgres")) {
            String sql = "SELECT * FROM " + t.name;
            double[] q = alternate(n, () -> drained(() -> fr.query(sql), count),
                () -> drained(() -> pr.query(sql), count));
            measures.add(new Measure("`SELECT * FROM " + t.name + "` (simple query) read by a client that only counts"
                + " the messages", t.name, q[0], q[1], "Query to ReadyForQuery, in Java (the server's rate)"));
            fr.query("BEGIN");
            pr.query("BEGIN");
            double[] e = alternate(n, () -> drained(() -> fr.portal(sql, 10_000), count),
                () -> drained(() -> pr.portal(sql, 10_000), count));
            measures.add(new Measure("`SELECT * FROM " + t.name + "`, extended protocol, Execute of 10,000 rows at a "
                + "time (pgjdbc's fetch size), read by the same client", t.name, e[0], e[1],
                "Parse to ReadyForQuery, in Java (the server's rate)"));
            fr.query("COMMIT");
            pr.query("COMMIT");
          }
        }
      });
      // the embedded CLI (the server above has let go of the warehouse)
      double start = StartupBench.best(n, () -> StartupBench.timed(floe + " sql -w " + warehouse + " -c 'SELECT 1'")
          .wall() / 1000);
      for (Table t : tables) {
        double[] csv = alternate(n, () -> StartupBench.timed(floe + " sql -w " + warehouse + " --format csv -c "
                + "'SELECT * FROM " + t.name + "'").wall() / 1000,
            () -> StartupBench.timed(pgPsql + "--csv -c 'SELECT * FROM " + t.name + "'").wall() / 1000);
        measures.add(new Measure("`floe sql --format csv -c 'SELECT * FROM " + t.name + "'` vs `psql --csv`", t.name,
            csv[0], csv[1], String.format(Locale.ROOT, "wall time, Floe's JVM start included (`floe sql -c 'SELECT 1'`: "
                + "%.2f s; without it Floe's rows/s would be %,.0f)", start, count / Math.max(csv[0] - start, 1e-3))));
      }
    } finally {
      pg.stop();
      Files.deleteIfExists(script);
    }

    StringBuilder md = new StringBuilder();
    md.append("## Exports: Floe vs PostgreSQL 15 — ").append(LocalDate.now())
        .append(label.isEmpty() ? "" : " (" + label + ")").append("\n\n");
    md.append("- Command: `bench/run export").append(args.length == 0 ? "" : " " + String.join(" ", args))
        .append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append("; PostgreSQL ").append(PgWireBench.Postgres.version())
        .append(" (Debian package), psql and python3-psycopg2 on the same machine, over 127.0.0.1\n");
    md.append(String.format(Locale.ROOT, "- %,d rows in each table, the same in both: `t` (i bigint, s text, "
        + "x numeric(21,1)) and `w` (i bigint, s text, x numeric(12,2), f double precision, b boolean, d date, "
        + "ts timestamp, tz timestamptz). `floe serve` as bin/floe starts it. Best of %d runs of each, Floe and "
        + "PostgreSQL taking turns; output to /dev/null. COPY's bytes identical to PostgreSQL's: %s.\n\n", rows, runs,
        sameBytes.entrySet().stream().map(e -> "`" + e.getKey() + "` " + e.getValue()).reduce((a, b) -> a + ", " + b)
            .orElse("")));
    md.append("| export | Floe | PostgreSQL 15 | Floe's rows/s | PostgreSQL's rows/s | Floe / PostgreSQL (rows/s) | "
        + "timed |\n");
    md.append("|---|---:|---:|---:|---:|---:|---|\n");
    for (Measure m : measures) {
      md.append(String.format(Locale.ROOT, "| %s | %.3f s | %.3f s | %,.0f | %,.0f | %.2f | %s |\n", m.what, m.floe,
          m.pg, rows / m.floe, rows / m.pg, m.pg / m.floe, m.note));
    }
    md.append('\n');
    System.out.print(md);
    QueryBench.appendResults(out, md);
  }

  /** Best times of {@code runs} runs of each, taking turns: Floe's and PostgreSQL's. */
  static double[] alternate(int runs, StartupBench.Measure floe, StartupBench.Measure pg) throws Exception {
    double[] best = {Double.MAX_VALUE, Double.MAX_VALUE};
    floe.run(); // warm
    pg.run();
    for (int i = 0; i < runs; i++) {
      best[0] = Math.min(best[0], floe.run());
      best[1] = Math.min(best[1], pg.run());
    }
    return best;
  }

  interface Drain {
    RawReader.Drained run() throws IOException;
  }

  /** Seconds a raw reader takes to drain one answer, which must hold {@code rows} data rows. */
  static double drained(Drain drain, long rows) throws IOException {
    long t0 = System.nanoTime();
    RawReader.Drained d = drain.run();
    double seconds = (System.nanoTime() - t0) / 1e9;
    if (d.dataRows() != rows) {
      throw new IllegalStateException("read " + d.dataRows() + " rows, not " + rows);
    }
    return seconds;
  }

  /** Seconds psycopg2 takes to execute {@code SELECT * FROM table} and fetch all its rows. */
  static double fetch(Path script, int port, String database, String table, long rows) throws IOException,
      InterruptedException {
    Process p = new ProcessBuilder(PYTHON, script.toString(), Integer.toString(port), database, "SELECT * FROM " + table)
        .redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (p.waitFor() != 0) {
      throw new IllegalStateException("psycopg2 fetch failed: " + output);
    }
    String[] parts = output.lines().reduce((a, b) -> b).orElse("").split(" ");
    if (Long.parseLong(parts[0]) != rows) {
      throw new IllegalStateException("psycopg2 fetched " + parts[0] + " rows, not " + rows);
    }
    return Double.parseDouble(parts[1]);
  }

  /** The sha-256 of a command's standard output. */
  static String sha(String command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("bash", "-c", "set -o pipefail; " + command + " | sha256sum").start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (p.waitFor() != 0) {
      throw new IllegalStateException(command + " failed");
    }
    return output;
  }
}
