package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import dev.floe.sql.Token;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The second half of mapping an error to PostgreSQL's: what needs the statement's text. DuckDB's messages
 * for some mistakes lack what PostgreSQL's name ({@code ORDER BY position 99}, {@code LIMIT} or
 * {@code OFFSET}, the window function's name), and DuckDB points elsewhere than PostgreSQL does (at a
 * cast, where PostgreSQL points at the literal it could not read). {@link DuckErrors} maps the message;
 * this reads the tokens at the error's position. Applied once, to every failed statement.
 */
final class StatementErrors {
  private StatementErrors() {}

  private static final Pattern ORDER_RANGE = Pattern.compile("ORDER term out of range.*");
  private static final Pattern GROUP_RANGE = Pattern.compile("GROUP BY term out of range - should be between 1 and (\\d+)");
  private static final Pattern NEGATIVE_LIMIT = Pattern.compile("LIMIT/OFFSET cannot be negative");
  private static final Pattern BAD_LITERAL = Pattern.compile(
      "(?:invalid input syntax for type .+?|malformed array literal|date/time field value out of range): \"(.*)\""
          + "|value \"(.*)\" is out of range for type .+", Pattern.DOTALL);
  private static final Pattern MISSING_RELATION = Pattern.compile("relation \"(.+)\" does not exist");
  private static final Pattern NO_CAST = Pattern.compile("cannot cast type (.+) to (.+)");
  private static final Set<String> COMPARISONS = Set.of("=", "<>", "!=", "<", ">", "<=", ">=");
  private static final Pattern GROUPING = Pattern.compile(
      "column \"([^\".]+)\" must appear in the GROUP BY clause or (?:must be part of|be used in) an aggregate "
          + "function\\.?");
  private static final Set<String> FROM_ENDS = Set.of("where", "group", "having", "order", "limit", "offset", "window",
      "union", "intersect", "except", "fetch", "for", "qualify");

  /** {@code e}, a failure of {@code sql} (its position 1-based in {@code sql}), in PostgreSQL's words. */
  static FloeException refine(FloeException e, String sql) {
    String message = e.getMessage() == null ? "" : e.getMessage();
    List<Token> tokens;
    try {
      tokens = Lexer.tokenize(sql);
    } catch (FloeException unreadable) {
      return e;
    }
    int at = indexAt(tokens, e.position());
    if (ORDER_RANGE.matcher(message).matches() && at >= 0 && tokens.get(at).type() == Token.Type.NUMBER) {
      return with(e, SqlState.INVALID_COLUMN_REFERENCE, "ORDER BY position " + tokens.get(at).text()
          + " is not in select list", e.position());
    }
    Matcher m = GROUP_RANGE.matcher(message);
    if (m.matches()) {
      Token out = groupByPositionOutOfRange(tokens, Long.parseLong(m.group(1)));
      if (out != null) {
        return with(e, SqlState.INVALID_COLUMN_REFERENCE, "GROUP BY position " + out.text()
            + " is not in select list", out.position());
      }
    }
    if (NEGATIVE_LIMIT.matcher(message).matches() && at >= 0) {
      int k = at - 1;
      while (k >= 0 && tokens.get(k).type() == Token.Type.OP) {
        k--;
      }
      boolean offset = k >= 0 && tokens.get(k).isKeyword("offset");
      return offset ? with(e, SqlState.INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE, "OFFSET must not be negative", 0)
          : with(e, SqlState.INVALID_ROW_COUNT_IN_LIMIT_CLAUSE, "LIMIT must not be negative", 0);
    }
    if (message.equals("Window functions are not supported here") && at >= 0
        && tokens.get(at).type() == Token.Type.IDENT && !calledOver(tokens, at)) {
      return with(e, SqlState.WRONG_OBJECT_TYPE, "window function " + tokens.get(at).value()
          + " requires an OVER clause", e.position());
    }
    if (message.startsWith("each UNION query")) {
      return setOperationBranches(e, tokens);
    }
    m = BAD_LITERAL.matcher(message);
    if (m.matches()) {
      String value = m.group(1) != null ? m.group(1) : m.group(2);
      Token literal = at >= 0 ? castLiteral(tokens, at, value) : onlyLiteral(tokens, value);
      if (literal != null) {
        return with(e, e.sqlState(), message, literal.position());
      }
    }
    m = MISSING_RELATION.matcher(message);
    if (m.matches() && at < 0) {
      Token literal = onlyLiteral(tokens, m.group(1)); // nextval('nosuch'): PostgreSQL points at the name
      if (literal != null) {
        return with(e, e.sqlState(), message, literal.position());
      }
    }
    m = NO_CAST.matcher(message);
    if (m.matches() && at > 0 && tokens.get(at).type() == Token.Type.NUMBER) {
      // d = 5: DuckDB casts the number to the column's type, where PostgreSQL has no such operator
      Token before = tokens.get(at - 1);
      Token after = at + 1 < tokens.size() ? tokens.get(at + 1) : null;
      if (before.type() == Token.Type.OP && COMPARISONS.contains(before.text())) {
        return new FloeException(SqlState.UNDEFINED_FUNCTION, "operator does not exist: " + m.group(2) + " "
            + before.text() + " " + m.group(1), e.detail().orElse(null), DuckErrors.OPERATOR_HINT, before.position(),
            e.getCause());
      }
      if (after != null && after.type() == Token.Type.OP && COMPARISONS.contains(after.text())) {
        return new FloeException(SqlState.UNDEFINED_FUNCTION, "operator does not exist: " + m.group(1) + " "
            + after.text() + " " + m.group(2), e.detail().orElse(null), DuckErrors.OPERATOR_HINT, after.position(),
            e.getCause());
      }
    }
    if (message.equals("SELECT * with no tables specified is not valid") && at < 0) {
      return tokens.stream().filter(t -> t.isOp("*")).findFirst()
          .map(t -> with(e, e.sqlState(), message, t.position())).orElse(e);
    }
    if (message.equals("subquery has too many columns") && at > 0 && tokens.get(at).isOp("(")
        && tokens.get(at - 1).isKeyword("in")) {
      return with(e, e.sqlState(), message, tokens.get(at - 1).position());
    }
    m = GROUPING.matcher(message);
    if (m.matches()) {
      String table = singleTable(tokens);
      return with(e, e.sqlState(), "column \"" + (table == null ? "" : table + ".") + m.group(1)
          + "\" must appear in the GROUP BY clause or be used in an aggregate function", e.position());
    }
    return e;
  }

