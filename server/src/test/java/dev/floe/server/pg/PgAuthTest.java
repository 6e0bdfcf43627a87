package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.server.auth.Tls;
import dev.floe.server.auth.Users;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Password authentication (SCRAM-SHA-256, md5, cleartext), TLS, and graceful shutdown, through pgjdbc. */
class PgAuthTest {
  @TempDir
  Path dir;

  private static Connection connect(PgServer server, String user, String password, String extra) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", user);
    if (password != null) {
      p.setProperty("password", password);
    }
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + server.port() + "/floe" + extra, p);
  }

  private static String currentUser(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT current_user")) {
      rs.next();
      return rs.getString(1);
    }
  }

  @ParameterizedTest
  @EnumSource(value = AuthMethod.class, names = {"SCRAM_SHA_256", "MD5", "PASSWORD"})
  void passwordsAreCheckedAndOnlyHashesStored(AuthMethod method) throws Exception {
    Path wh = dir.resolve("wh");
    Files.createDirectories(wh);
    new Users(wh).put("alice", "correct horse");
    assertThat(Files.readString(wh.resolve(Users.FILE_NAME))).doesNotContain("correct horse");
    try (Database db = Floe.open(dev.floe.FloeConfig.builder(wh).fenced(true).build());
        PgServer server = PgServer.start(db, PgServer.Config.defaults().withPort(0).withAuth(method))) {
      try (Connection c = connect(server, "alice", "correct horse", "")) {
        assertThat(currentUser(c)).isEqualTo("alice");
      }
      assertThatThrownBy(() -> connect(server, "alice", "wrong", "")).hasFieldOrPropertyWithValue("SQLState", "28P01")
          .hasMessageContaining("password authentication failed for user \"alice\"");
      assertThatThrownBy(() -> connect(server, "mallory", "correct horse", ""))
          .hasFieldOrPropertyWithValue("SQLState", "28P01");
      // a user added while the server runs can log in at once; a removed one cannot
      new Users(wh).put("bob", "b");
      try (Connection c = connect(server, "bob", "b", "")) {
        assertThat(currentUser(c)).isEqualTo("bob");
      }
      new Users(wh).remove("bob");
      assertThatThrownBy(() -> connect(server, "bob", "b", "")).hasFieldOrPropertyWithValue("SQLState", "28P01");
    }
  }

  @Test
  void repeatedFailuresFromOneAddressAreSlowedDown() throws Exception {
    Path wh = dir.resolve("wh");
    Files.createDirectories(wh);
    new Users(wh).put("alice", "pw");
    try (Database db = Floe.open(dev.floe.FloeConfig.builder(wh).fenced(true).build()); PgServer server = PgServer.start(db,
        PgServer.Config.defaults().withPort(0).withAuth(AuthMethod.SCRAM_SHA_256))) {
      long fast = 0;
      for (int i = 0; i < 3; i++) {
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> connect(server, "alice", "nope", "")).isInstanceOf(SQLException.class);
        fast = Math.max(fast, System.nanoTime() - t0);
      }
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> connect(server, "alice", "nope", "")).hasFieldOrPropertyWithValue("SQLState", "28P01");
      long slowed = System.nanoTime() - t0;
      assertThat(TimeUnit.NANOSECONDS.toMillis(slowed)).isGreaterThanOrEqualTo(900);
      assertThat(slowed).isGreaterThan(fast);
    }
  }

  @Test
  void trustIsForLoopbackAndTheDefault() throws Exception {
    try (Database db = Floe.open(dev.floe.FloeConfig.builder(dir.resolve("wh")).fenced(true).build());
        PgServer server = PgServer.start(db, PgServer.Config.defaults().withPort(0))) {
      try (Connection c = connect(server, "anyone", null, "")) {
        assertThat(currentUser(c)).isEqualTo("anyone");
      }
    }
  }

  @Test
  void tlsWithASelfSignedCertificate() throws Exception {
    Path wh = dir.resolve("wh");
    try (Database db = Floe.open(dev.floe.FloeConfig.builder(wh).fenced(true).build()); PgServer server = PgServer.start(db,
        PgServer.Config.defaults().withPort(0).withTls(Tls.selfSigned(wh.resolve("tls"))))) {
      try (Connection c = connect(server, "t", null, "?sslmode=require")) {
        assertThat(currentUser(c)).isEqualTo("t");
        assertThat(c.unwrap(org.postgresql.PGConnection.class)).isNotNull();
      }
      try (Connection c = connect(server, "t", null, "?sslmode=disable")) {
        assertThat(currentUser(c)).isEqualTo("t"); // plain text is still allowed
      }
    }
    try (Database db = Floe.open(dev.floe.FloeConfig.builder(dir.resolve("wh2")).fenced(true).build());
        PgServer plain = PgServer.start(db, PgServer.Config.defaults().withPort(0))) {
      assertThatThrownBy(() -> connect(plain, "t", null, "?sslmode=require"))
          .hasMessageContaining("does not support SSL");
    }
  }

  @Test
  void shutdownLetsRunningStatementsFinishAndTellsIdleSessions() throws Exception {
    try (Database db = Floe.open(dev.floe.FloeConfig.builder(dir.resolve("wh")).fenced(true).build())) {
      PgServer server = PgServer.start(db, PgServer.Config.defaults().withPort(0));
      Connection idle = connect(server, "idle", null, "");
      Connection busy = connect(server, "busy", null, "");
      CompletableFuture<Long> running = CompletableFuture.supplyAsync(() -> {
        try (Statement st = busy.createStatement();
            ResultSet rs = st.executeQuery("SELECT count(*) FROM range(0, 400000000) r(i) WHERE i % 7 = 3")) {
          rs.next();
          return rs.getLong(1);
        } catch (SQLException e) {
          throw new RuntimeException(e);
        }
      });
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (server.busyConnectionCount() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(10); // until the statement's messages arrive
      }
      Thread.sleep(200); // and it runs (it takes seconds): the shutdown must meet it running
      server.shutdown(Duration.ofSeconds(60));
      assertThat(running.get(60, TimeUnit.SECONDS)).isEqualTo(57142857L);
      assertThatThrownBy(() -> idle.createStatement().executeQuery("SELECT 1")).isInstanceOf(SQLException.class);
      assertThatThrownBy(() -> connect(server, "late", null, "")).isInstanceOf(SQLException.class);
      idle.close();
      busy.close();
    }
  }
}
