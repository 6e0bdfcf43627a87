package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Notice;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.TransactionState;
import dev.floe.catalog.FloeCatalog;
import dev.floe.sql.Ast;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.iceberg.exceptions.CommitFailedException;

/**
 * A session's transaction blocks: the one place that interprets transaction control, whether it comes as
 * SQL (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK TO, SET TRANSACTION) or through the API
 * ({@link dev.floe.Session#begin()} and friends), and that knows the session's status (idle, in a block, in
 * a failed block). Front ends read the status ({@link #state()}); none keeps its own.
 *
 * <p>Not thread-safe: it belongs to one session, whose statements run one at a time.
 */
final class TransactionControl {
  private final Tables tables;
  private final Consumer<Notice> notices;
  /** The session's run-time parameters (default_transaction_read_only, default_transaction_isolation). */
  private final Function<String, String> settings;
  /** The open block, or null: each statement commits by itself. */
  private Transaction transaction;
  /** Whether this session opened {@link #transaction} (or joined another session's). */
  private boolean owns;
  /** The isolation level the open block asked for (reported; blocks run in snapshot isolation). */
  private String isolation;

  /** The session's backend pid, which its blocks' holds are recorded under. */
  private final java.util.function.IntSupplier backendPid;

  /** Told when a block ends, committed or rolled back (temporary tables ON COMMIT DROP / DELETE ROWS). */
  private final Runnable ended;

  TransactionControl(Tables tables, Consumer<Notice> notices, Function<String, String> settings,
      java.util.function.IntSupplier backendPid, Runnable ended) {
    this.tables = tables;
    this.ended = ended;
    this.backendPid = backendPid;
    this.notices = notices;
    this.settings = settings;
  }

  /** The block statements run in; one this session joined is left once its owner ended it. */
  Transaction open() {
    if (transaction != null && transaction.ended()) {
      transaction = null;
    }
    return transaction;
  }

  TransactionState state() {
    Transaction t = open();
    if (t == null) {
      return TransactionState.IDLE;
    }
    return new TransactionState(t.failed() ? TransactionState.Status.FAILED : TransactionState.Status.IN_BLOCK,
        isolation, t.readOnly());
  }

  /** Whether a statement that writes is refused now: the block is read-only, or the session's default is. */
  boolean readOnlyNow() {
    Transaction t = open();
    return t != null ? t.readOnly() : "on".equals(settings.apply("default_transaction_read_only"));
  }

  /** A statement of the open block failed (or one the front end ran for it): the block fails. */
  void fail() {
    Transaction t = open();
    if (t != null) {
      t.fail();
    }
  }

  /** Refuses every statement but those that end the block while the block is failed (25P02). */
  void checkNotFailed() {
    Transaction t = open();
    if (t != null && t.failed()) {
      throw FloeException.inFailedTransaction();
    }
  }

  /**
   * Runs this session's statements in {@code owner}'s block (a connection's helper sessions: cursors,
   * statements run while a portal is suspended); only the owner commits or rolls it back.
   */
  void join(TransactionControl owner) {
    if (open() != null) {
      throw new FloeException(SqlState.ACTIVE_SQL_TRANSACTION, "there is already a transaction in progress");
    }
    transaction = owner.open();
    isolation = owner.isolation;
    owns = false;
  }

  /** BEGIN, COMMIT, ROLLBACK, savepoints and SET TRANSACTION given as SQL, with PostgreSQL's warnings. */
  Result run(Ast.TransactionControl tc) {
    try {
      return runChecked(tc);
    } catch (RuntimeException e) {
      fail(); // ROLLBACK TO an unknown savepoint fails the block too, as in PostgreSQL
      throw e;
    }
  }

  private Result runChecked(Ast.TransactionControl tc) {
    switch (tc.action()) {
      case BEGIN -> {
        if (open() != null) {
          notices.accept(Notice.warning(SqlState.ACTIVE_SQL_TRANSACTION, "there is already a transaction in progress"));
        } else {
          if (tc.accessMode()) {
            begin(tc.readOnly(), tc.isolationLevel());
          } else {
            beginDefault();
            if (tc.isolationLevel() != null) {
              isolation = tc.isolationLevel();
            }
          }
        }
      }
      case COMMIT -> {
        if (open() == null) {
          notices.accept(Notice.warning(SqlState.NO_ACTIVE_SQL_TRANSACTION, "there is no transaction in progress"));
        } else if (transaction.failed()) {
          rollback(); // a failed block rolls back, and says so
          return new CommandResult("ROLLBACK", 0);
        } else {
          commit();
        }
      }
      case ROLLBACK -> {
        if (open() == null) {
          notices.accept(Notice.warning(SqlState.NO_ACTIVE_SQL_TRANSACTION, "there is no transaction in progress"));
        } else {
          rollback();
        }
      }
      case SAVEPOINT -> {
        checkNotFailed();
        savepoint(tc.savepoint());
      }
      case RELEASE -> {
        checkNotFailed();
        release(tc.savepoint());
      }
      case ROLLBACK_TO -> rollbackTo(tc.savepoint());
      case SET_MODES -> setModes(tc);
    }
    return new CommandResult(tc.tag(), 0);
  }

