package dev.floe.server.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.Result;
import dev.floe.testing.IcebergFiles;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableCommit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The REST catalog as another engine uses it: Iceberg's own {@link RESTCatalog} client (what Spark, Trino
 * and Flink load) against {@link RestServer}, beside Floe's SQL on the same tables.
 */
class RestCatalogTest {
  private static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));

  @TempDir
  Path dir;
  Database db;
  RestServer server;
  final List<RESTCatalog> clients = new ArrayList<>();

  @BeforeEach
  void start() throws IOException {
    db = Floe.open(FloeConfig.builder(dir.resolve("wh")).fenced(true).build());
    server = RestServer.start(db, RestServer.Config.defaults().withPort(0));
  }

  @AfterEach
  void stop() throws IOException {
    for (RESTCatalog c : clients) {
      c.close();
    }
    server.close();
    db.close();
  }

  RESTCatalog client(Map<String, String> extra) {
    RESTCatalog c = new RESTCatalog();
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, server.uri());
    // the client writes its data and manifests itself; java.nio rather than Hadoop's file system, which
    // this build carries only in part (Spark and Trino bring their own)
    props.put(CatalogProperties.FILE_IO_IMPL, "dev.floe.catalog.LocalFileIO");
    props.putAll(extra);
    c.initialize("floe", props);
    clients.add(c);
    return c;
  }

  RESTCatalog client() {
    return client(Map.of());
  }

  List<String> sql(String query) {
    return dev.floe.testing.Rows.of(db, query);
  }

  static List<Record> rows(long from, long to) {
    List<Record> out = new ArrayList<>();
    for (long i = from; i <= to; i++) {
      Record r = GenericRecord.create(SCHEMA);
      r.setField("id", i);
      r.setField("name", "n" + i);
      out.add(r);
    }
    return out;
  }

  static List<String> read(Table t) throws IOException {
    List<String> out = new ArrayList<>();
    try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
      it.forEach(r -> out.add(r.getField("id") + "|" + r.getField("name")));
    }
    out.sort(null);
    return out;
  }

  @Test
  void anotherEngineCreatesWritesAndFloeReadsAndWritesBack() throws IOException {
    RESTCatalog rest = client();
    rest.createNamespace(Namespace.of("sales"), new HashMap<>(Map.of("owner", "etl")));
    assertThat(rest.listNamespaces()).contains(Namespace.of("sales"), Namespace.of("public"));
    assertThat(rest.loadNamespaceMetadata(Namespace.of("sales"))).containsEntry("owner", "etl");

    TableIdentifier id = TableIdentifier.of("sales", "orders");
    Table t = rest.createTable(id, SCHEMA, PartitionSpec.unpartitioned());
    assertThat(t.location()).startsWith(dir.resolve("wh").toString());
    t.newAppend().appendFile(IcebergFiles.writeData(t, rows(1, 3), 10).get(0)).commit();

    // Floe's SQL sees the other engine's commit at its next statement
    assertThat(sql("SELECT id, name FROM sales.orders ORDER BY id")).containsExactly("1|n1", "2|n2", "3|n3");
    sql("INSERT INTO sales.orders VALUES (4, 'n4')");
    sql("UPDATE sales.orders SET name = 'two' WHERE id = 2");

    // and the other engine sees Floe's commits when it loads the table again
    Table again = rest.loadTable(id);
    assertThat(read(again)).containsExactly("1|n1", "2|two", "3|n3", "4|n4");
    assertThat(rest.listTables(Namespace.of("sales"))).containsExactly(id);

    // a commit from the stale table object: Iceberg's client retries it on the fresh metadata
    t.newAppend().appendFile(IcebergFiles.writeData(t, rows(5, 5), 10).get(0)).commit();
    assertThat(sql("SELECT count(*) FROM sales.orders")).containsExactly("5");
  }

  @Test
  void aFloeTransactionKeepsItsSnapshotWhileAnotherEngineCommits() throws IOException {
    RESTCatalog rest = client();
    TableIdentifier id = TableIdentifier.of("public", "pinned");
    Table t = rest.createTable(id, SCHEMA);
    t.newAppend().appendFile(IcebergFiles.writeData(t, rows(1, 2), 10).get(0)).commit();
    try (dev.floe.Transaction tx = db.begin()) {
      try (Result r = tx.sql("SELECT count(*) FROM pinned")) {
        assertThat(r.iterator().next().get(0)).isEqualTo(2L);
      }
      rest.loadTable(id).newAppend().appendFile(IcebergFiles.writeData(t, rows(3, 5), 10).get(0)).commit();
      try (Result r = tx.sql("SELECT count(*) FROM pinned")) {
        assertThat(r.iterator().next().get(0)).isEqualTo(2L); // the block's snapshot
      }
      assertThat(sql("SELECT count(*) FROM pinned")).containsExactly("5"); // a new statement outside it
      tx.commit();
    }
    assertThat(sql("SELECT count(*) FROM pinned")).containsExactly("5");
  }

  @Test
  void aFailedRequirementIsAConflictTheClientCanRetry() throws Exception {
    RESTCatalog rest = client();
    TableIdentifier id = TableIdentifier.of("public", "t");
    Table t = rest.createTable(id, SCHEMA);
    t.newAppend().appendFile(IcebergFiles.writeData(t, rows(1, 1), 10).get(0)).commit();
    long read = rest.loadTable(id).currentSnapshot().snapshotId();
    sql("INSERT INTO public.t VALUES (2, 'b')"); // Floe commits after the client read the table
    String body = "{\"requirements\":[{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":"
        + read + "}],\"updates\":[{\"action\":\"set-properties\",\"updates\":{\"k\":\"v\"}}]}";
    HttpResponse<String> stale = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.uri()
        + "/v1/namespaces/public/tables/t")).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(stale.statusCode()).isEqualTo(409);
    assertThat(stale.body()).contains("CommitFailedException", "main");
    assertThat(rest.loadTable(id).properties()).doesNotContainKey("k");
    // the same change on what the table is now commits
    long now = rest.loadTable(id).currentSnapshot().snapshotId();
    HttpResponse<String> fresh = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.uri()
        + "/v1/namespaces/public/tables/t")).POST(HttpRequest.BodyPublishers.ofString(body.replace(
        Long.toString(read), Long.toString(now)))).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(fresh.statusCode()).isEqualTo(200);
    assertThat(rest.loadTable(id).properties()).containsEntry("k", "v");
    // Iceberg's client retries a conflict itself when its change still applies (an append does)
    t.newAppend().appendFile(IcebergFiles.writeData(t, rows(3, 3), 10).get(0)).commit();
    assertThat(sql("SELECT id FROM t ORDER BY id")).containsExactly("1", "2", "3");
  }

  @Test
  void aMultiTableCommitMovesEveryTableOrNone() throws IOException {
    RESTCatalog rest = client();
    Table a = rest.createTable(TableIdentifier.of("public", "a"), SCHEMA);
    Table b = rest.createTable(TableIdentifier.of("public", "b"), SCHEMA);
    DataFile fa = IcebergFiles.writeData(a, rows(1, 2), 10).get(0);
    DataFile fb = IcebergFiles.writeData(b, rows(3, 3), 10).get(0);

    // both together
    Transaction ta = a.newTransaction();
    ta.newAppend().appendFile(fa).commit();
    Transaction tb = b.newTransaction();
    tb.newAppend().appendFile(fb).commit();
    rest.commitTransaction(commit(a, ta), commit(b, tb));
    assertThat(sql("SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM b)")).containsExactly("2|1");

    // b moved since its transaction started: neither table changes
    Table a2 = rest.loadTable(TableIdentifier.of("public", "a"));
    Table b2 = rest.loadTable(TableIdentifier.of("public", "b"));
    Transaction ta2 = a2.newTransaction();
    ta2.newAppend().appendFile(IcebergFiles.writeData(a2, rows(10, 10), 10).get(0)).commit();
    Transaction tb2 = b2.newTransaction();
    tb2.newAppend().appendFile(IcebergFiles.writeData(b2, rows(11, 11), 10).get(0)).commit();
    sql("INSERT INTO b VALUES (12, 'x')");
    assertThatThrownBy(() -> rest.commitTransaction(commit(a2, ta2), commit(b2, tb2)))
        .isInstanceOf(CommitFailedException.class);
    assertThat(sql("SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM b)")).containsExactly("2|2");
  }

  private static TableCommit commit(Table table, Transaction txn) {
    org.apache.iceberg.TableMetadata base = ((org.apache.iceberg.HasTableOperations) table).operations().current();
    org.apache.iceberg.TableMetadata updated = ((org.apache.iceberg.BaseTransaction) txn).currentMetadata();
    return TableCommit.create(TableIdentifier.parse(table.name().substring(table.name().indexOf('.') + 1)), base,
        updated);
  }

  @Test
  void aTailTablesAcknowledgedRowsAreInWhatAClientLoads() throws Exception {
    RESTCatalog rest = client();
    sql("CREATE TABLE ticks (n bigint) WITH (tail = true)");
    sql("ALTER TABLE ticks SET TBLPROPERTIES ('floe.tail.rest-freshness-ms' = '300')");
    sql("INSERT INTO ticks VALUES (1), (2), (3)"); // acknowledged in the log; the seal triggers are 10 s away
    TableIdentifier id = TableIdentifier.of("public", "ticks");
    // younger than the bound: the load leaves them in the tail
    Table young = rest.loadTable(id);
    assertThat(young.currentSnapshot()).isNull();
    Thread.sleep(350);
    Table loaded = rest.loadTable(id);
    List<Long> seen = new ArrayList<>();
    try (CloseableIterable<Record> it = IcebergGenerics.read(loaded).build()) {
      it.forEach(r -> seen.add((Long) r.getField("n")));
    }
    seen.sort(null);
    assertThat(seen).containsExactly(1L, 2L, 3L);
    // concurrent loads seal once
    sql("INSERT INTO ticks VALUES (4)");
    Thread.sleep(350);
    List<java.util.concurrent.CompletableFuture<Table>> loads = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      loads.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> rest.loadTable(id)));
    }
    for (var f : loads) {
      long rows = 0;
      try (CloseableIterable<Record> it = IcebergGenerics.read(f.get()).build()) {
        for (Record ignored : it) {
          rows++;
        }
      }
      assertThat(rows).isEqualTo(4);
    }
    assertThat(sql("SELECT count(*) FROM \"ticks$snapshots\"")).containsExactly("2");
  }

  @Test
  void aTailsWatermarkAndAKeyedTailsRowsAreFloesOwn() throws IOException {
    RESTCatalog rest = client();
    sql("CREATE TABLE plain_tail (id bigint, name text) WITH (tail = true)");
    sql("CREATE TABLE keyed_tail (id bigint PRIMARY KEY, name text) WITH (tail = true)");
    Table plain = rest.loadTable(TableIdentifier.of("public", "plain_tail"));
    assertThatThrownBy(() -> plain.updateProperties().set("floe.tail.through", "999").commit())
        .isInstanceOf(ForbiddenException.class).hasMessageContaining("belongs to its tail");
    plain.updateProperties().set("floe.tail.rest-freshness-ms", "100").set("owner", "etl").commit(); // allowed
    Table keyed = rest.loadTable(TableIdentifier.of("public", "keyed_tail"));
    Record row = GenericRecord.create(keyed.schema());
    row.setField("id", 1L);
    row.setField("name", "x");
    assertThatThrownBy(() -> keyed.newAppend().appendFile(IcebergFiles.writeData(keyed, List.of(row), 10).get(0))
        .commit()).isInstanceOf(ForbiddenException.class).hasMessageContaining("keyed tail");
    keyed.updateProperties().set("owner", "etl").commit(); // metadata only: allowed
    sql("INSERT INTO keyed_tail VALUES (1, 'floe')");
    assertThat(sql("SELECT id, name FROM keyed_tail")).containsExactly("1|floe");
  }

  @Test
  void aChangeStreamsStateIsFloesOwn() throws IOException {
    RESTCatalog rest = client();
    sql("CREATE TABLE cdc (id bigint PRIMARY KEY, name text)");
    dev.floe.Changes changes = db.changes("cdc", dev.floe.Changes.Format.DEBEZIUM);
    changes.apply(List.of("{\"op\":\"c\",\"after\":{\"id\":1,\"name\":\"a\"},\"source\":{\"lsn\":10}}"));
    changes.apply(List.of("{\"op\":\"c\",\"after\":{\"id\":2,\"name\":\"b\"},\"source\":{\"lsn\":20}}"));
    Table target = rest.loadTable(TableIdentifier.of("public", "cdc"));
    long first = target.currentSnapshot().parentId(); // the first batch's
    // rolling the table back alone would leave its state holding the changes undone
    assertThatThrownBy(() -> target.manageSnapshots().rollbackTo(first).commit())
        .isInstanceOf(ForbiddenException.class).hasMessageContaining("a change stream writes it");
    assertThatThrownBy(() -> target.updateProperties().remove("floe.cdc.state").commit())
        .isInstanceOf(ForbiddenException.class).hasMessageContaining("names its change stream's state");
    // other engines' writes to the table are theirs to make, as Floe's UPDATE is
    Record row = GenericRecord.create(target.schema());
    row.setField("id", 3L);
    row.setField("name", "spark");
    target.newAppend().appendFile(IcebergFiles.writeData(target, List.of(row), 10).get(0)).commit();
    assertThat(sql("SELECT id, name FROM cdc ORDER BY id")).containsExactly("1|a", "2|b", "3|spark");
    // the state is read, and not dropped or renamed by hand (a Floe applying a stream through this catalog
    // creates and commits it: those are not refused)
    String state = db.table("cdc").properties().get("floe.cdc.state");
    TableIdentifier stateId = TableIdentifier.of("floe_cdc", state.substring("floe_cdc.".length()));
    assertThat(rest.loadTable(stateId).currentSnapshot()).isNotNull();
    assertThatThrownBy(() -> rest.dropTable(stateId, true)).isInstanceOf(ForbiddenException.class);
    assertThatThrownBy(() -> rest.renameTable(stateId, TableIdentifier.of("floe_cdc", "mine")))
        .isInstanceOf(ForbiddenException.class);
    assertThat(rest.tableExists(stateId)).isTrue();
    // dropping the table drops its state
    assertThat(rest.dropTable(TableIdentifier.of("public", "cdc"), true)).isTrue();
    assertThat(rest.tableExists(stateId)).isFalse();
    assertThatThrownBy(() -> rest.dropNamespace(Namespace.of("floe_cdc"))).isInstanceOf(ForbiddenException.class);
  }

  @Test
  void stagedCreateCommitsWithTheFirstSnapshot() throws IOException {
    RESTCatalog rest = client();
    TableIdentifier id = TableIdentifier.of("public", "ctas");
    Transaction create = rest.buildTable(id, SCHEMA).createTransaction();
    assertThat(rest.tableExists(id)).isFalse();
    DataFile f = IcebergFiles.writeData(create.table(), rows(1, 4), 10).get(0);
    create.newAppend().appendFile(f).commit();
    create.commitTransaction();
    assertThat(sql("SELECT count(*), max(name) FROM ctas")).containsExactly("4|n4");
    assertThatThrownBy(() -> rest.buildTable(id, SCHEMA).createTransaction().commitTransaction())
        .isInstanceOf(AlreadyExistsException.class);
  }

  @Test
  void dropRenameAndNamespaces() throws IOException {
    RESTCatalog rest = client();
    rest.createNamespace(Namespace.of("s"));
    assertThatThrownBy(() -> rest.createNamespace(Namespace.of("s"))).isInstanceOf(AlreadyExistsException.class);
    Table t = rest.createTable(TableIdentifier.of("s", "t"), SCHEMA);
    t.newAppend().appendFile(IcebergFiles.writeData(t, rows(1, 1), 10).get(0)).commit();
    assertThatThrownBy(() -> rest.dropNamespace(Namespace.of("s"))).isInstanceOf(NamespaceNotEmptyException.class);
    rest.renameTable(TableIdentifier.of("s", "t"), TableIdentifier.of("s", "u"));
    assertThat(sql("SELECT count(*) FROM s.u")).containsExactly("1");
    assertThatThrownBy(() -> rest.loadTable(TableIdentifier.of("s", "t"))).isInstanceOf(NoSuchTableException.class);
    Path location = Path.of(rest.loadTable(TableIdentifier.of("s", "u")).location());
    assertThat(rest.dropTable(TableIdentifier.of("s", "u"), false)).isTrue();
    assertThat(Files.exists(location)).isTrue(); // without purge the files stay
    Table p = rest.createTable(TableIdentifier.of("s", "p"), SCHEMA);
    p.newAppend().appendFile(IcebergFiles.writeData(p, rows(1, 1), 10).get(0)).commit();
    assertThat(rest.dropTable(TableIdentifier.of("s", "p"), true)).isTrue();
    assertThat(Files.exists(Path.of(p.location()).resolve("data"))).isFalse();
    rest.dropNamespace(Namespace.of("s"));
    assertThat(rest.namespaceExists(Namespace.of("s"))).isFalse();
    assertThatThrownBy(() -> rest.loadNamespaceMetadata(Namespace.of("s")))
        .isInstanceOf(NoSuchNamespaceException.class);
    assertThatThrownBy(() -> rest.createTable(TableIdentifier.of("nope", "t"), SCHEMA))
        .isInstanceOf(NoSuchNamespaceException.class);
  }

  @Test
  void nothingOutsideTheWarehouseCanBeNamed() throws IOException {
    RESTCatalog rest = client();
    Path outside = Files.createDirectories(dir.resolve("outside"));
    assertThatThrownBy(() -> rest.buildTable(TableIdentifier.of("public", "x"), SCHEMA)
        .withLocation(outside.toString()).create()).isInstanceOf(ForbiddenException.class)
        .hasMessageContaining("outside the warehouse");
    assertThatThrownBy(() -> rest.buildTable(TableIdentifier.of("public", "x"), SCHEMA)
        .withProperty("write.data.path", "/etc").create()).isInstanceOf(ForbiddenException.class);
    Table t = rest.createTable(TableIdentifier.of("public", "x"), SCHEMA);
    assertThatThrownBy(() -> t.updateLocation().setLocation(outside.toString()).commit())
        .isInstanceOf(ForbiddenException.class);
    // a data file the server would read for SQL clients: refused at the commit
    Files.writeString(outside.resolve("secret.parquet"), "not yours");
    DataFile foreign = DataFiles.builder(PartitionSpec.unpartitioned()).withPath(outside.resolve("secret.parquet")
        .toString()).withFormat(FileFormat.PARQUET).withFileSizeInBytes(9).withRecordCount(1).build();
    assertThatThrownBy(() -> t.newAppend().appendFile(foreign).commit()).isInstanceOf(ForbiddenException.class)
        .hasMessageContaining("data file");
    assertThat(sql("SELECT count(*) FROM x")).containsExactly("0");
    assertThatThrownBy(() -> rest.registerTable(TableIdentifier.of("public", "r"), "/etc/passwd"))
        .isInstanceOf(ForbiddenException.class);
  }

  @Test
  void loadAnswersNotModifiedForTheSameMetadata() throws Exception {
    RESTCatalog rest = client();
    Table t = rest.createTable(TableIdentifier.of("public", "e"), SCHEMA);
    HttpClient http = HttpClient.newHttpClient();
    URI uri = URI.create(server.uri() + "/v1/namespaces/public/tables/e");
    HttpResponse<String> first = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(first.statusCode()).isEqualTo(200);
    String etag = first.headers().firstValue("ETag").orElseThrow();
    HttpResponse<String> same = http.send(HttpRequest.newBuilder(uri).header("If-None-Match", etag).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(same.statusCode()).isEqualTo(304);
    sql("INSERT INTO e VALUES (1, 'a')");
    HttpResponse<String> moved = http.send(HttpRequest.newBuilder(uri).header("If-None-Match", etag).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(moved.statusCode()).isEqualTo(200);
    assertThat(moved.headers().firstValue("ETag").orElseThrow()).isNotEqualTo(etag);
    // errors are the spec's ErrorModel
    HttpResponse<String> missing = http.send(HttpRequest.newBuilder(URI.create(server.uri()
        + "/v1/namespaces/public/tables/nope")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.body()).contains("\"type\":\"NoSuchTableException\"", "\"code\":404");
    HttpResponse<String> bad = http.send(HttpRequest.newBuilder(URI.create(server.uri() + "/v1/namespaces"))
        .POST(HttpRequest.BodyPublishers.ofString("{not json")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.body()).contains("BadRequestException");
    t.refresh();
  }

  @Test
  void tokensForFloeUsersWhenNotTrusted() throws Exception {
    server.close();
    new dev.floe.server.auth.Users(dir.resolve("wh")).put("spark", "s3cret");
    server = RestServer.start(db, RestServer.Config.defaults().withPort(0).withTrust(false));
    assertThatThrownBy(() -> client().listNamespaces()).isInstanceOf(NotAuthorizedException.class);
    assertThatThrownBy(() -> client(Map.of("credential", "spark:wrong")).listNamespaces())
        .isInstanceOf(NotAuthorizedException.class);
    RESTCatalog ok = client(Map.of("credential", "spark:s3cret"));
    assertThat(ok.listNamespaces()).contains(Namespace.of("public"));
    ok.createTable(TableIdentifier.of("public", "secured"), SCHEMA);
    assertThat(sql("SELECT count(*) FROM secured")).containsExactly("0");
  }

  @Test
  void tokensExpire() throws Exception {
    java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000);
    java.time.Clock clock = new java.time.Clock() {
      @Override
      public java.time.ZoneId getZone() {
        return java.time.ZoneOffset.UTC;
      }

      @Override
      public java.time.Clock withZone(java.time.ZoneId zone) {
        return this;
      }

      @Override
      public java.time.Instant instant() {
        return java.time.Instant.ofEpochMilli(now.get());
      }
    };
    new dev.floe.server.auth.Users(dir.resolve("wh")).put("spark", "s3cret");
    Tokens tokens = new Tokens(new dev.floe.server.auth.Users(dir.resolve("wh")), false,
        java.time.Duration.ofSeconds(60), clock);
    assertThatThrownBy(() -> tokens.grant(Map.of("grant_type", "client_credentials", "client_id", "spark",
        "client_secret", "nope"), java.util.Optional.empty())).isInstanceOf(Tokens.Refused.class);
    Tokens.Issued issued = tokens.grant(Map.of("grant_type", "client_credentials", "client_id", "spark",
        "client_secret", "s3cret"), java.util.Optional.empty());
    assertThat(issued.expiresInSeconds()).isEqualTo(60);
    assertThat(tokens.user(issued.token())).contains("spark");
    now.addAndGet(30_000);
    Tokens.Issued renewed = tokens.grant(Map.of("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token", issued.token()), java.util.Optional.empty());
    now.addAndGet(31_000);
    assertThat(tokens.user(issued.token())).isEmpty(); // expired
    assertThat(tokens.user(renewed.token())).contains("spark");
    assertThatThrownBy(() -> tokens.grant(Map.of("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token", issued.token()), java.util.Optional.empty())).isInstanceOf(Tokens.Refused.class);
    assertThat(tokens.user("made-up")).isEmpty();
  }
}
