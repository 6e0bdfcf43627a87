package dev.floe.write;

import dev.floe.commit.TableChange;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.InclusiveMetricsEvaluator;
import org.apache.iceberg.util.ContentFileUtil;

/**
 * Row-level conflicts for row deltas: a change that lost the race to commit because another commit
 * added deletes to a data file it deletes from is applied again on the table's current state, when the
 * rows it deletes are not rows the winner deleted. Its delete file for each such data file is replaced by
 * one holding the winner's positions and its own (one deletion vector per data file, as v3 requires; one
 * position-delete file per data file on v2), and the winner's delete files for it are removed in its
 * place. A data file the change deletes from that a rewrite (a compaction, of Floe or another engine)
 * replaced since is followed to where the rewrite moved its rows: writers never lose to compaction. It
 * does not rebase (the conflict stands, 40001) when the winner deleted one of the same rows,
 * removed a data file the change deletes from (or that it removes whole) other than by a rewrite, wrote equality
 * deletes or deletes not scoped to one file, or, for a change that adds primary keys, added data files
 * that may hold them.
 */
public final class DeleteRebase implements dev.floe.commit.Committer.Rebaser {
  /** A DuckDB connection of its own for each rebase that finds moved rows (closed after). */
  private final java.util.function.Supplier<java.sql.Connection> duck;
  private final dev.floe.read.ScanFiles files;

  /** @param duck a new DuckDB connection; @param files the engine's scan caches */
  public DeleteRebase(java.util.function.Supplier<java.sql.Connection> duck, dev.floe.read.ScanFiles files) {
    this.duck = duck;
    this.files = files;
  }

