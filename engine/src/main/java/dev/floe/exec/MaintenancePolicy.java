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
   * memory, passes {@link #maxDiskRatio}: its live files and the files its older versions hold (the data
   * and delete files later versions replaced, from the versions' summaries); or, since the last expiry,
   * what it kept, the files the versions since then replaced, and what a version added between recent
   * expiries for each version landed and as many more as land between two (a compaction that rewrote the
   * table makes every older version hold the files it replaced, however few versions land).
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
    // since the last expiry: each version that landed adds what one did between recent expiries, and the
    // files it replaced stay for the versions before it
    if (bound != null && bound.versionBytes() > 0 && count > bound.present()) {
      int landed = count - bound.present();
      List<Snapshot> newest = new java.util.ArrayList<>();
      table.snapshots().forEach(newest::add);
      newest.sort(java.util.Comparator.comparingLong(Snapshot::sequenceNumber).reversed());
      long replaced = 0;
      for (Snapshot s : newest.subList(0, Math.min(landed, newest.size()))) {
        if (s.parentId() != null && ids.contains(s.parentId())) {
          replaced += summary(s, "removed-files-size");
        }
      }
      // due a gap's worth early: as many land while the expiry runs
      long size = bound.presentBytes() + replaced
          + (landed + Math.max(EXPIRY_SLACK, bound.landing())) * bound.versionBytes();
      if (size > bound.budget()) {
        return Optional.of(String.format(java.util.Locale.ROOT, "%d versions landed since the last expiry take "
            + "the table to about %.1f MB on disk, its bound %.1f MB", landed, size / 1e6, bound.budget() / 1e6));
      }
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

  /**
   * Whether writing {@code bytes} of new files (a compaction's output, on disk beside the files it
   * replaces, which older versions then hold) would take the table past its size bound, by the table's
   * size estimated as {@link #expiryTrigger} does ({@code bound}: the last expiry's; null: not measured,
   * when no room is made).
   */
  boolean needsRoom(Table table, Bound bound, long bytes) {
    if (bound == null || bytes <= 0) {
      return false;
    }
    int count = 0;
    for (Snapshot ignored : table.snapshots()) {
      count++;
    }
    long size = bound.presentBytes() + (long) Math.max(0, count - bound.present()) * bound.versionBytes();
    return size + bytes > bound.budget();
  }

  /** The bytes the size bound lets a table of {@code dataBytes} of live data take on disk. */
  private long budget(long dataBytes) {
    return dataBytes + Math.max(dataBytes * (maxDiskRatio - 1), MIN_HISTORY_BYTES);
  }

  /**
   * What the size bound decided at a table's expiry: how many of the newest versions the table keeps
   * ({@code kept}: while the versions present all fit, those it may grow to before the next expiry
   * included); how many of those present it kept ({@code present}) and what they take on disk
   * ({@code presentBytes}); the bytes it lets the table take ({@code budget}); and what lands between two
   * expiries, the most of the recent ones, fading by a sixteenth at each expiry: {@code landing}
   * versions adding {@code landingBytes} to the table (measured, not summed from the versions' own
   * costs: a file the newest versions share with the current one costs them nothing until a later
   * version drops it).
   */
  record Bound(int kept, int present, long presentBytes, long budget, int landing, long landingBytes) {
    /** What a version adds to the table as it lands (0: not measured yet). */
    long versionBytes() {
      return landing <= 0 || landingBytes <= 0 ? 0 : landingBytes / landing;
    }
  }

  /**
   * How many of the newest versions the table keeps by count and size ({@link #maxDiskRatio}): at most
   * {@link #maxSnapshots}, at least {@link #minSnapshots} and the current one. The bound holds at the
   * table's largest, just before the next expiry, not only right after this one: the kept versions leave
   * room for twice those that will land before it — as many, adding as many bytes, as landed between
   * recent expiries ({@code last}: the bound at the previous one; null: not known, when the older
   * versions' mean cost stands in, and only the {@value #EXPIRY_SLACK} the count trigger lets land are
   * reserved), at least {@value #EXPIRY_SLACK} — and for {@value #EXPIRY_SLACK} in flight (their files
   * written, no version naming them yet). While all the versions present fit, those still
   * to land fit too until the budget is spent. A table that lands more between two expiries than its
   * budget holds keeps only the current version (its ratio set higher keeps more). {@code reserve}: room
   * for that many bytes more, the files a rewrite is about to write (0: none).
   */
  Bound keep(HistorySize size, Bound last, long reserve) {
    List<Long> costs = size.costs();
    long budget = budget(size.dataBytes());
    long all = 0;
    for (long c : costs) {
      all += c;
    }
    int landing = 0;
    long landingBytes = 0;
    if (last != null) {
      landing = Math.max(costs.size() - last.present(), last.landing() - last.landing() / 16);
      landingBytes = Math.max(all - last.presentBytes(), last.landingBytes() - last.landingBytes() / 16);
    }
    long per = landing > 0 && landingBytes > 0 ? landingBytes / landing
        : costs.size() > 1 ? (all - costs.get(0)) / (costs.size() - 1) : 0;
    // twice what lands: the time between two expiries varies (a compaction between them, the trigger's
    // next look), and the trigger fires once a gap's worth has landed; and the versions in flight, whose
    // files are on disk before any version names them. Before any landing was measured (a first expiry,
    // one by hand), the versions the count trigger lets land.
    long room = budget - (last == null ? EXPIRY_SLACK : 2L * Math.max(EXPIRY_SLACK, landing) + EXPIRY_SLACK)
        * per - reserve;
    long total = 0;
    int k = 0;
    for (long cost : costs) {
      if (k > 0 && total + cost > room) {
        break;
      }
      total += cost;
      k++;
    }
    int present = k;
    if (k == costs.size() && per > 0 && room > total) {
      k += (int) Math.min(maxSnapshots, (room - total) / per);
    }
    return new Bound(Math.min(maxSnapshots, Math.max(k, Math.max(1, minSnapshots))), present, total, budget,
        landing, landingBytes);
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
