package dev.floe.exec;

import dev.floe.Column;
import dev.floe.FloeProperties;
import dev.floe.Result;
import dev.floe.SqlType;
import dev.floe.sql.Ast;
import dev.floe.sql.Lexer;
import dev.floe.sql.Token;
import dev.floe.tail.TailLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One-key changes of a keyed tail decided in the JVM, as {@link PointQueries} answers one-key reads:
 * {@code UPDATE t SET c = c + k, d = k ... WHERE key = k} and {@code DELETE FROM t WHERE key = k}, with
 * integer arithmetic and integer or text constants. The key's row is read as the general path reads its
 * target (the newest version in the memtable, else the files' point read), and the new row (or the key's
 * deletion) is appended as the general path would append it. Anything else — another shape, a NULL, an
 * overflow, a string too long for its column, a key or identity column assigned, RETURNING, FROM, WITH —
 * is left to the general path, which gives the same result or raises the precise error.
 */
final class PointUpdates {
  private PointUpdates() {}

  /** The UPDATE's result, or empty when the general path must run it. */
  static Optional<Result> update(SessionContext session, ChangeTarget t, Ast.Update s, TailLog.Versions versions) {
    if (s.from().isPresent() || s.returning().isPresent() || s.with().isPresent() || s.where().isEmpty()) {
      return Optional.empty();
    }
    String qualifier = s.alias().orElse(t.id().name());
    Object key = key(t, s.where().get().text(), qualifier);
    if (key == null) {
      return Optional.empty();
    }
    List<int[]> targets = new ArrayList<>(); // column index, +1 add / -1 subtract / 0 set
    List<Object> operands = new ArrayList<>();
    for (Ast.Assignment a : s.set()) {
      int k = index(t, a.column());
      if (k < 0 || a.value().isEmpty()) {
        return Optional.empty();
      }
      Column c = t.columns().get(k);
      if (t.keys().contains(c.name()) || c.name().equals(TailLog.OFFSET_COLUMN)
          || t.live().properties().containsKey(FloeProperties.COLUMN_IDENTITY + c.fieldId())) {
        return Optional.empty();
      }
      Object[] parsed = assignment(a.value().get().text(), c, qualifier);
      if (parsed == null) {
        return Optional.empty();
      }
      targets.add(new int[] {k, (Integer) parsed[0]});
      operands.add(parsed[1]);
    }
    Optional<Object[]> row = currentRow(session, t, key);
    if (row == null) {
      return Optional.empty();
    }
    if (row.isEmpty()) {
      return Optional.of(new CommandResult("UPDATE 0", 0));
    }
    Object[] values = row.get().clone();
    for (int i = 0; i < targets.size(); i++) {
      int k = targets.get(i)[0];
      int op = targets.get(i)[1];
      Column c = t.columns().get(k);
      if (op == 0) {
        values[k] = stored(c, operands.get(i));
      } else {
        if (values[k] == null) {
          return Optional.empty(); // NULL arithmetic and its constraint checks: the general path's
        }
        long current = ((Number) values[k]).longValue();
        long operand = (Long) operands.get(i);
        long result;
        try {
          result = op > 0 ? Math.addExact(current, operand) : Math.subtractExact(current, operand);
        } catch (ArithmeticException overflow) {
          return Optional.empty(); // the general path raises the overflow
        }
        Object v = stored(c, result);
        if (v == null) {
          return Optional.empty();
        }
        values[k] = v;
      }
      if (values[k] == null) {
        return Optional.empty();
      }
    }
    versions.append(List.of(), java.util.Collections.singletonList(logRow(t, values)));
    return Optional.of(new CommandResult("UPDATE 1", 1));
  }

  /** The DELETE's result, or empty when the general path must run it. */
  static Optional<Result> delete(SessionContext session, ChangeTarget t, Ast.Delete s, TailLog.Versions versions) {
    if (s.using().isPresent() || s.returning().isPresent() || s.with().isPresent() || s.where().isEmpty()) {
      return Optional.empty();
    }
    Object key = key(t, s.where().get().text(), s.alias().orElse(t.id().name()));
    if (key == null) {
      return Optional.empty();
    }
    Optional<Object[]> row = currentRow(session, t, key);
    if (row == null) {
      return Optional.empty();
    }
    if (row.isEmpty()) {
      return Optional.of(new CommandResult("DELETE 0", 0));
    }
    versions.append(java.util.Collections.singletonList(logRow(t, row.get())), List.of());
    return Optional.of(new CommandResult("DELETE 1", 1));
  }

