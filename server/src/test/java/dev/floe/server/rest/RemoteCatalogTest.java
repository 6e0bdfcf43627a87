package dev.floe.server.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.FloeException;
import dev.floe.RemoteCatalog;
import dev.floe.Session;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Floe on a remote REST catalog: a second Floe ({@code b}) whose tables, views and namespaces are those a first
 * Floe ({@code a}) serves over its REST endpoint, with SQL on both sides seeing each other's commits.
 */
class RemoteCatalogTest {
  @TempDir
  Path dir;
  Database a;
  RestServer server;
  Database b;

  @BeforeEach
  void start() throws java.io.IOException {
    a = Floe.open(FloeConfig.builder(dir.resolve("a")).fenced(true).build());
    server = RestServer.start(a, RestServer.Config.defaults().withPort(0));
    b = Floe.open(FloeConfig.builder(dir.resolve("b")).fenced(true).remoteCatalog(remote()).build());
  }

  RemoteCatalog remote() {
    return RemoteCatalog.at(server.uri()).with("warehouse", dir.resolve("a").toAbsolutePath().toString());
  }

  @AfterEach
  void stop() {
    if (b != null) {
      b.close();
    }
    server.close();
    a.close();
  }

  static List<String> rows(Database db, String sql) {
    return dev.floe.testing.Rows.of(db, sql);
  }

  static void sql(Database db, String... statements) {
    try (Session s = db.connect()) {
      for (String statement : statements) {
        s.sql(statement).close();
      }
    }
  }

  @Test
  void tablesWrittenThroughTheRemoteCatalogAreTheServersTables() {
    sql(b, "CREATE TABLE t (id bigint PRIMARY KEY, v text)",
        "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
        "UPDATE t SET v = 'TWO' WHERE id = 2",
        "DELETE FROM t WHERE id = 3");
    assertThat(rows(b, "SELECT * FROM t ORDER BY id")).containsExactly("1|one", "2|TWO");
    assertThat(rows(a, "SELECT * FROM t ORDER BY id")).containsExactly("1|one", "2|TWO");
    // the table lives in the serving warehouse; the client's directory keeps only its own state
    assertThat(dir.resolve("a").resolve("public").resolve("t").resolve("metadata")).isDirectory();
    assertThat(dir.resolve("b").resolve("public")).doesNotExist();

    sql(a, "INSERT INTO t VALUES (4, 'four')");
    assertThat(rows(b, "SELECT count(*) FROM t")).containsExactly("3");
    sql(b, "MERGE INTO t USING (VALUES (1, 'uno'), (5, 'cinco')) AS s(id, v) ON t.id = s.id "
        + "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)");
    assertThat(rows(a, "SELECT * FROM t ORDER BY id")).containsExactly("1|uno", "2|TWO", "4|four", "5|cinco");
  }

