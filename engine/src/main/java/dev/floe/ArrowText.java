package dev.floe;

import dev.floe.exec.ArrowValues;
import dev.floe.types.PgDateTime;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneRules;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;

/**
 * Values of Arrow result vectors in PostgreSQL's text and binary formats, written straight into an
 * {@link OutBuffer}: integers, booleans, text, numerics of up to 18 digits, dates, times and timestamps
 * (years 1 to 9999) are encoded from the vectors' buffers without a Java object per value; every other
 * value goes through {@link ArrowValues} and {@link PgValues}, and the bytes are the same either way
 * ({@code ArrowTextTest} compares the two on every type's edges).
 *
 * <p>An {@link Encoder} is made per column and per batch (it holds the vector); callers check
 * {@code isNull} first.
 */
public final class ArrowText {
  private ArrowText() {}

  /** Writes the value at a row of one vector. */
  public interface Encoder {
    void write(OutBuffer out, int row);
  }

  private static final long MICROS_PER_DAY = 86_400_000_000L;
  /** 0001-01-01 and 10000-01-01, in days since 1970: the years whose dates are printed here. */
  private static final int FIRST_DAY = (int) LocalDate.of(1, 1, 1).toEpochDay();
  private static final int END_DAY = (int) LocalDate.of(10000, 1, 1).toEpochDay();
  private static final long FIRST_MICROS = FIRST_DAY * MICROS_PER_DAY;
  private static final long END_MICROS = END_DAY * MICROS_PER_DAY;
  private static final long PG_EPOCH_DAYS = LocalDate.of(2000, 1, 1).toEpochDay();
  private static final long PG_EPOCH_MICROS = PG_EPOCH_DAYS * MICROS_PER_DAY;

  // ------------------------------------------------------------------ text

  /** PostgreSQL's text form of {@code v}'s values ({@code column}'s), timestamptz in {@code zone}. */
  public static Encoder text(FieldVector v, Column column, ZoneId zone) {
    SqlType.Kind kind = column.type().kind();
    if (v instanceof VarCharVector s && (kind == SqlType.Kind.TEXT || kind == SqlType.Kind.VARCHAR
        || kind == SqlType.Kind.CHAR || kind == SqlType.Kind.JSON)) {
      return (out, row) -> putVarChar(out, s, row);
    }
    if (v instanceof BigIntVector b) {
      return (out, row) -> putLong(out, b.get(row));
    }
    if (v instanceof IntVector i) {
      return (out, row) -> putLong(out, i.get(row));
    }
    if (v instanceof SmallIntVector i) {
      return (out, row) -> putLong(out, i.get(row));
    }
    if (v instanceof TinyIntVector i) {
      return (out, row) -> putLong(out, i.get(row));
    }
    if (v instanceof BitVector b) {
      return (out, row) -> out.put((byte) (b.get(row) != 0 ? 't' : 'f'));
    }
    if (v instanceof Float8Vector f) {
      Encoder other = fallback(v, column, zone);
      return (out, row) -> {
        if (!putDouble(out, f.get(row))) {
          other.write(out, row);
        }
      };
    }
    if (v instanceof DecimalVector d && d.getScale() >= 0) {
      return decimal(d, column, zone);
    }
    if (v instanceof DateDayVector d) {
      Encoder other = fallback(v, column, zone);
      return (out, row) -> {
        int day = d.get(row);
        if (day >= FIRST_DAY && day < END_DAY) {
          putDate(out, day);
        } else {
          other.write(out, row);
        }
      };
    }
    if (v instanceof TimeStampMicroTZVector t) {
      return timestamptz(t, column, zone);
    }
    if (v instanceof TimeStampMicroVector t) {
      Encoder other = fallback(v, column, zone);
      return (out, row) -> {
        long micros = t.get(row);
        if (micros >= FIRST_MICROS && micros < END_MICROS) {
          putTimestamp(out, micros);
        } else {
          other.write(out, row);
        }
      };
    }
    if (v instanceof TimeMicroVector t) {
      Encoder other = fallback(v, column, zone);
      return (out, row) -> {
        long micros = t.get(row);
        if (micros >= 0 && micros < MICROS_PER_DAY) {
          putTime(out, micros);
        } else {
          other.write(out, row);
        }
      };
    }
    return fallback(v, column, zone);
  }

  /**
   * The characters a number's, a boolean's, a date's, a time's or a timestamp's text is made of (with
   * {@code infinity}, {@code NaN}, {@code BC}, exponents and offsets).
   */
  public static final String PLAIN_CHARACTERS = "0123456789-+.: eBCINafinty";

  /** Whether every text {@link #text} writes for {@code v}'s values is made of {@link #PLAIN_CHARACTERS}. */
  public static boolean plain(FieldVector v) {
    return v instanceof BigIntVector || v instanceof IntVector || v instanceof SmallIntVector
        || v instanceof TinyIntVector || v instanceof BitVector || v instanceof DecimalVector
        || v instanceof Float8Vector || v instanceof Float4Vector || v instanceof DateDayVector
        || v instanceof TimeStampMicroTZVector || v instanceof TimeStampMicroVector || v instanceof TimeMicroVector;
  }

