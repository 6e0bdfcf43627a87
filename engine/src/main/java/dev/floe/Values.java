package dev.floe;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/** Text forms of values, as PostgreSQL's output functions print them (DateStyle ISO). */
public final class Values {
  private static final DateTimeFormatter TIME = new DateTimeFormatterBuilder()
      .appendPattern("HH:mm:ss").optionalStart().appendFraction(ChronoField.MICRO_OF_SECOND, 0, 6, true)
      .toFormatter();
  private static final DateTimeFormatter TIMESTAMP = new DateTimeFormatterBuilder()
      .appendPattern("yyyy-MM-dd HH:mm:ss").optionalStart().appendFraction(ChronoField.MICRO_OF_SECOND, 0, 6, true)
      .toFormatter();

  private Values() {}

  public static String toText(Object v) {
    if (v == null) {
      return null;
    }
    if (v instanceof Boolean b) {
      return b ? "t" : "f";
    }
    if (v instanceof BigDecimal d) {
      return d.toPlainString();
    }
    if (v instanceof Double d) {
      return doubleText(d);
    }
    if (v instanceof Float f) {
      return floatText(f);
    }
    if (v instanceof LocalTime t) {
      return TIME.format(t);
    }
    if (v instanceof LocalDateTime t) {
      return TIMESTAMP.format(t);
    }
    if (v instanceof OffsetDateTime t) {
      OffsetDateTime utc = t.withOffsetSameInstant(ZoneOffset.UTC);
      return TIMESTAMP.format(utc.toLocalDateTime()) + "+00";
    }
    if (v instanceof org.apache.arrow.vector.PeriodDuration pd) {
      return interval(pd.getPeriod(), pd.getDuration());
    }
    if (v instanceof byte[] bytes) {
      return "\\x" + HexFormat.of().formatHex(bytes);
    }
    if (v instanceof List<?> list) {
      StringBuilder b = new StringBuilder("{");
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          b.append(',');
        }
        Object e = list.get(i);
        b.append(e == null ? "NULL" : toText(e));
      }
      return b.append('}').toString();
    }
    if (v instanceof Map<?, ?> map) {
      StringBuilder b = new StringBuilder("{");
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          b.append(", ");
        }
        first = false;
        b.append(toText(e.getKey())).append('=').append(e.getValue() == null ? "NULL" : toText(e.getValue()));
      }
      return b.append('}').toString();
    }
    return v.toString();
  }

  /** PostgreSQL's interval output: {@code 1 year 2 mons 3 days 04:05:06.5}. */
  static String interval(java.time.Period period, java.time.Duration duration) {
    StringBuilder b = new StringBuilder();
    long months = period.toTotalMonths();
    long years = months / 12;
    long mons = months % 12;
    unit(b, years, "year", "years");
    unit(b, mons, "mon", "mons");
    unit(b, period.getDays(), "day", "days");
    long micros = duration.toNanos() / 1000;
    if (micros != 0 || b.length() == 0) {
      if (b.length() > 0) {
        b.append(' ');
      }
      if (micros < 0) {
        b.append('-');
        micros = -micros;
      }
      long seconds = micros / 1_000_000;
      b.append(String.format("%02d:%02d:%02d", seconds / 3600, (seconds / 60) % 60, seconds % 60));
      long fraction = micros % 1_000_000;
      if (fraction != 0) {
        b.append('.').append(String.format("%06d", fraction).replaceAll("0+$", ""));
      }
    }
    return b.toString();
  }

  private static void unit(StringBuilder b, long n, String one, String many) {
    if (n != 0) {
      if (b.length() > 0) {
        b.append(' ');
      }
      b.append(n).append(' ').append(n == 1 || n == -1 ? one : many);
    }
  }

  private static String doubleText(double d) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "Infinity" : "-Infinity";
    }
    if (d == Math.rint(d) && Math.abs(d) < 1e15) {
      return Long.toString((long) d);
    }
    String s = Double.toString(d);
    return s.contains("E") ? s.replace("E", "e+").replace("e+-", "e-") : s;
  }

  private static String floatText(float f) {
    if (Float.isNaN(f)) {
      return "NaN";
    }
    if (Float.isInfinite(f)) {
      return f > 0 ? "Infinity" : "-Infinity";
    }
    if (f == Math.rint(f) && Math.abs(f) < 1e6) {
      return Long.toString((long) f);
    }
    String s = Float.toString(f);
    return s.contains("E") ? s.replace("E", "e+").replace("e+-", "e-") : s;
  }
}
