package dev.floe.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.Result;
import dev.floe.Row;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random requests on the REST catalog's routes: valid ones (creates, commits, renames, drops of a few tables and
 * namespaces) mixed with mutated ones (fields dropped, types changed, truncated JSON, unknown actions, names that
 * climb out of their directory, locations outside the warehouse). The server must answer every one with a status
 * below 500 and the spec's ErrorModel on a refusal, and afterwards every table must still read in Floe's SQL, no
 * file may have been written outside the warehouse, and the warehouse's own files must be untouched. Replay a
 * failure with {@code -Dfloe.restfuzz.seed=N}.
 */
class RestFuzzTest {
  private static final long SEED = Long.getLong("floe.restfuzz.seed", System.nanoTime());
  private static final int REQUESTS = Integer.getInteger("floe.restfuzz.requests", 300);

  @TempDir
  Path dir;

  @Test
  void randomRequestsNeverBreakTheServerOrTheWarehouse() throws Exception {
    System.out.printf("RestFuzzTest: seed %d (replay with -Dfloe.restfuzz.seed=%d), %d requests%n", SEED, SEED,
        REQUESTS);
    Random r = new Random(SEED);
    Path outside = Files.createDirectories(dir.resolve("outside"));
    Path warehouse = dir.resolve("wh");
    HttpClient http = HttpClient.newHttpClient();
    TreeMap<Integer, Integer> statuses = new TreeMap<>();
    try (Database db = Floe.open(FloeConfig.builder(warehouse).fenced(true).build());
        RestServer server = RestServer.start(db, RestServer.Config.defaults().withPort(0))) {
      String usersBefore = list(warehouse.resolve("floe-users"));
      for (int i = 0; i < REQUESTS; i++) {
        String[] req = request(r, outside);
        if (r.nextInt(4) == 0) {
          req[2] = mutate(r, req[2]);
        }
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.uri() + req[1]));
        b.method(req[0], req[2] == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(req[2]));
        HttpResponse<String> resp = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        statuses.merge(resp.statusCode(), 1, Integer::sum);
        assertThat(resp.statusCode()).as("seed %d, request %d: %s %s %s -> %s", SEED, i, req[0], req[1], req[2],
            resp.body()).isLessThan(500);
        if (resp.statusCode() >= 400 && !req[0].equals("HEAD")) {
          assertThat(resp.body()).as("seed %d, request %d", SEED, i).contains("\"error\"", "\"type\"", "\"code\"");
        }
      }
      System.out.println("RestFuzzTest: statuses " + statuses);
      // every table still reads in Floe's SQL
      List<String> tables = new ArrayList<>();
      try (Result res = db.sql("SELECT table_schema, table_name FROM information_schema.tables "
          + "WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')")) {
        for (Row row : res) {
          tables.add("\"" + row.get(0) + "\".\"" + row.get(1) + "\"");
        }
      }
      for (String t : tables) {
        db.sql("SELECT count(*) FROM " + t).close();
      }
      assertThat(db.verify()).as("seed %d", SEED).allSatisfy(v -> assertThat(v.damaged()).isEmpty());
      // nothing written outside the warehouse, nothing of the warehouse's own touched
      try (Stream<Path> files = Files.walk(outside)) {
        assertThat(files.filter(Files::isRegularFile).toList()).as("seed %d", SEED).isEmpty();
      }
      assertThat(list(warehouse.resolve("floe-users"))).isEqualTo(usersBefore);
    }
  }

  private static String list(Path p) throws java.io.IOException {
    return Files.exists(p) ? Files.readString(p) : "";
  }

  private static final String[] NS = {"a", "b", "public", "../up", "x.y"};
  private static final String[] TB = {"t1", "t2", "t3", "..", "v1"};
  private static final String SCHEMA = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\","
      + "\"required\":false,\"type\":\"long\"}]}";

  /** A request: method, path, body (null for none). */
  private static String[] request(Random r, Path outside) {
    String ns = NS[r.nextInt(NS.length)];
    String t = TB[r.nextInt(TB.length)];
    String nsPath = "/v1/namespaces/" + java.net.URLEncoder.encode(ns, java.nio.charset.StandardCharsets.UTF_8);
    String location = r.nextInt(5) == 0 ? ",\"location\":\"" + outside.resolve(t) + "\"" : "";
    return switch (r.nextInt(14)) {
      case 0 -> new String[] {"POST", "/v1/namespaces", "{\"namespace\":[\"" + ns + "\"],\"properties\":{\"k\":\"v\"}}"};
      case 1 -> new String[] {"DELETE", nsPath, null};
      case 2 -> new String[] {"GET", "/v1/namespaces", null};
      case 3 -> new String[] {"POST", nsPath + "/tables", "{\"name\":\"" + t + "\",\"schema\":" + SCHEMA + location
          + (r.nextBoolean() ? ",\"stage-create\":true" : "") + "}"};
      case 4 -> new String[] {"GET", nsPath + "/tables/" + t + (r.nextBoolean() ? "?snapshots=refs" : ""), null};
      case 5 -> new String[] {"HEAD", nsPath + "/tables/" + t, null};
      case 6 -> new String[] {"POST", nsPath + "/tables/" + t, "{\"requirements\":[],\"updates\":[{\"action\":"
          + "\"set-properties\",\"updates\":{\"p" + r.nextInt(3) + "\":\"" + r.nextInt(100) + "\"}}]}"};
      case 7 -> new String[] {"POST", nsPath + "/tables/" + t, "{\"requirements\":[],\"updates\":[{\"action\":"
          + "\"set-location\",\"location\":\"" + (r.nextBoolean() ? outside.resolve(t).toString() : "relative/x")
          + "\"}]}"};
      case 8 -> new String[] {"POST", nsPath + "/tables/" + t, "{\"requirements\":[{\"type\":\"assert-create\"}],"
          + "\"updates\":[{\"action\":\"assign-uuid\",\"uuid\":\"" + java.util.UUID.randomUUID() + "\"},{\"action\":"
          + "\"upgrade-format-version\",\"format-version\":2},{\"action\":\"add-schema\",\"schema\":" + SCHEMA
          + "},{\"action\":\"set-current-schema\",\"schema-id\":-1},{\"action\":\"set-location\",\"location\":\""
          + (r.nextBoolean() ? outside.resolve(t).toString() : "/etc") + "\"}]}"};
      case 9 -> new String[] {"DELETE", nsPath + "/tables/" + t + (r.nextBoolean() ? "?purgeRequested=true" : ""),
          null};
      case 10 -> new String[] {"POST", "/v1/tables/rename", "{\"source\":{\"namespace\":[\"" + ns + "\"],\"name\":\""
          + t + "\"},\"destination\":{\"namespace\":[\"" + NS[r.nextInt(NS.length)] + "\"],\"name\":\""
          + TB[r.nextInt(TB.length)] + "\"}}"};
      case 11 -> new String[] {"POST", nsPath + "/register", "{\"name\":\"" + t + "\",\"metadata-location\":\""
          + (r.nextBoolean() ? "/etc/passwd" : outside.resolve("m.metadata.json").toString()) + "\"}"};
      case 12 -> new String[] {"POST", "/v1/transactions/commit", "{\"table-changes\":[{\"identifier\":{\"namespace\":"
          + "[\"" + ns + "\"],\"name\":\"" + t + "\"},\"requirements\":[],\"updates\":[{\"action\":\"set-properties\","
          + "\"updates\":{\"tx\":\"1\"}}]},{\"identifier\":{\"namespace\":[\"public\"],\"name\":\""
          + TB[r.nextInt(TB.length)] + "\"},\"requirements\":[],\"updates\":[{\"action\":\"remove-properties\","
          + "\"removals\":[\"tx\"]}]}]}"};
      default -> new String[] {"POST", nsPath + "/views", "{\"name\":\"" + t + "\",\"schema\":" + SCHEMA
          + ",\"view-version\":{\"version-id\":1,\"timestamp-ms\":1,\"schema-id\":0,\"summary\":{},"
          + "\"representations\":[{\"type\":\"sql\",\"sql\":\"SELECT 1 AS id\",\"dialect\":\"spark\"}],"
          + "\"default-namespace\":[\"" + ns + "\"]},\"properties\":{}" + location + "}"};
    };
  }

  /** A body broken one way: truncated, a field renamed, a value of another type, garbage. */
  private static String mutate(Random r, String body) {
    if (body == null || body.isEmpty()) {
      return "{}";
    }
    return switch (r.nextInt(6)) {
      case 0 -> body.substring(0, r.nextInt(body.length()));
      case 1 -> body.replaceFirst("\"[a-z-]+\":", "\"zz-" + r.nextInt(9) + "\":");
      case 2 -> body.replaceFirst(":\"[^\"]*\"", ":" + r.nextInt(1000));
      case 3 -> body.replaceFirst(":\\[", ":{").replaceFirst("]", "}");
      case 4 -> body.replace("\"action\":\"set-properties\"", "\"action\":\"set-everything\"");
      default -> "\u0000\u00ff" + body;
    };
  }
}
