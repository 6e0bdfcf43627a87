package dev.floe.exec;

import dev.floe.SqlState;
import dev.floe.catalog.FloeCatalog;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import org.duckdb.DuckDBColumnType;
import org.duckdb.DuckDBFunctions;
import org.duckdb.DuckDBReadableVector;
import org.duckdb.DuckDBScalarFunctionBuilder;
import org.duckdb.DuckDBScalarFunction;

/**
 * Sequences for {@code serial} and identity columns and CREATE SEQUENCE: durable counters in the catalog
 * database, handed out by this process in blocks (as PostgreSQL caches sequence values), so a
 * million-row INSERT does not make a million catalog writes. Values are unique and increasing per
 * process; a crash or another process leaves gaps, as in PostgreSQL.
 *
 * <p>PostgreSQL's sequence functions are DuckDB macros over volatile Java functions that also receive
 * the calling session (the session-local DuckDB variable {@code floe_session}), because currval and
 * lastval are per session:
 * {@code floe_nextval(seq)}, {@code floe_currval(seq)}, {@code floe_lastval()} and
 * {@code floe_setval(seq, value [, is_called])}.
 */
final class Sequences {
  static final String FUNCTION = "floe_nextval";
  /** The session-local DuckDB variable naming the session, for currval and lastval. */
  static final String SESSION_VARIABLE = "floe_session";
  private static final int BLOCK = 64;

  private final FloeCatalog catalog;
  private final Map<String, long[]> blocks = new HashMap<>(); // name -> {next, end}
  /** Per session: the value nextval (or setval) last gave each sequence, for currval. */
  private final Map<Long, Map<String, Long>> current = new HashMap<>();
  /** Per session: the value nextval last returned, for lastval. */
  private final Map<Long, Long> last = new HashMap<>();

  Sequences(FloeCatalog catalog) {
    this.catalog = catalog;
  }

  /** The SQL calling the next value of a sequence. */
  static String nextValueSql(String sequence) {
    return FUNCTION + "(" + dev.floe.sql.Lexer.quoteString(sequence) + ")";
  }

  /** A sequence name as users write it ({@code t_id_seq}): sequences of serial columns live in their table's schema. */
  private static String qualified(String name) {
    return name.contains(".") ? name : "public." + name;
  }

  private static String unqualified(String name) {
    return name.substring(name.lastIndexOf('.') + 1);
  }

  /** An error raised inside DuckDB: the prefix carries PostgreSQL's SQLSTATE out (DuckErrors). */
  private static IllegalArgumentException error(String sqlState, String message) {
    return new IllegalArgumentException(DuckErrors.PREFIX + sqlState + ":" + message);
  }

  synchronized long next(String name) {
    String sequence = qualified(name);
    // the next value, how many of the block are left, the step
    long[] b = blocks.computeIfAbsent(sequence, k -> new long[] {0, 0, 1});
    if (b[1] == 0) {
      if (!catalog.sequenceExists(sequence)) {
        blocks.remove(sequence);
        throw error(SqlState.UNDEFINED_TABLE, "relation \"" + name + "\" does not exist");
      }
      long[] reserved = catalog.reserve(sequence, BLOCK);
      b[0] = reserved[0];
      b[1] = BLOCK;
      b[2] = reserved[1];
    }
    long value = b[0];
    b[0] += b[2];
    b[1]--;
    return value;
  }

  /** nextval for a session: the next value, remembered as the session's currval and lastval. */
  synchronized long next(String name, long session) {
    long value = next(name);
    current.computeIfAbsent(session, s -> new HashMap<>()).put(qualified(name), value);
    last.put(session, value);
    return value;
  }

  /** currval: what nextval last returned for this sequence in this session (55000 if it never did). */
  synchronized long currentValue(String name, long session) {
    String sequence = qualified(name);
    if (!catalog.sequenceExists(sequence)) {
      throw error(SqlState.UNDEFINED_TABLE, "relation \"" + name + "\" does not exist");
    }
    Long value = current.getOrDefault(session, Map.of()).get(sequence);
    if (value == null) {
      throw error(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "currval of sequence \"" + unqualified(sequence)
          + "\" is not yet defined in this session");
    }
    return value;
  }

  /** lastval: what nextval last returned in this session, for any sequence (55000 if it never did). */
  synchronized long lastValue(long session) {
    Long value = last.get(session);
    if (value == null) {
      throw error(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "lastval is not yet defined in this session");
    }
    return value;
  }

  /**
   * setval: the sequence continues after {@code value} ({@code called}) or at it; durable when it
   * returns. With {@code called} the session's currval becomes {@code value}, as in PostgreSQL.
   */
  synchronized long set(String name, long value, boolean called, long session) {
    String sequence = qualified(name);
    if (!catalog.sequenceExists(sequence)) {
      throw error(SqlState.UNDEFINED_TABLE, "relation \"" + name + "\" does not exist");
    }
    if (value < 1 || (called && value == Long.MAX_VALUE)) {
      throw error(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "setval: value " + value + " is out of bounds for sequence \""
          + unqualified(sequence) + "\" (1.." + Long.MAX_VALUE + ")");
    }
    catalog.restartSequence(sequence, value, called);
    blocks.remove(sequence); // values this process reserved before no longer follow
    if (called) {
      current.computeIfAbsent(session, s -> new HashMap<>()).put(sequence, value);
    }
    return value;
  }

