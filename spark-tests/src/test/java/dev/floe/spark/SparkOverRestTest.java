package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spark 4.1 with Iceberg's REST catalog against {@code floe serve}'s REST endpoint, Floe's side through
 * pgjdbc on the same server: each reads every write of the other with no restart, and concurrent conflicting
 * updates from both end as some serial order of them.
 */
class SparkOverRestTest {
  private static FloeServerProcess floe;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws Exception {
    spark = SparkFloe.get().spark; // the module's one Spark session, with a second catalog: rest
    Path warehouse = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "rest-wh-");
    floe = new FloeServerProcess(warehouse);
    spark.conf().set("spark.sql.catalog.rest", "org.apache.iceberg.spark.SparkCatalog");
    spark.conf().set("spark.sql.catalog.rest.type", "rest");
    spark.conf().set("spark.sql.catalog.rest.uri", floe.restUri);
    spark.conf().set("spark.sql.catalog.rest.cache-enabled", "false");
  }

  @AfterAll
  static void stop() throws Exception {
    if (floe != null) {
      floe.close();
    }
  }

  /** A statement's rows in Spark (the module's one session), each value canonical ({@link Canonical}). */
  static List<List<String>> spark(String sql) {
    List<List<String>> out = new ArrayList<>();
    for (org.apache.spark.sql.Row row : SparkFloe.get().spark.sql(sql).collectAsList()) {
      List<String> values = new ArrayList<>();
      for (int i = 0; i < row.size(); i++) {
        values.add(Canonical.value(row.get(i)));
      }
      out.add(values);
    }
    return out;
  }

  @Test
  void eachReadsEveryWriteOfTheOther() throws Exception {
    spark("CREATE NAMESPACE IF NOT EXISTS rest.sales");
    spark("CREATE TABLE rest.sales.orders (id bigint, item string, qty bigint) USING iceberg "
        + "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read', "
        + "'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')");
    spark("INSERT INTO rest.sales.orders VALUES (1, 'apple', 3), (2, 'pear', 5), (3, 'fig', 7)");
    String order = " ORDER BY id";
    assertThat(floe.rows("SELECT id, item, qty FROM sales.orders" + order))
        .isEqualTo(spark("SELECT * FROM rest.sales.orders" + order)).hasSize(3);

    floe.exec("INSERT INTO sales.orders VALUES (4, 'kiwi', 1)");
    floe.exec("UPDATE sales.orders SET qty = qty + 100 WHERE id = 2");
    floe.exec("DELETE FROM sales.orders WHERE id = 3");
    assertThat(spark("SELECT * FROM rest.sales.orders" + order))
        .isEqualTo(floe.rows("SELECT id, item, qty FROM sales.orders" + order)).hasSize(3);

    spark("MERGE INTO rest.sales.orders t USING (SELECT 1 AS id, 'plum' AS item, 9L AS qty UNION ALL "
        + "SELECT 5, 'lime', 2L) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.item = s.item "
        + "WHEN NOT MATCHED THEN INSERT *");
    spark("UPDATE rest.sales.orders SET qty = 0 WHERE id = 4");
    spark("DELETE FROM rest.sales.orders WHERE id = 2");
    List<List<String>> expected = List.of(
        List.of("long:1", "text:plum", "long:3"), List.of("long:4", "text:kiwi", "long:0"),
        List.of("long:5", "text:lime", "long:2"));
    assertThat(floe.rows("SELECT id, item, qty FROM sales.orders" + order)).isEqualTo(expected);
    assertThat(spark("SELECT * FROM rest.sales.orders" + order)).isEqualTo(expected);

    // time travel: Spark reads a version Floe wrote, by the snapshot id Floe reports
    List<List<String>> history = floe.rows("SELECT snapshot_id FROM sales.\"orders$snapshots\" "
        + "ORDER BY sequence_number");
    String third = history.get(2).get(0).replaceFirst("^long:", "");
    assertThat(spark("SELECT count(*) FROM rest.sales.orders VERSION AS OF " + third))
        .isEqualTo(floe.rows("SELECT count(*) FROM sales.orders FOR VERSION AS OF " + third));

    // maintenance procedures through the REST catalog; Floe reads the rewritten table
    spark("CALL rest.system.rewrite_data_files(table => 'sales.orders', options => map('min-input-files', '1'))");
    String now = java.time.LocalDateTime.now(java.time.ZoneOffset.UTC).plusSeconds(1).withNano(0).toString()
        .replace('T', ' ');
    spark("CALL rest.system.expire_snapshots(table => 'sales.orders', older_than => TIMESTAMP '" + now
        + "', retain_last => 1)");
    assertThat(floe.rows("SELECT id, item, qty FROM sales.orders" + order)).isEqualTo(expected);
    assertThat(floe.rows("SELECT count(*) FROM sales.\"orders$snapshots\""))
        .containsExactly(List.of("long:1"));
  }

  @Test
  void concurrentConflictingUpdatesEndAsASerialOrder() throws Exception {
    spark("CREATE NAMESPACE IF NOT EXISTS rest.race");
    spark("CREATE TABLE rest.race.counter (id bigint, n bigint) USING iceberg "
        + "TBLPROPERTIES ('format-version' = '2', 'write.update.mode' = 'merge-on-read', "
        + "'write.merge.mode' = 'merge-on-read')");
    spark("INSERT INTO rest.race.counter VALUES (1, 0), (2, 0)");
    int rounds = 6;
    int[] retries = new int[2];
    for (int round = 0; round < rounds; round++) {
      CompletableFuture<Void> sparkSide = CompletableFuture.runAsync(() -> {
        while (true) {
          try {
            spark("MERGE INTO rest.race.counter t USING (SELECT 1L AS id) s ON t.id = s.id "
                + "WHEN MATCHED THEN UPDATE SET t.n = t.n + 1");
            return;
          } catch (RuntimeException e) {
            retries[0]++; // Iceberg's validation found Floe's concurrent delete of the same row: run it again
            assertThat(retries[0]).as("spark retries").isLessThan(50);
          }
        }
      });
      try (Connection c = floe.connect(); Statement st = c.createStatement()) {
        while (true) {
          try {
            st.execute("UPDATE race.counter SET n = n + 100 WHERE id = 1");
            break;
          } catch (SQLException e) {
            assertThat(e.getSQLState()).isEqualTo("40001");
            retries[1]++;
            assertThat(retries[1]).as("floe retries").isLessThan(50);
          }
        }
      }
      sparkSide.get();
    }
    System.out.printf("SparkOverRestTest: %d rounds, Spark retried %d times, Floe %d%n", rounds, retries[0],
        retries[1]);
    // every increment of both sides applied exactly once, as some serial order would
    assertThat(floe.rows("SELECT id, n FROM race.counter ORDER BY id")).containsExactly(
        List.of("long:1", "long:" + (101L * rounds)), List.of("long:2", "long:0"));
    assertThat(spark("SELECT * FROM rest.race.counter ORDER BY id")).containsExactly(
        List.of("long:1", "long:" + (101L * rounds)), List.of("long:2", "long:0"));
  }
}
