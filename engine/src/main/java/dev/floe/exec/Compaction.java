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
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Merges runs of small data files into files of the table's target size
 * ({@code write.target-file-size-bytes}), sorted by its sort order, in one Iceberg rewrite per run:
 * what a table fed by many small commits (a tail's seals) needs to stay fast to read.
 *
 * <p>A file is small below three quarters of the target. A file whose deletes are all its own (position
 * deletes or deletion vectors naming it alone, as Floe writes them) is rewritten without its deleted rows,
 * and its deletes go in the same commit: a keyed tail's seals add such deletes to earlier files at every
 * seal, and the files would otherwise never merge. Files with other deletes (equality deletes, deletes of
 * several files) are left alone. Within a partition, the small files are merged oldest
 * first, in runs of about the target size; a partition's files are merged once there are at least
 * {@value #MIN_INPUT_FILES} of them or they add up to the target, so a file is not rewritten again and
 * again while its partition fills. The rewrite is validated from the snapshot it read: a concurrent
 * delete in one of its files makes it give up (the committer's 40001: the files stay as they were, the
 * rewritten ones are deleted, and the next compaction tries again).
 */
final class Compaction {
  static final int MIN_INPUT_FILES = 4;

  private Compaction() {}

  /** What one compaction did. */
  record Result(int filesRewritten, int filesWritten, long rows) {
    static final Result NONE = new Result(0, 0, 0);

    Result plus(Result o) {
      return new Result(filesRewritten + o.filesRewritten, filesWritten + o.filesWritten, rows + o.rows);
    }
  }

  static Result compact(Engine engine, TableIdentifier id, Connection duck, boolean all) {
    return compact(engine, id, duck, all, Long.MIN_VALUE);
  }

  /**
   * As {@link #compact(Engine, TableIdentifier, Connection, boolean)}, leaving out files that may hold
   * a tail offset below {@code fromOffset} (a log's staged files that may be published already).
   */
  static Result compact(Engine engine, TableIdentifier id, Connection duck, boolean all, long fromOffset) {
    Table table = engine.tables().current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    Snapshot snapshot = table.currentSnapshot();
    if (snapshot == null) {
      return Result.NONE;
    }
    long target = PropertyUtil.propertyAsLong(table.properties(), TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
        TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    Map<List<Object>, List<FileScanTask>> partitions = new LinkedHashMap<>();
    for (FileScanTask task : engine.planner().plan(table, snapshot, table.schema(), null)) {
      DataFile f = task.file();
      if (ownDeletesOnly(task) && f.fileSizeInBytes() < target * 3 / 4 && offsetsFrom(table, f, fromOffset)) {
        partitions.computeIfAbsent(partitionKey(f), k -> new ArrayList<>()).add(task);
      }
    }
    Result done = Result.NONE;
    for (List<FileScanTask> small : partitions.values()) {
      small.sort(Comparator.comparing((FileScanTask t) -> t.file().dataSequenceNumber(),
          Comparator.nullsFirst(Comparator.naturalOrder())).thenComparing(t -> t.file().location()));
      long total = small.stream().mapToLong(t -> t.file().fileSizeInBytes()).sum();
      if (small.size() < 2 || (!all && small.size() < MIN_INPUT_FILES && total < target)) {
        continue;
      }
      List<FileScanTask> run = new ArrayList<>();
      long size = 0;
      for (FileScanTask t : small) {
        run.add(t);
        size += t.file().fileSizeInBytes();
        if (size >= target) {
          done = done.plus(rewrite(engine, table, snapshot, id, duck, run));
          run = new ArrayList<>();
          size = 0;
        }
      }
      if (run.size() >= 2) {
        done = done.plus(rewrite(engine, table, snapshot, id, duck, run));
      }
    }
    return done;
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
    if (run.size() < 2) {
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
    Map<String, org.apache.iceberg.DeleteFile> removedDeletes = new LinkedHashMap<>();
    for (FileScanTask t : run) {
      removed.add(t.file());
      t.deletes().forEach(d -> removedDeletes.putIfAbsent(d.location() + "@" + d.contentOffset(), d));
    }
    try {
      engine.committer().commit(id, table, TableChange.rewrite(snapshot.snapshotId(), removed,
          List.copyOf(removedDeletes.values()), written.files()));
    } catch (FloeException e) {
      if (SqlState.SERIALIZATION_FAILURE.equals(e.sqlState())) {
        return Result.NONE; // a concurrent change to these files (the committer deleted ours): try again later
      }
      throw e;
    }
    return new Result(run.size(), written.files().size(), before);
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
