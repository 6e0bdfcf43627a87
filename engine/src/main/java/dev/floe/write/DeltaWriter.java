package dev.floe.write;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.Durable;
import dev.floe.catalog.TableFiles;
import dev.floe.read.DeletionVectors;
import dev.floe.read.ScanFiles;
import dev.floe.read.ScanPlan;
import dev.floe.read.ScanSql;
import dev.floe.sql.Lexer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.io.DeleteSchemaUtil;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.parquet.FloeParquet;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFileFactory;
import dev.floe.read.FileFooters;
import org.apache.iceberg.util.ContentFileUtil;

/**
 * Writes the files of a row-level change: which rows of which data files go away, and which new rows
 * arrive. Rows that go away are written the way the table asks:
 *
 * <ul>
 *   <li><b>merge-on-read</b>, format 2: one Parquet position-delete file per touched data file (sorted by
 *       position, naming only that file);
 *   <li><b>merge-on-read</b>, format 3: a deletion vector per touched data file, merged with the one it
 *       already has (which the commit then replaces);
 *   <li><b>copy-on-write</b>: each touched data file is rewritten without those rows; untouched files are
 *       never read or written;
 * </ul>
 *
 * and in every mode a data file that loses all its live rows is dropped instead. New rows go through
 * {@link Inserter}. Rows flow from DuckDB to files without being collected in the JVM (deletion vector
 * positions excepted, which are bitmaps). Nothing is committed here.
 */
public final class DeltaWriter {
  /** How deleted rows are recorded. */
  public enum Mode { MERGE_ON_READ, COPY_ON_WRITE }

  /**
   * The files of a change, ready for one RowDelta.
   *
   * @param referencedDataFiles data files this change writes deletes for (they must still exist at commit)
   * @param deletedRows how many rows went away
   */
  public record Delta(List<DataFile> addedDataFiles, List<DeleteFile> addedDeleteFiles,
      List<DataFile> removedDataFiles, List<DeleteFile> removedDeleteFiles, List<String> referencedDataFiles,
      long deletedRows, long insertedRows) {
    public boolean isEmpty() {
      return addedDataFiles.isEmpty() && addedDeleteFiles.isEmpty() && removedDataFiles.isEmpty()
          && removedDeleteFiles.isEmpty();
    }

    /** Every file this change wrote (to delete if it does not commit). */
    public List<String> writtenLocations() {
      List<String> out = new ArrayList<>();
      addedDataFiles.forEach(f -> out.add(f.location()));
      addedDeleteFiles.forEach(f -> out.add(f.location()));
      return out;
    }
  }

  private DeltaWriter() {}

  /**
   * The rows a change removes from the target.
   *
   * @param sql a DuckDB table or query of distinct ({@code __floe_file}, {@code __floe_pos}) pairs
   * @param count how many pairs, when the caller knows (-1 otherwise)
   * @param positions the pairs themselves, by data file (local path) with sorted positions, when the
   *     caller read them (a small change): the delete writers then need no query; null otherwise
   */
  public record Deleted(String sql, long count, Map<String, long[]> positions) {
    public static Deleted of(String sql) {
      return new Deleted(sql, -1, null);
    }
  }

