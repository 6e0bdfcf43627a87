package dev.floe.sql;

import dev.floe.FloeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Splits SQL text into {@link Token}s the way PostgreSQL's scanner does: quoted and unquoted
 * identifiers, standard and E'' strings, dollar quoting, nested block comments, numbers, parameters and
 * operators. Comments and whitespace are dropped; every token keeps its source offsets.
 */
public final class Lexer {
  private static final String OPERATOR_CHARS = "+-*/<>=~!@#%^&|`?";
  private static final String[] MULTI_CHAR_OPS = {"::", "<=", ">=", "<>", "!=", "||", "=>", ":="};

  private final String sql;
  private int pos;

  private Lexer(String sql) {
    this.sql = sql;
  }

  /** Tokenizes {@code sql}; the last token is always {@link Token.Type#EOF}. */
  public static List<Token> tokenize(String sql) {
    return new Lexer(sql).run();
  }

  private List<Token> run() {
    List<Token> tokens = new ArrayList<>();
    while (true) {
      skipSpaceAndComments();
      if (pos >= sql.length()) {
        tokens.add(new Token(Token.Type.EOF, "", "", sql.length(), sql.length()));
        return tokens;
      }
      tokens.add(next());
    }
  }

  private void skipSpaceAndComments() {
    while (pos < sql.length()) {
      char c = sql.charAt(pos);
      if (Character.isWhitespace(c)) {
        pos++;
      } else if (c == '-' && peek(1) == '-') {
        while (pos < sql.length() && sql.charAt(pos) != '\n') {
          pos++;
        }
      } else if (c == '/' && peek(1) == '*') {
        int start = pos;
        int depth = 0;
        do {
          if (pos + 1 < sql.length() && sql.charAt(pos) == '/' && sql.charAt(pos + 1) == '*') {
            depth++;
            pos += 2;
          } else if (pos + 1 < sql.length() && sql.charAt(pos) == '*' && sql.charAt(pos + 1) == '/') {
            depth--;
            pos += 2;
          } else if (pos >= sql.length()) {
            throw FloeException.syntax("unterminated /* comment", start + 1);
          } else {
            pos++;
          }
        } while (depth > 0);
      } else {
        return;
      }
    }
  }

  private char peek(int ahead) {
    int i = pos + ahead;
    return i < sql.length() ? sql.charAt(i) : '\0';
  }

  private Token next() {
    int start = pos;
    char c = sql.charAt(pos);
    if ((c == 'e' || c == 'E') && peek(1) == '\'') {
      pos++;
      return string(start, true);
    }
    if ((c == 'x' || c == 'X' || c == 'b' || c == 'B') && peek(1) == '\'') {
      pos++;
      Token s = string(start, false);
      return new Token(Token.Type.STRING, s.text(), s.value(), start, pos);
    }
    if (c == '\'') {
      return string(start, false);
    }
    if (c == '"') {
      return quotedIdentifier(start);
    }
    if (c == '$') {
      if (Character.isDigit(peek(1))) {
        pos++;
        while (pos < sql.length() && Character.isDigit(sql.charAt(pos))) {
          pos++;
        }
        return token(Token.Type.PARAM, start, sql.substring(start, pos));
      }
      Token dollar = dollarString(start);
      if (dollar != null) {
        return dollar;
      }
    }
    if (isIdentStart(c)) {
      pos++;
      while (pos < sql.length() && isIdentPart(sql.charAt(pos))) {
        pos++;
      }
      String text = sql.substring(start, pos);
      return new Token(Token.Type.IDENT, text, text.toLowerCase(Locale.ROOT), start, pos);
    }
    if (Character.isDigit(c) || (c == '.' && Character.isDigit(peek(1)))) {
      return number(start);
    }
    if (c == '?') {
      pos++;
      return token(Token.Type.PARAM, start, "?");
    }
    for (String op : MULTI_CHAR_OPS) {
      if (sql.startsWith(op, pos)) {
        pos += op.length();
        return token(Token.Type.OP, start, op);
      }
    }
    if (OPERATOR_CHARS.indexOf(c) >= 0) {
      pos++;
      while (pos < sql.length() && OPERATOR_CHARS.indexOf(sql.charAt(pos)) >= 0
          && !(sql.charAt(pos) == '-' && peek(1) == '-') && !(sql.charAt(pos) == '/' && peek(1) == '*')) {
        pos++;
      }
      return token(Token.Type.OP, start, sql.substring(start, pos));
    }
    pos++;
    return token(Token.Type.OP, start, String.valueOf(c));
  }