  /**
   * The INSERT's result, or empty when the general path must run it: one row of constants
   * ({@code VALUES (...)}), the columns not given without a default and nullable, and at most
   * {@code ON CONFLICT [(key)] DO NOTHING} or {@code DO UPDATE SET} assignments of constants, of
   * {@code excluded.c}, or of the column plus or minus either.
   */
  static Optional<Result> insert(SessionContext session, ChangeTarget t, Ast.Insert s, TailLog.Versions versions) {
    if (t.keys().size() != 1) {
      return Optional.empty();
    }
    Object[] proposed = proposed(t, s);
    if (proposed == null) {
      return Optional.empty();
    }
    int keyIndex = index(t, t.keys().get(0));
    Optional<Ast.OnConflict> conflict = s.onConflict();
    if (conflict.isPresent() && !conflict.get().columns().isEmpty() && (conflict.get().columns().size() != 1
        || index(t, conflict.get().columns().get(0)) != keyIndex)) {
      return Optional.empty();
    }
    if (conflict.isPresent() && (conflict.get().where().isPresent()
        || !conflict.get().doNothing() && conflict.get().columns().isEmpty())) {
      return Optional.empty();
    }
    Object key = t.columns().get(keyIndex).type().kind() == SqlType.Kind.TEXT
        || t.columns().get(keyIndex).type().kind() == SqlType.Kind.VARCHAR ? proposed[keyIndex]
        : (Object) ((Number) proposed[keyIndex]).longValue();
    Optional<Object[]> row = currentRow(session, t, key);
    if (row == null) {
      return Optional.empty();
    }
    Object[] written = proposed;
    if (row.isPresent()) {
      if (conflict.isEmpty()) {
        return Optional.empty(); // the general path raises 23505 with its detail
      }
      if (conflict.get().doNothing()) {
        return Optional.of(new CommandResult("INSERT 0 0", 0));
      }
      String qualifier = s.alias().orElse(t.id().name());
      written = row.get().clone();
      for (Ast.Assignment a : conflict.get().set()) {
        int k = index(t, a.column());
        if (k < 0 || k == keyIndex || a.value().isEmpty() || t.columns().get(k).name().equals(TailLog.OFFSET_COLUMN)
            || t.live().properties().containsKey(FloeProperties.COLUMN_IDENTITY + t.columns().get(k).fieldId())) {
          return Optional.empty();
        }
        Object v = upsertValue(t, a.value().get().text(), k, qualifier, row.get(), proposed);
        if (v == null) {
          return Optional.empty();
        }
        written[k] = v;
      }
    }
    versions.append(List.of(), java.util.Collections.singletonList(logRow(t, written)));
    return Optional.of(new CommandResult("INSERT 0 1", 1));
  }

  /**
   * The row a one-row {@code INSERT … VALUES (constants)} proposes, by the target's columns ({@code
   * _offset} NULL): the columns not given without a default and nullable, every value checked against
   * its column's type; null when the general path must decide (another shape, RETURNING, a default).
   */
  static Object[] proposed(ChangeTarget t, Ast.Insert s) {
    if (s.returning().isPresent() || s.overriding().isPresent() || s.source().isEmpty()) {
      return null;
    }
    List<Token> tokens = tokens(s.source().get().text());
    if (tokens == null) {
      return null;
    }
    int[] at = {0};
    if (!PointQueries.keyword(tokens, at, "values") || !PointQueries.op(tokens, at, "(")) {
      return null;
    }
    List<PointQueries.Constant> constants = new ArrayList<>();
    do {
      PointQueries.Constant c = PointQueries.constant(tokens, at);
      if (c == null) {
        return null;
      }
      constants.add(c);
    } while (PointQueries.op(tokens, at, ","));
    if (!PointQueries.op(tokens, at, ")")) {
      return null;
    }
    PointQueries.op(tokens, at, ";");
    if (tokens.get(at[0]).type() != Token.Type.EOF) {
      return null;
    }
    List<Integer> given = new ArrayList<>();
    if (s.columns().isEmpty()) {
      for (int k = 0; k < t.columns().size(); k++) {
        if (!t.columns().get(k).name().equals(TailLog.OFFSET_COLUMN)) {
          given.add(k);
        }
      }
    } else {
      for (String name : s.columns()) {
        int k = index(t, name);
        if (k < 0 || given.contains(k) || t.columns().get(k).name().equals(TailLog.OFFSET_COLUMN)) {
          return null;
        }
        given.add(k);
      }
    }
    if (given.size() != constants.size()) {
      return null;
    }
    Object[] proposed = new Object[t.columns().size()];
    for (int k = 0; k < t.columns().size(); k++) {
      Column c = t.columns().get(k);
      int i = given.indexOf(k);
      if (i < 0) {
        // not given: NULL, unless the column has a default, is an identity column, or is NOT NULL
        if (!c.name().equals(TailLog.OFFSET_COLUMN) && (t.schema().findField(c.fieldId()).isRequired()
            || t.live().properties().containsKey(FloeProperties.COLUMN_DEFAULT + c.fieldId())
            || t.live().properties().containsKey(FloeProperties.COLUMN_IDENTITY + c.fieldId()))) {
          return null;
        }
        continue;
      }
      if (t.live().properties().containsKey(FloeProperties.COLUMN_IDENTITY + c.fieldId())) {
        return null;
      }
      Object v = constant(c, constants.get(i));
      if (v == null) {
        return null;
      }
      proposed[k] = v;
    }
    return proposed;
  }

