package dev.floe.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Start-up and memory (issue 21): how long a user waits for a first result from {@code floe sql -c} and for
 * {@code floe serve} to listen, launched by {@code bin/floe} (its unpacked DuckDB library and class-data
 * sharing archive) and, for comparison, as a plain {@code java -cp} launch of the same jars; PostgreSQL 15
 * beside it (a first result through {@code psql -c}, a server start through {@code pg_ctl start -w}). Then
 * the server's resident memory idle, after loading a table, and after exporting it with
 * {@code COPY ... TO STDOUT}, right away and once idle again.
 */
public final class StartupBench {
  private StartupBench() {}

  public static void main(String[] args) throws Exception {
    int runs = 7;
    long rows = 1_000_000;
    int idleSeconds = 30;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    String label = "";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--rows" -> rows = Long.parseLong(args[++i]);
        case "--idle-seconds" -> idleSeconds = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--label" -> label = args[++i];
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path root = Path.of("").toAbsolutePath();
    String floe = root.resolve("bin/floe").toString();
    Path warehouse = data.resolve("startup-warehouse").toAbsolutePath();
    TransactionBench.deleteTree(warehouse);
    Files.createDirectories(warehouse.getParent());
    // the first start builds what bin/floe caches (the unpacked library, the class archive): not timed
    Timed first = timed(floe + " sql -w " + warehouse + " -c 'SELECT 1'");
    System.err.println("startup: first bin/floe start (builds its caches): " + first);

    String jar;
    try (var s = Files.list(root.resolve("cli/target"))) {
      jar = s.map(Path::toString).filter(p -> p.matches(".*/floe-cli-[^/]*\\.jar") && !p.endsWith("-sources.jar")
          && !p.endsWith("-tests.jar")).findFirst().orElseThrow();
    }
    String plain = "java --add-opens=java.base/java.nio=ALL-UNNAMED -cp '" + jar + ":" + root.resolve("cli/target/lib")
        + "/*' dev.floe.cli.Main";
    List<Timed> launcher = new ArrayList<>();
    List<Timed> plainRuns = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      launcher.add(timed(floe + " sql -w " + warehouse + " -c 'SELECT 1'"));
      plainRuns.add(timed(plain + " sql -w " + warehouse + " -c 'SELECT 1'"));
    }
    List<Double> listen = new ArrayList<>();
    List<Double> listenPlain = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      listen.add(serveUntilListening(floe + " serve -w " + warehouse + " --pg-port 0", null));
      listenPlain.add(serveUntilListening(plain + " serve -w " + warehouse + " --pg-port 0", null));
    }

    PgWireBench.Postgres pg = new PgWireBench.Postgres(data.resolve("pg15-startup").toAbsolutePath(),
        TransactionBench.freePort());
    List<Double> pgStart = new ArrayList<>();
    List<Timed> psql = new ArrayList<>();
    String psqlCmd = "psql -X -q -h 127.0.0.1 -p " + pg.port + " -U floe -d postgres -c 'SELECT 1'";
    double[] pgExport = new double[2];
    try {
      for (int i = 0; i < runs; i++) {
        long t0 = System.nanoTime();
        pg.start();
        pgStart.add((System.nanoTime() - t0) / 1e6);
        psql.add(timed(psqlCmd));
        pg.stop();
      }
      // the same export as Floe's below, on the same rows
      pg.start();
      String pgPsql = "psql -X -q -h 127.0.0.1 -p " + pg.port + " -U floe -d postgres ";
      timed(pgPsql + "-c 'DROP TABLE IF EXISTS t'");
      timed(pgPsql + "-c \"CREATE TABLE t AS SELECT i, 'row ' || i AS s, i * 1.5 AS x FROM generate_series(1, "
          + rows + ") AS g(i)\"");
      timed(pgPsql + "-c 'COPY (SELECT * FROM t) TO STDOUT'"); // warm
      pgExport[0] = best(3, () -> timed(pgPsql + "-c 'COPY (SELECT * FROM t) TO STDOUT'").wall() / 1000);
      pgExport[1] = best(3, () -> timed(pgPsql + "-c 'SELECT * FROM t'").wall() / 1000);
    } finally {
      pg.stop();
    }

    Memory memory = memory(floe, warehouse, rows, idleSeconds);

    StringBuilder md = new StringBuilder();
    md.append("## Start-up and memory: Floe vs PostgreSQL 15 — ").append(LocalDate.now())
        .append(label.isEmpty() ? "" : " (" + label + ")").append("\n\n");
    md.append("- Command: `bench/run startup").append(args.length == 0 ? "" : " " + String.join(" ", args))
        .append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append("; PostgreSQL ").append(PgWireBench.Postgres.version())
        .append(" (Debian package)\n");
    md.append("- Medians of ").append(runs).append(" runs; wall time and the process's CPU (user + system, from "
        + "bash's `time`). `bin/floe` launches with DuckDB's native library unpacked once beside the build and a "
        + "class-data sharing archive made after each build; \"plain java\" is the same jars launched with "
        + "`java -cp` (the driver unpacks its 70 MB library to a temporary file at each start, no archive). "
        + "First result: `floe sql -w DIR -c 'SELECT 1'` (embedded: JVM start, warehouse open, DuckDB, the "
        + "query) vs `psql -c 'SELECT 1'` against a running PostgreSQL (client start, connect, query). "
        + "Listening: `floe serve --pg-port 0` until it prints its address vs `pg_ctl start -w`.\n\n");
    md.append("| measure | Floe (bin/floe) | Floe (plain java) | PostgreSQL 15 | bin/floe / PostgreSQL |\n");
    md.append("|---|---:|---:|---:|---:|\n");
    Timed l = Timed.median(launcher);
    Timed p = Timed.median(plainRuns);
    Timed q = Timed.median(psql);
    md.append(String.format(Locale.ROOT, "| first result, wall | %.0f ms | %.0f ms | %.0f ms | %.1f× |\n", l.wall,
        p.wall, q.wall, l.wall / q.wall));
    md.append(String.format(Locale.ROOT, "| first result, CPU | %.0f ms | %.0f ms | %.0f ms | %.1f× |\n", l.cpu,
        p.cpu, q.cpu, l.cpu / q.cpu));
    double ls = median(listen);
    double lp = median(listenPlain);
    double ps = median(pgStart);
    md.append(String.format(Locale.ROOT, "| server start until it listens, wall | %.0f ms | %.0f ms | %.0f ms | "
        + "%.1f× |\n\n", ls, lp, ps, ls / ps));
    md.append("`floe serve` (bin/floe, its default settings) resident memory (VmRSS of the JVM): idle after start, "
        + "after loading ").append(String.format(Locale.ROOT, "%,d", rows)).append(" rows with `CREATE TABLE t AS "
        + "SELECT i, 'row ' || i, i * 1.5 FROM generate_series(1, rows)` through psql, right after exporting them "
        + "with `psql -c \"COPY (SELECT * FROM t) TO STDOUT\" > /dev/null`, and after ").append(idleSeconds)
        .append(" s idle:\n\n");
    md.append("| moment | RSS |\n|---|---:|\n");
    md.append(String.format(Locale.ROOT, "| idle, just started | %.0f MB |\n", memory.started));
    md.append(String.format(Locale.ROOT, "| after the load | %.0f MB |\n", memory.loaded));
    md.append(String.format(Locale.ROOT, "| right after the export (%.1f s, %,.0f rows/s) | %.0f MB |\n",
        memory.exportSeconds, rows / memory.exportSeconds, memory.exported));
    md.append(String.format(Locale.ROOT, "| %d s later, idle | %.0f MB |\n\n", idleSeconds, memory.idle));
    md.append("Exports of the same ").append(String.format(Locale.ROOT, "%,d", rows)).append(" rows (`i`, `'row ' || i`, "
        + "`i * 1.5`) through psql to /dev/null, best of 3 after the one above, wall time of the whole psql run:\n\n");
    md.append("| export | Floe | PostgreSQL 15 | Floe's rows/s | PostgreSQL's rows/s | Floe / PostgreSQL (rows/s) |\n");
    md.append("|---|---:|---:|---:|---:|---:|\n");
    md.append(String.format(Locale.ROOT, "| `COPY (SELECT * FROM t) TO STDOUT` | %.2f s | %.2f s | %,.0f | %,.0f | "
        + "%.2f |\n", memory.copySeconds, pgExport[0], rows / memory.copySeconds, rows / pgExport[0],
        pgExport[0] / memory.copySeconds));
    md.append(String.format(Locale.ROOT, "| `SELECT * FROM t` (psql fetches the whole result) | %.2f s | %.2f s | "
        + "%,.0f | %,.0f | %.2f |\n\n", memory.selectSeconds, pgExport[1], rows / memory.selectSeconds,
        rows / pgExport[1], pgExport[1] / memory.selectSeconds));
    System.out.print(md);
    QueryBench.appendResults(out, md);
  }

  /** Wall and CPU milliseconds of one command. */
  record Timed(double wall, double cpu) {
    static Timed median(List<Timed> runs) {
      return new Timed(StartupBench.median(runs.stream().map(Timed::wall).toList()),
          StartupBench.median(runs.stream().map(Timed::cpu).toList()));
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%.0f ms wall, %.0f ms CPU", wall, cpu);
    }
  }

  static double median(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return v.length == 0 ? Double.NaN : v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  /** Runs a shell command with its output discarded, timed by bash (real, user, system). */
  static Timed timed(String command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("bash", "-c", "TIMEFORMAT='%R %U %S'; time (" + command + " >/dev/null 2>&1)")
        .redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (p.waitFor() != 0) {
      throw new IllegalStateException(command + " failed: " + output);
    }
    String[] last = output.lines().reduce((a, b) -> b).orElse("").split(" ");
    return new Timed(Double.parseDouble(last[0]) * 1000,
        (Double.parseDouble(last[1]) + Double.parseDouble(last[2])) * 1000);
  }

  /**
   * Starts a server command, returns the milliseconds until it prints its psql address, then stops it
   * (SIGTERM) and waits for it; {@code whileUp} runs before the stop when given.
   */
  static double serveUntilListening(String command, ServerTask whileUp) throws Exception {
    Process p = new ProcessBuilder("bash", "-c", "exec " + command).redirectErrorStream(true).start();
    try {
      long t0 = System.nanoTime();
      BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      double ms = -1;
      int port = -1;
      for (String line; (line = in.readLine()) != null; ) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("psql postgresql://[^:]+:(\\d+)/").matcher(line);
        if (m.find()) {
          ms = (System.nanoTime() - t0) / 1e6;
          port = Integer.parseInt(m.group(1));
          break;
        }
      }
      if (ms < 0) {
        throw new IllegalStateException(command + " ended before listening");
      }
      Thread drain = new Thread(() -> {
        try {
          in.transferTo(java.io.Writer.nullWriter());
        } catch (IOException ignored) {
          // the process ended
        }
      });
      drain.setDaemon(true);
      drain.start();
      if (whileUp != null) {
        whileUp.run(p.pid(), port);
      }
      return ms;
    } finally {
      p.destroy();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  interface ServerTask {
    void run(long pid, int port) throws Exception;
  }

  /**
   * @param copySeconds the best of three {@code COPY (SELECT * FROM t) TO STDOUT} through psql, after the
   *     first (whose RSS is {@code exported})
   * @param selectSeconds the best of three {@code SELECT * FROM t} fetched whole by psql
   */
  record Memory(double started, double loaded, double exported, double exportSeconds, double idle,
      double copySeconds, double selectSeconds) {}

  interface Measure {
    double run() throws Exception;
  }

  static double best(int n, Measure m) throws Exception {
    double best = Double.MAX_VALUE;
    for (int i = 0; i < n; i++) {
      best = Math.min(best, m.run());
    }
    return best;
  }

  static Memory memory(String floe, Path warehouse, long rows, int idleSeconds) throws Exception {
    double[] m = new double[7];
    serveUntilListening(floe + " serve -w " + warehouse + " --pg-port 0", (pid, port) -> {
      Thread.sleep(5000);
      m[0] = rssMb(pid);
      String psql = "psql -X -q -h 127.0.0.1 -p " + port + " -U floe -d floe ";
      timed(psql + "-c 'DROP TABLE IF EXISTS t'");
      timed(psql + "-c \"CREATE TABLE t AS SELECT i, 'row ' || i AS s, i * 1.5 AS x FROM generate_series(1, " + rows
          + ") AS g(i)\"");
      Thread.sleep(5000);
      m[1] = rssMb(pid);
      Timed export = timed(psql + "-c 'COPY (SELECT * FROM t) TO STDOUT'");
      m[3] = export.wall() / 1000;
      m[2] = rssMb(pid);
      Thread.sleep(idleSeconds * 1000L);
      m[4] = rssMb(pid);
      m[5] = best(3, () -> timed(psql + "-c 'COPY (SELECT * FROM t) TO STDOUT'").wall() / 1000);
      m[6] = best(3, () -> timed(psql + "-c 'SELECT * FROM t'").wall() / 1000);
    });
    return new Memory(m[0], m[1], m[2], m[3], m[4], m[5], m[6]);
  }

  /** VmRSS of a process, MB. */
  static double rssMb(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(Arrays.stream(line.split("\\s+")).filter(s -> s.matches("\\d+")).findFirst()
            .orElseThrow()) / 1024.0;
      }
    }
    throw new IOException("no VmRSS for " + pid);
  }
}
