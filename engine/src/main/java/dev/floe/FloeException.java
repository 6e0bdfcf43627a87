package dev.floe;

import java.util.Objects;
import java.util.Optional;

/**
 * An error a user of Floe can act on. Every error that reaches a client carries a PostgreSQL SQLSTATE
 * ({@link SqlState}), a message in PostgreSQL's style, and where it applies the 1-based character
 * position in the statement text that caused it.
 *
 * <p>A statement that fails with this exception changed nothing: no data or metadata became visible.
 * The one exception is {@link SqlState#TRANSACTION_RESOLUTION_UNKNOWN} (08007): the commit's outcome is
 * unknown, and the change may be in the table.
 */
public class FloeException extends RuntimeException {
  private final String sqlState;
  private final String detail;
  private final String hint;
  private final int position;
  /** The object an integrity error is about (schema, table, constraint), as PostgreSQL names it; or null. */
  private Violated violated;
  /** Where the error happened, as PostgreSQL's CONTEXT says it (a COPY's line); or null. */
  private String context;

  /** The constraint an integrity error (23xxx) violated, and its table. */
  public record Violated(String schema, String table, String constraint) {}

  public FloeException(String sqlState, String message) {
    this(sqlState, message, null, null, 0, null);
  }

  public FloeException(String sqlState, String message, Throwable cause) {
    this(sqlState, message, null, null, 0, cause);
  }

  /** An error at a 1-based character position of the statement (0: none). */
  public FloeException(String sqlState, String message, int position) {
    this(sqlState, message, null, null, position, null);
  }

  public FloeException(String sqlState, String message, String detail, String hint, int position, Throwable cause) {
    super(Objects.requireNonNull(message, "message"), cause);
    this.sqlState = Objects.requireNonNull(sqlState, "sqlState");
    this.detail = detail;
    this.hint = hint;
    this.position = position;
  }

  /** The five-character PostgreSQL SQLSTATE. */
  public String sqlState() {
    return sqlState;
  }

  public Optional<String> detail() {
    return Optional.ofNullable(detail);
  }

  public Optional<String> hint() {
    return Optional.ofNullable(hint);
  }

  /** 1-based character offset into the statement text, or 0 when the error has no position. */
  public int position() {
    return position;
  }

  /** The same error with a position, if it had none. */
  public FloeException withPosition(int newPosition) {
    if (position > 0 || newPosition <= 0) {
      return this;
    }
    return copy(detail, hint, newPosition);
  }

  /**
   * The same error at another position, for a statement's text inside a larger one (a script, the text a
   * client sent before its parameters were bound); an error without a position keeps none.
   */
  public FloeException movedTo(int newPosition) {
    if (position <= 0 || newPosition == position) {
      return this;
    }
    return copy(detail, hint, newPosition);
  }

  public FloeException withDetail(String newDetail) {
    return copy(newDetail, hint, position);
  }

  public FloeException withHint(String newHint) {
    return copy(detail, newHint, position);
  }

  private FloeException copy(String newDetail, String newHint, int newPosition) {
    FloeException e = new FloeException(sqlState, getMessage(), newDetail, newHint, newPosition, getCause());
    e.setStackTrace(getStackTrace());
    e.violated = violated;
    e.context = context;
    return e;
  }

  /** The same error, with PostgreSQL's CONTEXT (where it happened: {@code COPY t, line 3, column c: "x"}). */
  public FloeException withContext(String newContext) {
    FloeException e = copy(detail, hint, position);
    e.context = newContext;
    return e;
  }

  /** Where the error happened, as PostgreSQL's CONTEXT field says it. */
  public Optional<String> context() {
    return Optional.ofNullable(context);
  }

  /** This error, naming the constraint it is about (PostgreSQL's schema, table and constraint fields). */
  public FloeException violating(String schema, String table, String constraint) {
    this.violated = new Violated(schema, table, constraint);
    return this;
  }

