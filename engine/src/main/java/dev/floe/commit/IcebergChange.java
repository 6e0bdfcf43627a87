package dev.floe.commit;

import dev.floe.write.Commits;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DeleteFiles;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdateProperties;

/**
 * A {@link TableChange} as Iceberg's own operation: the snapshot update its kind names, with the
 * validations it describes, run on the calling thread ({@link Commits#inline}). Iceberg then does what
 * its commit loop does: validates against every snapshot committed since the change's parent, retries
 * a lost catalog swap on fresh metadata, and cleans up its manifests when it fails for sure.
 */
final class IcebergChange {
  private IcebergChange() {}

  /** Commits {@code change} to {@code table}; returns the table's snapshot after it. */
  static Snapshot commit(Table table, TableChange change) {
    try {
      if (!change.makesSnapshot()) {
        properties(table.updateProperties(), change).commit();
      } else if (change.setProperties().isEmpty() && change.removedProperties().isEmpty()) {
        operation(table, change).commit();
      } else {
        // the snapshot and the properties in one metadata version
        Transaction txn = table.newTransaction();
        operation(txn.table(), change).commit();
        properties(txn.updateProperties(), change).commit();
        txn.commitTransaction();
      }
    } catch (IllegalArgumentException e) {
      throw historyRewritten(table, change, e);
    }
    return table.currentSnapshot();
  }

  /**
   * Iceberg's validation of a change whose parent is no longer an ancestor of the current snapshot (the
   * table was rolled back since the change read it, by Floe or another engine) fails a precondition: that
   * is a conflict like any other, so it is reported as Iceberg's validation failures are.
   */
  private static RuntimeException historyRewritten(Table table, TableChange change, IllegalArgumentException e) {
    if (change.parentId() == null) {
      return e;
    }
    table.refresh();
    Snapshot current = table.currentSnapshot();
    if (current != null && org.apache.iceberg.util.SnapshotUtil.isAncestorOf(table, current.snapshotId(),
        change.parentId())) {
      return e;
    }
    return new org.apache.iceberg.exceptions.ValidationException(e, "the table's history was rewritten since "
        + "snapshot %s was read (it was rolled back): that snapshot is not an ancestor of the current one",
        change.parentId());
  }

  /** Adds {@code change} to {@code txn} (a create-table transaction), which the caller then commits. */
  static void stage(Transaction txn, TableChange change) {
    if (change.makesSnapshot()) {
      operation(txn.table(), change).commit();
    }
    if (!change.setProperties().isEmpty() || !change.removedProperties().isEmpty()) {
      properties(txn.updateProperties(), change).commit();
    }
  }

  /**
   * The snapshot {@code change} would add to {@code table}'s current state, validated against it, with
   * its manifests and manifest list written; nothing is committed (a transaction block's COMMIT swaps it
   * in with its other tables').
   */
  static Snapshot apply(Table table, TableChange change) {
    try {
      return operation(table, change).apply();
    } catch (IllegalArgumentException e) {
      throw historyRewritten(table, change, e);
    }
  }

  private static SnapshotUpdate<?> operation(Table table, TableChange change) {
    SnapshotUpdate<?> update = switch (change.kind()) {
      case APPEND -> {
        AppendFiles append = Commits.inline(table.newAppend());
        change.addedData().forEach(append::appendFile);
        yield append;
      }
      case ROW_DELTA -> rowDelta(table, change);
      case REWRITE -> {
        RewriteFiles rewrite = Commits.inline(table.newRewrite());
        if (change.parentId() != null) {
          rewrite.validateFromSnapshot(change.parentId()); // the files it rewrites got no deletes since
        }
        change.removedData().forEach(rewrite::deleteFile);
        change.removedDeletes().forEach(rewrite::deleteFile); // deletes of the removed files alone
        change.addedData().forEach(rewrite::addFile);
        change.addedDeletes().forEach(rewrite::addFile); // rows deleted from the rewritten files meanwhile
        yield rewrite;
      }
      case MARK -> Commits.inline(table.newAppend()); // no file: a snapshot for its summary
      case DELETE -> {
        DeleteFiles delete = Commits.inline(table.newDelete());
        change.removedData().forEach(delete::deleteFile);
        yield delete;
      }
    };
    change.summary().forEach(update::set);
    return update;
  }

  private static RowDelta rowDelta(Table table, TableChange change) {
    RowDelta delta = Commits.inline(table.newRowDelta());
    if (change.parentId() != null) {
      delta.validateFromSnapshot(change.parentId());
    }
    TableChange.Validation v = change.validation();
    if (v.keys() != null) {
      delta.validateNoConflictingDataFiles();
    }
    delta.conflictDetectionFilter(v.conflictFilter());
    if (v.untouched()) {
      delta.validateDeletedFiles().validateNoConflictingDeleteFiles();
    }
    if (!v.referenced().isEmpty()) {
      delta.validateDataFilesExist(v.referenced());
    }
    change.addedData().forEach(delta::addRows);
    change.addedDeletes().forEach(delta::addDeletes);
    change.removedData().forEach(delta::removeRows);
    change.removedDeletes().forEach(delta::removeDeletes);
    return delta;
  }

  private static UpdateProperties properties(UpdateProperties update, TableChange change) {
    change.setProperties().forEach(update::set);
    change.removedProperties().forEach(update::remove);
    return update;
  }
}
