package dev.floe.server.pg;

import dev.floe.FloeException;
import dev.floe.sql.Lexer;
import dev.floe.sql.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Statements about the session rather than the data, which the protocol layer answers itself:
 * SET/SHOW/RESET of run-time parameters, transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, ...),
 * DISCARD and DEALLOCATE. Everything else goes to the engine.
 *
 * @param kind what the statement does
 * @param name the parameter, savepoint or prepared statement it names (null for none, or ALL)
 * @param value for SET, the new value (null: DEFAULT)
 */
record SessionCommand(Kind kind, String name, String value) {
  enum Kind { SET, SHOW, RESET, BEGIN, START, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK_TO, DISCARD_ALL,
    DEALLOCATE, SET_TRANSACTION }

  /** The command tag PostgreSQL sends for it. */
  String tag() {
    return switch (kind) {
      case SET, SET_TRANSACTION -> "SET";
      case SHOW -> "SHOW";
      case RESET -> "RESET";
      case BEGIN -> "BEGIN";
      case START -> "START TRANSACTION";
      case COMMIT -> "COMMIT";
      case ROLLBACK, ROLLBACK_TO -> "ROLLBACK";
      case SAVEPOINT -> "SAVEPOINT";
      case RELEASE -> "RELEASE";
      case DISCARD_ALL -> "DISCARD ALL";
      case DEALLOCATE -> name == null ? "DEALLOCATE ALL" : "DEALLOCATE";
    };
  }

  boolean endsTransaction() {
    return kind == Kind.COMMIT || kind == Kind.ROLLBACK || kind == Kind.ROLLBACK_TO;
  }

  /** The session command a statement is, or null if it is for the engine. */
  static SessionCommand parse(String sql) {
    List<Token> all;
    try {
      all = Lexer.tokenize(sql);
    } catch (FloeException e) {
      return null; // the engine reports the lexical error
    }
    List<Token> t = new ArrayList<>();
    for (Token k : all) {
      if (k.type() != Token.Type.EOF) {
        t.add(k);
      }
    }
    if (t.isEmpty() || t.get(0).type() != Token.Type.IDENT) {
      return null;
    }
    String first = t.get(0).value();
    Cursor c = new Cursor(t, 1);
    return switch (first) {
      case "set" -> set(c);
      case "show" -> show(c);
      case "reset" -> {
        String name = c.rest().toLowerCase(Locale.ROOT);
        yield new SessionCommand(Kind.RESET, name.equals("all") ? null : normalise(name), null);
      }
      case "begin" -> new SessionCommand(Kind.BEGIN, null, null);
      case "start" -> c.keyword("transaction") ? new SessionCommand(Kind.START, null, null) : null;
      case "commit", "end" -> new SessionCommand(Kind.COMMIT, null, null);
      case "abort" -> new SessionCommand(Kind.ROLLBACK, null, null);
      case "rollback" -> {
        if (c.keyword("work") || c.keyword("transaction")) {
          // optional noise word
        }
        if (c.keyword("to")) {
          c.keyword("savepoint");
          yield new SessionCommand(Kind.ROLLBACK_TO, c.identifier(), null);
        }
        yield new SessionCommand(Kind.ROLLBACK, null, null);
      }
      case "savepoint" -> new SessionCommand(Kind.SAVEPOINT, c.identifier(), null);
      case "release" -> {
        c.keyword("savepoint");
        yield new SessionCommand(Kind.RELEASE, c.identifier(), null);
      }
      case "discard" -> c.keyword("all") ? new SessionCommand(Kind.DISCARD_ALL, null, null) : null;
      case "deallocate" -> {
        c.keyword("prepare");
        if (c.keyword("all")) {
          yield new SessionCommand(Kind.DEALLOCATE, null, null);
        }
        yield new SessionCommand(Kind.DEALLOCATE, c.identifier(), null);
      }
      default -> null;
    };
  }

  private static SessionCommand show(Cursor c) {
    String rest = c.rest().toLowerCase(Locale.ROOT);
    return switch (rest) {
      case "tables", "schemas" -> null; // the engine's SHOW TABLES / SHOW SCHEMAS
      case "all" -> new SessionCommand(Kind.SHOW, null, null);
      case "time zone" -> new SessionCommand(Kind.SHOW, "TimeZone", null);
      case "transaction isolation level" -> new SessionCommand(Kind.SHOW, "transaction_isolation", null);
      default -> rest.startsWith("tables ") ? null : new SessionCommand(Kind.SHOW, normalise(rest), null);
    };
  }

