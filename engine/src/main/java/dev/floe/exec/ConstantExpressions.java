package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.util.function.UnaryOperator;

/**
 * Whether an expression Floe evaluates once (a column's DEFAULT) is a constant: no column references, no
 * subqueries, no function whose value changes per row or per statement. Read from DuckDB's own parse tree
 * ({@code json_serialize_sql}), so what counts as a column or a function is DuckDB's reading.
 */
final class ConstantExpressions {
  /** DuckDB's {@code json_serialize_sql} of a statement. */
  private final UnaryOperator<String> serializer;

  ConstantExpressions(UnaryOperator<String> serializer) {
    this.serializer = serializer;
  }

  private static final java.util.Set<String> VOLATILE = java.util.Set.of("now", "current_timestamp",
      "current_date", "current_time", "localtime", "localtimestamp", "transaction_timestamp", "statement_timestamp",
      "clock_timestamp", "get_current_time", "get_current_timestamp", "today", "random", "uuid", "gen_random_uuid",
      "uuidv4", "uuidv7", "nextval", "currval", "lastval", "setval", "setseed");

  /**
   * Rejects an expression that is not a constant: column references, subqueries, and functions whose
   * value changes per row or per statement (Floe stores such expressions evaluated once).
   */
  void requireConstant(String expression, String what, int position) {
    String problem = nonConstant(expressionTree(expression, what, position).path("statements"));
    if (problem != null) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot use " + problem + " in " + what
          + " expression", null, what + " values are constants, evaluated once when the column is defined.", position,
          null);
    }
  }

  /** DuckDB's parse tree of {@code SELECT (expression)}; a syntax error is 42601. */
  private com.fasterxml.jackson.databind.JsonNode expressionTree(String expression, String what, int position) {
    com.fasterxml.jackson.databind.JsonNode tree;
    try {
      tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(serializer.apply("SELECT (" + expression + ")"));
    } catch (java.io.IOException e) {
      throw FloeException.internal("cannot read DuckDB's parse tree", e);
    }
    if (tree.path("error").asBoolean(false)) {
      throw FloeException.syntax("invalid " + what + " expression: " + tree.path("error_message").asText(), position);
    }
    return tree;
  }


  /** Whether an expression is a constant (no columns, subqueries or volatile functions). */
  boolean isConstant(String expression) {
    try {
      requireConstant(expression, "DEFAULT", 0);
      return true;
    } catch (FloeException e) {
      return false;
    }
  }

  /** Refuses an expression that names columns or has subqueries (volatile functions are fine). */
  void requireNoColumns(String expression, String what, int position) {
    String problem = nonConstant(expressionTree(expression, what, position).path("statements"));
    if (problem != null && !problem.startsWith("function")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot use " + problem + " in " + what
          + " expression", position);
    }
  }


  private static String nonConstant(com.fasterxml.jackson.databind.JsonNode node) {
    if (node.isObject()) {
      String cls = node.path("class").asText();
      if (cls.equals("COLUMN_REF")) {
        return "column reference";
      }
      if (cls.equals("SUBQUERY")) {
        return "subquery";
      }
      if (cls.equals("FUNCTION") && VOLATILE.contains(node.path("function_name").asText().toLowerCase())) {
        return "function " + node.path("function_name").asText() + "()";
      }
      for (var it = node.fields(); it.hasNext(); ) {
        String found = nonConstant(it.next().getValue());
        if (found != null) {
          return found;
        }
      }
    } else if (node.isArray()) {
      for (var child : node) {
        String found = nonConstant(child);
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }
}
