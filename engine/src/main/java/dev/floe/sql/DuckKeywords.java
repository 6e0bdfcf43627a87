package dev.floe.sql;

import java.util.List;
import java.util.Set;

/**
 * Names PostgreSQL takes as plain identifiers and DuckDB's parser reserves for its own syntax
 * ({@code at}, {@code pivot}, {@code qualify}, {@code semi}...): where one stands for a column or a table
 * (after {@code SELECT}, a comma, an operator, {@code WHERE}, {@code BY}, {@code SET}, {@code FROM}...,
 * or before a comma, a closing parenthesis, {@code FROM} or the end: a label, {@code SELECT 1 at}),
 * it is quoted before DuckDB parses the query, so {@code SELECT at FROM t} reads column {@code at} as
 * PostgreSQL does. Where it can start DuckDB's syntax it is left alone: {@code ts AT TIME ZONE 'UTC'},
 * {@code t AT (VERSION => 1)}, {@code a SEMI JOIN b}, {@code x GLOB 'p'}, {@code lambda x: x + 1},
 * {@code (DESCRIBE t)}, and any name followed by {@code (}.
 */
final class DuckKeywords {
  private DuckKeywords() {}

  /**
   * DuckDB's reserved words that PostgreSQL does not reserve, and the words DuckDB allows only as
   * function or type names that PostgreSQL allows as column names (DuckDB 1.x {@code duckdb_keywords()}).
   */
  static final Set<String> WORDS = Set.of("at", "anti", "asof", "by", "glob", "positional", "semi", "unpack", "describe",
      "lambda", "pivot", "pivot_longer", "pivot_wider", "qualify", "show", "summarize", "unpivot");
  /** Words that start a DuckDB statement, which may open a subquery: {@code (DESCRIBE t)}. */
  private static final Set<String> STATEMENTS = Set.of("describe", "pivot", "pivot_longer", "pivot_wider", "show",
      "summarize", "unpivot");
  /** Keywords after which a name is a value or a table, never DuckDB's syntax. */
  private static final Set<String> BEFORE_A_NAME = Set.of("select", "distinct", "where", "and", "or", "not", "by",
      "set", "when", "then", "else", "case", "on", "having", "returning", "between", "like", "ilike", "from", "join",
      "into", "update", "using");

  /** Whether the name at {@code k} is one of {@link #WORDS} standing for a column or table: to quote. */
  static boolean isName(List<Token> tokens, int k) {
    Token t = tokens.get(k);
    if (k == 0 || t.type() != Token.Type.IDENT || !WORDS.contains(t.value())) {
      return false;
    }
    Token before = tokens.get(k - 1);
    Token next = tokens.get(k + 1);
    if (next.type() == Token.Type.EOF || next.isOp(",") || next.isOp(")") || next.isOp(";") || next.isKeyword("from")) {
      return !before.isOp("::"); // nothing of DuckDB's ends there: a name, or a label (SELECT 1 at FROM t)
    }
    boolean nameContext = before.type() == Token.Type.OP
        ? !before.isOp(")") && !before.isOp("]") && !before.isOp("::")
        : before.type() == Token.Type.IDENT && BEFORE_A_NAME.contains(before.value());
    if (!nameContext) {
      return false;
    }
    Token after = k + 2 < tokens.size() ? tokens.get(k + 2) : next;
    if (next.isOp("(")) {
      return false; // a call, or DuckDB's syntax
    }
    return switch (t.value()) {
      case "at" -> !next.isKeyword("time") && !next.isKeyword("local");
      case "lambda" -> !(next.type() == Token.Type.IDENT && (after.isOp(":") || after.isOp(",")));
      default -> !(STATEMENTS.contains(t.value()) && before.isOp("(") && next.isIdentifier());
    };
  }
}