  /** The text of any value: through the Java object {@link dev.floe.Row#get} gives. */
  private static Encoder fallback(FieldVector v, Column column, ZoneId zone) {
    return (out, row) -> out.put(PgValues.text(ArrowValues.get(v, row, column), zone));
  }

  private static void putVarChar(OutBuffer out, VarCharVector s, int row) {
    ArrowBuf offsets = s.getOffsetBuffer();
    int start = offsets.getInt((long) row * 4);
    int n = offsets.getInt((long) row * 4 + 4) - start;
    out.ensure(n);
    s.getDataBuffer().getBytes(start, out.buf, out.len, n);
    out.len += n;
  }

  private static Encoder decimal(DecimalVector d, Column column, ZoneId zone) {
    int scale = d.getScale();
    Encoder other = fallback(d, column, zone);
    return (out, row) -> {
      ArrowBuf data = d.getDataBuffer();
      long low = data.getLong((long) row * 16);
      long high = data.getLong((long) row * 16 + 8);
      if (high != (low >> 63) || low == Long.MIN_VALUE) {
        other.write(out, row); // more than a long holds
      } else {
        putDecimal(out, low, scale);
      }
    };
  }

  /** An unscaled value and its scale as BigDecimal's toPlainString writes it. */
  static void putDecimal(OutBuffer out, long unscaled, int scale) {
    if (scale == 0) {
      putLong(out, unscaled);
      return;
    }
    out.ensure(scale + 22);
    byte[] b = out.buf;
    if (unscaled < 0) {
      b[out.len++] = '-';
      unscaled = -unscaled;
    }
    int digits = Math.max(digits(unscaled), scale + 1);
    int end = out.len + digits + 1;
    int p = end;
    for (int k = 0; k < scale; k++) {
      long q = unscaled / 10;
      b[--p] = (byte) ('0' + (unscaled - q * 10));
      unscaled = q;
    }
    b[--p] = '.';
    while (p > out.len) {
      long q = unscaled / 10;
      b[--p] = (byte) ('0' + (unscaled - q * 10));
      unscaled = q;
    }
    out.len = end;
  }

