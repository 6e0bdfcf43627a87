package dev.floe;

/**
 * A transaction block on a session of its own ({@link Database#begin()}): statements through
 * {@link #sql} read one snapshot of every table, taken at the first of them, and see their own changes;
 * {@link #commit()} applies the changes to every table they touched at once, or fails with SQLSTATE
 * 40001 (nothing applied) when a concurrent commit conflicts. Closing it without committing rolls it
 * back. Not thread-safe.
 */
public final class Transaction implements AutoCloseable {
  private final Session session;
  private boolean open = true;

  Transaction(Session session, boolean readOnly) {
    this.session = session;
    if (readOnly) {
      session.beginReadOnly();
    } else {
      session.begin();
    }
  }

  /** Executes one statement in the transaction. */
  public Result sql(String sql) {
    checkOpen();
    return session.sql(sql);
  }

  public void savepoint(String name) {
    checkOpen();
    session.savepoint(name);
  }

  public void rollbackToSavepoint(String name) {
    checkOpen();
    session.rollbackToSavepoint(name);
  }

  public void releaseSavepoint(String name) {
    checkOpen();
    session.releaseSavepoint(name);
  }

  /**
   * Commits; the transaction ends either way.
   *
   * @throws FloeException 40001 when another commit since the snapshot conflicts; nothing is applied
   */
  public void commit() {
    checkOpen();
    open = false;
    try {
      session.commit();
    } finally {
      session.close();
    }
  }

  /** Ends the transaction, undoing its changes. */
  public void rollback() {
    checkOpen();
    open = false;
    try {
      session.rollback();
    } finally {
      session.close();
    }
  }

  /** Rolls back unless committed or rolled back already. */
  @Override
  public void close() {
    if (open) {
      rollback();
    }
  }

  private void checkOpen() {
    if (!open) {
      throw new FloeException(SqlState.NO_ACTIVE_SQL_TRANSACTION, "the transaction has ended");
    }
  }
}
