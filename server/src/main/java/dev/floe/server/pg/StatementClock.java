package dev.floe.server.pg;

import dev.floe.FloeException;
import dev.floe.Session;
import dev.floe.SqlState;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A connection's clock for the statement it runs, started once around all of the statement's engine calls
 * (its rows included; nested starts share it): statement_timeout (never beyond the server's
 * {@code --max-statement-time}), a CancelRequest, and, once the client has sent all the statement reads
 * and it has run a while, a watch for the client disconnecting. Each of them cancels the statement's
 * engine session; a cancelled write commits nothing (docs/server.md). The server's clock tick checks the
 * deadline and the run time ({@link #tick}); starting and ending a statement only writes fields.
 */
final class StatementClock {
  /** How long a statement runs before the server starts watching for its client going away. */
  private static final long WATCH_AFTER_MILLIS = 100;

  /** What ends a run: closing it ends the clock (or, nested, nothing). */
  interface Timing extends AutoCloseable {
    @Override
    void close();
  }

  private final PgServer server;
  /** The client's statement_timeout in milliseconds (0: none). */
  private final LongSupplier statementTimeout;
  /** The client's input, once logged in (null before). */
  private final Supplier<ClientInput> input;
  private volatile boolean running;
  /** The engine session of the statement running now (cancel requests interrupt it). */
  private volatile Session active;
  private volatile boolean timedOut;
  /** Set when the running statement is to stop (a CancelRequest, its timeout); checked while COPY data arrives. */
  private volatile boolean cancelRequested;
  /** The statement's run while one runs (read by the server's clock tick). */
  private volatile Run current;

  StatementClock(PgServer server, LongSupplier statementTimeout, Supplier<ClientInput> input) {
    this.server = server;
    this.statementTimeout = statementTimeout;
    this.input = input;
  }

  /** Whether a statement is running. */
  boolean running() {
    return running;
  }

  /** Whether the running statement was asked to stop. */
  boolean cancelRequested() {
    return cancelRequested;
  }

  /** PostgreSQL's message for a statement stopped by this clock. */
  String cancelMessage() {
    return timedOut ? "canceling statement due to statement timeout" : "canceling statement due to user request";
  }

  /** A cancellation the engine reported (57014), in the words of what caused it; other errors as they are. */
  FloeException explain(FloeException e) {
    return e.sqlState().equals(SqlState.QUERY_CANCELED)
        ? new FloeException(SqlState.QUERY_CANCELED, cancelMessage(), e) : e;
  }

  /** A CancelRequest: interrupts the running statement, if any ({@code fallback}: the connection's session). */
  void cancel(Session fallback) {
    Session s = active != null ? active : fallback;
    if (s != null && running) {
      cancelRequested = true;
      s.cancel();
    }
  }

  /**
   * The running statement's clock, started if none runs.
   *
   * @param watchClient whether the client has sent everything the statement reads (not so while COPY FROM
   *     STDIN's data arrives: the connection's thread reads it, and finds the end of the stream by itself)
   */
  Timing start(Session in, boolean watchClient) {
    if (current != null) {
      if (watchClient) {
        current.watchClient();
      }
      return () -> { };
    }
    Run r = new Run(in);
    current = r;
    if (watchClient) {
      r.watchClient();
    }
    return r;
  }

  /**
   * Called by the server's clock tick ({@link PgServer#TICK_MILLIS}) from its timer thread: times out the
   * running statement past its deadline, and starts watching its client once it has run a while. A statement
   * arms no timer of its own: it only writes when it started and its deadline, which costs a statement
   * nothing (a timer per statement woke the timer thread twice per statement: a third of a point lookup's
   * system time).
   */
  void tick(long nowNanos) {
    Run r = current;
    if (r != null) {
      r.tick(nowNanos);
    }
  }

  private final class Run implements Timing {
    private final Session in;
    private final long startedNanos;
    /** When the statement times out ({@code Long.MAX_VALUE}: never). */
    private final long deadlineNanos;
    private boolean watchWanted;
    private ClientInput.Watch watch;
    private boolean closed;

    Run(Session in) {
      this.in = in;
      cancelRequested = false;
      long timeout = statementTimeout.getAsLong();
      long ceiling = server.config().maxStatementTime().toMillis();
      if (ceiling > 0 && (timeout == 0 || timeout > ceiling)) {
        timeout = ceiling; // the operator's limit: a client's statement_timeout can only shorten it
      }
      timedOut = false;
      active = in;
      running = true;
      startedNanos = System.nanoTime();
      deadlineNanos = timeout <= 0 ? Long.MAX_VALUE : startedNanos + TimeUnit.MILLISECONDS.toNanos(timeout);
    }

    /** From now on the client sends nothing this statement reads: watch for it going away. */
    synchronized void watchClient() {
      watchWanted = true;
    }

    synchronized void tick(long now) {
      if (closed) {
        return; // ended meanwhile: its session may already run the next statement
      }
      if (!timedOut && deadlineNanos != Long.MAX_VALUE && now - deadlineNanos >= 0) {
        timedOut = true;
        cancelRequested = true;
        in.cancel();
      }
      if (watchWanted && watch == null && now - startedNanos >= TimeUnit.MILLISECONDS.toNanos(WATCH_AFTER_MILLIS)) {
        ClientInput client = input.get();
        if (client != null) {
          watch = client.watch(server.watchers(), in::cancel);
        }
      }
    }

    @Override
    public void close() {
      ClientInput.Watch w;
      synchronized (this) {
        closed = true;
        running = false;
        w = watch;
      }
      if (w != null) {
        w.stop(); // before the connection reads again
      }
      current = null;
    }
  }
}
