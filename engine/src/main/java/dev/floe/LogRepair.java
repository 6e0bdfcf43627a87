package dev.floe;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What {@link Database#repairLog} found in a table's log, and what it did (docs/recovery.md).
 *
 * @param table the table's name
 * @param damage where the log is damaged, as the XX001 error names it; empty if it is sound
 * @param firstLostOffset the offset the damaged record starts at, or should: the rows given up are from
 *     there on
 * @param droppedRecords the records given up: the damaged one and the whole ones after it
 * @param droppedRows the rows of the whole records given up (a damaged record's rows cannot be counted)
 * @param droppedBytes the bytes cut from the damaged segment, with those of the later segments
 * @param nextOffset the offset the next appended row gets once the records are dropped: past every offset
 *     the log ever acknowledged
 * @param keptAside the damaged files, kept under new names ({@code <name>.damaged-<time>}); empty unless
 *     {@code repaired}
 * @param repaired whether the records were dropped
 */
public record LogRepair(String table, Optional<Damage> damage, long firstLostOffset, long droppedRecords,
    long droppedRows, long droppedBytes, long nextOffset, List<Path> keptAside, boolean repaired) {

  /** A damaged file of the log, the byte where the damage starts, and the XX001 error's message. */
  public record Damage(Path file, long position, String message) {}
}
