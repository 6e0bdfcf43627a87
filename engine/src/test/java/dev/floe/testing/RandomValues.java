package dev.floe.testing;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Random values of Iceberg primitive types in Iceberg's generic (Java) representation, biased towards
 * edge values (extremes, NaN, -0.0, empty and non-ASCII strings, pre-1970 and pre-Gregorian dates) and
 * towards a small domain, so that equality deletes and filters find matching rows.
 */
public final class RandomValues {
  private static final List<String> STRINGS = List.of("", " ", "a", "b", "abc", "A", "zz", "héllo", "日本語",
      "emoji 😀 ok", "\uE000private", "it's", "back\\slash", "tab\tnew\nline", "\"quoted\"", "%_like",
      "a longer string that exceeds sixteen characters of statistics",
      "a longer string that exceeds sixteen characters of statistics too", "NULL", "null", "ÿ", "Ω", "z",
      "😀", "\uE000", "\uFFFD", "a*", "ab", "[x]");
  private static final List<LocalDate> DATES = List.of(LocalDate.of(1, 1, 1), LocalDate.of(1000, 3, 1),
      LocalDate.of(1582, 10, 10), LocalDate.of(1582, 10, 4), LocalDate.of(1899, 12, 31), LocalDate.of(1900, 2, 28),
      LocalDate.of(1969, 12, 31), LocalDate.of(1970, 1, 1), LocalDate.of(2000, 2, 29), LocalDate.of(2024, 6, 30),
      LocalDate.of(9999, 12, 31));
  private static final List<LocalTime> TIMES = List.of(LocalTime.MIDNIGHT, LocalTime.of(23, 59, 59, 999_999_000),
      LocalTime.of(12, 0), LocalTime.of(0, 0, 0, 1000), LocalTime.of(13, 30, 15, 123_456_000));
  private static final List<LocalDateTime> TIMESTAMPS = List.of(LocalDateTime.of(1, 1, 1, 0, 0),
      LocalDateTime.of(1582, 10, 10, 12, 0), LocalDateTime.of(1900, 1, 1, 0, 0, 0, 1000),
      LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_000), LocalDateTime.of(1970, 1, 1, 0, 0),
      LocalDateTime.of(1970, 1, 1, 0, 0, 0, 1000), LocalDateTime.of(2000, 2, 29, 23, 0),
      LocalDateTime.of(2024, 3, 10, 2, 30, 0, 500_000_000), LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_000));
  private static final List<UUID> UUIDS = List.of(new UUID(0, 0), new UUID(-1, -1),
      UUID.fromString("80000000-0000-0000-0000-000000000000"), UUID.fromString("7fffffff-ffff-ffff-ffff-ffffffffffff"),
      UUID.fromString("123e4567-e89b-12d3-a456-426614174000"));

  private RandomValues() {}

  /** A random non-null value of {@code type}. */
  public static Object of(Type type, Random rnd) {
    int mode = rnd.nextInt(10); // 0-1: edge value, 2-6: small domain, 7-9: anything
    switch (type.typeId()) {
      case BOOLEAN:
        return rnd.nextBoolean();
      case INTEGER:
        if (mode < 2) {
          return pick(rnd, List.of(Integer.MIN_VALUE, Integer.MAX_VALUE, 0, -1, 1, Integer.MIN_VALUE + 1));
        }
        return mode < 7 ? rnd.nextInt(21) - 10 : rnd.nextInt();
      case LONG:
        if (mode < 2) {
          return pick(rnd, List.of(Long.MIN_VALUE, Long.MAX_VALUE, 0L, -1L, (long) Integer.MAX_VALUE + 1,
              (long) Integer.MIN_VALUE - 1));
        }
        return mode < 7 ? (long) (rnd.nextInt(21) - 10) : rnd.nextLong();
      case FLOAT:
        if (mode < 2) {
          return pick(rnd, List.of(Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -0.0f, 0.0f,
              Float.MIN_VALUE, Float.MAX_VALUE, -Float.MAX_VALUE));
        }
        return mode < 7 ? (rnd.nextInt(21) - 10) / 4.0f : (float) (rnd.nextGaussian() * 1e6);
      case DOUBLE:
        if (mode < 2) {
          return pick(rnd, List.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0, 0.0,
              Double.MIN_VALUE, Double.MAX_VALUE, -Double.MAX_VALUE, 0.1));
        }
        return mode < 7 ? (rnd.nextInt(21) - 10) / 4.0 : rnd.nextGaussian() * 1e12;
      case DECIMAL: {
        Types.DecimalType d = (Types.DecimalType) type;
        BigInteger max = BigInteger.TEN.pow(d.precision()).subtract(BigInteger.ONE);
        BigInteger unscaled;
        if (mode < 2) {
          unscaled = pick(rnd, List.of(max, max.negate(), BigInteger.ZERO, BigInteger.ONE.negate()));
        } else if (mode < 7) {
          unscaled = BigInteger.valueOf(rnd.nextInt(41) - 20).min(max).max(max.negate());
        } else {
          int digits = 1 + rnd.nextInt(d.precision());
          unscaled = new BigInteger(digits * 4, rnd).mod(BigInteger.TEN.pow(digits));
          if (rnd.nextBoolean()) {
            unscaled = unscaled.negate();
          }
        }
        return new BigDecimal(unscaled, d.scale());
      }
      case STRING:
        if (mode < 7) {
          return pick(rnd, STRINGS);
        }
        StringBuilder b = new StringBuilder();
        int n = rnd.nextInt(12);
        for (int i = 0; i < n; i++) {
          int kind = rnd.nextInt(10);
          int cp = kind < 7 ? 'a' + rnd.nextInt(26) : kind < 9 ? 0xA0 + rnd.nextInt(0x2000) : 0x1F600 + rnd.nextInt(50);
          b.appendCodePoint(cp);
        }
        return b.toString();
      case DATE:
        if (mode < 7) {
          return pick(rnd, DATES);
        }
        return LocalDate.ofEpochDay(rnd.nextInt(2_932_897) - 719_162); // years 1..9999
      case TIME:
        if (mode < 7) {
          return pick(rnd, TIMES);
        }
        return LocalTime.ofNanoOfDay((long) (rnd.nextDouble() * 86_400_000_000L) * 1000L);
      case TIMESTAMP: {
        LocalDateTime t;
        if (mode < 7) {
          t = pick(rnd, TIMESTAMPS);
        } else {
          long micros = (long) ((rnd.nextDouble() * 2 - 1) * 4e15); // about 1843..2096
          if (rnd.nextInt(4) == 0) {
            micros = -62_000_000_000_000_000L + (long) (rnd.nextDouble() * 1e17); // years 5..3100
          }
          t = LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
              (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
        }
        return ((Types.TimestampType) type).shouldAdjustToUTC() ? t.atOffset(ZoneOffset.UTC) : t;
      }
      case UUID:
        if (mode < 4) {
          return pick(rnd, UUIDS);
        }
        return new UUID(rnd.nextLong(), rnd.nextLong());
      case BINARY: {
        if (mode < 3) {
          return ByteBuffer.wrap(pick(rnd, List.of(new byte[0], new byte[] {0}, new byte[] {(byte) 0xff},
              new byte[] {1, 2, 3})));
        }
        byte[] bytes = new byte[rnd.nextInt(20)];
        rnd.nextBytes(bytes);
        return ByteBuffer.wrap(bytes);
      }
      default:
        throw new IllegalArgumentException("no random values for " + type);
    }
  }

  /** A random value of {@code type}, NULL with probability {@code nullChance} for optional columns. */
  public static Object of(Types.NestedField field, Random rnd, double nullChance) {
    if (field.isOptional() && rnd.nextDouble() < nullChance) {
      return null;
    }
    return of(field.type(), rnd);
  }

  /** {@code value} (read under an older, narrower type) promoted to {@code type}. */
  public static Object promote(Object value, Type type) {
    if (value == null) {
      return null;
    }
    return switch (type.typeId()) {
      case INTEGER -> ((Number) value).intValue();
      case LONG -> ((Number) value).longValue();
      case DOUBLE -> ((Number) value).doubleValue();
      default -> value;
    };
  }

  private static <T> T pick(Random rnd, List<T> values) {
    return values.get(rnd.nextInt(values.size()));
  }
}
