package dev.floe.types;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.HexFormat;
import java.util.UUID;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Moves single values from DuckDB to Iceberg's internal representation (days for dates, microseconds
 * for times and timestamps, ByteBuffer for binary, ...) without precision loss: {@link #readable} wraps
 * a DuckDB expression so JDBC returns it exactly, {@link #internal} converts what JDBC returned, for
 * that form and for the value of the stored type itself as DuckDB's JDBC driver gives it
 * ({@link #jdbcValue}).
 */
public final class IcebergValues {
  private IcebergValues() {}

  /** DuckDB SQL for {@code expr} (already of {@code type}'s DuckDB type) in a losslessly readable form. */
  public static String readable(Type type, String expr) {
    return switch (type.typeId()) {
      case DATE -> "CAST((" + expr + ") - DATE '1970-01-01' AS INTEGER)";
      case TIME -> "(CAST(hour(" + expr + ") AS BIGINT) * 3600000000 + CAST(minute(" + expr
          + ") AS BIGINT) * 60000000 + microsecond(" + expr + "))";
      // epoch_us and epoch_ns are NULL for the infinities, which DuckDB stores (and writes to Parquet)
      // as the largest magnitudes of its 64-bit count
      case TIMESTAMP -> "CASE WHEN isinf(" + expr + ") THEN " + infinity(expr) + " ELSE epoch_us(" + expr + ") END";
      case TIMESTAMP_NANO -> "CASE WHEN isinf(" + expr + ") THEN " + infinity(expr) + " ELSE epoch_ns(" + expr
          + ") END";
      case UUID, DECIMAL -> "CAST((" + expr + ") AS VARCHAR)";
      case BINARY, FIXED -> "hex(" + expr + ")";
      default -> expr;
    };
  }

  private static String infinity(String expr) {
    return "CASE WHEN CAST(" + expr + " AS VARCHAR) LIKE '-%' THEN -9223372036854775807 ELSE 9223372036854775807 END";
  }

  /**
   * A value of DuckDB type {@code duckType} from a JDBC result: as the driver gives it, except that
   * timestamps come as {@link LocalDateTime} (its default, {@code java.sql.Timestamp}, goes through the
   * JVM's time zone) and blobs as bytes.
   */
  public static Object jdbcValue(java.sql.ResultSet rs, int column, String duckType) throws java.sql.SQLException {
    return switch (duckType) {
      case "TIMESTAMP" -> rs.getObject(column, LocalDateTime.class);
      case "BLOB" -> rs.getBytes(column);
      default -> rs.getObject(column);
    };
  }

  /**
   * The Iceberg value of what JDBC returned for a {@link #readable} expression, or for a value of the
   * type's own DuckDB type ({@link #jdbcValue}); a value of any other form fails (ClassCastException).
   */
  public static Object internal(Type type, Object v) {
    if (v == null) {
      return null;
    }
    return switch (type.typeId()) {
      case BOOLEAN -> (Boolean) v;
      case DATE -> v instanceof LocalDate d ? Math.toIntExact(d.toEpochDay()) : ((Number) v).intValue();
      case INTEGER -> ((Number) v).intValue();
      case TIME -> v instanceof LocalTime t ? t.toNanoOfDay() / 1000 : ((Number) v).longValue();
      // days * micros-per-day may pass Long's range on the way to an in-range result (DuckDB's
      // -infinity); two's complement arithmetic still ends at the right value
      case TIMESTAMP -> v instanceof LocalDateTime t ? t.toLocalDate().toEpochDay() * 86_400_000_000L
          + t.toLocalTime().toNanoOfDay() / 1000
          : v instanceof OffsetDateTime t ? t.toEpochSecond() * 1_000_000L + t.getNano() / 1000
          : ((Number) v).longValue();
      case LONG, TIMESTAMP_NANO -> ((Number) v).longValue();
      case FLOAT -> ((Number) v).floatValue();
      case DOUBLE -> ((Number) v).doubleValue();
      case STRING -> (String) v;
      case UUID -> v instanceof UUID u ? u : UUID.fromString(v.toString());
      case DECIMAL -> new BigDecimal(v.toString()).setScale(((Types.DecimalType) type).scale());
      case BINARY, FIXED -> ByteBuffer.wrap(v instanceof byte[] b ? b : HexFormat.of().parseHex((String) v));
      default -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "no single-value conversion for " + type);
    };
  }
}
