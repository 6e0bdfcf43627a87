package dev.floe.exec;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.IntUnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs SQL text that is not a streamed result on a session's DuckDB connection (temp tables, checks,
 * constant expressions), its errors mapped to PostgreSQL's ({@link DuckErrors}); {@code positions} maps a
 * position in the DuckDB text to the user's statement. A streamed query result is the session's
 * ({@link SessionContext#run}), which tracks it as the open result.
 */
final class DuckSql {
  private static final Logger LOG = LoggerFactory.getLogger(DuckSql.class);

  private final Connection duck;

  DuckSql(Connection duck) {
    this.duck = duck;
  }

  /** Runs SQL that returns no rows (temp tables, COPY). */
  void execute(String sql, IntUnaryOperator positions) {
    if (LOG.isDebugEnabled()) {
      LOG.debug("DuckDB SQL: {}", sql);
    }
    try (Statement st = duck.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw DuckErrors.map(e, positions);
    }
  }

  /** Runs SQL that changes rows (CREATE TABLE AS, INSERT) and returns how many it wrote. */
  long update(String sql, IntUnaryOperator positions) {
    if (LOG.isDebugEnabled()) {
      LOG.debug("DuckDB SQL: {}", sql);
    }
    try (Statement st = duck.createStatement()) {
      return st.executeLargeUpdate(sql);
    } catch (SQLException e) {
      throw DuckErrors.map(e, positions);
    }
  }

  /** Runs a query that returns at most one row, and returns its values (null: no row). */
  Object[] queryRow(String sql, IntUnaryOperator positions) {
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      if (!rs.next()) {
        return null;
      }
      Object[] row = new Object[rs.getMetaData().getColumnCount()];
      for (int k = 0; k < row.length; k++) {
        row[k] = rs.getObject(k + 1);
      }
      return row;
    } catch (SQLException e) {
      throw DuckErrors.map(e, positions);
    }
  }

  /** Evaluates a constant expression to one JDBC value. */
  Object evaluate(String expression) {
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery("SELECT " + expression)) {
      rs.next();
      return rs.getObject(1);
    } catch (SQLException e) {
      throw DuckErrors.map(e, o -> 0);
    }
  }
}
