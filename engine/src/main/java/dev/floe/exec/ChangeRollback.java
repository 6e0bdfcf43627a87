package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.commit.BlockTable;
import dev.floe.commit.TableChange;
import dev.floe.sql.Ast;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * {@code ALTER TABLE t EXECUTE rollback_to_…} on a change stream's table (docs/cdc.md, "Rolling back"): the
 * table goes back to the version asked for, and the stream's state to the batch that wrote it (the newest
 * batch among that version's ancestors, found by the batch id both tables' snapshots carry), in one catalog
 * swap. The stream's position goes back with the state, so the changes the rollback undid apply again when
 * they come again, exactly once. Rolling back the table alone would leave them in the state, and applying
 * them again would change nothing.
 *
 * <p>Refused (nothing changes) when the state no longer has that batch's version (expired), when a batch
 * among the version's ancestors predates batch ids, and when {@code floe cdc follow} feeds the table from
 * PostgreSQL and the rollback would undo batches: a replication slot does not send again what it confirmed.
 *
 * <p>Holds the stream's lock (taken before any commit lock: docs/ARCHITECTURE.md, "Concurrency"), so no
 * batch of this process runs meanwhile; another process's commit to either table since they were read
 * fails the rollback with 40001.
 */
final class ChangeRollback {
  private ChangeRollback() {}

  /** Whether {@code e} is a rollback of a stream's table, which this class does rather than {@link TableProcedures}. */
  static boolean applies(Table table, Ast.Execute e) {
    return e.procedure().startsWith("rollback_to_") && table.properties().containsKey(dev.floe.FloeProperties.CDC_STATE);
  }

  static Result run(SessionContext session, TableIdentifier id, Table read, Ast.Execute e) {
    Tables tables = session.engine().tables();
    ChangeState state = ChangeState.of(read, id.name());
    ReentrantLock lock = ChangeLocks.of(state);
    lock.lock();
    try (ReaderPins.Hold ignored = tables.readerPins().hold("rollback of " + id)) {
      Table table = tables.current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
      if (!ChangeState.idOf(table).equals(state.id)) {
        throw changedConcurrently(id);
      }
      Snapshot to = TableProcedures.rollbackTarget(table, id, e);
      if (TableProcedures.atAlready(session, id, table, e, to)) {
        return new CommandResult("ALTER TABLE", 0);
      }
      TableMetadata target = metadata(table);
      Optional<Table> stateTable = tables.current(state.id);
      TableMetadata stateBase = stateTable.map(ChangeRollback::metadata).orElse(null);
      Snapshot stateNow = stateBase == null ? null : stateBase.currentSnapshot();
      Snapshot stateTo = stateNow == null ? null : stateAt(id, target, to, stateBase, e);
      List<BlockTable> block = new ArrayList<>();
      block.add(new Moved(tables, id, target, to.snapshotId()));
      boolean stateMoves = stateNow != null && (stateTo == null || stateTo.snapshotId() != stateNow.snapshotId());
      if (stateMoves) {
        checkNotFollowed(id, stateBase, stateNow, stateTo, e);
        block.add(new Moved(tables, state.id, stateBase, stateTo == null ? null : stateTo.snapshotId()));
      }
      tables.committer().commitBlock(block, List.of());
      ChangeIndex.forget(session.engine(), state.id.name());
      String position = stateTo == null ? null : stateTo.summary().get(ChangeState.POSITION);
      session.notice("table \"" + id.name() + "\" rolled back to snapshot " + to.snapshotId() + " (version "
          + to.sequenceNumber() + "), and its change stream " + (!stateMoves ? "kept its position"
          : stateTo == null ? "to before its first batch" : position == null || position.isEmpty()
          ? "to the batch that wrote it" : "to position " + position));
      return new CommandResult("ALTER TABLE", 0);
    } finally {
      lock.unlock();
    }
  }

  private static TableMetadata metadata(Table t) {
    return ((HasTableOperations) t).operations().current();
  }

