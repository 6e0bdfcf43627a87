package dev.floe.commit;

import dev.floe.catalog.CommitGate;
import dev.floe.catalog.Durable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;

/**
 * Group commit of synchronous statements: the changes of statements that reach a table's commit lock
 * while another commit holds it are committed together, in one snapshot, by whichever of them gets the
 * lock first (the leader); the others find their outcome when they get it.
 *
 * <p>Each statement is still decided alone. The leader applies the group's changes in the order they
 * arrived to a private copy of the table's current state, each validated against everything before it
 * (what was committed since the snapshot it read, and the group's earlier changes) and rebased as a
 * lone commit would be ({@link Committer.Rebaser}); a change that fails there fails alone, with the
 * error its own commit would have raised, and its files are deleted. What the accepted changes add
 * and remove, net ({@link StagedSnapshots}), is then committed as one change through the committer's
 * one path ({@link Committer#commitLocked}); if that fails, every accepted change fails with it. Appends
 * validate nothing: a group of appends is their files in one append, with no private copy.
 *
 * <p>Files a statement wrote are made durable by the commit that names them: a statement hands its
 * thread's registrations ({@link Durable#take}) to the group, and the leader adopts them before it
 * commits. Likewise its point of no return ({@link CommitGate}): the leader passes each statement's
 * gate before the group's swap, which runs under none.
 */
final class GroupCommit {
  private final Committer committer;
  private final Map<TableIdentifier, Queue<Member>> waiting = new ConcurrentHashMap<>();

  GroupCommit(Committer committer) {
    this.committer = committer;
  }

  /** One statement's change in a group, and its outcome once the group committed. */
  private static final class Member {
    final Table table;
    final TableChange change;
    final Durable.Registrations files;
    /** The statement's point of no return, passed by whoever commits it. */
    final CommitGate.Statement gate;
    /** Set by the thread that settles the member, read by the member's thread under the same lock. */
    boolean done;
    Committed result;
    RuntimeException error;
    /** The change as it was accepted into the group (rebased, perhaps). */
    TableChange accepted;

    Member(Table table, TableChange change, Durable.Registrations files, CommitGate.Statement gate) {
      this.table = table;
      this.change = change;
      this.files = files;
      this.gate = gate;
    }

    void succeed(Committed committed) {
      result = committed;
      done = true;
    }

    void fail(RuntimeException e) {
      error = e;
      done = true;
    }
  }

  /**
   * Whether {@code change} may share a snapshot with other statements' changes: an append or row
   * delta of files alone (no summary or property of its own), to a table of the catalog (not a
   * transaction block's private copy).
   */
  static boolean groupable(Table table, TableChange change) {
    return (change.kind() == TableChange.Kind.APPEND || change.kind() == TableChange.Kind.ROW_DELTA)
        && change.changesFiles() && change.summary().isEmpty() && change.setProperties().isEmpty()
        && change.removedProperties().isEmpty() && table instanceof HasTableOperations h
        && !(h.operations() instanceof StagingOperations);
  }

  /** Commits {@code change} to table {@code id}, alone or with those that wait for the lock with it. */
  Committed commit(TableIdentifier id, Table table, TableChange change) {
    Member me = new Member(table, change, Durable.take(), CommitGate.current());
    Queue<Member> queue = waiting.computeIfAbsent(id, k -> new ConcurrentLinkedQueue<>());
    queue.add(me);
    synchronized (committer.lock(id)) {
      if (!me.done) {
        // Only a holder of the lock drains the queue, and this member was queued before it took the
        // lock: it is in the batch.
        List<Member> batch = new ArrayList<>();
        for (Member m = queue.poll(); m != null; m = queue.poll()) {
          Durable.adopt(m.files);
          if (m.table.uuid().equals(table.uuid())) {
            batch.add(m);
          } else {
            commitTogether(m.table, List.of(m)); // the name's earlier table, dropped since: alone
          }
        }
        if (batch.size() == 1) {
          settle(batch, table, change);
        } else {
          commitTogether(table, batch);
        }
      }
      if (me.error != null) {
        throw me.error;
      }
      return me.result;
    }
  }

