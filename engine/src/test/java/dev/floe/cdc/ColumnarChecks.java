package dev.floe.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.FloeException;
import dev.floe.SqlType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.iceberg.types.Types;

/**
 * What the columnar decoders' differential tests share: the reference (a format's tree decoder into a
 * {@link Fold}), the comparison of its fold with a {@link FoldedColumns}, and random JSON written every
 * way JSON allows, or broken one character at a time.
 */
final class ColumnarChecks {
  private ColumnarChecks() {}

  /**
   * A table of every column type the decoders read: a key of {@code (region text, id int)}, or of
   * {@code id} alone ({@code bigint} with {@code bigintId}, else {@code int}); then name text, amount bigint,
   * score double precision, flag boolean, n int, code char(4), tag varchar(6), u uuid, day date,
   * at timestamptz, ts timestamp, price numeric(12,3), s smallint, r real, tm time, b bytea, j text (the
   * text of JSON, as PostgreSQL's connector sends a json column).
   */
  static TableShape shape(boolean twoColumnKey, boolean bigintId) {
    List<Types.NestedField> columns = new ArrayList<>();
    List<SqlType> types = new ArrayList<>();
    if (twoColumnKey) {
      columns.add(Types.NestedField.required(1, "region", Types.StringType.get()));
      types.add(SqlType.TEXT);
    }
    boolean bigint = bigintId && !twoColumnKey;
    columns.add(Types.NestedField.required(2, "id", bigint ? Types.LongType.get() : Types.IntegerType.get()));
    types.add(bigint ? SqlType.BIGINT : SqlType.INTEGER);
    columns.add(Types.NestedField.optional(3, "name", Types.StringType.get()));
    types.add(SqlType.TEXT);
    columns.add(Types.NestedField.optional(4, "amount", Types.LongType.get()));
    types.add(SqlType.BIGINT);
    columns.add(Types.NestedField.optional(5, "score", Types.DoubleType.get()));
    types.add(SqlType.DOUBLE);
    columns.add(Types.NestedField.optional(6, "flag", Types.BooleanType.get()));
    types.add(SqlType.BOOLEAN);
    columns.add(Types.NestedField.optional(7, "n", Types.IntegerType.get()));
    types.add(SqlType.INTEGER);
    columns.add(Types.NestedField.optional(8, "code", Types.StringType.get()));
    types.add(SqlType.character(4));
    columns.add(Types.NestedField.optional(9, "tag", Types.StringType.get()));
    types.add(SqlType.varchar(6));
    columns.add(Types.NestedField.optional(10, "u", Types.UUIDType.get()));
    types.add(SqlType.UUID);
    columns.add(Types.NestedField.optional(11, "day", Types.DateType.get()));
    types.add(SqlType.DATE);
    columns.add(Types.NestedField.optional(12, "at", Types.TimestampType.withZone()));
    types.add(SqlType.TIMESTAMPTZ);
    columns.add(Types.NestedField.optional(13, "ts", Types.TimestampType.withoutZone()));
    types.add(SqlType.TIMESTAMP);
    columns.add(Types.NestedField.optional(14, "price", Types.DecimalType.of(12, 3)));
    types.add(SqlType.decimal(12, 3));
    columns.add(Types.NestedField.optional(15, "s", Types.IntegerType.get()));
    types.add(SqlType.SMALLINT);
    columns.add(Types.NestedField.optional(16, "r", Types.FloatType.get()));
    types.add(SqlType.REAL);
    columns.add(Types.NestedField.optional(17, "tm", Types.TimeType.get()));
    types.add(SqlType.TIME);
    columns.add(Types.NestedField.optional(18, "b", Types.BinaryType.get()));
    types.add(SqlType.BYTEA);
    columns.add(Types.NestedField.optional(19, "j", Types.StringType.get()));
    types.add(SqlType.TEXT);
    return new TableShape("t", columns, types, twoColumnKey ? List.of(1, 2) : List.of(2));
  }

  /** The batch read by the format's tree decoder, or null when it fails it. */
  static Fold reference(TableShape shape, ChangeFormat format, List<String> lines) {
    ChangeFormat.Decoder decoder = format.decoder(shape);
    Fold fold = new Fold(shape);
    try {
      for (String line : lines) {
        decoder.decode(line).forEach(fold::add);
      }
    } catch (FloeException e) {
      return null;
    }
    return fold;
  }

