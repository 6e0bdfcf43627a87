package dev.floe.server.pg;

import dev.floe.PgType;

import dev.floe.FloeException;
import dev.floe.PgValues;
import dev.floe.SqlState;
import dev.floe.Statement;
import java.util.List;

/**
 * A statement from a Parse message: its text, where its {@code $n} parameters stand, and their types
 * (declared by the client, or unknown). Binding substitutes each parameter as a literal of its value,
 * so the engine sees an ordinary statement; a parameter is never spliced in as SQL text, only as a
 * quoted literal or a cast of one.
 */
final class Prepared {
  private final Statement statement;
  private final List<Statement.Parameter> params;
  private final PgType[] types;
  /** The RowDescription of a Describe of this statement, computed once. */
  Object describedColumns;

  private Prepared(Statement statement, List<Statement.Parameter> params, PgType[] types) {
    this.statement = statement;
    this.params = params;
    this.types = types;
  }

  /**
   * @param declared the parameter type OIDs the client sent (0 or missing: unknown)
   * @throws FloeException 42601 for several statements, 42P18-like errors for undeclarable types
   */
  static Prepared parse(String sql, int[] declared) {
    List<Statement> parts = Statement.split(sql);
    if (parts.size() > 1) {
      throw FloeException.syntax("cannot insert multiple commands into a prepared statement",
          parts.get(1).offset() + 1);
    }
    Statement statement = parts.isEmpty() ? Statement.parse("") : parts.get(0);
    statement.check(); // a syntax error is reported at Parse, as PostgreSQL does
    List<Statement.Parameter> params = statement.parameters();
    int count = Math.max(statement.parameterCount(), declared.length);
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
    return new Prepared(statement, params, types);
  }

  /** The statement as the engine parsed it (its kind, whether it returns rows, ...). */
  Statement statement() {
    return statement;
  }

  String sql() {
    return statement.text();
  }

  boolean isEmpty() {
    return statement.kind() == dev.floe.StatementKind.EMPTY;
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

  private boolean inferred;

  /**
   * Gives undeclared parameters the types their context decides (asked of the engine once, when a client
   * describes the statement): ParameterDescription reports them, and values are bound as those types.
   */
  void infer(java.util.function.Supplier<List<dev.floe.SqlType>> engineTypes) {
    if (inferred || statement.kind() == dev.floe.StatementKind.SESSION || isEmpty()) {
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
     * at the cast of a value, or past the end (one past the last character is the end of input, where
     * PostgreSQL reports a statement that ended too soon).
     */
    int originalPosition(int position) {
      int p = mapped(position);
      return p > clientLength + 1 ? 0 : p;
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
    String sql = statement.text();
    int[] at = new int[params.size()];
    int[] end = new int[params.size()];
    int[] original = new int[params.size()];
    if (params.isEmpty()) {
      return new Bound(sql, at, end, original, sql.length());
    }
    StringBuilder b = new StringBuilder(sql.length() + 16 * params.size());
    int from = 0;
    for (int k = 0; k < params.size(); k++) {
      Statement.Parameter p = params.get(k);
      int n = p.number() - 1;
      b.append(sql, from, p.start());
      String literal = values == null ? (types[n] == null ? "NULL" : "CAST(NULL AS " + types[n].castName() + ")")
          : PgValues.literal(values[n], binary[n], types[n], p.integerContext(), p.numericContext());
      // keep a token boundary on both sides: "x-$1" with a negative value must not become "x--1"
      at[k] = b.length();
      b.append(' ').append(literal).append(' ');
      end[k] = b.length();
      original[k] = p.end();
      from = p.end();
    }
    return new Bound(b.append(sql, from, sql.length()).toString(), at, end, original, sql.length());
  }
}
