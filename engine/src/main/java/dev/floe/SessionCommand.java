package dev.floe;

/**
 * A statement about the front end's session rather than the data ({@link StatementKind#SESSION}), which a
 * front end answers itself: run-time parameters, prepared-statement and cursor management. The engine
 * parses it ({@link Statement#command()}); transaction control is not one of these: the engine runs it.
 *
 * @param kind what the statement does
 * @param name the parameter, prepared statement or cursor it names (null for none, or ALL)
 * @param value SET and set_config: the new value (null: DEFAULT)
 * @param count FETCH and MOVE: how many rows ({@link Long#MAX_VALUE} for ALL)
 * @param hold DECLARE: WITH HOLD (the cursor outlives its transaction)
 * @param query DECLARE: the cursor's query
 * @param isolation SET SESSION CHARACTERISTICS: the default isolation level it sets, or null
 * @param readOnly SET SESSION CHARACTERISTICS: the default access mode it sets, or null
 */
public record SessionCommand(Kind kind, String name, String value, long count, boolean hold, String query,
    String isolation, Boolean readOnly) {

  /** The session statements PostgreSQL clients send. */
  public enum Kind { SET, SHOW, RESET, SESSION_CHARACTERISTICS, DISCARD_ALL, DISCARD_SEQUENCES, DISCARD_PLANS,
    DISCARD_TEMP, DEALLOCATE, DECLARE, FETCH, MOVE, CLOSE, SET_CONFIG }

  /** A command of {@code kind} naming {@code name}, with {@code value} (SET, SET_CONFIG). */
  public static SessionCommand of(Kind kind, String name, String value) {
    return new SessionCommand(kind, name, value, 0, false, null, null, null);
  }

  public static SessionCommand declare(String cursor, boolean hold, String query) {
    return new SessionCommand(Kind.DECLARE, cursor, null, 0, hold, query, null, null);
  }

  public static SessionCommand fetch(Kind kind, String cursor, long count) {
    return new SessionCommand(kind, cursor, null, count, false, null, null, null);
  }

  public static SessionCommand characteristics(String isolation, Boolean readOnly) {
    return new SessionCommand(Kind.SESSION_CHARACTERISTICS, null, null, 0, false, null, isolation, readOnly);
  }

  /** Whether it returns rows: SHOW, FETCH, and set_config (which returns the new value). */
  public boolean returnsRows() {
    return kind == Kind.SHOW || kind == Kind.FETCH || kind == Kind.SET_CONFIG;
  }

  /** The command tag PostgreSQL sends for it (FETCH and MOVE add their row count). */
  public String tag() {
    return switch (kind) {
      case SET, SESSION_CHARACTERISTICS -> "SET";
      case SHOW -> "SHOW";
      case RESET -> "RESET";
      case DISCARD_ALL -> "DISCARD ALL";
      case DISCARD_SEQUENCES -> "DISCARD SEQUENCES";
      case DISCARD_PLANS -> "DISCARD PLANS";
      case DISCARD_TEMP -> "DISCARD TEMP";
      case DEALLOCATE -> name == null ? "DEALLOCATE ALL" : "DEALLOCATE";
      case DECLARE -> "DECLARE CURSOR";
      case FETCH -> "FETCH";
      case MOVE -> "MOVE";
      case CLOSE -> "CLOSE CURSOR";
      case SET_CONFIG -> "SELECT 1";
    };
  }
}
