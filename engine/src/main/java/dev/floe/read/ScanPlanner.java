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
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.FloeCommit;
import org.apache.iceberg.FloeDeleteIndex;
import org.apache.iceberg.FloeFiles;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
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

  /** Every file of a snapshot: its data files as tasks (with the deletes that apply), and its live delete files. */
  private record Planned(List<FileScanTask> tasks, List<DeleteFile> deletes) {}

  private final Map<Key, Planned> cache = new LinkedHashMap<>(16, 0.75f, true);
  private int cachedTasks;
  /** The live files of each manifest read, by manifest location (a manifest never changes). */
  private final Map<String, List<ContentFile<?>>> manifests = new LinkedHashMap<>(16, 0.75f, true);
  /** Checks that metadata files are as written before they are decoded (a no-op without digests). */
  private final java.util.function.Consumer<java.util.Collection<String>> verify;

  public ScanPlanner() {
    this(locations -> { });
  }

  /** @param verify checks, once per file, that manifests and manifest lists are as written */
  public ScanPlanner(java.util.function.Consumer<java.util.Collection<String>> verify) {
    this.verify = verify;
  }
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
      if ((partition == null || mayMatch(partition, file)) && metrics.eval(file)) {
        kept.add(task);
      }
    }
    return kept;
  }

  /**
   * Whether a file's partition may hold matching rows. A file written before its partition's source column
   * was widened (int to bigint, float to double) holds the narrower value, which the evaluator of the
   * widened type refuses: such a file is kept, as an unpruned scan would read it.
   */
  private static boolean mayMatch(Evaluator partition, DataFile file) {
    try {
      return partition.eval(file.partition());
    } catch (IllegalArgumentException | ClassCastException e) {
      return true;
    }
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
      Planned cached = cache.get(key);
      if (cached != null) {
        return cached.tasks();
      }
    }
    Planned planned = planFiles(table, snapshot);
    remember(key, planned);
    return planned.tasks();
  }

  private synchronized void remember(Key key, Planned planned) {
    Planned previous = cache.put(key, planned);
    cachedTasks += planned.tasks().size() - (previous == null ? 0 : previous.tasks().size());
    var it = cache.entrySet().iterator();
    while (cachedTasks > MAX_CACHED_TASKS && it.hasNext()) {
      var eldest = it.next();
      if (eldest.getKey().equals(key)) {
        continue;
      }
      cachedTasks -= eldest.getValue().tasks().size();
      it.remove();
    }
  }

  /**
   * Plans a snapshot this process has just committed from its parent's plan and the commit's change,
   * so that the next statement does not read back the manifest list and manifests the commit wrote.
   * The files the commit added get the snapshot's sequence numbers, as a manifest reader would give
   * them and the manifest that lists them, as files read from manifests carry it, so that a later
   * commit can tell which manifests its removals empty; which delete files apply where is decided
   * again by Iceberg's index. Does nothing unless Floe wrote the snapshot ({@link FloeCommit}, which
   * leaves the parent's other manifests as they were), it is the direct child of {@code parentId}
   * (null: the table's first snapshot) and the parent's plan is cached; the snapshot is then planned
   * from its manifests when first read.
   *
   * <p>The change must be exactly what the commit did: data and delete files added, and those removed
   * (deletion vectors are told apart by their offset in the shared Puffin file).
   */
  public void committed(Table table, Long parentId, FloeCommit.Committed committed, FloeCommit.Change change) {
    Snapshot snapshot = committed.snapshot();
    if (!committed.byFloe() || snapshot == null || !java.util.Objects.equals(snapshot.parentId(), parentId)) {
      return;
    }
    String uuid = table.uuid().toString();
    Planned parent;
    synchronized (this) {
      parent = parentId == null ? new Planned(List.of(), List.of()) : cache.get(new Key(uuid, parentId));
    }
    if (parent == null) {
      return;
    }
    long sequence = snapshot.sequenceNumber();
    java.util.Set<String> goneData = new java.util.HashSet<>();
    change.removedData().forEach(f -> goneData.add(f.location()));
    java.util.Set<String> goneDeletes = new java.util.HashSet<>();
    change.removedDeletes().forEach(f -> goneDeletes.add(identity(f)));
    List<DeleteFile> deletes = new ArrayList<>();
    for (DeleteFile d : parent.deletes()) {
      if (!goneDeletes.contains(identity(d))) {
        deletes.add(d);
      }
    }
    change.addedDeletes().forEach(d -> deletes.add(FloeFiles.committed(d, sequence, committed.deleteManifest())));
    List<DataFile> data = new ArrayList<>();
    for (FileScanTask t : parent.tasks()) {
      if (!goneData.contains(t.file().location())) {
        data.add(t.file());
      }
    }
    change.addedData().forEach(f -> data.add(FloeFiles.committed(f, sequence, committed.dataManifest())));
    Planned planned = tasks(table, data, deletes);
    assert disagreement(planned, planFiles(table, snapshot)) == null : "the plan of snapshot "
        + snapshot.snapshotId() + " derived from its commit differs from its manifests: "
        + disagreement(planned, planFiles(table, snapshot));
    remember(new Key(uuid, snapshot.snapshotId()), planned);
  }

  /**
   * How a plan derived from a commit differs from the plan read from the snapshot's manifests (null: it
   * does not): the files, sequence numbers and deletes must be the same, and each file listed where the
   * derived plan says.
   */
  private static String disagreement(Planned derived, Planned read) {
    Map<String, String> d = describe(derived.tasks());
    Map<String, String> r = describe(read.tasks());
    if (!d.equals(r)) {
      return "derived " + d + ", read " + r;
    }
    Map<String, String> manifests = new HashMap<>();
    for (FileScanTask t : read.tasks()) {
      manifests.put(t.file().location(), t.file().manifestLocation());
    }
    read.deletes().forEach(f -> manifests.put(identity(f), f.manifestLocation()));
    for (FileScanTask t : derived.tasks()) {
      String m = t.file().manifestLocation();
      if (m != null && !m.equals(manifests.get(t.file().location()))) {
        return t.file().location() + " is listed in " + manifests.get(t.file().location()) + ", not " + m;
      }
    }
    for (DeleteFile f : derived.deletes()) {
      if (f.manifestLocation() != null && !f.manifestLocation().equals(manifests.get(identity(f)))) {
        return identity(f) + " is listed in " + manifests.get(identity(f)) + ", not " + f.manifestLocation();
      }
    }
    return null;
  }

  /** What a plan says, for comparing two: each data file with its sequence number and the deletes that apply. */
  private static Map<String, String> describe(List<FileScanTask> tasks) {
    Map<String, String> out = new java.util.TreeMap<>();
    for (FileScanTask t : tasks) {
      List<String> deletes = new ArrayList<>();
      for (DeleteFile d : t.deletes()) {
        deletes.add(identity(d) + "#" + d.dataSequenceNumber());
      }
      java.util.Collections.sort(deletes);
      out.put(t.file().location(), t.file().dataSequenceNumber() + " " + t.file().recordCount() + " " + deletes);
    }
    return out;
  }

  /** A delete file's identity: its location and, for deletion vectors, which share Puffin files, its offset. */
  private static String identity(DeleteFile f) {
    return f.location() + "@" + f.contentOffset();
  }

  /** Scan tasks for the live data files of a snapshot, each with the live delete files that apply to it. */
  private static Planned tasks(Table table, List<DataFile> data, List<DeleteFile> deletes) {
    Map<Integer, PartitionSpec> specs = table.specs();
    FloeDeleteIndex index = FloeDeleteIndex.of(deletes, specs);
    String schema = SchemaParser.toJson(table.schema());
    Map<Integer, String> specJson = new HashMap<>();
    ResidualEvaluator residual = ResidualEvaluator.unpartitioned(Expressions.alwaysTrue());
    List<FileScanTask> tasks = new ArrayList<>(data.size());
    for (DataFile file : data) {
      String spec = specJson.computeIfAbsent(file.specId(), id -> PartitionSpecParser.toJson(specs.get(id)));
      tasks.add(new BaseFileScanTask(file, index.forDataFile(file), schema, spec, residual));
    }
    return new Planned(List.copyOf(tasks), List.copyOf(deletes));
  }

  /**
   * Plans every file of a snapshot from its manifests. Manifests are immutable, so the live files of
   * each are decoded once and kept ({@link #manifestFiles}); a snapshot that adds one manifest to a
   * hundred costs one manifest read. Which delete files apply to which data file is decided by
   * Iceberg's own index.
   */
  private Planned planFiles(Table table, Snapshot snapshot) {
    try {
      Map<Integer, PartitionSpec> specs = table.specs();
      if (snapshot.manifestListLocation() != null) {
        verify.accept(List.of(snapshot.manifestListLocation()));
      }
      List<DeleteFile> deletes = new ArrayList<>();
      for (ManifestFile m : snapshot.deleteManifests(table.io())) {
        for (ContentFile<?> f : manifestFiles(table, m, specs)) {
          deletes.add((DeleteFile) f);
        }
      }
      List<DataFile> data = new ArrayList<>();
      for (ManifestFile m : snapshot.dataManifests(table.io())) {
        for (ContentFile<?> f : manifestFiles(table, m, specs)) {
          data.add((DataFile) f);
        }
      }
      return tasks(table, data, deletes);
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
    verify.accept(List.of(manifest.path()));
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
