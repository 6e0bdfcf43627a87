package dev.floe.spark;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Type-tagged text of a value, so that a row Floe returns and a row Spark returns compare exactly. Where the two
 * represent the same Iceberg value with different Java types, both map to one form:
 *
 * <ul>
 *   <li>Floe's smallint (Short) and integer (Integer) are both Iceberg int; Spark reads Iceberg int as Integer.
 *   <li>Iceberg uuid: Floe returns {@link UUID}, Spark a String (Spark has no UUID type).
 *   <li>Iceberg timestamptz: Floe returns an OffsetDateTime in UTC, Spark (java8API) an Instant.
 * </ul>
 *
 * Everything else keeps its own tag: a decimal keeps its scale, a float compares by its bits (all NaNs alike).
 */
final class Canonical {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS");
  private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS");

  private Canonical() {}

  static String value(Object v) {
    if (v == null) {
      return "NULL";
    }
    if (v instanceof Boolean b) {
      return "bool:" + b;
    }
    if (v instanceof Short s) {
      return "int:" + s;
    }
    if (v instanceof Integer i) {
      return "int:" + i;
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
    if (v instanceof UUID u) {
      return "text:" + u;
    }
    if (v instanceof CharSequence s) {
      return "text:" + s;
    }
    if (v instanceof LocalDate d) {
      return "date:" + d;
    }
    if (v instanceof LocalTime t) {
      return "time:" + TIME.format(t);
    }
    if (v instanceof LocalDateTime t) {
      return "timestamp:" + TS.format(t);
    }
    if (v instanceof OffsetDateTime t) {
      return "timestamptz:" + t.toInstant();
    }
    if (v instanceof Instant t) {
      return "timestamptz:" + t;
    }
    if (v instanceof ByteBuffer bb) {
      ByteBuffer dup = bb.duplicate();
      byte[] bytes = new byte[dup.remaining()];
      dup.get(bytes);
      return "bytes:" + HexFormat.of().formatHex(bytes);
    }
    if (v instanceof byte[] bytes) {
      return "bytes:" + HexFormat.of().formatHex(bytes);
    }
    if (v instanceof org.apache.spark.sql.Row r) {
      // A Spark struct; Floe returns a struct as a Map from field name to value.
      Map<Object, Object> fields = new LinkedHashMap<>();
      for (int i = 0; i < r.size(); i++) {
        fields.put(r.schema().fieldNames()[i], r.get(i));
      }
      return entries(fields);
    }
    if (v instanceof Map<?, ?> m) {
      return entries(m);
    }
    if (v instanceof scala.collection.Map<?, ?> m) {
      return entries(scala.jdk.javaapi.CollectionConverters.asJava(m));
    }
    if (v instanceof List<?> l) {
      return elements(l);
    }
    if (v instanceof scala.collection.Seq<?> l) {
      return elements(scala.jdk.javaapi.CollectionConverters.asJava(l));
    }
    return v.getClass().getName() + ":" + v;
  }

  /** A struct or map: entries sorted by key (a map has no order; a struct's fields are named). */
  private static String entries(Map<?, ?> m) {
    TreeMap<String, String> sorted = new TreeMap<>();
    m.forEach((k, val) -> sorted.put(k instanceof String s ? s : value(k), value(val)));
    return "{" + String.join(", ", sorted.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList()) + "}";
  }

  private static String elements(List<?> l) {
    return "[" + String.join(", ", l.stream().map(Canonical::value).toList()) + "]";
  }

  /** Fails with the differing rows unless both lists are equal, in order. */
  static void assertSame(String what, List<List<String>> expected, List<List<String>> actual) {
    String diff = diff(expected, actual);
    if (diff != null) {
      throw new AssertionError(what + ": " + diff);
    }
  }

  /** The first differences between two row lists, or null if they are equal. */
  static String diff(List<List<String>> expected, List<List<String>> actual) {
    if (expected.equals(actual)) {
      return null;
    }
    StringBuilder b = new StringBuilder();
    b.append("expected ").append(expected.size()).append(" rows, got ").append(actual.size()).append('\n');
    int shown = 0;
    for (int i = 0; i < Math.max(expected.size(), actual.size()) && shown < 10; i++) {
      List<String> e = i < expected.size() ? expected.get(i) : null;
      List<String> a = i < actual.size() ? actual.get(i) : null;
      if (e == null || !e.equals(a)) {
        b.append("  row ").append(i).append(":\n    expected ").append(e).append("\n    actual   ").append(a)
            .append('\n');
        if (e != null && a != null && e.size() == a.size()) {
          List<String> cols = new ArrayList<>();
          for (int c = 0; c < e.size(); c++) {
            if (!e.get(c).equals(a.get(c))) {
              cols.add("#" + c + ": " + e.get(c) + " vs " + a.get(c));
            }
          }
          b.append("    differing columns ").append(cols).append('\n');
        }
        shown++;
      }
    }
    return b.toString();
  }
}
