package dev.floe.write;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.types.IcebergValues;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.Schema;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * SQL for Iceberg partition transforms over a column expression, and the conversion of the resulting
 * partition values to Iceberg's internal representation. Temporal transforms are computed in UTC
 * (timestamptz) or on the naive value (timestamp), as the Iceberg spec defines them.
 */
public final class PartitionSql {
  private PartitionSql() {}

  /** Fails with 0A000 if Floe cannot write one of the spec's transforms (so the table is not created). */
  public static void checkWritable(org.apache.iceberg.PartitionSpec spec) {
    for (PartitionField field : spec.fields()) {
      transform(field, spec.schema(), "v");
    }
  }

  /** DuckDB SQL computing the partition value of {@code field} from column expression {@code v}. */
  static String transform(PartitionField field, Schema schema, String v) {
    Type source = schema.findType(field.sourceId());
    Transform<?, ?> t = field.transform();
    String name = t.toString();
    if (t.isIdentity()) {
      return v;
    }
    if (t.isVoid()) {
      return "CAST(NULL AS " + dev.floe.types.TypeMapping.duckdbType(source) + ")";
    }
    String utc = source instanceof Types.TimestampType ts && ts.shouldAdjustToUTC() ? "(" + v + " AT TIME ZONE 'UTC')" : v;
    switch (name) {
      case "year" -> {
        return "(year(" + utc + ") - 1970)";
      }
      case "month" -> {
        return "((year(" + utc + ") - 1970) * 12 + month(" + utc + ") - 1)";
      }
      case "day" -> {
        return "CAST(" + utc + " AS DATE)"; // Iceberg's day transform yields a date
      }
      case "hour" -> {
        String e = "epoch_us(" + v + ")";
        long d = 3_600_000_000L;
        return "CAST((" + e + " - (((" + e + " % " + d + ") + " + d + ") % " + d + ")) // " + d + " AS INTEGER)";
      }
      default -> { }
    }
    if (name.startsWith("bucket[")) {
      int n = Integer.parseInt(name.substring("bucket[".length(), name.length() - 1));
      return switch (source.typeId()) {
        case INTEGER, LONG -> "floe_bucket_long(" + n + ", CAST(" + v + " AS BIGINT))";
        case DATE -> "floe_bucket_long(" + n + ", CAST(" + v + " - DATE '1970-01-01' AS BIGINT))";
        case TIME -> "floe_bucket_long(" + n + ", " + timeMicros(v) + ")";
        case TIMESTAMP -> "floe_bucket_long(" + n + ", epoch_us(" + v + "))";
        case STRING -> "floe_bucket_string(" + n + ", " + v + ")";
        case UUID -> "floe_bucket_uuid(" + n + ", CAST(" + v + " AS VARCHAR))";
        case BINARY, FIXED -> "floe_bucket_bytes(" + n + ", hex(" + v + "))";
        case DECIMAL -> "floe_bucket_decimal(" + n + ", CAST(" + v + " AS VARCHAR), "
            + ((Types.DecimalType) source).scale() + ")";
        default -> throw unsupported(field, source);
      };
    }
    if (name.startsWith("truncate[")) {
      int w = Integer.parseInt(name.substring("truncate[".length(), name.length() - 1));
      return switch (source.typeId()) {
        // Iceberg computes v - floorMod(v, w) in Java int/long arithmetic, which wraps at the type's
        // edge; compute exactly in a wider type and wrap the same way.
        case INTEGER -> wrap("CAST(" + v + " AS BIGINT)", w, "BIGINT", "INTEGER", 32);
        case LONG -> wrap("CAST(" + v + " AS HUGEINT)", w, "HUGEINT", "BIGINT", 64);
        case STRING -> "floe_truncate_string(" + w + ", " + v + ")";
        case DECIMAL -> {
          Types.DecimalType d = (Types.DecimalType) source;
          yield "CAST(floe_truncate_decimal(" + w + ", CAST(" + v + " AS VARCHAR), " + d.scale() + ") AS DECIMAL("
              + d.precision() + "," + d.scale() + "))";
        }
        default -> throw unsupported(field, source);
      };
    }
    throw unsupported(field, source);
  }

  private static String wrap(String wide, int w, String wideType, String type, int bits) {
    String exact = "(" + wide + " - (((" + wide + " % " + w + ") + " + w + ") % " + w + "))";
    String half = "CAST(" + java.math.BigInteger.ONE.shiftLeft(bits - 1) + " AS " + wideType + ")";
    String full = "CAST(" + java.math.BigInteger.ONE.shiftLeft(bits) + " AS " + wideType + ")";
    return "CAST((((" + exact + " + " + half + ") % " + full + ") + " + full + ") % " + full + " - " + half + " AS "
        + type + ")";
  }

  private static String timeMicros(String v) {
    return IcebergValues.readable(Types.TimeType.get(), v);
  }

  private static FloeException unsupported(PartitionField field, Type source) {
    return new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
        "cannot write partition transform " + field.transform() + " of a " + source + " column");
  }

  /** SQL selecting a computed partition value {@code p} in a form JDBC returns losslessly. */
  static String readable(PartitionField field, Schema schema, String p) {
    return IcebergValues.readable(resultType(field, schema), p);
  }

  /** The Iceberg partition value read back from a {@link #readable} column. */
  static Object internal(PartitionField field, Schema schema, ResultSet rs, int column) throws SQLException {
    return IcebergValues.internal(resultType(field, schema), rs.getObject(column));
  }

  private static Type resultType(PartitionField field, Schema schema) {
    return field.transform().getResultType(schema.findType(field.sourceId()));
  }
}
