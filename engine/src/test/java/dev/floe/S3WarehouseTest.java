package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.S3Server;
import dev.floe.testing.S3ServerExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A warehouse whose tables are on a real S3-compatible server (s3proxy, started here): tables created,
 * written, mutated and read with every data and metadata file on object storage, read back by Iceberg's
 * own reader from S3, after a restart with no local copies, and by a read-only process.
 */
class S3WarehouseTest {
  @RegisterExtension
  static final S3ServerExtension S3 = new S3ServerExtension();
  @TempDir
  Path dir;

  private FloeConfig.Builder config(String prefix) {
    return FloeConfig.builder(dir).objectStore(new ObjectStore("s3://" + S3Server.BUCKET + "/" + prefix,
        S3.server().storage()));
  }

  private static List<String> rows(Database db, String sql) {
    List<String> out = new ArrayList<>();
    try (Result r = db.sql(sql)) {
      int n = r.columns().size();
      for (Row row : r) {
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < n; k++) {
          b.append(k > 0 ? "|" : "").append(row.getString(k));
        }
        out.add(b.toString());
      }
    }
    return out;
  }

  private static long filesUnder(Path p) throws IOException {
    if (!Files.exists(p)) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(p)) {
      return files.filter(Files::isRegularFile).count();
    }
  }

  /** The rows of a table as Iceberg's generic reader gives them, from S3 alone (its own S3FileIO). */
  private static TreeSet<String> icebergRows(String metadata, String... columns) throws IOException {
    try (org.apache.iceberg.aws.s3.S3FileIO io = new org.apache.iceberg.aws.s3.S3FileIO()) {
      Map<String, String> props = new java.util.HashMap<>(S3.server().storage());
      props.put("http-client.type", "urlconnection");
      io.initialize(props);
      org.apache.iceberg.Table t = new org.apache.iceberg.BaseTable(
          new org.apache.iceberg.StaticTableOperations(metadata, io), "t");
      TreeSet<String> out = new TreeSet<>();
      try (org.apache.iceberg.io.CloseableIterable<Record> it =
          org.apache.iceberg.data.IcebergGenerics.read(t).build()) {
        for (Record r : it) {
          StringBuilder b = new StringBuilder();
          for (int k = 0; k < columns.length; k++) {
            b.append(k > 0 ? "|" : "").append(r.getField(columns[k]));
          }
          out.add(b.toString());
        }
      }
      return out;
    }
  }

  private static String metadata(Database db, String table) {
    return db.icebergCatalog().metadataLocation(TableIdentifier.of("public", table)).orElseThrow();
  }

  @Test
  void tablesLiveOnObjectStorageAndEveryReaderSeesTheSameRows() throws Exception {
    List<String> expected;
    String ordersMetadata;
    try (Database db = Floe.open(config("wh1").build())) {
      db.sql("CREATE TABLE orders (id bigint PRIMARY KEY, customer text, amount numeric(10,2))").close();
      db.sql("INSERT INTO orders VALUES (1, 'ann', 10.50), (2, 'bob', 20.00), (3, 'cy', 30.25)").close();
      // a bulk write: DuckDB writes the files locally, Floe uploads them
      db.sql("INSERT INTO orders SELECT i, 'c' || (i % 17), i * 1.5 FROM range(4, 20004) t(i)").close();
      db.sql("UPDATE orders SET amount = amount + 1 WHERE id % 1000 = 0").close();
      db.sql("DELETE FROM orders WHERE id BETWEEN 100 AND 199").close();
      db.sql("UPDATE orders SET customer = 'ann2' WHERE id = 1").close(); // a point change, in the JVM
      db.sql("MERGE INTO orders o USING (SELECT 2 AS id, 99.99 AS amount UNION ALL SELECT 30000, 1.00) s "
          + "ON o.id = s.id WHEN MATCHED THEN UPDATE SET amount = s.amount "
          + "WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'new', s.amount)").close();
      db.sql("CREATE TABLE events (day date, kind text, n int) PARTITIONED BY (day)").close();
      db.sql("INSERT INTO events SELECT DATE '2026-01-01' + CAST(i % 5 AS int), 'k' || (i % 3), i FROM range(0, 1000) t(i)")
          .close();
      db.sql("DELETE FROM events WHERE n % 10 = 0").close();

      expected = rows(db, "SELECT id, customer, amount FROM orders ORDER BY id");
      assertThat(expected).hasSize(20003 - 100 + 1);
      assertThat(rows(db, "SELECT id, customer, amount FROM orders WHERE id = 1")).containsExactly("1|ann2|10.50");
      assertThat(rows(db, "SELECT amount FROM orders WHERE id = 2")).containsExactly("99.99");
      assertThat(rows(db, "SELECT amount FROM orders WHERE id = 2000")).containsExactly("3001.00");
      assertThat(rows(db, "SELECT count(*), sum(n) FROM events")).containsExactly("900|450000");
      assertThat(rows(db, "SELECT count(*) FROM events WHERE day = DATE '2026-01-01'")).containsExactly("100");
      // time travel to the first insert
      long first = db.table("orders").snapshots().get(0).snapshotId();
      assertThat(rows(db, "SELECT count(*) FROM orders FOR VERSION AS OF " + first)).containsExactly("3");

      ordersMetadata = metadata(db, "orders");
      assertThat(ordersMetadata).startsWith("s3://floe/wh1/public/orders");
      assertThat(db.table("orders").location()).startsWith("s3://floe/wh1/public/orders");
    }
    // every table file is on the server; the warehouse directory holds none outside its local copies
    assertThat(filesUnder(S3.server().objects("wh1/public"))).isGreaterThan(10);
    try (Stream<Path> files = Files.walk(dir)) {
      assertThat(files.filter(p -> p.toString().endsWith(".parquet") || p.toString().endsWith(".avro")
          || p.toString().endsWith(".metadata.json")).filter(p -> !p.startsWith(dir.resolve(".floe/objects"))))
          .isEmpty();
    }
    TreeSet<String> want = new TreeSet<>();
    for (String r : expected) {
      want.add(r);
    }
    assertThat(icebergRows(ordersMetadata, "id", "customer", "amount")).isEqualTo(want);

    // a restart with no local copies reads everything from the server again
    Files.walk(dir.resolve(".floe/objects")).sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile()
        .delete());
    try (Database db = Floe.open(config("wh1").build())) {
      assertThat(rows(db, "SELECT id, customer, amount FROM orders ORDER BY id")).isEqualTo(expected);
      assertThat(rows(db, "SELECT amount FROM orders WHERE id = 30000")).containsExactly("1.00");
      db.sql("DELETE FROM orders WHERE id > 20000").close();
      assertThat(rows(db, "SELECT count(*) FROM orders")).containsExactly("19900");
    }
    // a read-only process keeps its copies out of the warehouse
    long copies = filesUnder(dir.resolve(".floe/objects"));
    try (Database reader = Floe.open(config("wh1").readOnly(true).build())) {
      assertThat(rows(reader, "SELECT count(*), sum(amount) FROM orders")).isEqualTo(
          List.of(rows(reader, "SELECT count(*), sum(amount) FROM orders").get(0)));
      assertThat(rows(reader, "SELECT count(*) FROM orders")).containsExactly("19900");
    }
    assertThat(filesUnder(dir.resolve(".floe/objects"))).isEqualTo(copies);
  }

  @Test
  void locationsStayUnderTheWarehousesObjectStoreAndDropPurgeDeletesTheObjects() throws Exception {
    try (Database db = Floe.open(config("wh2").build())) {
      db.sql("CREATE TABLE t (a int) WITH (location = 's3://floe/wh2/elsewhere/t')").close();
      db.sql("INSERT INTO t VALUES (1), (2)").close();
      assertThat(db.table("t").location()).isEqualTo("s3://floe/wh2/elsewhere/t");
      assertThat(filesUnder(S3.server().objects("wh2/elsewhere/t"))).isGreaterThan(2);
      assertThatThrownBy(() -> db.sql("CREATE TABLE u (a int) WITH (location = 's3://floe/other/u')").close())
          .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("42501"));
      assertThatThrownBy(() -> db.sql("CREATE TABLE u (a int) WITH (location = 's3://floe/wh2/elsewhere/t/x')")
          .close()).isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("42P17"));
      assertThatThrownBy(() -> db.sql("CREATE TABLE u (a int) WITH (location = 's3://floe/wh2/../other/u')")
          .close()).isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("42P17"));
      assertThatThrownBy(() -> db.sql("CREATE TABLE u (a int) WITH (location = 'gs://floe/wh2/u')")
          .close()).isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("42501"));
      db.sql("DROP TABLE t PURGE").close();
      assertThat(filesUnder(S3.server().objects("wh2/elsewhere/t"))).isZero();
    }
  }

  @Test
  void unreferencedObjectsAreSweptAndForeignOnesStopTheSweep() throws Exception {
    try (Database db = Floe.open(config("wh3").build())) {
      db.sql("CREATE TABLE t (a int)").close();
      db.sql("INSERT INTO t VALUES (1), (2)").close();
      db.sql("INSERT INTO t VALUES (3)").close();
      db.sql("VACUUM t").close(); // compacts: the replaced files stay referenced by older versions until expiry
      String location = db.table("t").location();
      String key = location.substring("s3://floe/".length());
      // an orphan: a data file uploaded by a statement that never committed
      Path stray = S3.server().objects(key + "/data/00000-stray.parquet");
      Files.createDirectories(stray.getParent());
      Files.write(stray, new byte[] {'P', 'A', 'R', '1'});
      Thread.sleep(1100); // upload times have second precision
      long before = filesUnder(S3.server().objects(key));
      db.sql("ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '0s', dry_run => 'false')").close();
      assertThat(Files.exists(stray)).isFalse();
      assertThat(filesUnder(S3.server().objects(key))).isEqualTo(before - 1);
      assertThat(rows(db, "SELECT sum(a) FROM t")).containsExactly("6");
      // an object no Iceberg table writes: the location is not only this table's, so nothing is deleted
      Path foreign = S3.server().objects(key + "/data/notes.txt");
      Files.writeString(foreign, "mine");
      assertThatThrownBy(() -> db.sql("ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '0s', "
          + "dry_run => 'false')").close()).isInstanceOfSatisfying(FloeException.class,
          e -> assertThat(e.sqlState()).isEqualTo("55000"));
      assertThat(Files.exists(foreign)).isTrue();
    }
    try (Database db = Floe.open(config("wh3").build())) {
      assertThat(rows(db, "SELECT sum(a) FROM t")).containsExactly("6");
    }
  }

  @Test
  void aTailSealsAndCompactsIntoATableOnS3() throws Exception {
    try (Database db = Floe.open(config("wh4").build())) {
      db.sql("CREATE TABLE ev (ts timestamp NOT NULL, kind text, n int) WITH (tail = true, sort_by = 'ts')").close();
      for (int batch = 0; batch < 5; batch++) {
        db.sql("INSERT INTO ev SELECT TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL 1 SECOND, 'k' || (i % 3), "
            + "CAST(i AS int) FROM range(" + batch * 1000 + ", " + (batch + 1) * 1000 + ") t(i)").close();
        Log log = db.openLog("ev");
        assertThat(log.seal(true)).isEqualTo(1000L);
      }
      db.sql("INSERT INTO ev VALUES (TIMESTAMP '2027-01-01 00:00:00', 'late', -1)").close(); // unsealed
      assertThat(rows(db, "SELECT count(*), count(DISTINCT _offset), sum(n) FROM ev"))
          .containsExactly("5001|5001|12497499");
      db.sql("VACUUM ev").close(); // compacts the five sealed files
      assertThat(rows(db, "SELECT count(*), sum(n) FROM ev")).containsExactly("5001|12497499");
      assertThat(metadata(db, "ev")).startsWith("s3://floe/wh4/public/ev");
      assertThat(icebergRows(metadata(db, "ev"), "n")).hasSize(5000);
    }
    try (Database db = Floe.open(config("wh4").build())) {
      assertThat(rows(db, "SELECT count(*), sum(n) FROM ev")).containsExactly("5001|12497499");
    }
  }

  @Test
  void aStoreThatCannotBeReachedFailsStatementsCleanlyAndLosesNothing() throws Exception {
    try (Database db = Floe.open(config("wh5").build())) {
      db.sql("CREATE TABLE t (id bigint PRIMARY KEY, v text)").close();
      db.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')").close();
      S3.server().stop();
      try {
        for (String sql : List.of("INSERT INTO t VALUES (3, 'c')", "UPDATE t SET v = 'B' WHERE id = 2",
            "INSERT INTO t SELECT i, 'n' FROM range(10, 5010) r(i)", "CREATE TABLE u (a int)")) {
          assertThatThrownBy(() -> db.sql(sql).close()).as(sql).isInstanceOfSatisfying(FloeException.class,
              e -> assertThat(e.sqlState()).as(sql + ": " + e.getMessage()).isEqualTo("58030"));
        }
        // what is already here is still read from the local copies
        assertThat(rows(db, "SELECT id, v FROM t ORDER BY id")).containsExactly("1|a", "2|b");
      } finally {
        S3.server().start();
      }
      db.sql("INSERT INTO t VALUES (3, 'c')").close();
      db.sql("UPDATE t SET v = 'B' WHERE id = 2").close();
      assertThat(rows(db, "SELECT id, v FROM t ORDER BY id")).containsExactly("1|a", "2|B", "3|c");
    }
  }
}