  /** Forgets a session's currval and lastval (the session ended, or DISCARD). */
  synchronized void forget(long session) {
    current.remove(session);
    last.remove(session);
  }

  void create(String sequence) {
    create(sequence, 1, 1);
  }

  void create(String sequence, long start, long increment) {
    catalog.createSequence(sequence, start, increment);
    synchronized (this) {
      blocks.remove(sequence);
    }
  }

  boolean exists(String sequence) {
    return catalog.sequenceExists(sequence);
  }

  /** ALTER SEQUENCE ... RESTART: {@code next} is the value handed out next; durable when it returns. */
  synchronized void restart(String sequence, long next) {
    catalog.restartSequence(sequence, next, false);
    blocks.remove(sequence); // values this process reserved before no longer follow
  }

  boolean drop(String sequence) {
    synchronized (this) {
      blocks.remove(sequence);
      current.values().forEach(values -> values.remove(sequence));
    }
    return catalog.dropSequence(sequence);
  }

  /** Registers the sequence functions and their macros in the DuckDB instance of {@code conn}. */
  void register(Connection conn) throws SQLException {
    ofSequence(conn, "floe_seq_next", this::next);
    ofSequence(conn, "floe_seq_curr", this::currentValue);
    function(conn, "floe_seq_last", DuckDBColumnType.BIGINT, (in, out) -> {
      DuckDBReadableVector session = in.vector(0);
      for (long r = 0; r < in.rowCount(); r++) {
        out.setLong(r, lastValue(session(session, r)));
      }
    }, DuckDBColumnType.BIGINT);
    function(conn, "floe_seq_set", DuckDBColumnType.BIGINT, (in, out) -> {
      DuckDBReadableVector name = in.vector(0);
      DuckDBReadableVector value = in.vector(1);
      DuckDBReadableVector called = in.vector(2);
      DuckDBReadableVector session = in.vector(3);
      for (long r = 0; r < in.rowCount(); r++) {
        if (name.isNull(r) || value.isNull(r) || called.isNull(r)) {
          out.setNull(r); // PostgreSQL's setval is strict
        } else {
          out.setLong(r, set(name.getString(r), value.getLong(r), called.getBoolean(r), session(session, r)));
        }
      }
    }, DuckDBColumnType.VARCHAR, DuckDBColumnType.BIGINT, DuckDBColumnType.BOOLEAN, DuckDBColumnType.BIGINT);
    String session = "CAST(getvariable('" + SESSION_VARIABLE + "') AS BIGINT)";
    try (Statement st = conn.createStatement()) {
      st.execute("CREATE MACRO " + FUNCTION + "(s) AS floe_seq_next(s, " + session + ")");
      st.execute("CREATE MACRO floe_currval(s) AS floe_seq_curr(s, " + session + ")");
      st.execute("CREATE MACRO floe_lastval() AS floe_seq_last(" + session + ")");
      st.execute("CREATE MACRO floe_setval(s, v) AS floe_seq_set(s, v, true, " + session + "), "
          + "(s, v, c) AS floe_seq_set(s, v, c, " + session + ")");
    }
  }

  /** What a function of (sequence name, session) computes. */
  private interface OfSequence {
    long apply(String name, long session);
  }

  /** Registers {@code name(varchar sequence, bigint session) -> bigint}, NULL for a NULL sequence. */
  private static void ofSequence(Connection conn, String name, OfSequence body) throws SQLException {
    function(conn, name, DuckDBColumnType.BIGINT, (in, out) -> {
      DuckDBReadableVector sequence = in.vector(0);
      DuckDBReadableVector session = in.vector(1);
      for (long r = 0; r < in.rowCount(); r++) {
        if (sequence.isNull(r)) {
          out.setNull(r);
        } else {
          out.setLong(r, body.apply(sequence.getString(r), session(session, r)));
        }
      }
    }, DuckDBColumnType.VARCHAR, DuckDBColumnType.BIGINT);
  }

  /** A session id from its vector; connections that are no session (the engine's own) share 0. */
  private static long session(DuckDBReadableVector v, long row) {
    return v.isNull(row) ? 0 : v.getLong(row);
  }

  private static void function(Connection conn, String name, DuckDBColumnType returns,
      DuckDBScalarFunction body, DuckDBColumnType... parameters) throws SQLException {
    try (DuckDBScalarFunctionBuilder b = DuckDBFunctions.scalarFunction()) {
      b.withName(name).withParameters(parameters).withReturnType(returns).withVolatile().withVectorizedFunction(body)
          .register(conn);
    }
  }
}
