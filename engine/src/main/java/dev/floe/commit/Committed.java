package dev.floe.commit;

import org.apache.iceberg.Snapshot;

/**
 * What a commit made current: the table's snapshot once the change committed (null only for a table
 * that has none, after a change of its properties), and how it got there.
 */
public record Committed(Snapshot snapshot, How how) {
  /** How a change was committed. */
  public enum How {
    /** Floe's own commit: nothing was committed since the change's parent ({@link org.apache.iceberg.FloeCommit}). */
    FLOE,
    /** Iceberg's operation, validated against what was committed since the parent. */
    ICEBERG,
    /** A transaction block's own snapshot, written by its one statement, made the table's as it was. */
    STAGED,
    /** Nothing: the change was empty (the snapshot is the table's as it was). */
    NOTHING
  }
}