  private static final double[] POWERS = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
      1e14, 1e15, 1e16, 1e17, 1e18};

  /**
   * A double as PostgreSQL prints it (the shortest decimal that reads back as it), when that is plain
   * notation of at most 15 significant digits: the fewest decimals k for which m = rint(d * 10^k) gives
   * m / 10^k == d. Both are exact below 10^15 and the division is correctly rounded, so it is d's
   * correctly rounded reading of m * 10^-k; no shorter decimal reads back as d (it would have fewer
   * decimals), and the nearest integer is the closest candidate. False (nothing written) otherwise:
   * zero, NaN, the infinities, exponents below -4 or from 15, more digits.
   */
  static boolean putDouble(OutBuffer out, double d) {
    double abs = Math.abs(d);
    if (!(abs >= 1e-4 && abs < 1e15)) {
      return false;
    }
    for (int k = 0; k < POWERS.length; k++) {
      double scaled = abs * POWERS[k];
      if (scaled >= 1e15) {
        return false;
      }
      double m = Math.rint(scaled);
      if (m / POWERS[k] == abs) {
        putDecimal(out, d < 0 ? -(long) m : (long) m, k);
        return true;
      }
    }
    return false;
  }

  /** A long in decimal digits. */
  public static void putLong(OutBuffer out, long v) {
    if (v == Long.MIN_VALUE) {
      out.putAscii("-9223372036854775808");
      return;
    }
    out.ensure(20);
    byte[] b = out.buf;
    if (v < 0) {
      b[out.len++] = '-';
      v = -v;
    }
    int end = out.len + digits(v);
    int p = end;
    while (v >= 10) {
      long q = v / 10;
      b[--p] = (byte) ('0' + (v - q * 10));
      v = q;
    }
    b[--p] = (byte) ('0' + v);
    out.len = end;
  }

  private static int digits(long v) {
    int n = 1;
    for (long limit = 10; n < 19 && v >= limit; limit *= 10) {
      n++;
    }
    return n;
  }

  /** YYYY-MM-DD of a day in years 1 to 9999. */
  private static void putDate(OutBuffer out, long day) {
    LocalDate d = LocalDate.ofEpochDay(day);
    out.ensure(10);
    byte[] b = out.buf;
    int p = out.len;
    int y = d.getYear();
    b[p] = (byte) ('0' + y / 1000);
    b[p + 1] = (byte) ('0' + y / 100 % 10);
    b[p + 2] = (byte) ('0' + y / 10 % 10);
    b[p + 3] = (byte) ('0' + y % 10);
    b[p + 4] = '-';
    two(b, p + 5, d.getMonthValue());
    b[p + 7] = '-';
    two(b, p + 8, d.getDayOfMonth());
    out.len = p + 10;
  }

  /** YYYY-MM-DD HH:MM:SS[.ffffff] of microseconds since 1970 in years 1 to 9999. */
  private static void putTimestamp(OutBuffer out, long micros) {
    long day = Math.floorDiv(micros, MICROS_PER_DAY);
    putDate(out, day);
    out.put((byte) ' ');
    putTime(out, micros - day * MICROS_PER_DAY);
  }

  /** HH:MM:SS and the fraction of a second without trailing zeros (none when whole). */
  private static void putTime(OutBuffer out, long micros) {
    out.ensure(15);
    byte[] b = out.buf;
    int p = out.len;
    long seconds = micros / 1_000_000;
    int fraction = (int) (micros - seconds * 1_000_000);
    two(b, p, (int) (seconds / 3600));
    b[p + 2] = ':';
    two(b, p + 3, (int) (seconds / 60 % 60));
    b[p + 5] = ':';
    two(b, p + 6, (int) (seconds % 60));
    p += 8;
    if (fraction != 0) {
      b[p++] = '.';
      int div = 100_000;
      while (fraction != 0) {
        b[p++] = (byte) ('0' + fraction / div);
        fraction %= div;
        div /= 10;
      }
    }
    out.len = p;
  }

  private static void two(byte[] b, int p, int n) {
    b[p] = (byte) ('0' + n / 10);
    b[p + 1] = (byte) ('0' + n % 10);
  }

  private static Encoder timestamptz(TimeStampMicroTZVector t, Column column, ZoneId zone) {
    Encoder other = fallback(t, column, zone);
    ZoneRules rules = zone.getRules();
    ZoneOffset fixed = rules.isFixedOffset() ? rules.getOffset(java.time.Instant.EPOCH) : null;
    return new Encoder() {
      private int lastOffset = Integer.MIN_VALUE;
      private byte[] suffix;

      @Override
      public void write(OutBuffer out, int row) {
        long micros = t.get(row);
        ZoneOffset offset = fixed != null ? fixed
            : rules.getOffset(java.time.Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L)));
        int seconds = offset.getTotalSeconds();
        long local = micros + seconds * 1_000_000L;
        if (micros < FIRST_MICROS - MICROS_PER_DAY || micros >= END_MICROS + MICROS_PER_DAY
            || local < FIRST_MICROS || local >= END_MICROS) {
          other.write(out, row);
          return;
        }
        if (seconds != lastOffset) {
          suffix = PgDateTime.offset(offset).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
          lastOffset = seconds;
        }
        putTimestamp(out, local);
        out.put(suffix);
      }
    };
  }

  // ------------------------------------------------------------------ binary

  /** PostgreSQL's binary form of {@code v}'s values, for the column's type {@code type}. */
  public static Encoder binary(FieldVector v, Column column, PgType type, ZoneId zone) {
    switch (type.oid()) {
      case 16 -> {
        if (v instanceof BitVector b) {
          return (out, row) -> out.put((byte) (b.get(row) != 0 ? 1 : 0));
        }
      }
      case 20 -> {
        if (v instanceof BigIntVector b) {
          return (out, row) -> out.putLong(b.get(row));
        }
      }
      case 23 -> {
        if (v instanceof IntVector i) {
          return (out, row) -> out.putInt(i.get(row));
        }
      }
      case 21 -> {
        if (v instanceof SmallIntVector i) {
          return (out, row) -> out.putShort(i.get(row));
        }
      }
      case 700 -> {
        if (v instanceof Float4Vector f) {
          return (out, row) -> out.putInt(Float.floatToRawIntBits(f.get(row)));
        }
      }
      case 701 -> {
        if (v instanceof Float8Vector f) {
          return (out, row) -> out.putLong(Double.doubleToRawLongBits(f.get(row)));
        }
      }
      case 1082 -> {
        if (v instanceof DateDayVector d) {
          return (out, row) -> {
            int day = d.get(row);
            out.putInt(day == Integer.MAX_VALUE ? Integer.MAX_VALUE : day <= -Integer.MAX_VALUE ? Integer.MIN_VALUE
                : (int) (day - PG_EPOCH_DAYS));
          };
        }
      }
      case 1114 -> {
        if (v instanceof TimeStampMicroVector t) {
          return (out, row) -> out.putLong(pgMicros(t.get(row)));
        }
      }
      case 1184 -> {
        if (v instanceof TimeStampMicroTZVector t) {
          return (out, row) -> out.putLong(pgMicros(t.get(row)));
        }
      }
      default -> { }
    }
    return (out, row) -> out.put(PgValues.binary(ArrowValues.get(v, row, column), type, zone));
  }

  /** Microseconds since 2000 of microseconds since 1970; DuckDB's infinities as PostgreSQL's. */
  private static long pgMicros(long unixMicros) {
    int infinite = PgDateTime.infinite(unixMicros);
    return infinite > 0 ? Long.MAX_VALUE : infinite < 0 ? Long.MIN_VALUE : unixMicros - PG_EPOCH_MICROS;
  }
}