  @Test
  void ddlTimeTravelAndViewsGoThroughTheCatalog() {
    sql(b, "CREATE SCHEMA sales", "CREATE TABLE sales.o (id int, amount numeric(10,2))",
        "INSERT INTO sales.o VALUES (1, 9.50)");
    long first = Long.parseLong(rows(b, "SELECT snapshot_id FROM sales.\"o$snapshots\"").get(0));
    sql(b, "ALTER TABLE sales.o ADD COLUMN note text", "INSERT INTO sales.o VALUES (2, 1.25, 'late')");
    assertThat(rows(a, "SELECT * FROM sales.o ORDER BY id")).containsExactly("1|9.50|null", "2|1.25|late");
    assertThat(rows(b, "SELECT count(*) FROM sales.o FOR SYSTEM_VERSION AS OF " + first)).containsExactly("1");
    sql(b, "CREATE VIEW sales.big AS SELECT id FROM sales.o WHERE amount > 5");
    assertThat(rows(a, "SELECT * FROM sales.big")).containsExactly("1");
    sql(b, "CREATE OR REPLACE VIEW sales.big AS SELECT id FROM sales.o WHERE amount > 1");
    assertThat(rows(a, "SELECT * FROM sales.big ORDER BY id")).containsExactly("1", "2");
    sql(b, "ALTER TABLE sales.o RENAME TO orders");
    assertThat(rows(a, "SELECT count(*) FROM sales.orders")).containsExactly("2");
    sql(b, "DROP VIEW sales.big", "DROP TABLE sales.orders");
    assertThat(rows(a, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'sales'"))
        .containsExactly("0");
    sql(b, "DROP SCHEMA sales");
    assertThat(rows(a, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'sales'"))
        .containsExactly("0");
  }

  @Test
  void aTransactionBlockCommitsEveryTableAtOnce() {
    sql(b, "CREATE TABLE acct (id int, balance int)", "CREATE TABLE audit (id int, delta int)",
        "INSERT INTO acct VALUES (1, 100), (2, 0)");
    try (Session s = b.connect()) {
      s.sql("BEGIN").close();
      s.sql("UPDATE acct SET balance = balance - 30 WHERE id = 1").close();
      s.sql("UPDATE acct SET balance = balance + 30 WHERE id = 2").close();
      s.sql("INSERT INTO audit VALUES (1, -30), (2, 30)").close();
      assertThat(rows(a, "SELECT count(*) FROM audit")).containsExactly("0");
      s.sql("COMMIT").close();
    }
    assertThat(rows(a, "SELECT id, balance FROM acct ORDER BY id")).containsExactly("1|70", "2|30");
    assertThat(rows(a, "SELECT sum(delta) FROM audit")).containsExactly("0");
  }

  @Test
  void concurrentWritersOfBothSidesConflictAndNothingIsLost() {
    sql(b, "CREATE TABLE c (id int, n int)", "INSERT INTO c VALUES (1, 0)");
    try (Session sb = b.connect(); Session sa = a.connect()) {
      sb.sql("BEGIN").close();
      sb.sql("UPDATE c SET n = n + 1 WHERE id = 1").close();
      sa.sql("UPDATE c SET n = n + 10 WHERE id = 1").close(); // commits first
      assertThatThrownBy(() -> sb.sql("COMMIT").close()).isInstanceOfSatisfying(FloeException.class,
          e -> assertThat(e.sqlState()).isEqualTo("40001"));
    }
    assertThat(rows(b, "SELECT n FROM c")).containsExactly("10");
    sql(b, "UPDATE c SET n = n + 1 WHERE id = 1");
    assertThat(rows(a, "SELECT n FROM c")).containsExactly("11");
  }

  @Test
  void aTailIsKeptByTheFloeThatMadeIt() {
    sql(b, "CREATE TABLE ticks (id bigint, v text) WITH (tail = true)", "INSERT INTO ticks VALUES (1, 'a'), (2, 'b')");
    assertThat(rows(b, "SELECT count(*) FROM ticks")).containsExactly("2"); // acknowledged, unsealed: b's log
    assertThat(rows(a, "SELECT count(*) FROM ticks")).containsExactly("0"); // a reads what is sealed
    sql(b, "ALTER TABLE ticks EXECUTE optimize"); // seals through the REST catalog: the tail's own commit
    assertThat(rows(a, "SELECT id, v FROM ticks ORDER BY id")).containsExactly("1|a", "2|b");
    // a does not append to, seal or change a tail whose log is b's
    assertThatThrownBy(() -> sql(a, "INSERT INTO ticks VALUES (3, 'c')")).isInstanceOfSatisfying(
        FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("55000"));
    assertThatThrownBy(() -> sql(a, "DELETE FROM ticks WHERE id = 1")).isInstanceOfSatisfying(
        FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("55000"));
    sql(b, "INSERT INTO ticks VALUES (3, 'c')", "ALTER TABLE ticks EXECUTE optimize");
    assertThat(rows(a, "SELECT count(*) FROM ticks")).containsExactly("3");
    // the tail's protections are its own Floe's: a's are for the tails it keeps
    sql(a, "CREATE TABLE own (id bigint) WITH (tail = true)", "INSERT INTO own VALUES (1)");
    assertThatThrownBy(() -> sql(b, "INSERT INTO own VALUES (2)")).isInstanceOfSatisfying(
        FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("55000"));
  }

  @Test
  void sequencesStayWithTheClient() {
    sql(b, "CREATE TABLE s (id serial, v text)", "INSERT INTO s (v) VALUES ('a'), ('b')");
    assertThat(rows(a, "SELECT id, v FROM s ORDER BY id")).containsExactly("1|a", "2|b");
    b.close();
    b = Floe.open(FloeConfig.builder(dir.resolve("b")).fenced(true).remoteCatalog(remote()).build());
    sql(b, "INSERT INTO s (v) VALUES ('c')");
    // the counter is b's own (its catalog.db), reserved in blocks of 64 as PostgreSQL caches sequence values:
    // a reopened b continues after the block it had
    assertThat(rows(b, "SELECT max(id) FROM s")).containsExactly("65");
  }

  @Test
  void oauth2ClientCredentialsAndBearerTokens() throws Exception {
    b.close();
    b = null;
    server.close();
    new dev.floe.server.auth.Users(dir.resolve("a")).put("floe_b", "s3cret");
    server = RestServer.start(a, RestServer.Config.defaults().withPort(0).withTrust(false)
        .withTokenLifetime(Duration.ofSeconds(2)));
    assertThatThrownBy(() -> Floe.open(FloeConfig.builder(dir.resolve("b")).remoteCatalog(remote()).build()))
        .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("28000"));
    assertThatThrownBy(() -> Floe.open(FloeConfig.builder(dir.resolve("b"))
        .remoteCatalog(remote().with("credential", "floe_b:wrong")).build()))
        .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("28000"));
    b = Floe.open(FloeConfig.builder(dir.resolve("b")).remoteCatalog(remote().with("credential", "floe_b:s3cret")
        .with("oauth2-server-uri", server.uri() + "/v1/oauth/tokens").with("scope", "catalog")).build());
    sql(b, "CREATE TABLE secured (id int)", "INSERT INTO secured VALUES (1)");
    Thread.sleep(3000); // past the first token's lifetime: the client refreshes it
    sql(b, "INSERT INTO secured VALUES (2)");
    assertThat(rows(a, "SELECT count(*) FROM secured")).containsExactly("2");
  }

  @Test
  void aWarehouseKeepsItsTablesInOnePlace() {
    sql(b, "CREATE TABLE kept (id int)");
    b.close();
    b = null;
    // opened on a REST catalog once, not on its own catalog.db (which would show none of its tables)
    assertThatThrownBy(() -> Floe.open(dir.resolve("b"))).isInstanceOfSatisfying(FloeException.class,
        e -> assertThat(e.sqlState()).isEqualTo("55000"));
    // a warehouse whose catalog.db has tables is not opened on a REST catalog (which would hide them)
    Path local = dir.resolve("local");
    try (Database c = Floe.open(local)) {
      sql(c, "CREATE TABLE mine (id int)");
    }
    assertThatThrownBy(() -> Floe.open(FloeConfig.builder(local).remoteCatalog(remote()).build()))
        .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("55000"));
    b = Floe.open(FloeConfig.builder(dir.resolve("b")).fenced(true).remoteCatalog(remote()).build());
    assertThat(rows(b, "SELECT count(*) FROM kept")).containsExactly("0");
  }

  @Test
  void anUnreachableCatalogIsAConnectionError() throws Exception {
    b.close();
    b = null;
    int port;
    try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Path c = dir.resolve("c");
    assertThatThrownBy(() -> Floe.open(FloeConfig.builder(c).remoteCatalog(RemoteCatalog.at(
        "http://127.0.0.1:" + port)).build()))
        .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("08000"));
    assertThat(Files.exists(c.resolve("catalog.db"))).isTrue(); // its own state only; nothing half-made
  }
}
