package dev.floe.testing;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Rows of a JDBC result (e.g. a plain DuckDB connection used as a reference model) as the same Java
 * values Floe's {@link dev.floe.Row} returns, so that both sides compare through {@link Canonical}.
 */
public final class JdbcRows {
  private JdbcRows() {}

  /** Every row of {@code rs}, its values normalised (java.sql dates and times as java.time). */
  public static List<Object[]> values(ResultSet rs) throws SQLException {
    int n = rs.getMetaData().getColumnCount();
    List<Object[]> out = new ArrayList<>();
    while (rs.next()) {
      Object[] row = new Object[n];
      for (int i = 0; i < n; i++) {
        row[i] = normalise(rs.getObject(i + 1));
      }
      out.add(row);
    }
    return out;
  }

  /** A JDBC value as the Java type Floe returns for the same SQL type. */
  public static Object normalise(Object v) {
    if (v instanceof java.sql.Date d) {
      return d.toLocalDate();
    }
    if (v instanceof java.sql.Timestamp t) {
      return t.toLocalDateTime();
    }
    if (v instanceof java.sql.Time t) {
      return t.toLocalTime();
    }
    return v;
  }

  /** Rows of values as canonical rows. */
  public static List<List<String>> canonical(List<Object[]> rows) {
    List<List<String>> out = new ArrayList<>(rows.size());
    for (Object[] row : rows) {
      List<String> r = new ArrayList<>(row.length);
      for (Object v : row) {
        r.add(Canonical.value(v));
      }
      out.add(r);
    }
    return out;
  }
}