  private Token token(Token.Type type, int start, String value) {
    return new Token(type, sql.substring(start, pos), value, start, pos);
  }

  private Token string(int start, boolean escapes) {
    pos++; // opening quote
    StringBuilder value = new StringBuilder();
    // an E'' string is bytes, as in PostgreSQL: hex and octal escapes are bytes, a Unicode escape the
    // UTF-8 of its character; the whole must be valid UTF-8 without NUL
    java.io.ByteArrayOutputStream bytes = escapes ? new java.io.ByteArrayOutputStream() : null;
    while (true) {
      if (pos >= sql.length()) {
        throw FloeException.syntax("unterminated quoted string at or near \"" + sql.substring(start) + "\"",
            start + 1);
      }
      char c = sql.charAt(pos);
      if (c == '\'') {
        if (peek(1) == '\'') {
          value.append('\'');
          pos += 2;
          continue;
        }
        pos++;
        // Adjacent string literals separated by a newline concatenate, as in PostgreSQL.
        int save = pos;
        int p = pos;
        boolean newline = false;
        while (p < sql.length() && Character.isWhitespace(sql.charAt(p))) {
          newline |= sql.charAt(p) == '\n';
          p++;
        }
        if (newline && p < sql.length() && sql.charAt(p) == '\'') {
          pos = p + 1;
          continue;
        }
        pos = save;
        String text = value.toString();
        if (bytes != null) {
          bytes.writeBytes(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
          text = dev.floe.types.Utf8Text.decode(bytes.toByteArray());
        }
        return new Token(Token.Type.STRING, sql.substring(start, pos), text, start, pos);
      }
      if (escapes && c == '\\' && pos + 1 < sql.length()) {
        bytes.writeBytes(value.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        value.setLength(0);
        escape(bytes, start);
        continue;
      }
      value.append(c);
      pos++;
    }
  }

  /** One backslash escape of an E'' string, as PostgreSQL reads it; {@code pos} is at the backslash. */
  private void escape(java.io.ByteArrayOutputStream bytes, int start) {
    char e = sql.charAt(pos + 1);
    pos += 2;
    switch (e) {
      case 'n' -> bytes.write('\n');
      case 't' -> bytes.write('\t');
      case 'r' -> bytes.write('\r');
      case 'b' -> bytes.write('\b');
      case 'f' -> bytes.write('\f');
      case 'x' -> {
        if (pos < sql.length() && Character.digit(sql.charAt(pos), 16) >= 0) {
          bytes.write(digits(16, 1, 2, start));
        } else {
          bytes.write('x'); // PostgreSQL: \x without a hex digit is the letter
        }
      }
      case 'u', 'U' -> {
        int escapeAt = pos - 2;
        int cp = digits(16, e == 'u' ? 4 : 8, e == 'u' ? 4 : 8, start);
        if (Character.isHighSurrogate((char) cp) && cp <= 0xffff) {
          // a surrogate pair written as two escapes
          if (pos + 1 < sql.length() && sql.charAt(pos) == '\\' && (sql.charAt(pos + 1) == 'u'
              || sql.charAt(pos + 1) == 'U')) {
            char kind = sql.charAt(pos + 1);
            pos += 2;
            int low = digits(16, kind == 'u' ? 4 : 8, kind == 'u' ? 4 : 8, start);
            if (low <= 0xffff && Character.isLowSurrogate((char) low)) {
              cp = Character.toCodePoint((char) cp, (char) low);
            } else {
              throw FloeException.syntax("invalid Unicode surrogate pair", escapeAt + 1);
            }
          } else {
            throw FloeException.syntax("invalid Unicode surrogate pair", escapeAt + 1);
          }
        } else if (cp <= 0xffff && Character.isLowSurrogate((char) cp)) {
          throw FloeException.syntax("invalid Unicode surrogate pair", escapeAt + 1);
        }
        if (cp == 0 || !Character.isValidCodePoint(cp)) {
          throw FloeException.syntax("invalid Unicode escape value at or near \""
              + sql.substring(escapeAt, pos) + "\"", escapeAt + 1);
        }
        bytes.writeBytes(new String(Character.toChars(cp)).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      default -> {
        if (e >= '0' && e <= '7') {
          pos--;
          bytes.write(digits(8, 1, 3, start) & 0xff);
        } else {
          int cp = sql.codePointAt(pos - 1); // the character itself (a pair of chars beyond the BMP)
          pos += Character.charCount(cp) - 1;
          bytes.writeBytes(new String(Character.toChars(cp)).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
      }
    }
  }

  private int digits(int radix, int min, int max, int start) {
    int end = pos;
    while (end < sql.length() && end - pos < max && Character.digit(sql.charAt(end), radix) >= 0) {
      end++;
    }
    if (end - pos < min) {
      throw FloeException.syntax("invalid Unicode escape", start + 1);
    }
    long cp = Long.parseLong(sql.substring(pos, end), radix);
    pos = end;
    if (cp > Character.MAX_CODE_POINT) {
      throw FloeException.syntax("invalid Unicode escape value", start + 1);
    }
    return (int) cp;
  }

  private Token quotedIdentifier(int start) {
    pos++;
    StringBuilder value = new StringBuilder();
    while (true) {
      if (pos >= sql.length()) {
        throw FloeException.syntax("unterminated quoted identifier at or near \"" + sql.substring(start) + "\"",
            start + 1);
      }
      char c = sql.charAt(pos);
      if (c == '"') {
        if (peek(1) == '"') {
          value.append('"');
          pos += 2;
          continue;
        }
        pos++;
        if (value.length() == 0) {
          throw FloeException.syntax("zero-length delimited identifier at or near \"\"\"\"", start + 1);
        }
        return new Token(Token.Type.QUOTED_IDENT, sql.substring(start, pos), value.toString(), start, pos);
      }
      value.append(c);
      pos++;
    }
  }

  private Token dollarString(int start) {
    int p = pos + 1;
    while (p < sql.length() && isIdentPart(sql.charAt(p)) && sql.charAt(p) != '$') {
      p++;
    }
    if (p >= sql.length() || sql.charAt(p) != '$') {
      return null;
    }
    String tag = sql.substring(pos, p + 1);
    int bodyStart = p + 1;
    int close = sql.indexOf(tag, bodyStart);
    if (close < 0) {
      throw FloeException.syntax("unterminated dollar-quoted string at or near \"" + sql.substring(start) + "\"",
          start + 1);
    }
    pos = close + tag.length();
    return new Token(Token.Type.STRING, sql.substring(start, pos), sql.substring(bodyStart, close), start, pos);
  }

  private Token number(int start) {
    while (pos < sql.length() && (Character.isDigit(sql.charAt(pos)) || sql.charAt(pos) == '_')) {
      pos++;
    }
    if (pos < sql.length() && sql.charAt(pos) == '.' && peek(1) != '.') {
      pos++;
      while (pos < sql.length() && Character.isDigit(sql.charAt(pos))) {
        pos++;
      }
    }
    if (pos < sql.length() && (sql.charAt(pos) == 'e' || sql.charAt(pos) == 'E')) {
      int save = pos;
      pos++;
      if (pos < sql.length() && (sql.charAt(pos) == '+' || sql.charAt(pos) == '-')) {
        pos++;
      }
      if (pos < sql.length() && Character.isDigit(sql.charAt(pos))) {
        while (pos < sql.length() && Character.isDigit(sql.charAt(pos))) {
          pos++;
        }
      } else {
        pos = save;
      }
    }
    String text = sql.substring(start, pos);
    return new Token(Token.Type.NUMBER, text, text.replace("_", ""), start, pos);
  }

  static boolean isIdentStart(char c) {
    return Character.isLetter(c) || c == '_' || c > 127;
  }

  static boolean isIdentPart(char c) {
    return Character.isLetterOrDigit(c) || c == '_' || c == '$' || c > 127;
  }

  /** Quotes an identifier for SQL text when needed (always safe to use in generated SQL). */
  public static String quoteIdentifier(String name) {
    return "\"" + name.replace("\"", "\"\"") + "\"";
  }

  /** A SQL string literal. */
  public static String quoteString(String value) {
    return "'" + value.replace("'", "''") + "'";
  }
}
