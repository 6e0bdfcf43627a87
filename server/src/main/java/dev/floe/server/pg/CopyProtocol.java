package dev.floe.server.pg;

import dev.floe.Column;
import dev.floe.Copy;
import dev.floe.CopyIn;
import dev.floe.FloeException;
import dev.floe.PgType;
import dev.floe.PgValues;
import dev.floe.Row;
import dev.floe.SqlState;
import dev.floe.CopyEncoder;
import java.io.EOFException;
import java.io.IOException;
import java.time.ZoneId;
import java.util.Iterator;
import java.util.List;

/**
 * The COPY sub-protocol: COPY TO STDOUT (CopyOutResponse, the rows as CopyData in text, CSV or binary,
 * CopyDone) and COPY FROM STDIN (CopyInResponse, then the client's CopyData into the engine's
 * {@link CopyIn}, which parses it, until CopyDone; CopyFail, a cancel or a disconnect fails it). Runs in the
 * connection's own engine session, under one clock from the first byte to the commit.
 */
final class CopyProtocol {
  /** The client's messages, read by the connection: the next one, or null at end of stream. */
  interface Messages {
    MessageBuffer next() throws IOException;
  }

  private final EngineSessions sessions;
  private final Settings settings;
  private final ClientWriter writer;
  private final Messages messages;

  CopyProtocol(EngineSessions sessions, Settings settings, ClientWriter writer, Messages messages) {
    this.sessions = sessions;
    this.settings = settings;
    this.writer = writer;
    this.messages = messages;
  }

  /** Runs a COPY FROM STDIN or TO STDOUT, exchanging its data with the client; returns the tag. */
  String copy(Copy c) throws IOException {
    sessions.requireNotFailed();
    try {
      return c.in() ? copyIn(c) : copyOut(c);
    } catch (RuntimeException e) {
      sessions.session().failTransaction();
      throw e;
    }
  }

