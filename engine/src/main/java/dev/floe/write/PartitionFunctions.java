package dev.floe.write;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HexFormat;
import java.util.UUID;
import org.apache.iceberg.util.BucketUtil;
import org.apache.iceberg.util.UnicodeUtil;
import org.duckdb.DuckDBColumnType;
import org.duckdb.DuckDBDataChunkReader;
import org.duckdb.DuckDBFunctions;
import org.duckdb.DuckDBReadableVector;
import org.duckdb.DuckDBScalarFunctionBuilder;
import org.duckdb.DuckDBWritableVector;

/**
 * Iceberg's partition transforms that DuckDB has no exact equivalent for, registered as DuckDB scalar
 * functions backed by Iceberg's own hash and truncation code, so partition values computed during a
 * write are exactly the ones every Iceberg reader expects.
 *
 * <pre>
 *   floe_bucket_long(n, bigint)         int, long, date (days), time/timestamp (micros)
 *   floe_bucket_string(n, varchar)      string
 *   floe_bucket_uuid(n, varchar)        uuid (its text form)
 *   floe_bucket_bytes(n, varchar)       binary (hex)
 *   floe_bucket_decimal(n, varchar, s)  decimal (text form, scale s)
 *   floe_truncate_string(w, varchar)    first w code points
 *   floe_truncate_decimal(w, varchar, s) unscaled value truncated to a multiple of w, as text
 * </pre>
 */
public final class PartitionFunctions {
  private PartitionFunctions() {}

  /** Registers the functions in the DuckDB instance of {@code conn} (visible to all its connections). */
  public static void register(Connection conn) throws SQLException {
    register(conn, "floe_bucket_long", DuckDBColumnType.INTEGER, new DuckDBColumnType[] {DuckDBColumnType.INTEGER,
        DuckDBColumnType.BIGINT}, (in, out) -> {
          DuckDBReadableVector n = in.vector(0);
          DuckDBReadableVector v = in.vector(1);
          for (long r = 0; r < in.rowCount(); r++) {
            if (n.isNull(r) || v.isNull(r)) {
              out.setNull(r);
            } else {
              out.setInt(r, bucket(BucketUtil.hash(v.getLong(r)), n.getInt(r)));
            }
          }
        });
    register(conn, "floe_bucket_string", DuckDBColumnType.INTEGER, new DuckDBColumnType[] {DuckDBColumnType.INTEGER,
        DuckDBColumnType.VARCHAR}, (in, out) -> {
          DuckDBReadableVector n = in.vector(0);
          DuckDBReadableVector v = in.vector(1);
          for (long r = 0; r < in.rowCount(); r++) {
            if (n.isNull(r) || v.isNull(r)) {
              out.setNull(r);
            } else {
              out.setInt(r, bucket(BucketUtil.hash(v.getString(r)), n.getInt(r)));
            }
          }
        });
    register(conn, "floe_bucket_uuid", DuckDBColumnType.INTEGER, new DuckDBColumnType[] {DuckDBColumnType.INTEGER,
        DuckDBColumnType.VARCHAR}, (in, out) -> {
          DuckDBReadableVector n = in.vector(0);
          DuckDBReadableVector v = in.vector(1);
          for (long r = 0; r < in.rowCount(); r++) {
            if (n.isNull(r) || v.isNull(r)) {
              out.setNull(r);
            } else {
              out.setInt(r, bucket(BucketUtil.hash(UUID.fromString(v.getString(r))), n.getInt(r)));
            }
          }
        });
    register(conn, "floe_bucket_bytes", DuckDBColumnType.INTEGER, new DuckDBColumnType[] {DuckDBColumnType.INTEGER,
        DuckDBColumnType.VARCHAR}, (in, out) -> {
          DuckDBReadableVector n = in.vector(0);
          DuckDBReadableVector v = in.vector(1);
          for (long r = 0; r < in.rowCount(); r++) {
            if (n.isNull(r) || v.isNull(r)) {
              out.setNull(r);
            } else {
              out.setInt(r, bucket(BucketUtil.hash(HexFormat.of().parseHex(v.getString(r))), n.getInt(r)));
            }
          }
        });
    register(conn, "floe_bucket_decimal", DuckDBColumnType.INTEGER, new DuckDBColumnType[] {
        DuckDBColumnType.INTEGER, DuckDBColumnType.VARCHAR, DuckDBColumnType.INTEGER}, (in, out) -> {
          DuckDBReadableVector n = in.vector(0);
          DuckDBReadableVector v = in.vector(1);
          DuckDBReadableVector s = in.vector(2);
          for (long r = 0; r < in.rowCount(); r++) {
            if (n.isNull(r) || v.isNull(r) || s.isNull(r)) {
              out.setNull(r);
            } else {
              BigDecimal d = new BigDecimal(v.getString(r)).setScale(s.getInt(r));
              out.setInt(r, bucket(BucketUtil.hash(d), n.getInt(r)));
            }
          }
        });
    register(conn, "floe_truncate_string", DuckDBColumnType.VARCHAR, new DuckDBColumnType[] {
        DuckDBColumnType.INTEGER, DuckDBColumnType.VARCHAR}, (in, out) -> {
          DuckDBReadableVector w = in.vector(0);
          DuckDBReadableVector v = in.vector(1);
          for (long r = 0; r < in.rowCount(); r++) {
            if (w.isNull(r) || v.isNull(r)) {
              out.setNull(r);
            } else {
              out.setString(r, UnicodeUtil.truncateString(v.getString(r), w.getInt(r)).toString());
            }
          }
        });
    register(conn, "floe_truncate_decimal", DuckDBColumnType.VARCHAR, new DuckDBColumnType[] {
        DuckDBColumnType.INTEGER, DuckDBColumnType.VARCHAR, DuckDBColumnType.INTEGER}, (in, out) -> {
          DuckDBReadableVector w = in.vector(0);
          DuckDBReadableVector v = in.vector(1);
          DuckDBReadableVector s = in.vector(2);
          for (long r = 0; r < in.rowCount(); r++) {
            if (w.isNull(r) || v.isNull(r) || s.isNull(r)) {
              out.setNull(r);
            } else {
              int scale = s.getInt(r);
              BigInteger unscaled = new BigDecimal(v.getString(r)).setScale(scale).unscaledValue();
              BigInteger width = BigInteger.valueOf(w.getInt(r));
              BigInteger truncated = unscaled.subtract(unscaled.mod(width));
              out.setString(r, new BigDecimal(truncated, scale).toPlainString());
            }
          }
        });
  }

  static int bucket(int hash, int n) {
    return (hash & Integer.MAX_VALUE) % n;
  }

  private interface Body {
    void apply(DuckDBDataChunkReader in, DuckDBWritableVector out);
  }

  private static void register(Connection conn, String name, DuckDBColumnType returns, DuckDBColumnType[] params,
      Body body) throws SQLException {
    try (DuckDBScalarFunctionBuilder b = DuckDBFunctions.scalarFunction()) {
      b.withName(name).withParameters(params).withReturnType(returns)
          .withVectorizedFunction(body::apply).register(conn);
    }
  }
}
