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
  private final boolean[] numericContext;
  private final PgType[] types;
  private final SessionCommand command;
  /** The RowDescription of a Describe of this statement, computed once. */
  Object describedColumns;

  private Prepared(String sql, List<Token> params, boolean[] integerContext, boolean[] numericContext, PgType[] types,
      SessionCommand command) {
    this.sql = sql;
    this.params = params;
    this.integerContext = integerContext;
    this.numericContext = numericContext;
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
    // An untyped parameter next to an arithmetic operator is a number, as PostgreSQL infers it from the
    // other operand: "abalance + $1".
    List<Boolean> arithmetic = new ArrayList<>();
    for (Token p : params) {
      int at = tokens.indexOf(p);
      Token before = at > 0 ? tokens.get(at - 1) : null;
      Token after = at + 1 < tokens.size() ? tokens.get(at + 1) : null;
      arithmetic.add(isArithmetic(before) || isArithmetic(after));
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
    boolean[] nc = new boolean[params.size()];
    for (int k = 0; k < ic.length; k++) {
      ic[k] = integer.get(k);
      nc[k] = arithmetic.get(k);
    }
    return new Prepared(text, params, ic, nc, types, SessionCommand.parse(text));
  }

  private static boolean isArithmetic(Token t) {
    return t != null && t.type() == Token.Type.OP && (t.isOp("+") || t.isOp("-") || t.isOp("*") || t.isOp("/")
        || t.isOp("%"));
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

  private boolean inferred;

  /**
   * Gives undeclared parameters the types their context decides (asked of the engine once, when a client
   * describes the statement): ParameterDescription reports them, and values are bound as those types.
   */
  void infer(java.util.function.Supplier<List<dev.floe.SqlType>> engineTypes) {
    if (inferred || command != null || sql.isEmpty()) {
      return;
    }
    inferred = true;
    boolean unknown = false;
    for (PgType t : types) {
      unknown |= t == null;
    }
    if (!unknown) {
      return;
    }
    List<dev.floe.SqlType> found = engineTypes.get();
    for (int k = 0; k < types.length && k < found.size(); k++) {
      dev.floe.SqlType t = found.get(k);
      if (types[k] == null && t != null && t.kind() != dev.floe.SqlType.Kind.NULL
          && t.kind() != dev.floe.SqlType.Kind.OTHER) {
        types[k] = PgType.of(t).withTypmod(-1);
      }
    }
  }

  /**
   * A statement with its parameters' values in place, and where each value sits, to report error
   * positions in the text the client sent.
   */
  record Bound(String sql, int[] at, int[] end, int[] original, int clientLength) {
    /**
     * The 1-based position in the client's text of a 1-based position in {@link #sql()}; 0 inside a value,
     * at the cast of a value, or past the end.
     */
    int originalPosition(int position) {
      int p = mapped(position);
      return p > clientLength ? 0 : p;
    }

    private int mapped(int position) {
      int shift = 0;
      for (int k = 0; k < at.length; k++) {
        if (position - 1 < at[k]) {
          break;
        }
        if (position - 1 < end[k]) {
          return 0; // in a parameter's value: PostgreSQL reports no position there
        }
        if (position - 1 == end[k] && sql.startsWith("::", end[k])) {
          return 0; // the cast of a parameter's value ($1::integer): PostgreSQL converts it at Bind
        }
        shift = end[k] - original[k];
      }
      return position - shift;
    }
  }

  /** The statement with every parameter replaced by its value (null values: NULL). */
  String bind(byte[][] values, boolean[] binary) {
    return bound(values, binary).sql();
  }

  Bound bound(byte[][] values, boolean[] binary) {
    int[] at = new int[params.size()];
    int[] end = new int[params.size()];
    int[] original = new int[params.size()];
    if (params.isEmpty()) {
      return new Bound(sql, at, end, original, sql.length());
    }
    StringBuilder b = new StringBuilder(sql.length() + 16 * params.size());
    int from = 0;
    for (int k = 0; k < params.size(); k++) {
      Token t = params.get(k);
      int n = Integer.parseInt(t.text().substring(1)) - 1;
      b.append(sql, from, t.start());
      String literal = values == null ? (types[n] == null ? "NULL" : "CAST(NULL AS " + types[n].castName() + ")")
          : PgValues.literal(values[n], binary[n], types[n], integerContext[k], numericContext[k]);
      // keep a token boundary on both sides: "x-$1" with a negative value must not become "x--1"
      at[k] = b.length();
      b.append(' ').append(literal).append(' ');
      end[k] = b.length();
      original[k] = t.end();
      from = t.end();
    }
    return new Bound(b.append(sql, from, sql.length()).toString(), at, end, original, sql.length());
  }
}
