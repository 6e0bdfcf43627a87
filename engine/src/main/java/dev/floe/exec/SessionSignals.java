package dev.floe.exec;

/**
 * A session's cancel lock and what it guards: whether a statement runs, whether it was cancelled, whether
 * it passed its commit point ({@link dev.floe.catalog.CommitGate}: from then on a cancel does not stop
 * it), and whether the session was terminated ({@code pg_terminate_backend}). The session's thread starts
 * and ends statements; any thread cancels or terminates (a CancelRequest, a timeout, another session's
 * {@code pg_cancel_backend}).
 */
final class SessionSignals {
  private final Object lock = new Object();
  /** The DuckDB statements the running statement made, to interrupt on cancel. */
  private final CancellableConnection statements;
  /** A statement of the session runs (between {@link #start} and {@link #end}). */
  private boolean running;
  /** Set by {@link #cancel()}: the running statement stops, and commits nothing if it has not yet. */
  private boolean cancelled;
  /** The running statement passed its commit point: it can no longer be cancelled. */
  private boolean committed;
  /** Set by {@link #terminate()}: the session ends; its statements fail with 57P01. */
  private boolean terminated;

  SessionSignals(CancellableConnection statements) {
    this.statements = statements;
  }

  /** The session's outermost statement starts; false (and nothing starts) if the session was terminated. */
  boolean start() {
    synchronized (lock) {
      if (terminated) {
        return false;
      }
      running = true;
      return true;
    }
  }

  /** A statement the user sent starts: a cancel that came between statements has nothing to stop (as in PostgreSQL). */
  void fresh() {
    synchronized (lock) {
      cancelled = false;
      committed = false;
    }
    statements.forgetClosed();
  }

  /** The outermost statement ended; whether the session was terminated meanwhile. */
  boolean end() {
    synchronized (lock) {
      running = false;
      return terminated;
    }
  }

  /** The statement reached its point of no return ({@link dev.floe.catalog.CommitGate}). */
  void passCommitPoint() {
    synchronized (lock) {
      if (cancelled) {
        throw dev.floe.catalog.CommitGate.cancelled();
      }
      committed = true;
    }
  }

  /**
   * Cancels the running statement, from any thread: DuckDB stops what it is running, and a statement that
   * has not reached its commit point commits nothing; one past it has committed and reports success.
   */
  void cancel() {
    synchronized (lock) {
      if (committed) {
        return; // its change stands: what is left of it (cleanup, RETURNING rows) runs to the end
      }
      cancelled = true;
      statements.cancel();
    }
  }

  /**
   * Terminates the session, from any thread, cancelling its running statement; whether none ran (then
   * nothing of the session reads any more, and the caller may release what it holds at once).
   */
  boolean terminate() {
    boolean idle;
    synchronized (lock) {
      terminated = true;
      idle = !running;
    }
    if (!idle) {
      cancel();
    }
    return idle;
  }

  boolean terminated() {
    synchronized (lock) {
      return terminated;
    }
  }
}