  /** The constraint an integrity error is about, if it is one. */
  public Optional<Violated> violated() {
    return Optional.ofNullable(violated);
  }

  @Override
  public String toString() {
    return "ERROR " + sqlState + ": " + getMessage();
  }

  public static FloeException syntax(String message, int position) {
    return new FloeException(SqlState.SYNTAX_ERROR, message, null, null, position, null);
  }

  public static FloeException undefinedTable(String name) {
    return undefinedTable(name, 0);
  }

  /** 42P01 {@code relation "name" does not exist}, at a 1-based position in the statement (0: none). */
  public static FloeException undefinedTable(String name, int position) {
    return new FloeException(SqlState.UNDEFINED_TABLE, "relation \"" + name + "\" does not exist", null, null,
        position, null);
  }

  /** 42P07 {@code relation "name" already exists}. */
  public static FloeException duplicateTable(String name, int position) {
    return new FloeException(SqlState.DUPLICATE_TABLE, "relation \"" + name + "\" already exists", null, null,
        position, null);
  }

  /** 3F000 {@code schema "name" does not exist}. */
  public static FloeException undefinedSchema(String name, int position) {
    return new FloeException(SqlState.INVALID_SCHEMA_NAME, "schema \"" + name + "\" does not exist", null, null,
        position, null);
  }

  /** 42P06 {@code schema "name" already exists}. */
  public static FloeException duplicateSchema(String name, int position) {
    return new FloeException(SqlState.DUPLICATE_SCHEMA, "schema \"" + name + "\" already exists", null, null,
        position, null);
  }

  /** 25P02: a statement in a block one of whose statements failed, before ROLLBACK. */
  /**
   * 57P01: the session was ended by {@code pg_terminate_backend} (or its server shut down); a server sends it
   * as FATAL and closes the connection.
   */
  public static FloeException terminated() {
    return new FloeException(SqlState.ADMIN_SHUTDOWN, "terminating connection due to administrator command");
  }

  public static FloeException inFailedTransaction() {
    return new FloeException(SqlState.IN_FAILED_SQL_TRANSACTION,
        "current transaction is aborted, commands ignored until end of transaction block");
  }

  /** 25006 {@code cannot execute COMMAND in a read-only transaction}. */
  public static FloeException readOnlyTransaction(String command) {
    return new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION, "cannot execute " + command
        + " in a read-only transaction");
  }

  public static FloeException undefinedColumn(String column, String table) {
    return undefinedColumn(column, table, 0);
  }

  /** 42703 {@code column "c" of relation "t" does not exist}. */
  public static FloeException undefinedColumn(String column, String table, int position) {
    return new FloeException(SqlState.UNDEFINED_COLUMN,
        "column \"" + column + "\" of relation \"" + table + "\" does not exist", position);
  }

  /** 42701 {@code column "c" of relation "t" already exists}. */
  public static FloeException duplicateColumn(String column, String table, int position) {
    return new FloeException(SqlState.DUPLICATE_COLUMN,
        "column \"" + column + "\" of relation \"" + table + "\" already exists", position);
  }

  /** 42701 {@code column "c" specified more than once} (a statement's column list). */
  public static FloeException columnTwice(String column, int position) {
    return new FloeException(SqlState.DUPLICATE_COLUMN, "column \"" + column + "\" specified more than once",
        position);
  }

  /** 40001 {@code could not serialize access due to concurrent update}, with what it collided with. */
  public static FloeException serializationFailure(String why, Throwable cause) {
    return new FloeException(SqlState.SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent update: " + why, cause);
  }

  public static FloeException notSupported(String message) {
    return new FloeException(SqlState.FEATURE_NOT_SUPPORTED, message);
  }

  public static FloeException invalidParameter(String message) {
    return new FloeException(SqlState.INVALID_PARAMETER_VALUE, message);
  }

  public static FloeException internal(String message, Throwable cause) {
    return new FloeException(SqlState.INTERNAL_ERROR, message, cause);
  }
}
