package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.PGConnection;

/**
 * COPY TO STDOUT and a query's text DataRows, byte for byte beside a real PostgreSQL 15 started here: the same
 * table with the same rows (every type's edges, the characters COPY escapes or quotes) in both, copied in
 * text, CSV and binary with several options and time zones, and read in text through the simple query
 * protocol.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CopyOutTest {
  @TempDir
  static Path dir;
  PgTestServer floe;
  dev.floe.testing.ThrowawayPostgres postgres;
  Connection floeConnection;
  Connection pgConnection;

  private static final String TABLE = "CREATE TABLE copied (k integer, b boolean, s smallint, i integer, l bigint, "
      + "r real, d double precision, n numeric(18,6), w numeric(38,9), t text, v varchar(20), dt date, tm time, "
      + "ts timestamp, tz timestamptz, u uuid, by bytea)";

  private static final List<String> ROWS = List.of(
      "(1, true, 1, 1, 1, 1.5, 0.1, 1.5, 1.5, 'plain', 'v', '2024-02-29', '12:34:56', '2024-02-29 12:34:56', "
          + "'2024-02-29 12:34:56.5+00', '6b8a6c38-8bb0-4e0e-a1a0-2f2e6e0f0d4e', '\\x00ff')",
      "(2, false, -32768, -2147483648, -9223372036854775808, -3.4e38, -1.7976931348623157e308, -999999999999.999999, "
          + "-99999999999999999999999999999.999999999, '', '', '0001-01-01', '00:00:00', '0001-01-01 00:00:00', "
          + "'0001-01-01 00:00:00+00', '00000000-0000-0000-0000-000000000000', '')",
      "(3, NULL, 32767, 2147483647, 9223372036854775807, 'NaN', 'Infinity', 0.000001, 0.000000001, "
          + "E'tab\\there\\nline\\\\back,comma\"quote;semi|bar', E'a\\rb', '9999-12-31', '23:59:59.999999', "
          + "'9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999+00', NULL, '\\x5c0a09')",
      "(4, NULL, 0, 0, 0, '-Infinity', -0.0, 0, 0, '\\.', 'NULL', '0044-03-15 BC', '00:00:00.000001', "
          + "'0044-03-15 10:00:00.25 BC', '1883-11-18 12:00:00+00', NULL, NULL)",
      "(5, NULL, NULL, NULL, NULL, 1e-10, 123456.789, -0.05, 12345678901234567890.123456789, 'héllo wörld ✓', "
          + "'\\N', '1970-01-01', '12:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', NULL, NULL)",
      "(6, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, E'\\x01\\x08\\x0b\\x0c', ' spaced ', '2000-02-29', NULL, "
          + "'2021-03-28 02:30:00', '2021-03-28 01:30:00+00', NULL, NULL)",
      "(7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)");

  @BeforeAll
  void start() throws Exception {
    postgres = dev.floe.testing.ThrowawayPostgres.start();
    floe = new PgTestServer(dir.resolve("wh"));
    floeConnection = floe.connect();
    pgConnection = postgres.connect();
    for (Connection c : List.of(floeConnection, pgConnection)) {
      try (Statement st = c.createStatement()) {
        st.execute(TABLE);
        st.execute("INSERT INTO copied VALUES " + String.join(", ", ROWS));
      }
    }
  }

  @AfterAll
  void stop() {
    for (AutoCloseable c : new AutoCloseable[] {floeConnection, pgConnection, floe, postgres}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception ignored) {
        // closing what the test opened
      }
    }
  }

  private static byte[] copyOut(Connection c, String sql) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    c.unwrap(PGConnection.class).getCopyAPI().copyOut(sql, out);
    return out.toByteArray();
  }

  private void setZone(String zone) throws SQLException {
    for (Connection c : List.of(floeConnection, pgConnection)) {
      try (Statement st = c.createStatement()) {
        st.execute("SET TimeZone = '" + zone + "'");
      }
    }
  }

  private static final List<String> OPTIONS = List.of("", "(DELIMITER ',')", "(DELIMITER '|', NULL 'NULL')",
      "(FORMAT csv)", "(FORMAT csv, HEADER)", "(FORMAT csv, DELIMITER ';', NULL 'NULL', QUOTE '''', ESCAPE '\\')",
      "(FORMAT csv, DELIMITER E'\\t', NULL '\\N')", "(DELIMITER '-')", "(FORMAT text, HEADER)", "WITH CSV", "(FORMAT binary)");

  @Test
  void copyBytesArePostgreSqls() throws Exception {
    List<String> differ = new ArrayList<>();
    for (String zone : List.of("UTC", "America/New_York", "Asia/Kolkata")) {
      setZone(zone);
      for (String o : OPTIONS) {
        // ordered queries: a table's rows come in no set order; one column: a lone \. is quoted in CSV
        for (String source : List.of("(SELECT * FROM copied ORDER BY k)", "(SELECT t FROM copied ORDER BY k)")) {
          String sql = "COPY " + source + " TO STDOUT " + o;
          byte[] pg = copyOut(pgConnection, sql);
          byte[] ours = copyOut(floeConnection, sql);
          if (!java.util.Arrays.equals(pg, ours)) {
            differ.add(zone + ": " + sql + "\n  PostgreSQL: " + show(pg) + "\n  Floe:       " + show(ours));
          }
        }
      }
    }
    assertThat(differ).isEmpty();
  }

  @Test
  void copiedExpressionsArePostgreSqls() throws Exception {
    // (not Europe/Amsterdam: before 1940 the JDK's tzdata links it to Brussels, PostgreSQL's does not)
    setZone("America/New_York");
    String query = "SELECT 1.5::float4 AS f, 2.25::float8 AS g, ARRAY[1, NULL, 3] AS a, ARRAY['a b', 'c,d', NULL] AS x, "
        + "true AS yes, '2024-07-01 12:00:00+02'::timestamptz AS z, '1800-01-01 00:00:00+00'::timestamptz AS old, "
        + "'12:30:00'::time AS tm, 12.50::numeric(10,2) AS m, 'x'::varchar AS vc";
    for (String o : List.of("", "(FORMAT csv)", "(FORMAT csv, HEADER)")) {
      String sql = "COPY (" + query + ") TO STDOUT " + o;
      assertThat(show(copyOut(floeConnection, sql))).as(sql).isEqualTo(show(copyOut(pgConnection, sql)));
    }
  }

  @Test
  void nullsInALaterBatchArePostgreSqls() throws Exception {
    setZone("UTC");
    // the first batches (2,048 rows) have no NULL in these columns, a later one has
    String query = "SELECT i::bigint AS i, CASE WHEN i % 5000 = 0 THEN NULL ELSE 'v' || i END AS s, "
        + "(CASE WHEN i = 9000 THEN NULL ELSE i * 0.5 END)::numeric(12,1) AS n, "
        + "CASE WHEN i > 8000 THEN NULL ELSE i % 3 = 0 END AS b "
        + "FROM generate_series(1, 10000) AS g(i) ORDER BY i";
    for (String o : List.of("", "(FORMAT csv)", "(FORMAT binary)")) {
      String sql = "COPY (" + query + ") TO STDOUT " + o;
      assertThat(show(copyOut(floeConnection, sql))).as(sql).isEqualTo(show(copyOut(pgConnection, sql)));
    }
    Properties simple = new Properties();
    simple.setProperty("preferQueryMode", "simple");
    try (Connection f = floe.connect(simple); Connection p = postgres.connect();
        Statement fs = f.createStatement(); Statement ps = p.createStatement();
        ResultSet fr = fs.executeQuery(query); ResultSet pr = ps.executeQuery(query)) {
      while (pr.next()) {
        assertThat(fr.next()).isTrue();
        for (int k = 1; k <= 4; k++) {
          assertThat(fr.getString(k)).as("row %s column %d", pr.getString(1), k).isEqualTo(pr.getString(k));
        }
      }
      assertThat(fr.next()).isFalse();
    }
  }

  @Test
  void textDataRowsArePostgreSqls() throws Exception {
    Properties simple = new Properties();
    simple.setProperty("preferQueryMode", "simple");
    for (String zone : List.of("UTC", "America/New_York")) {
      try (Connection f = floe.connect(simple); Connection p = postgres.connect()) {
        for (Connection c : List.of(f, p)) {
          try (Statement st = c.createStatement()) {
            st.execute("SET TimeZone = '" + zone + "'");
          }
        }
        assertThat(texts(f)).isEqualTo(texts(p));
      }
    }
  }

  private static List<String> texts(Connection c) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM copied ORDER BY k")) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        for (int k = 1; k <= n; k++) {
          out.add(rs.getMetaData().getColumnName(k) + "=" + (k == n ? show(rs.getBytes(k)) : rs.getString(k)));
        }
      }
    }
    return out;
  }

  /** Bytes as text, with the ones that are not printable ASCII as {@code \xNN}. */
  private static String show(byte[] b) {
    if (b == null) {
      return "null";
    }
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      if (x >= 0x20 && x < 0x7f || x == '\n') {
        s.append((char) x);
      } else {
        s.append(String.format("\\x%02x", x & 0xff));
      }
    }
    return s.toString();
  }
}
