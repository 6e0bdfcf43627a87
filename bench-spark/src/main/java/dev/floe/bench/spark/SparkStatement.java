package dev.floe.bench.spark;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.iceberg.spark.SparkCatalog;
import org.apache.spark.sql.SparkSession;

/**
 * One statement on a Floe table with Spark SQL in local mode, for MutationBench's "Floe vs Spark local on the same
 * table". Run in its own JVM, with this module's classpath (Spark, the Iceberg Spark runtime, sqlite-jdbc; no Floe).
 *
 * <p>Usage: {@code SparkStatement <warehouse> <table> <sql> <scratch dir> [<warm-up rows>]}. {@code sql} names the
 * table as {@code {table}} and, for a procedure call, its catalog as {@code {catalog}} ({@code CALL
 * {catalog}.system.rewrite_data_files(table => '{table}')}: Iceberg's procedures run on tables of their own catalog)
 * and its name in the catalog as {@code {name}}. Spark's catalog {@code floe} is Iceberg's JdbcCatalog on {@code <warehouse>/catalog.db},
 * configured as in spark-tests and docs/spark.md; the table is {@code floe.public.<table>}.
 *
 * <ol>
 *   <li>starts a SparkSession ({@code local[2]}), timed;
 *   <li>warms up: copies the first {@code warm-up rows} (default 50,000) of the table into a scratch table with the
 *       same schema, partitioning and properties (so the same format version and write modes), in a Hadoop catalog
 *       under the scratch directory (for a procedure call, in four commits, so that a rewrite has files to merge),
 *       and runs the statement on it, so the measured statement is not the first of its kind in the JVM
 *       (MutationBench warms Floe up alike);
 *   <li>runs the statement on the table, timed;
 *   <li>prints the summary of the snapshot it committed.
 * </ol>
 *
 * Results go to stdout as lines {@code SPARKBENCH <key> <value>}; Spark's own logging goes to stderr at WARN.
 * The scratch table stays under the scratch directory, which the caller deletes; so do Spark's shuffle files and
 * extracted native libraries when the caller sets {@code java.io.tmpdir} there (MutationBench does).
 */
public final class SparkStatement {
  public static void main(String[] args) throws Exception {
    if (args.length < 4) {
      System.err.println("usage: SparkStatement <warehouse> <table> <sql with {table}> <scratch dir> [<warm-up rows>]");
      System.exit(2);
    }
    Path warehouse = Path.of(args[0]).toAbsolutePath();
    String table = args[1];
    String sql = args[2];
    Path scratch = Path.of(args[3]).toAbsolutePath();
    long warmUpRows = args.length > 4 ? Long.parseLong(args[4]) : 50_000;
    Files.createDirectories(scratch);

    long t0 = System.nanoTime();
    SparkSession spark = LocalSpark.builder("floe-bench-spark", scratch)
        .config("spark.sql.catalog.floe", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.floe.catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog")
        .config("spark.sql.catalog.floe.uri", "jdbc:sqlite:" + warehouse.resolve("catalog.db"))
        .config("spark.sql.catalog.floe.warehouse", warehouse.toString())
        .config("spark.sql.catalog.floe.jdbc.schema-version", "V1")
        .config("spark.sql.catalog.floe.cache-enabled", "false")
        // The warm-up table: not in Floe's catalog, so the warehouse holds exactly what the measured statement did.
        .config("spark.sql.catalog.scratch", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.scratch.type", "hadoop")
        .config("spark.sql.catalog.scratch.warehouse", scratch.resolve("warehouse").toString())
        .config("spark.sql.catalog.scratch.cache-enabled", "false")
        .getOrCreate();
    print("startup_ms", ms(t0));
    print("versions", "Spark " + spark.version() + ", Iceberg " + org.apache.iceberg.IcebergBuild.version());
    try {
      String target = "floe.public." + table;

      long t1 = System.nanoTime();
      Table source = Spark3Util.loadIcebergTable(spark, target);
      Map<String, String> properties = new HashMap<>(source.properties());
      properties.put("format-version",
          Integer.toString(((HasTableOperations) source).operations().current().formatVersion()));
      Catalog scratchCatalog = ((SparkCatalog) spark.sessionState().catalogManager().catalog("scratch"))
          .icebergCatalog();
      scratchCatalog.createTable(TableIdentifier.of("bench", "warm_up"), source.schema(), source.spec(), properties);
      boolean procedure = sql.contains("{catalog}");
      for (int i = 0; i < (procedure ? 4 : 1); i++) {
        spark.sql("INSERT INTO scratch.bench.warm_up SELECT * FROM " + target + " LIMIT "
            + (procedure ? Math.max(1, warmUpRows / 4) : warmUpRows)).collectAsList();
      }
      spark.sql(bind(sql, "scratch", "bench.warm_up")).collectAsList();
      print("warmup_ms", ms(t1));

      long t2 = System.nanoTime();
      java.util.List<org.apache.spark.sql.Row> result = spark.sql(bind(sql, "floe", "public." + table)).collectAsList();
      print("statement_ms", ms(t2));
      if (!result.isEmpty()) {
        print("result", result.get(0).toString());
      }

      Table after = Spark3Util.loadIcebergTable(spark, target);
      Snapshot snapshot = after.currentSnapshot();
      print("operation", snapshot.operation());
      StringBuilder summary = new StringBuilder();
      new TreeMap<>(snapshot.summary()).forEach((k, v) -> summary.append(summary.length() == 0 ? "" : ";")
          .append(k).append('=').append(v));
      print("summary", summary.toString());
    } finally {
      spark.stop();
    }
    print("peak_heap_bytes", Long.toString(peakHeap()));
    print("peak_rss_kb", Long.toString(peakRssKb()));
  }

  /** The statement for the table {@code name} of {@code catalog}. */
  private static String bind(String sql, String catalog, String name) {
    return sql.replace("{table}", catalog + "." + name).replace("{catalog}", catalog).replace("{name}", name);
  }

  private static String ms(long startNanos) {
    return Long.toString((System.nanoTime() - startNanos) / 1_000_000);
  }

  private static void print(String key, String value) {
    System.out.println("SPARKBENCH " + key + " " + value);
    System.out.flush();
  }

  private static long peakHeap() {
    long peak = 0;
    for (var pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == java.lang.management.MemoryType.HEAP && pool.getPeakUsage() != null) {
        peak += pool.getPeakUsage().getUsed();
      }
    }
    return peak;
  }

  private static long peakRssKb() {
    try {
      for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (l.startsWith("VmHWM:")) {
          return Long.parseLong(l.replaceAll("[^0-9]", ""));
        }
      }
    } catch (Exception e) {
      // not Linux
    }
    return -1;
  }
}
