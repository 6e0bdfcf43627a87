package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The edges of every type Floe stores, through pgjdbc in its three ways of sending and reading values
 * (simple: parameters inlined as text; extended: text; binary), written as parameters and read back:
 * what comes back is what PostgreSQL 15 gives back, checked by running this class against it
 * ({@code -Dfloe.edges.postgres=jdbc:postgresql://host:port/db?user=...}; the refusals marked Floe's
 * own are then skipped). Where Floe refuses a value PostgreSQL stores (infinity, timestamps after
 * 294247-01-10), the test asserts the SQLSTATE.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ValueEdgesTest {
  @TempDir
  static Path dir;
  PgTestServer floe;
  /** A PostgreSQL to run against instead of Floe, to check the expectations. */
  final String postgres = System.getProperty("floe.edges.postgres");

  @BeforeAll
  void start() throws Exception {
    if (postgres == null) {
      floe = new PgTestServer(dir.resolve("wh"));
    }
  }

  @AfterAll
  void stop() {
    if (floe != null) {
      floe.close();
    }
  }

  private Connection connect(String mode) throws SQLException {
    Properties p = new Properties();
    switch (mode) {
      case "simple" -> p.setProperty("preferQueryMode", "simple");
      case "binary" -> {
        p.setProperty("prepareThreshold", "-1"); // server-prepared at once: binary transfer both ways
        p.setProperty("binaryTransfer", "true");
      }
      default -> p.setProperty("prepareThreshold", "0");
    }
    Connection c = postgres != null ? DriverManager.getConnection(postgres, p) : floe.connect(p);
    try (Statement st = c.createStatement()) {
      st.execute("SET TimeZone = 'UTC'");
    }
    return c;
  }

  private static final String COLUMNS = "k integer, b boolean, s smallint, i integer, l bigint, r real, "
      + "d double precision, n numeric(38,9), t text, v varchar(10), dt date, tm time, ts timestamp, tz timestamptz, "
      + "u uuid, by bytea";

  private static byte[] allBytes() {
    byte[] b = new byte[256];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) i;
    }
    return b;
  }

  /** Rows as Java values pgjdbc sends: the minimums, the maximums, and the odd ones. */
  private static final Object[][] ROWS = {
      {1, true, (short) -32768, Integer.MIN_VALUE, Long.MIN_VALUE, Float.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY,
          new BigDecimal("-99999999999999999999999999999.999999999"), "", "",
          // pgjdbc sends dates before 4713-01-01 BC as -infinity: the first date it sends as a date
          LocalDate.of(-4712, 1, 1), LocalTime.MIN, LocalDateTime.of(-4712, 1, 1, 0, 0),
          OffsetDateTime.of(-4712, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC), new UUID(0, 0), new byte[0]},
      {2, false, (short) 32767, Integer.MAX_VALUE, Long.MAX_VALUE, Float.POSITIVE_INFINITY, Double.MAX_VALUE,
          new BigDecimal("99999999999999999999999999999.999999999"), "héllo ☃ 😀 e\u0301 \"q\" 's \\ b", "ü😀",
          LocalDate.of(5874897, 12, 31), LocalTime.of(23, 59, 59, 999_999_000),
          LocalDateTime.of(294247, 1, 10, 4, 0, 54, 775_806_000),
          OffsetDateTime.of(294247, 1, 10, 4, 0, 54, 775_806_000, ZoneOffset.UTC), new UUID(-1, -1), allBytes()},
      {3, null, (short) 0, 0, 0L, Float.NaN, Double.NaN, new BigDecimal("0.000000001"), "tab\there\nline", "a\tb",
          LocalDate.of(-43, 3, 15), LocalTime.of(12, 0, 0, 500_000_000), LocalDateTime.of(-43, 3, 15, 10, 0),
          OffsetDateTime.of(0, 12, 31, 23, 59, 59, 999_999_000, ZoneOffset.ofHours(2)),
          UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), new byte[] {0}},
      {4, true, (short) -1, -1, -1L, -0.0f, Double.MIN_VALUE, new BigDecimal("-0.000000001"), "x", null,
          LocalDate.of(10000, 1, 1), null, LocalDateTime.of(10000, 1, 1, 0, 0, 0, 1000),
          OffsetDateTime.of(1, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC), null, "\\x".getBytes()},
      {5, true, (short) 1, 1, 1L, Float.MIN_VALUE, -0.0d, BigDecimal.ZERO, "ÿ", "", LocalDate.of(1, 1, 1),
          LocalTime.of(0, 0, 0, 1000), LocalDateTime.of(1, 1, 1, 0, 0),
          OffsetDateTime.of(2024, 2, 29, 13, 14, 15, 123_456_000, ZoneOffset.ofHoursMinutes(5, 30)), null, null},
  };

  /**
   * What PostgreSQL's text output is for each row's b, s, i, l, r, d, n, t, v, dt, tm, ts, tz, u (in UTC):
   * pgjdbc's getString in the text modes.
   */
  private static final String[][] TEXT = {
      {"t", "-32768", "-2147483648", "-9223372036854775808", "-Infinity", "-Infinity",
          "-99999999999999999999999999999.999999999", "", "", "4713-01-01 BC", "00:00:00", "4713-01-01 00:00:00 BC",
          "4713-01-01 00:00:00+00 BC", "00000000-0000-0000-0000-000000000000"},
      {"f", "32767", "2147483647", "9223372036854775807", "Infinity", "1.7976931348623157e+308",
          "99999999999999999999999999999.999999999", "héllo ☃ 😀 e\u0301 \"q\" 's \\ b", "ü😀", "5874897-12-31",
          "23:59:59.999999", "294247-01-10 04:00:54.775806", "294247-01-10 04:00:54.775806+00",
          "ffffffff-ffff-ffff-ffff-ffffffffffff"},
      {null, "0", "0", "0", "NaN", "NaN", "0.000000001", "tab\there\nline", "a\tb", "0044-03-15 BC", "12:00:00.5",
          "0044-03-15 10:00:00 BC", "0001-12-31 21:59:59.999999+00 BC", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
      {"t", "-1", "-1", "-1", "-0", "5e-324", "-0.000000001", "x", null, "10000-01-01", null,
          "10000-01-01 00:00:00.000001", "0001-01-01 00:00:00+00", null},
      {"t", "1", "1", "1", "1e-45", "-0", "0.000000000", "ÿ", "", "0001-01-01", "00:00:00.000001",
          "0001-01-01 00:00:00", "2024-02-29 07:44:15.123456+00", null},
  };

  @ParameterizedTest
  @ValueSource(strings = {"simple", "extended", "binary"})
  void everyTypesEdgesRoundTrip(String mode) throws Exception {
    String table = "edges_" + mode;
    try (Connection c = connect(mode); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table);
      st.execute("CREATE TABLE " + table + " (" + COLUMNS + ")");
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
          + "?, ?, ?, ?, ?, ?)")) {
        for (Object[] row : ROWS) {
          for (int k = 0; k < row.length; k++) {
            ps.setObject(k + 1, row[k]);
          }
          assertThat(ps.executeUpdate()).isEqualTo(1);
        }
      }
      // twice: pgjdbc switches to binary results once a statement is prepared
      try (PreparedStatement ps = c.prepareStatement("SELECT * FROM " + table + " ORDER BY k")) {
        for (int run = 0; run < 2; run++) {
          try (ResultSet rs = ps.executeQuery()) {
            for (int r = 0; r < ROWS.length; r++) {
              assertThat(rs.next()).isTrue();
              checkRow(mode, rs, ROWS[r], TEXT[r]);
            }
            assertThat(rs.next()).isFalse();
          }
        }
      }
    }
  }

  private static void checkRow(String mode, ResultSet rs, Object[] row, String[] text) throws SQLException {
    String at = mode + " row " + row[0] + " column ";
    for (int k = 1; k < row.length; k++) {
      Object want = row[k];
      String column = at + rs.getMetaData().getColumnName(k + 1);
      Object got = switch (k) {
        case 10 -> rs.getObject(k + 1, LocalDate.class);
        case 11 -> rs.getObject(k + 1, LocalTime.class);
        case 12 -> rs.getObject(k + 1, LocalDateTime.class);
        case 13 -> rs.getObject(k + 1, OffsetDateTime.class);
        case 15 -> rs.getBytes(k + 1);
        default -> rs.getObject(k + 1);
      };
      if (want == null) {
        assertThat(got).as(column).isNull();
      } else if (want instanceof BigDecimal d) {
        assertThat((BigDecimal) got).as(column).isEqualByComparingTo(d);
      } else if (want instanceof OffsetDateTime t) {
        assertThat(((OffsetDateTime) got).toInstant()).as(column).isEqualTo(t.toInstant());
      } else if (want instanceof byte[] b) {
        assertThat((byte[]) got).as(column).isEqualTo(b);
      } else if (want instanceof Short s) {
        assertThat(((Number) got).shortValue()).as(column).isEqualTo(s);
      } else {
        assertThat(got).as(column).isEqualTo(want);
      }
      if (k <= text.length && !mode.equals("binary")) {
        assertThat(rs.getString(k + 1)).as(column + " as text").isEqualTo(text[k - 1]);
      }
    }
    if (mode.equals("binary")) {
      // pgjdbc prints binary dates and timestamps itself, as PostgreSQL does
      for (int k = 10; k <= 12; k++) {
        assertThat(rs.getString(k + 1)).as(at + k + " as text").isEqualTo(text[k - 1]);
      }
    }
  }

  /** Queries have PostgreSQL's infinities; pgjdbc reads them as the largest and smallest Java values. */
  @ParameterizedTest
  @ValueSource(strings = {"simple", "extended", "binary"})
  void infinitiesInQueriesReadAsPostgreSqlsDo(String mode) throws Exception {
    try (Connection c = connect(mode); PreparedStatement ps = c.prepareStatement(
        "SELECT 'infinity'::date, '-infinity'::date, 'infinity'::timestamp, '-infinity'::timestamptz")) {
      for (int run = 0; run < 2; run++) {
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(Arrays.asList(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)))
              .containsExactly("infinity", "-infinity", "infinity", "-infinity");
          assertThat(rs.getObject(1, LocalDate.class)).isEqualTo(LocalDate.MAX);
          assertThat(rs.getObject(2, LocalDate.class)).isEqualTo(LocalDate.MIN);
          assertThat(rs.getObject(3, LocalDateTime.class)).isEqualTo(LocalDateTime.MAX);
          assertThat(rs.getObject(4, OffsetDateTime.class)).isEqualTo(OffsetDateTime.MIN);
        }
      }
    }
  }

  /** BC timestamps with time zone print in the session's zone, with its local mean time before 1911. */
  @ParameterizedTest
  @ValueSource(strings = {"simple", "extended"})
  void bcTimestampsPrintInTheSessionsTimeZone(String mode) throws Exception {
    try (Connection c = connect(mode); Statement st = c.createStatement()) {
      st.execute("SET TimeZone = 'Europe/Paris'");
      try (ResultSet rs = st.executeQuery("SELECT TIMESTAMPTZ '0044-03-15 10:00:00+00 BC', "
          + "TIMESTAMPTZ '10000-07-01 12:00:00+00'")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo("0044-03-15 10:09:21+00:09:21 BC");
        assertThat(rs.getString(2)).isEqualTo("10000-07-01 14:00:00+02");
      }
    }
  }

  /**
   * What PostgreSQL refuses, Floe refuses with its SQLSTATE; what Floe refuses although PostgreSQL
   * stores it (infinity, timestamps after 294247-01-10), it refuses with 22008.
   */
  @ParameterizedTest
  @ValueSource(strings = {"simple", "extended", "binary"})
  void refusedValuesHavePostgreSqlsSqlStates(String mode) throws Exception {
    try (Connection c = connect(mode); Statement st = c.createStatement()) {
      String table = "refused_" + mode;
      st.execute("DROP TABLE IF EXISTS " + table);
      st.execute("CREATE TABLE " + table + " (" + COLUMNS + ")");
      refused(c, "INSERT INTO " + table + " (dt) VALUES (?::date)", "0000-01-01", "22008", true);
      refused(c, "INSERT INTO " + table + " (dt) VALUES (?::date)", "4714-11-23 BC", "22008", true);
      refused(c, "INSERT INTO " + table + " (ts) VALUES (?::timestamp)", "2024-02-30 10:00", "22008", true);
      refused(c, "INSERT INTO " + table + " (n) VALUES (?::numeric)", "abc", "22P02", true);
      // pgjdbc sends LocalDate.MAX and LocalDateTime.MIN as infinity and -infinity
      refused(c, "INSERT INTO " + table + " (dt) VALUES (?)", LocalDate.MAX, "22008", false);
      refused(c, "INSERT INTO " + table + " (ts) VALUES (?)", LocalDateTime.MIN, "22008", false);
      refused(c, "INSERT INTO " + table + " (tz) VALUES (?::timestamptz)", "infinity", "22008", false);
      refused(c, "INSERT INTO " + table + " (ts) VALUES (?)", LocalDateTime.of(294276, 12, 31, 23, 59, 59),
          "22008", false);
      if (!mode.equals("simple")) {
        // simple mode writes the value into the query text, which cannot hold a NUL: PostgreSQL answers
        // 08P01 and goes on, Floe ends the connection (08P01 too)
        refused(c, "INSERT INTO " + table + " (t) VALUES (?)", "a\0b", "22021", true);
      }
      try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(postgres == null ? 0 : 4);
      }
    }
  }

  private void refused(Connection c, String sql, Object value, String state, boolean postgresRefuses)
      throws SQLException {
    if (postgres != null && !postgresRefuses) {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setObject(1, value);
        ps.executeUpdate(); // PostgreSQL stores it
      }
      return;
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setObject(1, value);
      assertThatThrownBy(ps::executeUpdate).as(sql + " " + value).isInstanceOfSatisfying(SQLException.class,
          e -> assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo(state));
    }
  }

  /** Values compared as the columns' types, as the parameters arrive: the extremes select their rows. */
  @ParameterizedTest
  @ValueSource(strings = {"simple", "extended", "binary"})
  void extremesSelectTheirRows(String mode) throws Exception {
    String table = "edges_" + mode + "_find";
    try (Connection c = connect(mode); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table);
      st.execute("CREATE TABLE " + table + " (" + COLUMNS + ")");
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
          + "?, ?, ?, ?, ?, ?)")) {
        for (Object[] row : ROWS) {
          for (int k = 0; k < row.length; k++) {
            ps.setObject(k + 1, row[k]);
          }
          ps.executeUpdate();
        }
      }
      for (Object[] probe : List.of(new Object[] {"l", Long.MIN_VALUE, 1}, new Object[] {"n",
          new BigDecimal("99999999999999999999999999999.999999999"), 2}, new Object[] {"dt", LocalDate.of(-43, 3, 15), 3},
          new Object[] {"ts", LocalDateTime.of(294247, 1, 10, 4, 0, 54, 775_806_000), 2},
          // "by" quoted: DuckDB's parser takes it for a keyword where PostgreSQL's takes a column name
          new Object[] {"t", "ÿ", 5}, new Object[] {"\"by\"", allBytes(), 2}, new Object[] {"u", new UUID(-1, -1), 2})) {
        try (PreparedStatement ps = c.prepareStatement("SELECT k FROM " + table + " WHERE " + probe[0] + " = ?")) {
          ps.setObject(1, probe[1]);
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).as(mode + " " + probe[0]).isTrue();
            assertThat(rs.getInt(1)).as(mode + " " + probe[0]).isEqualTo(probe[2]);
            assertThat(rs.next()).isFalse();
          }
        }
      }
    }
  }
}
