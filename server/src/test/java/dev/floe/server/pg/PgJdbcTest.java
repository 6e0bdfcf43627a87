package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** pgjdbc against a real Floe server: what a Java application sees. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PgJdbcTest {
  @TempDir
  static Path dir;
  PgTestServer floe;

  @BeforeAll
  void start() throws Exception {
    floe = new PgTestServer(dir.resolve("wh"));
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE all_types (id integer PRIMARY KEY, b boolean, s smallint, i integer, l bigint, "
          + "r real, d double precision, n numeric(12,3), t text, v varchar(10), dt date, tm time, ts timestamp, "
          + "tz timestamptz, u uuid, by bytea)");
      st.execute("INSERT INTO all_types VALUES (1, true, -3, 42, 9000000000, 1.5, -2.25, 12345.678, 'hé''llo', "
          + "'v', '2024-02-29', '13:14:15.5', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15+02', "
          + "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff10'), "
          + "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)");
    }
  }

  @AfterAll
  void stop() {
    floe.close();
  }

  /** Text (simple), extended text, and binary transfer (server-prepared from the first use). */
  @ParameterizedTest
  @ValueSource(strings = {"simple", "extended", "binary"})
  void everyTypeReadsBack(String mode) throws Exception {
    Properties p = new Properties();
    switch (mode) {
      case "simple" -> p.setProperty("preferQueryMode", "simple");
      case "binary" -> {
        p.setProperty("prepareThreshold", "-1"); // server-prepared at once, so binary transfer is used
        p.setProperty("binaryTransfer", "true");
      }
      default -> p.setProperty("prepareThreshold", "0");
    }
    try (Connection c = floe.connect(p);
        PreparedStatement ps = c.prepareStatement("SELECT * FROM all_types WHERE id = ?")) {
      ps.setInt(1, 1);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getBoolean("b")).isTrue();
        assertThat(rs.getShort("s")).isEqualTo((short) -3);
        assertThat(rs.getInt("i")).isEqualTo(42);
        assertThat(rs.getLong("l")).isEqualTo(9_000_000_000L);
        assertThat(rs.getFloat("r")).isEqualTo(1.5f);
        assertThat(rs.getDouble("d")).isEqualTo(-2.25);
        assertThat(rs.getBigDecimal("n")).isEqualByComparingTo("12345.678");
        assertThat(rs.getString("t")).isEqualTo("hé'llo");
        assertThat(rs.getString("v")).isEqualTo("v");
        assertThat(rs.getObject("dt", LocalDate.class)).isEqualTo(LocalDate.of(2024, 2, 29));
        assertThat(rs.getObject("tm", LocalTime.class)).isEqualTo(LocalTime.of(13, 14, 15, 500_000_000));
        assertThat(rs.getObject("ts", LocalDateTime.class)).isEqualTo(LocalDateTime.of(2024, 2, 29, 13, 14, 15, 123_456_000));
        assertThat(rs.getObject("tz", OffsetDateTime.class).toInstant())
            .isEqualTo(OffsetDateTime.of(2024, 2, 29, 11, 14, 15, 0, ZoneOffset.UTC).toInstant());
        assertThat(rs.getObject("u")).isEqualTo(UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"));
        assertThat(rs.getBytes("by")).containsExactly(0, 0xff, 0x10);
        ResultSetMetaData md = rs.getMetaData();
        assertThat(md.getColumnType(md.getColumnCount())).isEqualTo(Types.BINARY);
        assertThat(md.getColumnTypeName(8)).isEqualTo("numeric");
        assertThat(md.getPrecision(8)).isEqualTo(12);
        assertThat(md.getScale(8)).isEqualTo(3);
        assertThat(md.getColumnTypeName(9)).isEqualTo("text");
        assertThat(rs.next()).isFalse();
      }
      ps.setInt(1, 2);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        for (int k = 2; k <= rs.getMetaData().getColumnCount(); k++) {
          assertThat(rs.getObject(k)).as("column %d", k).isNull();
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"text", "binary"})
  void parametersOfEveryTypeBindAsPostgreSqlDoes(String transfer) throws Exception {
    Properties p = new Properties();
    p.setProperty("prepareThreshold", transfer.equals("binary") ? "-1" : "0");
    p.setProperty("binaryTransfer", Boolean.toString(transfer.equals("binary")));
    String table = "params_" + transfer;
    try (Connection c = floe.connect(p)) {
      try (Statement st = c.createStatement()) {
        st.execute("CREATE TABLE " + table + " (id bigint, b boolean, s smallint, r real, d double precision, "
            + "n numeric(10,2), t text, dt date, ts timestamp, tz timestamptz, u uuid, by bytea)");
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table
          + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
        ps.setLong(1, 7);
        ps.setBoolean(2, false);
        ps.setShort(3, (short) 12);
        ps.setFloat(4, 0.25f);
        ps.setDouble(5, 1e300);
        ps.setBigDecimal(6, new BigDecimal("-12.34"));
        ps.setString(7, "it's; -- not SQL $1");
        ps.setDate(8, Date.valueOf("2023-12-31"));
        ps.setTimestamp(9, Timestamp.valueOf("2023-12-31 23:59:58.25"));
        ps.setObject(10, OffsetDateTime.of(2023, 12, 31, 23, 0, 0, 0, ZoneOffset.ofHours(-5)));
        ps.setObject(11, UUID.fromString("00000000-0000-0000-0000-000000000001"));
        ps.setBytes(12, new byte[] {1, 2, (byte) 0xfe});
        assertThat(ps.executeUpdate()).isEqualTo(1);
        ps.setLong(1, 8);
        for (int k = 2; k <= 12; k++) {
          ps.setNull(k, Types.OTHER);
        }
        ps.setNull(2, Types.BOOLEAN);
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT * FROM " + table + " WHERE id = ? AND t = ?")) {
        ps.setLong(1, 7);
        ps.setString(2, "it's; -- not SQL $1");
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getBoolean("b")).isFalse();
          assertThat(rs.getShort("s")).isEqualTo((short) 12);
          assertThat(rs.getFloat("r")).isEqualTo(0.25f);
          assertThat(rs.getDouble("d")).isEqualTo(1e300);
          assertThat(rs.getBigDecimal("n")).isEqualByComparingTo("-12.34");
          assertThat(rs.getObject("dt", LocalDate.class)).isEqualTo(LocalDate.of(2023, 12, 31));
          assertThat(rs.getObject("ts", LocalDateTime.class)).isEqualTo(LocalDateTime.of(2023, 12, 31, 23, 59, 58, 250_000_000));
          assertThat(rs.getObject("tz", OffsetDateTime.class).toInstant())
              .isEqualTo(OffsetDateTime.of(2024, 1, 1, 4, 0, 0, 0, ZoneOffset.UTC).toInstant());
          assertThat(rs.getObject("u")).isEqualTo(UUID.fromString("00000000-0000-0000-0000-000000000001"));
          assertThat(rs.getBytes("by")).containsExactly(1, 2, 0xfe);
        }
      }
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*), count(b), count(t) FROM " + table + " WHERE id = 8")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(1);
        assertThat(rs.getInt(2)).isZero();
        assertThat(rs.getInt(3)).isZero();
      }
    }
  }

  @Test
  void batchesReportEachCount() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE batch (id integer, name text)");
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO batch VALUES (?, ?)")) {
        for (int i = 0; i < 20; i++) {
          ps.setInt(1, i);
          ps.setString(2, "n" + i);
          ps.addBatch();
        }
        assertThat(ps.executeBatch()).hasSize(20).containsOnly(1);
      }
      st.addBatch("UPDATE batch SET name = 'x' WHERE id < 5");
      st.addBatch("DELETE FROM batch WHERE id >= 15");
      assertThat(st.executeBatch()).containsExactly(5, 5);
      try (ResultSet rs = st.executeQuery("SELECT count(*), count(*) FILTER (WHERE name = 'x') FROM batch")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(15);
        assertThat(rs.getInt(2)).isEqualTo(5);
      }
    }
  }

  @Test
  void fetchSizeStreamsThroughSuspendedPortals() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      c.setAutoCommit(false); // pgjdbc fetches in chunks only inside a transaction
      st.setFetchSize(100);
      long sum = 0;
      int n = 0;
      try (ResultSet rs = st.executeQuery("SELECT i FROM range(0, 10000) r(i)")) {
        while (rs.next()) {
          sum += rs.getLong(1);
          n++;
        }
      }
      c.commit();
      assertThat(n).isEqualTo(10000);
      assertThat(sum).isEqualTo(49995000L);
    }
  }

  @Test
  void errorsCarrySqlStateAndPosition() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      assertThatThrownBy(() -> st.executeQuery("SELECT * FROM no_such_table"))
          .isInstanceOfSatisfying(SQLException.class, e -> {
            assertThat(e.getSQLState()).isEqualTo("42P01");
            assertThat(((org.postgresql.util.PSQLException) e).getServerErrorMessage().getPosition()).isEqualTo(15);
          });
      assertThatThrownBy(() -> st.executeQuery("SELECT 1/0")).hasFieldOrPropertyWithValue("SQLState", "22012");
      assertThatThrownBy(() -> st.execute("INSERT INTO all_types (id) VALUES (1)"))
          .isInstanceOfSatisfying(SQLException.class, e -> {
            assertThat(e.getSQLState()).isEqualTo("23505");
            assertThat(((org.postgresql.util.PSQLException) e).getServerErrorMessage().getDetail())
                .isEqualTo("Key (id)=(1) already exists.");
          });
      // the connection is still usable
      try (ResultSet rs = st.executeQuery("SELECT 1")) {
        assertThat(rs.next()).isTrue();
      }
    }
  }

  @Test
  void failedTransactionBlockRefusesUntilRollback() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      st.executeQuery("SELECT 1").close();
      assertThatThrownBy(() -> st.executeQuery("SELECT nope FROM all_types")).hasFieldOrPropertyWithValue("SQLState", "42703");
      assertThatThrownBy(() -> st.executeQuery("SELECT 1")).hasFieldOrPropertyWithValue("SQLState", "25P02");
      c.rollback();
      try (ResultSet rs = st.executeQuery("SELECT 2")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(2);
      }
      c.setAutoCommit(true);
    }
  }

  /** Several statements in one simple query run as one implicit transaction: all of them or none. */
  @Test
  void aMultiStatementQueryIsOneTransaction() throws Exception {
    Properties simple = new Properties();
    simple.setProperty("preferQueryMode", "simple");
    try (Connection c = floe.connect(simple); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE implicit_tx (id int)");
      assertThatThrownBy(() -> st.execute("INSERT INTO implicit_tx VALUES (1); INSERT INTO implicit_tx VALUES (2); "
          + "SELECT 1/0")).hasFieldOrPropertyWithValue("SQLState", "22012");
      assertThat(one(st, "SELECT count(*) FROM implicit_tx")).isEqualTo("0");
      st.execute("INSERT INTO implicit_tx VALUES (1); UPDATE implicit_tx SET id = id + 1; INSERT INTO implicit_tx "
          + "VALUES (5)");
      assertThat(one(st, "SELECT string_agg(id::text, ',' ORDER BY id) FROM implicit_tx")).isEqualTo("2,5");
      // with DDL, statements run one by one, as before (DDL is not transactional in Floe)
      assertThatThrownBy(() -> st.execute("CREATE TABLE implicit_tx2 (id int); INSERT INTO implicit_tx2 VALUES (1); "
          + "SELECT 1/0")).hasFieldOrPropertyWithValue("SQLState", "22012");
      assertThat(one(st, "SELECT count(*) FROM implicit_tx2")).isEqualTo("1");
      // a script with a statement that does not parse runs as before: its error, and the connection lives on
      // (found by ProtocolFuzzTest: the implicit-transaction check must not fail the connection)
      assertThatThrownBy(() -> st.execute("SET extra_f; SELECT 1")).hasFieldOrPropertyWithValue("SQLState", "42601");
      assertThat(one(st, "SELECT 2")).isEqualTo("2");
    }
  }

  /** BEGIN..COMMIT is atomic across tables and isolated; ROLLBACK and ROLLBACK TO SAVEPOINT undo writes. */
  @Test
  void transactionBlocksAreAtomicAndIsolated() throws Exception {
    try (Connection a = floe.connect(); Connection b = floe.connect(); Statement sa = a.createStatement();
        Statement sb = b.createStatement()) {
      sa.execute("CREATE TABLE tx_a (id int, balance int) WITH (format_version = 3)");
      sa.execute("CREATE TABLE tx_b (id int, balance int)");
      sa.execute("INSERT INTO tx_a VALUES (1, 100), (2, 100)");
      sa.execute("INSERT INTO tx_b VALUES (1, 100)");
      a.setAutoCommit(false);
      sa.execute("UPDATE tx_a SET balance = balance - 10 WHERE id = 1");
      sa.execute("UPDATE tx_b SET balance = balance + 10 WHERE id = 1");
      assertThat(one(sa, "SELECT balance FROM tx_a WHERE id = 1")).isEqualTo("90"); // its own write
      assertThat(one(sb, "SELECT balance FROM tx_a WHERE id = 1")).isEqualTo("100"); // not yet others'
      a.commit();
      assertThat(one(sb, "SELECT (SELECT balance FROM tx_a WHERE id = 1) || '/' || (SELECT balance FROM tx_b)"))
          .isEqualTo("90/110");

      sa.execute("DELETE FROM tx_a");
      a.rollback();
      assertThat(one(sb, "SELECT count(*) FROM tx_a")).isEqualTo("2");

      sa.execute("INSERT INTO tx_a VALUES (3, 1)");
      var sp = a.setSavepoint("s");
      sa.execute("INSERT INTO tx_a VALUES (4, 1)");
      a.rollback(sp);
      a.commit();
      assertThat(one(sb, "SELECT string_agg(id::text, ',' ORDER BY id) FROM tx_a")).isEqualTo("1,2,3");

      // a lost update: both read the row, both update it; the second COMMIT fails and applies nothing
      b.setAutoCommit(false);
      assertThat(one(sa, "SELECT balance FROM tx_a WHERE id = 2")).isEqualTo("100");
      assertThat(one(sb, "SELECT balance FROM tx_a WHERE id = 2")).isEqualTo("100");
      sa.execute("UPDATE tx_a SET balance = balance + 1 WHERE id = 2");
      sb.execute("UPDATE tx_a SET balance = balance + 1 WHERE id = 2");
      a.commit();
      assertThatThrownBy(b::commit).hasFieldOrPropertyWithValue("SQLState", "40001");
      assertThat(one(sb, "SELECT balance FROM tx_a WHERE id = 2")).isEqualTo("101");
      b.commit();
      a.setAutoCommit(true);
      b.setAutoCommit(true);
    }
  }

  @Test
  void savepointsFollowPostgreSql() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      var sp = c.setSavepoint("a");
      assertThatThrownBy(() -> st.executeQuery("SELECT 1/0")).hasFieldOrPropertyWithValue("SQLState", "22012");
      c.rollback(sp);
      try (ResultSet rs = st.executeQuery("SELECT 3")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(3);
      }
      assertThatThrownBy(() -> st.execute("ROLLBACK TO SAVEPOINT nope")).hasFieldOrPropertyWithValue("SQLState", "3B001");
      c.rollback();
      c.setAutoCommit(true);
      assertThatThrownBy(() -> st.execute("SAVEPOINT x")).hasFieldOrPropertyWithValue("SQLState", "25P01");
    }
  }

  @Test
  void settingsSetShowReset() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      assertThat(one(st, "SHOW server_version")).isEqualTo("15.0");
      assertThat(one(st, "SHOW client_encoding")).isEqualTo("UTF8");
      st.execute("SET application_name = 'my app'");
      assertThat(one(st, "SHOW application_name")).isEqualTo("my app");
      assertThat(c.getClientInfo("ApplicationName")).isEqualTo("my app");
      st.execute("RESET application_name");
      assertThat(one(st, "SHOW application_name")).isEmpty();
      assertThatThrownBy(() -> st.execute("SET no_such_setting = 1")).hasFieldOrPropertyWithValue("SQLState", "42704");
      assertThatThrownBy(() -> st.execute("SET client_encoding = 'LATIN1'")).hasFieldOrPropertyWithValue("SQLState", "22023");
      assertThatThrownBy(() -> st.execute("SHOW myext.flag")).hasFieldOrPropertyWithValue("SQLState", "42704");
      assertThatThrownBy(() -> one(st, "SELECT current_setting('myext.flag')"))
          .hasFieldOrPropertyWithValue("SQLState", "42704");
      assertThat(one(st, "SELECT current_setting('myext.flag', true) IS NULL")).isEqualTo("t");
      st.execute("SET myext.flag TO 'on'");
      assertThat(one(st, "SHOW myext.flag")).isEqualTo("on");
      assertThat(one(st, "SELECT current_setting('MyExt.Flag')")).isEqualTo("on");
      st.execute("RESET myext.flag"); // it exists from now on, empty
      assertThat(one(st, "SELECT current_setting('myext.flag')")).isEmpty();
      assertThat(one(st, "SELECT current_setting('work_mem') || ' ' || current_setting('server_version_num')"))
          .isEqualTo("4MB 150000");
      assertThat(one(st, "SHOW lc_collate")).isEqualTo("C");
      assertThatThrownBy(() -> st.execute("SET lc_collate = 'C'")).hasFieldOrPropertyWithValue("SQLState", "55P02");
      assertThatThrownBy(() -> st.execute("SET lc_numeric = 'de_DE.UTF-8'"))
          .hasFieldOrPropertyWithValue("SQLState", "22023");
      st.execute("SET lc_messages = 'C'");
      assertThat(one(st, "SELECT setting || ' ' || context FROM pg_settings WHERE name = 'lc_ctype'"))
          .isEqualTo("C internal");
      assertThat(one(st, "SELECT setting FROM pg_settings WHERE name = 'DateStyle'")).isEqualTo("ISO, MDY");
      assertThat(one(st, "SELECT count(*) FROM pg_settings WHERE name = 'myext.flag'")).isEqualTo("1");
      st.execute("SET TIME ZONE 'Europe/Berlin'");
      assertThat(one(st, "SHOW TimeZone")).isEqualTo("Europe/Berlin");
      assertThat(one(st, "SELECT CAST('2024-01-01 12:00:00+00' AS timestamptz)::text")).isNotNull();
      try (ResultSet rs = st.executeQuery("SELECT TIMESTAMPTZ '2024-07-01 12:00:00+00'")) {
        rs.next();
        assertThat(rs.getString(1)).isEqualTo("2024-07-01 14:00:00+02");
      }
      st.execute("SET TIME ZONE 'UTC'");
    }
  }

  @Test
  void searchPathChoosesTheSchemaOfUnqualifiedNames() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA IF NOT EXISTS other");
      st.execute("CREATE TABLE other.only_there (x integer)");
      st.execute("INSERT INTO other.only_there VALUES (5)");
      assertThatThrownBy(() -> st.executeQuery("SELECT x FROM only_there")).hasFieldOrPropertyWithValue("SQLState", "42P01");
      st.execute("SET search_path TO other, public");
      assertThat(one(st, "SELECT x FROM only_there")).isEqualTo("5");
      c.setSchema("public");
      assertThat(one(st, "SHOW search_path")).isEqualTo("public");
    }
  }

  @Test
  void cancelInterruptsARunningQuery() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      CompletableFuture<Void> canceller = CompletableFuture.runAsync(() -> {
        try {
          Thread.sleep(500);
          st.cancel();
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      });
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> st.executeQuery("SELECT count(*) FROM range(0, 3000000000) a(i), range(0, 10) b(j) "
          + "WHERE i * j % 7 = 3")).hasFieldOrPropertyWithValue("SQLState", "57014");
      canceller.get(10, TimeUnit.SECONDS);
      assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).isLessThan(20);
      assertThat(one(st, "SELECT 'alive'")).isEqualTo("alive");
    }
  }

  @Test
  void statementTimeoutCancels() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("SET statement_timeout = '300ms'");
      assertThatThrownBy(() -> st.executeQuery("SELECT count(*) FROM range(0, 3000000000) a(i) WHERE i % 7 = 3"))
          .isInstanceOfSatisfying(SQLException.class, e -> {
            assertThat(e.getSQLState()).isEqualTo("57014");
            assertThat(e.getMessage()).contains("statement timeout");
          });
      st.execute("SET statement_timeout = 0");
      assertThat(one(st, "SELECT 1")).isEqualTo("1");
    }
  }

  @Test
  void idleInTransactionTimeoutEndsTheSession() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("SET idle_in_transaction_session_timeout = '200ms'");
      c.setAutoCommit(false);
      assertThat(one(st, "SELECT 1")).isEqualTo("1");
      Thread.sleep(1000);
      assertThatThrownBy(() -> st.executeQuery("SELECT 2")).isInstanceOf(SQLException.class);
    }
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      // outside a transaction block, idling is fine
      st.execute("SET idle_in_transaction_session_timeout = '200ms'");
      Thread.sleep(500);
      assertThat(one(st, "SELECT 3")).isEqualTo("3");
    }
  }

  @Test
  void unknownDatabaseIsRefused() {
    assertThatThrownBy(() -> java.sql.DriverManager.getConnection(
        "jdbc:postgresql://127.0.0.1:" + floe.server.port() + "/nope", "tester", ""))
        .hasFieldOrPropertyWithValue("SQLState", "3D000");
  }

  @Test
  void connectionsOverTheCapAreRefusedWith53300(@TempDir Path other) throws Exception {
    try (PgTestServer small = new PgTestServer(other.resolve("wh"),
        PgServer.Config.defaults().withPort(0).withMaxConnections(2))) {
      List<Connection> open = new ArrayList<>();
      try {
        open.add(small.connect());
        open.add(small.connect());
        assertThatThrownBy(small::connect).hasFieldOrPropertyWithValue("SQLState", "53300");
        open.remove(0).close();
        // the slot is free again once the server has seen the close
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        Connection again = null;
        while (again == null) {
          try {
            again = small.connect();
          } catch (SQLException e) {
            if (System.nanoTime() > deadline) {
              throw e;
            }
            Thread.sleep(20);
          }
        }
        open.add(again);
      } finally {
        for (Connection c : open) {
          c.close();
        }
      }
    }
  }

  @Test
  void multipleStatementsInOneSimpleQuery() throws Exception {
    Properties p = new Properties();
    p.setProperty("preferQueryMode", "simple");
    try (Connection c = floe.connect(p); Statement st = c.createStatement()) {
      boolean rows = st.execute("CREATE TABLE multi (x integer); INSERT INTO multi VALUES (1), (2); SELECT sum(x) FROM multi");
      assertThat(rows).isFalse();
      assertThat(st.getUpdateCount()).isEqualTo(0);
      assertThat(st.getMoreResults()).isFalse();
      assertThat(st.getUpdateCount()).isEqualTo(2);
      assertThat(st.getMoreResults()).isTrue();
      try (ResultSet rs = st.getResultSet()) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(3);
      }
    }
  }

  /** CREATE TABLE AS reports the rows it wrote, as PostgreSQL does (tag SELECT 5: pgjdbc's update count). */
  @ParameterizedTest
  @ValueSource(strings = {"simple", "extended"})
  void createTableAsReportsTheRowsWritten(String mode) throws Exception {
    Properties p = new Properties();
    p.setProperty("preferQueryMode", mode);
    try (Connection c = floe.connect(p); Statement st = c.createStatement()) {
      assertThat(st.executeUpdate("CREATE TABLE ctas_" + mode + " AS SELECT * FROM generate_series(1, 5) AS g(x)"))
          .isEqualTo(5);
      assertThat(st.executeUpdate("CREATE TABLE ctas_none_" + mode + " AS SELECT 1 AS x WHERE false")).isZero();
      assertThat(st.executeUpdate("CREATE TABLE ctas_nodata_" + mode + " AS SELECT 1 AS x WITH NO DATA")).isZero();
    }
  }

  /**
   * A table with a durable tail over the wire: INSERTs, batches and COPY are acknowledged after the
   * log's fsync and numbered; a transaction block cannot append; rows stay readable when sealed.
   */
  @Test
  void tailTableTakesInsertsBatchesAndCopy() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE ticks (ts timestamptz NOT NULL, sym text, px numeric(10,2)) "
          + "WITH (tail = true, sort_by = 'ts')");
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO ticks VALUES (?, ?, ?)")) {
        for (int i = 0; i < 10; i++) {
          ps.setObject(1, OffsetDateTime.of(2026, 1, 1, 0, 0, i, 0, ZoneOffset.UTC));
          ps.setString(2, i % 2 == 0 ? "A" : "B");
          ps.setBigDecimal(3, new BigDecimal(i + ".25"));
          ps.addBatch();
        }
        assertThat(ps.executeBatch()).hasSize(10).containsOnly(1);
      }
      var copy = c.unwrap(org.postgresql.PGConnection.class).getCopyAPI();
      assertThat(copy.copyIn("COPY ticks FROM STDIN WITH (FORMAT csv)", new java.io.StringReader(
          "2026-01-02 00:00:00+00,C,1.5\n2026-01-02 00:00:01+00,C,\n"))).isEqualTo(2);
      try (ResultSet rs = st.executeQuery("SELECT count(*), min(_offset), max(_offset), count(DISTINCT _offset), "
          + "sum(px) FROM ticks")) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(12);
        assertThat(rs.getLong(2)).isZero();
        assertThat(rs.getLong(3)).isEqualTo(11);
        assertThat(rs.getLong(4)).isEqualTo(12);
        assertThat(rs.getBigDecimal(5)).isEqualByComparingTo("49.00");
      }
      c.setAutoCommit(false); // as many applications run: the appends are made at COMMIT
      st.executeUpdate("INSERT INTO ticks VALUES (now(), 'X', 1)");
      c.rollback();
      st.executeUpdate("INSERT INTO ticks VALUES (now(), 'Y', 1)");
      c.commit();
      c.setAutoCommit(true);
      try (ResultSet rs = st.executeQuery("SELECT count(*) FILTER (WHERE sym = 'X'), max(_offset) FILTER (WHERE sym = 'Y') "
          + "FROM ticks")) {
        rs.next();
        assertThat(rs.getLong(1)).isZero();
        assertThat(rs.getLong(2)).isEqualTo(12);
      }
      st.executeUpdate("DELETE FROM ticks WHERE sym = 'Y'");
      st.executeUpdate("UPDATE ticks SET px = 0 WHERE sym = 'B'"); // seals, then updates the files
      st.executeUpdate("INSERT INTO ticks (ts, sym) VALUES (TIMESTAMPTZ '2026-01-03 00:00:00+00', 'D')");
      try (ResultSet rs = st.executeQuery("SELECT sum(px), max(_offset) FILTER (WHERE sym = 'D') FROM ticks")) {
        rs.next();
        assertThat(rs.getBigDecimal(1)).isEqualByComparingTo("22.75");
        assertThat(rs.getLong(2)).isEqualTo(13); // after Y (12), deleted since
      }
    }
  }

  @Test
  void copyInAndOutWithCopyManager() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE copied (id integer NOT NULL, s text, d date)");
      var copy = c.unwrap(org.postgresql.PGConnection.class).getCopyAPI();
      long n = copy.copyIn("COPY copied FROM STDIN", new java.io.StringReader(
          "1\ttab\\there\t2024-01-01\n2\t\\N\t\\N\n3\t\t2024-01-03\n"));
      assertThat(n).isEqualTo(3);
      n = copy.copyIn("COPY copied (id, s) FROM STDIN WITH (FORMAT csv, HEADER)", new java.io.StringReader(
          "id,s\n4,\"a,b\"\n5,\n6,\"\"\n"));
      assertThat(n).isEqualTo(3);
      try (ResultSet rs = st.executeQuery("SELECT count(*) FILTER (WHERE s IS NULL), count(*) FILTER (WHERE s = ''), "
          + "max(s) FILTER (WHERE id = 1), max(s) FILTER (WHERE id = 4) FROM copied")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(2); // rows 2 and 5
        assertThat(rs.getInt(2)).isEqualTo(2); // rows 3 and 6
        assertThat(rs.getString(3)).isEqualTo("tab\there");
        assertThat(rs.getString(4)).isEqualTo("a,b");
      }
      java.io.StringWriter text = new java.io.StringWriter();
      assertThat(copy.copyOut("COPY (SELECT * FROM copied WHERE id <= 3 ORDER BY id) TO STDOUT", text)).isEqualTo(3);
      assertThat(text.toString()).isEqualTo("1\ttab\\there\t2024-01-01\n2\t\\N\t\\N\n3\t\t2024-01-03\n");
      java.io.StringWriter csv = new java.io.StringWriter();
      copy.copyOut("COPY (SELECT id, s FROM copied WHERE id >= 4 ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)", csv);
      assertThat(csv.toString()).isEqualTo("id,s\n4,\"a,b\"\n5,\n6,\"\"\n");
      assertThatThrownBy(() -> copy.copyIn("COPY copied FROM STDIN", new java.io.StringReader("x\ty\t\\N\n")))
          .isInstanceOfSatisfying(SQLException.class, e -> {
            assertThat(e.getSQLState()).isEqualTo("22P02");
            assertThat(e.getMessage()).contains("invalid input syntax for type integer: \"x\"");
          });
      assertThatThrownBy(() -> copy.copyIn("COPY copied FROM STDIN", new java.io.StringReader("7\ty\n")))
          .hasFieldOrPropertyWithValue("SQLState", "22P04");
      assertThatThrownBy(() -> copy.copyIn("COPY copied FROM STDIN", new java.io.StringReader("\\N\ty\t\\N\n")))
          .hasFieldOrPropertyWithValue("SQLState", "23502");
      assertThat(one(st, "SELECT count(*) FROM copied")).isEqualTo("6"); // failed COPYs added nothing
    }
  }

  @Test
  void databaseMetaDataDescribesTablesAsPostgreSqlDoes() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA IF NOT EXISTS meta");
      st.execute("CREATE TABLE meta.items (a integer, b text NOT NULL, c numeric(10,2), d varchar(20), "
          + "PRIMARY KEY (a, b))");
      var md = c.getMetaData();
      assertThat(md.getDatabaseProductName()).isEqualTo("PostgreSQL");
      List<String> schemas = new ArrayList<>();
      try (ResultSet rs = md.getSchemas()) {
        while (rs.next()) {
          schemas.add(rs.getString("TABLE_SCHEM"));
        }
      }
      assertThat(schemas).contains("meta", "public", "pg_catalog", "information_schema");
      try (ResultSet rs = md.getTables(null, "meta", "%", new String[] {"TABLE"})) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString("TABLE_NAME")).isEqualTo("items");
        assertThat(rs.getString("TABLE_TYPE")).isEqualTo("TABLE");
        assertThat(rs.next()).isFalse();
      }
      List<String> columns = new ArrayList<>();
      try (ResultSet rs = md.getColumns(null, "meta", "items", "%")) {
        while (rs.next()) {
          columns.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME") + ":" + rs.getInt("DATA_TYPE")
              + ":" + rs.getInt("COLUMN_SIZE") + ":" + rs.getInt("DECIMAL_DIGITS") + ":" + rs.getString("IS_NULLABLE"));
        }
      }
      assertThat(columns).containsExactly("a:int4:4:10:0:NO", "b:text:12:2147483647:0:NO", "c:numeric:2:10:2:YES",
          "d:varchar:12:20:0:YES");
      List<String> keys = new ArrayList<>();
      try (ResultSet rs = md.getPrimaryKeys(null, "meta", "items")) {
        while (rs.next()) {
          keys.add(rs.getString("COLUMN_NAME") + "#" + rs.getInt("KEY_SEQ") + "@" + rs.getString("PK_NAME"));
        }
      }
      assertThat(keys).containsExactly("a#1@items_pkey", "b#2@items_pkey");
    }
  }

  @Test
  void aggregatesOfIntegerColumnsHavePostgreSqlTypes() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE agg (i integer, s smallint, b bigint)");
      st.execute("INSERT INTO agg VALUES (1, 1, 10), (2, 2, 20)");
      try (ResultSet rs = st.executeQuery("SELECT sum(i), sum(s), sum(b), avg(i) AS mean, count(*) FROM agg")) {
        ResultSetMetaData md = rs.getMetaData();
        assertThat(md.getColumnTypeName(1)).isEqualTo("int8");
        assertThat(md.getColumnTypeName(2)).isEqualTo("int8");
        assertThat(md.getColumnTypeName(3)).isEqualTo("numeric");
        assertThat(md.getColumnTypeName(4)).isEqualTo("numeric");
        assertThat(md.getColumnName(1)).isEqualTo("sum");
        assertThat(md.getColumnName(4)).isEqualTo("mean");
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(3);
        assertThat(rs.getString(4)).isEqualTo("1.5000000000000000");
        assertThat(rs.getLong(5)).isEqualTo(2);
      }
    }
  }

  @Test
  void describedParametersHaveTheTypesTheirContextDecides() throws Exception {
    try (Connection c = floe.connect()) {
      try (PreparedStatement ps = c.prepareStatement("SELECT * FROM all_types WHERE l = ? AND t = ? AND dt < ?")) {
        java.sql.ParameterMetaData md = ps.getParameterMetaData();
        assertThat(List.of(md.getParameterTypeName(1), md.getParameterTypeName(2), md.getParameterTypeName(3)))
            .containsExactly("int8", "text", "date");
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO all_types (id, n, tz) VALUES (?, ?, ?)")) {
        java.sql.ParameterMetaData md = ps.getParameterMetaData();
        assertThat(List.of(md.getParameterTypeName(1), md.getParameterTypeName(2), md.getParameterTypeName(3)))
            .containsExactly("int4", "numeric", "timestamptz");
      }
    }
  }

  /** currval and lastval belong to a connection (including its cursors), as in PostgreSQL. */
  @Test
  void currvalAndLastvalArePerConnection() throws Exception {
    try (Connection a = floe.connect(); Connection b = floe.connect(); Statement sa = a.createStatement();
        Statement sb = b.createStatement()) {
      sa.execute("CREATE SEQUENCE per_connection");
      assertThatThrownBy(() -> one(sa, "SELECT lastval()"))
          .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("55000"));
      assertThat(one(sa, "SELECT nextval('per_connection')")).isEqualTo("1");
      assertThat(one(sb, "SELECT nextval('per_connection')")).isEqualTo("2");
      assertThat(one(sa, "SELECT currval('per_connection')")).isEqualTo("1");
      assertThat(one(sb, "SELECT lastval()")).isEqualTo("2");
      // A cursor runs in a session of its own, which shares the connection's values.
      a.setAutoCommit(false);
      sa.execute("DECLARE c CURSOR FOR SELECT currval('per_connection')");
      assertThat(one(sa, "FETCH c")).isEqualTo("1");
      sa.execute("CLOSE c");
      a.setAutoCommit(true);
      sa.execute("DISCARD PLANS"); // no effect on sequences (pools send it between clients)
      sa.execute("DISCARD TEMP");
      assertThat(one(sa, "SELECT currval('per_connection')")).isEqualTo("1");
      sa.execute("DISCARD SEQUENCES");
      assertThatThrownBy(() -> one(sa, "SELECT currval('per_connection')"))
          .isInstanceOfSatisfying(SQLException.class, e -> {
            assertThat(e.getSQLState()).isEqualTo("55000");
            assertThat(e.getMessage()).contains("currval of sequence \"per_connection\" is not yet defined in this "
                + "session").doesNotContain("\tat ");
          });
      assertThat(one(sb, "SELECT currval('per_connection')")).isEqualTo("2");
      sb.execute("DROP SEQUENCE per_connection");
    }
  }

  /** RowDescription names the table column a result column passes through; pgjdbc looks it up. */
  @Test
  void resultColumnsNameTheTableColumnsTheyComeFrom() throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE origin_t (id serial PRIMARY KEY, name text)");
      st.execute("INSERT INTO origin_t (name) VALUES ('a')");
      for (String sql : List.of("SELECT name, id, id + 1 AS next FROM origin_t",
          "SELECT o.name, o.id, o.id + 1 AS next FROM origin_t AS o WHERE o.id > 0")) {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
          org.postgresql.PGResultSetMetaData md = (org.postgresql.PGResultSetMetaData) rs.getMetaData();
          assertThat(md.getBaseTableName(1)).as(sql).isEqualTo("origin_t");
          assertThat(md.getBaseSchemaName(1)).as(sql).isEqualTo("public");
          assertThat(md.getBaseColumnName(1)).as(sql).isEqualTo("name");
          assertThat(md.getBaseColumnName(2)).as(sql).isEqualTo("id");
          assertThat(md.getBaseTableName(3)).as(sql).isEmpty();
          assertThat(rs.getMetaData().isAutoIncrement(2)).as(sql).isTrue();
          assertThat(rs.getMetaData().isAutoIncrement(1)).as(sql).isFalse();
        }
      }
      st.execute("DROP TABLE origin_t");
    }
  }

  private static String one(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      assertThat(rs.next()).as(sql).isTrue();
      return rs.getString(1);
    }
  }
}
