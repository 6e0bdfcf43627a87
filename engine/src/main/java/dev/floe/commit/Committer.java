package dev.floe.commit;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.FileDigests;
import dev.floe.catalog.FloeCatalog;
import dev.floe.catalog.FloeTableOperations;
import dev.floe.catalog.SwapCount;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.iceberg.BaseTransaction;
import org.apache.iceberg.FloeCommit;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.FileIO;

/**
 * Every change to a table's rows or properties outside DDL is committed here, one engine's one
 * committer. A statement, a tail's seal, a compaction or a transaction block describes its change as a
 * {@link TableChange}; the committer
 *
 * <ol>
 *   <li>takes the table's commit lock ({@link #lock}; a block takes its tables' locks in name order),
 *       so that this process's committers take turns and Iceberg's retries are left for races with
 *       other processes;
 *   <li>commits the change by Floe's own path ({@link FloeCommit}) when nothing was committed since
 *       its parent and the change is an append or row delta of files only, or else by Iceberg's
 *       operation of the change's kind, validated against everything committed since its parent
 *       ({@link TableChange.Validation});
 *   <li>tells the scan planner the new snapshot and the change ({@link Planner}), so it plans the
 *       snapshot without reading back what the commit wrote; and a transaction block's private copy of
 *       the table what the change must be validated against at the block's COMMIT
 *       ({@link StagingOperations});
 *   <li>on failure deletes the files the change wrote ({@link TableChange#written}) and raises the
 *       error, a conflict mapped here and only here to 40001 with PostgreSQL's words.
 * </ol>
 *
 * <p><b>The contract.</b> When a commit method returns, the change is durable and visible: every file
 * it names and its metadata file were fsynced before the catalog swap ({@code catalog.Durable}), and the
 * swap is a SQLite transaction with synchronous=FULL. It returns the table's snapshot after the change
 * ({@link Committed}). When it throws, the change did not happen and left nothing behind: no metadata
 * version, and neither the files the committer wrote (manifests, lists, metadata files) nor the
 * change's written files. Conflicts ({@link ValidationException}, {@link CommitFailedException} once
 * Iceberg's retries are spent, a concurrent drop of a block's table) are {@link SqlState#SERIALIZATION_FAILURE}
 * "could not serialize access due to concurrent update".
 *
 * <p><b>State unknown.</b> One failure is different: the SQLite COMMIT of the pointer swap itself
 * failing, or a rollback of the swap failing (see {@code catalog.PointerSwap}: SQLite may have
 * logged the commit before it reported the error). The new pointer may then be durable, naming every
 * file the change wrote. Iceberg's {@link CommitStateUnknownException} carries it through Iceberg's
 * commit loop, which cleans nothing up for it, and the committer raises
 * {@link SqlState#TRANSACTION_RESOLUTION_UNKNOWN} (08007) and deletes nothing; reading the table tells
 * whether the change is in it. Every other error of the swap happens before SQLite's COMMIT and means
 * "not swapped", so the new metadata file and the change's files go. An error raised after a swap that
 * happened (Iceberg refreshing the table after its commit, say) does not undo it: the committer sees
 * from the operations' swap count ({@link SwapCount}) that the pointer moved, keeps every file and
 * returns the table's snapshot.
 *
 * <p><b>What later work fits here.</b> A change is a value with its parent and its validation, so the
 * committer can apply it again on a newer state (a rebase after a row-level conflict check), apply
 * several statements' changes in one swap (group commit), or hold a keyed write's changes for one
 * commit per seal window, without a second commit path. {@link #commit(TableIdentifier, Table, Function)}
 * describes a change under the lock, from the state it will be applied on.
 *
 * <p><b>What does not come here</b>: metadata-only catalog operations, which change no rows and take
 * {@link #lock} themselves: DDL (schema, partitioning, sort order, location and property changes,
 * {@code exec.Ddl}), snapshot expiry ({@code exec.Maintenance.reclaim}, {@code tail.Published.reclaim}),
 * repointing a damaged table ({@code exec.MetadataRepair}), and creating, registering, renaming and
 * dropping tables in the catalog.
 *
 * <p>{@link FloeCommit}'s memory of the manifests it last listed per table is this committer's (one
 * per engine), not the process's.
 */
