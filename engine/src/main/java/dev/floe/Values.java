package dev.floe;

import dev.floe.types.PgDateTime;
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

/**
 * Text forms of values, as PostgreSQL's output functions print them (DateStyle ISO; dates and timestamps
 * by {@link PgDateTime}: {@code 0044-03-15 BC}, {@code infinity}).
 */
public final class Values {
  private static final DateTimeFormatter TIME = new DateTimeFormatterBuilder()
      .appendPattern("HH:mm:ss").optionalStart().appendFraction(ChronoField.MICRO_OF_SECOND, 0, 6, true)
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
    if (v instanceof java.time.LocalDate d) {
      return PgDateTime.date(d);
    }
    if (v instanceof LocalDateTime t) {
      return PgDateTime.timestamp(t);
    }
    if (v instanceof OffsetDateTime t) {
      return PgDateTime.timestamptz(t, ZoneOffset.UTC);
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
        b.append(e == null ? "NULL" : e instanceof List<?> ? toText(e) : arrayElement(toText(e)));
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

  /** An array element as PostgreSQL's array output writes it: quoted when it must be. */
  private static String arrayElement(String text) {
    boolean quote = text.isEmpty() || text.equalsIgnoreCase("NULL");
    for (int i = 0; i < text.length() && !quote; i++) {
      char c = text.charAt(i);
      quote = c == '{' || c == '}' || c == ',' || c == '"' || c == '\\' || Character.isWhitespace(c);
    }
    if (!quote) {
      return text;
    }
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
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
    if (d == 0) {
      return 1 / d < 0 ? "-0" : "0";
    }
    return floating(shortest(new BigDecimal(Double.toString(d)), v -> Double.parseDouble(v) == d), 15);
  }

  private static String floatText(float f) {
    if (Float.isNaN(f)) {
      return "NaN";
    }
    if (Float.isInfinite(f)) {
      return f > 0 ? "Infinity" : "-Infinity";
    }
    if (f == 0) {
      return 1 / f < 0 ? "-0" : "0";
    }
    return floating(shortest(new BigDecimal(Float.toString(f)), v -> Float.parseFloat(v) == f), 6);
  }

  /** The fewest significant digits that still read back as the same value. */
  private static BigDecimal shortest(BigDecimal value, java.util.function.Predicate<String> roundTrips) {
    BigDecimal best = value.stripTrailingZeros();
    for (int p = best.precision() - 1; p >= 1; p--) {
      BigDecimal shorter = best.round(new java.math.MathContext(p, java.math.RoundingMode.HALF_EVEN));
      if (!roundTrips.test(shorter.toString())) {
        break;
      }
      best = shorter.stripTrailingZeros();
    }
    return best;
  }

  /**
   * PostgreSQL's float output: plain notation for decimal exponents from -4 up to (not including)
   * {@code digits}, else {@code d.ddde+XX} with at least two exponent digits.
   */
  private static String floating(BigDecimal v, int digits) {
    if (v.signum() == 0) {
      return v.toString().startsWith("-") ? "-0" : "0";
    }
    int exponent = v.precision() - v.scale() - 1;
    if (exponent < -4 || exponent >= digits) {
      String unscaled = v.unscaledValue().abs().toString();
      StringBuilder b = new StringBuilder(v.signum() < 0 ? "-" : "").append(unscaled.charAt(0));
      if (unscaled.length() > 1) {
        b.append('.').append(unscaled, 1, unscaled.length());
      }
      String e = Integer.toString(Math.abs(exponent));
      return b.append('e').append(exponent < 0 ? '-' : '+').append(e.length() < 2 ? "0" + e : e).toString();
    }
    return v.toPlainString();
  }
}
