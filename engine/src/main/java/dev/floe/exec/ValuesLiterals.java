package dev.floe.exec;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.sql.Lexer;
import dev.floe.types.ByteaText;
import dev.floe.types.PgDateTime;
import dev.floe.sql.TextEdits;
import dev.floe.sql.Token;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.IntFunction;

/**
 * PostgreSQL's reading of literals in {@code INSERT ... VALUES}: a quoted literal has no type of its own
 * and is read as the target column's type (so {@code VALUES ('30'), (31)} fills an integer column), with
 * PostgreSQL's input rules where DuckDB's casts differ ({@code '1.5'} is not an integer; {@code 'on'} and
 * {@code 'yes'} are booleans; {@code '\x0a0b'} is bytea hex; {@code '0044-03-15 BC'} is a date, and
 * there is no year 0), and {@code DEFAULT} stands for the
 * column's default.
 */
final class ValuesLiterals {
  private static final Set<String> TRUE_WORDS = Set.of("t", "true", "y", "yes", "on", "1");
  private static final Set<String> FALSE_WORDS = Set.of("f", "false", "n", "no", "off", "0");

  private ValuesLiterals() {}

  /**
   * Rewrites a VALUES query for {@code targets}; other queries are returned unchanged.
   *
   * @param defaults the SQL of column k's default (a typed literal or NULL)
   * @param offset where {@code query} starts in the statement, for error positions
   */
  static String rewrite(String query, List<Column> targets, IntFunction<String> defaults, int offset) {
    List<Token> tokens = Lexer.tokenize(query);
    TextEdits edits = new TextEdits();
    boolean values = items(tokens, (column, first, last) -> {
      if (first == last && column < targets.size()) {
        String replacement = literal(tokens.get(first), targets.get(column), defaults.apply(column), offset);
        if (replacement != null) {
          edits.replace(tokens.get(first).start(), tokens.get(first).end(), replacement);
        }
      }
    });
    return !values || edits.isEmpty() ? query : edits.apply(query);
  }

  /**
   * A column definition whose DEFAULT is a lone quoted literal, with it read as the column's type
   * (PostgreSQL reads {@code DEFAULT '0044-03-15 BC'} as a date); others as they are.
   */
  static dev.floe.sql.Ast.ColumnDef typedDefault(dev.floe.sql.Ast.ColumnDef c) {
    if (c.defaultSql().isEmpty()) {
      return c;
    }
    List<Token> tokens = Lexer.tokenize(c.defaultSql().get());
    if (tokens.size() != 2 || tokens.get(0).type() != Token.Type.STRING) {
      return c;
    }
    String typed;
    try {
      typed = literal(tokens.get(0), new Column(c.name(), c.type(), true, 0), null, 0);
    } catch (FloeException e) {
      throw new FloeException(e.sqlState(), e.getMessage(), e.detail().orElse(null), e.hint().orElse(null),
          c.position(), e.getCause());
    }
    return typed == null ? c : new dev.floe.sql.Ast.ColumnDef(c.name(), c.type(), c.notNull(), java.util.Optional.of(
        typed), c.position(), c.identity());
  }

  /** Whether {@code query} is a VALUES list whose every row has DEFAULT as its value {@code column}. */
  static boolean onlyDefaults(String query, int column) {
    List<Token> tokens = Lexer.tokenize(query);
    boolean[] all = {true};
    boolean values = items(tokens, (k, first, last) -> {
      if (k == column && !(first == last && tokens.get(first).isKeyword("default"))) {
        all[0] = false;
      }
    });
    return values && all[0];
  }

  /**
   * How many rows {@code query} returns, when it is a bare VALUES list (nothing after the rows: no ORDER
   * BY, LIMIT or UNION); -1 otherwise.
   */
  static long rows(String query) {
    List<Token> tokens = Lexer.tokenize(query);
    if (tokens.isEmpty() || !tokens.get(0).isKeyword("values")) {
      return -1;
    }
    int depth = 0;
    long rows = 0;
    for (int i = 1; i < tokens.size(); i++) {
      Token t = tokens.get(i);
      if (t.isOp("(") || t.isOp("[")) {
        if (depth == 0) {
          rows++;
        }
        depth++;
      } else if (t.isOp(")") || t.isOp("]")) {
        depth--;
      } else if (depth == 0 && !t.isOp(",") && !t.isOp(";") && t.type() != Token.Type.EOF) {
        return -1;
      }
    }
    return rows;
  }

