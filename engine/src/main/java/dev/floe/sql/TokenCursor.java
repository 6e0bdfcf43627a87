package dev.floe.sql;

import dev.floe.FloeException;
import java.util.ArrayList;
import java.util.List;

/**
 * The tokens of one statement and the parser's place in them, shared by the parts of the parser
 * ({@link Parser} and the classes it hands statements to): look ahead, consume, accept or expect a keyword or
 * operator, read a name, and build PostgreSQL's syntax errors ({@code syntax error at or near "x"} at the
 * offending token's position, {@code syntax error at end of input}).
 */
final class TokenCursor {
  private final String sql;
  private final List<Token> tokens;
  private int i;

  TokenCursor(String sql) {
    this.sql = sql;
    this.tokens = Lexer.tokenize(sql);
  }

  /** The statement's text, which tokens' offsets index. */
  String sql() {
    return sql;
  }

  /** Every token, the last one EOF. */
  List<Token> tokens() {
    return tokens;
  }

  /** The index of the next token. */
  int index() {
    return i;
  }

  /** Moves to the token at {@code index}: back, to parse again after a look ahead, or forward past a skipped part. */
  void seek(int index) {
    i = index;
  }

  /** The next token, not consumed. */
  Token peek() {
    return tokens.get(i);
  }

  /** The token {@code ahead} places after the next one; EOF past the end. */
  Token peekAt(int ahead) {
    return tokens.get(Math.min(i + ahead, tokens.size() - 1));
  }

  /** Consumes the next token; at EOF the cursor stays there. */
  Token next() {
    Token t = tokens.get(i);
    if (t.type() != Token.Type.EOF) {
      i++;
    }
    return t;
  }

  boolean acceptKeyword(String keyword) {
    if (peek().isKeyword(keyword)) {
      next();
      return true;
    }
    return false;
  }

  void expectKeyword(String keyword) {
    Token t = next();
    if (!t.isKeyword(keyword)) {
      throw unexpected(t);
    }
  }

  boolean acceptOp(String op) {
    if (peek().isOp(op)) {
      next();
      return true;
    }
    return false;
  }

  void expectOp(String op) {
    Token t = next();
    if (!t.isOp(op)) {
      throw unexpected(t);
    }
  }

  /** The statement ends here, with or without a final semicolon. */
  void expectEnd() {
    Token t = peek();
    if (t.isOp(";") && peekAt(1).type() == Token.Type.EOF) {
      return;
    }
    if (t.type() != Token.Type.EOF) {
      throw unexpected(t);
    }
  }

  String identifier() {
    Token t = next();
    if (!t.isIdentifier()) {
      throw unexpected(t);
    }
    return t.value();
  }

  /** A possibly qualified name: identifiers joined by dots. */
  QualifiedName qualifiedName() {
    Token first = peek();
    List<String> parts = new ArrayList<>();
    parts.add(identifier());
    while (peek().isOp(".")) {
      next();
      parts.add(identifier());
    }
    return new QualifiedName(parts, first.position());
  }

  /** PostgreSQL's 42601 for a token that cannot stand where it is, at its position. */
  static FloeException unexpected(Token t) {
    if (t.type() == Token.Type.EOF) {
      return FloeException.syntax("syntax error at end of input", t.position());
    }
    return FloeException.syntax("syntax error at or near \"" + t.text() + "\"", t.position());
  }
}
