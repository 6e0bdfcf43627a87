package dev.floe.server.pg;

import dev.floe.Session;
import dev.floe.SessionCommand;
import dev.floe.Statement;
import dev.floe.StatementKind;
import dev.floe.TransactionState;

/**
 * Runs one statement for either query protocol and decides where: a session command in
 * {@link SessionCommands}; anything else, transaction control included, in the engine: in the connection's
 * own session, or, while a portal holds that session's one open result, in a helper session of its own
 * (closed with its reply). An error fails the transaction block; after each statement the session's
 * settings follow the block ({@link SessionCommands#transactionChanged}).
 */
final class StatementRunner {
  private final EngineSessions sessions;
  private final SessionCommands commands;
  private final Portals portals;
  private final ConnectionLog log;

  StatementRunner(EngineSessions sessions, SessionCommands commands, Portals portals, ConnectionLog log) {
    this.sessions = sessions;
    this.commands = commands;
    this.portals = portals;
    this.log = log;
  }

  /**
   * Runs one statement: a session command in {@link SessionCommands}, anything else in the engine. An error
   * inside a transaction block fails the block.
   *
   * @param bound the statement's text with its parameters' values in place, or null when it has none
   */
  Reply run(Statement statement, String bound) {
    log.statementStarted(statement.text());
    RuntimeException failure = null;
    try {
      return runLogged(statement, bound);
    } catch (RuntimeException e) {
      failure = e;
      throw e;
    } finally {
      log.statementEnded(failure);
    }
  }

  private Reply runLogged(Statement statement, String bound) {
    Session session = sessions.session();
    TransactionState before = session.transactionState();
    try {
      sessions.checkNotAborted(statement);
      if (statement.kind() == StatementKind.SESSION) {
        // parsed again from the bound text: DECLARE's query carries the parameters' values
        SessionCommand command = bound == null ? statement.command().get()
            : Statement.parse(bound).command().orElseThrow();
        return commands.run(command);
      }
      // The engine session holds one open result at a time; while another portal is suspended (pgjdbc's
      // fetchSize, interleaved portals), the statement runs in a session of its own. Transaction control
      // is the block's owner's.
      Session runIn = statement.kind() != StatementKind.TRANSACTION && portals.anyOpen()
          ? sessions.newSession() : session;
      Reply reply;
      try {
        reply = Reply.of(sessions.timed(runIn, () -> bound == null ? runIn.sql(statement) : runIn.sql(bound)));
      } catch (RuntimeException e) {
        if (runIn != session) {
          runIn.close();
        }
        throw e;
      }
      if (runIn != session) {
        reply = Reply.closing(reply, runIn);
      }
      return reply;
    } catch (RuntimeException e) {
      session.failTransaction();
      throw e;
    } finally {
      commands.transactionChanged(before);
    }
  }
}
