package dev.floe.commit;

import java.util.Optional;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * One table a transaction block wrote, as its COMMIT hands it to {@link Committer#commitBlock}. The
 * block's statements committed their changes through the committer to a private copy of the table
 * ({@link StagingOperations}); what the block commits is their sum, on the table as it is then.
 */
public interface BlockTable {
  TableIdentifier id();

  /** The table as the block's snapshot had it. */
  TableMetadata base();

  /** The table as the catalog has it now (asked under its commit lock); empty if it was dropped. */
  Optional<Table> current();

  /**
   * The block's private state when exactly one statement wrote the table: its change as one snapshot
   * on {@link #base}, written. If the table is still at its base, this is the commit, as it stands.
   */
  Optional<TableMetadata> single();

  /**
   * The block's changes to the table folded into one, decided from {@link #base}'s snapshot and
   * validated as its statements asked (files added and removed again cancel out). Reads the manifests
   * of the block's snapshots: asked for only when the table moved since its base, or several statements
   * wrote it.
   */
  TableChange folded();

  /**
   * The committer rebased {@link #folded} on the table's current state (row-level conflicts): this is
   * what commits now, and its {@link TableChange#written} files are the block's too.
   */
  void rebased(TableChange change);

  /**
   * Deletes every file the block's statements wrote to the table, and those a rebase wrote (the block
   * does not commit).
   */
  void abandon();
}
