package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.Composer;
import dev.floe.sql.Lexer;
import dev.floe.sql.QualifiedName;
import dev.floe.sql.QueryBinder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A session's temporary tables ({@code CREATE TEMP TABLE}): tables of its own DuckDB connection, in
 * memory, seen by no other session and gone when it ends. As in PostgreSQL they come first in the search
 * path (a temporary table hides a table of the same name; {@code pg_temp.t} names it explicitly). Queries
 * read them beside Floe's tables; INSERT, UPDATE, DELETE and TRUNCATE change them, their expressions bound
 * as any query's (so the client fence holds); they are not part of transaction blocks: a change is kept
 * at once, and ROLLBACK does not undo it.
 */
final class TemporaryTables {
  /** DuckDB's schema for a connection's temporary tables. */
  private static final String SCHEMA = "temp.main.";

  private final SessionContext session;
  /** The session's temporary tables, by name, with what a block's end does to each. */
  private final Map<String, String> onCommit = new LinkedHashMap<>();

  TemporaryTables(SessionContext session) {
    this.session = session;
  }

  /** The table {@code name} names, if it is one of the session's temporary tables. */
  Optional<String> named(List<String> parts) {
    if (parts.size() == 1 && onCommit.containsKey(parts.get(0))
        || parts.size() == 2 && parts.get(0).equals("pg_temp") && onCommit.containsKey(parts.get(1))) {
      return Optional.of(SCHEMA + Lexer.quoteIdentifier(parts.get(parts.size() - 1)));
    }
    return Optional.empty();
  }

  Optional<String> named(QualifiedName name) {
    return named(name.parts());
  }

