package dev.floe;

import dev.floe.types.PgDateTime;
import dev.floe.types.Utf8Text;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.apache.arrow.vector.PeriodDuration;

/**
 * Values as PostgreSQL represents them, for front ends that speak its protocol: result values in its text
 * and binary formats, parameter values (text or binary, of a declared or unknown type) as SQL literals for
 * the statement they are bound to, and client text checked as PostgreSQL checks it.
 */
public final class PgValues {
  private static final LocalDate PG_EPOCH_DATE = LocalDate.of(2000, 1, 1);
  private static final LocalDateTime PG_EPOCH = PG_EPOCH_DATE.atStartOfDay();
  private static final long PG_EPOCH_MICROS = PG_EPOCH_DATE.toEpochDay() * 86_400_000_000L;

  private static final java.util.regex.Pattern DATE_WITH_ZONE =
      java.util.regex.Pattern.compile("(\\d{4,}-\\d{2}-\\d{2}) [+-]\\d{2}(:\\d{2}){0,2}");

  private static final java.util.regex.Pattern NUMBER =
      java.util.regex.Pattern.compile("\\s*[-+]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?\\s*");

  private static final java.util.regex.Pattern ZONE_SUFFIX =
      java.util.regex.Pattern.compile("(\\d{4,}-\\d{2}-\\d{2}(?:[ T][0-9:.]+)?) ?(?:[+-]\\d{2}(?::?\\d{2}){0,2}|Z|UTC)");

  private PgValues() {}

  // ------------------------------------------------------------------ results

  /**
   * Client text as PostgreSQL accepts it: valid UTF-8 without NUL.
   *
   * @throws FloeException 22021 naming the bytes that are not
   */
  public static String utf8(byte[] bytes, int offset, int length) {
    return Utf8Text.decode(bytes, offset, length);
  }

  /** Row {@code row} of an Arrow vector of a result, as {@link Row#get} gives it for {@code column}. */
  public static Object fromArrow(org.apache.arrow.vector.FieldVector vector, int row, Column column) {
    return dev.floe.exec.ArrowValues.get(vector, row, column);
  }

  /** A value in text format; timestamptz in the session's time zone, as PostgreSQL prints it. */
  public static byte[] text(Object v, ZoneId zone) {
    if (v == null) {
      return null;
    }
    String s = v instanceof OffsetDateTime t ? PgDateTime.timestamptz(t, zone) : Values.toText(v);
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A value in binary format for its column type. */
  public static byte[] binary(Object v, PgType type, ZoneId zone) {
    if (v == null) {
      return null;
    }
    if (type.isArray()) {
      return binaryArray((List<?>) v, type.element(), zone);
    }
    ByteBuffer b;
    switch (type.oid()) {
      case 16 -> {
        return new byte[] {(byte) (((Boolean) v) ? 1 : 0)};
      }
      case 21 -> b = ByteBuffer.allocate(2).putShort(((Number) v).shortValue());
      case 23 -> b = ByteBuffer.allocate(4).putInt(((Number) v).intValue());
      case 20 -> b = ByteBuffer.allocate(8).putLong(((Number) v).longValue());
      case 700 -> b = ByteBuffer.allocate(4).putFloat(((Number) v).floatValue());
      case 701 -> b = ByteBuffer.allocate(8).putDouble(((Number) v).doubleValue());
      case 17 -> {
        return (byte[]) v;
      }
      case 1082 -> b = ByteBuffer.allocate(4).putInt(pgDays((LocalDate) v));
      case 1083 -> b = ByteBuffer.allocate(8).putLong(((LocalTime) v).toNanoOfDay() / 1000);
      case 1114 -> b = ByteBuffer.allocate(8).putLong(pgMicros(PgDateTime.micros((LocalDateTime) v)));
      case 1184 -> b = ByteBuffer.allocate(8).putLong(
          pgMicros(PgDateTime.micros(((OffsetDateTime) v).withOffsetSameInstant(ZoneOffset.UTC).toLocalDateTime())));
      case 2950 -> {
        UUID u = (UUID) v;
        b = ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits());
      }
      case 1700 -> {
        return numeric(v instanceof BigDecimal d ? d : new BigDecimal(v.toString()));
      }
      case 1186 -> {
        PeriodDuration pd = (PeriodDuration) v;
        Duration d = pd.getDuration();
        b = ByteBuffer.allocate(16).putLong(d.getSeconds() * 1_000_000 + d.getNano() / 1000)
            .putInt(pd.getPeriod().getDays()).putInt((int) pd.getPeriod().toTotalMonths());
      }
      default -> {
        return text(v, zone); // text, varchar, bpchar, json, name, unknown: the binary form is the text
      }
    }
    return b.array();
  }