public final class Committer {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Committer.class);
  static final String STATEMENT_HINT = "Retry the statement: another commit changed the rows it read.";
  private static final String BLOCK_HINT =
      "Retry the transaction: another transaction changed what this one read or wrote.";

  /** What the committer tells after each commit of files (the scan planner: {@code ScanPlanner.committed}). */
  @FunctionalInterface
  public interface Planner {
    void committed(Table table, Long parentId, FloeCommit.Committed committed, FloeCommit.Change change);
  }

  /**
   * Applies a row delta that failed validation again on the table's current state when only its delete
   * files collided with the winner's and none of its rows did ({@code write.DeleteRebase}): row-level
   * conflicts instead of file-level ones.
   */
  @FunctionalInterface
  public interface Rebaser {
    /**
     * The change rebased on {@code table}'s current state (it wrote the delete files that takes, and
     * deleted its own it no longer names), or empty when the conflict stands.
     */
    Optional<TableChange> rebase(Table table, TableChange change);
  }

  /** How many times a change is rebased before its conflict stands (each time another commit won). */
  static final int REBASES = 4;

  private final FloeCatalog catalog;
  private final Planner planner;
  private final Rebaser rebaser;
  private final Runnable beforeCommit;
  private final FloeCommit floe = new FloeCommit();
  private final Map<TableIdentifier, Object> locks = new ConcurrentHashMap<>();
  private final GroupCommit groups = new GroupCommit(this);

  /**
   * @param catalog where a transaction block's tables swap their pointers together
   * @param planner told every committed change
   * @param beforeCommit run on the committing thread before each commit takes its lock (null: nothing);
   *     tests make commits overlap with it ({@code FloeConfig.beforeCommit})
   */
  public Committer(FloeCatalog catalog, Planner planner, Runnable beforeCommit) {
    this(catalog, planner, beforeCommit, null);
  }

  /** @param rebaser what rebases a row delta that lost a race on a file only (null: none does) */
  public Committer(FloeCatalog catalog, Planner planner, Runnable beforeCommit, Rebaser rebaser) {
    this.catalog = catalog;
    this.planner = planner;
    this.beforeCommit = beforeCommit;
    this.rebaser = rebaser;
  }

  /**
   * The monitor that serialises this process's commits to a table: held by every commit here, and by
   * the metadata-only catalog operations that change the table (DDL, expiry, repair).
   */
  public Object lock(TableIdentifier id) {
    return locks.computeIfAbsent(id, k -> new Object());
  }

  /**
   * Commits {@code change} to {@code table} (named {@code id}; null for a table outside the catalog,
   * such as a log's published table, whose one writer serialises its commits itself). An append or row
   * delta of files alone that finds the table's lock taken may share its snapshot with the other
   * statements waiting for it ({@link GroupCommit}): it is still validated, and fails, alone.
   *
   * @throws FloeException 40001 on a conflict, 08007 when the outcome is unknown; any other error as it
   *     came. In every case but 08007 the change left nothing behind
   */
  public Committed commit(TableIdentifier id, Table table, TableChange change) {
    if (id != null && GroupCommit.groupable(table, change)) {
      runHook();
      return groups.commit(id, table, change); // with the statements waiting for the lock with it
    }
    return commit(id, table, t -> change);
  }

  /**
   * Commits the change {@code describe} gives for the table as it is under the lock (TRUNCATE removes
   * every file the table has then). {@code describe} writes no file: what it describes is deleted on
   * failure only once described.
   */
  public Committed commit(TableIdentifier id, Table table, Function<Table, TableChange> describe) {
    runHook();
    if (id == null) {
      return commitLocked(table, describe.apply(table));
    }
    synchronized (lock(id)) {
      return commitLocked(table, describe.apply(table));
    }
  }

  Committed commitLocked(Table table, TableChange change) {
    for (int rebases = 0; ; rebases++) {
      try {
        return commitOnce(table, change);
      } catch (Rebase r) {
        if (rebases >= REBASES) {
          throw failed(table, change, r.conflict, STATEMENT_HINT);
        }
        change = r.rebased;
      }
    }
  }

  /** A change that lost the race on files only, rebased: commit it again. */
  private static final class Rebase extends RuntimeException {
    final TableChange rebased;
    final RuntimeException conflict;

    Rebase(TableChange rebased, RuntimeException conflict) {
      super(null, null, false, false);
      this.rebased = rebased;
      this.conflict = conflict;
    }
  }

  /** The change rebased after {@code e}, when {@code e} is a validation failure a rebase may resolve. */
  Optional<TableChange> rebased(Table table, TableChange change, RuntimeException e) {
    if (rebaser == null || !(e instanceof ValidationException) || change.kind() != TableChange.Kind.ROW_DELTA) {
      return Optional.empty();
    }
    try {
      return rebaser.rebase(table, change);
    } catch (RuntimeException failed) {
      e.addSuppressed(failed);
      return Optional.empty();
    }
  }

  private Committed commitOnce(Table table, TableChange change) {
    if (change.isEmpty()) {
      return new Committed(table.currentSnapshot(), Committed.How.NOTHING);
    }
    TableOperations ops = table instanceof HasTableOperations h ? h.operations() : null;
    long swaps = swaps(ops);
    Long parentId = change.parentId();
    if (change.kind() == TableChange.Kind.APPEND) {
      Snapshot current = table.currentSnapshot(); // an append applies to whatever the table holds
      parentId = current == null ? null : current.snapshotId();
    }
    FloeCommit.Change files = change.changesFiles() ? change.files() : null;
    FloeCommit.Committed done = null;
    boolean byFloe = files != null && floePath(change);
    try {
      if (byFloe) {
        done = floe.tryCommit(table, parentId, files);
        byFloe = done != null;
      }
      if (done == null) {
        done = FloeCommit.Committed.byIceberg(IcebergChange.commit(table, change));
      }
    } catch (RuntimeException e) {
      if (!swapped(ops, swaps)) {
        Optional<TableChange> rebased = rebased(table, change, e);
        if (rebased.isPresent()) {
          throw new Rebase(rebased.get(), e);
        }
        throw failed(table, change, e, STATEMENT_HINT);
      }
      // The pointer moved: the change is the table's. Only what follows the swap failed.
      LOG.warn("Committed to {}, then failed: {}", table.name(), e.getMessage(), e);
      done = FloeCommit.Committed.byIceberg(table.currentSnapshot()); // the planner reads it back
    }
    if (files != null) {
      planner.committed(table, parentId, done, files);
    }
    if (ops instanceof StagingOperations staging) {
      staging.staged(change.validation());
    }
    return new Committed(done.snapshot(), byFloe ? Committed.How.FLOE : Committed.How.ICEBERG);
  }

  /**
   * Whether Floe's own commit may take the change: files only (it writes no summary properties or
   * table properties), in the operations it records as Iceberg would.
   */
  private static boolean floePath(TableChange change) {
    return (change.kind() == TableChange.Kind.APPEND || change.kind() == TableChange.Kind.ROW_DELTA)
        && change.summary().isEmpty() && change.setProperties().isEmpty() && change.removedProperties().isEmpty();
  }

  /**
   * Creates a table with {@code change} as its first snapshot (CREATE TABLE AS): {@code create} is the
   * catalog's create-table transaction, committed here with the change in it.
   *
   * @throws org.apache.iceberg.exceptions.AlreadyExistsException if the name was taken meanwhile (the
   *     change's files are gone)
   */
  public Committed create(TableIdentifier id, Transaction create, TableChange change) {
    runHook();
    synchronized (lock(id)) {
      TableOperations ops = create instanceof BaseTransaction b ? b.underlyingOps() : null;
      long swaps = swaps(ops);
      try {
        IcebergChange.stage(create, change);
        create.commitTransaction();
      } catch (RuntimeException e) {
        if (!swapped(ops, swaps)) {
          throw failed(create.table(), change, e, STATEMENT_HINT);
        }
        LOG.warn("Created {}, then failed: {}", id, e.getMessage(), e);
      }
      return new Committed(create.table().currentSnapshot(), change.makesSnapshot() ? Committed.How.ICEBERG
          : Committed.How.NOTHING);
    }
  }

  // ------------------------------------------------------------------ transaction blocks

  /**
   * Commits what a transaction block wrote to {@code tables}, all or nothing: their commit locks taken
   * in name order (so two blocks cannot deadlock), each table's change applied to its state now, and
   * every pointer moved in one SQLite transaction with the digests of the files the block wrote
   * ({@code digests}) and of those written here. A table the block alone wrote since its snapshot, by
   * one statement, gets that statement's snapshot as it stands; any other gets the block's changes
   * folded into one Iceberg row delta, validated against everything committed since the block's
   * snapshot (first committer wins).
   *
   * @return each table's result, in the order given
   * @throws FloeException 40001 on a conflict, and then every table's files are gone
   *     ({@link BlockTable#abandon}); 08007 when the outcome is unknown, and then every file stays
   */
  public List<Committed> commitBlock(List<? extends BlockTable> tables, List<FileDigests.Digest> digests) {
    List<BlockTable> sorted = new ArrayList<>(tables);
    sorted.sort(Comparator.comparing(t -> t.id().toString()));
    Map<TableIdentifier, Committed> done = new java.util.HashMap<>();
    try {
      runHook();
      lockAll(sorted, 0, digests, done);
    } catch (RuntimeException e) {
      if (!(e instanceof FloeException f && SqlState.TRANSACTION_RESOLUTION_UNKNOWN.equals(f.sqlState()))) {
        for (BlockTable t : sorted) {
          try {
            t.abandon();
          } catch (RuntimeException suppressed) {
            e.addSuppressed(suppressed); // unreferenced files: harmless, swept by orphan cleanup
          }
        }
      }
      throw e;
    }
    List<Committed> out = new ArrayList<>(tables.size());
    tables.forEach(t -> out.add(done.get(t.id())));
    return out;
  }

  private void lockAll(List<BlockTable> sorted, int k, List<FileDigests.Digest> digests,
      Map<TableIdentifier, Committed> done) {
    if (k < sorted.size()) {
      synchronized (lock(sorted.get(k).id())) {
        lockAll(sorted, k + 1, digests, done);
      }
      return;
    }
    List<FloeTableOperations.Prepared> prepared = new ArrayList<>();
    List<Runnable> unapply = new ArrayList<>(); // deletes the manifests and lists of snapshots not committed
    try {
      for (BlockTable t : sorted) {
        Table live = t.current().orElseThrow(() -> conflict("table \"" + t.id().name()
            + "\" was dropped by a concurrent transaction", BLOCK_HINT, null));
        if (!(((HasTableOperations) live).operations() instanceof FloeTableOperations ops)) {
          throw new IllegalStateException("not a catalog table: " + t.id());
        }
        TableMetadata current = ops.current();
        Optional<TableMetadata> single = t.single();
        if (single.isPresent() && current.metadataFileLocation() != null
            && current.metadataFileLocation().equals(t.base().metadataFileLocation())) {
          // Nothing was committed since the block's snapshot: its one statement's snapshot is the commit.
          ops.checkManifests(current, single.get()); // never build on a manifest that cannot be read back
          prepared.add(ops.prepare(current, single.get()));
          done.put(t.id(), new Committed(single.get().currentSnapshot(), Committed.How.STAGED));
          continue;
        }
        TableChange change = t.folded();
        if (!change.makesSnapshot()) {
          done.put(t.id(), new Committed(current.currentSnapshot(), Committed.How.NOTHING));
          continue;
        }
        Snapshot snapshot = null;
        for (int rebases = 0; snapshot == null; rebases++) {
          try {
            snapshot = IcebergChange.apply(live, change); // validates against the table's current state
            current = ops.current();
          } catch (ValidationException e) {
            // under every table's lock: the state it rebases on is the one it commits on
            Optional<TableChange> rebased = rebases < REBASES ? rebased(live, change, e) : Optional.empty();
            if (rebased.isEmpty()) {
              throw conflict(e.getMessage(), BLOCK_HINT, e);
            }
            t.rebased(rebased.get());
            change = rebased.get();
          }
        }
        Snapshot applied = snapshot;
        FileIO io = live.io();
        unapply.add(() -> {
          for (ManifestFile m : applied.allManifests(io)) {
            if (m.snapshotId() != null && m.snapshotId() == applied.snapshotId()) {
              io.deleteFile(m.path());
            }
          }
          io.deleteFile(applied.manifestListLocation());
        });
        TableMetadata updated = TableMetadata.buildFrom(current).setBranchSnapshot(snapshot, SnapshotRef.MAIN_BRANCH)
            .build();
        ops.checkManifests(current, updated); // never build on a manifest that cannot be read back
        prepared.add(ops.prepare(current, updated));
        done.put(t.id(), new Committed(snapshot, Committed.How.ICEBERG));
      }
      if (prepared.isEmpty()) {
        return;
      }
      List<FileDigests.Digest> all = new ArrayList<>(digests);
      all.addAll(dev.floe.catalog.Durable.now());
      if (!catalog.swapAll(prepared, all)) {
        throw conflict("another process committed to a table of the transaction first", BLOCK_HINT, null);
      }
    } catch (CommitStateUnknownException e) {
      throw unknown("the transaction's tables", e); // the pointers may name everything written: it all stays
    } catch (RuntimeException e) {
      for (Runnable r : unapply) {
        try {
          r.run();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed); // unreferenced files: harmless, swept by orphan cleanup
        }
      }
      prepared.forEach(FloeTableOperations.Prepared::abandon);
      throw e instanceof CommitFailedException ? conflict(e.getMessage(), BLOCK_HINT, e) : e;
    }
    prepared.forEach(FloeTableOperations.Prepared::publish);
  }

  // ------------------------------------------------------------------ failures

  private void runHook() {
    if (beforeCommit != null) {
      beforeCommit.run();
    }
  }

  private static long swaps(TableOperations ops) {
    return ops instanceof SwapCount counted ? counted.swaps() : 0;
  }

  /** Whether the operations' catalog pointer moved since they counted {@code before}. */
  private static boolean swapped(TableOperations ops, long before) {
    return ops instanceof SwapCount counted && counted.swaps() != before;
  }

  /**
   * The error to raise for a commit of {@code change} that failed with {@code e} before any swap: its
   * written files deleted, unless the outcome is unknown.
   */
  static RuntimeException failed(Table table, TableChange change, RuntimeException e, String hint) {
    if (e instanceof CommitStateUnknownException) {
      return unknown("table " + table.name(), e);
    }
    for (String location : change.written()) {
      try {
        table.io().deleteFile(location);
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed); // an unreferenced file: harmless, swept by orphan cleanup
      }
    }
    if (e instanceof ValidationException || e instanceof CommitFailedException) {
      return conflict(e.getMessage(), hint, e);
    }
    return e;
  }

  /** A conflict with a concurrent commit, in PostgreSQL's words. */
  private static FloeException conflict(String detail, String hint, Throwable cause) {
    return new FloeException(SqlState.SERIALIZATION_FAILURE, "could not serialize access due to concurrent update",
        detail, hint, 0, cause);
  }

  private static FloeException unknown(String what, RuntimeException e) {
    return new FloeException(SqlState.TRANSACTION_RESOLUTION_UNKNOWN, "could not tell whether the commit to " + what
        + " took effect", e.getMessage(), "Every file it wrote was kept: read the table to see whether the change "
        + "is in it.", 0, e);
  }
}