  Result create(Ast.CreateTable s) {
    List<String> parts = s.name().parts();
    if (parts.size() > 2 || parts.size() == 2 && !parts.get(0).equals("pg_temp")) {
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "cannot create temporary relation in "
          + "non-temporary schema", s.name().position());
    }
    String name = s.name().last();
    if (onCommit.containsKey(name)) {
      if (s.ifNotExists()) {
        session.notice("relation \"" + name + "\" already exists, skipping");
        return new CommandResult("CREATE TABLE", 0);
      }
      throw new FloeException(SqlState.DUPLICATE_TABLE, "relation \"" + name + "\" already exists");
    }
    if (!s.partitioning().isEmpty() || !s.properties().isEmpty() || !s.constraints().isEmpty()) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "a temporary table takes columns, NOT NULL, DEFAULT "
          + "and PRIMARY KEY only", null, "It is the session's own table in memory, not an Iceberg table.",
          s.name().position(), null);
    }
    String table = SCHEMA + Lexer.quoteIdentifier(name);
    Result result;
    if (s.asQuery().isPresent()) {
      QueryBinder.Bound bound = session.bind(s.asQuery().get());
      QueryResult.Named named = QueryResult.withColumnNames(bound);
      StringBuilder names = new StringBuilder();
      for (String c : s.columnNames()) {
        names.append(names.length() > 0 ? ", " : "").append(Lexer.quoteIdentifier(c));
      }
      String query = names.length() == 0 ? named.sql() : "SELECT * FROM (" + named.sql() + ") AS q(" + names + ")";
      run("CREATE TEMP TABLE " + table + " AS " + query + (s.withData() ? "" : " LIMIT 0"), named.positions());
      long rows = count(table);
      result = new CommandResult("SELECT " + rows, rows);
    } else {
      StringBuilder columns = new StringBuilder();
      for (Ast.ColumnDef c : s.columns()) {
        if (c.identity().isPresent()) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "serial and identity columns are not supported in "
              + "temporary tables", c.position());
        }
        columns.append(columns.length() > 0 ? ", " : "").append(Lexer.quoteIdentifier(c.name())).append(' ')
            .append(c.type().duckdbName());
        if (c.defaultSql().isPresent()) {
          columns.append(" DEFAULT (").append(expression(c.defaultSql().get())).append(')');
        }
        if (c.notNull()) {
          columns.append(" NOT NULL");
        }
      }
      if (!s.primaryKey().isEmpty()) {
        columns.append(", PRIMARY KEY (");
        for (int k = 0; k < s.primaryKey().size(); k++) {
          columns.append(k > 0 ? ", " : "").append(Lexer.quoteIdentifier(s.primaryKey().get(k)));
        }
        columns.append(')');
      }
      run("CREATE TEMP TABLE " + table + " (" + columns + ")", o -> 0);
      result = new CommandResult("CREATE TABLE", 0);
    }
    onCommit.put(name, s.temporary().orElseThrow().onCommit());
    if (session.transaction().isEmpty() && onCommit.get(name).equals("DROP")) {
      drop(name); // its implicit transaction ended with the statement
    }
    return result;
  }

  /** INSERT into a temporary table: the rows of the statement's query, bound as any query. */
  Result insert(Ast.Insert s, String table) {
    if (s.onConflict().isPresent() || s.returning().isPresent() || s.overriding().isPresent()) {
      throw unsupported("ON CONFLICT, RETURNING and OVERRIDING");
    }
    StringBuilder columns = new StringBuilder();
    for (String c : s.columns()) {
      columns.append(columns.length() > 0 ? ", " : "").append(Lexer.quoteIdentifier(c));
    }
    String target = table + (columns.length() > 0 ? " (" + columns + ")" : "");
    if (s.source().isEmpty()) {
      return changed("INSERT 0 ", run("INSERT INTO " + target + " DEFAULT VALUES", o -> 0));
    }
    QueryBinder.Bound bound = session.bind(s.source().get());
    return changed("INSERT 0 ", run("INSERT INTO " + target + " " + bound.sql(), bound::originalPosition));
  }

  /** UPDATE of a temporary table: the new values computed by a bound query of its rows, then written. */
  Result update(Ast.Update s, String table) {
    if (s.returning().isPresent() || s.with().isPresent()) {
      throw unsupported("RETURNING and WITH");
    }
    String a = Lexer.quoteIdentifier(s.alias().orElse(s.table().last()));
    Composer c = new Composer().add("SELECT DISTINCT ON (" + a + ".rowid) " + a + ".rowid AS __floe_rowid");
    for (int k = 0; k < s.set().size(); k++) {
      Ast.Assignment assign = s.set().get(k);
      c.add(", ");
      if (assign.value().isPresent()) {
        c.add("(").add(assign.value().get()).add(")");
      } else {
        c.add("NULL");
      }
      c.add(" AS __floe_v" + k);
    }
    c.add(" FROM " + table + " AS " + a);
    s.from().ifPresent(f -> c.add(", ").add(f));
    s.where().ifPresent(w -> c.add(" WHERE ").add(w));
    QueryBinder.Bound bound = session.bind(c.text(), c::position, session.relations());
    StringBuilder set = new StringBuilder();
    for (int k = 0; k < s.set().size(); k++) {
      set.append(k > 0 ? ", " : "").append(Lexer.quoteIdentifier(s.set().get(k).column())).append(" = ")
          .append(s.set().get(k).value().isPresent() ? "__floe_u.__floe_v" + k : "DEFAULT");
    }
    return changed("UPDATE ", run("UPDATE " + table + " SET " + set + " FROM (" + bound.sql() + ") AS __floe_u WHERE "
        + table + ".rowid = __floe_u.__floe_rowid", bound::originalPosition));
  }

  /** DELETE from a temporary table: the rows a bound query of it selects. */
  Result delete(Ast.Delete s, String table) {
    if (s.returning().isPresent() || s.with().isPresent()) {
      throw unsupported("RETURNING and WITH");
    }
    String a = Lexer.quoteIdentifier(s.alias().orElse(s.table().last()));
    Composer c = new Composer().add("SELECT " + a + ".rowid FROM " + table + " AS " + a);
    s.using().ifPresent(u -> c.add(", ").add(u));
    s.where().ifPresent(w -> c.add(" WHERE ").add(w));
    QueryBinder.Bound bound = session.bind(c.text(), c::position, session.relations());
    return changed("DELETE ", run("DELETE FROM " + table + " WHERE rowid IN (" + bound.sql() + ")",
        bound::originalPosition));
  }

  Result truncate(String table) {
    run("DELETE FROM " + table, o -> 0);
    return new CommandResult("TRUNCATE TABLE", 0);
  }

  /** DROP TABLE of a temporary table; false if {@code name} is none. */
  boolean drop(String name) {
    if (onCommit.remove(name) == null) {
      return false;
    }
    run("DROP TABLE IF EXISTS " + SCHEMA + Lexer.quoteIdentifier(name), o -> 0);
    return true;
  }

  /** A transaction block ended: the tables created ON COMMIT DROP go, those ON COMMIT DELETE ROWS are emptied. */
  void blockEnded() {
    for (Map.Entry<String, String> e : new ArrayList<>(onCommit.entrySet())) {
      if (e.getValue().equals("DROP")) {
        drop(e.getKey());
      } else if (e.getValue().equals("DELETE ROWS")) {
        run("DELETE FROM " + SCHEMA + Lexer.quoteIdentifier(e.getKey()), o -> 0);
      }
    }
  }

  /** A DEFAULT expression in DuckDB's SQL, bound as a query's select list is. */
  private String expression(String sql) {
    QueryBinder.Bound bound = session.bind("SELECT " + sql, o -> 0, session.relations());
    return bound.sql().substring(bound.sql().indexOf("SELECT ") + "SELECT ".length());
  }

  private long count(String table) {
    Object[] row = session.sql().queryRow("SELECT count(*) FROM " + table, o -> 0);
    return ((Number) row[0]).longValue();
  }

  private long run(String sql, java.util.function.IntUnaryOperator positions) {
    try (var st = session.duck().createStatement()) {
      if (st.execute(sql)) {
        try (var rs = st.getResultSet()) {
          return rs.next() ? rs.getLong(1) : 0;
        }
      }
      return Math.max(0, st.getUpdateCount());
    } catch (java.sql.SQLException e) {
      java.util.regex.Matcher table = java.util.regex.Pattern.compile("temp\\.main\\.\"((?:[^\"]|\"\")+)\"")
          .matcher(sql);
      throw constraintError(DuckErrors.map(e, positions), table.find() ? table.group(1).replace("\"\"", "\"") : "");
    }
  }

  private static final java.util.regex.Pattern DUPLICATE = java.util.regex.Pattern.compile(
      "(?s).*Duplicate key \"(.*)\" violates primary key constraint.*");
  private static final java.util.regex.Pattern NOT_NULL = java.util.regex.Pattern.compile(
      "(?s).*NOT NULL constraint failed: (.+)\\.(.+?)\\s*$");

  /** DuckDB's words for a temporary table's key or NOT NULL violation, in PostgreSQL's. */
  private static FloeException constraintError(FloeException e, String table) {
    java.util.regex.Matcher duplicate = DUPLICATE.matcher(e.getMessage());
    if (duplicate.matches()) {
      // DuckDB says "id: 2, k: x"; PostgreSQL "Key (id, k)=(2, x)"
      List<String> columns = new ArrayList<>();
      List<String> values = new ArrayList<>();
      for (String pair : duplicate.group(1).split(", ")) {
        int colon = pair.indexOf(": ");
        columns.add(colon < 0 ? pair : pair.substring(0, colon));
        values.add(colon < 0 ? "" : pair.substring(colon + 2));
      }
      return new FloeException(SqlState.UNIQUE_VIOLATION, "duplicate key value violates unique constraint \""
          + table + "_pkey\"", "Key ("
          + String.join(", ", columns) + ")=(" + String.join(", ", values) + ") already exists.", null, 0, e);
    }
    java.util.regex.Matcher notNull = NOT_NULL.matcher(e.getMessage());
    if (notNull.matches()) {
      return new FloeException(SqlState.NOT_NULL_VIOLATION, "null value in column \"" + notNull.group(2)
          + "\" of relation \"" + notNull.group(1) + "\" violates not-null constraint", e);
    }
    return e;
  }

  private static Result changed(String tag, long rows) {
    return new CommandResult(tag + rows, rows);
  }

  private static FloeException unsupported(String what) {
    return new FloeException(SqlState.FEATURE_NOT_SUPPORTED, what + " are not supported on temporary tables");
  }
}
