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
 *                                  text holds no NUL (a query's chr(...) calls this)
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
          SqlState.PROGRAM_LIMIT_EXCEEDED, "null character not permitted") + " ELSE chr(c) END");
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
