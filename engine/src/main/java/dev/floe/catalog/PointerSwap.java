package dev.floe.catalog;

import java.sql.Connection;
import java.sql.SQLException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;

/**
 * A SQLite transaction of the catalog that moves table pointers, and what its errors mean. Callers act
 * on them: a failed swap deletes the new metadata file ({@link FloeTableOperations}), and the committer
 * the change's files, which is only safe if the pointer did not move.
 *
 * <ul>
 *   <li>an error before the COMMIT (opening the transaction, the work, a rollback that works): nothing
 *       changed. The work's own exception, or {@link FloeCatalog.CatalogException};
 *   <li>the COMMIT itself: unknown. SQLite may have appended the transaction's commit frame to its
 *       write-ahead log before the error (a failed fsync of it), and sqlite-jdbc's {@code commit()} runs
 *       {@code BEGIN} after a COMMIT that succeeded, so its error can follow a durable commit:
 *       {@link CommitStateUnknownException}, and every file the new pointers may name must stay;
 *   <li>a rollback that fails: unknown too (the transaction may still be open, and the next
 *       {@code COMMIT} on the connection would commit it);
 *   <li>restoring auto-commit after a COMMIT that succeeded: the commit stands; logged.
 * </ul>
 */
final class PointerSwap {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PointerSwap.class);

  private PointerSwap() {}

  /** The statements of the transaction, on the connection it is open on: false rolls it back. */
  interface SqlWork {
    boolean run(Connection conn) throws SQLException;
  }

  /**
   * Runs {@code work} in one SQLite transaction on {@code conn} (the caller holds its lock,
   * {@link CatalogDatabase#transaction}):
   * committed when it returns true, rolled back when it returns false or fails.
   */
  static boolean run(Connection conn, String what, SqlWork work) {
    boolean autoCommit;
    try {
      autoCommit = conn.getAutoCommit();
      conn.setAutoCommit(false);
    } catch (SQLException e) {
      throw new FloeCatalog.CatalogException("Cannot commit " + what + " to the catalog: " + e.getMessage(), e);
    }
    try {
      boolean done;
      try {
        done = work.run(conn);
      } catch (SQLException | RuntimeException e) {
        rollback(conn, what, e);
        throw e instanceof RuntimeException r ? r
            : new FloeCatalog.CatalogException("Cannot commit " + what + " to the catalog: " + e.getMessage(), e);
      }
      if (!done) {
        rollback(conn, what, null);
        return false;
      }
      try {
        conn.commit();
      } catch (SQLException e) {
        throw new CommitStateUnknownException(new FloeCatalog.CatalogException("SQLite's COMMIT of " + what
            + " failed, and may have taken effect: " + e.getMessage(), e));
      }
      return true;
    } finally {
      try {
        conn.setAutoCommit(autoCommit);
      } catch (SQLException e) {
        LOG.error("Cannot return the catalog connection to auto-commit after {}: {}", what, e.getMessage(), e);
      }
    }
  }

  /** Rolls back the open transaction; if that fails, whether it will be committed is unknown. */
  private static void rollback(Connection conn, String what, Exception cause) {
    try {
      conn.rollback();
    } catch (SQLException e) {
      CommitStateUnknownException unknown = new CommitStateUnknownException(new FloeCatalog.CatalogException(
          "Cannot roll back " + what + " in the catalog: " + e.getMessage(), e));
      if (cause != null) {
        unknown.addSuppressed(cause);
      }
      throw unknown;
    }
  }
}
