package dev.floe.exec;

import dev.floe.MaintenanceRun;
import dev.floe.tail.TailLog;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background maintainer: one thread that, once per interval, looks at every table's current version
 * and does what its policy ({@link MaintenancePolicy}) asks of it, one table and one step at a time —
 * compaction when the table has many small files or its deletes hide much of its rows, snapshot expiry
 * when it keeps more history than its policy, a manifest rewrite when its manifests are many, and
 * orphan removal once a day. Each step is what {@code VACUUM} and the table procedures do by hand,
 * through the same code and the same commit path: a compaction gives way to writers, expiry keeps what
 * readers hold.
 *
 * <p>It gives the machine back to foreground statements: before a step it waits while the machine's
 * CPUs are busier than the policy's load limit (up to a bound, so that a table under constant load is
 * still maintained), and after each rewrite under load it pauses as long as the rewrite took. What it
 * did is logged and kept ({@link #runs}: the last {@value #KEPT_RUNS} steps).
 *
 * <p>{@link #maintainNow} takes the same steps at once, by hand ({@code floe maintain}), or says what they
 * would do.
 *
 * <p>Tables with a tail are compacted by their log (which merges the files it seals); the maintainer
 * expires their versions by the same policy as every table's, and rewrites their manifests.
 */
public final class Maintainer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Maintainer.class);
  /** A local copy of a table file used this recently stays, whatever the budget (a query may be opening it). */
  private static final long COPY_IDLE_MILLIS = 300_000;
  static final int KEPT_RUNS = 500;

  private final Engine engine;
  private final long intervalMillis;
  private final Thread thread;
  private final ArrayDeque<MaintenanceRun> runs = new ArrayDeque<>();
  private final Map<TableIdentifier, Long> orphansChecked = new HashMap<>();
  private final Object wake = new Object();
  private volatile boolean closed;
  private DuckDBConnection duck;

  private Maintainer(Engine engine, Duration every) {
    this.engine = engine;
    this.intervalMillis = every.toMillis();
    this.thread = new Thread(this::loop, "floe-maintainer");
    thread.setDaemon(true);
    thread.setPriority(Thread.MIN_PRIORITY);
  }

  /** Starts the maintainer, passing over every table once per {@code every}. */
  public static Maintainer start(Engine engine, Duration every) {
    if (every.isNegative() || every.isZero()) {
      throw new IllegalArgumentException("the maintainer's interval must be positive");
    }
    Maintainer m = new Maintainer(engine, every);
    m.thread.start();
    return m;
  }

  /** The steps taken, oldest first (at most the last {@value #KEPT_RUNS}). */
  public List<MaintenanceRun> runs() {
    synchronized (runs) {
      return List.copyOf(runs);
    }
  }

  private void record(MaintenanceRun run) {
    synchronized (runs) {
      if (runs.size() == KEPT_RUNS) {
        runs.removeFirst();
      }
      runs.addLast(run);
    }
    if (run.outcome().startsWith("failed")) {
      LOG.warn("maintenance of {}: {} ({}) {}", run.table(), run.action(), run.trigger(), run.outcome());
    } else {
      LOG.info("maintenance of {}: {} ({}): {} file(s) removed, {} added, {} snapshot(s) expired in {} ms, {}",
          run.table(), run.action(), run.trigger(), run.filesRemoved(), run.filesAdded(), run.snapshotsExpired(),
          run.millis(), run.outcome());
    }
  }

  /**
   * How often the tables this process committed to are looked at for compaction, between passes and
   * while a pass waits for the load to drop or paces itself: a table taking tens of commits a second
   * would otherwise carry a pass's worth of small files into every scan.
   */
  static final long QUICK_MILLIS = 1_000;

  /**
   * How often the tables this process committed to are looked at for expiry: a table taking 40 commits a
   * second lands ten versions in this time, each with a manifest list and manifests of its own, and
   * between two looks they are what the table holds beyond its size bound.
   */
  static final long EXPIRY_CHECK_MILLIS = 250;

  /** When {@link #maintainLanded} last looked (monotonic clock); the maintainer's thread's own. */
  private long landedChecked = System.nanoTime();
  /** When {@link #maintainLanded}, with or without compaction, last looked; the maintainer's thread's own. */
  private long expiryChecked = landedChecked;

  private void loop() {
    long lastPass = System.nanoTime();
    while (!closed) {
      sleep(Math.min(intervalMillis, EXPIRY_CHECK_MILLIS));
      if (closed || Thread.currentThread().isInterrupted()) {
        return;
      }
      try {
        long now = System.nanoTime();
        if ((now - lastPass) / 1_000_000 >= intervalMillis) {
          lastPass = now;
          engine.tables().catalog().landings().landedSince(landedChecked).forEach(id -> noteWrites(id, now));
          landedChecked = now; // the pass looks at every table
          expiryChecked = now;
          pass();
        } else if ((now - landedChecked) / 1_000_000 >= QUICK_MILLIS) {
          maintainLanded(true);
        } else {
          maintainLanded(false);
        }
        tidyQuiet();
      } catch (RuntimeException e) {
        LOG.warn("maintenance pass failed: {}", e.toString(), e);
      }
    }
  }

  /** Within a step's waits: expires the tables committed to, if {@value #EXPIRY_CHECK_MILLIS} ms passed since the last look. */
  private void expireLandedIfDue() {
    if ((System.nanoTime() - expiryChecked) / 1_000_000 >= EXPIRY_CHECK_MILLIS) {
      maintainLanded(false);
    }
  }

  /**
   * With {@code compact}, compacts and expires, if due, the tables this process committed to since the
   * maintainer last looked; without, only expires those committed to since its last look for expiry
   * (from a step's waits too: a compaction holds no lock while it paces itself).
   */
  private void maintainLanded(boolean compact) {
    long now = System.nanoTime();
    java.util.Set<TableIdentifier> changed = engine.tables().catalog().landings()
        .landedSince(compact ? landedChecked : expiryChecked);
    if (compact) {
      landedChecked = now;
    }
    expiryChecked = now;
    for (TableIdentifier id : changed) {
      if (closed) {
        return;
      }
      try {
        if (compact) {
          noteWrites(id, now);
        }
        maintainBusy(id, compact);
      } catch (RuntimeException e) {
        LOG.warn("maintaining {} failed: {}", id, e.toString());
      }
    }
  }

  /**
   * Compacts and expires {@code id} if its policy's triggers fire, without waiting for the load to drop: a
   * table written many times a second gains dozens of small files and versions in this second, and
   * merging them (tiers keep its big files out of such small runs) and dropping them is what keeps every
   * later statement on it cheap. A rewrite is paced as in a pass.
   */
  private void maintainBusy(TableIdentifier id, boolean compact) {
    Table table = engine.tables().current(id).orElse(null);
    if (table == null || table.currentSnapshot() == null) {
      return;
    }
    MaintenancePolicy policy = MaintenancePolicy.of(table);
    if (!policy.enabled()) {
      return;
    }
    if (compact && !TailLog.hasTail(table)) {
      Optional<String> why = policy.compactionTrigger(table);
      if (why.isPresent() && step(engine, id, "compact", why.get(), this::record, () -> {
        lastStepNanos = System.nanoTime(); // pace() measures the rewrite from here
        return 0L;
      }, hold -> compact(engine, id, connection(), this::pace, this::record)) != null) {
        pace();
      }
    }
    Table now = engine.tables().current(id).orElse(null);
    if (now != null) {
      policy.expiryTrigger(now, System.currentTimeMillis(), engine.tables().sizeBounds().get(id)).ifPresent(w -> step(engine, id, "expire", w,
          this::record, () -> 0L, hold -> TableMaintenance.expire(engine, id, policy, Set.of(hold))));
    }
  }

  /**
   * What a table's writers wrote since the maintainer last tidied it ({@link #tidyQuiet}): the bytes of the
   * data and delete files their commits added, up to the version of {@code seenSequence}, and when the
   * maintainer saw the table change last (monotonic clock). The maintainer's thread's own.
   */
  private static final class Written {
    long bytes;
    long seenSequence = -1;
    long changedNanos;
  }

  private final Map<TableIdentifier, Written> written = new HashMap<>();
  /** When the maintainer started (wall clock, as snapshots' timestamps): commits before it are not counted. */
  private final long startedMillis = System.currentTimeMillis();

  /** Adds what the commits to {@code id} since the maintainer last looked wrote (its own rewrites aside). */
  private void noteWrites(TableIdentifier id, long now) {
    Table table = engine.tables().current(id).orElse(null);
    Snapshot current = table == null ? null : table.currentSnapshot();
    if (current == null) {
      written.remove(id);
      return;
    }
    // first seen since the maintainer started: the commits since count, what was written before (which an
    // earlier process may have tidied) does not
    Written w = written.computeIfAbsent(id, k -> new Written());
    for (Snapshot s = current; s != null && s.sequenceNumber() > w.seenSequence
        && s.timestampMillis() >= startedMillis; s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      if (!org.apache.iceberg.DataOperations.REPLACE.equals(s.operation())) {
        String added = s.summary() == null ? null : s.summary().get("added-files-size");
        try {
          w.bytes += added == null ? 0 : Long.parseLong(added);
        } catch (NumberFormatException e) {
          // another engine's odd summary: its files are not counted
        }
      }
    }
    if (current.sequenceNumber() > w.seenSequence) {
      w.seenSequence = current.sequenceNumber();
      w.changedNanos = now;
    }
  }

  /**
   * Tidies each table written since its last tidy and quiet for its policy's {@code quietMillis}: merges its
   * small files and rewrites its small files' deletes away (a {@code VACUUM FULL}'s compaction), taking runs
   * of files while they add up to no more bytes than its writers wrote since. Under steady writes a table
   * keeps some small files and merge-on-read deletes (the triggered compaction merges them by tiers and
   * rewrites a file once its deletes are heavy); once the writes pause, reads have the table to themselves
   * and a scan pays for every file with deletes (an anti-join on each row's position) and every small
   * file. The budget bounds the maintainer's writes by the workload's own: a big file with a few deleted
   * rows is not rewritten for one quiet moment after a one-row write. Then the table's versions are expired
   * by its policy: those before the tidy hold the files it replaced, and no commit is coming to make the
   * table due for expiry.
   */
  private void tidyQuiet() {
    long now = System.nanoTime();
    for (Map.Entry<TableIdentifier, Written> e : List.copyOf(written.entrySet())) {
      if (closed) {
        return;
      }
      TableIdentifier id = e.getKey();
      Written w = e.getValue();
      try {
        Table table = engine.tables().current(id).orElse(null);
        if (table == null || table.currentSnapshot() == null || TailLog.hasTail(table)) {
          written.remove(id);
          continue;
        }
        MaintenancePolicy policy = MaintenancePolicy.of(table);
        if (!policy.enabled() || policy.quietMillis() == 0 || w.bytes == 0
            || (now - w.changedNanos) / 1_000_000 < policy.quietMillis()) {
          continue;
        }
        long budget = w.bytes;
        w.bytes = 0;
        String why = "quiet for " + policy.quietMillis() / 1000.0 + " s after " + budget + " bytes written";
        if (step(engine, id, "compact", why, this::record, this::awaitQuiet,
            hold -> tidy(engine, id, connection(), budget, this::pace)) != null) {
          pace();
        }
        // the versions before the tidy hold the files it replaced, and no commit is coming to push them out
        step(engine, id, "expire", "after the tidy", this::record, () -> 0L,
            hold -> {
              Done d = TableMaintenance.expire(engine, id, policy, Set.of(hold));
              return d == null || d.filesRemoved() + d.snapshotsExpired() == 0 ? null : d;
            });
      } catch (RuntimeException ex) {
        LOG.warn("tidying {} failed: {}", id, ex.toString());
      }
    }
  }

  private static Done tidy(Engine engine, TableIdentifier id, DuckDBConnection duck, long budget, Runnable pace) {
    return betweenBatches(engine, id, pace, p -> {
      Compaction.Plan plan = Compaction.plan(engine, id, true, Long.MIN_VALUE).within(budget);
      if (plan.runs().isEmpty()) {
        return null;
      }
      return done(Compaction.compact(engine, plan, id, duck, p));
    });
  }

  /**
   * {@code compaction} (given the pace to keep between its rewrites) run between two batches of the change
   * stream of this process that writes {@code id}, if one does ({@link ChangeLocks}): planned and committed
   * with no batch in flight, and without pausing between rewrites, which would hold the stream up.
   */
  private static Done betweenBatches(Engine engine, TableIdentifier id, Runnable pace,
      java.util.function.Function<Runnable, Done> compaction) {
    Optional<java.util.concurrent.locks.ReentrantLock> stream = engine.tables().current(id)
        .flatMap(t -> ChangeLocks.writing(id, t.uuid().toString()));
    if (stream.isEmpty()) {
      return compaction.apply(pace);
    }
    long asked = System.nanoTime();
    stream.get().lock();
    long waited = System.nanoTime() - asked;
    try {
      Done d = compaction.apply(() -> { });
      return d == null ? null : d.waited(waited);
    } finally {
      stream.get().unlock();
    }
  }

  /** One pass over every table, then the local copies of files on object storage trimmed to their budget. */
  void pass() {
    if (engine.readOnly()) {
      return;
    }
    try {
      if (engine.tables().catalog().io() instanceof dev.floe.catalog.WarehouseIO io) {
        io.trim(COPY_IDLE_MILLIS);
      }
    } catch (RuntimeException e) {
      LOG.warn("could not trim the local copies of table files: {}", e.toString());
    }
    List<TableIdentifier> ids = new ArrayList<>(engine.tables().catalog().tableLocations().keySet());
    ids.sort(Comparator.comparing(TableIdentifier::toString));
    for (TableIdentifier id : ids) {
      if (closed) {
        return;
      }
      try {
        maintain(id);
      } catch (RuntimeException e) {
        if (engine.tables().current(id).isEmpty()) {
          continue; // dropped during the pass
        }
        record(new MaintenanceRun(Instant.now(), id.toString(), "pass", "", 0, 0, 0, 0, 0, 0, "failed: " + e.getMessage()));
      }
    }
  }

  /** How a pass decides which steps to take. */
  enum Mode {
    /** The background maintainer's: the steps whose triggers fire. */
    TRIGGERED,
    /** By hand: every step, by the table's policy. */
    NOW,
    /** By hand, changing nothing: what every step would do. */
    DRY_RUN
  }

  private void maintain(TableIdentifier id) {
    Table table = engine.tables().current(id).orElse(null);
    if (table == null || table.currentSnapshot() == null || !MaintenancePolicy.of(table).enabled()) {
      return;
    }
    long now = System.currentTimeMillis();
    long checked = orphansChecked.computeIfAbsent(id, k -> now);
    boolean orphans = now - checked >= MaintenancePolicy.of(table).orphanCheckMillis();
    if (orphans) {
      orphansChecked.put(id, now);
    }
    steps(engine, id, Mode.TRIGGERED, orphans, this::record, this::awaitQuiet, this::pace, this::connection);
  }

  private DuckDBConnection connection() {
    if (duck == null) {
      duck = engine.connect();
    }
    return duck;
  }

  /**
   * Takes (or, dry, describes) the maintenance steps of the named tables (none: every table) now, by
   * their policies, each step reported to {@code progress} as it ends. For {@code floe maintain}.
   */
  public static void maintainNow(Engine engine, List<TableIdentifier> ids, boolean dryRun,
      java.util.function.Consumer<MaintenanceRun> progress) {
    List<TableIdentifier> tables = new ArrayList<>(ids);
    if (tables.isEmpty()) {
      tables.addAll(engine.tables().catalog().tableLocations().keySet());
      tables.sort(Comparator.comparing(TableIdentifier::toString));
    }
    DuckDBConnection[] duck = new DuckDBConnection[1];
    try {
      for (TableIdentifier id : tables) {
        steps(engine, id, dryRun ? Mode.DRY_RUN : Mode.NOW, true, progress, () -> 0L, () -> { }, () -> {
          if (duck[0] == null) {
            duck[0] = engine.connect();
          }
          return duck[0];
        });
      }
    } finally {
      if (duck[0] != null) {
        try {
          duck[0].close();
        } catch (java.sql.SQLException e) {
          LOG.debug("closing a maintenance connection: {}", e.getMessage());
        }
      }
    }
  }

  private static void steps(Engine engine, TableIdentifier id, Mode mode, boolean orphans,
      java.util.function.Consumer<MaintenanceRun> report, java.util.function.LongSupplier awaitQuiet,
      Runnable pace, java.util.function.Supplier<DuckDBConnection> duck) {
    Table table = engine.tables().current(id).orElse(null);
    if (table == null || table.currentSnapshot() == null) {
      return;
    }
    MaintenancePolicy policy = MaintenancePolicy.of(table);
    boolean triggered = mode == Mode.TRIGGERED;
    boolean dry = mode == Mode.DRY_RUN;
    if (!TailLog.hasTail(table)) { // a tail's log compacts the files it seals
      Optional<String> why = triggered ? policy.compactionTrigger(table) : Optional.of("by hand");
      if (why.isPresent() && step(engine, id, "compact", why.get(), report, awaitQuiet, hold -> dry
          ? compactionPlan(engine, id) : compact(engine, id, duck.get(), pace, report)) != null) {
        pace.run();
      }
      table = engine.tables().current(id).orElse(null);
      if (table == null) {
        return;
      }
    }
    Table t = table;
    Optional<String> why = triggered
        ? policy.expiryTrigger(table, System.currentTimeMillis(), engine.tables().sizeBounds().get(id))
        : Optional.of("by hand");
    why.ifPresent(w -> step(engine, id, "expire", w, report, awaitQuiet, hold -> dry
        ? TableMaintenance.wouldExpire(engine, id, t, policy, Set.of(hold))
        : TableMaintenance.expire(engine, id, policy, Set.of(hold))));
    table = engine.tables().current(id).orElse(null);
    if (table == null) {
      return;
    }
    policy.manifestTrigger(table).ifPresent(w -> step(engine, id, "rewrite_manifests", w, report, awaitQuiet,
        hold -> dry ? new Done(0, 0, 0, 0, 0, "dry run: would rewrite them") : TableMaintenance.rewriteManifests(engine, id)));
    if (orphans) {
      step(engine, id, "remove_orphans", triggered ? "daily check" : "by hand", report, awaitQuiet,
          hold -> TableMaintenance.removeOrphans(engine, id, policy, Set.of(hold), dry));
    }
  }

  private static Done compactionPlan(Engine engine, TableIdentifier id) {
    Compaction.Plan plan = Compaction.plan(engine, id, false, Long.MIN_VALUE);
    return plan.runs().isEmpty() ? null : new Done(plan.files(), 0, plan.bytes(), 0, 0, "dry run: would rewrite "
        + plan.files() + " file(s) in " + plan.runs().size() + " commit(s)");
  }

  /**
   * What one step did (the {@link Run} without its when, what and how long), and how long of its time it
   * waited for a batch of a change stream to let go of the table ({@link #betweenBatches}), which is not
   * its own.
   */
  record Done(int filesRemoved, int filesAdded, long bytesRemoved, long bytesAdded, int snapshotsExpired,
      String outcome, long waitedNanos) {
    Done(int filesRemoved, int filesAdded, long bytesRemoved, long bytesAdded, int snapshotsExpired, String outcome) {
      this(filesRemoved, filesAdded, bytesRemoved, bytesAdded, snapshotsExpired, outcome, 0);
    }

    Done waited(long nanos) {
      return new Done(filesRemoved, filesAdded, bytesRemoved, bytesAdded, snapshotsExpired, outcome, nanos);
    }
  }

  /**
   * Takes one step under a hold of its own (released before this returns, so a caller paces after it
   * without holding back expiry), reporting what it did.
   *
   * @return what it did, or null when it did nothing or failed
   */
  private static Done step(Engine engine, TableIdentifier id, String action, String trigger,
      java.util.function.Consumer<MaintenanceRun> report, java.util.function.LongSupplier awaitQuiet,
      java.util.function.Function<ReaderPins.Hold, Done> work) {
    long deferred = awaitQuiet.getAsLong();
    String why = deferred > 0 ? trigger + ", after waiting " + deferred / 1000 + " s for the load to drop" : trigger;
    Instant started = Instant.now();
    long t0 = System.nanoTime();
    // its own writes are in flight until they commit (orphan removal spares them)
    try (ReaderPins.Hold hold = engine.tables().readerPins().hold("maintainer")) {
      Done d = work.apply(hold);
      if (d != null) {
        long waited = d.waitedNanos() / 1_000_000;
        report.accept(new MaintenanceRun(started, id.toString(), action, waited > 0 ? why + ", after waiting "
            + waited + " ms for a batch of its change stream" : why, d.filesRemoved(), d.filesAdded(),
            d.bytesRemoved(), d.bytesAdded(), d.snapshotsExpired(), (System.nanoTime() - t0 - d.waitedNanos())
            / 1_000_000, d.outcome()));
      }
      return d;
    } catch (RuntimeException e) {
      if (engine.tables().current(id).isEmpty()) {
        return null; // dropped while it was being maintained: nothing failed
      }
      report.accept(new MaintenanceRun(started, id.toString(), action, why, 0, 0, 0, 0, 0,
          (System.nanoTime() - t0) / 1_000_000, "failed: " + e.getMessage()));
      return null;
    }
  }

  /**
   * Compacts {@code id}, first expiring what its size bound needs to hold the rewrite's output beside the
   * files it replaces (which older versions then hold): a compaction rewriting the table's big file
   * would otherwise take it past its bound until the expiry after it.
   */
  private static Done compact(Engine engine, TableIdentifier id, DuckDBConnection duck, Runnable pace,
      java.util.function.Consumer<MaintenanceRun> report) {
    return betweenBatches(engine, id, pace, p -> {
      Compaction.Plan plan = Compaction.plan(engine, id, false, Long.MIN_VALUE);
      MaintenancePolicy policy = MaintenancePolicy.of(plan.table());
      long bytes = plan.bytes();
      if (policy.needsRoom(plan.table(), engine.tables().sizeBounds().get(id), bytes)) {
        step(engine, id, "expire", String.format(java.util.Locale.ROOT, "room for a rewrite of %.1f MB", bytes / 1e6),
            report, () -> 0L, hold -> TableMaintenance.expire(engine, id, policy, Set.of(hold), bytes));
      }
      return done(Compaction.compact(engine, plan, id, duck, p));
    });
  }

  private static Done done(Compaction.Result r) {
    if (r.filesRewritten() == 0 && r.gaveWay() == 0) {
      return null; // nothing to merge yet (the trigger counts files; the tiers decide)
    }
    return new Done(r.filesRewritten() + r.deleteFilesRemoved(), r.filesWritten(), r.bytesRewritten(),
        r.bytesWritten(), 0, r.gaveWay() > 0 ? "gave way to concurrent writers " + r.gaveWay() + " time(s)" : "done");
  }

  /** The machine's CPU use over the last moments, 0 to 1 (0 when the JVM cannot tell). */
  static double cpuLoad() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      double load = os.getCpuLoad();
      return load < 0 ? 0 : load;
    }
    return 0;
  }

  private static final long MAX_DEFER_MILLIS = 15_000;
  private static final double LOAD_LIMIT = 0.8;
  private long lastStepNanos;

  /** Whether the maintainer is within {@link #awaitQuiet}'s wait, maintaining the busy tables from it. */
  private boolean awaiting;

  /**
   * Waits while the machine is busy (at most {@value #MAX_DEFER_MILLIS} ms: a table under constant load
   * is still maintained), expiring busy tables meanwhile, and compacting them once a second as the loop
   * would ({@link #maintainBusy}: a table taking tens of commits a second gains hundreds of small files,
   * and their manifests, in a pass's wait); returns how long it waited.
   */
  private long awaitQuiet() {
    long start = System.currentTimeMillis();
    while (!closed && cpuLoad() > LOAD_LIMIT && System.currentTimeMillis() - start < MAX_DEFER_MILLIS) {
      sleepExpiring(1_000);
      if (!awaiting && (System.nanoTime() - landedChecked) / 1_000_000 >= QUICK_MILLIS) {
        awaiting = true; // a busy table's step waits for nothing, but not twice over
        try {
          maintainLanded(true);
        } finally {
          awaiting = false;
        }
      }
    }
    lastStepNanos = System.nanoTime();
    return System.currentTimeMillis() - start < 1_000 ? 0 : System.currentTimeMillis() - start;
  }

  /** After a rewrite: under load, pause as long as it took (at most ten seconds). */
  private void pace() {
    long took = (System.nanoTime() - lastStepNanos) / 1_000_000;
    if (cpuLoad() > LOAD_LIMIT) {
      sleepExpiring(Math.min(took, 10_000));
    }
    lastStepNanos = System.nanoTime();
  }

  /** Sleeps {@code millis}, expiring the tables committed to every {@value #EXPIRY_CHECK_MILLIS} ms meanwhile. */
  private void sleepExpiring(long millis) {
    long until = System.nanoTime() + millis * 1_000_000;
    for (long left = millis; left > 0 && !closed; left = (until - System.nanoTime()) / 1_000_000) {
      sleep(Math.min(left, EXPIRY_CHECK_MILLIS));
      expireLandedIfDue();
    }
  }

  private void sleep(long millis) {
    synchronized (wake) {
      try {
        if (!closed) {
          wake.wait(Math.max(1, millis));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Stops the maintainer after the step it is taking. */
  @Override
  public void close() {
    closed = true;
    synchronized (wake) {
      wake.notifyAll();
    }
    try {
      thread.join(Duration.ofMinutes(1).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (duck != null) {
      try {
        duck.close();
      } catch (java.sql.SQLException e) {
        LOG.debug("closing the maintainer's connection: {}", e.getMessage());
      }
    }
  }
}