  /**
   * The state's snapshot of the newest batch among {@code to} and its ancestors; null when none of them is
   * a batch's (the version is from before the stream's first batch).
   */
  private static Snapshot stateAt(TableIdentifier id, TableMetadata target, Snapshot to, TableMetadata state,
      Ast.Execute e) {
    for (Snapshot s = to; ; ) {
      Map<String, String> summary = s.summary() == null ? Map.of() : s.summary();
      String batch = summary.get(ChangeState.BATCH);
      if (batch != null) {
        for (Snapshot t = state.currentSnapshot(); t != null; t = t.parentId() == null ? null : state.snapshot(t.parentId())) {
          if (t.summary() != null && batch.equals(t.summary().get(ChangeState.BATCH))) {
            return t;
          }
        }
        throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "cannot roll back table \"" + id.name()
            + "\" to snapshot " + to.snapshotId() + ": its change stream's state no longer has the version of the "
            + "batch that wrote it", null, "The state's old versions were expired; read the earlier version with "
            + "AS OF VERSION instead.", e.position(), null);
      }
      if (summary.containsKey(ChangeState.POSITION)) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot roll back table \"" + id.name()
            + "\" to snapshot " + to.snapshotId() + ": a batch of its change stream from before batches were "
            + "numbered wrote it", null, "Read the earlier version with AS OF VERSION instead.", e.position(), null);
      }
      if (s.parentId() == null) {
        return null;
      }
      Snapshot parent = target.snapshot(s.parentId());
      if (parent == null) {
        throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "cannot roll back table \"" + id.name()
            + "\" to snapshot " + to.snapshotId() + ": the versions before it were expired, so the batch of its "
            + "change stream that wrote it is not known", null, "Read the earlier version with AS OF VERSION "
            + "instead.", e.position(), null);
      }
      s = parent;
    }
  }

  /**
   * Refuses a rollback that would undo batches of a table {@code floe cdc follow} feeds (its position is a
   * PostgreSQL LSN, docs/cdc-postgres.md): the slot has confirmed them and will not send them again.
   */
  private static void checkNotFollowed(TableIdentifier id, TableMetadata state, Snapshot now, Snapshot to,
      Ast.Execute e) {
    String position = now.summary() == null ? null : now.summary().get(ChangeState.POSITION);
    if (position == null || !position.startsWith("lsn:")) {
      return;
    }
    for (Snapshot s = now; s != null && (to == null || s.snapshotId() != to.snapshotId());
        s = s.parentId() == null ? null : state.snapshot(s.parentId())) {
      String changes = s.summary() == null ? null : s.summary().get(ChangeState.CHANGES);
      if (changes != null && !changes.equals("0")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot roll back table \"" + id.name()
            + "\": it follows PostgreSQL, whose replication slot will not send again the changes the rollback "
            + "would undo", null, "Read the earlier version with AS OF VERSION; to start the table over from a "
            + "snapshot, make it afresh (DROP TABLE and CREATE TABLE).", e.position(), null);
      }
    }
  }

  private static FloeException changedConcurrently(TableIdentifier id) {
    return new FloeException(SqlState.SERIALIZATION_FAILURE, "could not alter table \"" + id.name()
        + "\": it was changed concurrently");
  }

  /** A table's current snapshot moved to an earlier one ({@code null}: to none), committed as it stands or not at all. */
  private record Moved(Tables tables, TableIdentifier id, TableMetadata base, Long snapshotId) implements BlockTable {
    @Override
    public Optional<Table> current() {
      return tables.current(id);
    }

    @Override
    public Optional<TableMetadata> single() {
      TableMetadata.Builder b = TableMetadata.buildFrom(base);
      return Optional.of((snapshotId == null ? b.removeRef(SnapshotRef.MAIN_BRANCH)
          : b.setBranchSnapshot(snapshotId, SnapshotRef.MAIN_BRANCH)).build());
    }

    @Override
    public TableChange folded() {
      throw changedConcurrently(id); // committed to since it was read: a rollback is not rebased
    }

    @Override
    public void rebased(TableChange change) {
      throw new IllegalStateException("a rollback is not rebased");
    }

    @Override
    public void abandon() {
      // it wrote no file
    }
  }
}
