package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.PGConnection;

/**
 * pg_stat_activity, pg_cancel_backend and pg_terminate_backend over the wire, with pgjdbc: a connection
 * is shown with its application_name and address; a cancel stops its statement (57014); a terminate ends
 * it with FATAL 57P01 and closes it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ActivityServerTest {
  private static final String SLOW = "SELECT sum(hash(i)) FROM range(100000000000) r(i)";

  @TempDir
  static Path dir;

  private PgTestServer floe;

  @BeforeAll
  void start() throws Exception {
    floe = new PgTestServer(dir.resolve("wh"));
  }

  @AfterAll
  void stop() {
    floe.close();
  }

  private Connection connect(String user, String applicationName) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", user);
    p.setProperty("ApplicationName", applicationName);
    p.setProperty("assumeMinServerVersion", "9.0"); // pgjdbc sends application_name at start-up only then
    return floe.connect(p);
  }

  private static String one(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      assertThat(rs.next()).as(sql).isTrue();
      return rs.getString(1);
    }
  }

  private static void awaitActive(Connection watcher, int pid) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!"active".equals(one(watcher, "SELECT coalesce(max(state), '') FROM pg_stat_activity WHERE pid = " + pid))) {
      assertThat(System.nanoTime()).as("the statement of %d runs", pid).isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  @Test
  void pgStatActivityShowsTheConnectionsApplicationNameAndAddress() throws Exception {
    try (Connection a = connect("tester", "ledger-app"); Connection b = connect("tester", "watcher")) {
      int pid = ((PGConnection) a).getBackendPID();
      assertThat(one(a, "SELECT pg_backend_pid()")).isEqualTo(Integer.toString(pid));
      try (Statement st = b.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM pg_stat_activity "
          + "WHERE pid = " + pid)) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString("application_name")).isEqualTo("ledger-app");
        assertThat(rs.getString("client_addr")).isEqualTo("127.0.0.1");
        assertThat(rs.getInt("client_port")).isPositive();
        assertThat(rs.getString("usename")).isEqualTo("tester");
        assertThat(rs.getString("datname")).isEqualTo("floe");
        assertThat(rs.getString("state")).isEqualTo("idle");
        assertThat(rs.getString("query")).isEqualTo("SELECT pg_backend_pid()");
        assertThat(rs.getTimestamp("backend_start")).isNotNull();
        assertThat(rs.getMetaData().getColumnTypeName(rs.findColumn("backend_start"))).isEqualTo("timestamptz");
        assertThat(rs.getMetaData().getColumnTypeName(rs.findColumn("pid"))).isEqualTo("int4");
        assertThat(rs.next()).isFalse();
      }
      // SET application_name shows at once; the watcher sees itself running its query
      try (Statement st = a.createStatement()) {
        st.execute("SET application_name = 'renamed'");
      }
      assertThat(one(b, "SELECT application_name FROM pg_stat_activity WHERE pid = " + pid)).isEqualTo("renamed");
      assertThat(one(b, "SELECT state || ' ' || application_name FROM pg_catalog.pg_stat_activity "
          + "WHERE pid = pg_backend_pid()")).isEqualTo("active watcher");
    }
  }

  /** Runs the slow query on {@code a} in the background: its one value, or its error's SQLSTATE and message. */
  private static CompletableFuture<String> slowly(Connection a) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return one(a, SLOW);
      } catch (SQLException e) {
        return e.getSQLState() + " " + e.getMessage();
      }
    });
  }

  @Test
  void cancelBackendCancelsARunningStatement() throws Exception {
    try (Connection a = connect("tester", "victim"); Connection b = connect("tester", "killer")) {
      int pid = ((PGConnection) a).getBackendPID();
      CompletableFuture<String> slow = slowly(a);
      awaitActive(b, pid);
      assertThat(one(b, "SELECT pg_cancel_backend(" + pid + ")")).isEqualTo("t");
      assertThat(slow.get(30, TimeUnit.SECONDS)).startsWith("57014 ERROR: canceling statement due to user request");
      assertThat(one(a, "SELECT 1")).isEqualTo("1"); // the connection goes on
    }
  }

  @Test
  void terminateBackendEndsAnIdleConnectionWithFatal57P01() throws Exception {
    try (Connection a = connect("tester", "victim"); Connection b = connect("tester", "killer")) {
      int pid = ((PGConnection) a).getBackendPID();
      try (Statement st = a.createStatement()) {
        st.execute("BEGIN");
        st.execute("SELECT 1");
      }
      assertThat(one(b, "SELECT state FROM pg_stat_activity WHERE pid = " + pid)).isEqualTo("idle in transaction");
      assertThat(one(b, "SELECT pg_terminate_backend(" + pid + ")")).isEqualTo("t");
      assertThatThrownBy(() -> one(a, "SELECT 1")).isInstanceOfSatisfying(SQLException.class, e -> {
        assertThat(e.getSQLState()).isEqualTo("57P01");
        assertThat(e.getMessage()).contains("terminating connection due to administrator command");
      });
      assertThat(a.isClosed()).isTrue();
      // the backend leaves pg_stat_activity as its thread ends, which may be just after the client read the FATAL
      // (as in PostgreSQL, whose backend exits after sending it)
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      String listed = one(b, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid);
      while (!listed.equals("0") && System.nanoTime() < deadline) {
        Thread.sleep(20);
        listed = one(b, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid);
      }
      assertThat(listed).isEqualTo("0");
    }
  }

  @Test
  void terminateBackendEndsARunningStatementWithFatal57P01() throws Exception {
    try (Connection a = connect("tester", "victim"); Connection b = connect("tester", "killer")) {
      int pid = ((PGConnection) a).getBackendPID();
      CompletableFuture<String> slow = slowly(a);
      awaitActive(b, pid);
      assertThat(one(b, "SELECT pg_terminate_backend(" + pid + ")")).isEqualTo("t");
      assertThat(slow.get(30, TimeUnit.SECONDS)).startsWith("57P01 FATAL: terminating connection due to "
          + "administrator command");
      assertThat(a.isClosed()).isTrue();
    }
  }

  @Test
  void anotherRoleMayNotSignalTheBackendButTheSuperuserMay() throws Exception {
    try (Connection a = connect("tester", "victim"); Connection other = connect("other", "nosy");
        Connection owner = connect("floe", "admin")) {
      int pid = ((PGConnection) a).getBackendPID();
      assertThat(one(other, "SHOW is_superuser")).isEqualTo("off");
      assertThat(one(owner, "SHOW is_superuser")).isEqualTo("on");
      assertThatThrownBy(() -> one(other, "SELECT pg_terminate_backend(" + pid + ")"))
          .isInstanceOfSatisfying(SQLException.class, e -> {
            assertThat(e.getSQLState()).isEqualTo("42501");
            assertThat(e.getMessage()).contains("permission denied to terminate process").contains("Only roles with "
                + "privileges of the role whose process is being terminated");
          });
      assertThat(one(owner, "SELECT pg_terminate_backend(" + pid + ")")).isEqualTo("t");
      assertThatThrownBy(() -> one(a, "SELECT 1")).isInstanceOf(SQLException.class);
    }
  }
}
