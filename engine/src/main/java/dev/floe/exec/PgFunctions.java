package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.types.PgDateTime;
import java.sql.Connection;
import java.sql.SQLException;
import org.duckdb.DuckDBColumnType;
import org.duckdb.DuckDBFunctions;
import org.duckdb.DuckDBReadableVector;
import org.duckdb.DuckDBScalarFunctionBuilder;

/**
 * DuckDB functions that give PostgreSQL's behaviour where DuckDB's own differs, registered once in the
 * engine's DuckDB instance:
 *
 * <pre>
 *   floe_chr(code)                 chr, but chr(0) is 54000 "null character not permitted": PostgreSQL's
 *                                  text holds no NUL (a query's chr(...) calls this); a negative code 22023
 *   floe_sqrt, floe_ln, floe_log,  sqrt, ln, log, log10, power, pow with PostgreSQL's errors (2201E, 2201F)
 *   floe_log10, floe_power,        where DuckDB returns NaN or an infinity: sqrt(-1), ln(0), power(0, -1)
 *   floe_pow
 *   floe_pg_datetime(text, kind)   date/timestamp text as PostgreSQL reads it ('0044-03-15 BC'), in the form
 *                                  DuckDB reads (kind: a PgDateTime.Kind ordinal); COPY's date columns
 * </pre>
 */
final class PgFunctions {
  private PgFunctions() {}

  /** The name of the date/timestamp input function. */
  static final String DATETIME_IN = "floe_pg_datetime";

  static void register(Connection conn) throws SQLException {
    try (var st = conn.createStatement()) {
      st.execute("CREATE MACRO floe_chr(c) AS CASE WHEN c = 0 THEN " + DuckErrors.raise(
          SqlState.PROGRAM_LIMIT_EXCEEDED, "null character not permitted") + " WHEN c < 0 THEN " + DuckErrors.raise(
          SqlState.INVALID_PARAMETER_VALUE, "character number must be positive") + " WHEN c > 1114111 THEN error('"
          + DuckErrors.PREFIX + SqlState.PROGRAM_LIMIT_EXCEEDED + ":requested character too large for encoding: ' || c)"
          + " ELSE chr(c) END");
      // PostgreSQL's errors where DuckDB returns NaN or infinity
      String negativeRoot = DuckErrors.raise(SqlState.INVALID_ARGUMENT_FOR_POWER_FUNCTION,
          "cannot take square root of a negative number");
      String logOfZero = DuckErrors.raise(SqlState.INVALID_ARGUMENT_FOR_LOGARITHM, "cannot take logarithm of zero");
      String logOfNegative = DuckErrors.raise(SqlState.INVALID_ARGUMENT_FOR_LOGARITHM,
          "cannot take logarithm of a negative number");
      st.execute("CREATE MACRO floe_sqrt(x) AS CASE WHEN x < 0 THEN " + negativeRoot + " ELSE sqrt(x) END");
      st.execute("CREATE MACRO floe_ln(x) AS CASE WHEN x = 0 THEN " + logOfZero + " WHEN x < 0 THEN " + logOfNegative
          + " ELSE ln(x) END");
      st.execute("CREATE MACRO floe_log10(x) AS CASE WHEN x = 0 THEN " + logOfZero + " WHEN x < 0 THEN "
          + logOfNegative + " ELSE log10(x) END");
      st.execute("CREATE MACRO floe_log(x) AS CASE WHEN x = 0 THEN " + logOfZero + " WHEN x < 0 THEN " + logOfNegative
          + " ELSE log(x) END, (b, x) AS CASE WHEN x = 0 OR b = 0 THEN " + logOfZero + " WHEN x < 0 OR b < 0 THEN "
          + logOfNegative + " WHEN b = 1 THEN " + DuckErrors.raise(SqlState.DIVISION_BY_ZERO, "division by zero")
          + " ELSE log(b, x) END");
      String power = "(a, b) AS CASE WHEN a = 0 AND b < 0 THEN " + DuckErrors.raise(
          SqlState.INVALID_ARGUMENT_FOR_POWER_FUNCTION, "zero raised to a negative power is undefined")
          + " WHEN a < 0 AND b <> floor(b) THEN " + DuckErrors.raise(SqlState.INVALID_ARGUMENT_FOR_POWER_FUNCTION,
          "a negative number raised to a non-integer power yields a complex result") + " ELSE power(a, b) END";
      st.execute("CREATE MACRO floe_power" + power);
      st.execute("CREATE MACRO floe_pow" + power);
    }
    try (DuckDBScalarFunctionBuilder b = DuckDBFunctions.scalarFunction()) {
      b.withName(DATETIME_IN).withParameters(DuckDBColumnType.VARCHAR, DuckDBColumnType.INTEGER)
          .withReturnType(DuckDBColumnType.VARCHAR).withVectorizedFunction((in, out) -> {
            DuckDBReadableVector text = in.vector(0);
            DuckDBReadableVector kind = in.vector(1);
            for (long r = 0; r < in.rowCount(); r++) {
              if (text.isNull(r) || kind.isNull(r)) {
                out.setNull(r);
                continue;
              }
              String value = text.getString(r);
              try {
                out.setString(r, PgDateTime.duckdbText(value, PgDateTime.Kind.values()[kind.getInt(r)]).orElse(value));
              } catch (FloeException e) {
                throw new IllegalArgumentException(DuckErrors.PREFIX + e.sqlState() + ":" + e.getMessage());
              }
            }
          }).register(conn);
    }
  }

  /** SQL reading {@code varcharSql} as PostgreSQL reads text of a date or timestamp type {@code duckType}. */
  static String datetimeIn(String varcharSql, String duckType) {
    PgDateTime.Kind kind = switch (duckType) {
      case "DATE" -> PgDateTime.Kind.DATE;
      case "TIMESTAMP" -> PgDateTime.Kind.TIMESTAMP;
      default -> PgDateTime.Kind.TIMESTAMPTZ;
    };
    return "CAST(" + DATETIME_IN + "(" + varcharSql + ", " + kind.ordinal() + ") AS " + duckType + ")";
  }
}
