package dev.floe;

/**
 * What a statement is, and the properties that follow from that alone (as DuckDB's
 * {@code StatementProperties}): computed once when the statement is parsed and read by the engine and
 * every front end, so none of them classifies statements itself. {@link Statement} refines the two that
 * depend on more than the kind (RETURNING, a COPY's direction, a session command).
 */
public enum StatementKind {
  /** No statement (an empty string, only comments or semicolons). */
  EMPTY(false, true, false),
  /** SELECT, WITH, VALUES, TABLE. */
  QUERY(true, true, true),
  /** EXPLAIN, SHOW TABLES, SHOW SCHEMAS, DESCRIBE: rows about the database, nothing changed. */
  UTILITY(true, true, false),
  INSERT(false, false, true),
  UPDATE(false, false, true),
  DELETE(false, false, true),
  MERGE(false, false, true),
  TRUNCATE(false, false, true),
  /** CREATE, ALTER, DROP of schemas, tables and sequences: takes effect at once, outside transaction blocks. */
  DDL(false, false, false),
  /** BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO, SET TRANSACTION: the engine runs them. */
  TRANSACTION(false, true, false),
  /**
   * A statement about the front end's session rather than the data ({@link SessionCommand}: SET, SHOW,
   * RESET, DISCARD, DEALLOCATE, cursors), which the front end answers itself.
   */
  SESSION(false, true, false),
  /** COPY ... FROM STDIN / TO STDOUT ({@link Copy}), which the front end runs with the engine's help. */
  COPY(false, true, false),
  /** A statement that does not parse: running it reports its error. */
  INVALID(true, true, false);

  private final boolean returnsRows;
  private final boolean readOnly;
  private final boolean rowLevel;

  StatementKind(boolean returnsRows, boolean readOnly, boolean rowLevel) {
    this.returnsRows = returnsRows;
    this.readOnly = readOnly;
    this.rowLevel = rowLevel;
  }

  /** Whether statements of this kind return rows (DML only with RETURNING: see {@link Statement#returnsRows}). */
  public boolean returnsRows() {
    return returnsRows;
  }

  /** Whether statements of this kind leave every table as it is (and so run in a read-only transaction). */
  public boolean readOnly() {
    return readOnly;
  }

  /**
   * Whether it reads or changes rows only: such statements may share one transaction (several statements
   * of one simple-protocol message run as one, as in PostgreSQL).
   */
  public boolean rowLevel() {
    return rowLevel;
  }
}
