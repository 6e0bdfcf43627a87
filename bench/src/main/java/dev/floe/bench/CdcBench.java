package dev.floe.bench;

import dev.floe.Changes;
import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The change-stream benchmark (issue 23, docs/cdc.md): Floe folding Debezium events into a table beside
 * Spark's {@code MERGE INTO} of the same changes on the same table, and the same for LWW envelopes of five
 * cells.
 *
 * <ul>
 *   <li>The table: {@code --rows} rows {@code (id bigint PRIMARY KEY, name text, amount bigint, note text)},
 *       loaded by INSERT (rows a stream did not write count as older than every change).
 *   <li>The changes: {@code --envelopes} Debezium events in LSN order, 60% updates and 20% deletes of
 *       existing keys (chosen by hash, so some keys change several times) and 20% inserts of new keys, as a
 *       JSON-lines file.
 *   <li>Floe: {@code floe cdc apply}'s path, the embedded {@link Changes} API, reading the file and applying
 *       {@code --batch} events per commit; timed from the first line read to the last commit (JSON parsing
 *       included).
 *   <li>Spark local[2] (a child JVM, as MutationBench's): the same changes as an Iceberg table of parsed
 *       columns (no JSON parsing, which favours Spark), the newest per key chosen with
 *       {@code row_number()}, then one {@code MERGE INTO} with DELETE / UPDATE / INSERT clauses: what a Spark
 *       user writes for a CDC batch. Timed as the statement alone (its session start and warm-up apart).
 *   <li>Both tables are checked to hold the same rows afterwards (count and sums).
 *   <li>LWW: {@code --envelopes} envelopes over a table of five bigint cells, each writing 1 to 5 cells at a
 *       timestamp (60% updates, 20% inserts with the row marker, 20% row deletions), applied by Floe as above and
 *       merged by Spark into a table that keeps a timestamp per cell (what a Spark user needs to fold them exactly;
 *       {@link #lww}); both compared as live rows afterwards.
 *   <li>A steady stream: {@code --steady-rate} events a second for {@code --steady-seconds}, applied once per
 *       {@code --window-ms} as {@code floe cdc apply --follow} does: the lag from an event's queueing to its
 *       commit, and the commits and files added per minute (bounded by the window).
 * </ul>
 *
 * <p>Usage: {@code CdcBench [--rows N] [--envelopes N] [--batch N] [--no-spark] [--spark-classpath FILE]
 * [--spark-heap 4g] [--steady-rate 5000] [--steady-seconds 60] [--window-ms 1000] [--steady-maintainer]
 * [--steady-only] [--data DIR] [--out FILE]}: {@code --steady-maintainer} runs the steady stream beside the
 * background maintainer, as {@code floe cdc apply} does, and {@code --steady-only} runs the steady stream alone
 * (a soak: its lag minute by minute, and the files the table keeps)
 */
public final class CdcBench {
  private CdcBench() {}

  public static void main(String[] args) throws Exception {
    long rows = 1_000_000;
    long envelopes = -1;
    int batch = 1_000_000;
    boolean spark = true;
    Path classpath = Path.of("bench/target/spark-classpath.txt");
    String sparkHeap = "4g";
    int steadyRate = 5_000;
    int steadySeconds = 60;
    long windowMs = 1_000;
    boolean steadyOnly = false;
    boolean steadyMaintainer = false;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[++i].replace("_", "").replace(",", ""));
        case "--envelopes" -> envelopes = Long.parseLong(args[++i].replace("_", "").replace(",", ""));
        case "--batch" -> batch = Integer.parseInt(args[++i].replace("_", "").replace(",", ""));
        case "--no-spark" -> spark = false;
        case "--steady-rate" -> steadyRate = Integer.parseInt(args[++i]);
        case "--steady-seconds" -> steadySeconds = Integer.parseInt(args[++i]);
        case "--window-ms" -> windowMs = Long.parseLong(args[++i]);
        case "--steady-only" -> steadyOnly = true;
        case "--steady-maintainer" -> steadyMaintainer = true;
        case "--spark-classpath" -> classpath = Path.of(args[++i]);
        case "--spark-heap" -> sparkHeap = args[++i];
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    envelopes = envelopes < 0 ? rows : envelopes;
    data = data.toAbsolutePath().normalize();
    if (steadyOnly) {
      Steady steady = steady(data.resolve("cdc-steady"), Math.min(rows, 1_000_000), steadyRate, steadySeconds, windowMs,
          steadyMaintainer);
      StringBuilder md = new StringBuilder();
      md.append("## A steady change stream folded into a table (Floe) — ").append(LocalDate.now()).append("\n\n");
      md.append("- Command: `bench/run cdc ").append(String.join(" ", args)).append("`\n");
      md.append("- Machine: ").append(QueryBench.machine()).append('\n');
      md.append(String.format(Locale.ROOT, "- A table of %,d rows; Debezium events (60%% updates, 20%% inserts, 20%% "
          + "deletes) queued at %,d a second for %d s and applied once the oldest has waited %d ms, as `floe cdc "
          + "apply --follow` does; the background maintainer %s. The rows are checked against a model fold of every "
          + "event: %s.%n%n", Math.min(rows, 1_000_000), steadyRate, steadySeconds, windowMs,
          steadyMaintainer ? "on, as `floe cdc apply` runs it" : "off", steady.equalsModel ? "equal" : "**they differ**"));
      md.append("| measure | Floe |\n|---|---:|\n");
      md.append(steadyRows(steady, steadyRate, steadySeconds, windowMs)).append('\n');
      QueryBench.appendResults(out, md);
      return;
    }
    long n = rows;
    long e = envelopes;
    MutationBench.Pristine pristine = MutationBench.Pristine.of(data.resolve("cdc-" + n + "-" + e), dir -> {
      try (Database db = Floe.open(dir)) {
        for (String t : List.of("floe_t", "spark_t")) {
          MutationBench.exec(db, "CREATE TABLE " + t + " (id bigint PRIMARY KEY, name text, amount bigint, note text)");
          MutationBench.exec(db, "INSERT INTO " + t + " SELECT i, 'n' || i, i, md5(CAST(i AS VARCHAR)) FROM range(0, "
              + n + ") AS r(i)");
        }
        // the changes, as Spark's source table: lsn, op, id, and the after image
        MutationBench.exec(db, "CREATE TABLE changes AS SELECT lsn, op, CASE op WHEN 'c' THEN " + n + " + lsn "
            + "WHEN 'u' THEN CAST(hash(lsn * 7) % " + n + " AS BIGINT) ELSE CAST(hash(lsn * 13) % " + n + " AS BIGINT) END "
            + "AS id, 'u' || lsn AS name, lsn AS amount, 'note ' || lsn AS note FROM (SELECT lsn, CASE WHEN hash(lsn) % 10 "
            + "< 6 THEN 'u' WHEN hash(lsn) % 10 < 8 THEN 'c' ELSE 'd' END AS op FROM range(1, " + (e + 1) + ") AS r(lsn))");
      }
      // the same changes as Debezium events, one per line
      try (Database db = Floe.open(dir); BufferedWriter w = Files.newBufferedWriter(dir.resolve("debezium.jsonl"),
          StandardCharsets.UTF_8); Result r = db.sql("SELECT lsn, op, id, name, amount, note FROM changes ORDER BY lsn")) {
        for (Row row : r) {
          long lsn = row.getLong(0);
          String op = row.getString(1);
          long id = row.getLong(2);
          String after = "{\"id\": " + id + ", \"name\": \"" + row.getString(3) + "\", \"amount\": " + row.getLong(4)
              + ", \"note\": \"" + row.getString(5) + "\"}";
          w.write("{\"before\": " + (op.equals("c") ? "null" : "{\"id\": " + id + "}") + ", \"after\": "
              + (op.equals("d") ? "null" : after) + ", \"source\": {\"connector\": \"postgresql\", \"lsn\": " + lsn
              + "}, \"op\": \"" + op + "\", \"ts_ms\": 0}\n");
        }
      }
    });

    // Floe, Debezium
    pristine.restore();
    Path work = pristine.work();
    double floeSeconds;
    long commits;
    Map<String, String> floeSummary;
    try (Database db = Floe.open(work)) {
      Changes changes = db.changes("floe_t", Changes.Format.DEBEZIUM);
      long t0 = System.nanoTime();
      commits = applyFile(changes, work.resolve("debezium.jsonl"), batch);
      floeSeconds = (System.nanoTime() - t0) / 1e9;
      floeSummary = MutationBench.lastSummary(db, "floe_t");
    }
    System.err.printf(Locale.ROOT, "Floe: %,d Debezium events in %.1f s: %,.0f/s (%d commits)%n", e, floeSeconds,
        e / floeSeconds, commits);

    // Spark MERGE INTO of the same changes on the same table
    String merge = "MERGE INTO {table} t USING (SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY "
        + "lsn DESC) AS rn FROM floe.public.changes) WHERE rn = 1) s ON t.id = s.id "
        + "WHEN MATCHED AND s.op = 'd' THEN DELETE "
        + "WHEN MATCHED THEN UPDATE SET name = s.name, amount = s.amount, note = s.note "
        + "WHEN NOT MATCHED AND s.op <> 'd' THEN INSERT (id, name, amount, note) VALUES (s.id, s.name, s.amount, s.note)";
    MutationBench.PeerRun sparkRun = null;
    SparkPeer peer = new SparkPeer(classpath.toAbsolutePath(), sparkHeap, data.resolve("spark-scratch"),
        MutationBench.SPARK_WARM_UP_ROWS);
    String sparkProblem = spark ? peer.unavailable() : "`--no-spark`";
    String lwwSparkProblem = sparkProblem;
    if (spark) {
      if (sparkProblem == null) {
        try {
          sparkRun = peer.run(work, "spark_t", merge);
        } catch (MutationBench.PeerFailure f) {
          sparkProblem = f.getMessage();
        }
      }
    }
    String check;
    String firstState;
    try (Database db = Floe.open(work)) {
      String floeState = state(db, "floe_t");
      firstState = floeState;
      String sparkState = sparkRun == null ? null : state(db, "spark_t");
      check = sparkState == null ? "Floe's table: " + floeState
          : floeState.equals(sparkState) ? "Both tables hold the same rows afterwards (" + floeState + ")"
          : "**the tables differ**: Floe " + floeState + ", Spark " + sparkState;
    }
    System.err.println(check);

    // Floe again as `floe cdc apply` runs by default: the background maintainer beside the stream
    pristine.restore();
    double maintainedSeconds;
    long compactions;
    String maintainedCheck;
    try (Database db = Floe.open(work)) {
      Changes changes = db.changes("floe_t", Changes.Format.DEBEZIUM);
      try (AutoCloseable m = db.startMaintainer(java.time.Duration.ofSeconds(30))) {
        long t0 = System.nanoTime();
        applyFile(changes, work.resolve("debezium.jsonl"), batch);
        maintainedSeconds = (System.nanoTime() - t0) / 1e9;
        compactions = db.maintenanceRuns().stream().filter(r -> r.action().equals("compact")
            && r.outcome().equals("done")).count(); // the maintainer's runs (gone once it stops)
      }
      String floeState = state(db, "floe_t");
      maintainedCheck = floeState.equals(firstState) ? "the same rows as without it"
          : "**other rows than without it**: " + floeState;
    }
    System.err.printf(Locale.ROOT, "Floe with the maintainer: %.1f s: %,.0f/s (%d compactions, %s)%n",
        maintainedSeconds, e / maintainedSeconds, compactions, maintainedCheck);

    // LWW with five cells, Floe and Spark
    Lww lww = lww(data, n, e, batch, peer, lwwSparkProblem);

    // a steady stream committed once per window
    Steady steady = steady(data.resolve("cdc-steady"), Math.min(n, 1_000_000), steadyRate, steadySeconds, windowMs,
        steadyMaintainer);

    StringBuilder md = new StringBuilder();
    md.append("## Change streams folded into a table (Floe) vs Spark MERGE INTO — ").append(LocalDate.now())
        .append("\n\n");
    md.append("- Command: `bench/run cdc").append(args.length > 0 ? " " + String.join(" ", args) : "").append("`\n");
    md.append("- Machine: ").append(QueryBench.machine()).append('\n');
    md.append(String.format(Locale.ROOT, "- A table of %,d rows (bigint key, text, bigint, text); %,d Debezium events "
        + "in LSN order: 60%% updates, 20%% deletes of existing keys, 20%% inserts. Floe: the embedded `Changes` API "
        + "reading the JSON-lines file, %,d events per commit, JSON parsing included. Spark local[2]: the same "
        + "changes as an Iceberg table of parsed columns, newest per key by `row_number()`, one `MERGE INTO` (the "
        + "statement alone; its session start and warm-up apart). %s. LWW: %,d envelopes over a table of five bigint "
        + "cells in timestamp order (20%% row deletions, 20%% inserts with the row marker, 60%% updates of one to five "
        + "cells); Spark merges the same changes, folded per key and cell (`max(named_struct(ts, value))`), into a table "
        + "that keeps each cell's timestamp, the marker's and the newest deletion's, as a Spark user must to fold them "
        + "exactly; compared as live rows.%n%n", n, e, batch, check, e));
    md.append("| measure | Floe | Spark local[2] | Spark/Floe |\n|---|---:|---:|---:|\n");
    md.append(String.format(Locale.ROOT, "| %,d Debezium events applied | %.1f s (%,.0f events/s, %d commit(s), %s) | "
        + "%s | %s |%n", e, floeSeconds, e / floeSeconds, commits, written(floeSummary),
        sparkRun == null ? "not measured: " + sparkProblem : String.format(Locale.ROOT, "%.1f s (%,.0f events/s, %s)",
            sparkRun.statementSeconds(), e / sparkRun.statementSeconds(), written(sparkRun.summary())),
        sparkRun == null ? "–" : String.format(Locale.ROOT, "%.1f", sparkRun.statementSeconds() / floeSeconds)));
    md.append(String.format(Locale.ROOT, "| same, with the background maintainer on as `floe cdc apply` runs it "
        + "(%d compaction(s) of the table and its state between batches; %s) | %.1f s (%,.0f events/s) | – | %s |%n",
        compactions, maintainedCheck, maintainedSeconds, e / maintainedSeconds,
        sparkRun == null ? "–" : String.format(Locale.ROOT, "%.1f", sparkRun.statementSeconds() / maintainedSeconds)));
    md.append(String.format(Locale.ROOT, "| %,d LWW envelopes, 5 cells a row (%s) | %.1f s (%,.0f envelopes/s) | %s | "
        + "%s |%n", e, lww.check(), lww.floeSeconds(), e / lww.floeSeconds(), lww.spark() == null ? "not measured: "
        + lww.sparkProblem() : String.format(Locale.ROOT, "%.1f s (%,.0f envelopes/s, %s)", lww.spark().statementSeconds(),
        e / lww.spark().statementSeconds(), written(lww.spark().summary())), lww.spark() == null ? "–"
        : String.format(Locale.ROOT, "%.1f", lww.spark().statementSeconds() / lww.floeSeconds())));
    md.append(steadyRows(steady, steadyRate, steadySeconds, windowMs).replace(" |\n", " | – | – |\n")).append('\n');
    QueryBench.appendResults(out, md);
  }

  /** The steady stream's rows of a results table (two columns: measure, Floe). */
  private static String steadyRows(Steady steady, int rate, int seconds, long windowMs) {
    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, "| a steady stream of %,d events/s for %d s, one commit per %d ms window%s: "
        + "event queued → committed, p50 / p99 | %.0f / %.0f ms |%n", rate, seconds, windowMs,
        steady.maintained ? ", maintainer on" : "", steady.p50, steady.p99));
    if (steady.minutes.size() > 1) {
      double[] first = steady.minutes.get(0);
      double[] last = steady.minutes.get(steady.minutes.size() - 1);
      md.append(String.format(Locale.ROOT, "| same: p50 / p99 of the first minute → the last (minute %d) | %.0f / %.0f "
          + "→ %.0f / %.0f ms |%n", steady.minutes.size(), first[0], first[1], last[0], last[1]));
    }
    md.append(String.format(Locale.ROOT, "| same: commits, data files and delete files added per minute (target and "
        + "state table together%s) | %.0f commits, %.0f data + %.0f delete files |%n", steady.maintained
        ? "; files counted from the snapshots still kept, as the maintainer expires the others" : "",
        steady.commitsPerMinute, steady.dataFilesPerMinute, steady.deleteFilesPerMinute));
    md.append(String.format(Locale.ROOT, "| same: files live at the end, table / state table (data + delete) | %s / "
        + "%s |%n", steady.targetFiles, steady.stateFiles));
    return md.toString();
  }

  /** A table's live data and delete files, from its current snapshot's summary. */
  private static String liveFiles(Database db, String table) {
    List<dev.floe.SnapshotInfo> snapshots = db.table(table).snapshots();
    Map<String, String> summary = snapshots.get(snapshots.size() - 1).summary();
    return summary.getOrDefault("total-data-files", "?") + " + " + summary.getOrDefault("total-delete-files", "?");
  }

  /** Applies the file's lines, {@code batch} per commit; the number of commits. */
  static long applyFile(Changes changes, Path file, int batch) throws Exception {
    long commits = 0;
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      List<String> lines = new ArrayList<>(Math.min(batch, 1 << 20));
      for (String line = r.readLine(); ; line = r.readLine()) {
        if (line != null) {
          lines.add(line);
        }
        if (lines.size() >= batch || line == null && !lines.isEmpty()) {
          commits += changes.apply(lines).committed() ? 1 : 0;
          lines.clear();
        }
        if (line == null) {
          return commits;
        }
      }
    }
  }

  private static String state(Database db, String table) {
    try (Result r = db.sql("SELECT count(*), sum(amount), sum(length(name)) FROM " + table)) {
      Row row = r.iterator().next();
      return String.format(Locale.ROOT, "%,d rows, sum(amount) %d, sum(length(name)) %d", row.getLong(0),
          row.getLong(1), row.getLong(2));
    }
  }

  private static String written(Map<String, String> summary) {
    return String.format(Locale.ROOT, "%s data + %s delete file(s)", summary.getOrDefault("added-data-files", "0"),
        summary.getOrDefault("added-delete-files", "0"));
  }

  /** What a steady stream cost: its lag and what it committed per minute. */
  record Steady(double p50, double p99, double commitsPerMinute, double dataFilesPerMinute,
      double deleteFilesPerMinute, List<double[]> minutes, String targetFiles, String stateFiles, boolean maintained,
      boolean equalsModel) {}

  /**
   * A producer queues Debezium events at {@code rate} a second (the same mix) for {@code seconds}; the
   * consumer applies what is queued once the oldest event has waited {@code windowMs}, as {@code floe cdc
   * apply --follow} does. Lag: from an event's queueing to its batch's commit.
   */
  static Steady steady(Path dir, long n, int rate, int seconds, long windowMs, boolean maintainer) throws Exception {
    MutationBench.deleteTree(dir);
    try (Database db = Floe.open(dir);
        AutoCloseable m = maintainer ? db.startMaintainer(java.time.Duration.ofSeconds(30)) : () -> { }) {
      MutationBench.exec(db, "CREATE TABLE s (id bigint PRIMARY KEY, name text, amount bigint, note text)");
      MutationBench.exec(db, "INSERT INTO s SELECT i, 'n' || i, i, md5(CAST(i AS VARCHAR)) FROM range(0, " + n
          + ") AS r(i)");
      Changes changes = db.changes("s", Changes.Format.DEBEZIUM);
      int before = db.table("s").snapshots().size();
      java.util.concurrent.LinkedBlockingQueue<long[]> queue = new java.util.concurrent.LinkedBlockingQueue<>();
      long start = System.nanoTime();
      long end = start + seconds * 1_000_000_000L;
      Thread producer = new Thread(() -> {
        long sent = 0;
        while (System.nanoTime() < end) {
          long due = start + sent * 1_000_000_000L / rate;
          long now = System.nanoTime();
          if (now < due) {
            java.util.concurrent.locks.LockSupport.parkNanos(due - now);
            continue;
          }
          queue.add(new long[] {sent + 1, now});
          sent++;
        }
      }, "steady-producer");
      producer.start();
      java.util.Random random = new java.util.Random(9);
      List<Double> lags = new ArrayList<>();
      List<Double> minute = new ArrayList<>();
      List<double[]> minutes = new ArrayList<>();
      long minuteStart = start;
      // what the table must hold: every key's newest event (rows the stream did not touch as loaded)
      Map<Long, String> model = new java.util.HashMap<>();
      long commits = 0;
      List<long[]> pending = new ArrayList<>();
      while (producer.isAlive() || !queue.isEmpty() || !pending.isEmpty()) {
        long[] first = pending.isEmpty() ? queue.poll(windowMs, java.util.concurrent.TimeUnit.MILLISECONDS)
            : null;
        if (first != null) {
          pending.add(first);
        }
        if (pending.isEmpty()) {
          continue;
        }
        long wait = pending.get(0)[1] + windowMs * 1_000_000L - System.nanoTime();
        if (wait > 0 && producer.isAlive()) {
          Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
        }
        queue.drainTo(pending);
        List<String> events = new ArrayList<>(pending.size());
        for (long[] p : pending) {
          long lsn = p[0];
          int k = random.nextInt(10);
          long id = k < 6 ? random.nextLong(n) : k < 8 ? n + lsn : random.nextLong(n);
          String op = k < 6 ? "u" : k < 8 ? "c" : "d";
          events.add("{\"before\": " + (op.equals("c") ? "null" : "{\"id\": " + id + "}") + ", \"after\": "
              + (op.equals("d") ? "null" : "{\"id\": " + id + ", \"name\": \"u" + lsn + "\", \"amount\": " + lsn
              + ", \"note\": \"note " + lsn + "\"}") + ", \"source\": {\"lsn\": " + lsn + "}, \"op\": \"" + op + "\"}");
          model.put(id, op.equals("d") ? null : "u" + lsn + "|" + lsn);
        }
        commits += changes.apply(events).committed() ? 1 : 0;
        long committed = System.nanoTime();
        for (long[] p : pending) {
          lags.add((committed - p[1]) / 1e6);
          minute.add((committed - p[1]) / 1e6);
        }
        pending.clear();
        if (committed - minuteStart >= 60_000_000_000L) {
          minute.sort(null);
          minutes.add(new double[] {minute.get(minute.size() / 2), minute.get((int) (minute.size() * 0.99))});
          System.err.printf(Locale.ROOT, "steady stream, minute %d: lag p50 %.0f ms, p99 %.0f ms%n", minutes.size(),
              minutes.get(minutes.size() - 1)[0], minutes.get(minutes.size() - 1)[1]);
          minute.clear();
          minuteStart = committed;
        }
      }
      double minutesRun = (System.nanoTime() - start) / 60e9;
      long data = 0;
      long deletes = 0;
      List<dev.floe.SnapshotInfo> snapshots = new ArrayList<>(db.table("s").snapshots());
      snapshots = snapshots.subList(before, snapshots.size());
      String state = db.table("s").properties().get("floe.cdc.state");
      List<dev.floe.SnapshotInfo> all = new ArrayList<>(snapshots);
      all.addAll(db.table(state.replace("floe_cdc.", "floe_cdc.\"") + "\"").snapshots());
      for (dev.floe.SnapshotInfo si : all) {
        data += Long.parseLong(si.summary().getOrDefault("added-data-files", "0"));
        deletes += Long.parseLong(si.summary().getOrDefault("added-delete-files", "0"));
      }
      // every row as the model says: the key's newest event, or as loaded if the stream never touched it
      boolean equal = true;
      long rowsSeen = 0;
      try (Result r = db.sql("SELECT id, name, amount FROM s")) {
        for (Row row : r) {
          long id = row.getLong(0);
          String expected = model.containsKey(id) ? model.get(id) : id < n ? "n" + id + "|" + id : null;
          equal &= (row.getString(1) + "|" + row.getLong(2)).equals(expected);
          rowsSeen++;
        }
      }
      long untouched = n - model.keySet().stream().filter(k -> k < n).count();
      equal &= rowsSeen == untouched + model.values().stream().filter(java.util.Objects::nonNull).count();
      lags.sort(null);
      Steady out = new Steady(lags.get(lags.size() / 2), lags.get((int) (lags.size() * 0.99)), commits / minutesRun,
          data / minutesRun, deletes / minutesRun, minutes, liveFiles(db, "s"), liveFiles(db, state.replace("floe_cdc.",
          "floe_cdc.\"") + "\""), maintainer, equal);
      System.err.printf(Locale.ROOT, "steady stream: lag p50 %.0f ms, p99 %.0f ms; per minute %.0f commits, %.0f data "
          + "+ %.0f delete files%n", out.p50, out.p99, out.commitsPerMinute, out.dataFilesPerMinute,
          out.deleteFilesPerMinute);
      return out;
    } finally {
      MutationBench.deleteTree(dir);
    }
  }

  /** The Floe and Spark runs of the LWW envelopes, and whether their tables agree. */
  record Lww(double floeSeconds, MutationBench.PeerRun spark, String sparkProblem, String check) {}

  /**
   * {@code e} LWW envelopes over a table of five bigint cells, in timestamp order: 20% row deletions of existing
   * keys, 20% inserts of new keys (row marker and all five cells), 60% updates of one to five cells of existing
   * keys. The changes are made once as a table ({@code lww_changes}: ts, op, id, and the cells written), the
   * envelopes written from it. Floe applies the envelopes to {@code lww_t}; Spark merges the same changes into
   * {@code lww_spark}, a table that keeps a timestamp per cell, the row marker's and the newest deletion's, as a
   * Spark user must to fold LWW changes exactly. Both tables are compared afterwards as rows (live cells only).
   */
  static Lww lww(Path data, long n, long e, int batch, SparkPeer peer, String sparkProblem) throws Exception {
    MutationBench.Pristine pristine = MutationBench.Pristine.of(data.resolve("cdc-lww-" + n + "-" + e), dir -> {
      try (Database db = Floe.open(dir)) {
        MutationBench.exec(db, "CREATE TABLE lww_t (id bigint PRIMARY KEY, c1 bigint, c2 bigint, c3 bigint, "
            + "c4 bigint, c5 bigint)");
        MutationBench.exec(db, "INSERT INTO lww_t SELECT i, i, i, i, i, i FROM range(0, " + n + ") AS r(i)");
        // Spark's table: the rows loaded before the stream count as written at timestamp 0, none deleted (-1)
        MutationBench.exec(db, "CREATE TABLE lww_spark (id bigint, c1 bigint, c2 bigint, c3 bigint, c4 bigint, "
            + "c5 bigint, t1 bigint, t2 bigint, t3 bigint, t4 bigint, t5 bigint, marker_ts bigint, deleted_at bigint)");
        MutationBench.exec(db, "INSERT INTO lww_spark SELECT i, i, i, i, i, i, 0, 0, 0, 0, 0, 0, -1 FROM range(0, "
            + n + ") AS r(i)");
        StringBuilder cells = new StringBuilder();
        for (int c = 1; c <= 5; c++) {
          // an update writes cell `pick` and each other cell with probability k/5, k in 0..4: one to five cells
          cells.append(", CASE WHEN op = 'i' OR op = 'u' AND (pick = ").append(c).append(" OR hash(i * 5 + ").append(c)
              .append(") % 5 < k) THEN CAST(hash(i * 31 + ").append(c).append(") % 1000000 AS BIGINT) END AS c")
              .append(c);
        }
        MutationBench.exec(db, "CREATE TABLE lww_changes AS SELECT 1700000000000000 + i AS ts, op, CASE op WHEN 'i' "
            + "THEN " + n + " + i ELSE CAST(hash(i * 7) % " + n + " AS BIGINT) END AS id" + cells + " FROM (SELECT i, "
            + "CASE WHEN hash(i) % 10 < 2 THEN 'd' WHEN hash(i) % 10 < 4 THEN 'i' ELSE 'u' END AS op, CAST(hash(i * 11) "
            + "% 5 AS INTEGER) AS k, CAST(1 + hash(i * 17) % 5 AS INTEGER) AS pick FROM range(0, " + e + ") AS r(i))");
      }
      try (Database db = Floe.open(dir); BufferedWriter w = Files.newBufferedWriter(dir.resolve("lww.jsonl"),
          StandardCharsets.UTF_8); Result r = db.sql("SELECT ts, op, id, c1, c2, c3, c4, c5 FROM lww_changes ORDER BY ts")) {
        StringBuilder line = new StringBuilder();
        for (Row row : r) {
          line.setLength(0);
          line.append("{\"key\": {\"id\": ").append(row.getLong(2)).append("}, \"ts\": ").append(row.getLong(0));
          String op = row.getString(1);
          if (op.equals("d")) {
            line.append(", \"delete\": true}\n");
          } else {
            line.append(op.equals("i") ? ", \"insert\": true" : "").append(", \"cells\": {");
            boolean first = true;
            for (int c = 1; c <= 5; c++) {
              Object v = row.get(2 + c);
              if (v != null) {
                line.append(first ? "" : ", ").append("\"c").append(c).append("\": ").append(v);
                first = false;
              }
            }
            line.append("}}\n");
          }
          w.append(line);
        }
      }
    });
    pristine.restore();
    Path work = pristine.work();
    double floeSeconds;
    try (Database db = Floe.open(work)) {
      Changes changes = db.changes("lww_t", Changes.Format.LWW);
      long t0 = System.nanoTime();
      applyFile(changes, work.resolve("lww.jsonl"), batch);
      floeSeconds = (System.nanoTime() - t0) / 1e9;
    }
    System.err.printf(Locale.ROOT, "Floe: %,d LWW envelopes in %.1f s: %,.0f/s%n", e, floeSeconds, e / floeSeconds);

    // Spark: the batch folded per key and cell (the newest write of each: max of (ts, value), the greater value
    // winning a tie of timestamps, as Cassandra's), then one MERGE keeping each cell's newer write
    StringBuilder fold = new StringBuilder("SELECT id, max(CASE WHEN op = 'd' THEN ts END) AS d, max(CASE WHEN op = "
        + "'i' THEN ts END) AS m");
    StringBuilder set = new StringBuilder("deleted_at = greatest(t.deleted_at, coalesce(s.d, -1)), marker_ts = "
        + "greatest(t.marker_ts, coalesce(s.m, -1))");
    StringBuilder columns = new StringBuilder("id, marker_ts, deleted_at");
    StringBuilder values = new StringBuilder("s.id, coalesce(s.m, -1), coalesce(s.d, -1)");
    for (int c = 1; c <= 5; c++) {
      fold.append(", max(CASE WHEN c").append(c).append(" IS NOT NULL THEN named_struct('ts', ts, 'v', c").append(c)
          .append(") END) AS w").append(c);
      String newer = "(s.w" + c + ".ts > t.t" + c + " OR s.w" + c + ".ts = t.t" + c + " AND s.w" + c + ".v > t.c" + c + ")";
      set.append(", c").append(c).append(" = CASE WHEN ").append(newer).append(" THEN s.w").append(c).append(".v ELSE t.c")
          .append(c).append(" END, t").append(c).append(" = CASE WHEN ").append(newer).append(" THEN s.w").append(c)
          .append(".ts ELSE t.t").append(c).append(" END");
      columns.append(", c").append(c).append(", t").append(c);
      values.append(", s.w").append(c).append(".v, coalesce(s.w").append(c).append(".ts, -1)");
    }
    fold.append(" FROM floe.public.lww_changes GROUP BY id");
    String merge = "MERGE INTO {table} t USING (" + fold + ") s ON t.id = s.id WHEN MATCHED THEN UPDATE SET " + set
        + " WHEN NOT MATCHED THEN INSERT (" + columns + ") VALUES (" + values + ")";
    MutationBench.PeerRun sparkRun = null;
    if (sparkProblem == null) {
      try {
        sparkRun = peer.run(work, "lww_spark", merge);
      } catch (MutationBench.PeerFailure f) {
        sparkProblem = f.getMessage();
      }
    }
    String check;
    try (Database db = Floe.open(work)) {
      String floeState = lwwState(db, "SELECT * FROM lww_t");
      StringBuilder live = new StringBuilder("SELECT id");
      StringBuilder any = new StringBuilder("marker_ts > deleted_at");
      for (int c = 1; c <= 5; c++) {
        live.append(", CASE WHEN t").append(c).append(" > deleted_at THEN c").append(c).append(" END AS c").append(c);
        any.append(" OR t").append(c).append(" > deleted_at");
      }
      String sparkState = sparkRun == null ? null : lwwState(db, live + " FROM lww_spark WHERE " + any);
      check = sparkState == null ? "Floe's table: " + floeState
          : floeState.equals(sparkState) ? "both tables hold the same live rows afterwards (" + floeState + ")"
          : "**the tables differ**: Floe " + floeState + ", Spark " + sparkState;
    }
    System.err.println("LWW: " + check);
    return new Lww(floeSeconds, sparkRun, sparkProblem, check);
  }

  /** Count and sums of the rows of {@code rows} (id, c1..c5). */
  private static String lwwState(Database db, String rows) {
    try (Result r = db.sql("SELECT count(*), sum(id), sum(c1), sum(c2), sum(c3), sum(c4), sum(c5), count(c1) + "
        + "count(c2) + count(c3) + count(c4) + count(c5) FROM (" + rows + ") AS r")) {
      Row row = r.iterator().next();
      return String.format(Locale.ROOT, "%,d rows, sum(id) %s, sums of c1..c5 %s %s %s %s %s, %,d live cells",
          row.getLong(0), row.get(1), row.get(2), row.get(3), row.get(4), row.get(5), row.get(6), row.getLong(7));
    }
  }
}
