package dev.floe.commit;

import org.apache.iceberg.TableOperations;

/**
 * The operations of a table a transaction block writes privately: a commit only replaces the block's
 * copy of the table's metadata, and nobody else sees it. The committer tells them, for each change it
 * commits there, what that change was decided from, which the block's COMMIT validates against what
 * was committed meanwhile ({@link BlockTable#folded}).
 */
public interface StagingOperations extends TableOperations {
  /** A change validated by {@code validation} was committed to the block's copy. */
  void staged(TableChange.Validation validation);
}