  /** A constant as column {@code c} stores it, checked; null when the general path must decide. */
  private static Object constant(Column c, PointQueries.Constant k) {
    Object v = switch (c.type().kind()) {
      case SMALLINT, INTEGER, BIGINT, TEXT -> PointQueries.value(k, c.type().kind());
      case VARCHAR -> {
        Object str = PointQueries.value(k, SqlType.Kind.VARCHAR);
        int length = c.type().precision(); // varchar(n); 0: no limit
        yield str == null || length > 0 && ((String) str).codePointCount(0, ((String) str).length()) > length
            ? null : str;
      }
      default -> null;
    };
    return v == null ? null : stored(c, v);
  }

  /**
   * A DO UPDATE assignment's value for column k: a constant, {@code excluded.d}, or the column itself
   * plus or minus either (integers); null for anything else, a NULL operand or an overflow.
   */
  private static Object upsertValue(ChangeTarget t, String text, int k, String qualifier, Object[] current,
      Object[] proposed) {
    List<Token> tokens = tokens(text);
    if (tokens == null) {
      return null;
    }
    Column c = t.columns().get(k);
    int[] at = {0};
    Object first = operand(t, tokens, at, c, qualifier, current, proposed);
    if (first == null) {
      return null;
    }
    int op = PointQueries.op(tokens, at, "+") ? 1 : PointQueries.op(tokens, at, "-") ? -1 : 0;
    if (op == 0) {
      return tokens.get(at[0]).type() == Token.Type.EOF ? first : null;
    }
    Object second = operand(t, tokens, at, c, qualifier, current, proposed);
    boolean integer = c.type().kind() == SqlType.Kind.SMALLINT || c.type().kind() == SqlType.Kind.INTEGER
        || c.type().kind() == SqlType.Kind.BIGINT;
    if (second == null || !integer || tokens.get(at[0]).type() != Token.Type.EOF) {
      return null;
    }
    try {
      long a = ((Number) first).longValue();
      long b = ((Number) second).longValue();
      return stored(c, op > 0 ? Math.addExact(a, b) : Math.subtractExact(a, b));
    } catch (ArithmeticException overflow) {
      return null;
    }
  }

  /** A constant, {@code excluded.d} or the target's own column c, as column c stores values; null otherwise. */
  private static Object operand(ChangeTarget t, List<Token> tokens, int[] at, Column c, String qualifier,
      Object[] current, Object[] proposed) {
    List<String> ref = PointQueries.name(tokens, at);
    if (ref == null) {
      PointQueries.Constant k = PointQueries.constant(tokens, at);
      return k == null ? null : constant(c, k);
    }
    if (ref.size() == 2 && ref.get(0).equals("excluded")) {
      int d = index(t, ref.get(1));
      return d < 0 || t.columns().get(d).type().kind() != c.type().kind() ? null : proposed[d];
    }
    // the target's column, qualified (what an unqualified name means here is left to the general path)
    String name = ref.size() == 2 ? PointQueries.unqualified(ref, qualifier) : null;
    return name != null && name.equals(c.name()) ? current[index(t, name)] : null;
  }

  /** The row of the key as the statement's target reads it (see {@code TableRelation.keyRow}). */
  private static Optional<Object[]> currentRow(SessionContext session, ChangeTarget t, Object key) {
    Relations relations = session.relations().target(t.id());
    Optional<dev.floe.sql.QueryBinder.Relation> target = relations.resolve(List.of(Relations.TARGET),
        Optional.empty(), 0);
    if (target.isEmpty() || !(target.get() instanceof Relations.TableRelation r)) {
      return null;
    }
    return r.keyRow(key);
  }

  /** A row of the target's columns as the log takes it: without {@code _offset}. */
  static Object[] logRow(ChangeTarget t, Object[] values) {
    List<Object> out = new ArrayList<>(values.length);
    for (int k = 0; k < values.length; k++) {
      if (!t.columns().get(k).name().equals(TailLog.OFFSET_COLUMN)) {
        out.add(values[k]);
      }
    }
    return out.toArray();
  }

