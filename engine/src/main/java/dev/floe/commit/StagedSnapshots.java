package dev.floe.commit;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.io.FileIO;

/**
 * Snapshots committed to a private copy of a table, one per change (a transaction block's statements,
 * a group commit's statements), and what they add up to: their net files, one change on the state they
 * started from, so that the table gets one snapshot for all of them.
 */
public final class StagedSnapshots {
  private StagedSnapshots() {}

  /** The files the snapshots from {@code base} (exclusive) to {@code to} add and remove, net. */
  public static final class Net {
    public final Map<String, DataFile> addedData = new LinkedHashMap<>();
    public final Map<String, DeleteFile> addedDeletes = new LinkedHashMap<>();
    public final Map<String, DataFile> removedData = new LinkedHashMap<>();
    public final Map<String, DeleteFile> removedDeletes = new LinkedHashMap<>();
    /** Data files the added deletes apply to that the snapshots did not add: they must still exist. */
    public final List<String> referenced = new ArrayList<>();

    public boolean isEmpty() {
      return addedData.isEmpty() && addedDeletes.isEmpty() && removedData.isEmpty() && removedDeletes.isEmpty();
    }

    /**
     * A row delta of these files decided from {@code base}'s snapshot, validated by {@code validation}
     * with these {@link #referenced} files; the files it writes for itself are {@code written}.
     */
    public TableChange rowDelta(TableMetadata base, TableChange.Validation validation, List<String> written) {
      Snapshot from = base.currentSnapshot();
      return TableChange.rowDelta(from == null ? null : from.snapshotId(), List.copyOf(addedData.values()),
          List.copyOf(addedDeletes.values()), List.copyOf(removedData.values()), List.copyOf(removedDeletes.values()),
          new TableChange.Validation(validation.read(), validation.keys(), validation.untouched(), referenced),
          written);
    }
  }

  /** The snapshots from {@code base} (exclusive) to {@code to} (inclusive), oldest first. */
  public static List<Snapshot> between(TableMetadata base, TableMetadata to) {
    Long stop = base.currentSnapshot() == null ? null : base.currentSnapshot().snapshotId();
    List<Snapshot> out = new ArrayList<>();
    for (Snapshot s = to.currentSnapshot(); s != null && (stop == null || s.snapshotId() != stop);
        s = s.parentId() == null ? null : to.snapshot(s.parentId())) {
      out.add(0, s);
    }
    return out;
  }

  /**
   * What the snapshots from {@code base} to {@code to} of {@code table} (whose specs read their
   * manifests) add and remove: files added and removed again cancel out.
   */
  public static Net net(Table table, TableMetadata base, TableMetadata to) {
    Net net = new Net();
    for (Snapshot s : between(base, to)) {
      SnapshotChanges changes = changes(table, s);
      for (DataFile f : changes.addedDataFiles()) {
        // added again by the commit, which gives new rows their row ids (format 3)
        net.addedData.put(f.location(), DataFiles.builder(to.specsById().get(f.specId())).copy(f)
            .withFirstRowId(null).build());
      }
      for (DataFile f : changes.removedDataFiles()) {
        if (net.addedData.remove(f.location()) == null) {
          net.removedData.put(f.location(), f.copy());
        }
      }
      for (DeleteFile f : changes.addedDeleteFiles()) {
        net.addedDeletes.put(key(f), f.copy());
      }
      for (DeleteFile f : changes.removedDeleteFiles()) {
        if (net.addedDeletes.remove(key(f)) == null) {
          net.removedDeletes.put(key(f), f.copy());
        }
      }
    }
    // (files it removes are checked by Iceberg's validateDeletedFiles: still there, no new deletes)
    Set<String> referenced = new HashSet<>();
    for (DeleteFile d : net.addedDeletes.values()) {
      if (d.referencedDataFile() != null && !net.addedData.containsKey(d.referencedDataFile())) {
        referenced.add(d.referencedDataFile());
      }
    }
    net.referenced.addAll(referenced);
    return net;
  }

  /** The files a commit of {@code change} keeps (its additions). */
  public static Set<String> kept(TableChange change) {
    Set<String> kept = new HashSet<>();
    change.addedData().forEach(f -> kept.add(f.location()));
    change.addedDeletes().forEach(d -> kept.add(d.location()));
    return kept;
  }

  /**
   * Deletes what the snapshots after {@code base} up to {@code to} wrote — manifest lists, the manifests
   * they added, data and delete files they added — except the files in {@code keep}.
   */
  public static void deleteWritten(Table table, TableMetadata base, TableMetadata to, Set<String> keep) {
    FileIO io = table.io();
    for (Snapshot s : between(base, to)) {
      SnapshotChanges changes = changes(table, s);
      for (DataFile f : changes.addedDataFiles()) {
        if (!keep.contains(f.location())) {
          io.deleteFile(f.location());
        }
      }
      Set<String> deletes = new HashSet<>();
      changes.addedDeleteFiles().forEach(d -> deletes.add(d.location()));
      for (String location : deletes) {
        if (!keep.contains(location)) {
          io.deleteFile(location);
        }
      }
      for (ManifestFile m : s.allManifests(io)) {
        if (m.snapshotId() != null && m.snapshotId() == s.snapshotId()) {
          io.deleteFile(m.path());
        }
      }
      io.deleteFile(s.manifestListLocation());
    }
  }

  /** What one snapshot added and removed (read with the table's specs, from the manifests it wrote). */
  private static SnapshotChanges changes(Table table, Snapshot s) {
    return SnapshotChanges.builderFor(table).snapshot(s).build();
  }

  /** A delete file's identity: its location, and a deletion vector's offset in its Puffin file. */
  private static String key(ContentFile<?> f) {
    return f.location() + (f instanceof DeleteFile d && d.contentOffset() != null ? "@" + d.contentOffset() : "");
  }
}
