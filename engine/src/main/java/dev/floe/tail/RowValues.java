package dev.floe.tail;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Java values of an appended row, checked and turned into Iceberg's internal representation before
 * anything is written: a row that does not fit its columns is refused with the SQLSTATE PostgreSQL
 * would give an INSERT of it.
 */
public final class RowValues {
  private final String table;
  private final List<Types.NestedField> fields;
  private final List<Column> columns;

  /**
   * @param columns the SQL columns of {@code fields}, in the same order (declared types: varchar(n))
   */
  public RowValues(String table, List<Types.NestedField> fields, List<Column> columns) {
    this.table = table;
    this.fields = fields;
    this.columns = columns;
  }

  /** A row given as values in column order ({@code Object[]} or {@code List}), or by name ({@code Map}). */
  public Object[] row(Object row) {
    if (row instanceof Object[] values) {
      return positional(java.util.Arrays.asList(values));
    }
    if (row instanceof List<?> values) {
      return positional(values);
    }
    if (row instanceof Map<?, ?> named) {
      return named(named);
    }
    throw new FloeException(SqlState.DATATYPE_MISMATCH, "a row is an Object[], a List or a Map of column names to "
        + "values, not " + (row == null ? "null" : row.getClass().getName()));
  }

  private Object[] positional(List<?> values) {
    if (values.size() != fields.size()) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "a row of table \"" + table + "\" has "
          + fields.size() + " values (" + names() + "), not " + values.size());
    }
    Object[] out = new Object[fields.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = value(i, values.get(i));
    }
    return out;
  }

  private Object[] named(Map<?, ?> values) {
    Object[] out = new Object[fields.size()];
    int matched = 0;
    for (int i = 0; i < out.length; i++) {
      String name = fields.get(i).name();
      if (values.containsKey(name)) {
        matched++;
        out[i] = value(i, values.get(name));
      } else {
        out[i] = value(i, null);
      }
    }
    if (matched != values.size()) {
      for (Object key : values.keySet()) {
        if (!(key instanceof String s) || fields.stream().noneMatch(f -> f.name().equals(s))) {
          throw new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + key + "\" of relation \"" + table
              + "\" does not exist" + (isOffset(key) ? ": the log assigns offsets" : ""));
        }
      }
    }
    return out;
  }

  private static boolean isOffset(Object key) {
    return TailLog.OFFSET_COLUMN.equals(key);
  }

  private String names() {
    StringBuilder b = new StringBuilder();
    for (Types.NestedField f : fields) {
      b.append(b.length() > 0 ? ", " : "").append(f.name());
    }
    return b.toString();
  }

  private Object value(int i, Object v) {
    Types.NestedField f = fields.get(i);
    if (v == null) {
      if (f.isRequired()) {
        throw new FloeException(SqlState.NOT_NULL_VIOLATION, "null value in column \"" + f.name()
            + "\" of relation \"" + table + "\" violates not-null constraint");
      }
      return null;
    }
    Type type = f.type();
    SqlType sql = columns.get(i).type();
    Object out = switch (type.typeId()) {
      case BOOLEAN -> v instanceof Boolean b ? b : null;
      case INTEGER -> integral(v) ? range(f, sql, ((Number) v).longValue(),
          sql.kind() == SqlType.Kind.SMALLINT ? Short.MIN_VALUE : Integer.MIN_VALUE,
          sql.kind() == SqlType.Kind.SMALLINT ? Short.MAX_VALUE : Integer.MAX_VALUE) : null;
      case LONG -> integral(v) ? (Object) ((Number) v).longValue()
          : v instanceof BigInteger b ? range(f, sql, b, Long.MIN_VALUE, Long.MAX_VALUE) : null;
      case FLOAT -> v instanceof Number n ? (Object) n.floatValue() : null;
      case DOUBLE -> v instanceof Number n ? (Object) n.doubleValue() : null;
      case DECIMAL -> decimal(f, (Types.DecimalType) type, v);
      case STRING -> v instanceof CharSequence s ? text(f, sql, s.toString()) : null;
      case UUID -> v instanceof UUID u ? u : v instanceof String s ? uuid(f, s) : null;
      case BINARY, FIXED -> v instanceof byte[] b ? ByteBuffer.wrap(b.clone())
          : v instanceof ByteBuffer b ? copy(b) : null;
      case DATE -> v instanceof LocalDate d ? (Object) Math.toIntExact(d.toEpochDay()) : null;
      case TIME -> v instanceof LocalTime t ? (Object) (t.toNanoOfDay() / 1000) : null;
      case TIMESTAMP -> timestamp(((Types.TimestampType) type).shouldAdjustToUTC(), v, 1000);
      case TIMESTAMP_NANO -> timestamp(((Types.TimestampNanoType) type).shouldAdjustToUTC(), v, 1);
      default -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "column \"" + f.name() + "\" is of type "
          + type + ", which a log cannot hold");
    };
    if (out == null) {
      throw new FloeException(SqlState.DATATYPE_MISMATCH, "column \"" + f.name() + "\" is of type "
          + sql.toString().toLowerCase(Locale.ROOT) + " but the value is a " + v.getClass().getName());
    }
    return out;
  }

  private static boolean integral(Object v) {
    return v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte;
  }

  private static Object range(Types.NestedField f, SqlType sql, long v, long min, long max) {
    if (v < min || v > max) {
      throw outOfRange(f, sql);
    }
    return (int) v;
  }

  private static Object range(Types.NestedField f, SqlType sql, BigInteger v, long min, long max) {
    if (v.bitLength() > 63) {
      throw outOfRange(f, sql);
    }
    return v.longValue();
  }

  private static FloeException outOfRange(Types.NestedField f, SqlType sql) {
    return new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, sql.toString().toLowerCase(Locale.ROOT)
        + " out of range for column \"" + f.name() + "\"");
  }

  private static Object decimal(Types.NestedField f, Types.DecimalType type, Object v) {
    BigDecimal d;
    if (v instanceof BigDecimal b) {
      d = b;
    } else if (v instanceof BigInteger b) {
      d = new BigDecimal(b);
    } else if (integral(v)) {
      d = BigDecimal.valueOf(((Number) v).longValue());
    } else if (v instanceof Double || v instanceof Float) {
      double x = ((Number) v).doubleValue();
      if (!Double.isFinite(x)) {
        throw new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "column \"" + f.name()
            + "\" cannot hold " + x);
      }
      d = BigDecimal.valueOf(x);
    } else {
      return null;
    }
    BigDecimal scaled = d.setScale(type.scale(), RoundingMode.HALF_UP);
    if (scaled.precision() - scaled.scale() > type.precision() - type.scale()) {
      throw new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow", "A field with precision "
          + type.precision() + ", scale " + type.scale() + " must round to an absolute value less than 10^"
          + (type.precision() - type.scale()) + ".", null, 0, null);
    }
    return scaled;
  }

  /** {@code s} as a value of text column {@code f} of type {@code sql}: padded, checked, or 22001 / 22021. */
  public static String text(Types.NestedField f, SqlType sql, String s) {
    String v = sql.kind() == SqlType.Kind.CHAR ? s.replaceAll(" +$", "") : s;
    int n = sql.precision();
    if ((sql.kind() == SqlType.Kind.VARCHAR || sql.kind() == SqlType.Kind.CHAR) && n > 0
        && v.codePointCount(0, v.length()) > n) {
      String rest = v.substring(v.offsetByCodePoints(0, n));
      if (!rest.chars().allMatch(c -> c == ' ')) {
        throw new FloeException(SqlState.STRING_DATA_RIGHT_TRUNCATION, "value too long for type "
            + sql.toString().toLowerCase(Locale.ROOT) + " in column \"" + f.name() + "\"");
      }
      v = v.substring(0, v.offsetByCodePoints(0, n));
    }
    if (v.indexOf('\0') >= 0) {
      throw new FloeException(SqlState.CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\": "
          + "0x00 in column \"" + f.name() + "\"");
    }
    return v;
  }

  private static UUID uuid(Types.NestedField f, String s) {
    try {
      return UUID.fromString(s);
    } catch (IllegalArgumentException e) {
      throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type uuid: \"" + s
          + "\" in column \"" + f.name() + "\"");
    }
  }

  private static ByteBuffer copy(ByteBuffer b) {
    ByteBuffer d = b.duplicate();
    byte[] bytes = new byte[d.remaining()];
    d.get(bytes);
    return ByteBuffer.wrap(bytes);
  }

  /**
   * An Iceberg internal value as the Java value {@link #row} takes for its column: the inverse of the
   * conversion above.
   */
  public static Object toJava(Type type, Object v) {
    if (v == null) {
      return null;
    }
    return switch (type.typeId()) {
      case DATE -> LocalDate.ofEpochDay((Integer) v);
      case TIME -> LocalTime.ofNanoOfDay((Long) v * 1000);
      case TIMESTAMP -> {
        long micros = (Long) v;
        Instant at = Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000);
        yield ((Types.TimestampType) type).shouldAdjustToUTC() ? at : LocalDateTime.ofInstant(at, ZoneOffset.UTC);
      }
      case TIMESTAMP_NANO -> {
        long nanos = (Long) v;
        Instant at = Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
        yield ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? at : LocalDateTime.ofInstant(at, ZoneOffset.UTC);
      }
      case BINARY, FIXED -> {
        ByteBuffer b = ((ByteBuffer) v).duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        yield bytes;
      }
      case STRING -> v.toString();
      default -> v;
    };
  }

  /** Micros (unit 1000) or nanos (unit 1) since the epoch; zoned values only for a zoned column. */
  private static Object timestamp(boolean zoned, Object v, long unit) {
    Instant at;
    if (zoned) {
      if (v instanceof Instant i) {
        at = i;
      } else if (v instanceof OffsetDateTime o) {
        at = o.toInstant();
      } else if (v instanceof ZonedDateTime z) {
        at = z.toInstant();
      } else {
        return null;
      }
    } else if (v instanceof LocalDateTime l) {
      at = l.toInstant(ZoneOffset.UTC);
    } else {
      return null;
    }
    long seconds = at.getEpochSecond();
    long perSecond = unit == 1 ? 1_000_000_000L : 1_000_000L;
    return Math.addExact(Math.multiplyExact(seconds, perSecond), at.getNano() / unit);
  }
}
