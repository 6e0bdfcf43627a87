package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * UPDATE and MERGE over tens of millions of rows in a JVM with a 512 MB heap: the rows (over 1 GB as
 * Java objects) flow from DuckDB into new Parquet and delete files and never gather in the JVM.
 */
class StreamingMutationTest {
  static final long ROWS = 20_000_000;

  @TempDir
  Path dir;

  /** The child process: runs the statements and prints what it found. */
  public static void main(String[] args) {
    long n = Long.parseLong(args[1]);
    System.out.println("HEAP " + (Runtime.getRuntime().maxMemory() >> 20));
    try (Database db = Floe.open(Path.of(args[0]))) {
      db.sql("CREATE TABLE t (id bigint, v bigint, s text) WITH (format_version = " + args[2] + ")").close();
      db.sql("INSERT INTO t SELECT i, i, 'row number ' || i FROM range(0, " + n + ") AS r(i)").close();
      try (Result r = db.sql("UPDATE t SET v = v * 2, s = s || '!'")) {
        System.out.println("TAG " + r.commandTag());
      }
      try (Result r = db.sql("MERGE INTO t USING (SELECT i FROM range(0, " + n + ", 2) AS r(i)) AS s ON t.id = s.i "
          + "WHEN MATCHED THEN UPDATE SET v = v + 1")) {
        System.out.println("TAG " + r.commandTag());
      }
      try (Result r = db.sql("SELECT count(*), sum(v), count(*) FILTER (WHERE s LIKE '%!') FROM t")) {
        Row row = r.toList().get(0);
        System.out.println("ROWS " + row.getLong(0) + " " + row.get(1) + " " + row.getLong(2));
      }
    }
  }

  private List<String> child(String formatVersion) throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(List.of(java, "-Xmx512m", "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), StreamingMutationTest.class.getName(), dir.toString(),
        Long.toString(ROWS), formatVersion)).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(600, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out.lines().filter(l -> l.matches("(HEAP|TAG|ROWS) .*")).toList();
  }

  @Test
  void updateAndMergeOfTwentyMillionRowsFitInASmallHeap() throws Exception {
    long n = ROWS;
    // v = 2i for every row, plus 1 for even ids
    String sum = java.math.BigInteger.valueOf(n).multiply(java.math.BigInteger.valueOf(n - 1))
        .add(java.math.BigInteger.valueOf(n / 2)).toString();
    assertThat(child("3")).containsExactly("HEAP 512", "TAG UPDATE " + n, "TAG MERGE " + n / 2,
        "ROWS " + n + " " + sum + " " + n);
  }
}