  private static SessionCommand set(Cursor c) {
    if (!c.keyword("session")) {
      c.keyword("local");
    }
    if (c.keyword("characteristics") || c.keyword("transaction")) {
      return new SessionCommand(Kind.SET_TRANSACTION, null, null);
    }
    if (c.keyword("time")) {
      if (!c.keyword("zone")) {
        throw FloeExceptionSyntax.at(c);
      }
      String v = c.values();
      return new SessionCommand(Kind.SET, "TimeZone", v.equalsIgnoreCase("local") ? null : v);
    }
    if (c.keyword("names")) {
      return new SessionCommand(Kind.SET, "client_encoding", c.values());
    }
    if (c.keyword("role") || c.keyword("session_authorization")) {
      return new SessionCommand(Kind.SET, "role", c.values());
    }
    String name = c.dottedName();
    if (name == null || !(c.keyword("to") || c.op("="))) {
      throw FloeExceptionSyntax.at(c);
    }
    String value = c.values();
    return new SessionCommand(Kind.SET, name, value);
  }

  private static String normalise(String name) {
    return name.replace(" ", "");
  }

  /** Reads tokens in order. */
  private static final class Cursor {
    private final List<Token> tokens;
    private int i;

    Cursor(List<Token> tokens, int i) {
      this.tokens = tokens;
      this.i = i;
    }

    boolean keyword(String k) {
      if (i < tokens.size() && tokens.get(i).isKeyword(k)) {
        i++;
        return true;
      }
      return false;
    }

    boolean op(String o) {
      if (i < tokens.size() && tokens.get(i).isOp(o)) {
        i++;
        return true;
      }
      return false;
    }

    String identifier() {
      if (i >= tokens.size() || !tokens.get(i).isIdentifier()) {
        throw FloeExceptionSyntax.at(this);
      }
      return tokens.get(i++).value();
    }

    /** A parameter name, possibly {@code extension.name}. */
    String dottedName() {
      if (i >= tokens.size() || !tokens.get(i).isIdentifier()) {
        return null;
      }
      StringBuilder b = new StringBuilder(tokens.get(i++).value());
      while (i + 1 < tokens.size() && tokens.get(i).isOp(".") && tokens.get(i + 1).isIdentifier()) {
        b.append('.').append(tokens.get(i + 1).value());
        i += 2;
      }
      return b.toString();
    }

    /** The words after the command, as written (SHOW/RESET names). */
    String rest() {
      StringBuilder b = new StringBuilder();
      while (i < tokens.size()) {
        Token t = tokens.get(i++);
        if (t.isOp(";")) {
          break;
        }
        if (b.length() > 0 && !t.isOp(".") && !b.toString().endsWith(".")) {
          b.append(' ');
        }
        b.append(t.type() == Token.Type.QUOTED_IDENT ? t.value() : t.text());
      }
      return b.toString();
    }

    /** A SET value list: names, strings and numbers, separated by commas; DEFAULT is null. */
    String values() {
      List<String> parts = new ArrayList<>();
      while (i < tokens.size()) {
        Token t = tokens.get(i);
        if (t.isKeyword("default") && parts.isEmpty()) {
          i++;
          return null;
        }
        String part;
        if (t.isOp("-") || t.isOp("+")) {
          if (i + 1 >= tokens.size() || tokens.get(i + 1).type() != Token.Type.NUMBER) {
            throw FloeExceptionSyntax.at(this);
          }
          part = t.text() + tokens.get(i + 1).text();
          i += 2;
        } else if (t.type() == Token.Type.STRING || t.type() == Token.Type.NUMBER || t.isIdentifier()) {
          part = t.type() == Token.Type.NUMBER ? t.text() : t.value();
          i++;
        } else {
          throw FloeExceptionSyntax.at(this);
        }
        // "$user" in search_path keeps its quotes, as PostgreSQL shows it
        if (t.type() == Token.Type.QUOTED_IDENT && part.startsWith("$")) {
          part = "\"" + part + "\"";
        }
        parts.add(part);
        if (i < tokens.size() && tokens.get(i).isOp(",")) {
          i++;
          continue;
        }
        break;
      }
      if (parts.isEmpty() || i < tokens.size()) {
        throw FloeExceptionSyntax.at(this);
      }
      return String.join(", ", parts);
    }

    int position() {
      return i < tokens.size() ? tokens.get(i).position() : tokens.isEmpty() ? 0
          : tokens.get(tokens.size() - 1).end() + 1;
    }

    String near() {
      return i < tokens.size() ? "at or near \"" + tokens.get(i).text() + "\"" : "at end of input";
    }
  }

  private static final class FloeExceptionSyntax {
    static FloeException at(Cursor c) {
      return FloeException.syntax("syntax error " + c.near(), c.position());
    }
  }
}
