package dev.floe.read;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PropertyUtil;

/**
 * {@code "t$health"}: one row of the figures that say whether a table needs maintenance — how many data
 * and delete files a reader opens, how many are small, how much of the rows its deletes hide, how much
 * history and metadata every commit carries — as of the current version (or a time-travel target).
 */
final class TableHealth {
  private TableHealth() {}

  static final String NAME = "health";

  /** A file is small below three quarters of the table's target size (as compaction decides). */
  private static final String[] COLUMNS = {
      "data_files", "data_bytes", "data_rows", "small_data_files", "target_file_bytes",
      "files_under_1mb", "files_1mb_to_16mb", "files_16mb_to_128mb", "files_over_128mb",
      "delete_files", "delete_bytes", "deleted_rows", "delete_ratio",
      "manifests", "snapshots", "oldest_snapshot_at", "metadata_bytes"};

  static Schema schema() {
    Types.NestedField[] fields = new Types.NestedField[COLUMNS.length];
    for (int k = 0; k < COLUMNS.length; k++) {
      String c = COLUMNS[k];
      org.apache.iceberg.types.Type type = c.equals("delete_ratio") ? Types.DoubleType.get()
          : c.equals("oldest_snapshot_at") ? Types.TimestampType.withZone() : Types.LongType.get();
      fields[k] = Types.NestedField.optional(k + 1, c, type);
    }
    return new Schema(fields);
  }

  static String relation(Table table, Optional<Snapshot> at, RowStage stage) {
    return stage.relation(schema(), sink -> sink.row(row(table, at.or(() -> Optional.ofNullable(table.currentSnapshot())))));
  }

  private static Object[] row(Table table, Optional<Snapshot> snapshot) {
    long target = PropertyUtil.propertyAsLong(table.properties(), TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
        TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    long dataFiles = 0;
    long dataBytes = 0;
    long dataRows = 0;
    long small = 0;
    long[] histogram = new long[4];
    long deleteFiles = 0;
    long deleteBytes = 0;
    long deletedRows = 0;
    long manifests = 0;
    if (snapshot.isPresent()) {
      Set<String> seenDeletes = new HashSet<>();
      try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(snapshot.get().snapshotId())
          .planFiles()) {
        for (FileScanTask task : tasks) {
          long size = task.file().fileSizeInBytes();
          dataFiles++;
          dataBytes += size;
          dataRows += task.file().recordCount();
          small += size < target * 3 / 4 ? 1 : 0;
          histogram[size < (1L << 20) ? 0 : size < (16L << 20) ? 1 : size < (128L << 20) ? 2 : 3]++;
          for (DeleteFile d : task.deletes()) {
            if (seenDeletes.add(d.location() + "@" + d.contentOffset())) {
              deleteFiles++;
              deleteBytes += d.contentSizeInBytes() != null ? d.contentSizeInBytes() : d.fileSizeInBytes();
              deletedRows += d.recordCount();
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      manifests = snapshot.get().allManifests(table.io()).size();
    }
    long snapshots = 0;
    Long oldest = null;
    for (Snapshot s : table.snapshots()) {
      snapshots++;
      oldest = oldest == null ? s.timestampMillis() : Math.min(oldest, s.timestampMillis());
    }
    Long metadataBytes = null;
    if (table instanceof HasTableOperations h && h.operations().current().metadataFileLocation() != null) {
      metadataBytes = table.io().newInputFile(h.operations().current().metadataFileLocation()).getLength();
    }
    return new Object[] {dataFiles, dataBytes, dataRows, small, target, histogram[0], histogram[1], histogram[2],
        histogram[3], deleteFiles, deleteBytes, deletedRows, dataRows == 0 ? 0.0 : (double) deletedRows / dataRows,
        manifests, snapshots, oldest == null ? null : oldest * 1000, metadataBytes};
  }
}