  @Override
  public Optional<TableChange> rebase(Table table, TableChange change) {
    if (change.kind() != TableChange.Kind.ROW_DELTA || change.parentId() == null) {
      return Optional.empty();
    }
    table.refresh();
    Snapshot current = table.currentSnapshot();
    List<Snapshot> since = new ArrayList<>(); // newest first
    for (Snapshot s = current; s != null && s.snapshotId() != change.parentId();
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      since.add(s);
      if (s.parentId() == null) {
        return Optional.empty(); // the change's parent is not an ancestor: the table was rolled back or replaced
      }
    }
    if (since.isEmpty()) {
      return Optional.empty();
    }
    java.util.Collections.reverse(since);
    Set<String> touched = new HashSet<>(change.validation().referenced());
    Set<String> removedWhole = new HashSet<>();
    change.removedData().forEach(d -> removedWhole.add(d.location()));
    touched.addAll(removedWhole);
    InclusiveMetricsEvaluator keys = change.validation().keys() == null ? null
        : new InclusiveMetricsEvaluator(table.schema(), change.validation().keys());
    // the file-scoped deletes of each touched data file as they stand now, starting from those the change replaces
    Map<String, Map<String, DeleteFile>> live = new LinkedHashMap<>();
    Set<String> moved = new HashSet<>();
    // touched files a rewrite (compaction) replaced since: their rows are found again where it moved them
    Map<String, DataFile> relocated = new LinkedHashMap<>();
    // the files rewrites added since that are still live, and their deletes as they stand now
    Map<String, DataFile> fresh = new LinkedHashMap<>();
    Map<String, Map<String, DeleteFile>> freshDeletes = new HashMap<>();
    for (Snapshot s : since) {
      // read with the table's partition specs (reading them from each manifest is deprecated, and logged)
      org.apache.iceberg.SnapshotChanges changes = org.apache.iceberg.SnapshotChanges.builderFor(table).snapshot(s)
          .build();
      boolean rewrite = org.apache.iceberg.DataOperations.REPLACE.equals(s.operation());
      for (DataFile d : changes.removedDataFiles()) {
        if (fresh.remove(d.location()) != null) {
          freshDeletes.remove(d.location());
          if (!rewrite) {
            return Optional.empty(); // a writer dropped a file our rows may have moved to
          }
        } else if (touched.contains(d.location())) {
          if (!rewrite) {
            return Optional.empty();
          }
          relocated.put(d.location(), d);
        }
      }
      if (rewrite) {
        // a rewrite moves rows and changes none: it adds no primary key
        for (DataFile d : changes.addedDataFiles()) {
          fresh.put(d.location(), d);
          freshDeletes.put(d.location(), new LinkedHashMap<>());
        }
      } else if (keys != null) {
        for (DataFile d : changes.addedDataFiles()) {
          if (keys.eval(d)) {
            return Optional.empty();
          }
        }
      }
      for (DeleteFile d : changes.removedDeleteFiles()) {
        String f = ContentFileUtil.referencedDataFileLocation(d);
        if (f != null && touched.contains(f)) {
          live.computeIfAbsent(f, k -> startingFrom(change, f)).remove(key(d));
        }
        if (f != null && freshDeletes.containsKey(f)) {
          freshDeletes.get(f).remove(key(d));
        }
      }
      for (DeleteFile d : changes.addedDeleteFiles()) {
        String f = d.content() == FileContent.POSITION_DELETES ? ContentFileUtil.referencedDataFileLocation(d) : null;
        if (f == null) {
          return Optional.empty(); // equality deletes, or deletes of many files: the rows cannot be told apart
        }
        if (freshDeletes.containsKey(f)) {
          freshDeletes.get(f).put(key(d), d);
        }
        if (touched.contains(f)) {
          if (removedWhole.contains(f)) {
            return Optional.empty();
          }
          moved.add(f);
          live.computeIfAbsent(f, k -> startingFrom(change, f)).put(key(d), d);
        }
      }
    }
    moved.removeAll(relocated.keySet());
    if (moved.isEmpty() && relocated.isEmpty()) {
      // Iceberg's check found deletes it could not tell apart from this change's rows (a position-delete
      // file has no column bounds, so any new one "may match" the rows read), but none is of a file this
      // change touches: it applies as it is on the current snapshot
      return Optional.of(new TableChange(change.kind(), current.snapshotId(), change.addedData(),
          change.addedDeletes(), change.removedData(), change.removedDeletes(), change.validation(), change.summary(),
          change.setProperties(), change.removedProperties(), change.written()));
    }
    BaseDeleteLoader loader = dev.floe.read.DeletionVectors.loader(table.io());
    List<DeleteFile> added = new ArrayList<>(change.addedDeletes());
    List<DeleteFile> removed = new ArrayList<>(change.removedDeletes());
    List<String> written = new ArrayList<>();
    List<String> dropped = new ArrayList<>();
    List<DataFile> removedData = new ArrayList<>(change.removedData());
    removedData.removeIf(d -> relocated.containsKey(d.location()));
    List<String> referenced = new ArrayList<>(change.validation().referenced());
    try {
      for (String f : moved) {
        List<DeleteFile> ourOld = scoped(change.removedDeletes(), f);
        List<DeleteFile> ourNew = scoped(change.addedDeletes(), f);
        if (ourNew.isEmpty()) {
          return Optional.empty();
        }
        PositionDeleteIndex before = loader.loadPositionDeletes(ourOld, f);
        PositionDeleteIndex ours = loader.loadPositionDeletes(ourNew, f);
        List<DeleteFile> winners = new ArrayList<>(live.get(f).values());
        PositionDeleteIndex now = loader.loadPositionDeletes(winners, f);
        List<Long> mine = new ArrayList<>();
        boolean[] same = new boolean[1];
        ours.forEach(pos -> {
          if (!before.isDeleted(pos)) {
            mine.add(pos);
            same[0] |= now.isDeleted(pos);
          }
        });
        if (same[0]) {
          return Optional.empty(); // the winner deleted a row this change deletes: first committer wins
        }
        long[] positions = union(mine.stream().mapToLong(Long::longValue).toArray(), now);
        DeleteFile template = ourNew.get(0);
        DeleteFile rebased = template.format() == FileFormat.PUFFIN
            ? DeltaWriter.deletionVectorInJvm(table, f, template.specId(), template.partition(), positions)
            : DeltaWriter.positionDeletesInJvm(table, f, template.specId(), template.partition(), positions);
        written.add(rebased.location());
        added.removeAll(ourNew);
        added.add(rebased);
        removed.removeAll(ourOld);
        removed.addAll(winners);
        ourNew.forEach(d -> dropped.add(d.location()));
      }
      if (!relocated.isEmpty() && !relocate(table, change, loader, relocated, fresh, freshDeletes, added, removed,
          written, dropped, referenced)) {
        written.forEach(table.io()::deleteFile);
        return Optional.empty();
      }
    } catch (RuntimeException e) {
      written.forEach(table.io()::deleteFile);
      throw e;
    }
    // the change's own files it no longer adds (a deletion vector's Puffin file only when no other of its
    // vectors is still added)
    Set<String> stillAdded = new HashSet<>();
    added.forEach(d -> stillAdded.add(d.location()));
    List<String> keep = new ArrayList<>();
    for (String w : change.written()) {
      if (dropped.contains(w) && !stillAdded.contains(w)) {
        table.io().deleteFile(w);
      } else {
        keep.add(w);
      }
    }
    keep.addAll(written);
    TableChange.Validation v = change.validation();
    return Optional.of(new TableChange(change.kind(), current.snapshotId(), change.addedData(), added,
        removedData, dedupe(removed), new TableChange.Validation(v.read(), v.keys(), v.untouched(), referenced),
        change.summary(), change.setProperties(), change.removedProperties(), keep));
  }

