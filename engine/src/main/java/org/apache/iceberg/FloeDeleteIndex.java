package org.apache.iceberg;

import java.util.Map;

/**
 * Floe's access to Iceberg's {@link DeleteFileIndex}, which is package-private: the rules for which
 * delete files apply to which data file (sequence numbers, partitions, file-scoped position deletes,
 * deletion vectors, global equality deletes) stay Iceberg's own. Floe builds the index from delete
 * files it has cached, so planning a new snapshot reads only the manifests it has not seen.
 */
public final class FloeDeleteIndex {
  private final DeleteFileIndex index;

  private FloeDeleteIndex(DeleteFileIndex index) {
    this.index = index;
  }

  /** Indexes the live delete files of one snapshot. */
  public static FloeDeleteIndex of(Iterable<DeleteFile> deleteFiles, Map<Integer, PartitionSpec> specsById) {
    return new FloeDeleteIndex(DeleteFileIndex.builderFor(deleteFiles).specsById(specsById).build());
  }

  /** The delete files that apply to a live data file (with its data sequence number) of that snapshot. */
  public DeleteFile[] forDataFile(DataFile file) {
    return index.forDataFile(file.dataSequenceNumber(), file);
  }
}
