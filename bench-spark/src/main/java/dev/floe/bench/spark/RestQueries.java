package dev.floe.bench.spark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.SparkSession;

/**
 * Queries on a Floe table with Spark SQL in local mode, through Floe's Iceberg REST catalog: RestBench's "Spark
 * over Floe's REST catalog" beside Floe's own PostgreSQL port. Run in its own JVM, with this module's classpath.
 *
 * <p>Usage: {@code RestQueries <rest uri> <scratch dir> <runs> <name>=<sql> ...}. Starts a SparkSession
 * ({@code local[2]}, timed), whose catalog {@code floe} is the REST catalog at {@code <rest uri>}; then runs each
 * query once to warm up and {@code runs} times timed (every row collected). Prints {@code SPARKBENCH startup_ms N}
 * and, per query, {@code SPARKBENCH <name> <ms>,<ms>,...}.
 */
public final class RestQueries {
  public static void main(String[] args) throws Exception {
    if (args.length < 4) {
      System.err.println("usage: RestQueries <rest uri> <scratch dir> <runs> <name>=<sql> ...");
      System.exit(2);
    }
    String uri = args[0];
    Path scratch = Path.of(args[1]).toAbsolutePath();
    int runs = Integer.parseInt(args[2]);
    Files.createDirectories(scratch);
    long t0 = System.nanoTime();
    SparkSession spark = LocalSpark.builder("floe-bench-spark-rest", scratch)
        .config("spark.sql.catalog.floe", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.floe.type", "rest")
        .config("spark.sql.catalog.floe.uri", uri)
        .config("spark.sql.catalog.floe.cache-enabled", "false")
        .getOrCreate();
    print("startup_ms", Long.toString((System.nanoTime() - t0) / 1_000_000));
    print("versions", "Spark " + spark.version() + ", Iceberg " + org.apache.iceberg.IcebergBuild.version());
    try {
      for (String query : Arrays.copyOfRange(args, 3, args.length)) {
        int eq = query.indexOf('=');
        String name = query.substring(0, eq);
        String sql = query.substring(eq + 1);
        spark.sql(sql).collectAsList(); // warm-up
        List<String> times = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
          long t = System.nanoTime();
          spark.sql(sql).collectAsList();
          times.add(String.format(java.util.Locale.ROOT, "%.3f", (System.nanoTime() - t) / 1e6));
        }
        print(name, String.join(",", times));
      }
    } finally {
      spark.stop();
    }
  }

  private static void print(String key, String value) {
    System.out.println("SPARKBENCH " + key + " " + value);
    System.out.flush();
  }
}