  /** Days since 2000-01-01; DuckDB's infinities as PostgreSQL's (the largest and smallest int). */
  private static int pgDays(LocalDate d) {
    int infinite = PgDateTime.infinite(d);
    return infinite > 0 ? Integer.MAX_VALUE : infinite < 0 ? Integer.MIN_VALUE
        : (int) (d.toEpochDay() - PG_EPOCH_DATE.toEpochDay());
  }

  /** Microseconds since 2000-01-01 of microseconds since 1970; the infinities as PostgreSQL's. */
  private static long pgMicros(long unixMicros) {
    int infinite = PgDateTime.infinite(unixMicros);
    return infinite > 0 ? Long.MAX_VALUE : infinite < 0 ? Long.MIN_VALUE : unixMicros - PG_EPOCH_MICROS;
  }

  private static byte[] binaryArray(List<?> list, PgType element, ZoneId zone) {
    List<byte[]> items = new ArrayList<>();
    boolean nulls = false;
    int size = 20;
    for (Object e : list) {
      byte[] item = binary(e, element, zone);
      nulls |= item == null;
      items.add(item);
      size += 4 + (item == null ? 0 : item.length);
    }
    ByteBuffer b = ByteBuffer.allocate(list.isEmpty() ? 12 : size);
    b.putInt(list.isEmpty() ? 0 : 1).putInt(nulls ? 1 : 0).putInt(element.oid());
    if (!list.isEmpty()) {
      b.putInt(list.size()).putInt(1);
      for (byte[] item : items) {
        if (item == null) {
          b.putInt(-1);
        } else {
          b.putInt(item.length).put(item);
        }
      }
    }
    return b.array();
  }

  /** PostgreSQL's binary numeric: base-10000 digits with a weight, a sign and a display scale. */
  static byte[] numeric(BigDecimal d) {
    int scale = Math.max(d.scale(), 0);
    BigDecimal abs = d.abs().setScale(scale);
    String digits = abs.unscaledValue().toString();
    // integer part and fraction part as decimal strings
    String intPart = digits.length() > scale ? digits.substring(0, digits.length() - scale) : "0";
    String fracPart = scale == 0 ? "" : String.format("%" + scale + "s", digits.length() > scale
        ? digits.substring(digits.length() - scale) : digits).replace(' ', '0');
    // pad the integer part on the left and the fraction on the right to groups of four
    int intGroups = (intPart.length() + 3) / 4;
    intPart = "0".repeat(intGroups * 4 - intPart.length()) + intPart;
    int fracGroups = (fracPart.length() + 3) / 4;
    fracPart = fracPart + "0".repeat(fracGroups * 4 - fracPart.length());
    List<Integer> groups = new ArrayList<>();
    for (int i = 0; i < intGroups; i++) {
      groups.add(Integer.parseInt(intPart.substring(i * 4, i * 4 + 4)));
    }
    for (int i = 0; i < fracGroups; i++) {
      groups.add(Integer.parseInt(fracPart.substring(i * 4, i * 4 + 4)));
    }
    int weight = intGroups - 1;
    // strip leading and trailing zero groups
    int first = 0;
    while (first < groups.size() && groups.get(first) == 0) {
      first++;
      weight--;
    }
    int last = groups.size();
    while (last > first && groups.get(last - 1) == 0) {
      last--;
    }
    if (first == last) {
      weight = 0;
    }
    ByteBuffer b = ByteBuffer.allocate(8 + 2 * (last - first));
    b.putShort((short) (last - first)).putShort((short) weight)
        .putShort((short) (d.signum() < 0 ? 0x4000 : 0)).putShort((short) scale);
    for (int i = first; i < last; i++) {
      b.putShort(groups.get(i).shortValue());
    }
    return b.array();
  }

  static BigDecimal decodeNumeric(byte[] v) {
    ByteBuffer b = ByteBuffer.wrap(v);
    int ndigits = b.getShort();
    int weight = b.getShort();
    int sign = b.getShort() & 0xffff;
    int dscale = b.getShort();
    if (sign == 0xC000) {
      throw invalidBinary("numeric", "NaN is not a number Floe can store");
    }
    if (ndigits < 0 || v.length != 8 + 2 * ndigits || dscale < 0) {
      throw invalidBinary("numeric", "bad length");
    }
    BigInteger unscaled = BigInteger.ZERO;
    for (int i = 0; i < ndigits; i++) {
      int digit = b.getShort();
      if (digit < 0 || digit > 9999) {
        throw invalidBinary("numeric", "a digit out of range");
      }
      unscaled = unscaled.multiply(BigInteger.valueOf(10000)).add(BigInteger.valueOf(digit));
    }
    BigDecimal d = new BigDecimal(unscaled).scaleByPowerOfTen(4 * (weight - ndigits + 1));
    d = d.setScale(dscale, java.math.RoundingMode.DOWN);
    return sign == 0x4000 ? d.negate() : d;
  }

