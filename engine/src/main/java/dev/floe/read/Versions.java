package dev.floe.read;

import java.util.List;
import java.util.Optional;
import org.apache.iceberg.HistoryEntry;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * A table's version numbers, as {@code AS OF VERSION n} names them: the snapshot's sequence number,
 * which Iceberg (format 2 and later) increments with every commit. Format 1 has no sequence numbers
 * (they are all 0); there a version is the snapshot's 1-based position in the table's history.
 */
public final class Versions {
  private Versions() {}

  /** The version of {@code snapshot} in {@code table}, or empty for a v1 snapshot not in the history. */
  public static Optional<Long> of(Table table, Snapshot snapshot) {
    if (snapshot.sequenceNumber() > 0) {
      return Optional.of(snapshot.sequenceNumber());
    }
    List<HistoryEntry> history = table.history();
    for (int i = 0; i < history.size(); i++) {
      if (history.get(i).snapshotId() == snapshot.snapshotId()) {
        return Optional.of((long) i + 1);
      }
    }
    return Optional.empty();
  }

  /** The snapshot that is version {@code version} of {@code table}. */
  public static Optional<Snapshot> find(Table table, long version) {
    for (Snapshot s : table.snapshots()) {
      if (s.sequenceNumber() == version && version > 0) {
        return Optional.of(s);
      }
    }
    List<HistoryEntry> history = table.history();
    if (version >= 1 && version <= history.size()) {
      Snapshot s = table.snapshot(history.get((int) version - 1).snapshotId());
      if (s != null && s.sequenceNumber() == 0) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }
}
