package dev.floe.server.pg;

import dev.floe.PgType;

import dev.floe.Column;
import dev.floe.Copy;
import dev.floe.CopyIn;
import dev.floe.PgValues;
import dev.floe.FloeException;
import dev.floe.Row;
import dev.floe.Session;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.SessionCommand;
import dev.floe.Statement;
import dev.floe.StatementKind;
import dev.floe.TransactionState;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.time.ZoneId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection speaking the PostgreSQL v3 protocol: start-up and authentication, the simple
 * and extended query protocols, transaction-block status, cancellation and timeouts. Runs on its own
 * thread; statements run one at a time in the connection's engine {@link Session}.
 */
final class PgConnection implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(PgConnection.class);
  /** Message types a client may send after start-up. */
  private static final String FRONTEND_TYPES = "QPBDECHSXdcfF";

  private final PgServer server;
  private final Socket socket;
  private final int processId;
  private final int secretKey;
  private final boolean overCapacity;
  /** The client's messages once logged in (start-up reads its own packets). */
  private DataInputStream in;
  /** The client's bytes once logged in: watched for a disconnect while a statement runs. */
  private ClientInput input;
  private final Settings settings = new Settings();
  /** Prepared statements and portals. */
  private final Portals portals = new Portals();
  /** SET/SHOW/RESET, DISCARD, DEALLOCATE and SQL cursors. */
  private final SessionCommands commands;
  /** Where each statement runs. */
  private final StatementRunner runner;
  /** Parse, Bind, Describe, Execute, Close and Sync. */
  private final ExtendedQuery extended;
  /** Waiting for the client after ReadyForQuery: nothing of it is in progress. */
  private volatile boolean idle;
  /** The running statement's clock: timeouts, cancel requests, a disconnect. */
  private final StatementClock clock;
  /** The connection's engine session, the helper sessions beside it, and the clock they run under. */
  private final EngineSessions sessions;
  /** What the connection sends, and the lock on sending (writeLock). */
  private final ClientWriter writer;
  /** COPY FROM STDIN and TO STDOUT. */
  private final CopyProtocol copyProtocol;
  private volatile boolean closing;
  private ScheduledFuture<?> idleTimer;

  PgConnection(PgServer server, Socket socket, int processId, int secretKey, boolean overCapacity) {
    this.server = server;
    this.socket = socket;
    this.processId = processId;
    this.secretKey = secretKey;
    this.overCapacity = overCapacity;
    this.clock = new StatementClock(server, () -> settings.statementTimeoutMillis(), () -> input);
    this.sessions = new EngineSessions(server, processId, settings, clock);
    this.writer = new ClientWriter(processId, sessions, settings);
    this.copyProtocol = new CopyProtocol(sessions, settings, writer, this::readMessage);
    this.commands = new SessionCommands(sessions, settings, portals);
    this.runner = new StatementRunner(sessions, commands, portals);
    this.extended = new ExtendedQuery(sessions, portals, commands, runner, copyProtocol, writer);
  }

  int processId() {
    return processId;
  }

  int secretKey() {
    return secretKey;
  }

  @Override
  public void run() {
    try {
      socket.setTcpNoDelay(true);
      DataInputStream startupIn = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 16 * 1024));
      writer.use(socket.getOutputStream());
      // a client gets this long to start up and authenticate (PostgreSQL's authentication_timeout)
      socket.setSoTimeout((int) server.config().startupTimeout().toMillis());
      Startup startup = new Startup(server, socket, startupIn, writer, settings, overCapacity);
      Startup.Login login = startup.run();
      if (login == null) {
        return;
      }
      loggedIn(login);
      socket.setSoTimeout(0);
      input = new ClientInput(startup.wire(), startup.in());
      in = new DataInputStream(input);
      loop();
    } catch (java.net.SocketTimeoutException e) {
      writer.fatal(SqlState.PROTOCOL_VIOLATION, "canceling authentication due to timeout");
    } catch (EOFException | SocketException e) {
      // the client went away
    } catch (ProtocolException e) {
      writer.fatal(SqlState.PROTOCOL_VIOLATION, e.getMessage());
    } catch (MessageBuffer.InvalidText e) {
      writer.fatal(SqlState.CHARACTER_NOT_IN_REPERTOIRE, e.getMessage());
    } catch (FloeException e) {
      writer.fatal(e.sqlState(), e.getMessage()); // a refused start-up (unsupported protocol version, ...)
    } catch (IOException e) {
      LOG.debug("connection {} failed: {}", processId, e.toString());
    } catch (RuntimeException e) {
      LOG.error("connection {} failed", processId, e);
      writer.fatal(SqlState.INTERNAL_ERROR, "internal error: " + e);
    } finally {
      cleanup();
    }
  }

  /**
   * The client logged in: its engine session opens, and it is sent AuthenticationOk, the reported
   * parameters, its cancel key and ReadyForQuery.
   */
  private void loggedIn(Startup.Login login) throws IOException {
    sessions.open(login.user(), login.database()).onNotice(writer::notice);
    settings.drainSet();
    idle = true; // from ReadyForQuery on, the session waits for its client
    synchronized (writer.lock()) {
      MessageWriter out = writer.out();
      out.begin('R').int32(0).end(); // AuthenticationOk
      for (Map.Entry<String, String> e : settings.reported().entrySet()) {
        out.begin('S').cstring(e.getKey()).cstring(e.getValue()).end();
      }
      settings.drainChanged();
      out.begin('K').int32(processId).int32(secretKey).end();
      writer.readyForQuery();
    }
  }

  // ------------------------------------------------------------------ message loop

  private void loop() throws IOException {
    boolean afterReady = true; // start-up ended with ReadyForQuery
    while (true) {
      if (afterReady && closing) {
        writer.fatal(SqlState.ADMIN_SHUTDOWN, "terminating connection due to administrator command");
        return;
      }
      idle = afterReady;
      MessageBuffer m = readMessage();
      idle = false;
      if (m == null) {
        return;
      }
      int type = m.type();
      cancelIdleTimer();
      if (extended.skipping() && type != 'S' && type != 'X') {
        continue;
      }
      synchronized (writer.lock()) {
        switch (type) {
          case 'Q' -> simpleQuery(m);
          case 'P' -> extended.step(() -> extended.parse(m));
          case 'B' -> extended.step(() -> extended.bind(m));
          case 'D' -> extended.step(() -> extended.describe(m));
          case 'E' -> extended.step(() -> extended.execute(m));
          case 'C' -> extended.step(() -> extended.close(m));
          case 'H' -> {
            m.end();
            writer.out().flush();
          }
          case 'S' -> {
            m.end();
            extended.sync();
          }
          case 'X' -> {
            return;
          }
          case 'd', 'c', 'f' -> {
            // COPY data outside COPY: ignored, as PostgreSQL does
          }
          case 'F' -> extended.step(() -> {
            throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "the function call protocol is not supported");
          });
          default -> throw ProtocolException.framing("invalid frontend message type " + type);
        }
      }
      afterReady = type == 'Q' || type == 'S';
      if (afterReady && server.isShuttingDown()) {
        // the statement (or extended batch) in progress has finished and been answered: now go
        writer.fatal(SqlState.ADMIN_SHUTDOWN, "terminating connection due to administrator command");
        return;
      }
      scheduleIdleTimer();
    }
  }

  /** The next message from the client, or null at end of stream. */
  private MessageBuffer readMessage() throws IOException {
    int type = in.read();
    if (type < 0) {
      return null;
    }
    if (FRONTEND_TYPES.indexOf(type) < 0) {
      // before reading a length that cannot be trusted: the stream is not framed as messages
      throw ProtocolException.framing("invalid frontend message type " + type);
    }
    int length = in.readInt();
    if (length < 4) {
      throw ProtocolException.framing("invalid message length " + length);
    }
    if (length - 4 > server.config().maxMessageBytes()) {
      throw ProtocolException.framing("message of " + length + " bytes exceeds the limit of "
          + server.config().maxMessageBytes() + " bytes");
    }
    return new MessageBuffer((byte) type, readBody(length - 4));
  }

  /**
   * A message body of {@code n} bytes, read in pieces: memory grows with the bytes that actually arrive,
   * not with the length a client claims.
   */
  private byte[] readBody(int n) throws IOException {
    if (n <= 64 * 1024) {
      byte[] body = new byte[n];
      in.readFully(body);
      return body;
    }
    java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream(64 * 1024);
    byte[] chunk = new byte[64 * 1024];
    int left = n;
    while (left > 0) {
      int got = in.read(chunk, 0, Math.min(chunk.length, left));
      if (got < 0) {
        throw new EOFException("the client closed the connection in the middle of a message");
      }
      body.write(chunk, 0, got);
      left -= got;
    }
    return body.toByteArray();
  }

  // ------------------------------------------------------------------ simple query

  private void simpleQuery(MessageBuffer m) throws IOException {
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
      writer.out().begin('I').end(); // EmptyQueryResponse
    }
    portals.closeAll(); // a simple query destroys the unnamed portal
    // Several statements outside a block run as one implicit transaction, as in PostgreSQL: all of them
    // or none. Floe does so when they only read and change rows (DDL runs outside transactions).
    boolean implicit = sessions.idle() && parts.size() > 1 && parts.stream().allMatch(p -> p.kind().rowLevel());
    TransactionState outside = sessions.session().transactionState();
    if (implicit) {
      sessions.session().begin();
    }
    boolean failed = false;
    for (Statement part : parts) {
      try {
        if (part.copy().isPresent()) {
          String tag = copyProtocol.copy(part.copy().get());
          writer.out().begin('C').cstring(tag).end();
          continue;
        }
        Reply reply = runner.run(part, null);
        try {
          if (reply.hasRows()) {
            writer.rowDescription(reply.columns(), reply::origin, null, false);
          }
          long sent = writer.sendRows(reply, new boolean[0], false, 0, part.offset());
          writer.out().begin('C').cstring(reply.tag(sent)).end();
        } finally {
          reply.close();
        }
      } catch (FloeException e) {
        writer.error(e.withPosition(0).position() > 0 ? shift(e, part.offset()) : e);
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
    if (implicit && sessions.session().inTransaction()) {
      try {
        if (failed) {
          sessions.session().rollback();
        } else {
          sessions.session().commit();
        }
      } catch (FloeException e) {
        writer.error(e);
      } finally {
        commands.transactionChanged(outside);
      }
    }
    writer.readyForQuery();
  }

  /** An error position in a statement of a script, as a position in the whole script. */
  private static FloeException shift(FloeException e, int offset) {
    if (e.position() <= 0 || offset == 0) {
      return e;
    }
    return new FloeException(e.sqlState(), e.getMessage(), e.detail().orElse(null), e.hint().orElse(null),
        e.position() + offset, e.getCause());
  }

  // ------------------------------------------------------------------ timers, cancel, shutdown

  private void scheduleIdleTimer() {
    long ms = settings.idleInTransactionTimeoutMillis();
    if (ms > 0 && !sessions.idle()) {
      idleTimer = server.timers().schedule(() -> {
        writer.fatal(SqlState.IDLE_IN_TRANSACTION_SESSION_TIMEOUT,
            "terminating connection due to idle-in-transaction timeout");
        closeSocket();
      }, ms, TimeUnit.MILLISECONDS);
    }
  }

  private void cancelIdleTimer() {
    if (idleTimer != null) {
      idleTimer.cancel(false);
      idleTimer = null;
    }
  }

  /** A CancelRequest with this connection's key: interrupts the running statement, if any. */
  void cancel() {
    sessions.cancel();
  }

  /** Server shutdown: an idle connection is told and closed now; a busy one after its statement. */
  void shutdown() {
    closing = true;
    if (idle) {
      writer.fatal(SqlState.ADMIN_SHUTDOWN, "terminating connection due to administrator command");
      closeSocket();
    }
  }

  /** Whether the connection is between statements, waiting for its client. */
  boolean isIdle() {
    return idle;
  }

  private void closeSocket() {
    try {
      socket.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  private void cleanup() {
    cancelIdleTimer();
    try {
      portals.closeAll();
      commands.closeCursors(true);
    } catch (RuntimeException ignored) {
      // closing anyway
    }
    sessions.close();
    closeSocket();
    server.closed(this);
  }
}
