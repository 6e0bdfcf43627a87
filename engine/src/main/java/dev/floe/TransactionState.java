package dev.floe;

/**
 * A session's transaction status, as a front end reports it (PostgreSQL's ReadyForQuery status and the
 * {@code transaction_isolation} and {@code transaction_read_only} settings).
 *
 * @param status idle, in a block, or in a block a statement failed
 * @param isolation the block's isolation level as asked for ({@code read committed} by default; Floe's blocks
 *     run in snapshot isolation whatever is asked, docs/transactions.md), or null when idle
 * @param readOnly whether the block is read-only (false when idle)
 */
public record TransactionState(Status status, String isolation, boolean readOnly) {
  public static final TransactionState IDLE = new TransactionState(Status.IDLE, null, false);

  /** Where a session stands. */
  public enum Status {
    /** No block is open: each statement commits by itself. */
    IDLE,
    /** A block is open. */
    IN_BLOCK,
    /** A statement of the open block failed: only ROLLBACK (or ROLLBACK TO a savepoint) runs until it ends. */
    FAILED
  }

  /** The protocol's status byte: {@code I}, {@code T} or {@code E}. */
  public char indicator() {
    return switch (status) {
      case IDLE -> 'I';
      case IN_BLOCK -> 'T';
      case FAILED -> 'E';
    };
  }
}