  /**
   * The batch folded by the reference and by a columnar decoder ({@code folded}, null: refused): when the
   * reference fails it, the decoder refused it; when the decoder took it, the two folds are the same.
   * Whether the decoder took it.
   */
  static boolean compare(TableShape shape, ChangeFormat format, List<String> lines, FoldedColumns folded,
      String what) {
    Fold reference = reference(shape, format, lines);
    if (reference == null) {
      assertThat(folded).as(what + ": the reference fails the batch").isNull();
      return false;
    }
    if (folded == null) {
      return false;
    }
    assertSameFold(shape, reference, folded, what);
    return true;
  }

  /** The columnar fold holds every key of the reference's, with the same deletion, marker and cells. */
  static void assertSameFold(TableShape shape, Fold reference, FoldedColumns folded, String what) {
    assertThat(reference.ranges()).as(what).isEmpty();
    assertThat(reference.carries()).as(what).isEmpty();
    assertThat(folded.changes).as(what + ": changes").isEqualTo(reference.changes());
    assertThat(folded.maxPosition).as(what + ": position").isEqualTo(reference.maxPosition());
    assertThat(folded.size).as(what + ": keys").isEqualTo(reference.rows().size());
    Map<Key, Integer> slots = new HashMap<>();
    int[] key = shape.key();
    for (int slot = 0; slot < folded.size; slot++) {
      Object[] values = new Object[key.length];
      for (int k = 0; k < key.length; k++) {
        values[k] = folded.keys[k] instanceof String[] t ? text(shape.keyType(k), t[slot])
            : value(shape.keyType(k), ((long[]) folded.keys[k])[slot]);
      }
      assertThat(slots.put(new Key(values), slot)).as(what + ": a key once").isNull();
    }
    for (Map.Entry<Key, RowState> e : reference.rows().entrySet()) {
      Integer slot = slots.get(e.getKey());
      assertThat(slot).as(what + ": key " + e.getKey()).isNotNull();
      RowState s = e.getValue();
      String k = what + ": " + e.getKey();
      assertThat(folded.deletedAt[slot]).as(k + " deleted").isEqualTo(s.deletedAt());
      assertThat(folded.markerAt[slot]).as(k + " marker").isEqualTo(s.marker() == null ? Long.MIN_VALUE : s.marker().ts());
      for (int i = 0; i < shape.cellCount(); i++) {
        Cell c = s.cell(i);
        assertThat(folded.cellAt[i][slot]).as(k + " cell " + i).isEqualTo(c == null ? Long.MIN_VALUE : c.ts());
        if (c == null) {
          continue;
        }
        assertThat(c.kind()).as(k).isNotEqualTo(Cell.Kind.EXPIRING);
        Object actual = folded.cellNulls[i][slot] ? null : folded.cells[i] instanceof String[] t
            ? text(shape.cellType(i), t[slot]) : value(shape.cellType(i), ((long[]) folded.cells[i])[slot]);
        assertThat(actual).as(k + " cell " + i).isEqualTo(c.value());
      }
    }
  }

