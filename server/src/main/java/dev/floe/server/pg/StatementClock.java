package dev.floe.server.pg;

import dev.floe.FloeException;
import dev.floe.Session;
import dev.floe.SqlState;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A connection's clock for the statement it runs, started once around all of the statement's engine calls
 * (its rows included; nested starts share it): statement_timeout (never beyond the server's
 * {@code --max-statement-time}), a CancelRequest, and, once the client has sent all the statement reads
 * and it has run a while, a watch for the client disconnecting. Each of them cancels the statement's
 * engine session; a cancelled write commits nothing (docs/server.md).
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
  /** The statement's run while one runs. */
  private Run current;

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

  private final class Run implements Timing {
    private final Session in;
    private final ScheduledFuture<?> timer;
    private ScheduledFuture<?> watchStart;
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
      timer = timeout <= 0 ? null : server.timers().schedule(() -> {
        timedOut = true;
        cancelRequested = true;
        in.cancel();
      }, timeout, TimeUnit.MILLISECONDS);
    }

    /** From now on the client sends nothing this statement reads: watch for it going away. */
    synchronized void watchClient() {
      ClientInput client = input.get();
      if (client == null || watchStart != null || closed) {
        return;
      }
      watchStart = server.timers().schedule(() -> {
        synchronized (this) {
          if (!closed) {
            watch = client.watch(server.watchers(), in::cancel);
          }
        }
      }, WATCH_AFTER_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
      ClientInput.Watch w;
      synchronized (this) {
        closed = true;
        running = false;
        w = watch;
        if (watchStart != null) {
          watchStart.cancel(false);
        }
      }
      if (w != null) {
        w.stop(); // before the connection reads again
      }
      if (timer != null) {
        timer.cancel(false);
      }
      current = null;
    }
  }
}
