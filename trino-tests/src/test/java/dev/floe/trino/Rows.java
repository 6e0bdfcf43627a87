package dev.floe.trino;

import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

/**
 * Rows of a JDBC result as type-tagged text, so that what pgjdbc returns from Floe and what Trino's JDBC driver
 * returns compare exactly. Where the two drivers hand out the same Iceberg value as different Java objects, both
 * map to one form:
 *
 * <ul>
 *   <li>Iceberg int: Trino gives an Integer; Floe's smallint/integer come as Short/Integer.
 *   <li>Iceberg uuid: pgjdbc gives a {@link UUID}, Trino a String.
 *   <li>Iceberg time: Trino's {@code java.sql.Time} keeps milliseconds only, so both are read as text.
 *   <li>Iceberg timestamptz: pgjdbc's timestamptz and Trino's {@code timestamp(6) with time zone} become the instant.
 * </ul>
 *
 * Floats compare by their bits, decimals keep their scale. The tests' JVM runs in UTC, so a
 * {@link Timestamp} without a zone reads back as the wall-clock value written.
 */
final class Rows {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS");
  private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS");

  private Rows() {}

  static List<List<String>> of(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    int n = md.getColumnCount();
    List<List<String>> out = new ArrayList<>();
    while (rs.next()) {
      List<String> row = new ArrayList<>(n);
      for (int i = 1; i <= n; i++) {
        row.add(value(rs, i, md.getColumnType(i), md.getColumnTypeName(i)));
      }
      out.add(row);
    }
    return out;
  }

  private static String value(ResultSet rs, int i, int type, String typeName) throws SQLException {
    if (type == Types.TIME || type == Types.TIME_WITH_TIMEZONE) {
      String s = rs.getString(i);
      return s == null ? "NULL" : "time:" + TIME.format(LocalTime.parse(s.strip()));
    }
    if (type == Types.TIMESTAMP && typeName.equalsIgnoreCase("timestamptz")) { // pgjdbc's timestamptz
      OffsetDateTime t = rs.getObject(i, OffsetDateTime.class);
      return t == null ? "NULL" : "timestamptz:" + t.toInstant();
    }
    Object v = rs.getObject(i);
    if (v == null) {
      return "NULL";
    }
    if (type == Types.TIMESTAMP_WITH_TIMEZONE) { // Trino's timestamp(p) with time zone
      if (v instanceof Timestamp t) {
        return "timestamptz:" + t.toInstant();
      }
      if (v instanceof ZonedDateTime z) {
        return "timestamptz:" + z.toInstant();
      }
      if (v instanceof OffsetDateTime o) {
        return "timestamptz:" + o.toInstant();
      }
    }
    if (v instanceof Boolean b) {
      return "bool:" + b;
    }
    if (v instanceof Short s) {
      return "int:" + s;
    }
    if (v instanceof Integer x) {
      return "int:" + x;
    }
    if (v instanceof Long l) {
      return "long:" + l;
    }
    if (v instanceof Float f) {
      return Float.isNaN(f) ? "float:NaN" : "float:" + f + "/" + Integer.toHexString(Float.floatToIntBits(f));
    }
    if (v instanceof Double d) {
      return Double.isNaN(d) ? "double:NaN" : "double:" + d + "/" + Long.toHexString(Double.doubleToLongBits(d));
    }
    if (v instanceof BigDecimal d) {
      return "decimal:" + d.toPlainString();
    }
    if (v instanceof UUID || v instanceof CharSequence) {
      return "text:" + v;
    }
    if (v instanceof java.sql.Date d) {
      return "date:" + d.toLocalDate();
    }
    if (v instanceof Timestamp t) {
      return "timestamp:" + TS.format(t.toLocalDateTime());
    }
    if (v instanceof byte[] bytes) {
      return "bytes:" + HexFormat.of().formatHex(bytes);
    }
    return v.getClass().getName() + ":" + v;
  }
}