  /**
   * The change's deletes of files a rewrite replaced since, made deletes of the rows where the rewrite
   * put them: the rows it deleted by position (every row it saw, for a file it removes whole) are found
   * by value among the live rows of the files rewrites added ({@link MovedRows}), and each such file gets
   * a delete file holding those positions and its current ones, in place of its current ones. The
   * change's own deletes of the replaced files go. False when a row is no longer there (a writer deleted
   * it after the rewrite moved it: first committer wins).
   */
  private boolean relocate(Table table, TableChange change, BaseDeleteLoader loader,
      Map<String, DataFile> relocated, Map<String, DataFile> fresh, Map<String, Map<String, DeleteFile>> freshDeletes,
      List<DeleteFile> added, List<DeleteFile> removed, List<String> written, List<String> dropped,
      List<String> referenced) {
    Set<String> removedWhole = new HashSet<>();
    change.removedData().forEach(d -> removedWhole.add(d.location()));
    Map<DataFile, long[]> sources = new LinkedHashMap<>();
    for (DataFile f : relocated.values()) {
      String l = f.location();
      List<DeleteFile> ourOld = scoped(change.removedDeletes(), l);
      List<DeleteFile> ourNew = scoped(change.addedDeletes(), l);
      PositionDeleteIndex before = loader.loadPositionDeletes(ourOld, l);
      List<Long> mine = new ArrayList<>();
      if (removedWhole.contains(l)) {
        for (long pos = 0; pos < f.recordCount(); pos++) {
          if (!before.isDeleted(pos)) {
            mine.add(pos);
          }
        }
      } else {
        loader.loadPositionDeletes(ourNew, l).forEach(pos -> {
          if (!before.isDeleted(pos)) {
            mine.add(pos);
          }
        });
      }
      if (!mine.isEmpty()) {
        sources.put(f, mine.stream().mapToLong(Long::longValue).toArray());
      }
      added.removeAll(ourNew);
      removed.removeAll(ourOld); // the rewrite removed them with the file
      ourNew.forEach(d -> dropped.add(d.location()));
      referenced.remove(l);
    }
    if (sources.isEmpty()) {
      return true;
    }
    Map<String, PositionDeleteIndex> now = new HashMap<>();
    for (String g : fresh.keySet()) {
      now.put(g, loader.loadPositionDeletes(List.copyOf(freshDeletes.get(g).values()), g));
    }
    Optional<Map<String, long[]>> found;
    try (java.sql.Connection c = duck.get()) {
      found = MovedRows.find(c, files, table, sources, List.copyOf(fresh.values()), now, false);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
    if (found.isEmpty()) {
      return false;
    }
    for (Map.Entry<String, long[]> e : found.get().entrySet()) {
      DataFile g = fresh.get(e.getKey());
      long[] positions = union(e.getValue(), now.get(g.location()));
      DeleteFile rebased = DeltaWriter.deletesOf(table, g, positions);
      written.add(rebased.location());
      added.add(rebased);
      removed.addAll(freshDeletes.get(g.location()).values());
      referenced.add(g.location());
    }
    return true;
  }

  /** The positions of both, ascending, each once. */
  private static long[] union(long[] mine, PositionDeleteIndex now) {
    long[][] all = {java.util.Arrays.copyOf(mine, Math.max(16, mine.length * 2))};
    int[] n = {mine.length};
    now.forEach(pos -> {
      if (n[0] == all[0].length) {
        all[0] = java.util.Arrays.copyOf(all[0], n[0] * 2);
      }
      all[0][n[0]++] = pos;
    });
    long[] a = all[0];
    java.util.Arrays.sort(a, 0, n[0]);
    int distinct = 0;
    for (int i = 0; i < n[0]; i++) {
      if (distinct == 0 || a[i] != a[distinct - 1]) {
        a[distinct++] = a[i];
      }
    }
    return java.util.Arrays.copyOf(a, distinct);
  }

  /** The deletes of data file {@code f} the change replaces: where the data file's deletes stood for it. */
  private static Map<String, DeleteFile> startingFrom(TableChange change, String f) {
    Map<String, DeleteFile> out = new LinkedHashMap<>();
    for (DeleteFile d : scoped(change.removedDeletes(), f)) {
      out.put(key(d), d);
    }
    return out;
  }

  private static List<DeleteFile> scoped(List<DeleteFile> deletes, String f) {
    List<DeleteFile> out = new ArrayList<>();
    for (DeleteFile d : deletes) {
      if (f.equals(ContentFileUtil.referencedDataFileLocation(d))) {
        out.add(d);
      }
    }
    return out;
  }

  private static String key(DeleteFile d) {
    return d.location() + "@" + d.contentOffset();
  }

  private static List<DeleteFile> dedupe(List<DeleteFile> files) {
    Map<String, DeleteFile> out = new LinkedHashMap<>();
    for (DeleteFile d : files) {
      out.putIfAbsent(key(d), d);
    }
    return new ArrayList<>(out.values());
  }
}