  private String copyOut(Copy c) throws IOException {
    MessageWriter out = writer.out();
    String columns = c.columns().isEmpty() ? "*" : String.join(", ", c.columns());
    String query = c.query() != null ? c.query() : "SELECT " + columns + " FROM " + c.table();
    try (Reply reply = Reply.of(sessions.timed(() -> sessions.session().sql(query)))) {
      if (!reply.hasRows()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "COPY query must have a RETURNING clause or return rows");
      }
      List<Column> cols = reply.columns();
      boolean binary = c.format() == Copy.Format.BINARY;
      out.begin('H').int8(binary ? 1 : 0).int16(cols.size());
      for (int k = 0; k < cols.size(); k++) {
        out.int16(binary ? 1 : 0);
      }
      out.end();
      ZoneId zone = settings.zone();
      if (binary) {
        out.begin('d').bytes(BINARY_SIGNATURE).int32(0).int32(0).end();
      } else if (c.header()) {
        out.begin('d').bytes(c.header(cols.stream().map(Column::name).toList())
            .getBytes(java.nio.charset.StandardCharsets.UTF_8)).end();
      }
      long n;
      ArrowCursor cursor = CopyEncoder.handles(c) ? reply.cursor() : null;
      try (StatementClock.Timing ignored = sessions.startClock(true)) {
        n = cursor != null ? copyRows(cursor, new CopyEncoder(c, cols, zone), out) : copyRows(c, reply, out, zone);
      }
      if (binary) {
        out.begin('d').int16(-1).end();
      }
      out.begin('c').end(); // CopyDone
      return c.tag(n);
    }
  }

  /**
   * The rows straight from Arrow batches, one CopyData message each (as PostgreSQL sends them: clients such
   * as psycopg 3's {@code rows()} parse each message as a row).
   */
  private long copyRows(ArrowCursor cursor, CopyEncoder encoder, MessageWriter out) throws IOException {
    long n = 0;
    long batch = -1;
    while (cursor.nextInBatch() || sessions.timed(() -> advance(cursor))) {
      if (cursor.batches() != batch) {
        batch = cursor.batches();
        encoder.batch(cursor.vectors());
      }
      out.begin('d');
      try {
        encoder.row(out, cursor.row());
      } catch (RuntimeException e) {
        out.abandon();
        throw e;
      }
      out.end();
      n++;
    }
    return n;
  }

  private static boolean advance(ArrowCursor cursor) {
    try {
      return cursor.next();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The rows one at a time as Java values (rows made here, a delimiter of more than one byte). */
  private long copyRows(Copy c, Reply reply, MessageWriter out, ZoneId zone) throws IOException {
    List<Column> cols = reply.columns();
    boolean binary = c.format() == Copy.Format.BINARY;
    PgType[] types = cols.stream().map(col -> PgType.of(col.type())).toArray(PgType[]::new);
    long n = 0;
    Iterator<Row> rows = reply.rows();
    while (sessions.timedNext(rows)) {
      Row row = rows.next();
      Object[] values = new Object[cols.size()];
      for (int k = 0; k < values.length; k++) {
        values[k] = row.get(k);
      }
      if (binary) {
        out.begin('d').int16(values.length);
        for (int k = 0; k < values.length; k++) {
          out.value(PgValues.binary(values[k], types[k], zone));
        }
        out.end();
      } else {
        out.begin('d').bytes(c.line(values, zone).getBytes(java.nio.charset.StandardCharsets.UTF_8)).end();
      }
      n++;
    }
    return n;
  }

  private static final byte[] BINARY_SIGNATURE = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0};

  private String copyIn(Copy c) throws IOException {
    MessageWriter out = writer.out();
    // The target's columns and types, and a check that it exists, before the client sends data.
    try (CopyIn copy = sessions.session().copyIn(c);
        StatementClock.Timing timing = sessions.startClock(false)) { // one clock from the first byte to the commit
      List<Column> target = copy.columns();
      out.begin('G').int8(copy.binary() ? 1 : 0).int16(target.size());
      for (int k = 0; k < target.size(); k++) {
        out.int16(copy.binary() ? 1 : 0);
      }
      out.end();
      out.flush();
      try (java.io.OutputStream data = copy.data()) {
        receiveCopyData(data);
      }
      try (Reply r = Reply.of(sessions.timed(copy::load))) { // the client waits now: watched
        String tag = r.tag(0);
        return "COPY " + tag.substring(tag.lastIndexOf(' ') + 1);
      }
    }
  }

  /** Reads CopyData into {@code o} until CopyDone; CopyFail or a disconnect fails the COPY. */
  private void receiveCopyData(java.io.OutputStream o) throws IOException {
    StatementClock clock = sessions.clock();
    while (true) {
      MessageBuffer m = messages.next();
      if (m == null) {
        throw new EOFException("client closed the connection during COPY");
      }
      if (clock.cancelRequested()) {
        // what the client still sends is ignored: COPY messages outside COPY are
        throw new FloeException(SqlState.QUERY_CANCELED, clock.cancelMessage());
      }
      switch (m.type()) {
        case 'd' -> o.write(m.bytes(m.remaining(), "copy data"));
        case 'c' -> {
          return;
        }
        case 'f' -> {
          byte[] why = m.bytes(m.remaining(), "error message");
          int len = why.length > 0 && why[why.length - 1] == 0 ? why.length - 1 : why.length;
          throw new FloeException(SqlState.QUERY_CANCELED, "COPY from stdin failed: "
              + new String(why, 0, len, java.nio.charset.StandardCharsets.UTF_8));
        }
        case 'H', 'S' -> { } // allowed during COPY, no effect
        case 'X' -> throw new EOFException("client terminated the connection during COPY"); // nothing is copied
        default -> throw ProtocolException.framing("unexpected message type 0x" + Integer.toHexString(m.type())
            + " during COPY from stdin");
      }
    }
  }
}
