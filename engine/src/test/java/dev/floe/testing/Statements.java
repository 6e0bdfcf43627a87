package dev.floe.testing;

import dev.floe.FloeException;
import dev.floe.Session;

/** Running statements in a test: several in a row, or one that must fail. */
public final class Statements {
  private Statements() {}

  /** Runs each statement, closing its result. */
  public static void exec(Session s, String... sql) {
    for (String q : sql) {
      s.sql(q).close();
    }
  }

  /** The error {@code sql} fails with; an AssertionError if it succeeds. */
  public static FloeException error(Session s, String sql) {
    try {
      s.sql(sql).close();
    } catch (FloeException e) {
      return e;
    }
    throw new AssertionError("no error: " + sql);
  }
}
