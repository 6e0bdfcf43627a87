package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.MaintenanceRun;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.server.pg.PgServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The soak benchmark (issue 20): a table of {@code --rows} accounts with a primary key and no tail (the
 * synchronous path: every statement commits) served by Floe's PostgreSQL server in this JVM, as
 * {@code floe serve} runs it (tail advancer every second; the background maintainer every 30 s, or not),
 * under pgbench with {@code --clients} clients for {@code --minutes}, reported per window of
 * {@code --window-minutes}; beside PostgreSQL 15 with the same table and script.
 *
 * <p>Each window is one pgbench run ({@code -M prepared -T <window>}, per-transaction log): its tps is the
 * transactions that succeeded over the window's length, p50/p99 come from the log exactly. Between windows
 * the clients reconnect (tens of milliseconds). At each window's end the Floe table's state is sampled
 * ({@code "acc$health"} and a listing of its directories). At the end of a run: the files on disk and
 * live, the newest metadata file, the table's bytes on disk against its live data and against the same
 * rows freshly loaded into a new table, a full-scan aggregate on both (best of {@code --scan-runs} warm
 * runs), and what the maintainer did ({@link Database#maintenanceRuns}); with the maintainer on, the table
 * and its full scan again once the maintainer has tidied the quiet table.
 *
 * <p>Variants: {@code update} (a one-row UPDATE by id and a point SELECT of the same id) and {@code insert}
 * (the same plus a one-row INSERT of a new key: {@code :rows + 1 + :seq * clients + :client_id}, where
 * {@code seq} is a per-client counter that pgbench keeps across transactions, started at
 * {@code window * 10^7} by {@code -D}; distinct clients or windows never produce the same key, so no
 * INSERT conflicts).
 *
 * <p>A Floe table without maintenance keeps every metadata file its commits wrote (Iceberg's default), and
 * each lists every snapshot so far: its bytes on disk grow with the square of the commits. A watchdog
 * stops a run whose table passes {@code --max-table-gb} on disk, and the results say when.
 */
public final class SoakBench {
  private static final String UPDATE_SCRIPT = "\\set id random(1, %d)\n"
      + "UPDATE %s SET bal = bal + 1 WHERE id = :id;\n"
      + "SELECT bal FROM %s WHERE id = :id;\n";
  private static final String INSERT_SCRIPT = UPDATE_SCRIPT
      + "\\set seq :seq + 1\n"
      + "\\set nid %d + 1 + :seq * %d + :client_id\n"
      + "INSERT INTO %s VALUES (:nid, 0);\n";
  /** Where each window's per-client key counter starts: above any count of transactions a window can reach. */
  private static final long SEQ_PER_WINDOW = 10_000_000L;
  private static final long WARM_ROWS = 10_000;

  record Options(double minutes, double windowMinutes, int clients, long rows, List<String> variants,
      List<Boolean> maintainer, double pgMinutes, int warmupSeconds, int scanRuns, double maxTableGb,
      int maintainSeconds, Path data, Path out, String label, String compaction, long compactionRows,
      int compactionFiles, boolean spark, Path sparkClasspath, String sparkHeap) {
    int windowSeconds() {
      return (int) Math.round(windowMinutes * 60);
    }

    int windows(double runMinutes) {
      return (int) Math.max(1, Math.round(runMinutes * 60 / windowSeconds()));
    }
  }

  static Options parse(String[] args) {
    double minutes = 30;
    double window = 5;
    int clients = 4;
    long rows = 1_000_000;
    String variant = "both";
    String maintainer = "both";
    Double pgMinutes = null;
    int warmup = 30;
    int scanRuns = 15; // a scan of a few ms on a shared 2-core machine: 5 runs left 25% noise
    double maxTableGb = 10;
    int maintainSeconds = 30;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    String label = "";
    String compaction = "on";
    long compactionRows = 10_000_000;
    int compactionFiles = 100;
    boolean spark = true;
    Path sparkClasspath = Path.of("bench/target/spark-classpath.txt");
    String sparkHeap = "4g";
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--minutes" -> minutes = Double.parseDouble(args[++i]);
        case "--window-minutes" -> window = Double.parseDouble(args[++i]);
        case "--clients" -> clients = Integer.parseInt(args[++i]);
        case "--rows" -> rows = Long.parseLong(args[++i]);
        case "--variant" -> variant = args[++i];
        case "--maintainer" -> maintainer = args[++i];
        case "--pg-minutes" -> pgMinutes = Double.parseDouble(args[++i]);
        case "--warmup-seconds" -> warmup = Integer.parseInt(args[++i]);
        case "--scan-runs" -> scanRuns = Integer.parseInt(args[++i]);
        case "--max-table-gb" -> maxTableGb = Double.parseDouble(args[++i]);
        case "--maintain-seconds" -> maintainSeconds = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--label" -> label = args[++i];
        case "--compaction" -> compaction = args[++i];
        case "--compaction-rows" -> compactionRows = Long.parseLong(args[++i]);
        case "--compaction-files" -> compactionFiles = Integer.parseInt(args[++i]);
        case "--no-spark" -> spark = false;
        case "--spark-classpath" -> sparkClasspath = Path.of(args[++i]);
        case "--spark-heap" -> sparkHeap = args[++i];
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    List<String> variants = switch (variant) {
      case "update" -> List.of("update");
      case "insert" -> List.of("insert");
      case "both" -> List.of("update", "insert");
      default -> throw new IllegalArgumentException("--variant is update, insert or both, not " + variant);
    };
    List<Boolean> maint = switch (maintainer) {
      case "on" -> List.of(true);
      case "off" -> List.of(false);
      case "both" -> List.of(true, false);
      default -> throw new IllegalArgumentException("--maintainer is on, off or both, not " + maintainer);
    };
    if (window <= 0 || minutes < window) {
      throw new IllegalArgumentException("--window-minutes must be positive and at most --minutes");
    }
    if (!List.of("on", "off", "only").contains(compaction)) {
      throw new IllegalArgumentException("--compaction is on, off or only, not " + compaction);
    }
    return new Options(minutes, window, clients, rows, variants, maint, pgMinutes == null ? minutes : pgMinutes,
        warmup, scanRuns, maxTableGb, maintainSeconds, data, out, label, compaction, compactionRows, compactionFiles,
        spark, sparkClasspath, sparkHeap);
  }

  public static void main(String[] args) throws Exception {
    Options o = parse(args);
    PgWireBench.Postgres pg = o.pgMinutes > 0 ? new PgWireBench.Postgres(o.data.resolve("pg15-soak").toAbsolutePath(),
        TransactionBench.freePort()) : null;
    Map<String, List<RunResult>> results = new LinkedHashMap<>();
    long t0 = System.nanoTime();
    String compaction = o.compaction.equals("off") ? null : compaction(o);
    try {
      if (pg != null && !o.compaction.equals("only")) {
        pg.start();
      }
      for (String variant : o.compaction.equals("only") ? List.<String>of() : o.variants) {
        List<RunResult> runs = new ArrayList<>();
        for (boolean on : o.maintainer) {
          runs.add(floeRun(o, variant, on));
        }
        if (pg != null) {
          runs.add(pgRun(o, variant, pg));
        }
        results.put(variant, runs);
      }
    } finally {
      if (pg != null) {
        pg.stop();
      }
    }
    System.err.printf(Locale.ROOT, "soak: done in %.1f min%n", (System.nanoTime() - t0) / 6e10);
    write(o, args, results, compaction);
  }

  // ---------------------------------------------------------------- compaction vs Spark

  /**
   * Compaction throughput: a table of {@code --compaction-rows} rows written by {@code --compaction-files}
   * INSERTs (one small file each), compacted by Floe ({@code floe maintain}'s compaction step, the
   * maintainer's code without its pacing) and, on a fresh copy of the same table, by Spark's
   * {@code rewrite_data_files} (a child JVM, as MutationBench runs Spark). Bytes rewritten are the input files'
   * bytes; the time is the step's (Floe) or the CALL's (Spark, after its SparkSession start and warm-up).
   */
  private static String compaction(Options o) throws Exception {
    MutationBench.Pristine table = MutationBench.Pristine.of(o.data.resolve("soak-compaction-" + o.compactionRows
        + "-" + o.compactionFiles).toAbsolutePath(), work -> {
          try (Database db = Floe.open(FloeConfig.builder(work).build())) {
            db.sql("CREATE TABLE cmp (id bigint PRIMARY KEY, bal bigint NOT NULL)").close();
            long per = o.compactionRows / o.compactionFiles;
            for (int f = 0; f < o.compactionFiles; f++) {
              long from = 1 + f * per;
              long to = f == o.compactionFiles - 1 ? o.compactionRows + 1 : from + per;
              db.sql("INSERT INTO cmp SELECT i, (i * 2654435761) % 1000003 FROM range(" + from + ", " + to + ") t(i)")
                  .close();
            }
          }
        });
    StringBuilder md = new StringBuilder("### Compaction throughput: Floe vs Spark `rewrite_data_files`\n\n");
    long[] expected;
    long files;
    long bytes;
    table.restore();
    MaintenanceRun floeRun = null;
    try (Database db = Floe.open(FloeConfig.builder(table.work()).build())) {
      expected = countSum(db, "cmp");
      try (Result res = db.sql("SELECT data_files, data_bytes FROM \"cmp$health\"")) {
        Row row = res.iterator().next();
        files = row.getLong(0);
        bytes = row.getLong(1);
      }
      System.err.println("soak: compaction: Floe, " + files + " files, " + bytes(bytes) + " ...");
      List<MaintenanceRun> runs = new ArrayList<>();
      long t0 = System.nanoTime();
      db.maintain(List.of("cmp"), false, runs::add);
      double wall = (System.nanoTime() - t0) / 1e9;
      for (MaintenanceRun m : runs) {
        if (m.action().equals("compact")) {
          floeRun = m;
        }
      }
      long[] after = countSum(db, "cmp");
      long filesAfter;
      try (Result res = db.sql("SELECT data_files FROM \"cmp$health\"")) {
        filesAfter = res.iterator().next().getLong(0);
      }
      md.append(String.format(Locale.ROOT, "The table: `cmp (id bigint PRIMARY KEY, bal bigint NOT NULL)`, %,d rows "
          + "written by %d INSERTs: %d data files, %s (`\"cmp$health\"`). Each engine compacts a fresh copy of "
          + "it.%n%n", o.compactionRows, o.compactionFiles, files, bytes(bytes)));
      md.append("| engine | files in → out | MB rewritten | s | MB/s rewritten | check |\n|---|---:|---:|---:|---:|---|\n");
      if (floeRun == null) {
        md.append("| Floe (`floe maintain`'s compaction step) | | | | | did not compact: ").append(runs).append(" |\n");
      } else {
        md.append(String.format(Locale.ROOT, "| Floe (`floe maintain`'s compaction step; maintain took %.1f s in "
            + "all) | %d → %d | %.1f | %.2f | %.1f | %s |%n", wall, files, filesAfter, floeRun.bytesRemoved() / 1e6,
            floeRun.millis() / 1e3, floeRun.bytesRemoved() / 1e3 / Math.max(1, floeRun.millis()),
            Arrays.equals(after, expected) ? "count, sum unchanged" : "**count, sum " + Arrays.toString(after)
            + " ≠ " + Arrays.toString(expected) + "**"));
      }
    }
    if (!o.spark) {
      md.append("| Spark | | | | | not measured (--no-spark) |\n");
    } else {
      SparkPeer spark = new SparkPeer(o.sparkClasspath.toAbsolutePath(), o.sparkHeap,
          o.data.resolve("spark-scratch").toAbsolutePath(), 50_000);
      if (spark.unavailable() != null) {
        md.append("| Spark | | | | | not measured: ").append(spark.unavailable().replace("|", "\\|")).append(" |\n");
      } else {
        table.restore();
        System.err.println("soak: compaction: Spark rewrite_data_files ...");
        try {
          MutationBench.PeerRun run = spark.run(table.work(), "cmp",
              "CALL {catalog}.system.rewrite_data_files(table => '{table}')");
          long removed = Long.parseLong(run.summary().getOrDefault("removed-files-size", "0"));
          String check;
          try (Database db = Floe.open(FloeConfig.builder(table.work()).build())) {
            long[] after = countSum(db, "cmp");
            check = Arrays.equals(after, expected) ? "Floe reads the same count, sum after it"
                : "**Floe reads count, sum " + Arrays.toString(after) + " ≠ " + Arrays.toString(expected) + "**";
          }
          md.append(String.format(Locale.ROOT, "| %s local[2] (SparkSession start %.1f s and warm-up %.1f s not "
              + "counted) | %s → %s | %.1f | %.2f | %.1f | %s |%n", run.versions(), run.startupSeconds(),
              run.warmUpSeconds(), run.summary().getOrDefault("deleted-data-files", "?"),
              run.summary().getOrDefault("added-data-files", "?"), removed / 1e6, run.statementSeconds(),
              removed / 1e6 / run.statementSeconds(), check));
        } catch (MutationBench.PeerFailure e) {
          md.append("| Spark | | | | | failed: ").append(e.getMessage().replace("|", "\\|")).append(" |\n");
        }
      }
    }
    table.discardWork();
    md.append('\n');
    System.err.print(md);
    return md.toString();
  }

  // ---------------------------------------------------------------- one run

  /** One window of one run. */
  record Window(int index, double seconds, long ok, long failed, double tps, double p50, double p99, double mean,
      double pgbenchTps, Sample sample) {}

  /** The Floe table's state at a moment. */
  record Sample(long dataFiles, long deleteFiles, long snapshots, long manifests, long metadataBytes,
      long liveDataBytes, Footprint disk) {

    /** The table on disk over its live data bytes. */
    double diskRatio() {
      return liveDataBytes == 0 ? 0 : (double) disk.totalBytes() / liveDataBytes;
    }
  }

  /** What a run measured. */
  static final class RunResult {
    String engine;
    boolean maintainer;
    final List<Window> windows = new ArrayList<>();
    /** When each window's pgbench started. */
    final List<java.time.Instant> windowStarts = new ArrayList<>();
    final Set<String> errors = new LinkedHashSet<>();
    String stopped;
    double loadSeconds;
    long ok;
    long failed;
    long rowsAfter;
    long sumAfter;
    long expectedRowsMin;
    long expectedRowsMax;
    long expectedSumMin;
    long expectedSumMax;
    Sample end;
    Footprint freshDisk;
    long freshDataBytes;
    long liveDataBytes;
    long liveDeleteBytes;
    double scanSoaked;
    double scanFresh;
    String scanNote = "";
    /** When the last window's pgbench ended. */
    java.time.Instant soakEnd;
    /** What {@code floe maintain acc} did after the soak (the maintainer stopped), the table then, its full scan. */
    final List<MaintenanceRun> byHand = new ArrayList<>();
    double byHandSeconds;
    long liveDataBytesQuiet;
    Sample quiet;
    double scanQuiet;
    String lateStep;
    /** The table once the maintainer tidied it after the writes stopped (its quiet step), its full scan. */
    Sample settled;
    long liveDataBytesSettled;
    double scanSettled;
    double settledSeconds;
    String settledStep;
    long pgTableBytes;
    long pgFreshBytes;
    final List<MaintenanceRun> maintenance = new ArrayList<>();
    boolean maintenanceTruncated;
    /** The largest of the table's samples every 5 s during the windows (on disk over live data), and when. */
    Sample peak;
    java.time.Instant peakAt;
    int traced;
  }

  private static RunResult floeRun(Options o, String variant, boolean maintainerOn) throws Exception {
    RunResult r = new RunResult();
    r.engine = "Floe";
    r.maintainer = maintainerOn;
    Path warehouse = o.data.resolve("soak-warehouse").toAbsolutePath();
    TransactionBench.deleteTree(warehouse);
    Path logs = o.data.resolve("soak-logs").toAbsolutePath();
    TransactionBench.deleteTree(logs);
    Files.createDirectories(logs);
    Path tableDir = warehouse.resolve("public").resolve("acc");
    String what = variant + ", Floe, maintainer " + (maintainerOn ? "on" : "off");
    System.err.println("soak: " + what + ": loading " + o.rows + " rows ...");
    Database db = Floe.open(FloeConfig.builder(warehouse).fenced(true).build());
    AutoCloseable advancer = db.startTailAdvancer(Duration.ofSeconds(1)); // as floe serve runs it
    AutoCloseable maintainer = maintainerOn ? db.startMaintainer(Duration.ofSeconds(o.maintainSeconds)) : null;
    PgServer server = PgServer.start(db, PgServer.Config.defaults().withPort(0));
    ScheduledExecutorService watch = Executors.newSingleThreadScheduledExecutor(t -> {
      Thread th = new Thread(t, "soak-watch");
      th.setDaemon(true);
      return th;
    });
    Map<String, MaintenanceRun> seen = new LinkedHashMap<>();
    Process[] current = new Process[1];
    try {
      long l0 = System.nanoTime();
      db.sql("CREATE TABLE acc (id bigint PRIMARY KEY, bal bigint NOT NULL)").close();
      db.sql("INSERT INTO acc SELECT i, 0 FROM range(1, " + (o.rows + 1) + ") t(i)").close();
      r.loadSeconds = (System.nanoTime() - l0) / 1e9;
      db.sql("CREATE TABLE warm (id bigint PRIMARY KEY, bal bigint NOT NULL)").close();
      db.sql("INSERT INTO warm SELECT i, 0 FROM range(1, " + (WARM_ROWS + 1) + ") t(i)").close();
      warmUp(o, variant, server.port(), "floe", logs);
      db.sql("DROP TABLE warm").close();
      Sample start = sample(db, tableDir);
      System.err.println("soak: " + what + ": start " + describe(start));

      long cap = (long) (o.maxTableGb * 1e9);
      watch.scheduleAtFixedRate(() -> {
        try {
          collect(db, seen, r);
          long bytes = trace(db, tableDir, logs.resolve("footprint.tsv"), r);
          if (bytes > cap && r.stopped == null) {
            r.stopped = String.format(Locale.ROOT, "stopped in window %d: the table reached %.1f GB on disk "
                + "(--max-table-gb %.1f)", r.windows.size() + 1, bytes / 1e9, o.maxTableGb);
            System.err.println("soak: " + r.stopped);
            synchronized (current) {
              if (current[0] != null) {
                current[0].destroy();
              }
            }
          }
        } catch (RuntimeException e) {
          System.err.println("soak: watch: " + e);
        }
      }, 5, 5, TimeUnit.SECONDS);

      String script = script(variant, "acc", o.rows, o.clients);
      int windows = o.windows(o.minutes);
      for (int w = 0; w < windows && r.stopped == null; w++) {
        Window win = window(o, w, server.port(), "floe", script, logs, r, current, () -> sample(db, tableDir));
        r.windows.add(win);
        System.err.println("soak: " + what + ": " + describe(win));
      }
      synchronized (r) {
        r.soakEnd = java.time.Instant.now();
      }
      // What the soak left, measured at once with the maintainer still running, as a user would find it.
      endFigures(o, variant, db, tableDir, r);
      watch.shutdownNow();
      watch.awaitTermination(1, TimeUnit.MINUTES);
      collect(db, seen, r);
      if (maintainer != null) {
        settle(o, db, tableDir, seen, r);
        stopMaintainer(db, maintainer, seen, r); // after the step it is taking
        maintainer = null;
      }
      // Then whether the table can be put right once the writes have stopped: `floe maintain acc`.
      System.err.println("soak: floe maintain acc ...");
      long m0 = System.nanoTime();
      db.maintain(List.of("acc"), false, r.byHand::add);
      r.byHandSeconds = (System.nanoTime() - m0) / 1e9;
      r.quiet = sample(db, tableDir);
      r.liveDataBytesQuiet = liveDataBytes(db);
      r.scanQuiet = scanAndCheck(o, db, r, "after floe maintain");
    } finally {
      watch.shutdownNow();
      server.close();
      if (maintainer != null) {
        maintainer.close();
      }
      advancer.close();
      db.close();
    }
    r.maintenance.addAll(seen.values());
    // every step, for reading beside footprint.tsv
    StringBuilder steps = new StringBuilder("started\ttable\taction\ttrigger\tfiles_removed\tfiles_added\t"
        + "snapshots_expired\tms\toutcome\n");
    for (MaintenanceRun m : r.maintenance) {
      steps.append(m.startedAt()).append('\t').append(m.table()).append('\t').append(m.action()).append('\t')
          .append(m.trigger()).append('\t').append(m.filesRemoved()).append('\t').append(m.filesAdded())
          .append('\t').append(m.snapshotsExpired()).append('\t').append(m.millis()).append('\t')
          .append(m.outcome()).append('\n');
    }
    Files.writeString(logs.resolve("maintenance.tsv"), steps);
    return r;
  }

  /**
   * Waits (at most a minute) for the maintainer's tidy of the quiet table (a compaction it takes once the
   * writes have paused: its trigger starts "quiet"), then measures the table and its full scan again: the
   * table as a user finds it once the workload has stopped.
   */
  private static void settle(Options o, Database db, Path tableDir, Map<String, MaintenanceRun> seen, RunResult r)
      throws IOException, InterruptedException {
    System.err.println("soak: waiting for the maintainer to tidy the quiet table ...");
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    MaintenanceRun tidy = null;
    while (tidy == null && System.nanoTime() < deadline) {
      Thread.sleep(200);
      collect(db, seen, r);
      synchronized (seen) {
        tidy = seen.values().stream().filter(m -> m.table().equals("public.acc") && m.action().equals("compact")
            && m.trigger().startsWith("quiet") && m.startedAt().isAfter(r.soakEnd)).findFirst().orElse(null);
      }
    }
    r.settledSeconds = Duration.between(r.soakEnd, java.time.Instant.now()).toMillis() / 1000.0;
    r.settledStep = tidy == null ? "no tidy within a minute" : String.format(Locale.ROOT,
        "%,d files out, %,d in, %.1f MB rewritten in %.1f s, %s", tidy.filesRemoved(), tidy.filesAdded(),
        tidy.bytesRemoved() / 1e6, tidy.millis() / 1000.0, tidy.outcome());
    r.settled = sample(db, tableDir);
    r.liveDataBytesSettled = liveDataBytes(db);
    r.scanSettled = scanAndCheck(o, db, r, "after the maintainer's tidy");
  }

  /**
   * Samples the table while the windows run (not after them): appends the sample to {@code file} (one line
   * a sample, the footprint by kind, for reading beside the maintainer's runs) and keeps the largest.
   *
   * @return the table's bytes on disk
   */
  private static long trace(Database db, Path tableDir, Path file, RunResult r) {
    Sample s;
    try {
      s = sample(db, tableDir);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    java.time.Instant now = java.time.Instant.now();
    synchronized (r) {
      if (r.soakEnd == null && !r.windowStarts.isEmpty()) {
        r.traced++;
        if (r.peak == null || s.diskRatio() > r.peak.diskRatio()) {
          r.peak = s;
          r.peakAt = now;
        }
      }
    }
    Footprint f = s.disk;
    String line = String.format(Locale.ROOT, "%s\t%.3f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d%n",
        now, s.diskRatio(), s.snapshots, s.dataFiles, s.liveDataBytes, f.dataFiles, f.dataBytes, f.deleteFiles,
        f.deleteBytes, f.manifests, f.manifestBytes, f.manifestLists, f.manifestListBytes, f.metadataFiles,
        f.metadataBytes, f.otherBytes);
    try {
      if (!Files.exists(file)) {
        Files.writeString(file, "at\tratio\tsnapshots\tlive_files\tlive_bytes\tdata_files\tdata_bytes\t"
            + "delete_files\tdelete_bytes\tmanifests\tmanifest_bytes\tlists\tlist_bytes\tmetadata_json\t"
            + "metadata_json_bytes\tother_bytes\n");
      }
      Files.writeString(file, line, java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return f.totalBytes();
  }

  /** The soaked table's live data bytes ({@code data_bytes} of {@code "acc$health"}). */
  private static long liveDataBytes(Database db) {
    try (Result res = db.sql("SELECT data_bytes FROM \"acc$health\"")) {
      return res.iterator().next().getLong(0);
    }
  }

  /** The soaked table's best full scan, its rows checked against the end figures' ({@code when}: in an error). */
  private static double scanAndCheck(Options o, Database db, RunResult r, String when) {
    double best = best(o.scanRuns, () -> countSum(db, "acc"));
    long[] cs = countSum(db, "acc");
    if (cs[0] != r.rowsAfter || cs[1] != r.sumAfter) {
      r.errors.add(when + " the table reads " + Arrays.toString(cs));
    }
    return best;
  }

  /**
   * Stops the maintainer after the step it is taking, recording the steps it ends meanwhile. Its handle waits
   * a minute for the step; a step that takes longer is waited for here but cannot be recorded (the database
   * reports no steps once its maintainer has stopped).
   */
  private static void stopMaintainer(Database db, AutoCloseable maintainer, Map<String, MaintenanceRun> seen,
      RunResult r) throws InterruptedException {
    long t0 = System.nanoTime();
    Thread closer = new Thread(() -> {
      try {
        maintainer.close();
      } catch (Exception e) {
        r.errors.add("stopping the maintainer: " + e);
      }
    }, "soak-stop-maintainer");
    closer.start();
    while (closer.isAlive()) {
      collect(db, seen, r);
      closer.join(500);
    }
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("floe-maintainer") && t.isAlive()) {
        t.join(Duration.ofMinutes(10).toMillis());
        r.lateStep = String.format(Locale.ROOT, "its last step went on %.0f s after it was told to stop%s "
            + "(not in the table: the database reports no steps once its maintainer has stopped)",
            (System.nanoTime() - t0) / 1e9, t.isAlive() ? " and had not ended after 10 minutes" : "");
      }
    }
  }

  /** Adds the maintainer's steps not seen yet (it keeps its last 500; polled often enough to see them all). */
  private static void collect(Database db, Map<String, MaintenanceRun> seen, RunResult r) {
    List<MaintenanceRun> runs = db.maintenanceRuns();
    synchronized (seen) {
      if (runs.size() >= 500 && !runs.isEmpty() && !seen.isEmpty()
          && !seen.containsKey(key(runs.get(0)))) {
        r.maintenanceTruncated = true;
      }
      for (MaintenanceRun m : runs) {
        seen.putIfAbsent(key(m), m);
      }
    }
  }

  private static String key(MaintenanceRun m) {
    return m.startedAt() + " " + m.table() + " " + m.action();
  }

  private static void endFigures(Options o, String variant, Database db, Path tableDir, RunResult r)
      throws IOException {
    r.end = sample(db, tableDir);
    System.err.println("soak: full scans of the soaked table ...");
    r.scanSoaked = best(o.scanRuns, () -> countSum(db, "acc"));
    try (Result res = db.sql("SELECT data_files, snapshots FROM \"acc$health\"")) {
      Row row = res.iterator().next();
      if (row.getLong(0) != r.end.dataFiles) {
        r.scanNote = String.format(Locale.ROOT, " (the maintainer committed a compaction meanwhile: %,d → %,d data "
            + "files; the best run may be after it)", r.end.dataFiles, row.getLong(0));
      }
    }
    try (Result res = db.sql("SELECT data_bytes, delete_bytes FROM \"acc$health\"")) {
      Row row = res.iterator().next();
      r.liveDataBytes = row.getLong(0);
      r.liveDeleteBytes = row.getLong(1);
    }
    long[] cs = countSum(db, "acc");
    r.rowsAfter = cs[0];
    r.sumAfter = cs[1];
    expected(o, variant, r);
    System.err.println("soak: a fresh copy, its full scans ...");
    db.sql("CREATE TABLE fresh (id bigint PRIMARY KEY, bal bigint NOT NULL)").close();
    db.sql("INSERT INTO fresh SELECT id, bal FROM acc ORDER BY id").close();
    r.freshDisk = Footprint.of(tableDir.resolveSibling("fresh"));
    try (Result res = db.sql("SELECT data_bytes FROM \"fresh$health\"")) {
      r.freshDataBytes = res.iterator().next().getLong(0);
    }
    r.scanFresh = best(o.scanRuns, () -> countSum(db, "fresh"));
    long[] fresh = countSum(db, "fresh");
    if (fresh[0] != r.rowsAfter || fresh[1] != r.sumAfter) {
      r.errors.add("the fresh copy reads " + Arrays.toString(fresh) + ", the soaked table " + r.rowsAfter + ", "
          + r.sumAfter);
    }
  }

  /** What count(*) and sum(bal) must be after the run, from the transactions pgbench logged. */
  private static void expected(Options o, String variant, RunResult r) {
    r.ok = r.windows.stream().mapToLong(Window::ok).sum();
    r.failed = r.windows.stream().mapToLong(Window::failed).sum();
    // A failed transaction may have committed its first statements (each statement commits by itself); a
    // stopped window may have committed statements its lost log lines do not show.
    long slack = r.failed + (r.stopped != null ? o.clients * 1000L : 0);
    r.expectedSumMin = r.ok;
    r.expectedSumMax = r.ok + slack;
    r.expectedRowsMin = o.rows + (variant.equals("insert") ? r.ok : 0);
    r.expectedRowsMax = r.expectedRowsMin + (variant.equals("insert") ? slack : 0);
    if (r.sumAfter < r.expectedSumMin || r.sumAfter > r.expectedSumMax || r.rowsAfter < r.expectedRowsMin
        || r.rowsAfter > r.expectedRowsMax) {
      r.errors.add(String.format(Locale.ROOT, "count(*) = %d, sum(bal) = %d; expected %s and %s", r.rowsAfter,
          r.sumAfter, range(r.expectedRowsMin, r.expectedRowsMax), range(r.expectedSumMin, r.expectedSumMax)));
    }
  }

  private static String range(long a, long b) {
    return a == b ? Long.toString(a) : a + "–" + b;
  }

  private static long[] countSum(Database db, String table) {
    try (Result res = db.sql("SELECT count(*), sum(bal) FROM " + table)) {
      Row row = res.iterator().next();
      return new long[] {row.getLong(0), row.getLong(1)};
    }
  }

  interface Scan {
    long[] run() throws Exception;
  }

  /** Best of {@code n} warm runs (after one warm-up), ms. */
  private static double best(int n, Scan a) {
    try {
      a.run();
      double best = Double.MAX_VALUE;
      for (int i = 0; i < n; i++) {
        long t0 = System.nanoTime();
        a.run();
        best = Math.min(best, (System.nanoTime() - t0) / 1e6);
      }
      return best;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Best of {@code n} warm runs of each (one warm-up each, then alternating), ms. */
  private static double[] bestScans(int n, Scan a, Scan b) {
    try {
      a.run();
      b.run();
      double bestA = Double.MAX_VALUE;
      double bestB = Double.MAX_VALUE;
      for (int i = 0; i < n; i++) {
        long t0 = System.nanoTime();
        a.run();
        bestA = Math.min(bestA, (System.nanoTime() - t0) / 1e6);
        t0 = System.nanoTime();
        b.run();
        bestB = Math.min(bestB, (System.nanoTime() - t0) / 1e6);
      }
      return new double[] {bestA, bestB};
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static RunResult pgRun(Options o, String variant, PgWireBench.Postgres pg) throws Exception {
    RunResult r = new RunResult();
    r.engine = "PostgreSQL";
    Path logs = o.data.resolve("soak-logs").toAbsolutePath();
    TransactionBench.deleteTree(logs);
    Files.createDirectories(logs);
    String url = "jdbc:postgresql://127.0.0.1:" + pg.port + "/postgres";
    System.err.println("soak: " + variant + ", PostgreSQL: loading " + o.rows + " rows ...");
    try (Connection c = DriverManager.getConnection(url, "floe", ""); Statement st = c.createStatement()) {
      for (String t : List.of("acc", "warm", "fresh")) {
        st.execute("DROP TABLE IF EXISTS " + t);
      }
      long l0 = System.nanoTime();
      st.execute("CREATE TABLE acc (id bigint PRIMARY KEY, bal bigint NOT NULL)");
      st.execute("INSERT INTO acc SELECT i, 0 FROM generate_series(1, " + o.rows + ") AS g(i)");
      st.execute("VACUUM ANALYZE acc");
      r.loadSeconds = (System.nanoTime() - l0) / 1e9;
      st.execute("CREATE TABLE warm (id bigint PRIMARY KEY, bal bigint NOT NULL)");
      st.execute("INSERT INTO warm SELECT i, 0 FROM generate_series(1, " + WARM_ROWS + ") AS g(i)");
      warmUp(o, variant, pg.port, "postgres", logs);
      st.execute("DROP TABLE warm");
      String script = script(variant, "acc", o.rows, o.clients);
      Process[] current = new Process[1];
      int windows = o.windows(o.pgMinutes);
      for (int w = 0; w < windows; w++) {
        Window win = window(o, w, pg.port, "postgres", script, logs, r, current, () -> null);
        r.windows.add(win);
        System.err.println("soak: " + variant + ", PostgreSQL: " + describe(win));
      }
      r.rowsAfter = pgLong(st, "SELECT count(*) FROM acc");
      r.sumAfter = pgLong(st, "SELECT sum(bal) FROM acc");
      expected(o, variant, r);
      r.pgTableBytes = pgLong(st, "SELECT pg_total_relation_size('acc')");
      st.execute("CREATE TABLE fresh (id bigint PRIMARY KEY, bal bigint NOT NULL)");
      st.execute("INSERT INTO fresh SELECT id, bal FROM acc ORDER BY id");
      st.execute("VACUUM ANALYZE fresh");
      r.pgFreshBytes = pgLong(st, "SELECT pg_total_relation_size('fresh')");
      double[] best = bestScans(o.scanRuns, () -> pgCountSum(st, "acc"), () -> pgCountSum(st, "fresh"));
      r.scanSoaked = best[0];
      r.scanFresh = best[1];
      st.execute("DROP TABLE fresh");
    }
    return r;
  }

  private static long pgLong(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long[] pgCountSum(Statement st, String table) throws SQLException {
    try (ResultSet rs = st.executeQuery("SELECT count(*), sum(bal) FROM " + table)) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2)};
    }
  }

  // ---------------------------------------------------------------- pgbench

  static String script(String variant, String table, long rows, int clients) {
    return variant.equals("insert")
        ? String.format(Locale.ROOT, INSERT_SCRIPT, rows, table, table, rows, clients, table)
        : String.format(Locale.ROOT, UPDATE_SCRIPT, rows, table, table);
  }

  private static void warmUp(Options o, String variant, int port, String database, Path logs) throws Exception {
    if (o.warmupSeconds <= 0) {
      return;
    }
    System.err.println("soak: warm-up, " + o.warmupSeconds + " s on a " + WARM_ROWS + "-row table ...");
    Path file = logs.resolve("warm.sql");
    Files.writeString(file, script(variant, "warm", WARM_ROWS, o.clients));
    Process p = pgbench(o, port, database, file, o.warmupSeconds, 0, null, logs.resolve("warm.out"));
    p.waitFor();
  }

  private static Process pgbench(Options o, int port, String database, Path script, int seconds, long seq,
      Path logPrefix, Path output) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(PgWireBench.Postgres.tool("pgbench"), "-n", "-M", "prepared", "-c",
        Integer.toString(o.clients), "-j", Integer.toString(Math.min(o.clients, 2)), "-T", Integer.toString(seconds),
        "-D", "seq=" + seq, "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "floe", "-f", script.toString()));
    if (logPrefix != null) {
      cmd.addAll(List.of("-l", "--log-prefix=" + logPrefix));
    }
    // a failed transaction's error, in the window's output (one was seen once and could not be explained)
    cmd.addAll(List.of("--failures-detailed", "--verbose-errors"));
    cmd.add(database);
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output.toFile()).start();
  }

  interface Sampler {
    Sample sample() throws IOException;
  }

  private static final Pattern TPS = Pattern.compile("tps = ([0-9.]+)");

  /** Runs window {@code w}: one pgbench run of the window's length, its per-transaction log read back. */
  private static Window window(Options o, int w, int port, String database, String script, Path logs, RunResult r,
      Process[] current, Sampler sampler) throws Exception {
    Path file = logs.resolve("script.sql");
    Files.writeString(file, script);
    String prefix = "tx-w" + w;
    Path output = logs.resolve(prefix + ".out");
    long t0 = System.nanoTime();
    Process p;
    synchronized (current) {
      if (r.stopped != null) {
        return new Window(w, 0, 0, 0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, null);
      }
      p = pgbench(o, port, database, file, o.windowSeconds(), w * SEQ_PER_WINDOW, logs.resolve(prefix), output);
      current[0] = p;
      r.windowStarts.add(java.time.Instant.now());
    }
    int exit = p.waitFor();
    double elapsed = (System.nanoTime() - t0) / 1e9;
    synchronized (current) {
      current[0] = null;
    }
    Sample sample = sampler.sample();
    String out = Files.readString(output);
    for (String line : out.split("\n")) {
      String l = line.toLowerCase(Locale.ROOT);
      if (l.contains("error") || l.contains("abort") || l.contains("fatal")) {
        r.errors.add("window " + (w + 1) + ": " + line.strip());
        // said now too: a run stopped before its report keeps it in the log
        System.err.println("soak: " + database + ", window " + (w + 1) + ": " + line.strip());
      }
    }
    if (exit != 0 && r.stopped == null) {
      r.errors.add("window " + (w + 1) + ": pgbench exited with " + exit);
    }
    Matcher tps = TPS.matcher(out);
    double pgbenchTps = tps.find() ? Double.parseDouble(tps.group(1)) : Double.NaN;

    // The per-transaction log: client, transaction, latency in µs (or failed / skipped), script, and the
    // transaction's end as epoch seconds and microseconds.
    IntList latencies = new IntList();
    long failed = 0;
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    List<Path> files;
    try (var list = Files.list(logs)) {
      files = list.filter(f -> f.getFileName().toString().startsWith(prefix + ".") && !f.toString().endsWith(".out"))
          .toList();
    }
    for (Path f : files) {
      try (BufferedReader in = Files.newBufferedReader(f, StandardCharsets.US_ASCII)) {
        String line;
        while ((line = in.readLine()) != null) {
          String[] c = line.split(" ");
          if (c.length < 6) {
            continue;
          }
          long end = Long.parseLong(c[4]) * 1_000_000 + Long.parseLong(c[5]);
          if (c[2].chars().allMatch(Character::isDigit)) {
            int us = Integer.parseInt(c[2]);
            latencies.add(us);
            first = Math.min(first, end - us);
          } else {
            failed++;
          }
          last = Math.max(last, end);
        }
      }
      Files.delete(f);
    }
    // a complete window lasts what -T says; a stopped one, until it was stopped
    // (a stopped pgbench loses the log lines it had not written out: its tps is not known)
    double seconds = exit == 0 ? o.windowSeconds()
        : latencies.n == 0 ? elapsed : Math.max(1e-3, Math.min(elapsed, (last - first) / 1e6));
    int[] sorted = latencies.sorted();
    double mean = 0;
    for (int v : sorted) {
      mean += v;
    }
    mean = sorted.length == 0 ? Double.NaN : mean / sorted.length / 1000.0;
    return new Window(w, seconds, sorted.length, failed, exit != 0 && r.stopped != null ? Double.NaN
        : sorted.length / seconds, percentile(sorted, 50),
        percentile(sorted, 99), mean, pgbenchTps, sample);
  }

  /** Nearest-rank percentile, ms. */
  private static double percentile(int[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1000.0;
  }

  /** A growable int array. */
  static final class IntList {
    private int[] a = new int[1 << 12];
    private int n;

    void add(int v) {
      if (n == a.length) {
        a = Arrays.copyOf(a, a.length * 2);
      }
      a[n++] = v;
    }

    int[] sorted() {
      int[] s = Arrays.copyOf(a, n);
      Arrays.sort(s);
      return s;
    }
  }

  // ---------------------------------------------------------------- the table's state

  private static Sample sample(Database db, Path tableDir) throws IOException {
    try (Result res = db.sql("SELECT data_files, delete_files, snapshots, manifests, metadata_bytes, data_bytes "
        + "FROM \"acc$health\"")) {
      Row row = res.iterator().next();
      return new Sample(row.getLong(0), row.getLong(1), row.getLong(2), row.getLong(3), row.getLong(4),
          row.getLong(5), Footprint.of(tableDir));
    }
  }

  /** A table's files on disk, by kind (whether any version still names them or not). */
  record Footprint(long dataFiles, long dataBytes, long deleteFiles, long deleteBytes, long manifests,
      long manifestBytes, long manifestLists, long manifestListBytes, long metadataFiles, long metadataBytes,
      long otherFiles, long otherBytes) {

    long totalBytes() {
      return dataBytes + deleteBytes + manifestBytes + manifestListBytes + metadataBytes + otherBytes;
    }

    static Footprint of(Path dir) {
      long[] f = new long[12];
      if (!Files.isDirectory(dir)) {
        return new Footprint(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
      }
      try {
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path p, BasicFileAttributes a) {
            String name = p.getFileName().toString();
            int k = name.endsWith("-deletes.parquet") || name.endsWith(".puffin") ? 2
                : name.endsWith(".parquet") ? 0
                : name.endsWith(".metadata.json") ? 8
                : name.startsWith("snap-") && name.endsWith(".avro") ? 6
                : name.endsWith(".avro") ? 4 : 10;
            f[k]++;
            f[k + 1] += a.size();
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path p, IOException e) {
            return FileVisitResult.CONTINUE; // deleted meanwhile
          }
        });
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      return new Footprint(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11]);
    }
  }

  // ---------------------------------------------------------------- output

  private static String describe(Sample s) {
    return s == null ? "" : String.format(Locale.ROOT, "%d data / %d delete files live, %d snapshots, metadata.json "
        + "%s, on disk %s = %.2fx its live data in %d files (%d metadata.json)", s.dataFiles, s.deleteFiles,
        s.snapshots, bytes(s.metadataBytes), bytes(s.disk.totalBytes()), s.diskRatio(), s.disk.dataFiles + s.disk.deleteFiles + s.disk.manifests
        + s.disk.manifestLists + s.disk.metadataFiles + s.disk.otherFiles, s.disk.metadataFiles);
  }

  private static String describe(Window w) {
    return String.format(Locale.ROOT, "window %d: %.1f tps (pgbench: %.1f), p50 %.2f ms, p99 %.2f ms, %d failed; %s",
        w.index + 1, w.tps, w.pgbenchTps, w.p50, w.p99, w.failed, describe(w.sample));
  }

  static String bytes(long b) {
    return b >= 1e9 ? String.format(Locale.ROOT, "%.2f GB", b / 1e9)
        : b >= 1e6 ? String.format(Locale.ROOT, "%.1f MB", b / 1e6)
        : b >= 1e3 ? String.format(Locale.ROOT, "%.1f kB", b / 1e3) : b + " B";
  }

  private static String num(double v) {
    return Double.isNaN(v) ? "–" : v >= 100 ? String.format(Locale.ROOT, "%,.0f", v)
        : String.format(Locale.ROOT, "%.2f", v);
  }

  private static String runName(RunResult r) {
    return r.engine.equals("Floe") ? "Floe, maintainer " + (r.maintainer ? "on" : "off") : r.engine;
  }

  private static final Pattern GAVE_WAY = Pattern.compile("gave way to concurrent writers (\\d+)");
  private static final Pattern WAITED = Pattern.compile("after waiting (\\d+) s");

  /** Per action: runs, files removed / added, bytes removed / added, ms, gave way, failed, deferred runs, s deferred. */
  private static Map<String, long[]> byAction(List<MaintenanceRun> runs) {
    Map<String, long[]> m = new TreeMap<>();
    for (MaintenanceRun run : runs) {
      long[] a = m.computeIfAbsent(run.table() + " " + run.action(), k -> new long[11]);
      a[0]++;
      a[1] += run.filesRemoved();
      a[2] += run.filesAdded();
      a[3] += run.bytesRemoved();
      a[4] += run.bytesAdded();
      a[5] += run.millis();
      Matcher g = GAVE_WAY.matcher(run.outcome());
      a[6] += g.find() ? Long.parseLong(g.group(1)) : 0;
      a[7] += run.outcome().startsWith("failed") ? 1 : 0;
      Matcher d = WAITED.matcher(run.trigger());
      if (d.find()) {
        a[8]++;
        a[9] += Long.parseLong(d.group(1));
      }
      a[10] += run.snapshotsExpired();
    }
    return m;
  }

  private static void write(Options o, String[] args, Map<String, List<RunResult>> results, String compaction)
      throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("## Soak: Floe server, synchronous one-row writes, maintainer on / off, vs PostgreSQL 15 — ")
        .append(LocalDate.now()).append(o.label.isEmpty() ? "" : " (" + o.label + ")").append("\n\n");
    md.append("- Command: `bench/run soak").append(args.length > 0 ? " " + String.join(" ", args) : "").append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append("; PostgreSQL ")
        .append(PgWireBench.Postgres.version()).append(" (Debian package, `shared_buffers=512MB`, autovacuum on) on "
            + "the same machine\n");
    md.append(String.format(Locale.ROOT, "- %,d accounts `acc (id bigint PRIMARY KEY, bal bigint NOT NULL)`; Floe's "
        + "without a tail (the synchronous path: every statement commits; format v2, merge-on-read: position-delete "
        + "files), served as `floe serve` serves it (tail advancer every 1 s; the maintainer every %d s when on). "
        + "pgbench -M prepared -c %d -j %d, one `-T %d` run per %s-minute window (the clients reconnect between "
        + "windows), per-transaction logs: tps = transactions that succeeded / window, p50/p99 exact. Before each "
        + "run a %d s warm-up of the same script on a separate %,d-row table (dropped). Floe: %s min per run; "
        + "PostgreSQL: %s min.%n", o.rows, o.maintainSeconds, o.clients, Math.min(o.clients, 2), o.windowSeconds(),
        trim(o.windowMinutes), o.warmupSeconds, WARM_ROWS, trim(o.minutes), trim(o.pgMinutes)));
    md.append("- Scripts: update = `\\set id random(1, rows)`; `UPDATE acc SET bal = bal + 1 WHERE id = :id`; "
        + "`SELECT bal FROM acc WHERE id = :id`. insert = the same, then `INSERT INTO acc VALUES (:nid, 0)` with "
        + "`:nid = rows + 1 + :seq * clients + :client_id`, `:seq` a per-client counter (`\\set seq :seq + 1`, "
        + "started at window × 10^7 by `-D`): keys never collide, so no INSERT conflicts.\n");
    md.append("- Table on disk: every file under the table's directory (data/ and metadata/), named by a version "
        + "or not; live data bytes: `data_bytes` of `\"acc$health\"` (the current version's data files); fresh: "
        + "the same rows loaded into a new table with the same DDL (`INSERT ... SELECT ... ORDER BY id`). Full "
        + "scan: `SELECT count(*), sum(bal)` embedded (PostgreSQL: over JDBC), best of " + o.scanRuns
        + " warm runs. The end figures are taken as soon as pgbench ends, the maintainer still running (as a user would "
        + "find the table; the soaked table's scans first, then the fresh copy's); then the maintainer is stopped "
        + "after its step in progress, `floe maintain acc` runs (Database.maintain), and the table is measured "
        + "again.\n\n");
    for (Map.Entry<String, List<RunResult>> e : results.entrySet()) {
      variantSection(md, o, e.getKey(), e.getValue());
    }
    if (compaction != null) {
      md.append(compaction);
    }
    QueryBench.appendResults(o.out, md);
  }

  private static String trim(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
  }

  private static void variantSection(StringBuilder md, Options o, String variant, List<RunResult> runs) {
    md.append("### ").append(variant.equals("insert") ? "Variant insert: UPDATE + SELECT + INSERT of a new key"
        : "Variant update: UPDATE + SELECT by key").append("\n\n");
    int windows = runs.stream().mapToInt(r -> r.windows.size()).max().orElse(0);
    StringBuilder head = new StringBuilder("| window |");
    StringBuilder rule = new StringBuilder("|---|");
    for (RunResult r : runs) {
      head.append(' ').append(runName(r)).append(": tps | p50 ms | p99 ms |");
      rule.append("---:|---:|---:|");
    }
    md.append(head).append('\n').append(rule).append('\n');
    for (int w = 0; w < windows; w++) {
      md.append("| ").append(String.format(Locale.ROOT, "%s–%s min", trim(w * o.windowMinutes),
          trim((w + 1) * o.windowMinutes))).append(" |");
      for (RunResult r : runs) {
        if (w < r.windows.size()) {
          Window win = r.windows.get(w);
          md.append(' ').append(num(win.tps)).append(win.failed > 0 ? " (" + win.failed + " failed)" : "")
              .append(win.seconds < o.windowSeconds() - 1 ? String.format(Locale.ROOT, " (%.0f s)", win.seconds) : "")
              .append(" | ").append(num(win.p50)).append(" | ").append(num(win.p99)).append(" |");
        } else {
          md.append(" | | |");
        }
      }
      md.append('\n');
    }
    md.append('\n');

    List<RunResult> floe = runs.stream().filter(r -> r.engine.equals("Floe")).toList();
    if (!floe.isEmpty()) {
      md.append("Floe's table at the end of each window (live: `\"acc$health\"`; disk: every file under the table's "
          + "directory), and the maintainer's steps that started in it (steps before the first window are counted "
          + "in it):\n\n| window |");
      for (RunResult r : floe) {
        md.append(' ').append(runName(r)).append(": live data / delete files, snapshots, metadata.json | on disk "
            + "(metadata.json files) | on disk / live data bytes |").append(r.maintainer ? " maintainer's steps |" : "");
      }
      md.append("\n|---|");
      for (RunResult r : floe) {
        md.append(r.maintainer ? "---|---:|---:|---|" : "---|---:|---:|");
      }
      md.append('\n');
      for (int w = 0; w < windows; w++) {
        md.append("| ").append(w + 1).append(" |");
        for (RunResult r : floe) {
          Sample s = w < r.windows.size() ? r.windows.get(w).sample : null;
          if (s == null) {
            md.append(" | | |");
          } else {
            md.append(String.format(Locale.ROOT, " %d / %d, %d, %s | %s (%,d) | %.2f× |", s.dataFiles, s.deleteFiles,
                s.snapshots, bytes(s.metadataBytes), bytes(s.disk.totalBytes()), s.disk.metadataFiles,
                s.diskRatio()));
          }
          if (r.maintainer) {
            md.append(' ').append(s == null ? "" : stepsIn(r, w)).append(" |");
          }
        }
        md.append('\n');
      }
      md.append('\n');
    }

    md.append("At the end:\n\n| measure |");
    for (RunResult r : runs) {
      md.append(' ').append(runName(r)).append(" |");
    }
    md.append("\n|---|").append("---:|".repeat(runs.size())).append('\n');
    row(md, runs, "length", r -> String.format(Locale.ROOT, "%.1f min%s", r.windows.stream()
        .mapToDouble(Window::seconds).sum() / 60.0, r.stopped != null ? " (" + r.stopped + "; pgbench was killed: "
        + "that window's tps is not known, its log lines lost)" : ""));
    row(md, runs, "load of the table", r -> String.format(Locale.ROOT, "%.1f s", r.loadSeconds));
    row(md, runs, "transactions: succeeded / failed", r -> String.format(Locale.ROOT, "%,d / %,d", r.ok, r.failed));
    row(md, runs, "`count(*)`, `sum(bal)` (expected from the log)", r -> String.format(Locale.ROOT,
        "%,d, %,d (%s, %s)", r.rowsAfter, r.sumAfter, range(r.expectedRowsMin, r.expectedRowsMax),
        range(r.expectedSumMin, r.expectedSumMax)));
    row(md, runs, "live data files / delete files / manifests / snapshots", r -> r.end == null ? "" : String.format(
        Locale.ROOT, "%d / %d / %d / %d", r.end.dataFiles, r.end.deleteFiles, r.end.manifests, r.end.snapshots));
    row(md, runs, "files on disk: data / delete / manifests / manifest lists / metadata.json", r -> r.end == null ? ""
        : String.format(Locale.ROOT, "%,d / %,d / %,d / %,d / %,d", r.end.disk.dataFiles, r.end.disk.deleteFiles,
        r.end.disk.manifests, r.end.disk.manifestLists, r.end.disk.metadataFiles));
    row(md, runs, "bytes on disk: data / delete / manifests + lists / metadata.json", r -> r.end == null ? ""
        : bytes(r.end.disk.dataBytes) + " / " + bytes(r.end.disk.deleteBytes) + " / "
        + bytes(r.end.disk.manifestBytes + r.end.disk.manifestListBytes) + " / " + bytes(r.end.disk.metadataBytes));
    row(md, runs, "newest metadata.json", r -> r.end == null ? "" : bytes(r.end.metadataBytes));
    row(md, runs, "table on disk / live data bytes (`acc$health`)", r -> r.end != null
        ? String.format(Locale.ROOT, "%s / %s = %.2f×", bytes(r.end.disk.totalBytes()), bytes(r.liveDataBytes),
            (double) r.end.disk.totalBytes() / r.liveDataBytes)
        : String.format(Locale.ROOT, "%s (`pg_total_relation_size`, with the key's index)", bytes(r.pgTableBytes)));
    row(md, runs, "table on disk / the same rows freshly loaded, on disk", r -> r.end != null
        ? String.format(Locale.ROOT, "%s / %s = %.2f×", bytes(r.end.disk.totalBytes()), bytes(r.freshDisk.totalBytes()),
            (double) r.end.disk.totalBytes() / r.freshDisk.totalBytes())
        : String.format(Locale.ROOT, "%s / %s = %.2f×", bytes(r.pgTableBytes), bytes(r.pgFreshBytes),
            (double) r.pgTableBytes / r.pgFreshBytes));
    row(md, runs, "full scan `count(*), sum(bal)`: soaked / fresh, best of " + o.scanRuns, r -> String.format(
        Locale.ROOT, "%.1f / %.1f ms = %.2f×%s", r.scanSoaked, r.scanFresh, r.scanSoaked / r.scanFresh, r.scanNote));
    if (floe.stream().anyMatch(r -> r.maintainer)) {
      row(md, runs, "the maintainer's steps after the soak (during the end figures, until it stopped after the "
          + "step it was taking)", r -> !r.maintainer ? "" : stepsBetween(r, r.soakEnd, java.time.Instant.MAX)
          + (r.lateStep != null ? "; " + r.lateStep : ""));
    }
    if (floe.stream().anyMatch(r -> r.maintainer)) {
      row(md, runs, "the maintainer's tidy of the quiet table (`floe.maintenance.quiet-ms`, 5 s after the last "
          + "write), waited for after the end figures", r -> r.settled == null ? "" : String.format(Locale.ROOT,
          "%s; measured %.0f s after the soak", r.settledStep, r.settledSeconds));
      row(md, runs, "after it: live data / delete files, snapshots; table on disk / live data bytes; full scan / "
          + "the fresh table's", r -> r.settled == null ? "" : String.format(Locale.ROOT,
          "%d / %d, %d; %.2f×; %.1f ms = %.2f×", r.settled.dataFiles, r.settled.deleteFiles, r.settled.snapshots,
          (double) r.settled.disk.totalBytes() / r.liveDataBytesSettled, r.scanSettled, r.scanSettled / r.scanFresh));
    }
    row(md, runs, "then `floe maintain acc` (every step at once, by the table's policy), writes stopped: its steps",
        r -> r.quiet == null ? "" : byHand(r));
    row(md, runs, "after it: live data / delete files, snapshots; on disk (metadata.json files); newest metadata.json",
        r -> r.quiet == null ? "" : String.format(Locale.ROOT, "%d / %d, %d; %s (%,d); %s", r.quiet.dataFiles,
        r.quiet.deleteFiles, r.quiet.snapshots, bytes(r.quiet.disk.totalBytes()), r.quiet.disk.metadataFiles,
        bytes(r.quiet.metadataBytes)));
    row(md, runs, "after it: table on disk / live data bytes; full scan / the fresh table's", r -> r.quiet == null
        ? "" : String.format(Locale.ROOT, "%.2f×; %.1f ms = %.2f×", (double) r.quiet.disk.totalBytes()
        / r.liveDataBytesQuiet, r.scanQuiet, r.scanQuiet / r.scanFresh));
    row(md, runs, "problems (pgbench errors, checks)", r -> r.errors.isEmpty() ? "none"
        : String.join("; ", r.errors.stream().limit(5).toList()).replace("|", "\\|")
        + (r.errors.size() > 5 ? "; … (" + r.errors.size() + " in all)" : ""));
    md.append('\n');

    for (RunResult r : floe) {
      if (!r.maintainer) {
        continue;
      }
      md.append("What the maintainer did (").append(runName(r)).append(r.maintenanceTruncated
          ? "; some steps were missed: the maintainer keeps its last 500" : "").append("):\n\n");
      md.append("| table, action | runs | files removed / added | MB removed / added | snapshots expired | s "
          + "| MB/s removed | gave way | failed | deferred for load (runs, s) |\n"
          + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      for (Map.Entry<String, long[]> e : byAction(r.maintenance).entrySet()) {
        long[] a = e.getValue();
        md.append(String.format(Locale.ROOT, "| %s | %d | %,d / %,d | %.2f / %.2f | %,d | %.1f | %s | %d | %d | %d, %d |%n",
            e.getKey(), a[0], a[1], a[2], a[3] / 1e6, a[4] / 1e6, a[10], a[5] / 1e3,
            a[3] > 0 && a[5] > 0 ? String.format(Locale.ROOT, "%.2f", a[3] / 1e3 / a[5]) : "", a[6], a[7], a[8], a[9]));
      }
      Set<String> failures = new LinkedHashSet<>();
      for (MaintenanceRun m : r.maintenance) {
        if (m.outcome().startsWith("failed")) {
          failures.add(m.action() + ": " + m.outcome());
        }
      }
      if (!failures.isEmpty()) {
        md.append("\nFailed steps: ").append(String.join("; ", failures.stream().limit(5).toList()).replace("|", "\\|"))
            .append('\n');
      }
      md.append('\n');
      goals(md, r);
    }
  }

  /** What {@code floe maintain} did, step by step. */
  private static String byHand(RunResult r) {
    List<String> parts = new ArrayList<>();
    for (MaintenanceRun m : r.byHand) {
      parts.add(String.format(Locale.ROOT, "%s: %,d files out, %,d in, %s snapshots expired, %.1f s, %s", m.action(),
          m.filesRemoved(), m.filesAdded(), m.snapshotsExpired(), m.millis() / 1e3, m.outcome()));
    }
    return String.format(Locale.ROOT, "%.1f s in all: ", r.byHandSeconds) + String.join("; ", parts)
        .replace("|", "\\|");
  }

  /** The maintainer's steps that started in window {@code w}, by action. */
  private static String stepsIn(RunResult r, int w) {
    java.time.Instant from = w == 0 ? java.time.Instant.MIN : r.windowStarts.get(w);
    java.time.Instant to = w + 1 < r.windowStarts.size() ? r.windowStarts.get(w + 1)
        : r.soakEnd != null ? r.soakEnd : java.time.Instant.MAX;
    return stepsBetween(r, from, to);
  }

  /** The maintainer's steps on the soaked table that started in [from, to), by action. */
  private static String stepsBetween(RunResult r, java.time.Instant from, java.time.Instant to) {
    List<MaintenanceRun> in = r.maintenance.stream().filter(m -> m.table().equals("public.acc")
        && !m.startedAt().isBefore(from) && m.startedAt().isBefore(to)).toList();
    List<String> parts = new ArrayList<>();
    for (Map.Entry<String, long[]> e : byAction(in).entrySet()) {
      long[] a = e.getValue();
      String action = e.getKey().substring(e.getKey().lastIndexOf(' ') + 1);
      StringBuilder b = new StringBuilder(action).append(" ×").append(a[0]);
      List<String> what = new ArrayList<>();
      if (a[1] > 0 || action.equals("compact")) {
        what.add(a[1] + " files out");
      }
      if (a[10] > 0) {
        what.add(a[10] + " snapshots");
      }
      if (a[6] > 0) {
        what.add("gave way " + a[6]);
      }
      if (a[7] > 0) {
        what.add(a[7] + " failed");
      }
      if (!what.isEmpty()) {
        b.append(" (").append(String.join(", ", what)).append(')');
      }
      parts.add(b.toString());
    }
    return parts.isEmpty() ? "none" : String.join("; ", parts);
  }

  private static void goals(StringBuilder md, RunResult r) {
    if (r.windows.size() < 2 || r.end == null) {
      return;
    }
    Window first = r.windows.get(0);
    Window last = r.windows.get(r.windows.size() - 1);
    md.append("Issue 20's goals, ").append(runName(r)).append(":\n\n| goal | figure | met |\n|---|---:|---|\n");
    goal(md, "last window's tps ≥ 0.9 × the first's", String.format(Locale.ROOT, "%s / %s = %.2f", num(last.tps),
        num(first.tps), last.tps / first.tps), last.tps >= 0.9 * first.tps);
    goal(md, "last window's p99 ≤ 1.2 × the first's", String.format(Locale.ROOT, "%s / %s ms = %.2f", num(last.p99),
        num(first.p99), last.p99 / first.p99), last.p99 <= 1.2 * first.p99);
    goal(md, "full scan right after the soak (writes just stopped, the maintainer at work) ≤ 1.2 × the fresh "
        + "table's", String.format(Locale.ROOT, "%.2f", r.scanSoaked / r.scanFresh), r.scanSoaked <= 1.2 * r.scanFresh);
    if (r.settled != null) {
      goal(md, "full scan once the maintainer tidied the quiet table ≤ 1.2 × the fresh table's", String.format(
          Locale.ROOT, "%.2f (%.0f s after the soak)", r.scanSettled / r.scanFresh, r.settledSeconds),
          r.scanSettled <= 1.2 * r.scanFresh);
    }
    double disk = (double) r.end.disk.totalBytes() / r.liveDataBytes;
    goal(md, "table on disk ≤ 3 × its live data bytes", String.format(Locale.ROOT, "%.2f× (fresh: %.2f×)", disk,
        (double) r.end.disk.totalBytes() / r.freshDisk.totalBytes()), disk <= 3);
    double worst = r.windows.stream().mapToDouble(w -> w.sample.diskRatio()).max().orElse(0);
    goal(md, "table on disk ≤ 3 × its live data bytes at every window's end", String.format(Locale.ROOT,
        "at most %.2f×", worst), worst <= 3);
    if (r.peak != null) {
      goal(md, "table on disk ≤ 3 × its live data bytes at every sample (every 5 s, " + r.traced + " in all)",
          String.format(Locale.ROOT, "at most %.2f× (%s): %s", r.peak.diskRatio(), r.peakAt.truncatedTo(
              java.time.temporal.ChronoUnit.SECONDS), peakParts(r.peak)), r.peak.diskRatio() <= 3);
    }
    goal(md, "newest metadata file ≤ 1 MB", bytes(r.end.metadataBytes), r.end.metadataBytes <= 1_000_000);
    long biggest = r.windows.stream().mapToLong(w -> w.sample.metadataBytes).max().orElse(0);
    goal(md, "newest metadata file ≤ 1 MB at every window's end", "at most " + bytes(biggest),
        biggest <= 1_000_000);
    md.append('\n');
  }

  /** Where a sample's bytes are: live data, data older versions hold, deletes, Iceberg metadata by kind. */
  private static String peakParts(Sample s) {
    Footprint f = s.disk;
    return String.format(Locale.ROOT, "%s live data, %s data of older versions, %s deletes, %,d manifests %s, "
        + "%,d manifest lists %s, %d metadata.json %s, %d snapshots", bytes(s.liveDataBytes),
        bytes(f.dataBytes - s.liveDataBytes), bytes(f.deleteBytes), f.manifests, bytes(f.manifestBytes),
        f.manifestLists, bytes(f.manifestListBytes), f.metadataFiles, bytes(f.metadataBytes), s.snapshots);
  }

  private static void goal(StringBuilder md, String what, String figure, boolean met) {
    md.append("| ").append(what).append(" | ").append(figure).append(" | ").append(met ? "yes" : "**no**")
        .append(" |\n");
  }

  interface Cell {
    String of(RunResult r);
  }

  private static void row(StringBuilder md, List<RunResult> runs, String what, Cell cell) {
    md.append("| ").append(what).append(" |");
    for (RunResult r : runs) {
      String v;
      try {
        v = cell.of(r);
      } catch (RuntimeException e) {
        v = "";
      }
      md.append(' ').append(v).append(" |");
    }
    md.append('\n');
  }

  private SoakBench() {}
}
