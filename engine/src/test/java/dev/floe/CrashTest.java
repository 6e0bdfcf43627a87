package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A writer process is killed with SIGKILL in the middle of a stream of INSERT, UPDATE and DELETE
 * commits, several times; after each kill the table holds exactly the statements that were
 * acknowledged, plus possibly the one in flight, and every file its metadata names is there.
 */
class CrashTest {
  @TempDir
  Path dir;

  /**
   * The killed children's temporary directory: DuckDB's JDBC driver unpacks its 69 MB native library
   * there and only a JVM that exits deletes it, so a killed child would leave it in the machine's /tmp.
   */
  @TempDir
  Path childTmp;

  /** Statement {@code j} of the stream. */
  static String statement(long j) {
    long id = j / 3;
    return switch ((int) (j % 3)) {
      case 0 -> "INSERT INTO t VALUES (" + id + ", 0)";
      case 1 -> "UPDATE t SET v = v + 1 WHERE id = " + id;
      default -> id % 2 == 0 ? "DELETE FROM t WHERE id = " + id : "UPDATE t SET v = v + 10 WHERE id = " + id;
    };
  }

  /** The table after statements 0 .. n-1. */
  static Map<Long, Long> expected(long n) {
    Map<Long, Long> rows = new TreeMap<>();
    for (long j = 0; j < n; j++) {
      long id = j / 3;
      switch ((int) (j % 3)) {
        case 0 -> rows.put(id, 0L);
        case 1 -> rows.computeIfPresent(id, (k, v) -> v + 1);
        default -> {
          if (id % 2 == 0) {
            rows.remove(id);
          } else {
            rows.computeIfPresent(id, (k, v) -> v + 10);
          }
        }
      }
    }
    return rows;
  }

  /** The child: runs statements from {@code args[1]} on, printing each index once it is acknowledged. */
  public static void main(String[] args) {
    try (Database db = Floe.open(Path.of(args[0]))) {
      db.sql("CREATE TABLE IF NOT EXISTS t (id bigint, v bigint)" + (args.length > 2 ? args[2] : "")).close();
      System.out.println("READY");
      for (long j = Long.parseLong(args[1]); ; j++) {
        db.sql(statement(j)).close();
        System.out.println("ACK " + j);
      }
    }
  }

  private static Map<Long, Long> read(Path dir) {
    Map<Long, Long> rows = new TreeMap<>();
    try (Database db = Floe.open(dir); Result r = db.sql("SELECT id, v FROM t")) {
      for (Row row : r) {
        rows.put(row.getLong(0), row.getLong(1));
      }
      // Every file the current snapshot names exists.
      try (Result files = db.sql("SELECT file_path FROM \"t$files\"")) {
        for (Row f : files) {
          assertThat(Path.of(f.getString(0))).exists();
        }
      }
    }
    return rows;
  }

  private void killedRepeatedly(String with) throws Exception {
    Random random = new Random(42);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    long next = 0;
    for (int round = 0; round < 4; round++) {
      List<String> command = new ArrayList<>(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED",
          "-Djava.io.tmpdir=" + childTmp, "-cp",
          System.getProperty("java.class.path"), CrashTest.class.getName(), dir.toString(), Long.toString(next)));
      if (!with.isEmpty()) {
        command.add(with);
      }
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      long acked = next - 1;
      long deadline = 0;
      try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = out.readLine()) != null) {
          if (line.equals("READY")) {
            deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300 + random.nextInt(1200));
          } else if (line.startsWith("ACK ")) {
            acked = Long.parseLong(line.substring(4));
          }
          if (deadline != 0 && System.nanoTime() > deadline) {
            p.destroyForcibly(); // SIGKILL
            break;
          }
        }
      }
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(acked).as("the child made progress before it was killed").isGreaterThanOrEqualTo(next);
      Map<Long, Long> actual = read(dir);
      // Everything acknowledged is there; the statement in flight may or may not be.
      if (actual.equals(expected(acked + 1))) {
        next = acked + 1;
      } else {
        assertThat(actual).as("after the kill in round %d (last acknowledged statement %d)", round, acked)
            .isEqualTo(expected(acked + 2));
        next = acked + 2;
      }
    }
  }

  @Test
  void mergeOnReadV2SurvivesKills() throws Exception {
    killedRepeatedly("");
  }

  @Test
  void deletionVectorsSurviveKills() throws Exception {
    killedRepeatedly(" WITH (format_version = 3)");
  }

  @Test
  void copyOnWriteSurvivesKills() throws Exception {
    killedRepeatedly(" WITH (write.delete.mode = 'copy-on-write', write.update.mode = 'copy-on-write')");
  }
}
