package dev.floe.server.rest;

import static dev.floe.server.rest.RemoteCatalogTest.rows;
import static dev.floe.server.rest.RemoteCatalogTest.sql;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.FloeException;
import dev.floe.RemoteCatalog;
import dev.floe.Session;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Floe on Iceberg's own REST reference server ({@code RESTCatalogServer} over a JdbcCatalog, from Iceberg's
 * open-api test fixtures), with a bearer token and with OAuth2 client credentials: what Floe commits is what
 * Iceberg's client and generic reader then read from that catalog.
 */
class RemoteReferenceCatalogTest {
  private static final Path WAREHOUSE;

  static {
    // the reference servlet logs every 404 (a table that does not exist yet) as an error with its stack
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.iceberg.rest.RESTCatalogServlet", "off");
    try {
      WAREHOUSE = Files.createTempDirectory("floe-reference-rest");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The reference server on a free port, its JdbcCatalog's files in {@link #WAREHOUSE}, written with a java.nio
   * FileIO: its default, Hadoop's, needs more of Hadoop than is on this classpath.
   */
  @RegisterExtension
  static final RESTServerExtension REFERENCE = new RESTServerExtension(new HashMap<>(Map.of(
      "rest.port", RESTServerExtension.FREE_PORT, "warehouse", WAREHOUSE.toString(),
      "io-impl", dev.floe.catalog.LocalFileIO.class.getName())));

  @TempDir
  Path dir;

  static String uri() {
    return "http://localhost:" + REFERENCE.config().get("rest.port");
  }

  Database open(Path state, RemoteCatalog remote) {
    return Floe.open(FloeConfig.builder(state).fenced(true).remoteCatalog(remote).storageRoot(WAREHOUSE).build());
  }

  @Test
  void sqlOverTheReferenceServerWithABearerToken() throws IOException {
    try (Database db = open(dir.resolve("state"), RemoteCatalog.at(uri()).with("token", "any-token"))) {
      sql(db, "CREATE SCHEMA ref", "CREATE TABLE ref.t (id bigint, v text)",
          "INSERT INTO ref.t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
          "UPDATE ref.t SET v = 'TWO' WHERE id = 2", "DELETE FROM ref.t WHERE id = 3",
          "ALTER TABLE ref.t ADD COLUMN n int", "INSERT INTO ref.t VALUES (4, 'four', 40)");
      assertThat(rows(db, "SELECT * FROM ref.t ORDER BY id")).containsExactly("1|one|null", "2|TWO|null",
          "4|four|40");
      try (Session s = db.connect()) {
        s.sql("CREATE TABLE ref.u (id bigint)").close();
        s.sql("BEGIN").close();
        s.sql("INSERT INTO ref.t VALUES (5, 'five', 50)").close();
        s.sql("INSERT INTO ref.u VALUES (5)").close();
        s.sql("COMMIT").close(); // two tables: one POST /v1/transactions/commit
      }
      assertThat(rows(db, "SELECT count(*) FROM ref.u")).containsExactly("1");
      sql(db, "CREATE VIEW ref.big AS SELECT id FROM ref.t WHERE id > 3");
      assertThat(rows(db, "SELECT * FROM ref.big ORDER BY id")).containsExactly("4", "5");
    }
    // Iceberg's own client and generic reader read what Floe committed through the reference catalog
    Table t = REFERENCE.client().loadTable(TableIdentifier.of("ref", "t"));
    java.util.List<String> read = new java.util.ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(t).build()) {
      for (Record r : records) {
        read.add(r.getField("id") + "|" + r.getField("v") + "|" + r.getField("n"));
      }
    }
    assertThat(read).containsExactlyInAnyOrder("1|one|null", "2|TWO|null", "4|four|40", "5|five|50");
    assertThat(REFERENCE.client().viewExists(TableIdentifier.of("ref", "big"))).isTrue();
  }

  @Test
  void oauth2ClientCredentials() {
    RemoteCatalog remote = RemoteCatalog.at(uri()).with("credential", "floe:secret")
        .with("oauth2-server-uri", uri() + "/v1/oauth/tokens").with("scope", "catalog");
    try (Database db = open(dir.resolve("oauth"), remote)) {
      sql(db, "CREATE SCHEMA IF NOT EXISTS o", "CREATE TABLE o.t (id int)", "INSERT INTO o.t VALUES (1), (2)");
      assertThat(rows(db, "SELECT sum(id) FROM o.t")).containsExactly("3");
      // the table is the catalog's: its metadata files are in the reference server's warehouse
      String location = REFERENCE.client().loadTable(TableIdentifier.of("o", "t")).location();
      assertThat(Path.of(location.replace("file:", ""))).startsWith(WAREHOUSE);
      sql(db, "DROP TABLE o.t");
      assertThat(REFERENCE.client().tableExists(TableIdentifier.of("o", "t"))).isFalse();
      assertThatThrownBy(() -> sql(db, "SELECT * FROM o.t")).isInstanceOfSatisfying(FloeException.class,
          e -> assertThat(e.sqlState()).isEqualTo("42P01"));
    }
  }
}
