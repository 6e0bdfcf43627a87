package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;

/**
 * What maintenance a table asks for, read from its properties (Iceberg's own where Iceberg has one, so
 * that every engine reads the same policy): when its files are compacted, how much history it keeps,
 * when its manifests are rewritten and its orphans removed, and the triggers the background maintainer
 * checks against the table's current version (from the snapshot's summary and the metadata in memory:
 * no manifest is read to decide).
 *
 * @param enabled {@code floe.maintenance.enabled} (true): whether the background maintainer touches the table
 * @param minFiles {@code floe.maintenance.min-files} (16): compaction runs once the table has this many
 *     data files averaging below three quarters of the target size, or this many delete files
 * @param deleteRatio {@code floe.compaction.delete-ratio} (0.2): a file whose deletes hide this share of its
 *     rows is rewritten; compaction runs once the table's deletes hide half of that share
 * @param maxSnapshotAgeMillis {@code history.expire.max-snapshot-age-ms} (Iceberg's 5 days)
 * @param minSnapshots {@code history.expire.min-snapshots-to-keep} (Iceberg's 1)
 * @param maxSnapshots {@code floe.history.max-snapshots} (500): at most this many versions are kept
 *     (besides what readers hold), whatever their age — what bounds the metadata of a table with a commit
 *     a second (docs/decisions/0007-history-defaults.md)
 * @param maxDiskRatio {@code floe.history.max-disk-ratio} (3): versions are kept, newest first, while the
 *     table's files (every kept version's data, delete, manifest and manifest-list files, and the metadata
 *     files, each of which lists every kept version) add up to at most this many times its live data files,
 *     or to its data and {@value #MIN_HISTORY_BYTES} bytes if that is more: a small table written all the
 *     time keeps some history, a big one keeps up to {@code maxSnapshots}
 * @param maxManifests {@code floe.maintenance.max-manifests} (100): the manifests are rewritten above this
 * @param orphanRetentionMillis {@code floe.orphan-retention-ms} (7 days)
 * @param orphanCheckMillis {@code floe.maintenance.orphan-check-ms} (1 day): how often the maintainer
 *     looks for orphans
 * @param quietMillis {@code floe.maintenance.quiet-ms} (5 s; 0: never): a table written since the maintainer
 *     last tidied it and quiet this long is tidied: its small files merged and the deletes of its small
 *     files rewritten away, as {@code VACUUM FULL} would, up to as many bytes as its writers wrote since
 */
