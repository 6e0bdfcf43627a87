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
import org.apache.iceberg.DataFile;
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
import org.apache.iceberg.io.CloseableIterable;

/**
 * Iceberg scan planning with a cache of each snapshot's full file list. A snapshot is immutable, so its
 * planned tasks (data files with their column bounds and the delete files that apply to them) are
 * computed once by Iceberg, then every query prunes them in memory with Iceberg's own evaluators:
 * partition values through the spec's inclusive projection, and column bounds through
 * {@link InclusiveMetricsEvaluator}. That keeps manifest I/O off the path of repeated queries.
 */
public final class ScanPlanner {
  private static final int MAX_CACHED_TASKS = 200_000;

  private record Key(String tableUuid, long snapshotId) {}

  private final Map<Key, List<FileScanTask>> cache = new LinkedHashMap<>(16, 0.75f, true);
  private int cachedTasks;

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

  private static List<FileScanTask> planFiles(Table table, Snapshot snapshot) {
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> files =
        table.newScan().useSnapshot(snapshot.snapshotId()).includeColumnStats().planFiles()) {
      for (FileScanTask t : files) {
        tasks.add(t);
      }
    } catch (NotFoundException | UncheckedIOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot plan a scan of table " + table.name()
          + ": a metadata file is missing or unreadable: " + e.getMessage(), e);
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot plan a scan of table " + table.name() + ": "
          + e.getMessage(), e);
    } catch (RuntimeException e) {
      if (e instanceof FloeException) {
        throw e;
      }
      throw new FloeException(SqlState.DATA_CORRUPTED, "cannot plan a scan of table " + table.name()
          + ": a manifest is corrupt or unreadable: " + e.getMessage(), e);
    }
    return List.copyOf(tasks);
  }
}
