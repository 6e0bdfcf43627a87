package dev.floe.server.pg;

import dev.floe.FloeException;
import dev.floe.Session;
import dev.floe.Statement;
import dev.floe.TransactionState;
import java.io.IOException;
import java.util.List;

/**
 * The simple query protocol: a Query message's script split into statements ({@link Statement#split}),
 * each run through the {@link StatementRunner} (or {@link CopyProtocol}) and answered with its rows and
 * command tag, up to the first error, then ReadyForQuery. Several statements outside a block that only read
 * and change rows run as one implicit transaction, as in PostgreSQL; a Query closes every portal.
 */
final class SimpleQuery {
  private final EngineSessions sessions;
  private final Portals portals;
  private final SessionCommands commands;
  private final StatementRunner runner;
  private final CopyProtocol copyProtocol;
  private final ClientWriter writer;

  SimpleQuery(EngineSessions sessions, Portals portals, SessionCommands commands, StatementRunner runner,
      CopyProtocol copyProtocol, ClientWriter writer) {
    this.sessions = sessions;
    this.portals = portals;
    this.commands = commands;
    this.runner = runner;
    this.copyProtocol = copyProtocol;
    this.writer = writer;
  }

  /** Runs a Query message: its statements, each answered, then ReadyForQuery. */
  void run(MessageBuffer m) throws IOException {
    MessageWriter out = writer.out();
    String sql;
    try {
      sql = m.cstring("query string");
      m.end();
    } catch (ProtocolException | MessageBuffer.InvalidText e) {
      // the message was read whole: the connection goes on, as in PostgreSQL (a NUL inside the query
      // string, invalid UTF-8)
      if (e instanceof ProtocolException p && p.isFraming()) {
        throw p;
      }
      writer.malformed(e);
      writer.readyForQuery();
      return;
    }
    List<Statement> parts;
    try {
      parts = Statement.split(sql);
    } catch (FloeException e) {
      writer.error(e);
      writer.readyForQuery();
      return;
    }
    if (parts.isEmpty()) {
      out.begin('I').end(); // EmptyQueryResponse
    }
    portals.closeAll(); // a simple query destroys the unnamed portal
    // Several statements outside a block run as one implicit transaction, as in PostgreSQL: all of them
    // or none. Floe does so when they only read and change rows (DDL runs outside transactions).
    boolean implicit = sessions.idle() && parts.size() > 1 && parts.stream().allMatch(p -> p.kind().rowLevel());
    Session session = sessions.session();
    TransactionState outside = session.transactionState();
    if (implicit) {
      session.begin();
    }
    boolean failed = false;
    for (Statement part : parts) {
      try {
        if (part.copy().isPresent()) {
          String tag = copyProtocol.copy(part.copy().get());
          out.begin('C').cstring(tag).end();
          continue;
        }
        Reply reply = runner.run(part, null);
        try {
          if (reply.hasRows()) {
            writer.rowDescription(reply.columns(), reply::origin, null, false);
          }
          long sent = writer.sendRows(reply, new boolean[0], false, 0);
          out.begin('C').cstring(reply.tag(sent)).end();
        } finally {
          reply.close();
        }
      } catch (FloeException e) {
        writer.error(e.movedTo(e.position() + part.offset())); // a position in the whole script
        failed = true;
        break;
      } catch (ProtocolException | MessageBuffer.InvalidText e) {
        throw e; // the stream can no longer be framed (during COPY): the connection ends
      } catch (RuntimeException e) {
        writer.internalError(e);
        failed = true;
        break;
      }
    }
    if (implicit && session.inTransaction()) {
      try {
        if (failed) {
          session.rollback();
        } else {
          session.commit();
        }
      } catch (FloeException e) {
        writer.error(e);
      } finally {
        commands.transactionChanged(outside);
      }
    }
    writer.readyForQuery();
  }
}
