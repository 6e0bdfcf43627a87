package dev.floe.sql;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * DuckDB's limit on how deeply expressions nest, reported as PostgreSQL reports a too deep expression
 * (54001, "stack depth limit exceeded"). DuckDB's own message tells the user to raise the limit with
 * {@code SET max_expression_depth}, which a Floe client cannot run: the hint says what to do instead.
 */
public final class DepthLimit {
  private static final Pattern MESSAGE = Pattern.compile("Max expression depth limit of (\\d+) exceeded.*",
      Pattern.DOTALL);

  private DepthLimit() {}

  /** The error for DuckDB's message, if it is the depth limit's; otherwise null. */
  public static FloeException error(String duckMessage, int position, Throwable cause) {
    Matcher m = MESSAGE.matcher(duckMessage);
    if (!m.matches()) {
      return null;
    }
    return new FloeException(SqlState.STATEMENT_TOO_COMPLEX, "stack depth limit exceeded", null,
        "Expressions may be nested at most " + m.group(1) + " levels deep: write the statement with less nesting "
            + "(concat(a, b, c, ...) rather than a long chain of ||, for example).", position, cause);
  }
}
