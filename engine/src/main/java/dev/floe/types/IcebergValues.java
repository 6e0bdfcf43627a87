package dev.floe.types;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.UUID;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Moves single values from DuckDB to Iceberg's internal representation (days for dates, microseconds
 * for times and timestamps, ByteBuffer for binary, ...) without precision loss: {@link #readable} wraps
 * a DuckDB expression so JDBC returns it exactly, {@link #internal} converts what JDBC returned.
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

  /** The Iceberg value of what JDBC returned for a {@link #readable} expression. */
  public static Object internal(Type type, Object v) {
    if (v == null) {
      return null;
    }
    return switch (type.typeId()) {
      case BOOLEAN -> (Boolean) v;
      case INTEGER, DATE -> ((Number) v).intValue();
      case LONG, TIME, TIMESTAMP, TIMESTAMP_NANO -> ((Number) v).longValue();
      case FLOAT -> ((Number) v).floatValue();
      case DOUBLE -> ((Number) v).doubleValue();
      case STRING -> v.toString();
      case UUID -> UUID.fromString(v.toString());
      case DECIMAL -> new BigDecimal(v.toString()).setScale(((Types.DecimalType) type).scale());
      case BINARY, FIXED -> ByteBuffer.wrap(HexFormat.of().parseHex(v.toString()));
      default -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "no single-value conversion for " + type);
    };
  }
}
