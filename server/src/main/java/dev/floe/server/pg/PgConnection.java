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
import dev.floe.server.pg.Portals.Portal;
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
  /** After an error in the extended protocol, messages are skipped until Sync. */
  private boolean skipUntilSync;
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
      if (skipUntilSync && type != 'S' && type != 'X') {
        continue;
      }
      synchronized (writer.lock()) {
        switch (type) {
          case 'Q' -> simpleQuery(m);
          case 'P' -> extended(() -> parse(m));
          case 'B' -> extended(() -> bind(m));
          case 'D' -> extended(() -> describe(m));
          case 'E' -> extended(() -> execute(m));
          case 'C' -> extended(() -> close(m));
          case 'H' -> {
            m.end();
            writer.out().flush();
          }
          case 'S' -> {
            m.end();
            sync();
          }
          case 'X' -> {
            return;
          }
          case 'd', 'c', 'f' -> {
            // COPY data outside COPY: ignored, as PostgreSQL does
          }
          case 'F' -> extended(() -> {
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

  private interface Step {
    void run() throws IOException;
  }

  /** Runs an extended-protocol step; an error skips the rest of the batch up to Sync. */
  private void extended(Step step) throws IOException {
    try {
      step.run();
    } catch (ProtocolException | MessageBuffer.InvalidText e) {
      if (e instanceof ProtocolException p && p.isFraming()) {
        throw p;
      }
      writer.malformed(e); // a message read whole but malformed: an error, the connection goes on
      skipUntilSync = true;
    } catch (FloeException e) {
      writer.error(e);
      skipUntilSync = true;
    } catch (RuntimeException e) {
      writer.internalError(e);
      skipUntilSync = true;
    }
  }

  private void sync() throws IOException {
    skipUntilSync = false;
    if (sessions.idle()) {
      portals.closeAll(); // portals live until the end of their transaction: here, each statement
    }
    writer.readyForQuery();
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

  // ------------------------------------------------------------------ extended query

  private void parse(MessageBuffer m) throws IOException {
    String name = m.cstring("statement name");
    String sql = m.cstring("query string");
    int n = m.int16("parameter count");
    if (n < 0) {
      throw new ProtocolException("invalid parameter count " + n);
    }
    int[] types = new int[n];
    for (int k = 0; k < n; k++) {
      types[k] = m.int32("parameter type");
    }
    m.end();
    if (!name.isEmpty() && portals.hasStatement(name)) {
      throw new FloeException(SqlState.DUPLICATE_PREPARED_STATEMENT, "prepared statement \"" + name
          + "\" already exists");
    }
    Prepared p = Prepared.parse(sql, types);
    sessions.checkNotAborted(p.statement());
    portals.putStatement(name, p);
    writer.out().begin('1').end(); // ParseComplete
  }

  private void bind(MessageBuffer m) throws IOException {
    String portalName = m.cstring("portal name");
    String statementName = m.cstring("statement name");
    int nFormats = m.int16("parameter format count");
    if (nFormats < 0) {
      throw new ProtocolException("invalid parameter format count " + nFormats);
    }
    int[] formats = new int[nFormats];
    for (int k = 0; k < nFormats; k++) {
      formats[k] = format(m.int16("parameter format"));
    }
    int nParams = m.int16("parameter count");
    if (nParams < 0) {
      throw new ProtocolException("invalid parameter count " + nParams);
    }
    byte[][] values = new byte[nParams][];
    for (int k = 0; k < nParams; k++) {
      int len = m.int32("parameter length");
      if (len < -1) {
        throw new ProtocolException("invalid parameter length " + len);
      }
      values[k] = len == -1 ? null : m.bytes(len, "parameter value");
    }
    int nResults = m.int16("result format count");
    if (nResults < 0) {
      throw new ProtocolException("invalid result format count " + nResults);
    }
    int[] results = new int[nResults];
    for (int k = 0; k < nResults; k++) {
      results[k] = format(m.int16("result format"));
    }
    m.end();
    Prepared p = portals.statement(statementName);
    if (p == null) {
      throw new FloeException(SqlState.INVALID_SQL_STATEMENT_NAME, "prepared statement \"" + statementName
          + "\" does not exist");
    }
    if (nFormats > 1 && nFormats != nParams) {
      throw new ProtocolException("bind message has " + nFormats + " parameter formats but " + nParams
          + " parameters");
    }
    if (nParams != p.parameterCount()) {
      throw new ProtocolException("bind message supplies " + nParams + " parameters, but prepared statement \""
          + statementName + "\" requires " + p.parameterCount());
    }
    if (!portalName.isEmpty() && portals.hasPortal(portalName)) {
      throw new FloeException(SqlState.DUPLICATE_CURSOR, "cursor \"" + portalName + "\" already exists");
    }
    sessions.checkNotAborted(p.statement());
    boolean[] binary = new boolean[nParams];
    for (int k = 0; k < nParams; k++) {
      binary[k] = nFormats == 1 ? formats[0] == 1 : nFormats > 1 && formats[k] == 1;
    }
    Prepared.Bound bound = p.bound(values, binary);
    boolean[] binaryResults = new boolean[nResults];
    for (int k = 0; k < nResults; k++) {
      binaryResults[k] = results[k] == 1;
    }
    portals.putPortal(portalName, new Portal(p, bound, binaryResults, nResults == 1 && results[0] == 1));
    writer.out().begin('2').end(); // BindComplete
  }

  private static int format(int code) {
    if (code != 0 && code != 1) {
      throw new ProtocolException("invalid format code " + code);
    }
    return code;
  }

  private void describe(MessageBuffer m) throws IOException {
    byte what = m.int8("describe target");
    String name = m.cstring("name");
    m.end();
    if (what == 'S') {
      Prepared p = portals.statement(name);
      if (p == null) {
        throw new FloeException(SqlState.INVALID_SQL_STATEMENT_NAME, "prepared statement \"" + name
            + "\" does not exist");
      }
      if (p.statement().kind() != StatementKind.COPY) {
        p.infer(() -> sessions.session().parameterTypes(p.sql(), p.parameterCount()));
      }
      int[] oids = p.parameterOids();
      writer.out().begin('t').int16(oids.length);
      for (int oid : oids) {
        writer.out().int32(oid);
      }
      writer.out().end();
      List<Column> columns = describeStatement(p);
      if (columns.isEmpty()) {
        writer.out().begin('n').end(); // NoData
      } else {
        writer.rowDescription(columns, k -> java.util.Optional.empty(), null, false);
      }
    } else if (what == 'P') {
      Portal portal = portals.portal(name);
      Reply cursor = portal == null ? commands.cursor(name) : null;
      if (cursor != null) {
        // a DECLAREd cursor is a portal too (psycopg 3 describes its server-side cursors so)
        writer.rowDescription(cursor.columns(), cursor::origin, null, false);
        return;
      }
      if (portal == null) {
        throw new FloeException(SqlState.INVALID_CURSOR_NAME, "portal \"" + name + "\" does not exist");
      }
      if (!portal.statement.statement().returnsRows()) {
        writer.out().begin('n').end();
        return;
      }
      start(portal);
      List<Column> columns = portal.columns;
      if (columns.isEmpty()) {
        writer.out().begin('n').end();
      } else {
        checkFormats(portal, columns.size());
        writer.rowDescription(columns, portal.origins, portal.binaryResults, portal.allBinary);
      }
    } else {
      throw new ProtocolException("invalid DESCRIBE message subtype " + what);
    }
  }

  private void execute(MessageBuffer m) throws IOException {
    String name = m.cstring("portal name");
    int maxRows = Math.max(0, m.int32("row limit")); // zero or less: all rows, as in PostgreSQL
    m.end();
    Portal portal = portals.portal(name);
    if (portal == null) {
      throw new FloeException(SqlState.INVALID_CURSOR_NAME, "portal \"" + name + "\" does not exist");
    }
    if (portal.statement.isEmpty()) {
      writer.out().begin('I').end();
      return;
    }
    if (portal.done) {
      // PostgreSQL answers a re-executed, exhausted portal with an empty completion
      writer.out().begin('C').cstring("SELECT 0").end();
      return;
    }
    java.util.Optional<Copy> copy = portal.statement.statement().copy();
    if (copy.isPresent()) {
      portal.done = true;
      String tag = copyProtocol.copy(copy.get());
      writer.out().begin('C').cstring(tag).end();
      return;
    }
    start(portal);
    try {
      if (portal.reply.hasRows()) {
        checkFormats(portal, portal.reply.columns().size());
      }
      long before = portal.sent;
      portal.sent += writer.sendRows(portal.reply, portal.binaryResults, portal.allBinary, maxRows, 0);
      if (maxRows > 0 && portal.sent - before == maxRows && hasMore(portal.reply)) {
        writer.out().begin('s').end(); // PortalSuspended
        return;
      }
      writer.out().begin('C').cstring(portal.reply.tag(portal.sent)).end();
      portal.done = true;
      portal.close();
    } catch (RuntimeException e) {
      portal.done = true;
      portal.close();
      throw e;
    }
  }

  private static boolean hasMore(Reply reply) {
    if (!reply.hasRows()) {
      return false;
    }
    ArrowCursor cursor = reply.cursor();
    return cursor != null ? advanceCheck(cursor) : reply.rows().hasNext();
  }

  private static boolean advanceCheck(ArrowCursor cursor) {
    try {
      return cursor.hasNext();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private void checkFormats(Portal portal, int columns) {
    int n = portal.binaryResults.length;
    if (n > 1 && n != columns) {
      throw new ProtocolException("bind message has " + n + " result formats but query has " + columns
          + " columns");
    }
  }

  private void close(MessageBuffer m) throws IOException {
    byte what = m.int8("close target");
    String name = m.cstring("name");
    m.end();
    if (what == 'S') {
      portals.removeStatement(name);
    } else if (what == 'P') {
      portals.closePortal(name);
    } else {
      throw new ProtocolException("invalid CLOSE message subtype " + what);
    }
    writer.out().begin('3').end(); // CloseComplete
  }

  private void start(Portal portal) {
    if (portal.reply == null && !portal.done) {
      try {
        // without parameters the statement runs as the engine parsed it at Parse
        portal.reply = runner.run(portal.statement.statement(), portal.statement.parameterCount() == 0 ? null : portal.sql);
        portal.columns = portal.reply.columns();
        portal.origins = portal.reply::origin;
      } catch (FloeException e) {
        throw inClientText(e, portal.bound);
      }
    }
  }

  /** An error whose position is in the bound text, with the position in the text the client sent. */
  private static FloeException inClientText(FloeException e, Prepared.Bound bound) {
    if (e.position() <= 0) {
      return e;
    }
    return new FloeException(e.sqlState(), e.getMessage(), e.detail().orElse(null), e.hint().orElse(null),
        bound.originalPosition(e.position()), e.getCause());
  }

  /**
   * The result columns of a prepared statement, before it has parameters: a query runs with NULL
   * parameters and no rows; statements with side effects are not run (RETURNING is described when the
   * statement is bound and executed).
   */
  @SuppressWarnings("unchecked")
  private List<Column> describeStatement(Prepared p) {
    if (p.describedColumns != null) {
      return (List<Column>) p.describedColumns;
    }
    List<Column> columns = List.of();
    Statement statement = p.statement();
    if (statement.command().map(c -> c.kind() == SessionCommand.Kind.SHOW).orElse(false)) {
      try (Reply r = runner.run(statement, null)) {
        columns = r.columns();
      }
    } else if (statement.kind() == StatementKind.QUERY || statement.kind() == StatementKind.UTILITY) {
      String sql = p.bind(null, null);
      String probe = statement.kind() == StatementKind.QUERY
          ? "SELECT * FROM (" + sql + ") AS floe_describe LIMIT 0" : sql;
      try (Reply r = runner.run(Statement.parse(probe), probe)) {
        columns = r.columns();
      }
    }
    p.describedColumns = columns;
    return columns;
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