record MaintenancePolicy(boolean enabled, int minFiles, double deleteRatio, long maxSnapshotAgeMillis,
    int minSnapshots, int maxSnapshots, long maxDiskRatio, int maxManifests, long orphanRetentionMillis,
    long orphanCheckMillis, long quietMillis) {

  static final String ENABLED = "floe.maintenance.enabled";
  static final String MIN_FILES = "floe.maintenance.min-files";
  static final String MAX_SNAPSHOTS = "floe.history.max-snapshots";
  static final String MAX_DISK_RATIO = "floe.history.max-disk-ratio";
  /**
   * The versions a table is taken to keep by its size bound until an expiry of this process measured it
   * ({@link #expiryTrigger}).
   */
  static final int UNMEASURED_BOUND = 16;
  /**
   * The history the size bound allows a table whatever its size, beyond its live data: a table of 1 MiB
   * or less, written all the time, keeps a few dozen versions (each version of a one-row write costs tens
   * of KB of metadata) instead of the few its ratio allows.
   */
  static final long MIN_HISTORY_BYTES = 2L << 20;
  /** The fewest versions past the size bound's count that make a table due for expiry. */
  static final int EXPIRY_SLACK = 8;
  static final String MAX_MANIFESTS = "floe.maintenance.max-manifests";
  static final String ORPHAN_RETENTION = "floe.orphan-retention-ms";
  static final String ORPHAN_CHECK = "floe.maintenance.orphan-check-ms";
  static final String QUIET = "floe.maintenance.quiet-ms";

  static MaintenancePolicy of(Table table) {
    Map<String, String> p = table.properties();
    String enabled = p.getOrDefault(ENABLED, "true");
    if (!enabled.equalsIgnoreCase("true") && !enabled.equalsIgnoreCase("false")) {
      throw invalid(ENABLED, enabled, "true or false");
    }
    return new MaintenancePolicy(enabled.equalsIgnoreCase("true"),
        (int) number(p, MIN_FILES, 16, 2),
        Compaction.deleteRatio(table),
        number(p, TableProperties.MAX_SNAPSHOT_AGE_MS, TableProperties.MAX_SNAPSHOT_AGE_MS_DEFAULT, 0),
        (int) number(p, TableProperties.MIN_SNAPSHOTS_TO_KEEP, TableProperties.MIN_SNAPSHOTS_TO_KEEP_DEFAULT, 1),
        (int) number(p, MAX_SNAPSHOTS, 500, 1),
        number(p, MAX_DISK_RATIO, 3, 1),
        (int) number(p, MAX_MANIFESTS, 100, 2),
        number(p, ORPHAN_RETENTION, 7L * 86_400_000, 0),
        number(p, ORPHAN_CHECK, 86_400_000L, 60_000),
        number(p, QUIET, 5_000, 0));
  }

  private static long number(Map<String, String> p, String name, long dflt, long min) {
    String v = p.get(name);
    if (v == null) {
      return dflt;
    }
    try {
      long n = Long.parseLong(v.trim());
      if (n >= min && n <= Integer.MAX_VALUE * (name.endsWith("-ms") ? 1_000_000L : 1L)) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw invalid(name, v, "a whole number of at least " + min);
  }

  private static FloeException invalid(String name, String value, String expected) {
    return new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid value for table property \"" + name
        + "\": \"" + value + "\"", null, "Expected " + expected + " (docs/maintenance.md).", 0, null);
  }

  private static long summary(Snapshot s, String key) {
    String v = s.summary() == null ? null : s.summary().get(key);
    try {
      return v == null ? 0 : Long.parseLong(v);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Why the table should be compacted now, if it should. */
  Optional<String> compactionTrigger(Table table) {
    Snapshot s = table.currentSnapshot();
    if (s == null) {
      return Optional.empty();
    }
    long target = org.apache.iceberg.util.PropertyUtil.propertyAsLong(table.properties(),
        TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    long files = summary(s, "total-data-files");
    long bytes = summary(s, "total-files-size");
    long deleteFiles = summary(s, "total-delete-files");
    long rows = summary(s, "total-records");
    long deleted = summary(s, "total-position-deletes");
    if (files >= minFiles && bytes / files < target * 3 / 4) {
      return Optional.of(files + " data files");
    }
    if (deleteFiles >= minFiles) {
      return Optional.of(deleteFiles + " delete files");
    }
    if (deleted >= Compaction.HEAVY_DELETED_ROWS) {
      return Optional.of(deleted + " deleted rows");
    }
    if (deleted > 0 && deleted >= deleteRatio / 2 * rows) {
      return Optional.of(String.format("deletes hide %.0f%% of the rows", 100.0 * deleted / Math.max(1, rows)));
    }
    return Optional.empty();
  }

  /**
   * Why old versions should be expired now, if they should; {@code bound}: what the size bound decided at
   * the table's last expiry (null: not measured since this process started, when the floor stands in).
   * The versions the bound allows are measured at expiry, from the manifests; here a table is due once it
   * has a quarter more than that (at least 8), or at once when its size, estimated from what is in
   * memory, passes {@link #maxDiskRatio}: its live files, the files its older versions hold (the data and
   * delete files later versions replaced, from the versions' summaries) and, for the versions beyond
   * those the bound kept, each one's Iceberg metadata as the last expiry measured it (a compaction that
   * rewrote the table makes every older version hold the files it replaced, however few versions land).
   */
  Optional<String> expiryTrigger(Table table, long now, Bound bound) {
    Integer sizeBound = bound == null ? null : bound.kept();
    int count = 0;
    long oldest = Long.MAX_VALUE;
    java.util.Set<Long> ids = new java.util.HashSet<>();
    for (Snapshot s : table.snapshots()) {
      count++;
      oldest = Math.min(oldest, s.timestampMillis());
      ids.add(s.snapshotId());
    }
    if (count <= minSnapshots) {
      return Optional.empty();
    }
    if (count > maxSnapshots) {
      return Optional.of(count + " snapshots");
    }
    Snapshot current = table.currentSnapshot();
    long live = current == null ? 0 : summary(current, "total-files-size");
    long held = 0; // a file a version removed is on disk while the version before it is kept
    for (Snapshot s : table.snapshots()) {
      if (s.parentId() != null && ids.contains(s.parentId())) {
        held += summary(s, "removed-files-size");
      }
    }
    if (live > 0 && live + held > budget(live)) {
      return Optional.of(String.format(java.util.Locale.ROOT, "older versions hold %.1f MB of replaced files "
          + "beside the table's %.1f MB", held / 1e6, live / 1e6));
    }
    // past the versions the bound kept, each one's own metadata adds to what older ones hold
    if (bound != null && live > 0 && count > bound.kept()
        && live + held + (count - 1) * bound.versionBytes() > budget(live)) {
      return Optional.of(String.format(java.util.Locale.ROOT, "%d versions and the %.1f MB of replaced files "
          + "they hold take the table past %d× its %.1f MB", count, held / 1e6, maxDiskRatio, live / 1e6));
    }
    int kept = sizeBound != null ? sizeBound : Math.min(UNMEASURED_BOUND, maxSnapshots);
    if (count > kept + Math.max(EXPIRY_SLACK, kept / 4)) {
      return Optional.of(sizeBound != null ? count + " snapshots, the size bound kept " + sizeBound
          : count + " snapshots, the size bound not measured yet");
    }
    if (oldest < now - maxSnapshotAgeMillis) {
      return Optional.of("snapshots older than " + maxSnapshotAgeMillis / 1000 + " s");
    }
    return Optional.empty();
  }

  /** The bytes the size bound lets a table of {@code dataBytes} of live data take on disk. */
  private long budget(long dataBytes) {
    return dataBytes + Math.max(dataBytes * (maxDiskRatio - 1), MIN_HISTORY_BYTES);
  }

  /**
   * What the size bound decided at a table's expiry: the newest versions it keeps, and how many it
   * expects to land before the next expiry (the most that landed between two of its recent expiries, the
   * older counts fading by a sixteenth at each expiry), and what a version older than the current one
   * typically costs (the median: its manifest list, manifests, the files it added and its share of the
   * metadata files; a version that replaced the table's files is the exception, not the rule).
   */
  record Bound(int kept, int landing, long versionBytes) {}

  /**
   * How many of the newest versions the table keeps by count and size ({@link #maxDiskRatio}): at most
   * {@link #maxSnapshots}, at least {@link #minSnapshots} and the current one. When the size decides, it
   * keeps fewer than fit by the versions that will land before the next expiry, so that the table stays
   * within its bound at its largest, just before that expiry, not only right after this one: the versions
   * {@link #expiryTrigger} lets land (a fifth of what fits, at least {@value #EXPIRY_SLACK}), or as many as
   * landed between recent expiries ({@code last}: the bound at the previous one; null: not known) if more;
   * at most half of what fits. The time between two expiries varies (a compaction, a wait for the
   * table's commit lock), so the last count alone would leave the table above its bound after a long one.
   */
  Bound keep(HistorySize size, Bound last) {
    long budget = budget(size.dataBytes());
    long total = 0;
    int fit = 0;
    boolean over = false;
    for (long cost : size.costs()) {
      if (fit > 0 && total + cost > budget) {
        over = true;
        break;
      }
      total += cost;
      fit++;
    }
    int landing = last == null ? 0
        : Math.max(size.costs().size() - last.kept(), last.landing() - last.landing() / 16);
    int k = fit;
    if (over) {
      // the trigger fires a quarter past what is kept (a fifth of what fits); a busy table may land more
      // before the expiry runs
      k = fit - Math.min(fit / 2, Math.max(Math.max(EXPIRY_SLACK, fit / 5), landing));
    }
    List<Long> older = new java.util.ArrayList<>(size.costs().subList(Math.min(1, size.costs().size()),
        size.costs().size()));
    older.sort(null);
    long versionBytes = older.isEmpty() ? 0 : older.get(older.size() / 2);
    return new Bound(Math.min(maxSnapshots, Math.max(k, Math.max(1, minSnapshots))), landing, versionBytes);
  }

  /**
   * How far back expiry takes a table's versions: those replaced more than {@code millis} ago, keeping the
   * newest {@code retainLast} whatever their age.
   */
  record Retention(long millis, int retainLast) {}

  /**
   * The retention that keeps at most {@code keep} versions ({@link #keep}) and none older than the policy's
   * age. When the count decides, the newest {@code keep} are also retained by name: the clock moves on
   * between choosing the cut-off and applying it, which would take one more.
   */
  Retention retention(Table table, long now, int keep) {
    java.util.List<Long> times = new java.util.ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      times.add(s.timestampMillis());
    }
    if (times.size() > keep) {
      times.sort(java.util.Comparator.reverseOrder());
      long byCount = Math.max(0, now - times.get(keep - 1));
      if (byCount < maxSnapshotAgeMillis) {
        return new Retention(byCount, Math.max(keep, minSnapshots));
      }
    }
    return new Retention(maxSnapshotAgeMillis, minSnapshots);
  }

  /** Why the manifests should be rewritten now, if they should. */
  Optional<String> manifestTrigger(Table table) {
    Snapshot s = table.currentSnapshot();
    if (s == null) {
      return Optional.empty();
    }
    int n = s.allManifests(table.io()).size();
    return n > maxManifests ? Optional.of(n + " manifests") : Optional.empty();
  }
}
