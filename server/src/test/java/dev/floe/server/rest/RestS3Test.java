package dev.floe.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.ObjectStore;
import dev.floe.RemoteCatalog;
import dev.floe.testing.S3Server;
import dev.floe.testing.S3ServerExtension;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A warehouse on S3 (s3proxy, started here) served over the REST catalog: a client's load carries what it
 * needs to reach the files (endpoint, path-style access, region; the server's credentials only when it vends
 * them and the client asks), Iceberg's own REST client reads Floe's rows from S3, and a second Floe whose
 * catalog is this server writes its tables' files to S3 too.
 */
class RestS3Test {
  @RegisterExtension
  static final S3ServerExtension S3 = new S3ServerExtension();
  @TempDir
  Path dir;
  Database a;
  RestServer server;

  ObjectStore store() {
    return new ObjectStore("s3://" + S3Server.BUCKET + "/served", S3.server().storage());
  }

  @BeforeEach
  void start() throws IOException {
    a = Floe.open(FloeConfig.builder(dir.resolve("a")).fenced(true).objectStore(store()).build());
    server = RestServer.start(a, RestServer.Config.defaults().withPort(0).withVendedCredentials(true));
  }

  @AfterEach
  void stop() {
    server.close();
    a.close();
  }

  private JsonNode load(String table, String delegation) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.uri() + "/v1/namespaces/public/tables/" + table));
    if (delegation != null) {
      b.header("X-Iceberg-Access-Delegation", delegation);
    }
    HttpResponse<String> r = HttpClient.newHttpClient().send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return RestJson.mapper().readTree(r.body());
  }

  @Test
  void loadsCarryStorageConfigAndIcebergsClientReadsTheRowsFromS3() throws Exception {
    RemoteCatalogTest.sql(a, "CREATE TABLE t (id bigint PRIMARY KEY, v text)",
        "INSERT INTO t SELECT i, 'v' || i FROM range(0, 5000) r(i)",
        "UPDATE t SET v = 'changed' WHERE id % 100 = 0",
        "DELETE FROM t WHERE id >= 4990");
    JsonNode plain = load("t", null);
    assertThat(plain.get("metadata-location").asText()).startsWith("s3://floe/served/public/t");
    JsonNode config = plain.get("config");
    assertThat(config.get("s3.endpoint").asText()).isEqualTo(S3.server().endpoint());
    assertThat(config.get("s3.path-style-access").asText()).isEqualTo("true");
    assertThat(config.has("client.region")).isTrue();
    assertThat(config.has("s3.access-key-id")).isFalse();
    JsonNode vended = load("t", "vended-credentials").get("config");
    assertThat(vended.get("s3.access-key-id").asText()).isEqualTo(S3Server.ACCESS_KEY);
    assertThat(vended.get("s3.secret-access-key").asText()).isEqualTo(S3Server.SECRET_KEY);

    // Iceberg's REST client, with S3FileIO configured from the load alone
    TreeSet<String> want = new TreeSet<>(RemoteCatalogTest.rows(a, "SELECT id, v FROM t"));
    assertThat(want).hasSize(4990);
    RESTCatalog client = new RESTCatalog();
    Map<String, String> props = new HashMap<>();
    props.put("uri", server.uri());
    props.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    props.put("http-client.type", "urlconnection");
    props.put("header.X-Iceberg-Access-Delegation", "vended-credentials");
    client.initialize("floe", props);
    try (client) {
      Table t = client.loadTable(TableIdentifier.of("public", "t"));
      TreeSet<String> got = new TreeSet<>();
      try (CloseableIterable<Record> rows = IcebergGenerics.read(t).build()) {
        for (Record r : rows) {
          got.add(r.getField("id") + "|" + r.getField("v"));
        }
      }
      assertThat(got).isEqualTo(want);
    }
  }

  @Test
  void aFloeOnThisCatalogWritesItsTablesToS3() throws Exception {
    try (Database b = Floe.open(FloeConfig.builder(dir.resolve("b")).fenced(true)
        .remoteCatalog(RemoteCatalog.at(server.uri()).with("warehouse", store().location()))
        .objectStore(store()).build())) {
      RemoteCatalogTest.sql(b, "CREATE TABLE u (id bigint PRIMARY KEY, v text)",
          "INSERT INTO u VALUES (1, 'one'), (2, 'two'), (3, 'three')",
          "INSERT INTO u SELECT i, 'n' || i FROM range(10, 3010) r(i)",
          "UPDATE u SET v = 'TWO' WHERE id = 2",
          "DELETE FROM u WHERE id = 3 OR id % 7 = 0");
      assertThat(RemoteCatalogTest.rows(b, "SELECT v FROM u WHERE id = 2")).containsExactly("TWO");
      assertThat(b.table("u").location()).startsWith("s3://floe/served/public/u");
      RemoteCatalogTest.sql(a, "UPDATE u SET v = 'uno' WHERE id = 1");
      assertThat(RemoteCatalogTest.rows(b, "SELECT v FROM u WHERE id = 1")).containsExactly("uno");
      assertThat(RemoteCatalogTest.rows(a, "SELECT count(*), sum(id) FROM u"))
          .isEqualTo(RemoteCatalogTest.rows(b, "SELECT count(*), sum(id) FROM u"));
    }
    // the table's files are on the server; neither warehouse directory holds any outside its local copies
    try (Stream<Path> files = Files.walk(dir)) {
      assertThat(files.filter(p -> p.toString().endsWith(".parquet") || p.toString().endsWith(".metadata.json"))
          .filter(p -> !p.toString().contains("/.floe/"))).isEmpty();
    }
    assertThat(Files.isDirectory(S3.server().objects("served/public"))).isTrue();
  }
}
