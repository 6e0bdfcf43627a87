package dev.floe.server.pg;

import dev.floe.FloeException;
import dev.floe.Row;
import dev.floe.Session;
import dev.floe.Statement;
import dev.floe.TransactionState;
import java.util.Iterator;
import java.util.Map;

/**
 * A connection's engine sessions and the clock every engine call runs under. The connection's own
 * {@link Session} runs one statement at a time and owns the transaction block (its status is what
 * ReadyForQuery reports); helper sessions ({@link #newSession}) run beside it, joined to its block, for a
 * DECLAREd cursor and for a statement run while another portal is suspended (a session holds one open
 * result at a time). Every engine call goes through {@link #timed}, under the connection's
 * {@link StatementClock}: statement_timeout, a CancelRequest ({@link #cancel}, from another thread) and a
 * client gone away stop it.
 */
final class EngineSessions {
  /** An engine call. */
  interface Call<T> {
    T call();
  }

  private final PgServer server;
  private final int processId;
  private final Settings settings;
  private final StatementClock clock;
  private String user;
  private String databaseName;
  private java.net.InetSocketAddress client;
  private Session session;

  EngineSessions(PgServer server, int processId, Settings settings, StatementClock clock) {
    this.server = server;
    this.processId = processId;
    this.settings = settings;
    this.clock = clock;
  }

  /**
   * Opens the connection's own session, once its client logged in as {@code user} to {@code databaseName}
   * from {@code client}; {@code terminated} runs when {@code pg_terminate_backend} ends it.
   */
  Session open(String user, String databaseName, java.net.InetSocketAddress client, Runnable terminated) {
    this.user = user;
    this.databaseName = databaseName;
    this.client = client;
    session = newSession();
    session.onTerminate(terminated);
    return session;
  }

  /** The connection's own session (null until the client logged in). */
  Session session() {
    return session;
  }

  StatementClock clock() {
    return clock;
  }

  /**
   * A new engine session with this connection's user, database, schema and settings (the connection's
   * own, and the extra ones cursors and statements beside a suspended portal run in).
   */
  Session newSession() {
    Session s = server.database().connectClient();
    s.setUser(user);
    s.setBackendPid(processId);
    s.setDatabaseName(databaseName);
    if (client != null) {
      s.setClient(client.getAddress().getHostAddress(), client.getPort());
    }
    s.setCurrentSchema(settings.firstSchema());
    Map<String, String> all = new java.util.LinkedHashMap<>();
    for (String name : settings.names()) {
      all.put(name, settings.get(name));
    }
    s.setSettings(all);
    if (session != null && session.inTransaction()) {
      s.joinTransaction(session); // a cursor or a statement beside a suspended portal reads the block's state
    }
    return s;
  }

  /** Starts the statement's clock on the connection's own session (within a started clock: shares it). */
  StatementClock.Timing startClock(boolean watchClient) {
    return clock.start(session, watchClient);
  }

  <T> T timed(Call<T> call) {
    return timed(session, call);
  }

  /** Runs an engine call under the statement's clock, answering cancellation with PostgreSQL's messages. */
  <T> T timed(Session in, Call<T> call) {
    try (StatementClock.Timing ignored = clock.start(in, true)) {
      return call.call();
    } catch (FloeException e) {
      throw clock.explain(e);
    }
  }

  boolean timedNext(Iterator<Row> rows) {
    return timed(rows::hasNext);
  }

  /** In a failed block only what ends it runs (the engine checks its own statements too). */
  void checkNotAborted(Statement statement) {
    if (!statement.endsTransaction()) {
      requireNotFailed();
    }
  }

  void requireNotFailed() {
    if (session.transactionState().status() == TransactionState.Status.FAILED) {
      throw FloeException.inFailedTransaction();
    }
  }

  /** Whether no transaction block is open in the engine session. */
  boolean idle() {
    return session == null || session.transactionState().status() == TransactionState.Status.IDLE;
  }

  /** A CancelRequest with this connection's key: interrupts the running statement, if any. */
  void cancel() {
    clock.cancel(session);
  }

  /** Closes the connection's own session (helper sessions are closed by what holds them). */
  void close() {
    if (session != null) {
      session.discardSequences(); // the connection's, shared by its sessions
      session.close();
    }
  }
}
