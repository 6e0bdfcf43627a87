package dev.floe.bench.spark;

import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/** The Spark local session the benchmarks measure: two cores, no UI, on loopback, UTC, Iceberg's extensions. */
final class LocalSpark {
  private LocalSpark() {}

  static SparkSession.Builder builder(String appName, Path scratch) {
    return SparkSession.builder()
        .appName(appName)
        .master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", scratch.resolve("spark-sql-warehouse").toString())
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions");
  }
}