  // ------------------------------------------------------------------ parameters

  /**
   * A bound parameter as a SQL literal. An unknown-typed text value becomes a string literal, as an
   * unknown literal behaves in PostgreSQL (its type comes from where it is used); a declared type
   * becomes a cast of the text; a binary value is decoded by its declared type.
   *
   * @param integerContext the parameter stands where only a number fits (LIMIT, OFFSET)
   * @param numericContext the parameter is an operand of arithmetic: a numeric text is a number
   */
  public static String literal(byte[] value, boolean binaryFormat, PgType type, boolean integerContext,
      boolean numericContext) {
    if (value == null) {
      return type == null || type.isTextual() ? "NULL" : "CAST(NULL AS " + type.castName() + ")";
    }
    if (binaryFormat) {
      return binaryLiteral(value, type);
    }
    String text = Utf8Text.decode(value); // PostgreSQL's text holds valid UTF-8 without NUL (22021)
    if (type == null || type.isTextual()) {
      if (integerContext) {
        return "CAST(" + quote(text) + " AS bigint)";
      }
      if (type == null && numericContext && NUMBER.matcher(text).matches()) {
        return "(" + text.strip() + ")";
      }
      java.util.regex.Matcher date = DATE_WITH_ZONE.matcher(text);
      // pgjdbc's setDate sends "2024-02-01 +01" untyped; PostgreSQL's date input ignores the zone
      return quote(type == null && date.matches() ? date.group(1) : text);
    }
    if (type.oid() == 17) {
      return bytea(text);
    }
    if (type.isArray()) {
      return array(text, type);
    }
    if (type.oid() == 1700 && NUMBER.matcher(text).matches()) {
      return numeric(text.strip());
    }
    if (type.oid() == 1082 || type.oid() == 1114) {
      // PostgreSQL's date and timestamp input ignore a zone suffix ("2024-02-01 +01", as pgjdbc sends them)
      java.util.regex.Matcher zoned = ZONE_SUFFIX.matcher(text);
      if (zoned.matches()) {
        text = zoned.group(1);
      }
    }
    return "CAST(" + quote(text) + " AS " + type.castName() + ")";
  }

