package dev.floe.types;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Dates and timestamps as PostgreSQL writes and reads them (DateStyle ISO): years before the common era
 * with a {@code BC} suffix ({@code 0044-03-15 BC}, {@code 0044-03-15 10:00:00 BC}), years past 9999 as
 * plain digits, DuckDB's infinities as {@code infinity} and {@code -infinity}; and the range of values
 * Floe stores.
 *
 * <p>Input ({@link #duckdbText}) reads PostgreSQL's ISO forms, the era included, checks them as
 * PostgreSQL does (there is no year 0; a date is between 4714-11-24 BC and 5874897-12-31), and gives
 * text DuckDB reads as the same value ({@code 0044-03-15 (BC) 10:00:00}); text in other forms is left
 * to DuckDB.
 */
public final class PgDateTime {
  /** PostgreSQL's first date, 4714-11-24 BC (Julian day 0), in days since 1970-01-01. */
  public static final int MIN_DAY = -2_440_588;
  /** PostgreSQL's last date, 5874897-12-31, in days since 1970-01-01. */
  public static final int MAX_DAY = 2_145_042_905;
  /** PostgreSQL's first timestamp, 4714-11-24 00:00:00 BC, in microseconds since 1970. */
  public static final long MIN_MICROS = MIN_DAY * 86_400_000_000L;
  /**
   * The last timestamp Floe stores, 294247-01-10 04:00:54.775806 (UTC): Iceberg (and DuckDB) count
   * microseconds since 1970 in 64 bits, and DuckDB keeps the largest count for infinity. PostgreSQL's
   * timestamps go on to 294276-12-31.
   */
  public static final long MAX_MICROS = Long.MAX_VALUE - 1;

  /** Why a date is not stored: the detail of {@link #notStored}. */
  public static final String DATE_RANGE = "Floe stores dates from 4714-11-24 BC to 5874897-12-31, and no infinity: "
      + "Iceberg has no infinite dates.";
  /** Why a timestamp is not stored: the detail of {@link #notStored}. */
  public static final String TIMESTAMP_RANGE = "Floe stores timestamps from 4714-11-24 00:00:00 BC to "
      + "294247-01-10 04:00:54.775806 (UTC), and no infinity: Iceberg has no infinite timestamps.";

  /** Whether a Floe table stores a date of {@code day} days since 1970-01-01 (PostgreSQL's range, no infinity). */
  public static boolean storableDay(long day) {
    return day >= MIN_DAY && day <= MAX_DAY;
  }

  /** Whether a Floe table stores a timestamp of {@code micros} since 1970 (see {@link #MAX_MICROS}). */
  public static boolean storableMicros(long micros) {
    return micros >= MIN_MICROS && micros <= MAX_MICROS;
  }

  /** 22008 for a date ({@code date}) or timestamp that column {@code column} cannot store. */
  public static FloeException notStored(boolean date, String column) {
    return new FloeException(SqlState.DATETIME_FIELD_OVERFLOW, (date ? "date" : "timestamp")
        + " out of range for column \"" + column + "\"", date ? DATE_RANGE : TIMESTAMP_RANGE, null, 0, null);
  }

  /** The type a text is read as. */
  public enum Kind {
    DATE("date"), TIMESTAMP("timestamp"), TIMESTAMPTZ("timestamp with time zone");

    private final String pgName;

    Kind(String pgName) {
      this.pgName = pgName;
    }
  }

  private static final Pattern DATE = Pattern.compile("(\\d{4,})-(\\d{1,2})-(\\d{1,2})(?:[Tt](.*))?");
  private static final Pattern TIME = Pattern.compile(
      "(\\d{1,2}):(\\d{2})(?::(\\d{2})(?:\\.(\\d*))?)?((?:[+-]|[Zz]$).*)?");
  private static final Pattern OFFSET = Pattern.compile("([+-])(\\d{1,2})(?::?(\\d{2}))?(?::?(\\d{2}))?");

  private PgDateTime() {}

  // ------------------------------------------------------------------ output

  /** A date as PostgreSQL prints it. */
  public static String date(LocalDate d) {
    long day = d.toEpochDay();
    if (day >= Integer.MAX_VALUE) {
      return "infinity"; // DuckDB's infinity is the largest day it counts; -infinity its negation
    }
    if (day <= -Integer.MAX_VALUE) {
      return "-infinity";
    }
    StringBuilder b = appendDate(new StringBuilder(), d);
    return d.getYear() <= 0 ? b.append(" BC").toString() : b.toString();
  }

  /** A timestamp as PostgreSQL prints it. */
  public static String timestamp(LocalDateTime t) {
    String infinite = infinity(micros(t));
    if (infinite != null) {
      return infinite;
    }
    StringBuilder b = appendTime(appendDate(new StringBuilder(), t.toLocalDate()).append(' '), t);
    return t.getYear() <= 0 ? b.append(" BC").toString() : b.toString();
  }

  /** A timestamp with time zone as PostgreSQL prints it in time zone {@code zone}. */
  public static String timestamptz(OffsetDateTime t, ZoneId zone) {
    String infinite = infinity(t.toEpochSecond() * 1_000_000L + t.getNano() / 1000);
    if (infinite != null) {
      return infinite;
    }
    ZonedDateTime local = t.atZoneSameInstant(zone);
    StringBuilder b = appendTime(appendDate(new StringBuilder(), local.toLocalDate()).append(' '),
        local.toLocalDateTime()).append(offset(local.getOffset()));
    return local.getYear() <= 0 ? b.append(" BC").toString() : b.toString();
  }

  /**
   * Microseconds since 1970 of a timestamp. The multiplication may pass Long's range on the way to an
   * in-range result (DuckDB's -infinity); two's complement arithmetic still ends at the right value.
   */
  public static long micros(LocalDateTime t) {
    return t.toLocalDate().toEpochDay() * 86_400_000_000L + t.toLocalTime().toNanoOfDay() / 1000;
  }

  /** +1 for DuckDB's infinite timestamp, -1 for its -infinity, 0 for a finite one. */
  public static int infinite(long micros) {
    return micros == Long.MAX_VALUE ? 1 : micros <= -Long.MAX_VALUE ? -1 : 0;
  }

  /** +1 for DuckDB's infinite date, -1 for its -infinity, 0 for a finite one. */
  public static int infinite(LocalDate d) {
    long day = d.toEpochDay();
    return day >= Integer.MAX_VALUE ? 1 : day <= -Integer.MAX_VALUE ? -1 : 0;
  }

  private static String infinity(long micros) {
    int sign = infinite(micros);
    return sign > 0 ? "infinity" : sign < 0 ? "-infinity" : null;
  }

  /** PostgreSQL's offset suffix: {@code +02}, {@code -03:30}, {@code +00:09:21}. */
  public static String offset(ZoneOffset o) {
    int total = o.getTotalSeconds();
    char sign = total < 0 ? '-' : '+';
    total = Math.abs(total);
    StringBuilder b = new StringBuilder().append(sign);
    two(b, total / 3600);
    if (total % 3600 != 0) {
      two(b.append(':'), (total / 60) % 60);
    }
    if (total % 60 != 0) {
      two(b.append(':'), total % 60);
    }
    return b.toString();
  }

  /** {@code YYYY-MM-DD}, the year of its era (the caller adds BC), at least four digits. */
  private static StringBuilder appendDate(StringBuilder b, LocalDate d) {
    int year = d.getYear() <= 0 ? 1 - d.getYear() : d.getYear();
    String y = Integer.toString(year);
    b.append("0".repeat(Math.max(0, 4 - y.length()))).append(y).append('-');
    two(b, d.getMonthValue()).append('-');
    return two(b, d.getDayOfMonth());
  }

  /** {@code HH:MM:SS}, and the fraction of a second without trailing zeros. */
  private static StringBuilder appendTime(StringBuilder b, LocalDateTime t) {
    two(b, t.getHour()).append(':');
    two(b, t.getMinute()).append(':');
    two(b, t.getSecond());
    int micros = t.getNano() / 1000;
    if (micros != 0) {
      String f = Integer.toString(1_000_000 + micros).substring(1);
      int end = f.length();
      while (f.charAt(end - 1) == '0') {
        end--;
      }
      b.append('.').append(f, 0, end);
    }
    return b;
  }

  private static StringBuilder two(StringBuilder b, int n) {
    return b.append(n < 10 ? "0" : "").append(n);
  }

  // ------------------------------------------------------------------ input

  /**
   * Text DuckDB reads as the value PostgreSQL reads {@code text} as, of type {@code kind}; empty when the
   * text is in none of the ISO forms this reads (DuckDB's reading of it stands). A time zone is kept
   * for {@code timestamptz} only (PostgreSQL ignores it for the others), and {@code infinity} is
   * passed on as it is.
   *
   * @throws FloeException 22008 as PostgreSQL: a field out of range (year 0, February 30), or a value
   *     outside PostgreSQL's range or, for timestamps, outside what Floe can hold
   */
  public static Optional<String> duckdbText(String text, Kind kind) {
    String s = text.strip();
    String lower = s.toLowerCase(Locale.ROOT);
    if (lower.equals("infinity") || lower.equals("+infinity") || lower.equals("-infinity")) {
      return Optional.of(lower.startsWith("-") ? "-infinity" : "infinity");
    }
    String[] words = s.split("\\s+");
    Matcher date = DATE.matcher(words[0]);
    if (!date.matches()) {
      return Optional.empty();
    }
    String timeText = date.group(4);
    Boolean bc = null;
    ZoneOffset zone = null;
    for (int w = 1; w < words.length; w++) {
      String word = words[w].toLowerCase(Locale.ROOT);
      if ((word.equals("bc") || word.equals("ad")) && bc == null) {
        bc = word.equals("bc");
      } else if (timeText == null && zone == null && TIME.matcher(words[w]).matches()) {
        timeText = words[w];
      } else if (zone == null && (zone = zone(words[w])) != null) {
        continue;
      } else {
        return Optional.empty();
      }
    }
    int hour = 0;
    int minute = 0;
    int second = 0;
    long micros = 0;
    if (timeText != null) {
      Matcher time = TIME.matcher(timeText);
      if (!time.matches()) {
        return Optional.empty();
      }
      if (time.group(5) != null) {
        if (zone != null || (zone = zone(time.group(5))) == null) {
          return Optional.empty();
        }
      }
      hour = Integer.parseInt(time.group(1));
      minute = Integer.parseInt(time.group(2));
      second = time.group(3) == null ? 0 : Integer.parseInt(time.group(3));
      String fraction = time.group(4);
      if (fraction != null && !fraction.isEmpty()) {
        // PostgreSQL rounds to microseconds, half to even
        micros = new BigDecimal("0." + fraction).movePointRight(6).setScale(0, RoundingMode.HALF_EVEN).longValue();
      }
      if (minute > 59 || second > 60 || hour > 24 || hour == 24 && (minute > 0 || second > 0 || micros > 0)) {
        throw fieldOutOfRange(text);
      }
    }
    LocalDate day;
    try {
      int year = Integer.parseInt(date.group(1));
      if (year == 0) {
        throw fieldOutOfRange(text); // PostgreSQL has no year 0: 1 BC is followed by 1 AD
      }
      day = LocalDate.of(Boolean.TRUE.equals(bc) ? 1 - year : year, Integer.parseInt(date.group(2)),
          Integer.parseInt(date.group(3)));
    } catch (NumberFormatException e) {
      throw outOfRange(kind, text);
    } catch (DateTimeException e) {
      throw date.group(1).length() > 9 ? outOfRange(kind, text) : fieldOutOfRange(text);
    }
    if (kind == Kind.DATE) {
      // a date's input may have a time and a zone, which it ignores
      if (day.toEpochDay() < MIN_DAY || day.toEpochDay() > MAX_DAY) {
        throw outOfRange(kind, text);
      }
      return Optional.of(duckdbDate(day));
    }
    LocalDateTime local = day.atStartOfDay().plusHours(hour).plusMinutes(minute).plusSeconds(second)
        .plusNanos(micros * 1000);
    long utc;
    try {
      utc = Math.subtractExact(Math.multiplyExact(local.toLocalDate().toEpochDay(), 86_400_000_000L)
          + local.toLocalTime().toNanoOfDay() / 1000, kind == Kind.TIMESTAMPTZ && zone != null
          ? zone.getTotalSeconds() * 1_000_000L : 0);
    } catch (ArithmeticException e) {
      throw outOfRange(kind, text);
    }
    if (utc < MIN_MICROS || utc > MAX_MICROS) {
      throw outOfRange(kind, text);
    }
    StringBuilder b = new StringBuilder(duckdbDate(local.toLocalDate())).append(' ');
    appendTime(b, local);
    if (kind == Kind.TIMESTAMPTZ && zone != null) {
      int total = zone.getTotalSeconds();
      b.append(total < 0 ? '-' : '+');
      total = Math.abs(total);
      two(b, total / 3600).append(':');
      two(b, total / 60 % 60).append(':');
      two(b, total % 60);
    }
    return Optional.of(b.toString());
  }

  /** A date as DuckDB reads it: {@code 0044-03-15 (BC)}. */
  private static String duckdbDate(LocalDate d) {
    StringBuilder b = appendDate(new StringBuilder(), d);
    return d.getYear() <= 0 ? b.append(" (BC)").toString() : b.toString();
  }

  /** A zone PostgreSQL's ISO input takes after the time: an offset, Z, UTC or GMT; null for others. */
  private static ZoneOffset zone(String text) {
    String lower = text.toLowerCase(Locale.ROOT);
    if (lower.equals("z") || lower.equals("utc") || lower.equals("gmt")) {
      return ZoneOffset.UTC;
    }
    Matcher m = OFFSET.matcher(text);
    if (!m.matches()) {
      return null;
    }
    int hours = Integer.parseInt(m.group(2));
    int minutes = m.group(3) == null ? 0 : Integer.parseInt(m.group(3));
    int seconds = m.group(4) == null ? 0 : Integer.parseInt(m.group(4));
    if (hours > 15 || minutes > 59 || seconds > 59) {
      return null; // DuckDB reports it
    }
    int total = hours * 3600 + minutes * 60 + seconds;
    return ZoneOffset.ofTotalSeconds(m.group(1).equals("-") ? -total : total);
  }

  private static FloeException fieldOutOfRange(String text) {
    return new FloeException(SqlState.DATETIME_FIELD_OVERFLOW, "date/time field value out of range: \"" + text + "\"");
  }

  private static FloeException outOfRange(Kind kind, String text) {
    return new FloeException(SqlState.DATETIME_FIELD_OVERFLOW,
        (kind == Kind.DATE ? "date" : "timestamp") + " out of range: \"" + text + "\"");
  }

  /** PostgreSQL's name of the type. */
  public static String pgName(Kind kind) {
    return kind.pgName;
  }
}
