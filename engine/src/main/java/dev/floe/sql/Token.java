package dev.floe.sql;

import java.util.Locale;

/**
 * A lexical token of PostgreSQL-flavoured SQL.
 *
 * @param type what kind of token
 * @param text the exact source text
 * @param value identifiers folded to lower case (quoted ones as written), strings unescaped
 * @param start offset of the first character in the statement text
 * @param end offset after the last character
 */
public record Token(Type type, String text, String value, int start, int end) {

  public enum Type { IDENT, QUOTED_IDENT, STRING, NUMBER, PARAM, OP, EOF }

  /** True for an unquoted identifier equal (case-insensitively) to {@code keyword}. */
  public boolean isKeyword(String keyword) {
    return type == Type.IDENT && value.equals(keyword.toLowerCase(Locale.ROOT));
  }

  public boolean isOp(String op) {
    return type == Type.OP && text.equals(op);
  }

  public boolean isIdentifier() {
    return type == Type.IDENT || type == Type.QUOTED_IDENT;
  }

  /** 1-based position for error reports. */
  public int position() {
    return start + 1;
  }
}