  /**
   * Writes a change.
   *
   * @param plan the target's scan (with the tasks of every file a deleted row may come from)
   * @param deleted the rows that go away, or null when none does
   * @param newRows the new rows, or null
   */
  public static Delta write(Connection duck, Table table, ScanPlan plan, ScanFiles files, Deleted deleted,
      Inserter.Rows newRows, Mode mode, int formatVersion, Path scratch) {
    List<DataFile> addedData = new ArrayList<>();
    List<DeleteFile> addedDeletes = new ArrayList<>();
    List<DataFile> removedData = new ArrayList<>();
    List<DeleteFile> removedDeletes = new ArrayList<>();
    List<String> referenced = new ArrayList<>();
    long deletedRows = 0;
    long insertedRows = 0;
    Future<DeleteWriteResult> vectors = null;
    Durable.Registrations[] vectorFiles = new Durable.Registrations[1];
    try {
      if (deleted != null) {
        Map<String, FileScanTask> tasks = new HashMap<>();
        for (FileScanTask t : plan.tasks()) {
          tasks.put(TableFiles.path(table.io(), t.file().location()).toString(), t);
        }
        Map<FileScanTask, Long> counts = deleted.positions() != null ? counts(deleted.positions(), tasks)
            : deleted.count() > 0 && plan.tasks().size() == 1 ? Map.of(plan.tasks().get(0), deleted.count())
            : countsPerFile(duck, deleted.sql(), tasks);
        List<FileScanTask> partial = new ArrayList<>();
        for (Map.Entry<FileScanTask, Long> e : counts.entrySet()) {
          FileScanTask task = e.getKey();
          deletedRows += e.getValue();
          if (allRowsGone(duck, table.io(), task, e.getValue())) {
            removedData.add(task.file());
            removedDeletes.addAll(fileScoped(task));
          } else {
            partial.add(task);
          }
        }
        if (!partial.isEmpty()) {
          if (mode == Mode.COPY_ON_WRITE) {
            ScanPlan touched = new ScanPlan(plan.table(), plan.snapshot(), plan.schema(), plan.columns(), partial);
            String survivors = "SELECT " + columnList(plan) + " FROM (" + ScanSql.relation(touched, table.io(),
                files, true) + ") AS r ANTI JOIN (" + deleted.sql() + ") AS d ON r." + ScanSql.ROW_FILE + " = d."
                + ScanSql.ROW_FILE + " AND r." + ScanSql.ROW_POSITION + " = d." + ScanSql.ROW_POSITION;
            Inserter.Written rewritten = Inserter.write(duck, table, table.schema(), survivors, scratch);
            addedData.addAll(rewritten.files());
            for (FileScanTask t : partial) {
              removedData.add(t.file());
              removedDeletes.addAll(fileScoped(t));
            }
          } else if (formatVersion >= 3) {
            partial.forEach(t -> referenced.add(t.file().location()));
            BaseDVFileWriter writer = deletionVectors(duck, table, files.vectors(), deleted, partial,
                counts.size() == 1);
            if (newRows != null) {
              // The vectors are merged and written while DuckDB writes the new rows.
              vectors = VECTORS.submit(() -> {
                try {
                  return finish(writer);
                } finally {
                  vectorFiles[0] = Durable.take();
                }
              });
            } else {
              DeleteWriteResult dvs = finish(writer);
              addedDeletes.addAll(dvs.deleteFiles());
              removedDeletes.addAll(dvs.rewrittenDeleteFiles());
            }
          } else {
            List<Runnable> inJvm = new ArrayList<>();
            List<DeleteFile> written = java.util.Collections.synchronizedList(new ArrayList<>());
            for (FileScanTask t : partial) {
              referenced.add(t.file().location());
              List<DeleteFile> absorbed = absorbed(t, counts.get(t));
              removedDeletes.addAll(absorbed);
              long[] merged = positionsInJvm(duck, table.io(), deleted, t, absorbed);
              if (merged == null) {
                addedDeletes.add(positionDeletes(duck, table, deleted, t, absorbed));
              } else {
                inJvm.add(() -> written.add(positionDeletesInJvm(table, t.file(), merged)));
              }
            }
            if (!inJvm.isEmpty() && newRows != null) {
              // Written while DuckDB writes the new rows, as deletion vectors are.
              vectors = VECTORS.submit(() -> {
                try {
                  inJvm.forEach(Runnable::run);
                  return new DeleteWriteResult(List.copyOf(written));
                } catch (RuntimeException e) {
                  written.forEach(f -> quietlyDelete(table, f.location()));
                  throw e;
                } finally {
                  vectorFiles[0] = Durable.take();
                }
              });
            } else {
              inJvm.forEach(Runnable::run);
              addedDeletes.addAll(written);
            }
          }
        }
      }
      if (newRows != null) {
        Inserter.Written written = Inserter.write(duck, table, table.schema(), newRows, scratch);
        addedData.addAll(written.files());
        insertedRows = written.rows();
      }
      if (vectors != null) {
        DeleteWriteResult dvs = join(vectors, vectorFiles);
        vectors = null;
        addedDeletes.addAll(dvs.deleteFiles());
        removedDeletes.addAll(dvs.rewrittenDeleteFiles());
      }
      return new Delta(addedData, addedDeletes, removedData, dedupe(removedDeletes), referenced, deletedRows,
          insertedRows);
    } catch (RuntimeException e) {
      if (vectors != null) {
        try {
          addedDeletes.addAll(join(vectors, vectorFiles).deleteFiles());
        } catch (RuntimeException alsoFailed) {
          e.addSuppressed(alsoFailed);
        }
      }
      abandon(table, addedData, addedDeletes);
      throw e;
    }
  }