  /**
   * Commits a batch of several statements' changes as one. Each statement passes its point of no return
   * first (a cancelled one fails alone, with 57014, its files deleted); the swap then runs under no
   * statement's gate, so the leader's own cancellation cannot fail the others.
   */
  private void commitTogether(Table table, List<Member> members) {
    List<Member> batch = new ArrayList<>();
    for (Member m : members) {
      try {
        m.gate.pass();
        batch.add(m);
      } catch (RuntimeException cancelled) {
        m.fail(Committer.failed(table, m.change, cancelled, Committer.STATEMENT_HINT));
      }
    }
    if (!batch.isEmpty()) {
      CommitGate.guard(CommitGate.NONE, () -> {
        commitPassed(table, batch);
        return null;
      });
    }
  }

  private void commitPassed(Table table, List<Member> batch) {
    if (batch.stream().allMatch(m -> m.change.kind() == TableChange.Kind.APPEND)) {
      List<DataFile> files = new ArrayList<>();
      batch.forEach(m -> files.addAll(m.change.addedData()));
      settle(batch, table, TableChange.append(files));
      return;
    }
    TableOperations real = ((HasTableOperations) table).operations();
    TableMetadata base = real.refresh();
    PrivateOperations ops = new PrivateOperations(real, base);
    Table staged = new BaseTable(ops, table.name());
    List<Member> accepted = new ArrayList<>();
    for (Member m : batch) {
      TableChange change = m.change;
      for (int rebases = 0; m.accepted == null && !m.done; rebases++) {
        try {
          IcebergChange.commit(staged, change); // validated against everything before it
          m.accepted = change;
          accepted.add(m);
        } catch (RuntimeException e) {
          Optional<TableChange> rebased = rebases < Committer.REBASES ? committer.rebased(staged, change, e)
              : Optional.empty();
          if (rebased.isPresent()) {
            change = rebased.get();
          } else {
            m.fail(Committer.failed(staged, change, e, Committer.STATEMENT_HINT));
          }
        }
      }
    }
    TableChange folded = null;
    try {
      if (!accepted.isEmpty()) {
        folded = fold(staged, base, ops.current(), accepted);
        settle(accepted, table, folded);
      }
    } catch (RuntimeException e) {
      accepted.forEach(m -> m.fail(e));
    } finally {
      try {
        // the private snapshots' manifests and lists, and files the group added and dropped again
        StagedSnapshots.deleteWritten(staged, base, ops.current(), folded == null ? java.util.Set.of()
            : StagedSnapshots.kept(folded));
      } catch (RuntimeException e) {
        // unreferenced files: harmless, swept by orphan cleanup
      }
    }
  }

  /** Commits {@code change}, the sum of {@code members}' changes, and gives each the outcome. */
  private void settle(List<Member> members, Table table, TableChange change) {
    try {
      Committed committed = committer.commitLocked(table, change);
      members.forEach(m -> m.succeed(committed));
    } catch (RuntimeException e) {
      members.forEach(m -> m.fail(e));
    }
  }

  /**
   * The accepted changes, committed privately from {@code base} up to {@code to}, as one row delta
   * decided from {@code base}: validated by everything they read and the keys they added, should
   * another process commit before it.
   */
  private static TableChange fold(Table staged, TableMetadata base, TableMetadata to, List<Member> accepted) {
    Expression read = Expressions.alwaysFalse();
    Expression keys = null;
    boolean untouched = false;
    List<String> written = new ArrayList<>();
    for (Member m : accepted) {
      TableChange.Validation v = m.accepted.validation();
      read = read == null || v.read() == null ? null : Expressions.or(read, v.read());
      keys = v.keys() == null ? keys : keys == null ? v.keys() : Expressions.or(keys, v.keys());
      untouched |= v.untouched();
      written.addAll(m.accepted.written());
    }
    return StagedSnapshots.net(staged, base, to).rowDelta(base, new TableChange.Validation(read, keys, untouched,
        List.of()), written);
  }
}
