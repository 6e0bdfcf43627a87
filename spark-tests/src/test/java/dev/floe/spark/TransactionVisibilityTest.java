package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Transaction;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.junit.jupiter.api.Test;

/**
 * A Floe transaction writes two tables; Spark, reading through the same catalog.db, sees both changes or
 * neither. Each of Spark's reads takes the two tables' pointers from the catalog in one query (the catalog
 * is where Floe's commit is atomic: both pointers move in one SQLite transaction) and reads each table at
 * the snapshot its pointer named, while Floe keeps committing.
 */
class TransactionVisibilityTest {
  @Test
  void sparkSeesBothTablesOfATransactionOrNeither() throws Exception {
    SparkFloe sf = SparkFloe.get();
    for (String t : List.of("tv_a", "tv_b")) {
      sf.floeExec("CREATE TABLE " + t + " (id integer, n integer) WITH (format_version = 3)");
      sf.floeExec("INSERT INTO " + t + " VALUES (1, 0), (2, 0)");
    }
    AtomicBoolean done = new AtomicBoolean();
    CompletableFuture<Integer> writer = CompletableFuture.supplyAsync(() -> {
      int committed = 0;
      while (!done.get() && committed < 200) {
        try (Transaction tx = sf.floe.begin()) {
          tx.sql("UPDATE tv_a SET n = n + 1 WHERE id = 1").close();
          tx.sql("UPDATE tv_b SET n = n + 1 WHERE id = 2").close();
          tx.commit();
          committed++;
        }
      }
      return committed;
    });
    int reads = 0;
    try (Connection catalog = DriverManager.getConnection("jdbc:sqlite:" + sf.warehouse.resolve("catalog.db"))) {
      HadoopFileIO io = new HadoopFileIO(new Configuration());
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (System.nanoTime() < deadline && reads < 12) {
        Map<String, String> pointers = new HashMap<>();
        try (Statement st = catalog.createStatement(); ResultSet rs = st.executeQuery(
            "SELECT table_name, metadata_location FROM iceberg_tables WHERE table_name IN ('tv_a', 'tv_b')")) {
          while (rs.next()) {
            pointers.put(rs.getString(1), rs.getString(2));
          }
        }
        long snapshotA;
        long snapshotB;
        try {
          snapshotA = TableMetadataParser.read(io, pointers.get("tv_a")).currentSnapshot().snapshotId();
          snapshotB = TableMetadataParser.read(io, pointers.get("tv_b")).currentSnapshot().snapshotId();
        } catch (org.apache.iceberg.exceptions.NotFoundException gone) {
          // the writer committed past the catalog state read (old metadata files are deleted after a few
          // commits): read the pointers again, as a reader of the catalog would
          continue;
        }
        long a = sparkSum(sf, "tv_a", snapshotA);
        long b = sparkSum(sf, "tv_b", snapshotB);
        assertThat(a).as("Spark's read %d: tv_a and tv_b at one catalog state", reads).isEqualTo(b);
        reads++;
      }
    } finally {
      done.set(true);
    }
    int committed = writer.get(120, TimeUnit.SECONDS);
    assertThat(committed).isPositive();
    assertThat(sf.sparkRows("SELECT sum(n) FROM floe.public.tv_a")).isEqualTo(List.of(List.of("long:" + committed)));
    assertThat(sf.sparkRows("SELECT sum(n) FROM floe.public.tv_b")).isEqualTo(List.of(List.of("long:" + committed)));
    assertThat(reads).isGreaterThan(1);
  }

  private static long sparkSum(SparkFloe sf, String table, long snapshotId) {
    Object v = sf.spark.sql("SELECT sum(n) FROM floe.public." + table + " VERSION AS OF " + snapshotId)
        .collectAsList().get(0).get(0);
    return ((Number) v).longValue();
  }
}
