package dev.floe.server.pg;

import dev.floe.Column;
import dev.floe.Copy;
import dev.floe.FloeException;
import dev.floe.SessionCommand;
import dev.floe.SqlState;
import dev.floe.Statement;
import dev.floe.StatementKind;
import dev.floe.server.pg.Portals.Portal;
import java.io.IOException;
import java.util.List;

/**
 * The extended query protocol: Parse (a {@link Prepared} statement), Bind (a {@link Portal}), Describe,
 * Execute (up to a row limit, leaving the portal suspended), Close and Sync, and its error rule: after an
 * error, messages are skipped until Sync. Statements run through the {@link StatementRunner} (a portal's
 * result stays open in the engine session between Executes, so statements beside it run in helper
 * sessions); COPY through {@link CopyProtocol}.
 */
final class ExtendedQuery {
  private final EngineSessions sessions;
  private final Portals portals;
  private final SessionCommands commands;
  private final StatementRunner runner;
  private final CopyProtocol copyProtocol;
  private final ClientWriter writer;
  /** After an error in the extended protocol, messages are skipped until Sync. */
  private boolean skipUntilSync;

  ExtendedQuery(EngineSessions sessions, Portals portals, SessionCommands commands, StatementRunner runner,
      CopyProtocol copyProtocol, ClientWriter writer) {
    this.sessions = sessions;
    this.portals = portals;
    this.commands = commands;
    this.runner = runner;
    this.copyProtocol = copyProtocol;
    this.writer = writer;
  }

  /** One message's handling. */
  interface Step {
    void run() throws IOException;
  }

  /** Runs an extended-protocol step; an error skips the rest of the batch up to Sync. */
  void step(Step step) throws IOException {
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

  /** Whether messages are skipped, after an error, until Sync. */
  boolean skipping() {
    return skipUntilSync;
  }

  /** Sync: the end of a batch; outside a block its portals close; ReadyForQuery. */
  void sync() throws IOException {
    skipUntilSync = false;
    if (sessions.idle()) {
      portals.closeAll(); // portals live until the end of their transaction: here, each statement
    }
    writer.readyForQuery();
  }

  void parse(MessageBuffer m) throws IOException {
    MessageWriter out = writer.out();
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
    out.begin('1').end(); // ParseComplete
  }

  void bind(MessageBuffer m) throws IOException {
    MessageWriter out = writer.out();
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
    out.begin('2').end(); // BindComplete
  }

  private static int format(int code) {
    if (code != 0 && code != 1) {
      throw new ProtocolException("invalid format code " + code);
    }
    return code;
  }

  void describe(MessageBuffer m) throws IOException {
    MessageWriter out = writer.out();
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
      out.begin('t').int16(oids.length);
      for (int oid : oids) {
        out.int32(oid);
      }
      out.end();
      List<Column> columns = describeStatement(p);
      if (columns.isEmpty()) {
        out.begin('n').end(); // NoData
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
        out.begin('n').end();
        return;
      }
      start(portal);
      List<Column> columns = portal.columns;
      if (columns.isEmpty()) {
        out.begin('n').end();
      } else {
        checkFormats(portal, columns.size());
        writer.rowDescription(columns, portal.origins, portal.binaryResults, portal.allBinary);
      }
    } else {
      throw new ProtocolException("invalid DESCRIBE message subtype " + what);
    }
  }

  void execute(MessageBuffer m) throws IOException {
    MessageWriter out = writer.out();
    String name = m.cstring("portal name");
    int maxRows = Math.max(0, m.int32("row limit")); // zero or less: all rows, as in PostgreSQL
    m.end();
    Portal portal = portals.portal(name);
    if (portal == null) {
      throw new FloeException(SqlState.INVALID_CURSOR_NAME, "portal \"" + name + "\" does not exist");
    }
    if (portal.statement.isEmpty()) {
      out.begin('I').end();
      return;
    }
    if (portal.done) {
      // PostgreSQL answers a re-executed, exhausted portal with an empty completion
      out.begin('C').cstring("SELECT 0").end();
      return;
    }
    java.util.Optional<Copy> copy = portal.statement.statement().copy();
    if (copy.isPresent()) {
      portal.done = true;
      String tag = copyProtocol.copy(copy.get());
      out.begin('C').cstring(tag).end();
      return;
    }
    start(portal);
    try {
      if (portal.reply.hasRows()) {
        checkFormats(portal, portal.reply.columns().size());
      }
      long sent = writer.sendRows(portal.reply, portal.binaryResults, portal.allBinary, maxRows);
      if (maxRows > 0 && sent == maxRows && hasMore(portal.reply)) {
        out.begin('s').end(); // PortalSuspended
        return;
      }
      // As PostgreSQL's, the count is of the rows this Execute sent, not of the portal's whole result
      out.begin('C').cstring(portal.reply.tag(sent)).end();
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

  void close(MessageBuffer m) throws IOException {
    MessageWriter out = writer.out();
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
    out.begin('3').end(); // CloseComplete
  }

  private void start(Portal portal) {
    if (portal.reply == null && !portal.done) {
      try {
        // without parameters the statement runs as the engine parsed it at Parse
        portal.reply = runner.run(portal.statement.statement(),
            portal.statement.parameterCount() == 0 ? null : portal.sql);
        portal.columns = portal.reply.columns();
        portal.origins = portal.reply::origin;
      } catch (FloeException e) {
        throw inClientText(e, portal.bound);
      }
    }
  }

  /** An error whose position is in the bound text, with the position in the text the client sent. */
  private static FloeException inClientText(FloeException e, Prepared.Bound bound) {
    return e.movedTo(bound.originalPosition(e.position()));
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
}
