package dev.floe.server.pg;

import dev.floe.types.PgType;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import dev.floe.sql.SqlScript;
import dev.floe.sql.Token;
import java.util.ArrayList;
import java.util.List;

/**
 * A statement from a Parse message: its text, where its {@code $n} parameters stand, and their types
 * (declared by the client, or unknown). Binding substitutes each parameter as a literal of its value,
 * so the engine sees an ordinary statement; a parameter is never spliced in as SQL text, only as a
 * quoted literal or a cast of one.
 */
final class Prepared {
  private final String sql;
  private final List<Token> params;
  private final boolean[] integerContext;
  private final PgType[] types;
  private final SessionCommand command;
  /** The RowDescription of a Describe of this statement, computed once. */
  Object describedColumns;

  private Prepared(String sql, List<Token> params, boolean[] integerContext, PgType[] types, SessionCommand command) {
    this.sql = sql;
    this.params = params;
    this.integerContext = integerContext;
    this.types = types;
    this.command = command;
  }

  /**
   * @param declared the parameter type OIDs the client sent (0 or missing: unknown)
   * @throws FloeException 42601 for several statements, 42P18-like errors for undeclarable types
   */
  static Prepared parse(String sql, int[] declared) {
    List<SqlScript.Part> parts = SqlScript.split(sql);
    if (parts.size() > 1) {
      throw FloeException.syntax("cannot insert multiple commands into a prepared statement",
          parts.get(1).offset() + 1);
    }
    String text = parts.isEmpty() ? "" : parts.get(0).text();
    List<Token> tokens = Lexer.tokenize(text);
    List<Token> params = new ArrayList<>();
    List<Boolean> integer = new ArrayList<>();
    int max = 0;
    Token previous = null;
    for (Token t : tokens) {
      if (t.type() == Token.Type.PARAM) {
        if (t.text().equals("?")) {
          throw FloeException.syntax("syntax error at or near \"?\"", t.position());
        }
        int n;
        try {
          n = Integer.parseInt(t.text().substring(1));
        } catch (NumberFormatException e) {
          throw FloeException.syntax("syntax error at or near \"" + t.text() + "\"", t.position());
        }
        if (n < 1 || n > 65535) {
          throw new FloeException(SqlState.UNDEFINED_PARAMETER, "there is no parameter " + t.text(), null, null,
              t.position(), null);
        }
        max = Math.max(max, n);
        params.add(t);
        integer.add(previous != null && (previous.isKeyword("limit") || previous.isKeyword("offset")
            || previous.isKeyword("first") || previous.isKeyword("next")));
      }
      previous = t;
    }
    int count = Math.max(max, declared.length);
    PgType[] types = new PgType[count];
    for (int k = 0; k < declared.length; k++) {
      if (declared[k] != 0) {
        PgType type = PgType.byOid(declared[k]);
        if (type == null) {
          throw new FloeException(SqlState.UNDEFINED_OBJECT, "type with OID " + declared[k] + " is not supported");
        }
        types[k] = type;
      }
    }
    boolean[] ic = new boolean[params.size()];
    for (int k = 0; k < ic.length; k++) {
      ic[k] = integer.get(k);
    }
    return new Prepared(text, params, ic, types, SessionCommand.parse(text));
  }

  String sql() {
    return sql;
  }

  boolean isEmpty() {
    return sql.isEmpty();
  }

  int parameterCount() {
    return types.length;
  }

  /** The parameter types as ParameterDescription reports them (unknown ones as text). */
  int[] parameterOids() {
    int[] oids = new int[types.length];
    for (int k = 0; k < types.length; k++) {
      oids[k] = types[k] == null ? PgType.TEXT.oid() : types[k].oid();
    }
    return oids;
  }

  SessionCommand command() {
    return command;
  }

  /** The statement with every parameter replaced by its value (null values: NULL). */
  String bind(byte[][] values, boolean[] binary) {
    if (params.isEmpty()) {
      return sql;
    }
    StringBuilder b = new StringBuilder(sql.length() + 16 * params.size());
    int at = 0;
    for (int k = 0; k < params.size(); k++) {
      Token t = params.get(k);
      int n = Integer.parseInt(t.text().substring(1)) - 1;
      b.append(sql, at, t.start());
      String literal = values == null ? (types[n] == null ? "NULL" : "CAST(NULL AS " + types[n].castName() + ")")
          : PgValues.literal(values[n], binary[n], types[n], integerContext[k]);
      // keep a token boundary on both sides: "x-$1" with a negative value must not become "x--1"
      b.append(' ').append(literal).append(' ');
      at = t.end();
    }
    return b.append(sql, at, sql.length()).toString();
  }
}
