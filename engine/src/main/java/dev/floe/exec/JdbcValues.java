package dev.floe.exec;

import dev.floe.Column;
import dev.floe.SqlType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;

/**
 * Reads scalar values from DuckDB's JDBC result set as the Java types {@link dev.floe.Row} documents
 * (the same ones {@link ArrowValues} produces). For small results this is cheaper than exporting Arrow
 * batches; results with nested or DuckDB-only types always go through Arrow.
 */
final class JdbcValues {
  private JdbcValues() {}

  /** Whether every column is a scalar type this reader handles. */
  static boolean handles(List<Column> columns) {
    for (Column c : columns) {
      switch (c.type().kind()) {
        case BOOLEAN, SMALLINT, INTEGER, BIGINT, REAL, DOUBLE, DECIMAL, TEXT, VARCHAR, CHAR, DATE, TIME, TIMESTAMP,
            TIMESTAMPTZ, UUID, BYTEA, NULL -> { }
        default -> {
          return false;
        }
      }
    }
    return true;
  }

  /** Column {@code index} (1-based) of the current row. */
  static Object get(ResultSet rs, int index, Column column) throws SQLException {
    Object raw = rs.getObject(index);
    if (raw == null) {
      return null;
    }
    SqlType type = column.type();
    return switch (type.kind()) {
      case BOOLEAN -> (Boolean) raw;
      case SMALLINT -> ((Number) raw).shortValue();
      case INTEGER -> ((Number) raw).intValue();
      case BIGINT -> ((Number) raw).longValue();
      case REAL -> ((Number) raw).floatValue();
      case DOUBLE -> ((Number) raw).doubleValue();
      case DECIMAL -> raw instanceof BigInteger b ? new BigDecimal(b) : (BigDecimal) raw;
      // DuckDB's driver returns a proleptic LocalDate itself; asking it to convert goes through
      // java.sql.Date and shifts dates before the 1582 calendar change (the differential test saw it).
      case DATE -> raw instanceof LocalDate d ? d : LocalDate.parse(raw.toString());
      case TIME -> rs.getObject(index, LocalTime.class);
      case TIMESTAMP -> rs.getObject(index, LocalDateTime.class);
      case TIMESTAMPTZ -> rs.getObject(index, OffsetDateTime.class).withOffsetSameInstant(ZoneOffset.UTC);
      case BYTEA -> rs.getBytes(index);
      case UUID -> raw instanceof java.util.UUID u ? u : java.util.UUID.fromString(raw.toString());
      case NULL -> null;
      default -> raw.toString();
    };
  }
}
