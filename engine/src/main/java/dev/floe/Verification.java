package dev.floe;

import java.util.List;

/**
 * What {@link Database#verify()} found for one table: every file its metadata names (each snapshot's data
 * and delete files, manifests, manifest lists, metadata files) read again and compared with the checksum
 * recorded when Floe wrote it; files another engine wrote have no checksum, and of those only Parquet
 * footers are checked.
 *
 * @param table the table's name, {@code schema.table}
 * @param files how many files its metadata names
 * @param withoutChecksum how many of them have no recorded checksum
 * @param damaged the files that are damaged or missing, with what is wrong
 */
public record Verification(String table, int files, int withoutChecksum, List<Damage> damaged) {
  /** A damaged file. */
  public record Damage(String file, String problem) {}

  public Verification {
    damaged = List.copyOf(damaged);
  }

  public boolean ok() {
    return damaged.isEmpty();
  }
}
