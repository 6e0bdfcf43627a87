package dev.floe.read;

/**
 * What scans learn from a table's files and keep for later scans of the same files (one per engine):
 * the physical columns of files written without field ids, staged deletion vectors, and which files'
 * checksums were verified ({@link dev.floe.catalog.FileDigests}).
 */
public record ScanFiles(FileFooters footers, DeletionVectors vectors, dev.floe.catalog.FileDigests digests) {
  /** Checks, once per process, that the files a plan reads (data and delete files) are as written. */
  public void verify(ScanPlan plan) {
    java.util.Set<String> locations = new java.util.LinkedHashSet<>();
    for (org.apache.iceberg.FileScanTask task : plan.tasks()) {
      locations.add(task.file().location());
      for (org.apache.iceberg.DeleteFile d : task.deletes()) {
        locations.add(d.location());
      }
    }
    for (String foreign : digests.verify(locations)) {
      if (foreign.endsWith(".parquet")) {
        footers.footer(plan.table().io(), foreign); // XX001 naming the file when its footer is damaged
      }
    }
  }
}
