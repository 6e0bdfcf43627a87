package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Log;
import dev.floe.testing.S3Server;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A log publishes to an Iceberg table on a real S3-compatible server (s3proxy); Spark, with Iceberg's S3FileIO
 * and a catalog of its own, registers the published table from its metadata file and reads exactly the rows
 * Floe reads from it.
 */
class SparkReadsPublishedTableTest {
  @Test
  void sparkReadsTheTableALogPublishedToS3(@TempDir Path s3dir, @TempDir Path sparkCatalog) throws Exception {
    S3Server.useCredentials(); // the AWS default chain, for Floe and for Spark's S3FileIO alike
    try (S3Server s3 = S3Server.start(s3dir)) {
      SparkFloe sf = SparkFloe.get();
      String location = "s3://" + S3Server.BUCKET + "/lake/sp_pub";
      Log log = sf.floe.newLog("sp_pub", "id bigint NOT NULL, ts timestamptz NOT NULL, s text", "ts",
          Log.Config.DEFAULT.withPublishTo(location, s3.storage()));
      List<Object[]> rows = new ArrayList<>();
      for (long i = 0; i < 500; i++) {
        rows.add(new Object[] {i, Instant.parse("2026-01-01T00:00:00Z").plusSeconds(i), i % 3 == 0 ? null : "s" + i});
      }
      log.extend(rows);
      log.advance(true);
      log.append(500L, Instant.parse("2026-01-02T00:00:00Z"), "unsealed");
      assertThat(log.publishedThrough()).isEqualTo(500);

      String prefix = "spark.sql.catalog.pub";
      sf.spark.conf().set(prefix, "org.apache.iceberg.spark.SparkCatalog");
      // a catalog of Spark's own (not Floe's catalog.db), whose files are on S3
      sf.spark.conf().set(prefix + ".catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog");
      sf.spark.conf().set(prefix + ".uri", "jdbc:sqlite:" + sparkCatalog.resolve("spark-catalog.db"));
      sf.spark.conf().set(prefix + ".jdbc.schema-version", "V1");
      sf.spark.conf().set(prefix + ".warehouse", "s3://" + S3Server.BUCKET + "/spark-warehouse");
      sf.spark.conf().set(prefix + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
      sf.spark.conf().set(prefix + ".http-client.type", "urlconnection");
      s3.storage().forEach((k, v) -> sf.spark.conf().set(prefix + "." + k, v));
      String metadata = sf.floe.table("sp_pub").properties().get("floe.tail.published-metadata");
      assertThat(metadata).startsWith(location + "/metadata/");
      sf.spark.sql("CREATE NAMESPACE IF NOT EXISTS pub.lake");
      sf.spark.sql("CALL pub.system.register_table(table => 'pub.lake.sp_pub', metadata_file => '" + metadata + "')");

      // Spark sees the published rows; Floe sees those and the one still unsealed
      assertThat(sf.sparkRows("SELECT count(*), count(s), max(id), min(_offset), max(_offset) FROM pub.lake.sp_pub"))
          .isEqualTo(sf.floeRows("SELECT count(*), count(s), max(id), min(_offset), max(_offset) FROM sp_pub "
              + "WHERE _offset < 500"));
      Canonical.assertSame("the published rows (expected: Floe, actual: Spark)",
          sf.floeRows("SELECT id, ts, s, _offset FROM sp_pub WHERE _offset < 500 ORDER BY id"),
          sf.sparkRows("SELECT id, ts, s, _offset FROM pub.lake.sp_pub ORDER BY id"));
    }
  }
}
