package dev.floe.exec;

import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;

/**
 * What a table's versions cost on disk, newest first: the bytes each one adds to the table when it and
 * every newer one are kept (its manifest list, and the manifests, data and delete files no newer version
 * names), plus its share of the metadata files: the current one and those its metadata log keeps (each
 * lists every version of its day; a version's share is what it adds to the current file, once per file,
 * as the log's files list about as many versions once a few commits have replaced them). Read from the
 * manifest lists and manifests, as expiry reads them; {@link MaintenancePolicy#keep} decides from it how
 * many versions a table's size bound allows.
 *
 * @param dataBytes the current version's data files
 * @param costs the current version's cost first (its whole live table), then each older version's, newest first
 * @param named every manifest list, manifest, data, delete and statistics file the versions name (what
 *     expiry compares with what the versions it keeps name)
 */
record HistorySize(long dataBytes, List<Long> costs, Set<String> named) {

  static HistorySize of(Table table) {
    TableMetadata meta = ((HasTableOperations) table).operations().current();
    List<Snapshot> order = new ArrayList<>();
    Snapshot current = table.currentSnapshot();
    for (Snapshot s : table.snapshots()) {
      if (current == null || s.snapshotId() != current.snapshotId()) {
        order.add(s);
      }
    }
    order.sort(Comparator.comparingLong(Snapshot::timestampMillis).thenComparingLong(Snapshot::sequenceNumber)
        .reversed());
    if (current != null) {
      order.add(0, current);
    }
    if (order.isEmpty()) {
      return new HistorySize(0, List.of(), Set.of());
    }
    long metadataFile = meta.metadataFileLocation() == null ? 0
        : table.io().newInputFile(meta.metadataFileLocation()).getLength();
    // each kept version is listed in the current metadata file, in about as many of the log's, and in the
    // replaced files a reader of this process may still read (deleted once it finishes: a table taking
    // tens of commits a second with readers at work has several on disk beside the log's)
    int files = Math.max(1 + meta.previousFiles().size(), metadataFilesOnDisk(table));
    long perVersion = metadataFile * files / order.size();
    Set<String> seen = new HashSet<>();
    List<Long> costs = new ArrayList<>();
    long data = 0;
    for (Snapshot s : order) {
      long cost = perVersion;
      String list = s.manifestListLocation();
      if (list != null && seen.add(list)) {
        cost += table.io().newInputFile(list).getLength();
      }
      for (ManifestFile m : s.allManifests(table.io())) {
        if (!seen.add(m.path())) {
          continue;
        }
        cost += m.length();
        for (ManifestEntries.Entry f : ManifestEntries.of(table, m)) {
          if (seen.add(f.location())) {
            cost += f.size();
            if (s == current && f.content() == FileContent.DATA) {
              data += f.size();
            }
          }
        }
      }
      costs.add(cost);
    }
    seen.addAll(org.apache.iceberg.ReachableFileUtil.statisticsFilesLocations(table));
    return new HistorySize(data, List.copyOf(costs), seen);
  }

  /** The metadata files in a local table's metadata directory (0 where the table is not on local disk). */
  private static int metadataFilesOnDisk(Table table) {
    java.nio.file.Path dir;
    try {
      dir = dev.floe.catalog.LocalFileIO.toPath(table.location()).resolve("metadata");
    } catch (IllegalArgumentException e) {
      return 0; // an object store: the log's count stands
    }
    try (var files = java.nio.file.Files.list(dir)) {
      return (int) files.filter(p -> p.getFileName().toString().endsWith(".metadata.json")).count();
    } catch (java.io.IOException e) {
      return 0;
    }
  }
}
