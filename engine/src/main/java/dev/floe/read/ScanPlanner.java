package dev.floe.read;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.BaseFileScanTask;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FloeDeleteIndex;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Evaluator;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.InclusiveMetricsEvaluator;
import org.apache.iceberg.expressions.Projections;
import org.apache.iceberg.expressions.ResidualEvaluator;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Iceberg scan planning with a cache of each snapshot's full file list. A snapshot is immutable, so its
 * planned tasks (data files with their column bounds and the delete files that apply to them) are
 * computed once, from manifests that are each decoded once, then every query prunes them in memory
 * with Iceberg's own evaluators:
 * partition values through the spec's inclusive projection, and column bounds through
 * {@link InclusiveMetricsEvaluator}. That keeps manifest I/O off the path of repeated queries.
 */
public final class ScanPlanner {
  private static final int MAX_CACHED_TASKS = 200_000;

  private record Key(String tableUuid, long snapshotId) {}

  private final Map<Key, List<FileScanTask>> cache = new LinkedHashMap<>(16, 0.75f, true);
  private int cachedTasks;
  /** The live files of each manifest read, by manifest location (a manifest never changes). */
  private final Map<String, List<ContentFile<?>>> manifests = new LinkedHashMap<>(16, 0.75f, true);
  private int cachedManifestFiles;

  /** The tasks of {@code snapshot} whose files may hold rows matching {@code filter}. */
  public List<FileScanTask> plan(Table table, Snapshot snapshot, Schema schema, Expression filter) {
    List<FileScanTask> all = allTasks(table, snapshot);
    if (filter == null || filter.equals(Expressions.alwaysTrue())) {
      return all;
    }
    InclusiveMetricsEvaluator metrics;
    try {
      metrics = new InclusiveMetricsEvaluator(schema, filter, true);
    } catch (ValidationException e) {
      return all; // the filter names a column this schema does not have: no pruning
    }
    Map<Integer, Evaluator> partitions = new HashMap<>();
    List<FileScanTask> kept = new ArrayList<>();
    for (FileScanTask task : all) {
      DataFile file = task.file();
      Evaluator partition = partitions.computeIfAbsent(file.specId(), id -> partitionEvaluator(table, id, filter));
      if ((partition == null || partition.eval(file.partition())) && metrics.eval(file)) {
        kept.add(task);
      }
    }
    return kept;
  }

  private static Evaluator partitionEvaluator(Table table, int specId, Expression filter) {
    PartitionSpec spec = table.specs().get(specId);
    if (spec == null || spec.isUnpartitioned()) {
      return null;
    }
    try {
      return new Evaluator(spec.partitionType(), Projections.inclusive(spec, true).project(filter), true);
    } catch (ValidationException | IllegalArgumentException e) {
      return null; // cannot project (e.g. the source column was dropped): keep every file of this spec
    }
  }

  private List<FileScanTask> allTasks(Table table, Snapshot snapshot) {
    Key key = new Key(table.uuid().toString(), snapshot.snapshotId());
    synchronized (this) {
      List<FileScanTask> cached = cache.get(key);
      if (cached != null) {
        return cached;
      }
    }
    List<FileScanTask> tasks = planFiles(table, snapshot);
    synchronized (this) {
      if (cache.put(key, tasks) == null) {
        cachedTasks += tasks.size();
      }
      var it = cache.entrySet().iterator();
      while (cachedTasks > MAX_CACHED_TASKS && it.hasNext()) {
        var eldest = it.next();
        if (eldest.getKey().equals(key)) {
          continue;
        }
        cachedTasks -= eldest.getValue().size();
        it.remove();
      }
    }
    return tasks;
  }

  /**
   * Plans every file of a snapshot from its manifests. Manifests are immutable, so the live files of
   * each are decoded once and kept ({@link #manifestFiles}); a snapshot that adds one manifest to a
   * hundred costs one manifest read. Which delete files apply to which data file is decided by
   * Iceberg's own index.
   */
  private List<FileScanTask> planFiles(Table table, Snapshot snapshot) {
    try {
      Map<Integer, PartitionSpec> specs = table.specs();
      List<DeleteFile> deletes = new ArrayList<>();
      for (ManifestFile m : snapshot.deleteManifests(table.io())) {
        for (ContentFile<?> f : manifestFiles(table, m, specs)) {
          deletes.add((DeleteFile) f);
        }
      }
      FloeDeleteIndex index = FloeDeleteIndex.of(deletes, specs);
      String schema = SchemaParser.toJson(table.schema());
      Map<Integer, String> specJson = new HashMap<>();
      ResidualEvaluator residual = ResidualEvaluator.unpartitioned(Expressions.alwaysTrue());
      List<FileScanTask> tasks = new ArrayList<>();
      for (ManifestFile m : snapshot.dataManifests(table.io())) {
        for (ContentFile<?> f : manifestFiles(table, m, specs)) {
          DataFile file = (DataFile) f;
          String spec = specJson.computeIfAbsent(file.specId(), id -> PartitionSpecParser.toJson(specs.get(id)));
          tasks.add(new BaseFileScanTask(file, index.forDataFile(file), schema, spec, residual));
        }
      }
      return List.copyOf(tasks);
    } catch (NotFoundException | UncheckedIOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot plan a scan of table " + table.name()
          + ": a metadata file is missing or unreadable: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      if (e instanceof FloeException) {
        throw e;
      }
      throw new FloeException(SqlState.DATA_CORRUPTED, "cannot plan a scan of table " + table.name()
          + ": a manifest is corrupt or unreadable: " + e.getMessage(), e);
    }
  }

  /** The live files of a manifest (data or delete files, with their stats and sequence numbers). */
  private List<ContentFile<?>> manifestFiles(Table table, ManifestFile manifest, Map<Integer, PartitionSpec> specs) {
    String key = manifest.path();
    synchronized (this) {
      List<ContentFile<?>> cached = manifests.get(key);
      if (cached != null) {
        return cached;
      }
    }
    List<ContentFile<?>> files = new ArrayList<>();
    try (CloseableIterable<? extends ContentFile<?>> reader = manifest.content() == ManifestContent.DATA
        ? ManifestFiles.read(manifest, table.io(), specs)
        : ManifestFiles.readDeleteManifest(manifest, table.io(), specs)) {
      for (ContentFile<?> f : reader) {
        files.add(f);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<ContentFile<?>> result = List.copyOf(files);
    synchronized (this) {
      if (manifests.put(key, result) == null) {
        cachedManifestFiles += result.size();
      }
      var it = manifests.entrySet().iterator();
      while (cachedManifestFiles > MAX_CACHED_TASKS && it.hasNext()) {
        var eldest = it.next();
        if (eldest.getKey().equals(key)) {
          continue;
        }
        cachedManifestFiles -= eldest.getValue().size();
        it.remove();
      }
    }
    return result;
  }
}
