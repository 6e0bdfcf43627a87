package dev.floe.testing;

import dev.floe.Result;
import dev.floe.Row;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.data.Record;

/**
 * Canonical, type-tagged text of values so that rows read by Floe ({@link Row} values) and rows read by
 * Iceberg's generic reader ({@link Record} values) compare exactly: an int column must come back as an
 * Integer on both sides, a decimal with its scale, a float by its bits (all NaNs alike), a timestamptz as
 * an instant, binary as hex.
 */
public final class Canonical {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS");
  private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS");

  private Canonical() {}

  public static String value(Object v) {
    if (v == null) {
      return "NULL";
    }
    if (v instanceof Boolean b) {
      return "bool:" + b;
    }
    if (v instanceof Short s) {
      return "short:" + s;
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
    if (v instanceof UUID u) {
      return "uuid:" + u;
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
    return v.getClass().getSimpleName() + ":" + v;
  }

  /** One Iceberg generic record as a canonical row. */
  public static List<String> row(Record r) {
    List<String> out = new ArrayList<>(r.size());
    for (int i = 0; i < r.size(); i++) {
      out.add(value(r.get(i)));
    }
    return out;
  }

  /** One Floe row as a canonical row. */
  public static List<String> row(Row r) {
    List<String> out = new ArrayList<>(r.size());
    for (int i = 0; i < r.size(); i++) {
      out.add(value(r.get(i)));
    }
    return out;
  }

  public static List<List<String>> records(Iterable<Record> records) {
    List<List<String>> out = new ArrayList<>();
    for (Record r : records) {
      out.add(row(r));
    }
    return out;
  }

  /** Every row of a Floe result (closing it). */
  public static List<List<String>> rows(Result result) {
    try (result) {
      List<List<String>> out = new ArrayList<>();
      for (Row r : result) {
        out.add(row(r));
      }
      return out;
    }
  }

  /**
   * The difference between two multisets of rows, or null if they are equal: rows only on one side, with
   * their multiplicity, at most {@code limit} of each.
   */
  public static String diff(List<List<String>> expected, List<List<String>> actual, int limit) {
    Map<List<String>, Integer> counts = new HashMap<>();
    for (List<String> r : expected) {
      counts.merge(r, 1, Integer::sum);
    }
    for (List<String> r : actual) {
      counts.merge(r, -1, Integer::sum);
    }
    List<String> missing = new ArrayList<>();
    List<String> extra = new ArrayList<>();
    for (Map.Entry<List<String>, Integer> e : counts.entrySet()) {
      if (e.getValue() > 0) {
        missing.add(e.getValue() + "x " + e.getKey());
      } else if (e.getValue() < 0) {
        extra.add(-e.getValue() + "x " + e.getKey());
      }
    }
    if (missing.isEmpty() && extra.isEmpty()) {
      return null;
    }
    missing.sort(null);
    extra.sort(null);
    StringBuilder b = new StringBuilder();
    b.append("expected ").append(expected.size()).append(" rows, got ").append(actual.size()).append('\n');
    b.append("  missing (expected, not returned): ").append(missing.size()).append('\n');
    missing.stream().limit(limit).forEach(s -> b.append("    ").append(s).append('\n'));
    b.append("  unexpected (returned, not expected): ").append(extra.size()).append('\n');
    extra.stream().limit(limit).forEach(s -> b.append("    ").append(s).append('\n'));
    return b.toString();
  }
}
