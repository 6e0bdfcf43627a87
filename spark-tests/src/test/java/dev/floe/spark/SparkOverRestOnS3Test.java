package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.S3Server;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spark over Floe's REST catalog on a warehouse whose tables are on S3 (s3proxy, started here): Spark is told
 * only the catalog's URI and to use S3FileIO, and reaches the files with what each table load gives it (the
 * endpoint and path-style access from the server, credentials vended by it); each side reads every write of
 * the other.
 */
class SparkOverRestOnS3Test {
  private static S3Server s3;
  private static FloeServerProcess floe;

  @BeforeAll
  static void start() throws Exception {
    Path s3dir = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "rest-s3-");
    s3 = S3Server.start(s3dir);
    Path warehouse = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "rest-s3-wh-");
    floe = new FloeServerProcess(warehouse, List.of("--warehouse-location", "s3://" + S3Server.BUCKET + "/lake",
        "--s3-endpoint", s3.endpoint(), "--rest-vend-credentials"),
        Map.of("AWS_ACCESS_KEY_ID", S3Server.ACCESS_KEY, "AWS_SECRET_ACCESS_KEY", S3Server.SECRET_KEY));
    var spark = SparkFloe.get().spark;
    String c = "spark.sql.catalog.rests3";
    spark.conf().set(c, "org.apache.iceberg.spark.SparkCatalog");
    spark.conf().set(c + ".type", "rest");
    spark.conf().set(c + ".uri", floe.restUri);
    spark.conf().set(c + ".cache-enabled", "false");
    spark.conf().set(c + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    spark.conf().set(c + ".http-client.type", "urlconnection");
    spark.conf().set(c + ".header.X-Iceberg-Access-Delegation", "vended-credentials");
  }

  @AfterAll
  static void stop() throws Exception {
    if (floe != null) {
      floe.close();
    }
    if (s3 != null) {
      s3.close();
    }
  }

  private static List<List<String>> spark(String sql) {
    return SparkOverRestTest.spark(sql);
  }

  @Test
  void sparkAndFloeWriteAndReadTheSameTablesOnS3() throws Exception {
    spark("CREATE NAMESPACE IF NOT EXISTS rests3.shop");
    spark("CREATE TABLE rests3.shop.items (id bigint, name string, qty bigint) USING iceberg "
        + "TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read', "
        + "'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')");
    spark("INSERT INTO rests3.shop.items VALUES (1, 'apple', 3), (2, 'pear', 5), (3, 'fig', 7)");
    String order = " ORDER BY id";
    assertThat(floe.rows("SELECT id, name, qty FROM shop.items" + order))
        .isEqualTo(spark("SELECT * FROM rests3.shop.items" + order)).hasSize(3);

    floe.exec("INSERT INTO shop.items SELECT i, 'n' || i, i FROM generate_series(10, 2009) AS g(i)");
    floe.exec("UPDATE shop.items SET qty = qty + 100 WHERE id = 2");
    floe.exec("DELETE FROM shop.items WHERE id = 3 OR id % 10 = 0");
    assertThat(spark("SELECT count(*), sum(qty) FROM rests3.shop.items"))
        .isEqualTo(floe.rows("SELECT count(*), CAST(sum(qty) AS bigint) FROM shop.items"));

    spark("MERGE INTO rests3.shop.items t USING (SELECT 1 AS id, 'plum' AS name, 9L AS qty "
        + "UNION ALL SELECT 5000, 'lime', 2L) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.name = s.name "
        + "WHEN NOT MATCHED THEN INSERT *");
    spark("DELETE FROM rests3.shop.items WHERE id BETWEEN 100 AND 199");
    assertThat(floe.rows("SELECT id, name, qty FROM shop.items WHERE id IN (1, 2, 5000)" + order))
        .isEqualTo(List.of(List.of("long:1", "text:plum", "long:3"), List.of("long:2", "text:pear", "long:105"),
            List.of("long:5000", "text:lime", "long:2")));
    assertThat(floe.rows("SELECT count(*), CAST(sum(qty) AS bigint) FROM shop.items"))
        .isEqualTo(spark("SELECT count(*), sum(qty) FROM rests3.shop.items"));
    // every file of the table is on the server, written by both
    assertThat(floe.rows("SELECT bool_and(starts_with(file_path, 's3://floe/lake/shop/items')) "
        + "FROM shop.\"items$files\"")).containsExactly(List.of("bool:true"));
    assertThat(Files.isDirectory(s3.objects("lake/shop"))).isTrue();
  }
}