  /** The key's value when {@code where} is exactly {@code key = constant} (either way round); else null. */
  private static Object key(ChangeTarget t, String where, String qualifier) {
    if (t.keys().size() != 1) {
      return null;
    }
    List<Token> tokens = tokens(where);
    if (tokens == null) {
      return null;
    }
    int[] at = {0};
    List<String> left = PointQueries.name(tokens, at);
    PointQueries.Constant value;
    String column;
    if (left != null) {
      if (!PointQueries.op(tokens, at, "=")) {
        return null;
      }
      value = PointQueries.constant(tokens, at);
      column = PointQueries.unqualified(left, qualifier);
    } else {
      value = PointQueries.constant(tokens, at);
      if (value == null || !PointQueries.op(tokens, at, "=")) {
        return null;
      }
      List<String> right = PointQueries.name(tokens, at);
      column = right == null ? null : PointQueries.unqualified(right, qualifier);
    }
    if (value == null || column == null || tokens.get(at[0]).type() != Token.Type.EOF) {
      return null;
    }
    int k = index(t, column);
    if (k < 0 || !t.keys().contains(t.columns().get(k).name())) {
      return null;
    }
    SqlType.Kind kind = t.columns().get(k).type().kind();
    return switch (kind) {
      case SMALLINT, INTEGER, BIGINT, TEXT, VARCHAR -> PointQueries.value(value, kind);
      default -> null;
    };
  }

  /**
   * An assignment's value: {@code [q.]c + k} / {@code [q.]c - k} of the column itself ({+1 | -1, k}) or a
   * constant ({0, value}); null for anything else.
   */
  private static Object[] assignment(String text, Column c, String qualifier) {
    List<Token> tokens = tokens(text);
    if (tokens == null) {
      return null;
    }
    int[] at = {0};
    SqlType.Kind kind = c.type().kind();
    boolean integer = kind == SqlType.Kind.SMALLINT || kind == SqlType.Kind.INTEGER || kind == SqlType.Kind.BIGINT;
    List<String> ref = PointQueries.name(tokens, at);
    if (ref != null) {
      String name = PointQueries.unqualified(ref, qualifier);
      if (!integer || name == null || !name.equals(c.name())) {
        return null;
      }
      int op = PointQueries.op(tokens, at, "+") ? 1 : PointQueries.op(tokens, at, "-") ? -1 : 0;
      PointQueries.Constant k = op == 0 ? null : PointQueries.constant(tokens, at);
      if (k == null || tokens.get(at[0]).type() != Token.Type.EOF) {
        return null;
      }
      // the constant as an integer of its own type (a column's kind decides only an untyped string)
      Object v = PointQueries.value(k, SqlType.Kind.BIGINT);
      return v == null ? null : new Object[] {op, v};
    }
    PointQueries.Constant k = PointQueries.constant(tokens, at);
    if (k == null || tokens.get(at[0]).type() != Token.Type.EOF) {
      return null;
    }
    Object v = switch (kind) {
      case SMALLINT, INTEGER, BIGINT, TEXT -> PointQueries.value(k, kind);
      case VARCHAR -> {
        Object s = PointQueries.value(k, kind);
        int length = c.type().precision(); // varchar(n); 0: no limit
        yield s == null || length > 0 && ((String) s).codePointCount(0, ((String) s).length()) > length ? null : s;
      }
      default -> null;
    };
    return v == null ? null : new Object[] {0, v};
  }

  /** A value of the column's kind as the table stores it (Integer for smallint and int); null if out of range. */
  private static Object stored(Column c, Object v) {
    return switch (c.type().kind()) {
      case SMALLINT -> ((Number) v).longValue() < Short.MIN_VALUE || ((Number) v).longValue() > Short.MAX_VALUE
          ? null : (Object) (int) ((Number) v).longValue();
      case INTEGER -> ((Number) v).longValue() < Integer.MIN_VALUE || ((Number) v).longValue() > Integer.MAX_VALUE
          ? null : (Object) (int) ((Number) v).longValue();
      case BIGINT -> ((Number) v).longValue();
      default -> v;
    };
  }

  /** The index of the column named exactly {@code name} (see {@code PointQueries.column}), or -1. */
  private static int index(ChangeTarget t, String name) {
    int found = -1;
    for (int k = 0; k < t.columns().size(); k++) {
      String n = t.columns().get(k).name();
      if (n.equalsIgnoreCase(name)) {
        if (found >= 0 || !n.equals(name)) {
          return -1;
        }
        found = k;
      }
    }
    return found;
  }

  private static List<Token> tokens(String text) {
    try {
      return Lexer.tokenize(text);
    } catch (dev.floe.FloeException e) {
      return null;
    }
  }
}
