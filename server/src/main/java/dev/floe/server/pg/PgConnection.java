package dev.floe.server.pg;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketException;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection speaking the PostgreSQL v3 protocol, on its own thread: its life (start-up through
 * {@link Startup}, the end of the connection), the message loop that reads each message and hands it to
 * the protocol that answers it ({@link SimpleQuery}, {@link ExtendedQuery}), and what other threads do to
 * it: cancellation, server shutdown, the idle-in-transaction timeout. Statements run one at a time in the
 * connection's engine session ({@link EngineSessions}).
 *
 * <p>The parts and who uses whom: {@link ClientWriter} sends (every protocol writes through it, holding its
 * lock); {@link EngineSessions} holds the engine sessions and the {@link StatementClock};
 * {@link StatementRunner} runs a statement in the right session, session commands in
 * {@link SessionCommands}; {@link Portals} keeps prepared statements and portals; {@link CopyProtocol}
 * exchanges COPY data, reading the client's messages through this connection.
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
  /** The connection's engine session, the helper sessions beside it, and the clock they run under. */
  private final EngineSessions sessions;
  /** What the connection sends, and the lock on sending (writeLock). */
  private final ClientWriter writer;
  /** Prepared statements and portals. */
  private final Portals portals = new Portals();
  /** SET/SHOW/RESET, DISCARD, DEALLOCATE and SQL cursors. */
  private final SessionCommands commands;
  private final SimpleQuery simple;
  private final ExtendedQuery extended;
  /** Waiting for the client after ReadyForQuery: nothing of it is in progress. */
  private volatile boolean idle;
  private volatile boolean closing;
  private ScheduledFuture<?> idleTimer;
  /** What the operator's log says of this connection. */
  private final ConnectionLog log;

  PgConnection(PgServer server, Socket socket, int processId, int secretKey, boolean overCapacity) {
    this.server = server;
    this.socket = socket;
    this.processId = processId;
    this.secretKey = secretKey;
    this.overCapacity = overCapacity;
    StatementClock clock = new StatementClock(server, () -> settings.statementTimeoutMillis(), () -> input);
    this.sessions = new EngineSessions(server, processId, settings, clock);
    this.log = new ConnectionLog(processId, server.config().logMinDurationMs());
    this.writer = new ClientWriter(processId, sessions, settings, log);
    this.commands = new SessionCommands(sessions, settings, portals);
    StatementRunner runner = new StatementRunner(sessions, commands, portals, log);
    CopyProtocol copy = new CopyProtocol(sessions, settings, writer, this::readMessage);
    this.simple = new SimpleQuery(sessions, portals, commands, runner, copy, writer);
    this.extended = new ExtendedQuery(sessions, portals, commands, runner, copy, writer);
  }

  int processId() {
    return processId;
  }

  int secretKey() {
    return secretKey;
  }

  @Override
  public void run() {
    log.received(socket.getRemoteSocketAddress());
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
      log.authorized(login.user(), login.database(), settings.get("application_name"),
          startup.wire() instanceof javax.net.ssl.SSLSocket);
      socket.setSoTimeout(0);
      input = new ClientInput(startup.wire(), startup.in());
      in = new DataInputStream(input);
      loop();
    } catch (java.net.SocketTimeoutException e) {
      writer.fatal(SqlState.PROTOCOL_VIOLATION, "canceling authentication due to timeout");
    } catch (EOFException | SocketException | ClientWriter.Terminated e) {
      // the client went away, or pg_terminate_backend ended the connection (told with a FATAL)
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
    java.net.SocketAddress remote = socket.getRemoteSocketAddress();
    sessions.open(login.user(), login.database(), remote instanceof java.net.InetSocketAddress a ? a : null,
        this::terminate).onNotice(writer::notice);
    settings.superuser(sessions.session().superuser()); // reported below
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
      if (m == null || m.type() == 'X') {
        return; // the client went away or said goodbye: ending, never busy
      }
      idle = false;
      int type = m.type();
      cancelIdleTimer();
      if (extended.skipping() && type != 'S') {
        continue;
      }
      synchronized (writer.lock()) {
        switch (type) {
          case 'Q' -> simple.run(m);
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

  /**
   * {@code pg_terminate_backend} ended the connection's engine session (on the terminating thread): an idle
   * connection is told (FATAL 57P01) and closed now; a busy one's statement fails with 57P01, sent as FATAL,
   * or, past its commit point, ends and the connection is closed before the next message.
   */
  void terminate() {
    shutdown();
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

  /** The server's clock tick: the running statement's timeout and client watch ({@link StatementClock#tick}). */
  void tick(long nowNanos) {
    sessions.clock().tick(nowNanos);
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
    log.disconnected();
  }
}