  private void setModes(Ast.TransactionControl tc) {
    Transaction t = open();
    if (t == null) {
      notices.accept(Notice.warning(SqlState.NO_ACTIVE_SQL_TRANSACTION,
          "SET TRANSACTION can only be used in transaction blocks"));
      return;
    }
    checkNotFailed();
    if (tc.isolation()) {
      if (t.started()) {
        throw new FloeException(SqlState.ACTIVE_SQL_TRANSACTION,
            "SET TRANSACTION ISOLATION LEVEL must be called before any query");
      }
      isolation = tc.isolationLevel();
    }
    if (tc.accessMode()) {
      if (!tc.readOnly() && t.readOnly() && t.started()) {
        throw new FloeException(SqlState.ACTIVE_SQL_TRANSACTION,
            "transaction read-write mode must be set before any query");
      }
      t.setReadOnly(tc.readOnly());
    }
  }

  /** Opens a block with the session's default access mode and isolation level (BEGIN without modes). */
  void beginDefault() {
    begin("on".equals(settings.apply("default_transaction_read_only")), null);
  }

  /**
   * Opens a block (snapshot isolation): its snapshot is taken at its first statement, its writes are its
   * own until {@link #commit}.
   *
   * @param isolationLevel the level asked for, or null for the session's default
   */
  void begin(boolean readOnly, String isolationLevel) {
    if (open() != null) {
      throw new FloeException(SqlState.ACTIVE_SQL_TRANSACTION, "there is already a transaction in progress");
    }
    transaction = new Transaction(tables, readOnly, backendPid.getAsInt());
    owns = true;
    String level = isolationLevel != null ? isolationLevel : settings.apply("default_transaction_isolation");
    isolation = level != null ? level : "read committed";
  }

  /**
   * Commits the open block: every table it wrote, atomically. The block ends either way.
   *
   * @throws FloeException 40001 when a concurrent commit conflicts, 25P02 when a statement of the block
   *     failed (it is rolled back); nothing is applied then
   */
  void commit() {
    Transaction t = require("COMMIT");
    transaction = null;
    try {
      commit(t);
    } finally {
      ended.run();
    }
  }

  private void commit(Transaction t) {
    if (t.failed()) {
      t.rollback();
      throw new FloeException(SqlState.IN_FAILED_SQL_TRANSACTION, "the transaction was rolled back: a statement "
          + "in it failed");
    }
    try (var files = dev.floe.catalog.Durable.scope()) {
      t.commit();
    } catch (CommitFailedException e) {
      throw FloeException.serializationFailure(e.getMessage(), e);
    } catch (FloeCatalog.CatalogException | java.io.UncheckedIOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot commit the transaction: " + e.getMessage(), e);
    }
  }

  /** Ends the open block, undoing everything it wrote. */
  void rollback() {
    Transaction t = require("ROLLBACK");
    transaction = null;
    try {
      t.rollback();
    } finally {
      ended.run();
    }
  }

  void savepoint(String name) {
    require("SAVEPOINT").savepoint(name);
  }

  /** Undoes what the block did since the savepoint, which stays; a failed block is no longer failed. */
  void rollbackTo(String name) {
    Transaction t = require("ROLLBACK TO SAVEPOINT");
    requireSavepoint(t, name);
    t.rollbackTo(name);
  }

  void release(String name) {
    Transaction t = require("RELEASE SAVEPOINT");
    requireSavepoint(t, name);
    t.release(name);
  }

  /** Rolls back the block this session opened (the session is closing). */
  void abandon() {
    if (open() != null && owns) {
      Transaction t = transaction;
      transaction = null;
      t.rollback();
    }
  }

  private Transaction require(String what) {
    if (open() == null) {
      throw new FloeException(SqlState.NO_ACTIVE_SQL_TRANSACTION, what + " can only be used in transaction blocks");
    }
    if (!owns) {
      throw new FloeException(SqlState.INVALID_TRANSACTION_STATE, what + " must run in the session that began "
          + "the transaction");
    }
    return transaction;
  }

  private static void requireSavepoint(Transaction t, String name) {
    if (!t.hasSavepoint(name)) {
      throw new FloeException(SqlState.INVALID_SAVEPOINT_SPECIFICATION, "savepoint \"" + name + "\" does not exist");
    }
  }
}
