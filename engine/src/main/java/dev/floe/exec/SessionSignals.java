package dev.floe.exec;

/**
 * A session's cancel lock and what it guards: whether a statement runs, whether it was cancelled, whether
 * it passed its commit point ({@link dev.floe.catalog.CommitGate}: from then on a cancel does not stop
 * it), and whether the session was terminated ({@code pg_terminate_backend}). The session's thread starts
 * and ends statements; any thread cancels or terminates (a CancelRequest, a timeout, another session's
 * {@code pg_cancel_backend}).
 */
final class SessionSignals {
  /**
   * Repeats a cancel's interrupt until its statement ends: DuckDB forgets an interrupt that comes before its
   * query starts executing (as between two of a statement's DuckDB queries), where PostgreSQL keeps the
   * signal pending until the backend next checks for it.
   */
  private static final java.util.concurrent.ScheduledExecutorService REPEATS =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "floe-cancel");
        t.setDaemon(true);
        return t;
      });
  private static final long REPEAT_MILLIS = 25;

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
  /** Counts the outermost statements started, so that a cancel's repeats stop with the statement it was for. */
  private long statement;

  SessionSignals(CancellableConnection statements) {
    this.statements = statements;
  }

  /**
   * The session's outermost statement starts; false (and nothing starts) if the session was terminated.
   *
   * @param sent whether the client sent it: a cancel that came between statements has nothing to stop (as in
   *     PostgreSQL); one Floe composes for the client's (COPY FROM STDIN loading what arrived) keeps a cancel
   *     that came while the data arrived
   */
  boolean start(boolean sent) {
    synchronized (lock) {
      if (terminated) {
        return false;
      }
      running = true;
      statement++;
      committed = false;
      if (sent) {
        cancelled = false;
      } else if (cancelled) {
        long which = statement;
        REPEATS.schedule(() -> repeat(which), 0, java.util.concurrent.TimeUnit.MILLISECONDS);
      }
      return true;
    }
  }

  /**
   * A statement the user sent starts (the outermost or one it runs): it has its own commit point. A cancel
   * of the running outermost statement stands, whenever it came after {@link #start}.
   */
  void fresh() {
    synchronized (lock) {
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
      if (running) {
        long which = statement;
        REPEATS.schedule(() -> repeat(which), REPEAT_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
      }
    }
  }

  /** Interrupts again while the cancelled statement {@code which} still runs short of its commit point. */
  private void repeat(long which) {
    synchronized (lock) {
      if (!running || statement != which || !cancelled || committed) {
        return;
      }
      statements.cancel();
    }
    REPEATS.schedule(() -> repeat(which), REPEAT_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
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
