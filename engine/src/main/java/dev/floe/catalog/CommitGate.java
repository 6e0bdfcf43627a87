package dev.floe.catalog;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.util.function.Supplier;

/**
 * The point of no return of a statement's change: the catalog pointer swap (or the log append of a
 * table with a tail). A statement cancelled before it reaches that point commits nothing and fails with
 * 57014; once past it, the change stands, the statement can no longer be cancelled, and it reports
 * success, as in PostgreSQL.
 *
 * <p>The statement travels with its thread: every commit path reaches the swap on the thread that runs
 * the statement, so the one call at the swap covers them all, with one exception: a group commit
 * ({@code commit.GroupCommit}) swaps on one statement's thread for several, and passes each one's gate
 * itself first ({@link #current}). Commits made by no statement (the tail advancer's seals) have no gate
 * and always pass.
 */
public final class CommitGate {
  /** A running statement's side of the gate. */
  public interface Statement {
    /**
     * Called at the point of no return: throws 57014 if the statement was cancelled, else makes it
     * uncancellable from now on.
     */
    void pass();
  }

  private static final ThreadLocal<Statement> CURRENT = new ThreadLocal<>();

  private CommitGate() {}

  /** Runs {@code body} as {@code statement} on this thread. */
  public static <T> T guard(Statement statement, Supplier<T> body) {
    Statement outer = CURRENT.get();
    CURRENT.set(statement);
    try {
      return body.get();
    } finally {
      if (outer == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(outer);
      }
    }
  }

  /**
   * The statement running on this thread, for a commit another thread makes on its behalf (a group
   * commit's leader passes each statement's gate, then swaps for all of them under {@link #NONE}); one
   * that always passes when no statement runs here.
   */
  public static Statement current() {
    Statement statement = CURRENT.get();
    return statement != null ? statement : NONE;
  }

  /** No statement's gate: what a commit runs under once the statements it makes have passed theirs. */
  public static final Statement NONE = () -> { };

  /**
   * Called just before a change becomes durable and visible.
   *
   * @throws FloeException 57014 if the statement on this thread was cancelled
   */
  public static void pass() {
    Statement statement = CURRENT.get();
    if (statement != null) {
      statement.pass();
    }
  }

  /** The error of a statement cancelled before its commit point. */
  public static FloeException cancelled() {
    return new FloeException(SqlState.QUERY_CANCELED, "canceling statement due to user request");
  }
}
