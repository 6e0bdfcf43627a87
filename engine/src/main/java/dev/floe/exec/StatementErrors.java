package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import dev.floe.sql.Token;
import dev.floe.Column;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
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
  private static final Pattern BAD_INPUT = Pattern.compile("invalid input syntax for type (.+?): \"(.*)\"",
      Pattern.DOTALL);
  private static final Pattern MISSING_COLUMN =
      Pattern.compile("column (?:\"(.+)\"|([^\" .]+)\\.([^\" .]+)) does not exist");
  private static final Pattern MISSING_FROM = Pattern.compile("missing FROM-clause entry for table \"(.+)\"");
  private static final Pattern MONTH_OVERFLOW =
      Pattern.compile("date/time field value out of range: \"\\d+-(\\d+)-\\d+.*\"");
  private static final Pattern NO_CAST = Pattern.compile("cannot cast type (.+) to (.+)");
  private static final Set<String> COMPARISONS = Set.of("=", "<>", "!=", "<", ">", "<=", ">=");
  private static final Pattern GROUPING = Pattern.compile(
      "column \"([^\".]+)\" must appear in the GROUP BY clause or (?:must be part of|be used in) an aggregate "
          + "function\\.?");
  private static final Set<String> FROM_ENDS = Set.of("where", "group", "having", "order", "limit", "offset", "window",
      "union", "intersect", "except", "fetch", "for", "qualify");

  /** The columns of the table a (possibly qualified) name resolves to; empty if none or not a table. */
  interface Columns {
    Optional<List<Column>> of(List<String> name);
  }

  /** {@code e}, a failure of {@code sql} (its position 1-based in {@code sql}), in PostgreSQL's words. */
  private static final Pattern CASE_TYPES = Pattern.compile("CASE types .+ and .+ cannot be matched");

  /**
   * Where PostgreSQL points a CASE whose result types do not match: it takes the ELSE result's type
   * first and then each THEN's, so with an ELSE at the first THEN result, without one at the second.
   */
  private static Token conflictingBranch(List<Token> tokens, int caseAt) {
    List<Token> thens = new ArrayList<>();
    boolean hasElse = false;
    int depth = 0;
    for (int k = caseAt + 1; k < tokens.size(); k++) {
      Token t = tokens.get(k);
      if (t.isOp("(") || t.isKeyword("case")) {
        depth++;
      } else if (t.isOp(")") || t.isKeyword("end")) {
        if (depth == 0) {
          break;
        }
        depth--;
      } else if (depth == 0 && t.isKeyword("then") && k + 1 < tokens.size()) {
        thens.add(tokens.get(k + 1));
      } else if (depth == 0 && t.isKeyword("else")) {
        hasElse = true;
      }
    }
    int index = hasElse ? 0 : 1;
    return index < thens.size() ? thens.get(index) : null;
  }

  private static final Pattern UNIT_NOT_RECOGNIZED = Pattern.compile("unit \"(.+)\" not recognized");

  /**
   * The string literal read as an interval ({@code 'x'::interval}, {@code CAST('x' AS interval)},
   * {@code INTERVAL 'x'}) whose text holds {@code unit}, or null.
   */
  private static Token intervalLiteral(List<Token> tokens, String unit) {
    for (int k = 0; k < tokens.size(); k++) {
      Token t = tokens.get(k);
      if (t.type() != Token.Type.STRING || !t.value().toLowerCase(java.util.Locale.ROOT).contains(
          unit.toLowerCase(java.util.Locale.ROOT))) {
        continue;
      }
      boolean cast = k + 2 < tokens.size() && tokens.get(k + 1).isOp("::") && tokens.get(k + 2).isKeyword("interval");
      boolean typed = k > 0 && tokens.get(k - 1).isKeyword("interval");
      boolean castAs = k + 2 < tokens.size() && tokens.get(k + 1).isKeyword("as")
          && tokens.get(k + 2).isKeyword("interval");
      if (cast || typed || castAs) {
        return t;
      }
    }
    return null;
  }

  static FloeException refine(FloeException e, String sql, Columns columns) {
    String message = e.getMessage() == null ? "" : e.getMessage();
    List<Token> tokens;
    try {
      tokens = Lexer.tokenize(sql);
    } catch (FloeException unreadable) {
      return e;
    }
    int at = indexAt(tokens, e.position());
    if (CASE_TYPES.matcher(message).matches() && at >= 0 && tokens.get(at).isKeyword("case")) {
      Token branch = conflictingBranch(tokens, at);
      if (branch != null) {
        return with(e, e.sqlState(), message, branch.position());
      }
    }
    Matcher unit = UNIT_NOT_RECOGNIZED.matcher(message);
    if (unit.matches()) {
      Token literal = intervalLiteral(tokens, unit.group(1));
      if (literal != null) {
        // an interval's text with a unit it does not know: PostgreSQL calls the text invalid, at it
        return with(e, SqlState.INVALID_DATETIME_FORMAT, "invalid input syntax for type interval: \""
            + literal.value() + "\"", literal.position());
      }
    }
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
    if (e.sqlState().equals(SqlState.UNDEFINED_COLUMN) && e.hint().isEmpty() && at >= 0) {
      FloeException hinted = missingColumnHint(e, tokens, at, columns);
      if (hinted != null) {
        return hinted;
      }
    }
    m = BAD_INPUT.matcher(message);
    if (m.matches() && at >= 0 && tokens.get(at).isIdentifier()) {
      FloeException typed = textColumnMisused(e, tokens, at, m.group(1), columns);
      if (typed != null) {
        return typed;
      }
    }
    m = BAD_INPUT.matcher(message);
    if (m.matches() && at >= 0 && tokens.get(at).type() == Token.Type.STRING) {
      String type = comparedColumnType(tokens, at, columns);
      if ("timestamp with time zone".equals(type) && m.group(1).equals("timestamp")) {
        // DuckDB reads the literal as a timestamp; PostgreSQL names the column's type (with time zone)
        return with(e, e.sqlState(), "invalid input syntax for type " + type + ": \"" + m.group(2) + "\"",
            e.position());
      }
    }
    m = MISSING_FROM.matcher(message);
    if (m.matches()) {
      List<FromItem> items = fromItems(tokens);
      String table = m.group(1);
      FromItem aliased = items == null ? null : items.stream()
          .filter(i -> i.table().get(i.table().size() - 1).equals(table) && !i.alias().equals(table))
          .findFirst().orElse(null);
      if (aliased != null) {
        return new FloeException(e.sqlState(), "invalid reference to FROM-clause entry for table \"" + table + "\"",
            e.detail().orElse(null), "Perhaps you meant to reference the table alias \"" + aliased.alias() + "\".",
            e.position(), e.getCause());
      }
    }
    m = MONTH_OVERFLOW.matcher(message);
    if (m.matches() && e.hint().isEmpty() && Integer.parseInt(m.group(1)) > 12) {
      return new FloeException(e.sqlState(), message, e.detail().orElse(null),
          "Perhaps you need a different \"datestyle\" setting.", e.position(), e.getCause());
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

  /** A FROM item: a table's name as written and the name the query knows it by. */
  private record FromItem(List<String> table, String alias) {}

  /**
   * The query's FROM items, when every one is a table named plainly ({@code FROM a x JOIN s.b ON ...,
   * c}); null when one is a subquery, a function or anything else, whose columns are unknown here.
   */
  private static List<FromItem> fromItems(List<Token> tokens) {
    List<FromItem> items = new ArrayList<>();
    for (int i = 0; i < tokens.size(); i++) {
      Token t = tokens.get(i);
      boolean starts = t.isKeyword("from") || t.isKeyword("join")
          || t.isOp(",") && !items.isEmpty() && inFromList(tokens, i);
      if (!starts) {
        continue;
      }
      int k = i + 1;
      List<String> name = new ArrayList<>();
      while (k < tokens.size() && tokens.get(k).isIdentifier()) {
        name.add(tokens.get(k).value());
        k++;
        if (k < tokens.size() && tokens.get(k).isOp(".")) {
          k++;
        } else {
          break;
        }
      }
      if (name.isEmpty() || k < tokens.size() && tokens.get(k).isOp("(")) {
        return null; // a subquery or a table function
      }
      String alias = name.get(name.size() - 1);
      if (k < tokens.size() && tokens.get(k).isKeyword("as")) {
        k++;
      }
      if (k < tokens.size() && tokens.get(k).isIdentifier() && !ALIAS_STOPS.contains(tokens.get(k).value())) {
        alias = tokens.get(k).value();
      }
      items.add(new FromItem(name, alias));
    }
    return items;
  }

  private static final Set<String> ALIAS_STOPS = Set.of("where", "group", "having", "order", "limit", "offset",
      "window", "union", "intersect", "except", "fetch", "for", "join", "inner", "left", "right", "full", "cross",
      "natural", "on", "using", "lateral", "qualify", "returning", "set", "when", "tablesample");

  /** Whether the comma at {@code i} separates FROM items: the keyword before it, at its depth, is FROM. */
  private static boolean inFromList(List<Token> tokens, int i) {
    int depth = 0;
    for (int k = i - 1; k >= 0; k--) {
      Token t = tokens.get(k);
      if (t.isOp(")")) {
        depth++;
      } else if (t.isOp("(")) {
        if (depth-- == 0) {
          return false;
        }
      } else if (depth == 0 && t.type() == Token.Type.IDENT && Set.of("select", "where", "on", "by", "having",
          "values", "set", "using").contains(t.value())) {
        return false;
      } else if (depth == 0 && t.isKeyword("from")) {
        return true;
      }
    }
    return false;
  }

  /**
   * PostgreSQL's hint for a column that does not exist: the column, of a table in FROM, whose name is
   * closest (Levenshtein distance at most 3 and at most half the name's length), or the two equally close
   * ones; none when no name is close or when FROM holds something other than tables.
   */
  private static FloeException missingColumnHint(FloeException e, List<Token> tokens, int at, Columns columns) {
    Matcher m = MISSING_COLUMN.matcher(e.getMessage());
    if (!m.matches() || !tokens.get(at).isIdentifier()) {
      return null;
    }
    String typed = m.group(1) != null ? m.group(1) : m.group(3);
    String qualifier = m.group(1) != null ? null : m.group(2);
    List<FromItem> items = fromItems(tokens);
    if (items == null || items.isEmpty()) {
      return null;
    }
    int best = 4; // PostgreSQL's MAX_FUZZY_DISTANCE + 1
    List<String> matches = new ArrayList<>();
    for (FromItem item : items) {
      if (qualifier != null && !qualifier.equals(item.alias())) {
        continue; // t.x: only t's columns (PostgreSQL weighs a misspelt qualifier too; Floe does not guess)
      }
      Optional<List<Column>> cols = columns.of(item.table());
      if (cols.isEmpty()) {
        return null;
      }
      for (Column c : cols.get()) {
        int d = levenshtein(c.name(), typed);
        if (d > typed.length() / 2) {
          continue;
        }
        if (d < best) {
          best = d;
          matches.clear();
          matches.add(item.alias() + "." + c.name());
        } else if (d == best) {
          matches.add(item.alias() + "." + c.name());
        }
      }
    }
    String hint = switch (matches.size()) {
      case 1 -> "Perhaps you meant to reference the column \"" + matches.get(0) + "\".";
      case 2 -> "Perhaps you meant to reference the column \"" + matches.get(0) + "\" or the column \""
          + matches.get(1) + "\".";
      default -> null;
    };
    return hint == null ? null
        : new FloeException(e.sqlState(), e.getMessage(), e.detail().orElse(null), hint, e.position(), e.getCause());
  }

  /**
   * A text column compared with a number ({@code payment_type = 1}) or used as a condition
   * ({@code WHERE note}): DuckDB converts the column's values and fails on the first that is not a
   * number; PostgreSQL refuses the statement for its types.
   */
  private static FloeException textColumnMisused(FloeException e, List<Token> tokens, int at, String target,
      Columns columns) {
    int end = at;
    while (end + 2 < tokens.size() && tokens.get(end + 1).isOp(".") && tokens.get(end + 2).isIdentifier()) {
      end += 2;
    }
    String name = tokens.get(end).value();
    String qualifier = end > at ? tokens.get(end - 2).value() : null;
    List<FromItem> items = fromItems(tokens);
    if (items == null) {
      return null;
    }
    String type = null;
    for (FromItem item : items) {
      if (qualifier != null && !qualifier.equals(item.alias())) {
        continue;
      }
      Optional<List<Column>> cols = columns.of(item.table());
      if (cols.isEmpty()) {
        return null;
      }
      for (Column c : cols.get()) {
        if (c.name().equalsIgnoreCase(name)) {
          if (type != null) {
            return null; // ambiguous: not this mistake
          }
          type = c.type().toString().replaceFirst("\\(.*\\)$", "");
        }
      }
    }
    if (type == null) {
      return null;
    }
    Token before = at > 0 ? tokens.get(at - 1) : null;
    Token after = end + 1 < tokens.size() ? tokens.get(end + 1) : null;
    if (after != null && after.type() == Token.Type.OP && COMPARISONS.contains(after.text())) {
      return new FloeException(SqlState.UNDEFINED_FUNCTION, "operator does not exist: " + type + " " + after.text()
          + " " + target, null, DuckErrors.OPERATOR_HINT, after.position(), e.getCause());
    }
    if (before != null && before.type() == Token.Type.OP && COMPARISONS.contains(before.text())) {
      return new FloeException(SqlState.UNDEFINED_FUNCTION, "operator does not exist: " + target + " " + before.text()
          + " " + type, null, DuckErrors.OPERATOR_HINT, before.position(), e.getCause());
    }
    boolean alone = after == null || after.type() == Token.Type.EOF || after.isOp(";") || after.isOp(")")
        || after.type() == Token.Type.IDENT && ALIAS_STOPS.contains(after.value());
    if (target.equals("boolean") && before != null && alone
        && (before.isKeyword("where") || before.isKeyword("having") || before.isKeyword("on"))) {
      return new FloeException(SqlState.DATATYPE_MISMATCH, "argument of " + before.value().toUpperCase(Locale.ROOT)
          + " must be type boolean, not type " + type, null, null, e.position(), e.getCause());
    }
    return null;
  }

  /** The type of the column a literal at {@code at} is compared with ({@code col > 'x'}, {@code 'x' = col}). */
  private static String comparedColumnType(List<Token> tokens, int at, Columns columns) {
    Token column = null;
    if (at >= 2 && tokens.get(at - 1).type() == Token.Type.OP && COMPARISONS.contains(tokens.get(at - 1).text())
        && tokens.get(at - 2).isIdentifier()) {
      column = tokens.get(at - 2);
    } else if (at + 2 < tokens.size() && tokens.get(at + 1).type() == Token.Type.OP
        && COMPARISONS.contains(tokens.get(at + 1).text()) && tokens.get(at + 2).isIdentifier()) {
      column = tokens.get(at + 2);
    }
    List<FromItem> items = column == null ? null : fromItems(tokens);
    if (items == null) {
      return null;
    }
    String type = null;
    for (FromItem item : items) {
      for (Column c : columns.of(item.table()).orElse(List.of())) {
        if (c.name().equalsIgnoreCase(column.value())) {
          if (type != null) {
            return null;
          }
          type = c.type().toString();
        }
      }
    }
    return type;
  }

  /** Levenshtein distance, insertions, deletions and substitutions costing 1 each (PostgreSQL's weights). */
  static int levenshtein(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
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
