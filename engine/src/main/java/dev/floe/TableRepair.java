package dev.floe;

import java.util.List;
import java.util.Optional;

/**
 * What {@link Database#repairTable} found about a table's metadata, and what it did (docs/recovery.md).
 *
 * @param table the table's name, {@code schema.table}
 * @param current the metadata file the catalog points to
 * @param problem why the current metadata file cannot be used; empty if it reads and its files are as
 *     written
 * @param candidates the table's metadata files, newest first, each with whether it reads: what the table
 *     can be pointed back to
 * @param pointedTo the metadata file the catalog was moved to; empty if nothing was changed
 */
public record TableRepair(String table, String current, Optional<String> problem, List<Candidate> candidates,
    Optional<String> pointedTo) {

  /** A metadata file of the table: whether it reads, and if so its current snapshot and when it was made. */
  public record Candidate(String location, boolean readable, String description) {}

  public TableRepair {
    candidates = List.copyOf(candidates);
  }
}
