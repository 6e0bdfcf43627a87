package dev.floe.sql;

import dev.floe.FloeException;
import dev.floe.SessionCommand;
import dev.floe.SqlState;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Parses the statements about a session rather than the data, which front ends answer themselves
 * ({@link SessionCommand}): SET/SHOW/RESET of run-time parameters, DISCARD, DEALLOCATE and cursors.
 * Transaction control is the engine's ({@link Parser}).
 */
public final class SessionStatements {
  private SessionStatements() {}

  /**
   * The session command a statement is, or null if it is not one (the engine's statements, transaction
   * control among them).
   *
   * @throws FloeException 42601 for a session command written wrong
   */
  public static SessionCommand parse(String sql) {
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
        yield SessionCommand.of(SessionCommand.Kind.RESET, name.equals("all") ? null : normalise(name), null);
      }
      case "select" -> setConfig(c);
      case "discard" -> c.keyword("all") ? SessionCommand.of(SessionCommand.Kind.DISCARD_ALL, null, null)
          : c.keyword("sequences") ? SessionCommand.of(SessionCommand.Kind.DISCARD_SEQUENCES, null, null)
          : c.keyword("plans") ? SessionCommand.of(SessionCommand.Kind.DISCARD_PLANS, null, null)
          : c.keyword("temp") || c.keyword("temporary") ? SessionCommand.of(SessionCommand.Kind.DISCARD_TEMP, null, null) : null;
      case "declare" -> declare(c, sql);
      case "fetch", "move" -> fetch(first.equals("fetch") ? SessionCommand.Kind.FETCH : SessionCommand.Kind.MOVE, c);
      case "close" -> SessionCommand.of(SessionCommand.Kind.CLOSE, c.keyword("all") ? null : c.identifier(), null);
      case "deallocate" -> {
        c.keyword("prepare");
        if (c.keyword("all")) {
          yield SessionCommand.of(SessionCommand.Kind.DEALLOCATE, null, null);
        }
        yield SessionCommand.of(SessionCommand.Kind.DEALLOCATE, c.identifier(), null);
      }
      default -> null;
    };
  }

  private static SessionCommand show(Cursor c) {
    String rest = c.rest().toLowerCase(Locale.ROOT);
    return switch (rest) {
      case "tables", "schemas" -> null; // the engine's SHOW TABLES / SHOW SCHEMAS
      case "all" -> SessionCommand.of(SessionCommand.Kind.SHOW, null, null);
      case "time zone" -> SessionCommand.of(SessionCommand.Kind.SHOW, "TimeZone", null);
      case "transaction isolation level" -> SessionCommand.of(SessionCommand.Kind.SHOW, "transaction_isolation", null);
      default -> rest.startsWith("tables ") ? null : SessionCommand.of(SessionCommand.Kind.SHOW, normalise(rest), null);
    };
  }

  private static SessionCommand set(Cursor c) {
    if (!c.keyword("session")) {
      c.keyword("local");
    }
    if (c.keyword("characteristics")) {
      if (!c.keyword("as") || !c.keyword("transaction")) {
        throw FloeExceptionSyntax.at(c);
      }
      return modes(c);
    }
    if (c.keyword("transaction")) {
      return null; // SET TRANSACTION: the engine's transaction control
    }
    if (c.keyword("time")) {
      if (!c.keyword("zone")) {
        throw FloeExceptionSyntax.at(c);
      }
      String v = c.values();
      return SessionCommand.of(SessionCommand.Kind.SET, "TimeZone", v.equalsIgnoreCase("local") ? null : v);
    }
    if (c.keyword("names")) {
      return SessionCommand.of(SessionCommand.Kind.SET, "client_encoding", c.values());
    }
    if (c.keyword("role") || c.keyword("session_authorization")) {
      return SessionCommand.of(SessionCommand.Kind.SET, "role", c.values());
    }
    String name = c.dottedName();
    if (name == null || !(c.keyword("to") || c.op("="))) {
      throw FloeExceptionSyntax.at(c);
    }
    String value = c.values();
    return SessionCommand.of(SessionCommand.Kind.SET, name, value);
  }

  /** {@code DECLARE name [BINARY] [INSENSITIVE] [[NO] SCROLL] CURSOR [WITH[OUT] HOLD] FOR query}. */
  private static SessionCommand declare(Cursor c, String sql) {
    String name = c.identifier();
    boolean hold = false;
    while (!c.keyword("cursor")) {
      if (!(c.keyword("binary") || c.keyword("insensitive") || c.keyword("asensitive") || c.keyword("scroll")
          || c.keyword("no"))) {
        throw FloeExceptionSyntax.at(c);
      }
    }
    if (c.keyword("with")) {
      if (!c.keyword("hold")) {
        throw FloeExceptionSyntax.at(c);
      }
      hold = true;
    } else if (c.keyword("without")) {
      if (!c.keyword("hold")) {
        throw FloeExceptionSyntax.at(c);
      }
    }
    int forAt = c.positionOf("for");
    if (forAt < 0) {
      throw FloeExceptionSyntax.at(c);
    }
    return SessionCommand.declare(name, hold, sql.substring(forAt).strip());
  }

  /** {@code FETCH [NEXT | FORWARD [n | ALL] | n | ALL] [FROM | IN] name}. */
  private static SessionCommand fetch(SessionCommand.Kind kind, Cursor c) {
    long count = 1;
    if (c.keyword("next") || c.keyword("forward")) {
      if (c.keyword("all")) {
        count = Long.MAX_VALUE;
      } else {
        Long n = c.number();
        count = n == null ? 1 : n;
      }
    } else if (c.keyword("all")) {
      count = Long.MAX_VALUE;
    } else if (c.keyword("prior") || c.keyword("first") || c.keyword("last") || c.keyword("absolute")
        || c.keyword("relative") || c.keyword("backward")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cursors can only scan forward",
          null, "Declare it with FETCH FORWARD, NEXT or a count.", 0, null);
    } else {
      Long n = c.number();
      if (n != null) {
        count = n;
      }
    }
    if (!c.keyword("from")) {
      c.keyword("in");
    }
    return SessionCommand.fetch(kind, c.identifier(), count);
  }

  /**
   * {@code SELECT [pg_catalog.]set_config('name', 'value', is_local)} with literal arguments: a SET that
   * returns the new value. Any other SELECT is the engine's.
   */
  private static SessionCommand setConfig(Cursor c) {
    if (c.keyword("pg_catalog") && !c.op(".")) {
      return null;
    }
    if (!c.keyword("set_config") || !c.op("(")) {
      return null;
    }
    String name = c.string();
    if (name == null || !c.op(",")) {
      return null;
    }
    String value = c.string();
    if (value == null || !c.op(",")) {
      return null;
    }
    if (!(c.keyword("true") || c.keyword("false"))) {
      return null;
    }
    if (!c.op(")")) {
      return null;
    }
    c.op(";");
    return c.atEnd() ? SessionCommand.of(SessionCommand.Kind.SET_CONFIG, name, value) : null;
  }

  /**
   * {@code SET SESSION CHARACTERISTICS AS TRANSACTION} modes: {@code ISOLATION LEVEL ...}, {@code READ ONLY |
   * READ WRITE}, {@code [NOT] DEFERRABLE}.
   */
  private static SessionCommand modes(Cursor c) {
    String isolation = null;
    Boolean readOnly = null;
    while (!c.atEnd()) {
      if (c.keyword("isolation")) {
        if (!c.keyword("level")) {
          throw FloeExceptionSyntax.at(c);
        }
        if (c.keyword("serializable")) {
          isolation = "serializable";
        } else if (c.keyword("repeatable")) {
          if (!c.keyword("read")) {
            throw FloeExceptionSyntax.at(c);
          }
          isolation = "repeatable read";
        } else if (c.keyword("read")) {
          if (c.keyword("committed")) {
            isolation = "read committed";
          } else if (c.keyword("uncommitted")) {
            isolation = "read uncommitted";
          } else {
            throw FloeExceptionSyntax.at(c);
          }
        } else {
          throw FloeExceptionSyntax.at(c);
        }
      } else if (c.keyword("read")) {
        if (c.keyword("only")) {
          readOnly = true;
        } else if (c.keyword("write")) {
          readOnly = false;
        } else {
          throw FloeExceptionSyntax.at(c);
        }
      } else if (c.keyword("not")) {
        if (!c.keyword("deferrable")) {
          throw FloeExceptionSyntax.at(c);
        }
      } else if (!c.keyword("deferrable") && !c.op(",")) {
        throw FloeExceptionSyntax.at(c);
      }
    }
    return SessionCommand.characteristics(isolation, readOnly);
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

    /** A string literal's value, or null. */
    String string() {
      if (i < tokens.size() && tokens.get(i).type() == Token.Type.STRING) {
        return tokens.get(i++).value();
      }
      return null;
    }

    /** A non-negative integer literal, or null. */
    Long number() {
      if (i < tokens.size() && tokens.get(i).type() == Token.Type.NUMBER && tokens.get(i).text().matches("\\d+")) {
        return Long.parseLong(tokens.get(i++).text());
      }
      return null;
    }

    /** The offset after keyword {@code k} at the cursor (consumed), or -1. */
    int positionOf(String k) {
      if (i < tokens.size() && tokens.get(i).isKeyword(k)) {
        return tokens.get(i++).end();
      }
      return -1;
    }

    boolean atEnd() {
      return i >= tokens.size() || tokens.get(i).isOp(";");
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
