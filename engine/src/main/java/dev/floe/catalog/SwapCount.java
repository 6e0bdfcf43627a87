package dev.floe.catalog;

/**
 * Table operations whose commits move a catalog pointer, counting the moves: a commit that throws after
 * its pointer moved (an error in what follows the swap) is told apart from one that did not commit by
 * the count, without reading the catalog again.
 */
public interface SwapCount {
  /** How many commits through these operations moved the table's pointer. */
  long swaps();
}