  /** A value held as text as the Iceberg value of its type (a uuid is held in its canonical form). */
  private static Object text(org.apache.iceberg.types.Type type, String text) {
    if (type.typeId() == org.apache.iceberg.types.Type.TypeID.DECIMAL) {
      assertThat(new java.math.BigDecimal(text).toPlainString()).as("plain").isEqualTo(text);
      return new java.math.BigDecimal(text);
    }
    if (type.typeId() == org.apache.iceberg.types.Type.TypeID.BINARY) {
      return java.nio.ByteBuffer.wrap(text.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    }
    if (type.typeId() == org.apache.iceberg.types.Type.TypeID.UUID) {
      assertThat(java.util.UUID.fromString(text).toString()).as("canonical").isEqualTo(text);
      return java.util.UUID.fromString(text);
    }
    return text;
  }

  /** A value held in a long as the Iceberg value of its type. */
  private static Object value(org.apache.iceberg.types.Type type, long bits) {
    return switch (type.typeId()) {
      case BOOLEAN -> bits != 0;
      case INTEGER, DATE -> (int) bits;
      case DOUBLE -> Double.longBitsToDouble(bits);
      case FLOAT -> {
        double d = Double.longBitsToDouble(bits);
        assertThat((double) (float) d).as("a float's value").isEqualTo(d);
        yield (float) d;
      }
      default -> bits;
    };
  }

  /**
   * A JSON value for the uuid, date or timestamp column {@code column} ({@code u}, {@code day}, {@code at},
   * {@code ts}) in the forms Debezium writes them and others the tree decoder reads; with {@code odd},
   * sometimes one it fails or reads by a schema's name for it (a timestamp as a number).
   */
  static String temporal(Random r, String column, boolean odd) {
    if (odd && r.nextInt(4) == 0) {
      return switch (column) {
        case "u" -> new String[] {"\"not-a-uuid\"", "42", "\"1-2-3-4-5\"", "\"" + ChangeFormat.UNAVAILABLE + "\""}[
            r.nextInt(4)];
        case "day" -> new String[] {"1.5", "3000000000", "\"2024-13-01\"", "\"2024-02-29\"", "19000.0"}[r.nextInt(5)];
        default -> new String[] {"1700000000000000", "\"yesterday\"", "\"2024-01-02T03:04:05+0530\"", "true"}[
            r.nextInt(4)];
      };
    }
    return switch (column) {
      case "u" -> {
        String u = new java.util.UUID(r.nextLong(), r.nextLong()).toString();
        yield "\"" + (r.nextInt(4) == 0 ? u.toUpperCase(java.util.Locale.ROOT) : u) + "\"";
      }
      case "day" -> r.nextBoolean() ? String.valueOf(r.nextInt(60_000) - 20_000)
          : "\"" + java.time.LocalDate.ofEpochDay(r.nextInt(60_000) - 20_000) + "\"";
      case "at" -> "\"" + java.time.Instant.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000) * 1000L)
          .atOffset(java.time.ZoneOffset.ofHours(r.nextInt(3) - 1)).toString() + "\"";
      default -> "\"" + java.time.LocalDateTime.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1000) * 1_000_000,
          java.time.ZoneOffset.UTC).toString().replace(r.nextBoolean() ? "T" : "\u0000", " ") + "\"";
    };
  }

  /**
   * A JSON value for the smallint, real, time, bytea or json column {@code column} ({@code s}, {@code r},
   * {@code tm}, {@code b}, {@code j}) in the forms Debezium writes them and others the tree decoder reads;
   * with {@code odd}, sometimes one it fails or reads differently (out of range, not base64, an object).
   */
  static String more(Random r, String column, boolean odd) {
    if (odd && r.nextInt(4) == 0) {
      return switch (column) {
        case "s" -> new String[] {"32768", "-32769", "\"12\"", "1.5"}[r.nextInt(4)];
        case "r" -> new String[] {"\"NaN\"", "1e39", "\"2.5\"", "true"}[r.nextInt(4)];
        case "tm" -> new String[] {"\"25:00:00\"", "1.5", "\"noon\"", "86400000000"}[r.nextInt(4)];
        case "b" -> new String[] {"\"not base64!\"", "42", "\"" + ChangeFormat.UNAVAILABLE_BYTES + "\"",
            "\"" + ChangeFormat.UNAVAILABLE + "\""}[r.nextInt(4)];
        default -> new String[] {"{\"a\": 1}", "[1, 2]", "12", "true"}[r.nextInt(4)];
      };
    }
    return switch (column) {
      case "s" -> String.valueOf(r.nextInt(65_536) - 32_768);
      case "r" -> new String[] {"1.5", "-0", "2e3", "0.1", "3.4028235E38", "1e-45", "7", "123456789"}[r.nextInt(8)];
      // a number of microseconds, or of milliseconds where an envelope's schema says io.debezium.time.Time: in
      // a day either way
      case "tm" -> r.nextBoolean() ? String.valueOf(r.nextLong(86_400_000L))
          : "\"" + java.time.LocalTime.ofNanoOfDay(r.nextLong(86_400_000_000L) * 1000) + "\"";
      case "b" -> {
        byte[] bytes = new byte[r.nextInt(6)];
        r.nextBytes(bytes);
        yield "\"" + java.util.Base64.getEncoder().encodeToString(bytes) + "\"";
      }
      default -> new String[] {"\"{\\\"a\\\": 1}\"", "\"[1, 2]\"", "\"\\\"x\\\"\"", "\"null\""}[r.nextInt(4)];
    };
  }

  /**
   * A JSON value for the numeric(12,3) column: in an envelope (whose schema gives it scale 2) the unscaled
   * value's bytes in base64, as Kafka Connect writes a decimal; otherwise text or a number; with
   * {@code odd}, sometimes one the tree decoder fails or reads only through a double.
   */
  static String decimal(Random r, boolean enveloped, boolean odd) {
    if (odd && r.nextInt(3) == 0) {
      return new String[] {"1e400", "\"abc\"", "123456789012345", "\"12345678901.5\"",
          "0.1000000000000000055511151231257827", "\"AAAA\"", "{\"scale\": 1, \"value\": \"AQ==\"}", "true",
          "-0.0005", "0.0005", "{\"scale\": 1}", "{\"value\": \"AQ==\", \"scale\": \"2\"}",
          "{\"scale\": 1, \"value\": \"!!\"}", "{\"scale\": 1, \"value\": \"\"}"}[r.nextInt(14)];
    }
    long unscaled = r.nextLong() % 100_000_000_000L;
    if (enveloped) { // at scale 2, within the column's 9 digits before the point
      return "\"" + java.util.Base64.getEncoder().encodeToString(java.math.BigInteger.valueOf(unscaled / 10).toByteArray())
          + "\"";
    }
    if (r.nextInt(6) == 0) { // Debezium's VariableScaleDecimal (a numeric without a scale), at any scale
      int scale = r.nextInt(8);
      return "{\"scale\": " + scale + ", \"value\": \"" + java.util.Base64.getEncoder().encodeToString(
          java.math.BigInteger.valueOf(unscaled / 100).toByteArray()) + "\"}";
    }
    return switch (r.nextInt(4)) {
      case 0 -> "\"" + java.math.BigDecimal.valueOf(unscaled, 3).toPlainString() + "\"";
      case 1 -> " \"" + java.math.BigDecimal.valueOf(unscaled % 1_000_000, 2) + " \"";
      case 2 -> String.valueOf(unscaled % 1_000_000);
      default -> java.math.BigDecimal.valueOf(unscaled % 1_000_000_000, 4).toPlainString();
    };
  }

  static Map<String, String> with(Map<String, String> m, String k, String v) {
    Map<String, String> out = new LinkedHashMap<>(m);
    out.put(k, v);
    return out;
  }

  static Map<String, String> without(Map<String, String> m, String k) {
    Map<String, String> out = new LinkedHashMap<>(m);
    out.remove(k);
    return out;
  }

  /** A JSON object of these members, white space between its tokens, sometimes in another order. */
  static String object(Random r, Map<String, String> fields) {
    List<String> parts = new ArrayList<>();
    fields.forEach((k, v) -> parts.add("\"" + k + "\"" + ws(r) + ":" + ws(r) + v));
    if (r.nextInt(3) == 0) {
      Collections.shuffle(parts, r);
    }
    return "{" + ws(r) + String.join("," + ws(r), parts) + ws(r) + "}";
  }

  /** White space JSON allows between tokens, or none. */
  static String ws(Random r) {
    return switch (r.nextInt(8)) {
      case 0 -> " ";
      case 1 -> "\t";
      case 2 -> "  \r ";
      default -> "";
    };
  }

  /**
   * A value for a char(4) or varchar(6) column: one that fits, one with trailing spaces (cut or padded
   * away), or with {@code odd} sometimes one too long.
   */
  static String shortText(Random r, boolean odd) {
    String[] fits = {"\"ab\"", "\"abcd\"", "\"ab  \"", "\"abcd      \"", "\"a b\"", "\"é😀\"", "\"\""};
    return odd && r.nextInt(4) == 0 ? "\"abcdefg\"" : fits[r.nextInt(fits.length)];
  }

  /** The line with one character deleted, doubled or replaced by a JSON-significant one. */
  static String broken(Random r, String line) {
    if (line.isEmpty()) {
      return "{";
    }
    int i = r.nextInt(line.length());
    String significant = "{}[]\",:\\0-e.tn \u0001";
    String with = String.valueOf(significant.charAt(r.nextInt(significant.length())));
    return switch (r.nextInt(3)) {
      case 0 -> line.substring(0, i) + line.substring(i + 1);
      case 1 -> line.substring(0, i) + line.charAt(i) + line.substring(i);
      default -> line.substring(0, i) + with + line.substring(i + 1);
    };
  }
}