  /**
   * Writes delete files (deletion vectors, and position-delete files the JVM writes) on a thread of
   * their own, beside a statement's thread writing new rows.
   */
  private static final ExecutorService VECTORS = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "floe-vectors");
    t.setDaemon(true);
    return t;
  });

  /** The vectors written on another thread; their files become part of this thread's commit. */
  private static DeleteWriteResult join(Future<DeleteWriteResult> vectors, Durable.Registrations[] files) {
    try {
      return vectors.get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new FloeException(SqlState.IO_ERROR,
          "cannot write a delete file: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FloeException(SqlState.QUERY_CANCELED, "canceling statement due to user request", e);
    } finally {
      if (files[0] != null) {
        Durable.adopt(files[0]);
        files[0] = null;
      }
    }
  }

  /** Deletes the files of a change that failed while being written (once written, the committer does). */
  private static void abandon(Table table, List<DataFile> data, List<DeleteFile> deletes) {
    for (DataFile f : data) {
      quietlyDelete(table, f.location());
    }
    for (DeleteFile f : deletes) {
      quietlyDelete(table, f.location());
    }
  }

  private static void quietlyDelete(Table table, String location) {
    try {
      table.io().deleteFile(location);
    } catch (RuntimeException ignored) {
      // an unreferenced file: harmless, and swept by orphan cleanup
    }
  }

  private static String columnList(ScanPlan plan) {
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < plan.columns().size(); k++) {
      b.append(k > 0 ? ", " : "").append("r.").append(Lexer.quoteIdentifier(plan.columns().get(k).name()));
    }
    return b.toString();
  }

  /** Rows deleted per file, from positions the caller read. */
  private static Map<FileScanTask, Long> counts(Map<String, long[]> positions, Map<String, FileScanTask> tasks) {
    Map<FileScanTask, Long> counts = new LinkedHashMap<>();
    for (Map.Entry<String, long[]> e : positions.entrySet()) {
      FileScanTask task = tasks.get(e.getKey());
      if (task == null) {
        throw new IllegalStateException("a deleted row came from " + e.getKey() + ", which the scan did not plan");
      }
      counts.put(task, (long) e.getValue().length);
    }
    return counts;
  }

  private static Map<FileScanTask, Long> countsPerFile(Connection duck, String deleted, Map<String, FileScanTask> tasks) {
    Map<FileScanTask, Long> counts = new LinkedHashMap<>();
    String sql = "SELECT " + ScanSql.ROW_FILE + ", count(*) FROM (" + deleted + ") GROUP BY 1 ORDER BY 1";
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        String file = rs.getString(1);
        FileScanTask task = tasks.get(file);
        if (task == null) {
          throw new IllegalStateException("a deleted row came from " + file + ", which the scan did not plan");
        }
        counts.put(task, rs.getLong(2));
      }
    } catch (SQLException e) {
      throw new Inserter.WriteFailure(e);
    }
    return counts;
  }

  /**
   * Whether deleting {@code count} more rows (live ones, so not already deleted) leaves the file without
   * live rows. Exact: a deletion vector holds distinct positions; Parquet position deletes may repeat a
   * position, so when their row counts allow it the distinct positions are counted. Equality deletes
   * make it unknown, and the answer no.
   */
  private static boolean allRowsGone(Connection duck, FileIO io, FileScanTask task, long count) {
    long records = task.file().recordCount();
    long alreadyDeleted = 0;
    boolean parquet = false;
    boolean vector = false;
    for (DeleteFile d : task.deletes()) {
      if (d.content() != FileContent.POSITION_DELETES) {
        return false;
      }
      alreadyDeleted += d.recordCount();
      parquet |= d.format() != FileFormat.PUFFIN;
      vector |= d.format() == FileFormat.PUFFIN;
    }
    if (alreadyDeleted + count < records) {
      return false;
    }
    if (!parquet) {
      return true;
    }
    if (vector) {
      return false; // both kinds on one file: not worth counting exactly
    }
    List<String> files = new ArrayList<>();
    for (DeleteFile d : task.deletes()) {
      files.add(Lexer.quoteString(TableFiles.readable(io, d.location()).toString()));
    }
    String sql = "SELECT count(DISTINCT pos) FROM read_parquet([" + String.join(", ", files) + "]) WHERE "
        + TableFiles.pathSql(io, "file_path") + " = "
        + Lexer.quoteString(TableFiles.path(io, task.file().location()).toString());
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1) + count >= records;
    } catch (SQLException e) {
      throw new Inserter.WriteFailure(e);
    }
  }

  /** Delete files that apply to this data file alone, and go when it goes. */
  private static List<DeleteFile> fileScoped(FileScanTask task) {
    List<DeleteFile> out = new ArrayList<>();
    for (DeleteFile d : task.deletes()) {
      if (d.content() == FileContent.POSITION_DELETES
          && task.file().location().equals(ContentFileUtil.referencedDataFileLocation(d))) {
        out.add(d);
      }
    }
    return out;
  }

  /**
   * Each delete file once. A delete file is its location and, for deletion vectors, which share Puffin
   * files, its offset in the file.
   */
  private static List<DeleteFile> dedupe(List<DeleteFile> files) {
    Map<String, DeleteFile> byIdentity = new LinkedHashMap<>();
    for (DeleteFile f : files) {
      byIdentity.putIfAbsent(f.location() + "@" + f.contentOffset(), f);
    }
    return new ArrayList<>(byIdentity.values());
  }

  /** A new position-delete file takes in an older one of the data file's at most this many times its size. */
  private static final int ABSORB_RATIO = 4;

  /**
   * The file-scoped Parquet delete files of a data file that its new position-delete file takes in (the
   * commit replaces them), smallest first, each at most {@link #ABSORB_RATIO} times what the new file
   * holds so far while that stays within {@link #FEW_POSITIONS}, and past it at most what the new file
   * holds. A small change beside a file's many deletes writes a small file of its own rather than copying
   * them all again (2 s for 6M positions, every statement), and files fold together as they grow: past
   * {@link #FEW_POSITIONS}, as a binary counter's digits carry, so a position is copied about log2 of the
   * changes' count times, and a data file keeps about that many delete files until compaction rewrites it.
   * (At four times what the new file holds, changes of equal size, as a change stream's batches are, took
   * in every older file almost every time: each batch rewrote all the file's deletes so far, 0.5–2 s a
   * batch of the CDC benchmark's target.)
   */
  private static List<DeleteFile> absorbed(FileScanTask task, long newPositions) {
    List<DeleteFile> previous = new ArrayList<>(fileScopedParquet(task));
    previous.sort(java.util.Comparator.comparingLong(DeleteFile::recordCount));
    List<DeleteFile> out = new ArrayList<>();
    long holds = newPositions;
    for (DeleteFile d : previous) {
      long n = d.recordCount();
      if (n > ABSORB_RATIO * holds || n > holds && holds + n > FEW_POSITIONS) {
        break;
      }
      out.add(d);
      holds += n;
    }
    return out;
  }

  /** The Parquet position-delete files that name only this data file (they go when it goes). */
  private static List<DeleteFile> fileScopedParquet(FileScanTask task) {
    List<DeleteFile> out = new ArrayList<>();
    for (DeleteFile d : fileScoped(task)) {
      if (d.format() == FileFormat.PARQUET) {
        out.add(d);
      }
    }
    return out;
  }

  /**
   * A format-2 position-delete file for one data file, sorted by position, written by DuckDB. It holds
   * the new positions and those of the delete files it takes in ({@link #absorbed}), which the commit
   * replaces, so a data file collects a few delete files however often its rows are deleted. It is
   * written in place, beside the table's data files, and deleted if the statement fails. A small
   * change's is written in the JVM instead ({@link #positionsInJvm}).
   */
  private static DeleteFile positionDeletes(Connection duck, Table table, Deleted deleted, FileScanTask task,
      List<DeleteFile> absorbed) {
    String local = TableFiles.path(table.io(), task.file().location()).toString();
    String location = deleteFileLocation(table, task.file());
    try {
      String positions = "SELECT " + ScanSql.ROW_POSITION + " AS pos FROM (" + deleted.sql() + ") WHERE "
          + ScanSql.ROW_FILE + " = " + Lexer.quoteString(local);
      try (Statement st = duck.createStatement()) {
        st.execute(positionDeletesCopy(table.io(), positions, task, absorbed, TableFiles.target(table.io(), location)));
      }
      TableFiles.written(table.io(), location);
      return positionDeleteFile(table, task.file(), location);
    } catch (SQLException e) {
      quietlyDelete(table, location);
      throw new Inserter.WriteFailure(e);
    } catch (RuntimeException e) {
      quietlyDelete(table, location);
      throw e;
    }
  }

  /** Up to this many positions per data file, a position-delete file is written in the JVM. */
  private static final int FEW_POSITIONS = 10_000;

  /**
   * All the positions a data file's new position-delete file is to hold, when the JVM writes it: the
   * caller read the change's positions and they are few. They are merged with those of the delete
   * files the new one replaces (remembered, or read by DuckDB, on this thread). Null when DuckDB writes
   * the file.
   */
  private static long[] positionsInJvm(Connection duck, FileIO io, Deleted deleted, FileScanTask task,
      List<DeleteFile> absorbed) {
    if (deleted.positions() == null || !FloeParquet.available()) {
      return null;
    }
    long[] merged = deleted.positions().get(TableFiles.path(io, task.file().location()).toString());
    try {
      for (DeleteFile previous : absorbed) {
        if (merged.length > FEW_POSITIONS) {
          break;
        }
        long[] old = dev.floe.read.PositionDeletes.known(previous.location());
        merged = union(merged, old != null ? old : readPositions(duck, io, previous, task.file()));
      }
    } catch (SQLException e) {
      throw new Inserter.WriteFailure(e);
    }
    return merged.length <= FEW_POSITIONS ? merged : null;
  }

  /**
   * Writes a data file's position-delete file with Iceberg's Parquet writer (on any thread: it uses no
   * DuckDB connection), measured as it is written; deleted again if writing fails.
   */
  /**
   * The deletes of {@code positions} (sorted, distinct) of one data file as the table's format wants
   * them: a deletion vector on v3, a position-delete file on v2.
   */
  public static DeleteFile deletesOf(Table table, DataFile data, long[] positions) {
    boolean vectors = ((org.apache.iceberg.HasTableOperations) table).operations().current().formatVersion() >= 3;
    return vectors ? deletionVectorInJvm(table, data.location(), data.specId(), data.partition(), positions)
        : positionDeletesInJvm(table, data.location(), data.specId(), data.partition(), positions);
  }

  private static DeleteFile positionDeletesInJvm(Table table, DataFile data, long[] positions) {
    return positionDeletesInJvm(table, data.location(), data.specId(), data.partition(), positions);
  }

  /**
   * Writes a Parquet position-delete file of {@code positions} (sorted, distinct) of one data file, given
   * by its location, partition spec and partition.
   */
  static DeleteFile positionDeletesInJvm(Table table, String dataLocation, int specId, StructLike partition,
      long[] positions) {
    String location = Inserter.dataLocation(table, table.specs().get(specId), partition,
        UUID.randomUUID() + "-deletes.parquet");
    try {
      Schema schema = DeleteSchemaUtil.pathPosSchema();
      FileAppender<StructLike> appender = FloeParquet.appender(table.io().newOutputFile(location), schema,
          CompressionCodecName.ZSTD, MetricsConfig.forPositionDelete());
      try (appender) {
        // the writer encodes each row as it is added, so one record serves them all
        GenericRecord r = GenericRecord.create(schema);
        r.set(0, dataLocation);
        for (long pos : positions) {
          r.set(1, pos);
          appender.add(r);
        }
      }
      // closing the appender made it durable before the commit, or uploaded it (the table's FileIO)
      dev.floe.read.PositionDeletes.remember(location, positions);
      return FileMetadata.deleteFileBuilder(table.specs().get(specId))
          .ofPositionDeletes()
          .withPath(location)
          .withFormat(FileFormat.PARQUET)
          .withFileSizeInBytes(appender.length())
          .withMetrics(appender.metrics())
          .withSplitOffsets(appender.splitOffsets())
          .withPartition(partition)
          .withReferencedDataFile(dataLocation)
          .build();
    } catch (java.io.IOException e) {
      quietlyDelete(table, location);
      throw new FloeException(SqlState.IO_ERROR, "cannot write a delete file: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      quietlyDelete(table, location);
      throw e;
    }
  }

  /** The positions a position-delete file holds for {@code data}, sorted and distinct. */
  private static long[] readPositions(Connection duck, FileIO io, DeleteFile file, DataFile data)
      throws SQLException {
    String sql = "SELECT DISTINCT pos FROM read_parquet([" + Lexer.quoteString(TableFiles.readable(io,
        file.location()).toString()) + "]) WHERE " + TableFiles.pathSql(io, "file_path") + " = "
        + Lexer.quoteString(TableFiles.path(io, data.location()).toString()) + " ORDER BY pos";
    List<Long> out = new ArrayList<>();
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getLong(1));
      }
    }
    long[] positions = out.stream().mapToLong(Long::longValue).toArray();
    dev.floe.read.PositionDeletes.remember(file.location(), positions);
    return positions;
  }

  /** The sorted, distinct union of two sorted, distinct position lists. */
  static long[] union(long[] a, long[] b) {
    long[] out = new long[a.length + b.length];
    int i = 0;
    int j = 0;
    int n = 0;
    while (i < a.length || j < b.length) {
      long next;
      if (j >= b.length || (i < a.length && a[i] < b[j])) {
        next = a[i++];
      } else if (i >= a.length || b[j] < a[i]) {
        next = b[j++];
      } else {
        next = a[i++];
        j++;
      }
      out[n++] = next;
    }
    return n == out.length ? out : java.util.Arrays.copyOf(out, n);
  }

  /** Where a new position-delete file for {@code data} goes: beside the table's data files. */
  private static String deleteFileLocation(Table table, DataFile data) {
    return Inserter.dataLocation(table, table.specs().get(data.specId()), data.partition(),
        UUID.randomUUID() + "-deletes.parquet");
  }

  /** DuckDB's COPY of a data file's merged, sorted delete positions to {@code target}. */
  private static String positionDeletesCopy(FileIO io, String positions, FileScanTask task, List<DeleteFile> previous,
      Path target) {
    DataFile data = task.file();
    String merged = positions;
    if (!previous.isEmpty()) {
      List<String> files = new ArrayList<>();
      for (DeleteFile d : previous) {
        files.add(Lexer.quoteString(TableFiles.readable(io, d.location()).toString()));
      }
      // file-scoped: every row names this data file (its file_path bounds say so), so no row is filtered,
      // and no path is rewritten per row to compare it (2 s for 6M positions). The change deleted rows
      // that were live in the snapshot those files belong to, so its positions are none of theirs, and
      // each file's are distinct: only the change's own are made distinct (a UNION hashing all 6.7M
      // positions took 0.9 s more)
      merged = "SELECT DISTINCT pos FROM (" + positions + ") UNION ALL SELECT pos FROM read_parquet(["
          + String.join(", ", files) + "])";
    }
    return "COPY (SELECT " + Lexer.quoteString(data.location()) + " AS file_path, pos FROM (" + merged
        + ") ORDER BY pos) TO " + Lexer.quoteString(target.toString()) + " (FORMAT parquet, COMPRESSION zstd, FIELD_IDS "
        + "{file_path: " + MetadataColumns.DELETE_FILE_PATH.fieldId() + ", pos: "
        + MetadataColumns.DELETE_FILE_POS.fieldId() + "})";
  }

  /** The delete file written at {@code location} for {@code data}, measured from its footer. */
  private static DeleteFile positionDeleteFile(Table table, DataFile data, String location) {
    InputFile in = table.io().newInputFile(location);
    Metrics metrics = FileFooters.metrics(in, MetricsConfig.forPositionDelete());
    return FileMetadata.deleteFileBuilder(table.specs().get(data.specId()))
        .ofPositionDeletes()
        .withPath(location)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(in.getLength())
        .withMetrics(metrics)
        .withPartition(data.partition())
        .withReferencedDataFile(data.location())
        .build();
  }

  /**
   * Format-3 deletion vectors: a writer holding the positions {@code deleted} names in each of
   * {@code tasks}' files, to be merged with each file's vector and written by Iceberg's Puffin writer in
   * {@link #finish}.
   *
   * @param oneFile whether every row {@code deleted} names is in the one file of {@code tasks}
   */
  private static BaseDVFileWriter deletionVectors(Connection duck, Table table, DeletionVectors loaded,
      Deleted deleted, List<FileScanTask> tasks, boolean oneFile) {
    Map<String, FileScanTask> byLocation = new HashMap<>();
    for (FileScanTask t : tasks) {
      byLocation.put(t.file().location(), t);
    }
    OutputFileFactory files = OutputFileFactory.builderFor(table, 1, System.nanoTime())
        .format(FileFormat.PUFFIN).operationId(UUID.randomUUID().toString()).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(files, location -> {
      FileScanTask t = byLocation.get(location);
      List<DeleteFile> previous = new ArrayList<>();
      for (DeleteFile d : t.deletes()) {
        if (d.format() == FileFormat.PUFFIN) {
          previous.add(d);
        }
      }
      return previous.isEmpty() ? null : loaded.load(previous, table.io(), location);
    });
    if (deleted.positions() != null) {
      for (FileScanTask t : tasks) {
        DataFile data = t.file();
        for (long pos : deleted.positions().get(TableFiles.path(table.io(), data.location()).toString())) {
          writer.delete(data.location(), pos, table.specs().get(data.specId()), data.partition());
        }
      }
      return writer;
    }
    // One pass over the deleted rows, naming each file by its index into the task list, so that no
    // string is made per row.
    StringBuilder values = new StringBuilder();
    for (int k = 0; k < tasks.size(); k++) {
      values.append(k > 0 ? ", " : "").append('(').append(k).append(", ")
          .append(Lexer.quoteString(TableFiles.path(table.io(), tasks.get(k).file().location()).toString())).append(')');
    }
    String sql = oneFile && tasks.size() == 1
        ? "SELECT 0, " + ScanSql.ROW_POSITION + " FROM (" + deleted.sql() + ") AS d"
        : "SELECT f.k, d." + ScanSql.ROW_POSITION + " FROM (" + deleted.sql() + ") AS d JOIN (VALUES " + values
            + ") AS f(k, path) ON d." + ScanSql.ROW_FILE + " = f.path";
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        DataFile data = tasks.get(rs.getInt(1)).file();
        writer.delete(data.location(), rs.getLong(2), table.specs().get(data.specId()), data.partition());
      }
    } catch (SQLException e) {
      throw new Inserter.WriteFailure(e);
    }
    return writer;
  }

  /** Merges each file's new positions with its previous vector and writes the vectors (Puffin). */
  /**
   * Writes one deletion vector of {@code positions} of one data file (location, spec, partition) in a
   * Puffin file of its own.
   */
  static DeleteFile deletionVectorInJvm(Table table, String dataLocation, int specId, StructLike partition,
      long[] positions) {
    OutputFileFactory files = OutputFileFactory.builderFor(table, 1, System.nanoTime())
        .format(FileFormat.PUFFIN).operationId(UUID.randomUUID().toString()).build();
    BaseDVFileWriter writer = new BaseDVFileWriter(files, location -> null);
    for (long pos : positions) {
      writer.delete(dataLocation, pos, table.specs().get(specId), partition);
    }
    List<DeleteFile> written = finish(writer).deleteFiles();
    if (written.size() != 1) {
      throw new IllegalStateException("one deletion vector expected, " + written.size() + " written");
    }
    return written.get(0);
  }

  private static DeleteWriteResult finish(BaseDVFileWriter writer) {
    try {
      writer.close();
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot write a deletion vector: " + e.getMessage(), e);
    }
    return writer.result();
  }

}