  /**
   * PostgreSQL's error for set-operation branches of different widths: it names the operation and points
   * at the first column of the first branch whose width differs from the first branch's.
   */
  private static FloeException setOperationBranches(FloeException e, List<Token> tokens) {
    String op = tokens.stream().filter(t -> t.isKeyword("union") || t.isKeyword("intersect")
        || t.isKeyword("except")).findFirst().map(t -> t.value().toUpperCase(Locale.ROOT)).orElse("UNION");
    String fallback = op;
    int firstWidth = -1;
    int depth = 0;
    for (int i = 0; i < tokens.size(); i++) {
      Token t = tokens.get(i);
      if (t.isOp("(")) {
        depth++;
      } else if (t.isOp(")")) {
        depth--;
      } else if (depth == 0 && t.isKeyword("select")) {
        int width = 1;
        int d = 0;
        int k = i + 1;
        while (k < tokens.size() && tokens.get(k).isKeyword("distinct") || k < tokens.size()
            && tokens.get(k).isKeyword("all")) {
          k++;
        }
        int firstColumn = k;
        for (; k < tokens.size(); k++) {
          Token c = tokens.get(k);
          if (c.isOp("(")) {
            d++;
          } else if (c.isOp(")")) {
            d--;
          } else if (d == 0 && c.isOp(",")) {
            width++;
          } else if (d == 0 && (c.isKeyword("from") || c.isKeyword("union") || c.isKeyword("intersect")
              || c.isKeyword("except") || c.type() == Token.Type.EOF)) {
            break;
          } else if (d == 0 && c.isOp("*")) {
            width = -2; // a star's width is the table's: unknown here
          }
        }
        if (firstWidth == -1) {
          firstWidth = width;
        } else if (width >= 0 && firstWidth >= 0 && width != firstWidth && firstColumn < tokens.size()) {
          return with(e, e.sqlState(), "each " + op + " query must have the same number of columns",
              tokens.get(firstColumn).position());
        }
      } else if (depth == 0 && (t.isKeyword("union") || t.isKeyword("intersect") || t.isKeyword("except"))) {
        op = t.value().toUpperCase(Locale.ROOT); // the operation that joins the next branch
      }
    }
    return with(e, e.sqlState(), "each " + fallback + " query must have the same number of columns", e.position());
  }

  /** The one string literal of the statement whose value is {@code value}; null if none or several. */
  private static Token onlyLiteral(List<Token> tokens, String value) {
    Token found = null;
    for (Token t : tokens) {
      if (t.type() == Token.Type.STRING && t.value().equals(value)) {
        if (found != null) {
          return null;
        }
        found = t;
      }
    }
    return found;
  }

  private static FloeException with(FloeException e, String state, String message, int position) {
    return new FloeException(state, message, e.detail().orElse(null), e.hint().orElse(null), position, e.getCause());
  }

