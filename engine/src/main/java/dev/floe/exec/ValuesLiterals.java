package dev.floe.exec;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.sql.Lexer;
import dev.floe.sql.TextEdits;
import dev.floe.sql.Token;
import java.io.ByteArrayOutputStream;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.IntFunction;

/**
 * PostgreSQL's reading of literals in {@code INSERT ... VALUES}: a quoted literal has no type of its own
 * and is read as the target column's type (so {@code VALUES ('30'), (31)} fills an integer column), with
 * PostgreSQL's input rules where DuckDB's casts differ ({@code '1.5'} is not an integer; {@code 'on'} and
 * {@code 'yes'} are booleans; {@code '\x0a0b'} is bytea hex), and {@code DEFAULT} stands for the
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
    if (tokens.isEmpty() || !tokens.get(0).isKeyword("values")) {
      return query;
    }
    TextEdits edits = new TextEdits();
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
        if (i - itemStart == 1 && column < targets.size()) {
          String replacement = literal(tokens.get(itemStart), targets.get(column), defaults.apply(column), offset);
          if (replacement != null) {
            edits.replace(tokens.get(itemStart).start(), tokens.get(itemStart).end(), replacement);
          }
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
    return edits.isEmpty() ? query : edits.apply(query);
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
      case BYTEA -> "unhex(" + Lexer.quoteString(HexFormat.of().formatHex(bytea(value, item, offset))) + ")";
      case TEXT, VARCHAR, CHAR -> null;
      default -> "CAST(" + Lexer.quoteString(value) + " AS " + duckType + ")";
    };
  }

  /** PostgreSQL bytea input: {@code \x} hex, or the escape format ({@code \\} and {@code \nnn} octal). */
  static byte[] bytea(String value, Token item, int offset) {
    if (value.startsWith("\\x")) {
      String hex = value.substring(2).replaceAll("\\s", "");
      try {
        return HexFormat.of().parseHex(hex);
      } catch (IllegalArgumentException e) {
        throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "invalid hexadecimal data: \"" + value + "\"",
            null, null, offset + item.position(), null);
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] raw = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    for (int i = 0; i < raw.length; i++) {
      if (raw[i] != '\\') {
        out.write(raw[i]);
      } else if (i + 1 < raw.length && raw[i + 1] == '\\') {
        out.write('\\');
        i++;
      } else if (i + 3 < raw.length && isOctal(raw[i + 1]) && isOctal(raw[i + 2]) && isOctal(raw[i + 3])) {
        out.write(((raw[i + 1] - '0') << 6) | ((raw[i + 2] - '0') << 3) | (raw[i + 3] - '0'));
        i += 3;
      } else {
        throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type bytea", null,
            null, offset + item.position(), null);
      }
    }
    return out.toByteArray();
  }

  private static boolean isOctal(byte b) {
    return b >= '0' && b <= '7';
  }

  private static FloeException invalid(SqlType type, String value, Token item, int offset) {
    String name = switch (type.kind()) {
      case SMALLINT -> "smallint";
      case BIGINT -> "bigint";
      case INTEGER -> "integer";
      default -> type.displayName();
    };
    return new FloeException(SqlState.INVALID_TEXT_REPRESENTATION,
        "invalid input syntax for type " + name + ": \"" + value + "\"", null, null, offset + item.position(), null);
  }
}
