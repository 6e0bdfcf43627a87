package dev.floe.server.pg;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.Notice;
import dev.floe.PgType;
import dev.floe.PgValues;
import dev.floe.Row;
import dev.floe.Session;
import dev.floe.SqlState;
import java.io.IOException;
import java.io.OutputStream;
import java.time.ZoneId;
import java.util.Iterator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connection's sending side: the {@link MessageWriter} on the client's socket (the TLS one once TLS
 * started), the lock every write to it takes, and the messages the protocols share: RowDescription and
 * the DataRows of a {@link Reply}, ErrorResponse, NoticeResponse, FATAL and ReadyForQuery.
 *
 * <p>Concurrency: the connection's thread holds {@link #lock()} while it answers a message (so whatever a
 * message handler writes is written under it); the timers thread (idle-in-transaction timeout) and the
 * shutdown path write a FATAL through {@link #fatal}, which takes the lock itself.
 */
final class ClientWriter {
  /** The connection's log (internal errors are logged as the connection's). */
  private static final Logger LOG = LoggerFactory.getLogger(PgConnection.class);

  private final Object lock = new Object();
  private final int processId;
  private final EngineSessions sessions;
  private final Settings settings;
  private final ConnectionLog log;
  private MessageWriter out;

  ClientWriter(int processId, EngineSessions sessions, Settings settings, ConnectionLog log) {
    this.log = log;
    this.processId = processId;
    this.sessions = sessions;
    this.settings = settings;
  }

  /** What every write to the client holds (writeLock). */
  Object lock() {
    return lock;
  }

  /** Writes to {@code stream} from now on: the socket's, then the TLS socket's. Called holding the lock. */
  void use(OutputStream stream) {
    out = new MessageWriter(stream);
  }

  /** The message buffer, for the messages of one protocol step; write holding {@link #lock()}. */
  MessageWriter out() {
    return out;
  }

  /**
   * RowDescription: each column's name, its table's oid and attribute number when it passes a table
   * column through (0 otherwise, as PostgreSQL), its type, and its format.
   */
  void rowDescription(List<Column> columns, java.util.function.IntFunction<java.util.Optional<
      dev.floe.ColumnOrigin>> origins, boolean[] binary, boolean allBinary) throws IOException {
    out.begin('T').int16(columns.size());
    for (int k = 0; k < columns.size(); k++) {
      Column c = columns.get(k);
      PgType t = PgType.of(c.type());
      java.util.Optional<dev.floe.ColumnOrigin> origin = origins.apply(k);
      out.cstring(c.name()).int32(origin.map(dev.floe.ColumnOrigin::tableOid).orElse(0))
          .int16(origin.map(dev.floe.ColumnOrigin::attributeNumber).orElse(0)).int32(t.oid()).int16(t.length())
          .int32(t.typmod()).int16(isBinary(binary, allBinary, k) ? 1 : 0);
    }
    out.end();
  }

  private static boolean isBinary(boolean[] binary, boolean allBinary, int k) {
    return allBinary || (binary != null && binary.length > 1 && binary[k]);
  }

  /** Sends up to {@code max} rows (0: all); returns how many were sent. */
  long sendRows(Reply reply, boolean[] binary, boolean allBinary, int max) throws IOException {
    if (!reply.hasRows()) {
      return 0;
    }
    List<Column> columns = reply.columns();
    PgType[] types = new PgType[columns.size()];
    boolean[] bin = new boolean[columns.size()];
    for (int k = 0; k < types.length; k++) {
      types[k] = PgType.of(columns.get(k).type());
      bin[k] = isBinary(binary, allBinary, k);
    }
    ZoneId zone = settings.zone();
    long sent = 0;
    ArrowCursor cursor = reply.cursor();
    if (cursor != null) {
      try (StatementClock.Timing ignored = sessions.startClock(true)) {
        // the engine is called (under the statement's clock) once a batch, when the one in hand is used up
        while ((max == 0 || sent < max) && (cursor.nextInBatch() || sessions.timed(() -> advance(cursor)))) {
          cursor.write(out, bin, zone);
          sent++;
        }
      }
      return sent;
    }
    Iterator<Row> rows = reply.rows();
    try (StatementClock.Timing ignored = sessions.startClock(true)) {
      while ((max == 0 || sent < max) && sessions.timedNext(rows)) {
        Row row = rows.next();
        out.begin('D').int16(types.length);
        try {
          for (int k = 0; k < types.length; k++) {
            Object v = row.get(k);
            out.value(bin[k] ? PgValues.binary(v, types[k], zone) : PgValues.text(v, zone));
          }
        } catch (RuntimeException e) {
          out.abandon();
          throw e;
        }
        out.end();
        sent++;
      }
    }
    return sent;
  }

  private static boolean advance(ArrowCursor cursor) {
    try {
      return cursor.next();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  void notice(Notice n) {
    try {
      out.begin('N').int8('S').cstring(n.severity()).int8('V').cstring(n.severity()).int8('C').cstring(n.sqlState())
          .int8('M').cstring(n.message()).int8(0).end();
    } catch (IOException e) {
      // the connection is failing; the statement's own reply reports it
    }
  }

  /** The connection was terminated (pg_terminate_backend) and told so with a FATAL: it ends. */
  static final class Terminated extends IOException {
    Terminated() {
      super("terminated by pg_terminate_backend");
    }
  }

  /**
   * ErrorResponse for a statement's error; 57P01 (its session was terminated, {@code pg_terminate_backend}) is
   * sent as FATAL, as PostgreSQL does, and ends the connection ({@link Terminated}).
   */
  void error(FloeException e) throws IOException {
    if (e.sqlState().equals(SqlState.ADMIN_SHUTDOWN)) {
      fatal(e.sqlState(), e.getMessage());
      throw new Terminated();
    }
    log.error(e);
    out.abandon();
    out.begin('E').int8('S').cstring("ERROR").int8('V').cstring("ERROR").int8('C').cstring(e.sqlState())
        .int8('M').cstring(e.getMessage());
    e.detail().ifPresent(d -> out.int8('D').cstring(d));
    e.hint().ifPresent(h -> out.int8('H').cstring(h));
    if (e.position() > 0) {
      out.int8('P').cstring(Integer.toString(e.position()));
    }
    e.context().ifPresent(c -> out.int8('W').cstring(c));
    e.violated().ifPresent(v -> out.int8('s').cstring(v.schema()).int8('t').cstring(v.table()).int8('n')
        .cstring(v.constraint()));
    out.int8(0).end();
  }

  /**
   * The error of a message read whole but malformed, as PostgreSQL reports it: 22021 for text that is not
   * UTF-8, else 08P01.
   */
  void malformed(RuntimeException e) throws IOException {
    error(new FloeException(e instanceof MessageBuffer.InvalidText ? SqlState.CHARACTER_NOT_IN_REPERTOIRE
        : SqlState.PROTOCOL_VIOLATION, e.getMessage()));
  }

  /** An unexpected failure while answering a message: logged, and reported to the client as XX000. */
  void internalError(RuntimeException e) throws IOException {
    LOG.error("internal error in connection {}", processId, e);
    error(new FloeException(SqlState.INTERNAL_ERROR, "internal error: " + e, e));
  }

  /** Sends a FATAL error (the connection then closes); failures to send are ignored. */
  void fatal(String code, String message) {
    log.fatal(code, message);
    synchronized (lock) {
      try {
        out.abandon();
        out.begin('E').int8('S').cstring("FATAL").int8('V').cstring("FATAL").int8('C').cstring(code)
            .int8('M').cstring(message).int8(0).end();
        out.flush();
      } catch (IOException | RuntimeException ignored) {
        // closing anyway
      }
    }
  }

  /** ParameterStatus for each reported setting that changed, then ReadyForQuery with the block's status. */
  void readyForQuery() throws IOException {
    for (String name : settings.drainChanged()) {
      out.begin('S').cstring(name).cstring(settings.get(name)).end();
    }
    Session session = sessions.session();
    out.begin('Z').int8(session == null ? 'I' : session.transactionState().indicator()).end();
    out.flush();
    out.shrink();
  }
}