  /** The token that starts at 1-based {@code position}, or the one it falls in; -1 if none. */
  private static int indexAt(List<Token> tokens, int position) {
    if (position <= 0) {
      return -1;
    }
    int offset = position - 1;
    for (int i = 0; i < tokens.size(); i++) {
      Token t = tokens.get(i);
      if (t.type() != Token.Type.EOF && offset >= t.start() && offset < t.end()) {
        return i;
      }
    }
    return -1;
  }

  /** Whether the call whose name is token {@code at} is followed by OVER. */
  private static boolean calledOver(List<Token> tokens, int at) {
    int k = at + 1;
    if (k >= tokens.size() || !tokens.get(k).isOp("(")) {
      return false;
    }
    int depth = 0;
    for (; k < tokens.size(); k++) {
      Token t = tokens.get(k);
      if (t.isOp("(")) {
        depth++;
      } else if (t.isOp(")") && --depth == 0) {
        return k + 1 < tokens.size() && tokens.get(k + 1).isKeyword("over");
      }
    }
    return false;
  }

  /**
   * The string literal a cast at token {@code at} reads ({@code 'x'::int} at the {@code ::} or the type,
   * {@code CAST('x' AS int)} at CAST), if its value is {@code value}: PostgreSQL points at the literal.
   */
  private static Token castLiteral(List<Token> tokens, int at, String value) {
    Token t = tokens.get(at);
    if (t.type() == Token.Type.STRING) {
      return null;
    }
    if (t.isKeyword("cast") && at + 2 < tokens.size() && tokens.get(at + 1).isOp("(")) {
      Token literal = tokens.get(at + 2);
      return literal.type() == Token.Type.STRING && literal.value().equals(value) ? literal : null;
    }
    int k = t.isOp("::") ? at - 1 : at - 2;
    if (k >= 0 && (t.isOp("::") || tokens.get(at - 1).isOp("::"))) {
      Token literal = tokens.get(k);
      return literal.type() == Token.Type.STRING && literal.value().equals(value) ? literal : null;
    }
    return null;
  }

  /** In {@code GROUP BY 1, 5}, the first position past {@code max} (or below 1), or null. */
  private static Token groupByPositionOutOfRange(List<Token> tokens, long max) {
    for (int i = 0; i + 1 < tokens.size(); i++) {
      if (!tokens.get(i).isKeyword("group") || !tokens.get(i + 1).isKeyword("by")) {
        continue;
      }
      int depth = 0;
      for (int k = i + 2; k < tokens.size(); k++) {
        Token t = tokens.get(k);
        if (t.isOp("(")) {
          depth++;
        } else if (t.isOp(")")) {
          if (--depth < 0) {
            break;
          }
        } else if (depth == 0 && t.type() == Token.Type.IDENT && FROM_ENDS.contains(t.value())) {
          break;
        } else if (depth == 0 && t.type() == Token.Type.NUMBER && t.text().matches("\\d+")
            && (tokens.get(k - 1).isKeyword("by") || tokens.get(k - 1).isOp(","))) {
          long n = Long.parseLong(t.text().length() > 18 ? "999999999999999999" : t.text());
          if (n < 1 || n > max) {
            return t;
          }
        }
      }
    }
    return null;
  }

  /**
   * The name a query's only FROM item is known by ({@code FROM trips} is {@code trips}, {@code FROM
   * s.trips t} is {@code t}), or null if its FROM has more than one item, a join or a subquery.
   */
  private static String singleTable(List<Token> tokens) {
    int from = -1;
    for (int i = 0; i < tokens.size(); i++) {
      if (tokens.get(i).isKeyword("from")) {
        if (from >= 0) {
          return null; // a second FROM: a subquery, or more
        }
        from = i;
      }
    }
    if (from < 0) {
      return null;
    }
    int k = from + 1;
    String name = null;
    while (k < tokens.size() && tokens.get(k).isIdentifier()) {
      name = tokens.get(k).value();
      k++;
      if (k < tokens.size() && tokens.get(k).isOp(".")) {
        k++;
      } else {
        break;
      }
    }
    if (name == null) {
      return null;
    }
    if (k < tokens.size() && tokens.get(k).isKeyword("as")) {
      k++;
    }
    if (k < tokens.size() && tokens.get(k).isIdentifier() && !FROM_ENDS.contains(tokens.get(k).value())
        && !tokens.get(k).isKeyword("join")) {
      name = tokens.get(k).value();
      k++;
    }
    Token next = k < tokens.size() ? tokens.get(k) : null;
    boolean ends = next == null || next.type() == Token.Type.EOF || next.isOp(";")
        || (next.type() == Token.Type.IDENT && FROM_ENDS.contains(next.value()));
    return ends ? name : null;
  }
}