  /** A one-dimensional array in PostgreSQL's text form ({@code {1,2,"a b",NULL}}) as a list of literals. */
  static String array(String text, PgType type) {
    String t = text.strip();
    if (t.length() < 2 || t.charAt(0) != '{' || t.charAt(t.length() - 1) != '}') {
      throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "malformed array literal: \"" + text + "\"",
          "Array value must start with \"{\" or dimension information.", null, 0, null);
    }
    List<String> elements = new ArrayList<>();
    String body = t.substring(1, t.length() - 1);
    int i = 0;
    while (i < body.length()) {
      while (i < body.length() && Character.isWhitespace(body.charAt(i))) {
        i++;
      }
      if (i >= body.length()) {
        break;
      }
      if (body.charAt(i) == '{') {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "multidimensional array parameters are not supported");
      }
      String element;
      boolean quoted = body.charAt(i) == '"';
      if (quoted) {
        StringBuilder b = new StringBuilder();
        i++;
        while (i < body.length() && body.charAt(i) != '"') {
          if (body.charAt(i) == '\\' && i + 1 < body.length()) {
            i++;
          }
          b.append(body.charAt(i++));
        }
        if (i >= body.length()) {
          throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "malformed array literal: \"" + text + "\"");
        }
        i++; // closing quote
        element = b.toString();
      } else {
        int start = i;
        while (i < body.length() && body.charAt(i) != ',') {
          i++;
        }
        element = body.substring(start, i).strip();
      }
      elements.add(!quoted && element.equalsIgnoreCase("NULL") ? null : element);
      while (i < body.length() && Character.isWhitespace(body.charAt(i))) {
        i++;
      }
      if (i < body.length()) {
        if (body.charAt(i) != ',') {
          throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "malformed array literal: \"" + text + "\"");
        }
        i++;
      }
    }
    PgType element = type.element();
    StringBuilder list = new StringBuilder("CAST([");
    for (int k = 0; k < elements.size(); k++) {
      String e = elements.get(k);
      list.append(k > 0 ? ", " : "").append(e == null ? "NULL" : element.isTextual() ? quote(e)
          : element.oid() == 17 ? bytea(e) : "CAST(" + quote(e) + " AS " + element.castName() + ")");
    }
    return list.append("] AS ").append(type.castName()).append(")").toString();
  }

  private static String binaryLiteral(byte[] v, PgType type) {
    if (type == null) {
      // An untyped binary value is raw bytes (node-postgres sends Buffers so): bytea, which PostgreSQL
      // would infer where such a value can go.
      return "from_hex('" + HexFormat.of().formatHex(v) + "')";
    }
    if (type.isArray()) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
          "binary format for array parameters is not supported; send them as text");
    }
    if (type.oid() == 17) {
      return "from_hex('" + HexFormat.of().formatHex(v) + "')";
    }
    String text = binaryToText(v, type);
    if (type.oid() == 1700) {
      return numeric(text);
    }
    return type.isTextual() ? quote(text) : "CAST(" + quote(text) + " AS " + type.castName() + ")";
  }



  private static void need(byte[] v, int n, PgType type) {
    if (v.length != n) {
      throw invalidBinary(type.name(), "expected " + n + " bytes, got " + v.length);
    }
  }

  private static FloeException invalidBinary(String type, String why) {
    return new FloeException(SqlState.INVALID_BINARY_REPRESENTATION,
        "incorrect binary data format in bind parameter of type " + type + ": " + why);
  }

  /**
   * A binary value of a declared type as text DuckDB's CSV reader parses into that type (binary COPY FROM).
   */
  public static String binaryToText(byte[] v, PgType type) {
    try {
      return binaryText(v, type);
    } catch (java.time.DateTimeException | ArithmeticException e) {
      throw invalidBinary(type.name(), "value out of range");
    }
  }

  private static String binaryText(byte[] v, PgType type) {
    ByteBuffer b = ByteBuffer.wrap(v);
    switch (type.oid()) {
      case 16 -> {
        need(v, 1, type);
        return v[0] != 0 ? "true" : "false";
      }
      case 21 -> {
        need(v, 2, type);
        return Short.toString(b.getShort());
      }
      case 23, 26 -> {
        need(v, 4, type);
        return Integer.toString(b.getInt());
      }
      case 20 -> {
        need(v, 8, type);
        return Long.toString(b.getLong());
      }
      case 700 -> {
        need(v, 4, type);
        return Values.toText(b.getFloat());
      }
      case 701 -> {
        need(v, 8, type);
        return Values.toText(b.getDouble());
      }
      case 17 -> {
        StringBuilder hex = new StringBuilder(v.length * 4);
        for (byte x : v) {
          hex.append(String.format("\\x%02X", x & 0xff));
        }
        return hex.toString();
      }
      case 1082 -> {
        need(v, 4, type);
        int days = b.getInt();
        return days == Integer.MAX_VALUE ? "infinity" : days == Integer.MIN_VALUE ? "-infinity"
            : PgDateTime.date(PG_EPOCH_DATE.plusDays(days));
      }
      case 1083 -> {
        need(v, 8, type);
        return LocalTime.ofNanoOfDay(b.getLong() * 1000).toString();
      }
      case 1114, 1184 -> {
        need(v, 8, type);
        long micros = b.getLong();
        if (micros == Long.MAX_VALUE || micros == Long.MIN_VALUE) {
          return micros > 0 ? "infinity" : "-infinity";
        }
        if (micros > PgDateTime.MAX_MICROS - PG_EPOCH_MICROS || micros < PgDateTime.MIN_MICROS - PG_EPOCH_MICROS) {
          // past the last timestamp Floe holds (the next one is DuckDB's infinity), or before the first
          throw new FloeException(SqlState.DATETIME_FIELD_OVERFLOW, "timestamp out of range");
        }
        LocalDateTime t = PG_EPOCH.plus(micros, ChronoUnit.MICROS);
        return type.oid() == 1184 ? PgDateTime.timestamptz(t.atOffset(ZoneOffset.UTC), ZoneOffset.UTC)
            : PgDateTime.timestamp(t);
      }
      case 2950 -> {
        need(v, 16, type);
        return new UUID(b.getLong(), b.getLong()).toString();
      }
      case 1700 -> {
        if (v.length < 8) {
          throw invalidBinary("numeric", "bad length");
        }
        return decodeNumeric(v).toPlainString();
      }
      case 1186 -> {
        need(v, 16, type);
        long micros = b.getLong();
        int days = b.getInt();
        int months = b.getInt();
        return months + " months " + days + " days " + micros + " microseconds";
      }
      default -> {
        if (type.isArray()) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "binary COPY of array columns is not supported");
        }
        return Utf8Text.decode(v);
      }
    }
  }

  /**
   * A numeric parameter (text a number) with all its digits (up to 38): a cast to DuckDB's numeric would
   * make it DECIMAL(18,3), losing digits.
   */
  private static String numeric(String number) {
    return dev.floe.types.SqlLiterals.decimal(number);
  }

  /** bytea in text format: hex ({@code \x...}) or PostgreSQL's escape format. */
  private static String bytea(String text) {
    try {
      return "from_hex('" + HexFormat.of().formatHex(dev.floe.types.ByteaText.parse(text)) + "')";
    } catch (IllegalArgumentException e) {
      throw new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, e.getMessage());
    }
  }


  static String quote(String s) {
    return "'" + s.replace("'", "''") + "'";
  }
}
