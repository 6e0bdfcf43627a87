package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.read.ScanPlan;
import dev.floe.read.ScanSql;
import dev.floe.types.TypeMapping;
import dev.floe.commit.TableChange;
import dev.floe.write.Inserter;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Merges small data files into files of the table's target size ({@code write.target-file-size-bytes}),
 * sorted by its sort order, and rewrites files whose deletes hide much of their rows, in one Iceberg
 * rewrite per run: what a table fed by many small commits needs to stay fast to read.
 *
 * <p><b>Which files.</b> A file is small below three quarters of the target; a file is <i>heavy</i> when
 * its deletes cover at least {@value #DELETE_RATIO_PROPERTY} of its rows (default
 * {@value #DELETE_RATIO_DEFAULT}), whatever its size. Only files whose deletes are all their own (position
 * deletes or deletion vectors naming them alone, as Floe writes them) are taken; they are rewritten
 * without their deleted rows, and the deletes go in the same commit. Within a partition, small files are
 * grouped by size, smallest first, as an LSM tree's tiers: a file joins the group when it is no larger
 * than the group so far (or than {@value #TIER_FLOOR_BYTES} bytes), so a big file is not rewritten again
 * and again to absorb a few small ones; a group is rewritten once it has {@value #MIN_INPUT_FILES} files,
 * reaches the target, or holds a heavy file. A heavy file too large to be small is rewritten alone. FULL
 * ({@code all}) merges every group of two or more, tiers aside, and rewrites a small file with deletes
 * attached even alone (as Trino's and Impala's optimize do), so the deletes go.
 *
 * <p><b>Writers win.</b> The rewrite is decided from one snapshot; when a writer deletes rows of its
 * input files before it commits, the compaction follows: the rows deleted since are found where the
 * compaction put them ({@code MovedRows}) and deleted there in the same commit, which it makes holding the
 * table's commit lock (writers wait for it as for any commit); a writer's commit after the compaction's
 * follows the rows the same way ({@code DeleteRebase}). Only when
 * an input file went away, or equality deletes arrived, does the compaction give up (its files deleted,
 * the next run tries again), and it says so ({@link Result#gaveWay}).
 */
final class Compaction {
  static final int MIN_INPUT_FILES = 4;
  static final String DELETE_RATIO_PROPERTY = "floe.compaction.delete-ratio";
  static final String DELETE_RATIO_DEFAULT = "0.2";
  static final long TIER_FLOOR_BYTES = 256L << 10;
  static final long HEAVY_DELETED_ROWS = 4096;

  private Compaction() {}

  /** What one compaction did. */
  record Result(int filesRewritten, int filesWritten, long rows, long bytesRewritten, long bytesWritten,
      int deleteFilesRemoved, int gaveWay) {
    static final Result NONE = new Result(0, 0, 0, 0, 0, 0, 0);

    Result plus(Result o) {
      return new Result(filesRewritten + o.filesRewritten, filesWritten + o.filesWritten, rows + o.rows,
          bytesRewritten + o.bytesRewritten, bytesWritten + o.bytesWritten,
          deleteFilesRemoved + o.deleteFilesRemoved, gaveWay + o.gaveWay);
    }
  }

  static Result compact(Engine engine, TableIdentifier id, Connection duck, boolean all) {
    return compact(engine, id, duck, all, Long.MIN_VALUE, () -> { });
  }

  /**
   * As {@link #compact(Engine, TableIdentifier, Connection, boolean)}, leaving out files that may hold
   * a tail offset below {@code fromOffset} (a log's staged files that may be published already), and
   * calling {@code pace} between two rewrites (the maintainer's way of giving the machine back).
   */
  static Result compact(Engine engine, TableIdentifier id, Connection duck, boolean all, long fromOffset,
      Runnable pace) {
    return compact(engine, plan(engine, id, all, fromOffset, -1), id, duck, pace);
  }

  /**
   * Rewrites the runs of {@code plan}, calling {@code pace} between two (not after the last: a caller that
   * holds the plan's version for it paces after letting go, so that expiry may meanwhile take the
   * versions the rewrite replaced).
   */
  static Result compact(Engine engine, Plan plan, TableIdentifier id, Connection duck, Runnable pace) {
    Result done = Result.NONE;
    for (int i = 0; i < plan.runs().size(); i++) {
      if (i > 0) {
        pace.run();
      }
      done = done.plus(rewrite(engine, plan.table(), plan.snapshot(), id, duck, plan.runs().get(i)));
    }
    return done;
  }

  /** The runs of files a compaction would rewrite, each one commit, from the table's current version. */
  record Plan(Table table, Snapshot snapshot, List<List<FileScanTask>> runs) {
    int files() {
      return runs.stream().mapToInt(List::size).sum();
    }

    long bytes() {
      return runs.stream().flatMap(List::stream).mapToLong(t -> t.file().fileSizeInBytes()).sum();
    }

    /**
     * The runs, in order, cut to rewrite at most {@code budget} bytes in all: of each run (its files smallest
     * first) the longest start that fits, when that is two files or more, or one with deletes.
     */
    Plan within(long budget) {
      List<List<FileScanTask>> taken = new ArrayList<>();
      long left = budget;
      for (List<FileScanTask> run : runs) {
        int n = 0;
        long bytes = 0;
        while (n < run.size() && bytes + run.get(n).file().fileSizeInBytes() <= left) {
          bytes += run.get(n).file().fileSizeInBytes();
          n++;
        }
        if (n >= 2 || n == 1 && !run.get(0).deletes().isEmpty()) {
          taken.add(List.copyOf(run.subList(0, n)));
          left -= bytes;
        }
      }
      return new Plan(table, snapshot, taken);
    }
  }

  static Plan plan(Engine engine, TableIdentifier id, boolean all, long fromOffset) {
    return plan(engine, id, all, fromOffset, -1);
  }

  /**
   * The runs of a compaction; {@code smallBelow}: the size under which a file is small (-1: three
   * quarters of the table's target size).
   */
  static Plan plan(Engine engine, TableIdentifier id, boolean all, long fromOffset, long smallBelow) {
    Table table = engine.tables().current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    Snapshot snapshot = table.currentSnapshot();
    if (snapshot == null) {
      return new Plan(table, null, List.of());
    }
    long target = PropertyUtil.propertyAsLong(table.properties(), TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
        TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    Heavy heavy = new Heavy(deleteRatio(table), deletedPerWrite(table, snapshot));
    Map<List<Object>, List<FileScanTask>> partitions = new LinkedHashMap<>();
    List<List<FileScanTask>> runs = new ArrayList<>();
    for (FileScanTask task : engine.planner().plan(table, snapshot, table.schema(), null)) {
      DataFile f = task.file();
      if (!ownDeletesOnly(task) || !offsetsFrom(table, f, fromOffset)) {
        continue;
      }
      if (f.fileSizeInBytes() < (smallBelow < 0 ? target * 3 / 4 : smallBelow)) {
        partitions.computeIfAbsent(partitionKey(f), k -> new ArrayList<>()).add(task);
      } else if (heavy.is(task)) {
        runs.add(List.of(task));
      }
    }
    for (List<FileScanTask> small : partitions.values()) {
      small.sort(Comparator.comparingLong((FileScanTask t) -> t.file().fileSizeInBytes())
          .thenComparing(t -> t.file().dataSequenceNumber(), Comparator.nullsFirst(Comparator.naturalOrder()))
          .thenComparing(t -> t.file().location()));
      List<FileScanTask> group = new ArrayList<>();
      long size = 0;
      for (FileScanTask t : small) {
        long bytes = t.file().fileSizeInBytes();
        if (!group.isEmpty() && (size + bytes > target || !all && bytes > Math.max(size, TIER_FLOOR_BYTES))) {
          addRun(runs, group, size, target, all, heavy);
          group = new ArrayList<>();
          size = 0;
        }
        group.add(t);
        size += bytes;
      }
      addRun(runs, group, size, target, all, heavy);
    }
    return new Plan(table, snapshot, runs);
  }

  private static void addRun(List<List<FileScanTask>> runs, List<FileScanTask> group, long size, long target,
      boolean all, Heavy rule) {
    boolean heavy = group.stream().anyMatch(rule::is);
    // FULL, as Trino's optimize: a small file with deletes attached is rewritten, even alone
    boolean deletes = all && group.stream().anyMatch(t -> !t.deletes().isEmpty());
    if (heavy || deletes || group.size() >= 2 && (all || group.size() >= MIN_INPUT_FILES || size >= target)) {
      runs.add(List.copyOf(group));
    }
  }

  /** The delete ratio at which a file is rewritten ({@value #DELETE_RATIO_PROPERTY}). */
  static double deleteRatio(Table table) {
    String v = table.properties().getOrDefault(DELETE_RATIO_PROPERTY, DELETE_RATIO_DEFAULT);
    try {
      double ratio = Double.parseDouble(v);
      if (ratio > 0 && ratio <= 1) {
        return ratio;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid value for table property \""
        + DELETE_RATIO_PROPERTY + "\": \"" + v + "\"", null, "A fraction of a file's rows above 0 and at most 1, "
        + "such as 0.2.", 0, null);
  }

  /**
   * When a file's deletes make it heavy: when they hide at least {@code ratio} of its rows (each scan reads
   * them and skips them), or {@link #heavyRows} rows (each later write that deletes from the file rewrites
   * its deletion vector, or position deletes, with them).
   *
   * @param perWrite the rows the table's writes delete, each ({@link #deletedPerWrite})
   */
  record Heavy(double ratio, long perWrite) {
    boolean is(FileScanTask task) {
      long deleted = 0;
      for (org.apache.iceberg.DeleteFile d : task.deletes()) {
        deleted += d.recordCount();
      }
      return deleted > 0 && (deleted >= ratio * task.file().recordCount()
          || deleted >= heavyRows(task.file().recordCount(), perWrite));
    }
  }

  /**
   * The deleted rows past which a file of {@code rows} rows is rewritten, whatever their share, when each
   * write deletes {@code perWrite} rows: √(2 · rows · perWrite), and at least {@value #HEAVY_DELETED_ROWS}.
   *
   * <p>A rewrite costs the file's rows; until then, each write that deletes from the file pays for the
   * deletes it holds, which grow by {@code perWrite} a write. Rewriting at T deleted rows costs
   * rows · perWrite / T a write in rewrites and T / 2 in upkeep, least at this T. One-row UPDATEs on a
   * 1M-row file rewrite it at 4,096 deleted rows (a soak slowed from 42 to 20 tps over 11k deletes when
   * only the share counted); a change stream deleting 750k rows a batch from a 10M-row file rewrites it
   * once its share is reached, not after every batch (it did: 10M rows rewritten per 1M changes).
   */
  static long heavyRows(long rows, long perWrite) {
    return Math.max(HEAVY_DELETED_ROWS, (long) Math.sqrt(2.0 * rows * Math.max(1, perWrite)));
  }

  /** The versions {@link #deletedPerWrite} looks at, newest first. */
  private static final int WRITES_SEEN = 8;

  /**
   * The rows the table's latest writes deleted, each: the mean over those of its {@value #WRITES_SEEN}
   * newest versions up to {@code snapshot} that deleted rows and are not rewrites (the position deletes a
   * version added less those it removed, which a deletion vector or a delete file that took older ones
   * in replaced); 1 when none did.
   */
  static long deletedPerWrite(Table table, Snapshot snapshot) {
    long deleted = 0;
    int writes = 0;
    int seen = 0;
    for (Snapshot s = snapshot; s != null && seen < WRITES_SEEN;
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      seen++;
      if (org.apache.iceberg.DataOperations.REPLACE.equals(s.operation()) || s.summary() == null) {
        continue;
      }
      long net = number(s, "added-position-deletes") - number(s, "removed-position-deletes");
      if (net > 0) {
        deleted += net;
        writes++;
      }
    }
    return writes == 0 ? 1 : Math.max(1, deleted / writes);
  }

  private static long number(Snapshot s, String key) {
    try {
      return Long.parseLong(s.summary().getOrDefault(key, "0"));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Whether every delete of the task's file is a position delete or deletion vector of that file alone. */
  private static boolean ownDeletesOnly(FileScanTask task) {
    for (org.apache.iceberg.DeleteFile d : task.deletes()) {
      if (d.content() != org.apache.iceberg.FileContent.POSITION_DELETES
          || !task.file().location().equals(org.apache.iceberg.util.ContentFileUtil.referencedDataFileLocation(d))) {
        return false;
      }
    }
    return true;
  }

  /** Whether every {@code _offset} in the file is at least {@code from} (unknown bounds: no). */
  private static boolean offsetsFrom(Table table, DataFile f, long from) {
    if (from == Long.MIN_VALUE) {
      return true;
    }
    org.apache.iceberg.types.Types.NestedField offset = table.schema().findField(dev.floe.tail.TailLog.OFFSET_COLUMN);
    java.nio.ByteBuffer lower = offset == null || f.lowerBounds() == null ? null : f.lowerBounds().get(offset.fieldId());
    return lower != null && org.apache.iceberg.types.Conversions.<Long>fromByteBuffer(
        org.apache.iceberg.types.Types.LongType.get(), lower) >= from;
  }

  private static List<Object> partitionKey(DataFile f) {
    List<Object> key = new ArrayList<>();
    key.add(f.specId());
    StructLike p = f.partition();
    for (int i = 0; i < p.size(); i++) {
      key.add(p.get(i, Object.class));
    }
    return key;
  }

  private static Result rewrite(Engine engine, Table table, Snapshot snapshot, TableIdentifier id, Connection duck,
      List<FileScanTask> run) {
    if (run.isEmpty()) {
      return Result.NONE;
    }
    ScanPlan plan = new ScanPlan(table, Optional.of(snapshot), table.schema(),
        TypeMapping.columns(table.schema(), table.properties()), run);
    String rows = ScanSql.relation(plan, table.io(), engine.files());
    boolean deletes = run.stream().anyMatch(t -> !t.deletes().isEmpty());
    long before = deletes ? count(duck, rows, id) : run.stream().mapToLong(t -> t.file().recordCount()).sum();
    Inserter.Written written;
    try {
      written = Inserter.write(duck, table, table.schema(), rows, engine.scratch(), -1);
    } catch (Inserter.WriteFailure e) {
      throw e.as("compact table " + id.name());
    }
    if (written.rows() != before) {
      Inserter.deleteFiles(table, written.files());
      throw new FloeException(SqlState.INTERNAL_ERROR, "compaction of " + id.name() + " read " + written.rows()
          + " rows from files holding " + before);
    }
    List<DataFile> removed = new ArrayList<>(run.size());
    Map<String, DeleteFile> removedDeletes = new LinkedHashMap<>();
    long bytesIn = 0;
    for (FileScanTask t : run) {
      removed.add(t.file());
      bytesIn += t.file().fileSizeInBytes();
      t.deletes().forEach(d -> removedDeletes.putIfAbsent(key(d), d));
    }
    // the rewritten files are this method's to delete if it gives way (a followed change is retried with them)
    TableChange change = TableChange.rewrite(snapshot.snapshotId(), removed, List.copyOf(removedDeletes.values()),
        written.files(), List.of());
    try {
      engine.committer().commit(id, table, change);
    } catch (FloeException e) {
      if (!SqlState.SERIALIZATION_FAILURE.equals(e.sqlState())) {
        throw e;
      }
      // a writer deleted rows of these files meanwhile (the committer deleted what the change wrote but
      // the rewritten files): follow its deletes, holding the table's commit lock so that nothing lands
      // between the follow and its commit (writers wait for it, as for any commit, and fail for none)
      try {
        synchronized (engine.committer().lock(id)) {
          Optional<TableChange> followed = follow(engine, duck, table, snapshot, run, written.files());
          if (followed.isEmpty()) {
            return gaveWay(table, id, written);
          }
          change = followed.get();
          engine.committer().commit(id, table, change);
        }
      } catch (FloeException again) {
        if (!SqlState.SERIALIZATION_FAILURE.equals(again.sqlState())) {
          throw again;
        }
        return gaveWay(table, id, written); // another process committed to the table
      }
    }
    long bytesOut = written.files().stream().mapToLong(DataFile::fileSizeInBytes).sum();
    return new Result(run.size(), written.files().size(), before, bytesIn, bytesOut, change.removedDeletes().size(), 0);
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Compaction.class);

  /** Deletes what the rewrite wrote: a concurrent change of its files cannot be followed. */
  private static Result gaveWay(Table table, TableIdentifier id, Inserter.Written written) {
    Inserter.deleteFiles(table, written.files());
    LOG.info("compaction of {} gave way to a concurrent change of its files", id);
    return new Result(0, 0, 0, 0, 0, 0, 1);
  }

  private static String key(DeleteFile d) {
    return d.location() + "@" + d.contentOffset();
  }

  /**
   * The rewrite of {@code run} as {@code written}, on the table's current state: the rows writers deleted
   * from the run's files since {@code base} (which the rewritten files still hold) deleted from them too,
   * and the files' deletes as they stand now removed with them. Empty when that cannot be done: a file of
   * the run is gone, or deletes that do not name one file arrived (equality deletes), or a row is not found.
   */
  private static Optional<TableChange> follow(Engine engine, Connection duck, Table table, Snapshot base,
      List<FileScanTask> run, List<DataFile> written) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    Map<String, Map<String, DeleteFile>> live = new LinkedHashMap<>();
    Map<String, DataFile> inputs = new LinkedHashMap<>();
    for (FileScanTask t : run) {
      Map<String, DeleteFile> own = new LinkedHashMap<>();
      t.deletes().forEach(d -> own.put(key(d), d));
      live.put(t.file().location(), own);
      inputs.put(t.file().location(), t.file());
    }
    java.util.Set<String> gone = new java.util.HashSet<>();
    List<Snapshot> since = new ArrayList<>();
    for (Snapshot s = current; s != null && s.snapshotId() != base.snapshotId();
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      if (s.parentId() == null) {
        return unfollowable(table, "the table was rolled back or replaced");
      }
      since.add(s);
    }
    java.util.Collections.reverse(since);
    for (Snapshot s : since) {
      org.apache.iceberg.SnapshotChanges changes = org.apache.iceberg.SnapshotChanges.builderFor(table).snapshot(s)
          .build();
      for (DataFile d : changes.removedDataFiles()) {
        if (inputs.containsKey(d.location())) {
          if (org.apache.iceberg.DataOperations.REPLACE.equals(s.operation())) {
            return unfollowable(table, "another compaction rewrote one of its files");
          }
          gone.add(d.location()); // a writer deleted every row it had
        }
      }
      for (DeleteFile d : changes.removedDeleteFiles()) {
        String f = org.apache.iceberg.util.ContentFileUtil.referencedDataFileLocation(d);
        if (f != null && live.containsKey(f)) {
          live.get(f).remove(key(d));
        }
      }
      for (DeleteFile d : changes.addedDeleteFiles()) {
        String f = d.content() == org.apache.iceberg.FileContent.POSITION_DELETES
            ? org.apache.iceberg.util.ContentFileUtil.referencedDataFileLocation(d) : null;
        if (f == null) {
          return unfollowable(table, "a delete that names no one file arrived");
        }
        if (live.containsKey(f)) {
          live.get(f).put(key(d), d);
        }
      }
    }
    org.apache.iceberg.data.BaseDeleteLoader loader = dev.floe.read.DeletionVectors.loader(table.io());
    Map<DataFile, long[]> deletedSince = new LinkedHashMap<>();
    List<DeleteFile> removedDeletes = new ArrayList<>();
    for (FileScanTask t : run) {
      String f = t.file().location();
      org.apache.iceberg.deletes.PositionDeleteIndex then = loader.loadPositionDeletes(t.deletes(), f);
      List<Long> fresh = new ArrayList<>();
      if (gone.contains(f)) {
        for (long pos = 0; pos < t.file().recordCount(); pos++) {
          if (!then.isDeleted(pos)) {
            fresh.add(pos);
          }
        }
      } else {
        List<DeleteFile> now = List.copyOf(live.get(f).values());
        removedDeletes.addAll(now);
        loader.loadPositionDeletes(now, f).forEach(pos -> {
          if (!then.isDeleted(pos)) {
            fresh.add(pos);
          }
        });
      }
      if (!fresh.isEmpty()) {
        deletedSince.put(t.file(), fresh.stream().mapToLong(Long::longValue).toArray());
      }
    }
    List<DeleteFile> addedDeletes = new ArrayList<>();
    if (!deletedSince.isEmpty()) {
      Optional<Map<String, long[]>> found = dev.floe.write.MovedRows.find(duck, engine.files(), table, deletedSince, written,
          Map.of(), true);
      if (found.isEmpty()) {
        return unfollowable(table, "a row deleted since was not found in its output");
      }
      for (Map.Entry<String, long[]> e : found.get().entrySet()) {
        DataFile g = written.stream().filter(w -> w.location().equals(e.getKey())).findFirst().orElseThrow();
        addedDeletes.add(dev.floe.write.DeltaWriter.deletesOf(table, g, e.getValue()));
      }
    }
    List<DataFile> removed = new ArrayList<>(inputs.values());
    removed.removeIf(d -> gone.contains(d.location()));
    // the rewritten files still hold the rows of a file a writer emptied (deleted in them now), and a
    // replace may not add more rows than the files it removes held: when those files' own earlier
    // deletes do not make room for them, give way
    long adding = written.stream().mapToLong(DataFile::recordCount).sum();
    long replacing = removed.stream().mapToLong(DataFile::recordCount).sum();
    if (adding > replacing) {
      return unfollowable(table, "a writer emptied one of its files");
    }
    return Optional.of(TableChange.rewrite(current.snapshotId(), removed, removedDeletes, written, addedDeletes));
  }

  private static Optional<TableChange> unfollowable(Table table, String why) {
    LOG.info("compaction of {} cannot follow the writers: {}", table.name(), why);
    return Optional.empty();
  }

  /** The rows of a relation, counted (what a rewrite of files with deletes must write). */
  private static long count(Connection duck, String rows, TableIdentifier id) {
    try (var st = duck.createStatement(); var rs = st.executeQuery("SELECT count(*) FROM (" + rows + ") AS r")) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "compact table " + id.name() + ": " + e.getMessage(), e);
    }
  }
}
