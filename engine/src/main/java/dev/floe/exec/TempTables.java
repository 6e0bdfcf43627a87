package dev.floe.exec;

import dev.floe.FloeException;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.IntUnaryOperator;

/**
 * The temporary tables of one row-level statement, in its session's DuckDB connection: the change it
 * computed, its new rows, its RETURNING rows. Materialised once, so the statement sees one consistent
 * input even with volatile functions; their row counts are remembered from their creation.
 */
final class TempTables {
  /**
   * Temporary tables of at most this many rows outlive their statement: the session's next statement
   * replaces them ({@code CREATE OR REPLACE}), which spares a small statement its DROP.
   */
  private static final long KEPT_ROWS = 1_000;

  private final SessionContext session;
  private final String suffix = UUID.randomUUID().toString().replace("-", "");
  private final List<String> temps = new ArrayList<>();
  /** Row counts of the temporary tables, as their creation reported them. */
  private final Map<String, Long> sizes = new HashMap<>();

  TempTables(SessionContext session) {
    this.session = session;
  }

  /**
   * Materialises a query as a temporary table of this kind, and remembers its row count. Tables read
   * only while the statement runs have one name per session and kind; RETURNING rows ({@code "ret"}),
   * which a client may still be reading when the session runs its next statement, get a name of their own.
   */
  String materialize(String kind, String sql, IntUnaryOperator positions) {
    // a statement run by a statement (a foreign key's action) keeps its own names, below the one running it
    String name = "__floe_" + kind + (session.nesting() > 0 ? "_n" + session.nesting() : "")
        + (kind.equals("ret") ? "_" + suffix : "");
    temps.add(name);
    sizes.put(name, session.sql().update("CREATE OR REPLACE TEMP TABLE " + name + " AS " + sql, positions));
    return name;
  }

  /** The row count of a table this statement materialised; null for any other. */
  Long size(String table) {
    return sizes.get(table);
  }

  /** The number of rows of {@code table} (matching {@code where}, a clause or ""). */
  long count(String table, String where) {
    if (where.isEmpty() && sizes.containsKey(table)) {
      return sizes.get(table);
    }
    Object[] row = session.sql().queryRow("SELECT count(*) FROM " + table + where, o -> 0);
    return ((Number) row[0]).longValue();
  }

  /** The DuckDB types of a table's columns. */
  List<String> columnTypes(String table) {
    try (var st = session.duck().createStatement(); var rs = st.executeQuery("SELECT * FROM " + table + " LIMIT 0")) {
      ResultSetMetaData md = rs.getMetaData();
      List<String> types = new ArrayList<>();
      for (int i = 1; i <= md.getColumnCount(); i++) {
        types.add(md.getColumnTypeName(i));
      }
      return types;
    } catch (SQLException e) {
      throw DuckErrors.map(e, o -> 0);
    }
  }

  /** Drops the statement's temporary tables, except small ones the next statement will replace. */
  void cleanup() {
    StringBuilder drops = new StringBuilder();
    for (String t : temps) {
      Long rows = sizes.get(t);
      if (t.endsWith(suffix) || rows == null || rows > KEPT_ROWS) {
        drops.append("DROP TABLE IF EXISTS ").append(t).append(";");
      }
    }
    temps.clear();
    sizes.clear();
    if (drops.isEmpty()) {
      return;
    }
    try {
      session.sql().execute(drops.toString(), o -> 0);
    } catch (FloeException ignored) {
      // temporary tables die with the session anyway
    }
  }
}
