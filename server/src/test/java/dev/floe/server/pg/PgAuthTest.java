package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.server.auth.Tls;
import dev.floe.server.auth.Users;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
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
        // the users are the catalogs' roles (psql's \du), listed as soon as they are added
        List<String> roles = new java.util.ArrayList<>();
        try (var st = c.createStatement(); var rs = st.executeQuery("SELECT r.rolname, r.rolcanlogin, "
            + "(SELECT count(*) FROM pg_auth_members m WHERE m.member = r.oid) FROM pg_roles r ORDER BY 1")) {
          while (rs.next()) {
            roles.add(rs.getString(1) + "|" + rs.getBoolean(2) + "|" + rs.getLong(3));
          }
        }
        assertThat(roles).containsExactly("alice|true|0", "bob|true|0", "floe|true|0");
      }
      new Users(wh).remove("bob");
      assertThatThrownBy(() -> connect(server, "bob", "b", "")).hasFieldOrPropertyWithValue("SQLState", "28P01");
    }
  }

  @Test
  void md5HashesAreKeptOnlyOnRequestAndScramServesTheRest() throws Exception {
    Path wh = dir.resolve("wh");
    Files.createDirectories(wh);
    new Users(wh).put("scram", "s3cret");
    new Users(wh).put("legacy", "old", true);
    String file = Files.readString(wh.resolve(Users.FILE_NAME));
    assertThat(file).contains("scram\tSCRAM-SHA-256$").containsPattern("(?m)^scram\t\\S+\t-$")
        .containsPattern("(?m)^legacy\t\\S+\tmd5[0-9a-f]{32}$");
    try (Database db = Floe.open(dev.floe.FloeConfig.builder(wh).fenced(true).build());
        PgServer server = PgServer.start(db, PgServer.Config.defaults().withPort(0).withAuth(AuthMethod.MD5))) {
      // under md5, a user with no md5 hash is asked for SCRAM (AuthenticationSASL, 10), as PostgreSQL does
      assertThat(authenticationRequest(server, "scram")).isEqualTo(10);
      assertThat(authenticationRequest(server, "legacy")).isEqualTo(5);
      try (Connection c = connect(server, "scram", "s3cret", "")) {
        assertThat(currentUser(c)).isEqualTo("scram");
      }
      try (Connection c = connect(server, "legacy", "old", "")) {
        assertThat(currentUser(c)).isEqualTo("legacy");
      }
      assertThatThrownBy(() -> connect(server, "scram", "nope", "")).hasFieldOrPropertyWithValue("SQLState", "28P01");
    }
  }

  /** The authentication request the server answers a start-up message for {@code user} with. */
  private static int authenticationRequest(PgServer server, String user) throws IOException {
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
      java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
      java.io.DataOutputStream d = new java.io.DataOutputStream(body);
      d.writeInt(196608);
      for (String f : new String[] {"user", user, "database", "floe"}) {
        d.write(f.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        d.write(0);
      }
      d.write(0);
      java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
      out.writeInt(body.size() + 4);
      out.write(body.toByteArray());
      out.flush();
      java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
      assertThat(in.readByte()).isEqualTo((byte) 'R');
      in.readInt();
      return in.readInt();
    }
  }

  @Test
  void secretsReadableByOthersAreRefused() throws Exception {
    Path wh = dir.resolve("wh");
    Files.createDirectories(wh);
    new Users(wh).put("alice", "pw");
    Path file = wh.resolve(Users.FILE_NAME);
    assertThat(Files.getPosixFilePermissions(file)).containsExactlyInAnyOrder(
        java.nio.file.attribute.PosixFilePermission.OWNER_READ, java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
    Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    try (Database db = Floe.open(dev.floe.FloeConfig.builder(wh).fenced(true).build())) {
      assertThatThrownBy(() -> PgServer.start(db, PgServer.Config.defaults().withPort(0)))
          .isInstanceOf(IOException.class).hasMessageContaining("group or world access").hasMessageContaining("chmod 600");
    }
    Tls.selfSigned(wh.resolve("tls"));
    Path store = wh.resolve("tls").resolve("self-signed.p12");
    assertThat(Files.getPosixFilePermissions(store)).hasSize(2);
    Files.setPosixFilePermissions(store, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw----"));
    assertThatThrownBy(() -> Tls.selfSigned(wh.resolve("tls"))).isInstanceOf(IOException.class)
        .hasMessageContaining("group or world access");
  }

  @Test
  void userNamesTheFileCannotHoldAreRefused() throws Exception {
    Path wh = dir.resolve("wh");
    Files.createDirectories(wh);
    Users users = new Users(wh);
    for (String bad : new String[] {"#comment", "", " lead", "trail ", "tab\there", "new\nline", "nul\0", "x".repeat(64),
        "é".repeat(32)}) {
      assertThatThrownBy(() -> users.put(bad, "pw")).as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("invalid user name");
    }
    users.put("ok.name-with spaces", "pw");
    users.put("x".repeat(63), "pw");
    assertThat(users.names()).containsExactly("ok.name-with spaces", "x".repeat(63));
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