  /**
   * The 0-based offset in {@code query} of the first value of a VALUES row beyond {@code columns} values,
   * where PostgreSQL points "INSERT has more expressions than target columns"; -1 if none or not VALUES.
   */
  static int firstExtra(String query, int columns) {
    List<Token> tokens = Lexer.tokenize(query);
    int[] at = {-1};
    items(tokens, (k, first, last) -> {
      if (k == columns && at[0] < 0) {
        at[0] = tokens.get(first).start();
      }
    });
    return at[0];
  }

  /** One value of a VALUES row: its column and its first and last token (inclusive). */
  private interface Item {
    void accept(int column, int first, int last);
  }

  /** Visits each value of each row of a VALUES list; false if the query is not one. */
  private static boolean items(List<Token> tokens, Item visitor) {
    if (tokens.isEmpty() || !tokens.get(0).isKeyword("values")) {
      return false;
    }
    int depth = 0;
    int column = 0;
    int itemStart = -1;
    for (int i = 1; i < tokens.size(); i++) {
      Token t = tokens.get(i);
      if (t.isOp("(") || t.isOp("[")) {
        depth++;
        if (depth == 1) {
          column = 0;
          itemStart = i + 1;
        }
        continue;
      }
      if (depth == 1 && (t.isOp(",") || t.isOp(")"))) {
        if (i > itemStart) {
          visitor.accept(column, itemStart, i - 1);
        }
        column++;
        itemStart = i + 1;
      }
      if (t.isOp(")") || t.isOp("]")) {
        depth--;
      }
      if (depth == 0 && t.type() == Token.Type.IDENT && !t.isKeyword("values")) {
        break; // ORDER BY, LIMIT, ...: the rows are over
      }
    }
    return true;
  }

  private static String literal(Token item, Column target, String defaultSql, int offset) {
    if (item.isKeyword("default")) {
      return defaultSql;
    }
    SqlType type = target.type();
    String duckType = type.kind() == SqlType.Kind.SMALLINT ? "SMALLINT" : type.duckdbName();
    if (item.isKeyword("null")) {
      return "CAST(NULL AS " + duckType + ")";
    }
    if (item.type() != Token.Type.STRING || item.text().startsWith("$") || item.text().matches("(?s)^[bBxX]'.*")) {
      return null;
    }
    String value = item.value();
    return switch (type.kind()) {
      case SMALLINT, INTEGER, BIGINT -> {
        if (!value.strip().matches("[+-]?\\d+")) {
          throw invalid(type, value, item, offset);
        }
        yield "CAST(" + Lexer.quoteString(value.strip()) + " AS " + duckType + ")";
      }
      case BOOLEAN -> {
        String word = value.strip().toLowerCase(Locale.ROOT);
        if (TRUE_WORDS.contains(word) || (word.length() > 1 && ("true".startsWith(word) || "yes".startsWith(word)))) {
          yield "TRUE";
        }
        if (FALSE_WORDS.contains(word) || (word.length() > 1 && ("false".startsWith(word)))) {
          yield "FALSE";
        }
        throw invalid(type, value, item, offset);
      }
      case BYTEA -> {
        try {
          yield ByteaText.sql(ByteaText.parse(value));
        } catch (IllegalArgumentException e) {
          throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, e.getMessage(), offset + item.position());
        }
      }
      case TEXT, VARCHAR, CHAR -> null;
      case DATE, TIMESTAMP, TIMESTAMPTZ -> {
        // PostgreSQL's forms DuckDB does not read ('0044-03-15 BC'), and its checks (no year 0)
        String text;
        try {
          text = PgDateTime.duckdbText(value, type.kind() == SqlType.Kind.DATE ? PgDateTime.Kind.DATE
              : type.kind() == SqlType.Kind.TIMESTAMP ? PgDateTime.Kind.TIMESTAMP : PgDateTime.Kind.TIMESTAMPTZ)
              .orElse(value);
        } catch (FloeException e) {
          throw e.withPosition(offset + item.position());
        }
        yield "CAST(" + Lexer.quoteString(text) + " AS " + duckType + ")";
      }
      default -> "CAST(" + Lexer.quoteString(value) + " AS " + duckType + ")";
    };
  }

  private static FloeException invalid(SqlType type, String value, Token item, int offset) {
    String name = switch (type.kind()) {
      case SMALLINT -> "smallint";
      case BIGINT -> "bigint";
      case INTEGER -> "integer";
      default -> type.displayName();
    };
    return new FloeException(SqlState.INVALID_TEXT_REPRESENTATION,
        "invalid input syntax for type " + name + ": \"" + value + "\"", offset + item.position());
  }
}
