package dev.floe.types;

import dev.floe.sql.Lexer;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalTime;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Renders Iceberg values (in Iceberg's internal representation: days for dates, microseconds for times
 * and timestamps, {@link ByteBuffer} for binary, ...) as DuckDB SQL literals of the exact type.
 */
public final class SqlLiterals {
  private SqlLiterals() {}

  /** A typed literal: {@code CAST(<value> AS <type>)}, or a typed NULL. */
  public static String of(Type type, Object value) {
    return "CAST(" + raw(type, value) + " AS " + TypeMapping.duckdbType(type) + ")";
  }

  private static final java.util.regex.Pattern PLAIN_NUMBER =
      java.util.regex.Pattern.compile("\\s*[-+]?(\\d*)(?:\\.(\\d*))?\\s*");

  /**
   * A number given as text (PostgreSQL's numeric input: {@code -12.50}, {@code 1e-9}) as a DuckDB
   * expression of type numeric with all its digits: {@code CAST(-12.50 AS DECIMAL(4,2))}. DuckDB's own
   * {@code numeric} is DECIMAL(18,3), which would round or refuse it. Beyond 38 digits, the number as
   * DuckDB types it (a double).
   *
   * @param number text that is a number (checked by the caller)
   */
  public static String decimal(String number) {
    java.util.regex.Matcher m = PLAIN_NUMBER.matcher(number);
    String text = number.strip();
    if (!m.matches()) {
      try {
        String plain = new BigDecimal(text.startsWith("+") ? text.substring(1) : text).toPlainString();
        return plain.length() <= 40 ? decimal(plain) : "(" + text + ")"; // 1e-9 is 0.000000001
      } catch (NumberFormatException e) {
        return "(" + text + ")";
      }
    }
    String integer = m.group(1).replaceFirst("^0+", "");
    int scale = m.group(2) == null ? 0 : m.group(2).length();
    int precision = Math.max(integer.length() + scale, Math.max(scale, 1));
    if (precision > 38) {
      return "(" + text + ")";
    }
    return "CAST(" + text + " AS DECIMAL(" + precision + "," + scale + "))";
  }

  /**
   * A string literal of any text, a NUL character included (another engine may have stored one):
   * DuckDB's parser reads SQL as a C string, so a NUL inside a literal would end the statement there.
   */
  public static String text(String s) {
    if (s.indexOf('\0') < 0) {
      return Lexer.quoteString(s);
    }
    StringBuilder b = new StringBuilder("(");
    String[] parts = s.split("\0", -1);
    for (int k = 0; k < parts.length; k++) {
      b.append(k > 0 ? " || decode('\\x00'::BLOB) || " : "").append(Lexer.quoteString(parts[k]));
    }
    return b.append(')').toString();
  }

  private static String raw(Type type, Object value) {
    if (value == null) {
      return "NULL";
    }
    return switch (type.typeId()) {
      case BOOLEAN -> ((Boolean) value) ? "true" : "false";
      case INTEGER, LONG -> value.toString();
      case FLOAT, DOUBLE -> {
        double d = ((Number) value).doubleValue();
        yield Double.isNaN(d) || Double.isInfinite(d) ? Lexer.quoteString(Double.toString(d)) : Double.toString(d);
      }
      case DECIMAL -> ((BigDecimal) value).toPlainString();
      case STRING -> text(value.toString());
      // Temporal values as exact offsets from the epoch: any year DuckDB can hold, independent of the
      // session's time zone.
      case DATE -> "(DATE '1970-01-01' + CAST(" + ((Number) value).longValue() + " AS INTEGER))";
      case TIME -> Lexer.quoteString(LocalTime.ofNanoOfDay(((Number) value).longValue() * 1000).toString());
      case TIMESTAMP -> {
        String naive = "make_timestamp(CAST(" + ((Number) value).longValue() + " AS BIGINT))";
        yield ((Types.TimestampType) type).shouldAdjustToUTC() ? "timezone('UTC', " + naive + ")" : naive;
      }
      case TIMESTAMP_NANO -> {
        String naive = "make_timestamp(CAST(" + Math.floorDiv(((Number) value).longValue(), 1000L) + " AS BIGINT))";
        yield ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? "timezone('UTC', " + naive + ")" : naive;
      }
      case UUID -> Lexer.quoteString(value.toString());
      case BINARY, FIXED -> {
        byte[] bytes;
        if (value instanceof ByteBuffer bb) {
          ByteBuffer dup = bb.duplicate();
          bytes = new byte[dup.remaining()];
          dup.get(bytes);
        } else {
          bytes = (byte[]) value;
        }
        yield "unhex(" + Lexer.quoteString(HexFormat.of().formatHex(bytes)) + ")";
      }
      case STRUCT -> {
        Types.StructType struct = type.asStructType();
        StructLike row = (StructLike) value;
        StringBuilder b = new StringBuilder("{");
        List<Types.NestedField> fields = struct.fields();
        for (int k = 0; k < fields.size(); k++) {
          if (k > 0) {
            b.append(", ");
          }
          Types.NestedField f = fields.get(k);
          b.append(Lexer.quoteString(f.name())).append(": ").append(of(f.type(), row.get(k, Object.class)));
        }
        yield b.append('}').toString();
      }
      case LIST -> {
        Type element = type.asListType().elementType();
        StringBuilder b = new StringBuilder("[");
        boolean first = true;
        for (Object o : (List<?>) value) {
          if (!first) {
            b.append(", ");
          }
          first = false;
          b.append(of(element, o));
        }
        yield b.append(']').toString();
      }
      case MAP -> {
        Types.MapType map = type.asMapType();
        StringBuilder b = new StringBuilder("MAP {");
        boolean first = true;
        for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
          if (!first) {
            b.append(", ");
          }
          first = false;
          b.append(of(map.keyType(), e.getKey())).append(": ").append(of(map.valueType(), e.getValue()));
        }
        yield b.append('}').toString();
      }
      default -> throw new IllegalArgumentException("No SQL literal for Iceberg type " + type);
    };
  }
}
