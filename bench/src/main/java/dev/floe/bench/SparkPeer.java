package dev.floe.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Spark local as MutationBench's {@link MutationBench.IcebergPeer}: each statement runs in a child JVM started with
 * the classpath of the {@code bench-spark} module ({@code dev.floe.bench.spark.SparkStatement}), which bench/run
 * resolves with Maven into {@code bench/target/spark-classpath.txt}. A child JVM because Spark and the Iceberg Spark
 * runtime cannot share a classpath with floe-engine's iceberg-* and hadoop jars (spark-tests/pom.xml).
 */
final class SparkPeer implements MutationBench.IcebergPeer {
  static final String MAIN = "dev.floe.bench.spark.SparkStatement";

  /** What Spark's launcher passes on Java 17: {@code spark.jvm.opens} in spark-tests/pom.xml. */
  static final List<String> JVM_OPTIONS = List.of(
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
      "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
      "-Djdk.reflect.useDirectMethodHandle=false",
      "-Dio.netty.tryReflectionSetAccessible=true");

  private final String heap;
  private final Path scratch;
  private final long warmUpRows;
  private final String classpath;
  private final String unavailable;

  /**
   * @param classpathFile the child's classpath on one line; if it is missing, {@code <classpathFile>.error} says why
   *     (bench/run writes it when the module does not build or resolve)
   * @param scratch a directory for the child's shuffle files and warm-up table, deleted after each statement
   */
  SparkPeer(Path classpathFile, String heap, Path scratch, long warmUpRows) {
    this.heap = heap;
    this.scratch = scratch;
    this.warmUpRows = warmUpRows;
    String cp = null;
    String why = null;
    try {
      if (Files.isRegularFile(classpathFile) && !Files.readString(classpathFile).isBlank()) {
        cp = Files.readString(classpathFile).strip();
      } else {
        Path error = Path.of(classpathFile + ".error");
        why = Files.exists(error) ? Files.readString(error).strip().replaceAll("\\s*\n\\s*", " / ")
            : "no Spark classpath at " + classpathFile + " (bench/run resolves it from the bench-spark module)";
      }
    } catch (IOException e) {
      why = "cannot read " + classpathFile + ": " + e;
    }
    this.classpath = cp;
    this.unavailable = why;
  }

  @Override
  public String name() {
    return "Spark local[2]";
  }

  @Override
  public String unavailable() {
    return unavailable;
  }

  @Override
  public MutationBench.PeerRun run(Path warehouse, String table, String sql) throws Exception {
    MutationBench.deleteTree(scratch);
    Files.createDirectories(scratch.resolve("tmp"));
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(JVM_OPTIONS);
    cmd.add("-Xmx" + heap);
    // Spark's block manager and shuffle files, and the native libraries sqlite-jdbc, Snappy etc. extract, go there.
    cmd.add("-Djava.io.tmpdir=" + scratch.resolve("tmp"));
    cmd.addAll(List.of("-cp", classpath, MAIN, warehouse.toString(), table, sql, scratch.toString(),
        Long.toString(warmUpRows)));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(scratch.toFile()).redirectErrorStream(true);
    // Spark binds its driver to this address instead of guessing one from the hostname (as in spark-tests).
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    Map<String, String> values = new LinkedHashMap<>();
    Deque<String> tail = new ArrayDeque<>();
    long t0 = System.nanoTime();
    int exit;
    try {
      Process p = pb.start();
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          if (line.startsWith("SPARKBENCH ")) {
            String[] f = line.split(" ", 3);
            values.put(f[1], f.length > 2 ? f[2] : "");
          } else {
            System.err.println("  spark| " + line);
            tail.addLast(line);
            if (tail.size() > 8) {
              tail.removeFirst();
            }
          }
        }
      }
      exit = p.waitFor();
    } finally {
      MutationBench.deleteTree(scratch);
    }
    double jvm = (System.nanoTime() - t0) / 1e9;
    if (exit != 0 || !values.containsKey("statement_ms")) {
      throw new MutationBench.PeerFailure(String.format(java.util.Locale.ROOT, "exit %d after %.1f s%s: %s", exit, jvm,
          values.containsKey("warmup_ms") ? " (the measured statement failed)"
              : values.containsKey("startup_ms") ? " (in the warm-up)" : " (before the SparkSession started)",
          String.join(" / ", tail)), values.containsKey("startup_ms"));
    }
    Map<String, String> summary = new LinkedHashMap<>();
    for (String kv : values.getOrDefault("summary", "").split(";")) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        summary.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    return new MutationBench.PeerRun(seconds(values, "statement_ms"), seconds(values, "startup_ms"),
        seconds(values, "warmup_ms"), jvm, values.getOrDefault("versions", "?"), summary,
        Long.parseLong(values.getOrDefault("peak_rss_kb", "-1")));
  }

  private static double seconds(Map<String, String> values, String key) {
    return Long.parseLong(values.getOrDefault(key, "-1")) / 1e3;
  }
}
