package org.apache.iceberg;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.RuntimeIOException;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Floe's commit of one statement's change to a table's main branch, when nothing has been committed
 * since the snapshot the statement read: then there is nothing to validate, and the commit writes only
 * what the new snapshot needs.
 *
 * <ul>
 *   <li>one data manifest for the data files the change adds or removes, one delete manifest for the
 *       delete files it adds or removes (removed files as DELETED entries, as Iceberg records them);
 *   <li>the manifest list: the parent's manifests, less those whose every live file the change removes,
 *       plus the new ones;
 *   <li>the snapshot (sequence number, summary with totals, row lineage for format 3) and the table
 *       metadata, swapped in by the table's operations.
 * </ul>
 *
 * Iceberg's own {@link RowDelta} would also read back the manifest list and re-read and rewrite the
 * manifest of every file the change removes, refresh the table twice, and merge manifests. Floe takes
 * this path only where it gives the same snapshot contents: the table has format 2 or later, every file
 * is in the current partition spec, every removed file is read from a manifest of the parent whose live
 * files the change removes entirely, and the parent has fewer manifests of a kind than Iceberg's
 * {@code commit.manifest.min-count-to-merge}, so that manifests are still merged (by Iceberg's path)
 * as they accumulate. Anything else, and a commit that loses the catalog swap to another process, is
 * left to Iceberg: {@link #tryCommit} returns null and writes nothing that stays.
 *
 * <p>One instance per engine, owned by its committer ({@code dev.floe.commit.Committer}), which holds the
 * table's commit lock around every call: it remembers the manifests it last listed for each table.
 */
public final class FloeCommit {
  public FloeCommit() {}

  /** A statement's change: the files it adds and those it removes. */
  public record Change(List<DataFile> addedData, List<DeleteFile> addedDeletes, List<DataFile> removedData,
      List<DeleteFile> removedDeletes) {
    public static Change append(List<DataFile> files) {
      return new Change(files, List.of(), List.of(), List.of());
    }
  }

  /**
   * A committed snapshot and, if Floe wrote it, the manifests that list the change's added data and
   * delete files (null: none added). A snapshot Iceberg's own path wrote may also have rewritten or
   * merged its parent's manifests, so where its files are listed is known only from its manifests.
   */
  public record Committed(Snapshot snapshot, boolean byFloe, String dataManifest, String deleteManifest) {
    public static Committed byIceberg(Snapshot snapshot) {
      return new Committed(snapshot, false, null, null);
    }
  }

  /**
   * The manifests of the last snapshot this committer committed to each table (by table location), with
   * the metadata file that made it current: the next commit uses them only from that same metadata,
   * never for another table, even one copied with the same uuid and snapshot ids.
   */
  private final Map<String, Listed> lists = new HashMap<>();

  private record Listed(String metadataLocation, long snapshotId, List<ManifestFile> manifests) {}

  /**
   * Commits {@code change} as a child of {@code parentId} (null: the table has no snapshot yet), or
   * returns null, having left nothing behind, where Iceberg's own commit must do it. The caller holds
   * the table's commit lock.
   */
  public Committed tryCommit(Table table, Long parentId, Change change) {
    if (!(table instanceof HasTableOperations hasOps)) {
      return null;
    }
    TableOperations ops = hasOps.operations();
    TableMetadata base = ops.current();
    if (base == null || base.formatVersion() < 2) {
      return null;
    }
    Snapshot parent = base.currentSnapshot();
    if (!Objects.equals(parent == null ? null : parent.snapshotId(), parentId)) {
      return null;
    }
    PartitionSpec spec = base.spec();
    if (!inSpec(spec, change.addedData()) || !inSpec(spec, change.addedDeletes())
        || !inSpec(spec, change.removedData()) || !inSpec(spec, change.removedDeletes())) {
      return null;
    }
    List<ManifestFile> parentManifests = parent == null ? List.of() : manifests(table, base, parent);
    if (!underMergeThreshold(base, parentManifests)) {
      return null;
    }
    // The parent's manifests whose live files the change removes, all of them.
    Map<String, Integer> removedPerManifest = new HashMap<>();
    for (ContentFile<?> f : removed(change)) {
      if (f.manifestLocation() == null || f.dataSequenceNumber() == null) {
        return null;
      }
      removedPerManifest.merge(f.manifestLocation(), 1, Integer::sum);
    }
    List<ManifestFile> kept = new ArrayList<>(parentManifests.size() + 2);
    int dropped = 0;
    for (ManifestFile m : parentManifests) {
      Integer removed = removedPerManifest.get(m.path());
      if (removed == null) {
        if (base.formatVersion() >= 3 && m.content() == ManifestContent.DATA && m.firstRowId() == null) {
          return null; // Iceberg assigns its rows their ids when it next lists it
        }
        kept.add(m);
        continue;
      }
      if (m.addedFilesCount() == null || m.existingFilesCount() == null
          || m.addedFilesCount() + m.existingFilesCount() != removed) {
        return null;
      }
      dropped++;
    }
    if (dropped != removedPerManifest.size()) {
      return null; // a removed file named a manifest the parent does not list
    }
    if (ops instanceof dev.floe.catalog.FloeTableOperations checked) {
      // never build on a manifest that cannot be read back (once per manifest and process)
      checked.checkKept(kept.stream().map(ManifestFile::path).toList());
    }

    long snapshotId = ops.newSnapshotId();
    long sequenceNumber = base.nextSequenceNumber();
    String commitId = UUID.randomUUID().toString();
    List<String> written = new ArrayList<>();
    boolean swapped = false;
    long swaps = -1;
    try {
      ManifestFile dataManifest = null;
      if (!change.addedData().isEmpty() || !change.removedData().isEmpty()) {
        OutputFile out = ops.io().newOutputFile(ops.metadataFileLocation(FileFormat.AVRO.addExtension(commitId
            + "-m0")));
        written.add(out.location());
        dataManifest = write(ManifestFiles.write(base.formatVersion(), spec, out, snapshotId), change.addedData(),
            change.removedData());
      }
      ManifestFile deleteManifest = null;
      if (!change.addedDeletes().isEmpty() || !change.removedDeletes().isEmpty()) {
        OutputFile out = ops.io().newOutputFile(ops.metadataFileLocation(FileFormat.AVRO.addExtension(commitId
            + "-m1")));
        written.add(out.location());
        deleteManifest = write(ManifestFiles.writeDeleteManifest(base.formatVersion(), spec, out, snapshotId),
            change.addedDeletes(), change.removedDeletes());
      }

      OutputFile listFile = ops.io().newOutputFile(ops.metadataFileLocation(FileFormat.AVRO.addExtension(
          String.format(java.util.Locale.ROOT, "snap-%d-1-%s", snapshotId, commitId))));
      written.add(listFile.location());
      Long firstRowId = base.formatVersion() >= 3 ? base.nextRowId() : null;
      List<ManifestFile> listed = new ArrayList<>(kept.size() + 2);
      // New manifests first, as Iceberg lists them.
      Long nextRowId = firstRowId;
      for (ManifestFile m : new ManifestFile[] {dataManifest, deleteManifest}) {
        if (m == null) {
          continue;
        }
        Long assigned = null;
        if (nextRowId != null && m.content() == ManifestContent.DATA) {
          assigned = nextRowId;
          nextRowId += m.existingRowsCount() + m.addedRowsCount();
        }
        listed.add(asListed(m, sequenceNumber, assigned));
      }
      listed.addAll(kept);
      ManifestListWriter listWriter = ManifestLists.write(base.formatVersion(), listFile, ops.encryption(),
          snapshotId, parentId, sequenceNumber, firstRowId);
      try (listWriter) {
        if (dataManifest != null) {
          listWriter.add(dataManifest);
        }
        if (deleteManifest != null) {
          listWriter.add(deleteManifest);
        }
        listWriter.addAll(kept);
      } catch (IOException e) {
        throw new RuntimeIOException(e, "Failed to write manifest list file");
      }
      Long addedRows = firstRowId == null ? null : listWriter.nextRowId() - firstRowId;

      Snapshot snapshot = new BaseSnapshot(sequenceNumber, snapshotId, parentId, System.currentTimeMillis(),
          operation(change), summary(base, parent, spec, change), base.currentSchemaId(), listFile.location(),
          firstRowId, addedRows, null);
      TableMetadata updated = TableMetadata.buildFrom(base).setBranchSnapshot(snapshot, SnapshotRef.MAIN_BRANCH)
          .build();
      swaps = ops instanceof dev.floe.catalog.SwapCount counted ? counted.swaps() : 0;
      try {
        if (ops instanceof dev.floe.catalog.FloeTableOperations checked) {
          checked.commitChecked(base, updated); // the kept manifests were checked above
        } else {
          ops.commit(base, updated);
        }
      } catch (CommitFailedException e) {
        written.forEach(ops.io()::deleteFile);
        return null; // another committer moved the table: Iceberg's path validates against it
      }
      swapped = true;
      synchronized (lists) {
        lists.put(base.location(), new Listed(ops.current().metadataFileLocation(), snapshotId,
            List.copyOf(listed)));
      }
      return new Committed(snapshot, true, dataManifest == null ? null : dataManifest.path(),
          deleteManifest == null ? null : deleteManifest.path());
    } catch (org.apache.iceberg.exceptions.CommitStateUnknownException e) {
      throw e; // the table's pointer may name what was written: it stays
    } catch (RuntimeException | Error e) {
      if (swapped || swaps >= 0 && ops instanceof dev.floe.catalog.SwapCount counted && counted.swaps() != swaps) {
        throw e; // committed (the error came after the swap): what was written is the table's
      }
      for (String location : written) {
        try {
          ops.io().deleteFile(location);
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
  }

  /** Writes a manifest of the files a change adds and, as DELETED entries, those it removes. */
  private static <F extends ContentFile<F>> ManifestFile write(ManifestWriter<F> writer, List<F> added,
      List<F> removed) {
    try (writer) {
      added.forEach(writer::add);
      removed.forEach(f -> writer.delete(f, f.dataSequenceNumber(), f.fileSequenceNumber()));
    } catch (IOException e) {
      throw new RuntimeIOException(e, "Failed to write manifest");
    }
    return writer.toManifestFile();
  }

  /** A new manifest as the manifest list records it, and a reader of the list would see it. */
  private static ManifestFile asListed(ManifestFile m, long sequenceNumber, Long firstRowId) {
    long min = m.minSequenceNumber() == ManifestWriter.UNASSIGNED_SEQ ? sequenceNumber : m.minSequenceNumber();
    return new GenericManifestFile(m.path(), m.length(), m.partitionSpecId(), m.content(), sequenceNumber, min,
        m.snapshotId(), m.partitions(), m.keyMetadata(), m.addedFilesCount(), m.addedRowsCount(),
        m.existingFilesCount(), m.existingRowsCount(), m.deletedFilesCount(), m.deletedRowsCount(), firstRowId);
  }

  /**
   * The manifests of {@code snapshot}, current in {@code base}: those this committer listed when it
   * committed it, or read from its manifest list.
   */
  private List<ManifestFile> manifests(Table table, TableMetadata base, Snapshot snapshot) {
    synchronized (lists) {
      Listed listed = lists.get(base.location());
      if (listed != null && listed.snapshotId() == snapshot.snapshotId()
          && Objects.equals(listed.metadataLocation(), base.metadataFileLocation())) {
        return listed.manifests();
      }
    }
    return snapshot.allManifests(table.io());
  }

  /** Whether Iceberg's own commit would leave each kind of manifest unmerged. */
  private static boolean underMergeThreshold(TableMetadata base, List<ManifestFile> manifests) {
    if (!PropertyUtil.propertyAsBoolean(base.properties(), TableProperties.MANIFEST_MERGE_ENABLED,
        TableProperties.MANIFEST_MERGE_ENABLED_DEFAULT)) {
      return true;
    }
    int minCount = PropertyUtil.propertyAsInt(base.properties(), TableProperties.MANIFEST_MIN_MERGE_COUNT,
        TableProperties.MANIFEST_MIN_MERGE_COUNT_DEFAULT);
    int data = 0;
    int deletes = 0;
    for (ManifestFile m : manifests) {
      if (m.content() == ManifestContent.DATA) {
        data++;
      } else {
        deletes++;
      }
    }
    // The new manifest of each kind joins them.
    return data + 1 < minCount && deletes + 1 < minCount;
  }

  private static boolean inSpec(PartitionSpec spec, List<? extends ContentFile<?>> files) {
    for (ContentFile<?> f : files) {
      if (f.specId() != spec.specId()) {
        return false;
      }
    }
    return true;
  }

  private static List<ContentFile<?>> removed(Change change) {
    List<ContentFile<?>> out = new ArrayList<>(change.removedData());
    out.addAll(change.removedDeletes());
    return out;
  }

  /** The operation Iceberg's RowDelta records for the same change. */
  private static String operation(Change change) {
    boolean addsData = !change.addedData().isEmpty();
    boolean addsDeletes = !change.addedDeletes().isEmpty();
    boolean removesData = !change.removedData().isEmpty();
    if (addsData && !addsDeletes && !removesData && change.removedDeletes().isEmpty()) {
      return DataOperations.APPEND;
    }
    if (!addsData && (addsDeletes || removesData)) {
      return DataOperations.DELETE;
    }
    return DataOperations.OVERWRITE;
  }

  /** The snapshot summary Iceberg writes: what the change added and removed, and the table's new totals. */
  private static Map<String, String> summary(TableMetadata base, Snapshot parent, PartitionSpec spec,
      Change change) {
    SnapshotSummary.Builder b = SnapshotSummary.builder();
    b.setPartitionSummaryLimit(PropertyUtil.propertyAsInt(base.properties(),
        TableProperties.WRITE_PARTITION_SUMMARY_LIMIT, TableProperties.WRITE_PARTITION_SUMMARY_LIMIT_DEFAULT));
    change.addedData().forEach(f -> b.addedFile(spec, f));
    change.addedDeletes().forEach(f -> b.addedFile(spec, f));
    change.removedData().forEach(f -> b.deletedFile(spec, f));
    change.removedDeletes().forEach(f -> b.deletedFile(spec, f));
    Map<String, String> summary = b.build();
    Map<String, String> previous;
    if (parent == null) {
      previous = new HashMap<>();
      for (String total : List.of(SnapshotSummary.TOTAL_RECORDS_PROP, SnapshotSummary.TOTAL_FILE_SIZE_PROP,
          SnapshotSummary.TOTAL_DATA_FILES_PROP, SnapshotSummary.TOTAL_DELETE_FILES_PROP,
          SnapshotSummary.TOTAL_POS_DELETES_PROP, SnapshotSummary.TOTAL_EQ_DELETES_PROP)) {
        previous.put(total, "0");
      }
    } else {
      previous = parent.summary() == null ? Map.of() : parent.summary();
    }
    Map<String, String> out = new LinkedHashMap<>(summary);
    total(out, previous, summary, SnapshotSummary.TOTAL_RECORDS_PROP, SnapshotSummary.ADDED_RECORDS_PROP,
        SnapshotSummary.DELETED_RECORDS_PROP);
    total(out, previous, summary, SnapshotSummary.TOTAL_FILE_SIZE_PROP, SnapshotSummary.ADDED_FILE_SIZE_PROP,
        SnapshotSummary.REMOVED_FILE_SIZE_PROP);
    total(out, previous, summary, SnapshotSummary.TOTAL_DATA_FILES_PROP, SnapshotSummary.ADDED_FILES_PROP,
        SnapshotSummary.DELETED_FILES_PROP);
    total(out, previous, summary, SnapshotSummary.TOTAL_DELETE_FILES_PROP,
        SnapshotSummary.ADDED_DELETE_FILES_PROP, SnapshotSummary.REMOVED_DELETE_FILES_PROP);
    total(out, previous, summary, SnapshotSummary.TOTAL_POS_DELETES_PROP, SnapshotSummary.ADDED_POS_DELETES_PROP,
        SnapshotSummary.REMOVED_POS_DELETES_PROP);
    total(out, previous, summary, SnapshotSummary.TOTAL_EQ_DELETES_PROP, SnapshotSummary.ADDED_EQ_DELETES_PROP,
        SnapshotSummary.REMOVED_EQ_DELETES_PROP);
    out.putAll(EnvironmentContext.get());
    return Map.copyOf(out);
  }

  /** A running total: the parent's, plus what was added, less what was removed; left out if unknown. */
  private static void total(Map<String, String> out, Map<String, String> previous, Map<String, String> summary,
      String total, String added, String removed) {
    try {
      String before = previous.get(total);
      if (before == null) {
        return;
      }
      long value = Long.parseLong(before) + Long.parseLong(summary.getOrDefault(added, "0"))
          - Long.parseLong(summary.getOrDefault(removed, "0"));
      if (value >= 0) {
        out.put(total, Long.toString(value));
      }
    } catch (NumberFormatException e) {
      // an unparseable total in the parent's summary: leave it out, as Iceberg does
    }
  }
}
