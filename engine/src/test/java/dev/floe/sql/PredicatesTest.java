package dev.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Constants in WHERE become Iceberg values for file pruning only when their value is exactly DuckDB's:
 * the parse trees here are DuckDB's own ({@code json_serialize_sql}).
 */
class PredicatesTest {
  private static Connection duck;

  @BeforeAll
  static void open() throws Exception {
    duck = DriverManager.getConnection("jdbc:duckdb:");
  }

  @AfterAll
  static void close() throws Exception {
    duck.close();
  }

  /** The parsed right-hand side of {@code x = <constant>}. */
  private static JsonNode constant(String sql) throws Exception {
    try (PreparedStatement ps = duck.prepareStatement("SELECT json_serialize_sql(?::VARCHAR)")) {
      ps.setString(1, "SELECT 1 FROM t WHERE x = " + sql);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new ObjectMapper().readTree(rs.getString(1)).path("statements").path(0).path("node")
            .path("where_clause").path("right");
      }
    }
  }

  private static Object literal(String sql, Type type) throws Exception {
    return Predicates.literal(constant(sql), type);
  }

  @Test
  void integerParametersAsClientsBindThemPrune() throws Exception {
    // pgjdbc and other drivers send parameters as text; Floe binds them as CAST('<text>' AS <type>)
    assertThat(literal("CAST('42' AS bigint)", Types.LongType.get())).isEqualTo(42L);
    assertThat(literal("CAST('-7' AS integer)", Types.IntegerType.get())).isEqualTo(-7);
    assertThat(literal("CAST('+007' AS int8)", Types.LongType.get())).isEqualTo(7L);
    assertThat(literal("CAST('42' AS smallint)", Types.LongType.get())).isEqualTo(42L);
    assertThat(literal("CAST(42 AS BIGINT)", Types.LongType.get())).isEqualTo(42L);
  }

  @Test
  void integerTextDuckDbReadsDifferentlyOrOutOfRangeDoesNotPrune() throws Exception {
    // DuckDB accepts these; their value is not simply the digits, so they are left to DuckDB
    assertThat(literal("CAST(' 42' AS bigint)", Types.LongType.get())).isNull();
    assertThat(literal("CAST('1e3' AS bigint)", Types.LongType.get())).isNull();
    assertThat(literal("CAST('1_000' AS bigint)", Types.LongType.get())).isNull();
    assertThat(literal("CAST('9223372036854775807' AS bigint)", Types.LongType.get())).isNull();
    // beyond an int column's range: Iceberg's comparison with it is not exact
    assertThat(literal("CAST('5000000000' AS bigint)", Types.IntegerType.get())).isNull();
    // a cast to another type than the column's family
    assertThat(literal("CAST('42' AS varchar)", Types.LongType.get())).isNull();
    assertThat(literal("CAST('42' AS bigint)", Types.StringType.get())).isNull();
    assertThat(literal("CAST('42' AS numeric)", Types.LongType.get())).isNull();
    assertThat(literal("CAST('42' AS double)", Types.LongType.get())).isNull();
  }

  @Test
  void datesAndStringsStillConvert() throws Exception {
    assertThat(literal("CAST('2024-02-29' AS date)", Types.DateType.get())).isEqualTo(19782);
    assertThat(literal("'abc'", Types.StringType.get())).isEqualTo("abc");
    assertThat(literal("CAST('abc' AS text)", Types.StringType.get())).isEqualTo("abc");
  }

  /**
   * A timestamptz literal becomes the instant DuckDB reads it as (the engine's DuckDB runs in UTC), for
   * every form Floe converts; the others are not converted. Random instants, each in several forms.
   */
  @Test
  void timestamptzLiteralsAreTheInstantsDuckDbReads() throws Exception {
    java.util.Random random = new java.util.Random(20261204);
    try (java.sql.Statement st = duck.createStatement()) {
      st.execute("SET TimeZone = 'UTC'");
    }
    Types.TimestampType tz = Types.TimestampType.withZone();
    try (PreparedStatement ps = duck.prepareStatement("SELECT epoch_us(CAST(? AS TIMESTAMPTZ))")) {
      for (int n = 0; n < 400; n++) {
        long seconds = -2_000_000_000L + (long) (random.nextDouble() * 6_000_000_000L);
        java.time.LocalDateTime t = java.time.LocalDateTime.ofEpochSecond(seconds, 0, java.time.ZoneOffset.UTC);
        String date = t.toLocalDate().toString();
        String time = t.toLocalTime().withNano(0).toString();
        time = time.length() == 5 ? time + ":00" : time;
        String fraction = "." + String.format("%06d", random.nextInt(1_000_000)).substring(0, 1 + random.nextInt(6));
        String[] offsets = {"", "Z", "+01", "-08", "+05:30", "-0330", "+14", "+00:00", "-08:00:00", "+05:30:00"};
        String offset = offsets[random.nextInt(offsets.length)];
        String[] forms = {date, date + " " + time, date + "T" + time, date + " " + time + fraction,
            date + " " + time + offset, date + "T" + time + fraction + offset, date + " " + time.substring(0, 5) + offset};
        for (String text : forms) {
          ps.setString(1, text);
          long expected;
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            expected = rs.getLong(1);
          }
          assertThat(Predicates.instantMicros(text)).as(text).isEqualTo(expected);
          assertThat(literal("'" + text + "'", tz)).as(text).isEqualTo(expected);
          assertThat(literal("CAST('" + text + "' AS TIMESTAMPTZ)", tz)).as(text).isEqualTo(expected);
        }
      }
    }
    // forms whose reading depends on more than the digits: left to DuckDB
    for (String text : new String[] {"yesterday", "epoch", "2024-02-01 BC", "2024-02-01 10:00 Europe/Paris",
        "2024-02-01 24:00:00", "Feb 1 2024", "20240201", "2024-2-1", "infinity", "2024-02-01Z"}) {
      assertThat(Predicates.instantMicros(text)).as(text).isNull();
    }
    // a timestamp without time zone is not converted for a timestamptz column, nor the reverse
    assertThat(literal("CAST('2024-02-01' AS TIMESTAMP)", tz)).isNull();
    assertThat(literal("CAST('2024-02-01' AS TIMESTAMPTZ)", Types.TimestampType.withoutZone())).isNull();
  }
}
