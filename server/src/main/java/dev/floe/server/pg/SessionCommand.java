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
record SessionCommand(Kind kind, String name, String value, String isolation, Boolean readOnly) {
  SessionCommand(Kind kind, String name, String value) {
    this(kind, name, value, null, null);
  }

  enum Kind { SET, SHOW, RESET, BEGIN, START, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK_TO, DISCARD_ALL,
    DISCARD_SEQUENCES, DISCARD_PLANS, DISCARD_TEMP, DEALLOCATE, SET_TRANSACTION, DECLARE, FETCH, MOVE, CLOSE, SET_CONFIG }

  /** For FETCH/MOVE: how many rows ({@link Long#MAX_VALUE} for ALL); for DECLARE: 1 if WITH HOLD. */
  long count() {
    return value == null ? 1 : Long.parseLong(value);
  }

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
      case DISCARD_SEQUENCES -> "DISCARD SEQUENCES";
      case DISCARD_PLANS -> "DISCARD PLANS";
      case DISCARD_TEMP -> "DISCARD TEMP";
      case DEALLOCATE -> name == null ? "DEALLOCATE ALL" : "DEALLOCATE";
      case DECLARE -> "DECLARE CURSOR";
      case FETCH -> "FETCH";
      case MOVE -> "MOVE";
      case CLOSE -> "CLOSE CURSOR";
      case SET_CONFIG -> "SELECT 1";
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
      case "select" -> setConfig(c);
      case "begin" -> {
        if (!c.keyword("work")) {
          c.keyword("transaction");
        }
        yield modes(Kind.BEGIN, c);
      }
      case "start" -> c.keyword("transaction") ? modes(Kind.START, c) : null;
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
      case "discard" -> c.keyword("all") ? new SessionCommand(Kind.DISCARD_ALL, null, null)
          : c.keyword("sequences") ? new SessionCommand(Kind.DISCARD_SEQUENCES, null, null)
          : c.keyword("plans") ? new SessionCommand(Kind.DISCARD_PLANS, null, null)
          : c.keyword("temp") || c.keyword("temporary") ? new SessionCommand(Kind.DISCARD_TEMP, null, null) : null;
      case "declare" -> declare(c, sql);
      case "fetch", "move" -> fetch(first.equals("fetch") ? Kind.FETCH : Kind.MOVE, c);
      case "close" -> new SessionCommand(Kind.CLOSE, c.keyword("all") ? null : c.identifier(), null);
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
    if (c.keyword("characteristics")) {
      if (!c.keyword("as") || !c.keyword("transaction")) {
        throw FloeExceptionSyntax.at(c);
      }
      return modes(Kind.SET_TRANSACTION, c).withName("session");
    }
    if (c.keyword("transaction")) {
      return modes(Kind.SET_TRANSACTION, c);
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

  /**
   * {@code DECLARE name [BINARY] [INSENSITIVE] [[NO] SCROLL] CURSOR [WITH[OUT] HOLD] FOR query}: the query
   * is {@link #isolation()} (reused as the query text), WITH HOLD is value "1".
   */
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
    return new SessionCommand(Kind.DECLARE, name, hold ? "1" : "0", sql.substring(forAt).strip(), null);
  }

  /** {@code FETCH [NEXT | FORWARD [n | ALL] | n | ALL] [FROM | IN] name}. */
  private static SessionCommand fetch(Kind kind, Cursor c) {
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
      throw new FloeException(dev.floe.SqlState.FEATURE_NOT_SUPPORTED, "cursors can only scan forward",
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
    return new SessionCommand(kind, c.identifier(), Long.toString(count));
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
    return c.atEnd() ? new SessionCommand(Kind.SET_CONFIG, name, value) : null;
  }

  private SessionCommand withName(String n) {
    return new SessionCommand(kind, n, value, isolation, readOnly);
  }

  /** Transaction modes: {@code ISOLATION LEVEL ...}, {@code READ ONLY | READ WRITE}, {@code [NOT] DEFERRABLE}. */
  private static SessionCommand modes(Kind kind, Cursor c) {
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
    return new SessionCommand(kind, null, null, isolation, readOnly);
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
