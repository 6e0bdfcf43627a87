package dev.floe.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.Result;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a REST client can get wrong, as bytes on the wire: each request gets the spec's ErrorModel with the
 * right status, and the catalog is as it was.
 */
class RestBadInputTest {
  @TempDir
  Path dir;
  Database db;
  RestServer server;
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    db = Floe.open(FloeConfig.builder(dir.resolve("wh")).fenced(true).build());
    server = RestServer.start(db, RestServer.Config.defaults().withPort(0));
    db.sql("CREATE TABLE t (id bigint)").close();
    db.sql("INSERT INTO t VALUES (1)").close();
  }

  @AfterEach
  void stop() {
    server.close();
    db.close();
  }

  HttpResponse<String> send(String method, String path, String body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.uri() + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static void assertError(HttpResponse<String> r, int code, String type) {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(code);
    assertThat(r.body()).contains("\"type\":\"" + type + "\"", "\"code\":" + code, "\"message\":");
  }

  String pointer() {
    try (Result r = db.sql("SELECT count(*) FROM \"t$snapshots\"")) {
      return String.valueOf(r.iterator().next().get(0));
    }
  }

  @Test
  void malformedBodiesAreBadRequestsAndChangeNothing() throws Exception {
    assertError(send("POST", "/v1/namespaces", "{not json"), 400, "BadRequestException");
    assertError(send("POST", "/v1/namespaces", ""), 400, "BadRequestException");
    assertError(send("POST", "/v1/namespaces", "{\"namespace\": 7}"), 400, "BadRequestException");
    assertError(send("POST", "/v1/namespaces", "{\"namespace\": [\"a\", \"b\"]}"), 406,
        "UnsupportedOperationException");
    assertError(send("POST", "/v1/namespaces", "{\"namespace\": [\"../up\"]}"), 400, "BadRequestException");
    assertThat(send("GET", "/v1/namespaces", null).body()).doesNotContain("up", "\"a\"");

    String before = pointer();
    assertError(send("POST", "/v1/namespaces/public/tables/t", "{\"requirements\": [], \"updates\": "
        + "[{\"action\": \"make-it-fast\"}]}"), 400, "BadRequestException");
    assertError(send("POST", "/v1/namespaces/public/tables/t", "{\"requirements\": [{\"type\": \"assert-maybe\"}],"
        + " \"updates\": []}"), 400, "BadRequestException");
    assertError(send("POST", "/v1/namespaces/public/tables/t", "{\"requirements\": [{\"type\": "
        + "\"assert-table-uuid\", \"uuid\": \"00000000-0000-0000-0000-000000000000\"}], \"updates\": "
        + "[{\"action\": \"set-properties\", \"updates\": {\"k\": \"v\"}}]}"), 409, "CommitFailedException");
    assertError(send("POST", "/v1/transactions/commit", "{\"table-changes\": [{\"requirements\": [], "
        + "\"updates\": []}]}"), 400, "BadRequestException");
    assertThat(pointer()).isEqualTo(before);
    assertThat(db.icebergCatalog().catalog().loadTable(org.apache.iceberg.catalog.TableIdentifier.of("public", "t"))
        .properties()).doesNotContainKey("k");
  }

  @Test
  void unknownThingsAreNotFound() throws Exception {
    assertError(send("GET", "/v1/namespaces/public/tables/nope", null), 404, "NoSuchTableException");
    assertError(send("GET", "/v1/namespaces/nope", null), 404, "NoSuchNamespaceException");
    assertError(send("GET", "/v1/namespaces/nope/tables", null), 404, "NoSuchNamespaceException");
    assertError(send("DELETE", "/v1/namespaces/public/tables/nope", null), 404, "NoSuchTableException");
    assertThat(send("HEAD", "/v1/namespaces/public/tables/nope", null).statusCode()).isEqualTo(404);
    assertError(send("GET", "/v1/other-warehouse/namespaces", null), 404, "NotFoundException");
    assertError(send("GET", "/v1/config?warehouse=s3://elsewhere", null), 404, "NoSuchWarehouseException");
    assertThat(send("GET", "/v1/config?warehouse=" + dir.resolve("wh"), null).statusCode()).isEqualTo(200);
    assertError(send("PUT", "/v1/namespaces", "{}"), 405, "MethodNotAllowedException");
    assertError(send("GET", "/v1/namespaces?pageSize=-3", null), 400, "IllegalArgumentException");
  }

  @Test
  void tlsServesTheSameCatalog() throws Exception {
    server.close();
    server = RestServer.start(db, RestServer.Config.defaults().withPort(0)
        .withTls(dev.floe.server.auth.Tls.selfSigned(dir.resolve("tls"))));
    assertThat(server.uri()).startsWith("https://");
    javax.net.ssl.TrustManager[] trustAll = {new javax.net.ssl.X509TrustManager() {
      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String type) {}

      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String type) {}

      @Override
      public java.security.cert.X509Certificate[] getAcceptedIssuers() {
        return new java.security.cert.X509Certificate[0];
      }
    }};
    javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
    context.init(null, trustAll, null);
    HttpClient tls = HttpClient.newBuilder().sslContext(context).build();
    HttpResponse<String> load = tls.send(HttpRequest.newBuilder(URI.create(server.uri()
        + "/v1/namespaces/public/tables/t")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(load.statusCode()).isEqualTo(200);
    assertThat(load.body()).contains("\"metadata-location\"");
    // plain HTTP to the TLS port gets no catalog
    String plain = server.uri().replace("https://", "http://");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> http.send(HttpRequest.newBuilder(URI.create(plain
        + "/v1/config")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(java.io.IOException.class);
  }

  @Test
  void noTokenOrAnExpiredOneIsRefused() throws Exception {
    server.close();
    new dev.floe.server.auth.Users(dir.resolve("wh")).put("spark", "s3cret");
    server = RestServer.start(db, RestServer.Config.defaults().withPort(0).withTrust(false)
        .withTokenLifetime(Duration.ofSeconds(1)));
    assertError(send("GET", "/v1/namespaces", null), 401, "NotAuthorizedException");
    assertError(send("GET", "/v1/namespaces", null, "Authorization", "Bearer made-up"), 401, "NotAuthorizedException");
    HttpResponse<String> wrong = send("POST", "/v1/oauth/tokens", "grant_type=client_credentials&client_id=spark"
        + "&client_secret=nope", "Content-Type", "application/x-www-form-urlencoded");
    assertThat(wrong.statusCode()).isEqualTo(401);
    assertThat(wrong.body()).contains("\"error\":\"invalid_client\"");
    HttpResponse<String> grant = send("POST", "/v1/oauth/tokens", "grant_type=client_credentials&client_id=spark"
        + "&client_secret=s3cret", "Content-Type", "application/x-www-form-urlencoded");
    assertThat(grant.statusCode()).isEqualTo(200);
    String token = grant.body().replaceAll(".*\"access_token\"\\s*:\\s*\"([^\"]+)\".*", "$1");
    assertThat(send("GET", "/v1/namespaces", null, "Authorization", "Bearer " + token).statusCode()).isEqualTo(200);
    Thread.sleep(1100);
    assertError(send("POST", "/v1/namespaces", "{\"namespace\": [\"late\"]}", "Authorization", "Bearer " + token), 401,
        "NotAuthorizedException");
    assertThat(db.icebergCatalog().namespaces().namespaceExists(org.apache.iceberg.catalog.Namespace.of("late")))
        .isFalse();
    // guessing is slowed down: the fourth failure within a minute waits a second
    for (int i = 0; i < 3; i++) { // (the grant that succeeded above cleared the count)
      send("POST", "/v1/oauth/tokens", "grant_type=client_credentials&client_id=spark&client_secret=guess" + i,
          "Content-Type", "application/x-www-form-urlencoded");
    }
    long t0 = System.nanoTime();
    assertThat(send("POST", "/v1/oauth/tokens", "grant_type=client_credentials&client_id=spark&client_secret=guess",
        "Content-Type", "application/x-www-form-urlencoded").statusCode()).isEqualTo(401);
    assertThat((System.nanoTime() - t0) / 1_000_000).isGreaterThanOrEqualTo(900);
    HttpResponse<String> grantType = send("POST", "/v1/oauth/tokens", "grant_type=password&username=spark",
        "Content-Type", "application/x-www-form-urlencoded");
    assertThat(grantType.statusCode()).isEqualTo(400);
    assertThat(grantType.body()).contains("unsupported_grant_type");
  }
}
