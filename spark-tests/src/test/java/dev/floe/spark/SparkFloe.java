package dev.floe.spark;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;

/**
 * One warehouse shared by every test class of this module: Floe opened on it with {@link Floe#open}, and a
 * local Spark session whose Iceberg catalog {@code floe} is a JdbcCatalog on the same {@code catalog.db}.
 *
 * <p>A SparkSession takes seconds to start and Floe holds the warehouse's writer lock, so both are created once
 * per JVM and closed by a shutdown hook; tests keep apart by using their own table names.
 */
final class SparkFloe {
  private static SparkFloe instance;

  final Path warehouse;
  final Database floe;
  final SparkSession spark;

  private SparkFloe(Path warehouse) {
    this.warehouse = warehouse;
    // Floe first: it creates catalog.db with the JdbcCatalog tables and the `public` namespace.
    this.floe = Floe.open(warehouse);
    this.spark = SparkSession.builder()
        .appName("floe-spark-tests")
        .master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        // java.time values: LocalDate, Instant (timestamp with local time zone), LocalDateTime (timestamp_ntz).
        .config("spark.sql.datetime.java8API.enabled", "true")
        .config("spark.sql.warehouse.dir", warehouse.resolve("spark-sql-warehouse").toString())
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.floe", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.floe.catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog")
        .config("spark.sql.catalog.floe.uri", "jdbc:sqlite:" + warehouse.resolve("catalog.db"))
        .config("spark.sql.catalog.floe.warehouse", warehouse.toString())
        .config("spark.sql.catalog.floe.jdbc.schema-version", "V1")
        // Spark's catalog would otherwise keep serving the table version it loaded first; Floe commits in between.
        .config("spark.sql.catalog.floe.cache-enabled", "false")
        .getOrCreate();
    Runtime.getRuntime().addShutdownHook(new Thread(this::close, "floe-spark-shutdown"));
  }

  static synchronized SparkFloe get() {
    if (instance == null) {
      try {
        Path root = Path.of(System.getProperty("spark.warehouse.root", "target/spark-warehouses"));
        Files.createDirectories(root);
        // The warehouse of the last run stays for a look after a failure; older ones go.
        try (Stream<Path> old = Files.list(root)) {
          old.filter(p -> p.getFileName().toString().startsWith("wh-")).forEach(SparkFloe::deleteTree);
        }
        instance = new SparkFloe(Files.createTempDirectory(root.toAbsolutePath(), "wh-"));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return instance;
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void close() {
    try {
      spark.stop();
    } finally {
      floe.close();
    }
  }

  /** Runs a Floe statement that returns no rows of interest. */
  void floeExec(String sql) {
    floe.sql(sql).close();
  }

  /** Every row of a Floe query, as canonical values. */
  List<List<String>> floeRows(String sql) {
    try (Result r = floe.sql(sql)) {
      List<List<String>> out = new ArrayList<>();
      for (Row row : r) {
        List<String> values = new ArrayList<>(row.size());
        for (int i = 0; i < row.size(); i++) {
          values.add(Canonical.value(row.get(i)));
        }
        out.add(values);
      }
      return out;
    }
  }

  /** Runs a Spark statement, discarding any rows. */
  void sparkExec(String sql) {
    spark.sql(sql).collectAsList();
  }

  /** Every row of a Spark query, as canonical values. */
  List<List<String>> sparkRows(String sql) {
    Dataset<org.apache.spark.sql.Row> ds = spark.sql(sql);
    List<List<String>> out = new ArrayList<>();
    for (org.apache.spark.sql.Row row : ds.collectAsList()) {
      List<String> values = new ArrayList<>(row.size());
      for (int i = 0; i < row.size(); i++) {
        values.add(Canonical.value(row.get(i)));
      }
      out.add(values);
    }
    return out;
  }
}
