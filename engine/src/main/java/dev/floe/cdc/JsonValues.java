package dev.floe.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.types.PgDateTime;
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
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.Locale;
import java.util.UUID;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * A JSON value of a change envelope as the Iceberg internal value of its column. Plain JSON (numbers,
 * strings, ISO-8601 dates and times, base64 bytes) is read by the column's type; a Debezium field's
 * Kafka Connect schema name ({@code io.debezium.time.MicroTimestamp}, {@code ...Date},
 * {@code org.apache.kafka.connect.data.Decimal} with its scale, ...) says what a number or string means
 * when it is known. A value that does not fit its column fails with PostgreSQL's error for it.
 */
public final class JsonValues {
  /** What a Debezium schema says about a field: its semantic name and, for decimals, the scale. */
  public record Hint(String name, Integer scale) {
    public static final Hint NONE = new Hint(null, null);
  }

  private JsonValues() {}

  /** {@code v} as column {@code column}'s value (null for JSON null or absent). */
  public static Object convert(JsonNode v, TableShape shape, int column, Hint hint) {
    if (v == null || v.isNull() || v.isMissingNode()) {
      return null;
    }
    Types.NestedField f = shape.columns().get(column);
    SqlType sql = shape.sqlType(column);
    Type type = f.type();
    String name = hint.name() == null ? "" : hint.name();
    try {
      return switch (type.typeId()) {
        case BOOLEAN -> v.isBoolean() ? v.booleanValue() : v.isIntegralNumber() ? v.longValue() != 0
            : parseBoolean(v.asText(), f);
        case INTEGER -> {
          long l = integral(v, f);
          long min = sql.kind() == SqlType.Kind.SMALLINT ? Short.MIN_VALUE : Integer.MIN_VALUE;
          long max = sql.kind() == SqlType.Kind.SMALLINT ? Short.MAX_VALUE : Integer.MAX_VALUE;
          if (l < min || l > max) {
            throw new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, (sql.kind() == SqlType.Kind.SMALLINT
                ? "smallint" : "integer") + " out of range for column \"" + f.name() + "\"");
          }
          yield (int) l;
        }
        case LONG -> integral(v, f);
        case FLOAT -> {
          float x = v.isBigDecimal() ? v.decimalValue().floatValue() : (float) floating(v);
          if (!fits(v, x, Float.isInfinite(x))) {
            throw outOfRange(v, "real", f);
          }
          yield x;
        }
        case DOUBLE -> {
          double x = floating(v);
          if (!fits(v, x, Double.isInfinite(x))) {
            throw outOfRange(v, "double precision", f);
          }
          yield x;
        }
        case DECIMAL -> decimal(v, (Types.DecimalType) type, hint, f);
        case STRING -> dev.floe.tail.RowValues.text(f, sql, v.isTextual() ? v.textValue() : v.toString());
        case UUID -> uuid(v.asText());
        case BINARY, FIXED -> ByteBuffer.wrap(v.isBinary() ? v.binaryValue() : Base64.getDecoder().decode(v.asText()));
        case DATE -> {
          if (v.isNumber() ? !v.canConvertToLong() : infinite(v.asText())) {
            throw PgDateTime.notStored(true, f.name());
          }
          long day = v.isNumber() ? v.longValue() : date(v.asText());
          if (!storable(true, day)) {
            throw PgDateTime.notStored(true, f.name());
          }
          yield (int) day;
        }
        case TIME -> {
          if (v.isNumber() && !v.canConvertToLong()) {
            throw timeNotStored(f.name());
          }
          long micros = v.isNumber() ? scaled(v.longValue(), name, true) : time(v.asText());
          if (!storableTime(micros)) {
            throw timeNotStored(f.name());
          }
          yield micros;
        }
        case TIMESTAMP -> {
          if (v.isNumber() ? !v.canConvertToLong() : infinite(v.asText())) {
            throw PgDateTime.notStored(false, f.name());
          }
          long micros;
          try {
            micros = v.isNumber() ? scaled(v.longValue(), name, false)
                : timestamp(v.asText(), ((Types.TimestampType) type).shouldAdjustToUTC());
          } catch (ArithmeticException e) {
            throw PgDateTime.notStored(false, f.name());
          }
          if (!storable(false, micros)) {
            throw PgDateTime.notStored(false, f.name());
          }
          yield micros;
        }
        default -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "column \"" + f.name() + "\" is of type "
            + sql.toString().toLowerCase(Locale.ROOT) + ", which a change stream cannot write yet");
      };
    } catch (FloeException e) {
      throw e;
    } catch (IllegalArgumentException | DateTimeParseException | ArithmeticException | java.io.IOException e) {
      throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type "
          + sql.toString().toLowerCase(Locale.ROOT) + ": " + abbreviate(v.toString()), "column \"" + f.name() + "\"",
          null, 0, null);
    }
  }

  private static String abbreviate(String s) {
    return s.length() > 60 ? s.substring(0, 57) + "..." : s;
  }

  private static boolean parseBoolean(String s, Types.NestedField f) {
    return switch (s.toLowerCase(Locale.ROOT)) {
      case "true", "t", "1", "yes" -> true;
      case "false", "f", "0", "no" -> false;
      default -> throw new IllegalArgumentException(s);
    };
  }

  private static long integral(JsonNode v, Types.NestedField f) {
    if (v.isIntegralNumber()) {
      if (!v.canConvertToLong()) {
        throw new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range for column \"" + f.name()
            + "\"");
      }
      return v.longValue();
    }
    if (v.isNumber()) {
      throw new IllegalArgumentException("not integral");
    }
    String text = v.asText().trim();
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      if (text.matches("[+-]?[0-9]+")) {
        throw new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value \"" + abbreviate(text)
            + "\" is out of range for type bigint", "column \"" + f.name() + "\"", null, 0, null);
      }
      throw e;
    }
  }

  /**
   * Whether a number converted to a real or double ({@code x}, infinite or not) is in the type's range, as
   * PostgreSQL's input reads text: a finite number that overflows, or is not zero and underflows to zero, is
   * not. Text's "Infinity" and "NaN" are themselves.
   */
  private static boolean fits(JsonNode v, double x, boolean infinite) {
    if (!v.isNumber()) {
      return true;
    }
    if (infinite) {
      return false;
    }
    return x != 0 || !v.isBigDecimal() || v.decimalValue().signum() == 0; // an integer or -0.0 is 0 only when 0
  }

  private static FloeException outOfRange(JsonNode v, String type, Types.NestedField f) {
    return new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "\"" + abbreviate(v.asText()) + "\" is out of "
        + "range for type " + type, "column \"" + f.name() + "\"", null, 0, null);
  }

  /** Microseconds of the day in an Iceberg time's range: from 00:00:00 to before 24:00:00. */
  static boolean storableTime(long micros) {
    return micros >= 0 && micros < DAY_MICROS;
  }

  private static final long DAY_MICROS = 86_400_000_000L;

  private static FloeException timeNotStored(String column) {
    return new FloeException(SqlState.DATETIME_FIELD_OVERFLOW, "time out of range for column \"" + column + "\"",
        null, "An Iceberg time is at least 00:00:00 and less than 24:00:00 (PostgreSQL's 24:00:00 is not one).", 0,
        null);
  }

  private static final java.util.regex.Pattern UUID_TEXT = java.util.regex.Pattern.compile(
      "\\{?([0-9a-fA-F]{4}-?){7}[0-9a-fA-F]{4}\\}?");

  /**
   * A uuid's text as PostgreSQL reads it: 32 hex digits, a hyphen allowed after any group of four, in
   * braces or not; anything else is not a uuid (java.util.UUID would take {@code 1-2-3-4-5}).
   */
  static UUID uuid(String text) {
    String t = text.trim();
    if (!UUID_TEXT.matcher(t).matches() || t.startsWith("{") != t.endsWith("}")) {
      throw new IllegalArgumentException("not a uuid: " + text);
    }
    String hex = t.replace("-", "").replace("{", "").replace("}", "");
    return new UUID(Long.parseUnsignedLong(hex.substring(0, 16), 16), Long.parseUnsignedLong(hex.substring(16), 16));
  }

  private static double floating(JsonNode v) {
    if (v.isNumber()) {
      return v.doubleValue();
    }
    return switch (v.asText()) {
      case "NaN" -> Double.NaN;
      case "Infinity" -> Double.POSITIVE_INFINITY;
      case "-Infinity" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(v.asText());
    };
  }

  private static BigDecimal decimal(JsonNode v, Types.DecimalType type, Hint hint, Types.NestedField f) {
    BigDecimal d;
    if (v.isNumber()) {
      d = v.decimalValue();
    } else if (v.isObject() && v.has("scale") && v.has("value")) { // io.debezium.data.VariableScaleDecimal
      d = new BigDecimal(new BigInteger(Base64.getDecoder().decode(v.get("value").asText())), v.get("scale").asInt());
    } else {
      d = decimalText(v.asText(), hint);
    }
    return fitted(d, type, f);
  }

  /**
   * A decimal given as text: where the schema gives the field a scale (org.apache.kafka.connect.data.Decimal),
   * the unscaled value's bytes in base64; otherwise its digits.
   */
  static BigDecimal decimalText(String text, Hint hint) {
    return hint.scale() != null ? new BigDecimal(new BigInteger(Base64.getDecoder().decode(text)), hint.scale())
        : new BigDecimal(text.trim());
  }

  /** {@code d} at the column's scale (half up); 22003 when it then has more digits than its precision. */
  static BigDecimal fitted(BigDecimal d, Types.DecimalType type, Types.NestedField f) {
    BigDecimal scaled = d.setScale(type.scale(), RoundingMode.HALF_UP);
    if (scaled.precision() > type.precision()) {
      throw new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow in column \"" + f.name()
          + "\"", "A field with precision " + type.precision() + ", scale " + type.scale()
              + " must round to an absolute value less than 10^" + (type.precision() - type.scale()) + ".", null, 0, null);
    }
    return scaled;
  }

  /** A number of a Debezium time type, in microseconds (of the day, or since the epoch). */
  static long scaled(long v, String name, boolean time) {
    return switch (name) {
      case "io.debezium.time.Time", "io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp",
          "org.apache.kafka.connect.data.Time" -> Math.multiplyExact(v, 1000L);
      case "io.debezium.time.NanoTime", "io.debezium.time.NanoTimestamp" -> Math.floorDiv(v, 1000L);
      default -> v; // MicroTime, MicroTimestamp, and plain JSON: microseconds
    };
  }

  /**
   * Whether a date (days since 1970-01-01, {@code date}) or timestamp (microseconds) is one a Floe table
   * stores (Debezium sends PostgreSQL's infinities as the largest counts, or as the text {@code infinity}).
   */
  static boolean storable(boolean date, long v) {
    return date ? PgDateTime.storableDay(v) : PgDateTime.storableMicros(v);
  }

  private static boolean infinite(String text) {
    String t = text.trim();
    return t.equalsIgnoreCase("infinity") || t.equalsIgnoreCase("-infinity") || t.equalsIgnoreCase("+infinity");
  }

  /** A date's text as days since 1970-01-01. */
  static long date(String s) {
    return LocalDate.parse(s).toEpochDay();
  }

  private static final java.util.regex.Pattern MIDNIGHT_AFTER = java.util.regex.Pattern.compile(
      "24:00(:00(\\.0*)?)?");

  /** A time of day's text as microseconds since midnight (24:00:00 as a whole day's, which no time is). */
  static long time(String s) {
    if (s.startsWith("24:") && MIDNIGHT_AFTER.matcher(s).matches()) {
      return DAY_MICROS;
    }
    return LocalTime.parse(s).toNanoOfDay() / 1000;
  }

  /** A timestamp's text as microseconds since 1970-01-01 (UTC for {@code zoned}; its offset when it has one). */
  static long timestamp(String s, boolean zoned) {
    String t = s.trim().replace(' ', 'T');
    Instant at;
    if (zoned) {
      at = t.endsWith("Z") || t.matches(".*[+-]\\d\\d(:?\\d\\d)?$") ? OffsetDateTime.parse(normalizeOffset(t))
          .toInstant() : LocalDateTime.parse(t).toInstant(ZoneOffset.UTC);
    } else {
      at = LocalDateTime.parse(t).toInstant(ZoneOffset.UTC);
    }
    return Math.addExact(Math.multiplyExact(at.getEpochSecond(), 1_000_000L), at.getNano() / 1000);
  }

  /** {@code +05} and {@code +0530} as {@code +05:00} and {@code +05:30}, which OffsetDateTime reads. */
  private static String normalizeOffset(String t) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("([+-]\\d\\d)(:?)(\\d\\d)?$").matcher(t);
    if (!t.endsWith("Z") && m.find()) {
      return t.substring(0, m.start()) + m.group(1) + ":" + (m.group(3) == null ? "00" : m.group(3));
    }
    return t;
  }
}
