package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.S3Server;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
 * {@link CrashTest}'s stream of INSERT, UPDATE and DELETE commits on a warehouse whose tables are on S3
 * (s3proxy): the writer is killed with SIGKILL several times; after each kill the table holds exactly the
 * acknowledged statements (plus possibly the one in flight), and every file its metadata names is an object on
 * the server, whatever the local copies hold (they are cleared before each check).
 */
class S3CrashTest {
  @TempDir
  Path dir;
  @TempDir
  Path s3dir;
  @TempDir
  Path childTmp;

  static FloeConfig config(Path dir, String endpoint) {
    return FloeConfig.builder(dir).objectStore(new ObjectStore("s3://" + S3Server.BUCKET + "/crash",
        Map.of("s3.endpoint", endpoint, "s3.path-style-access", "true", "client.region", "us-east-1"))).build();
  }

  /** The child: runs statements from {@code args[1]} on, printing each index once it is acknowledged. */
  public static void main(String[] args) {
    try (Database db = Floe.open(config(Path.of(args[0]), args[2]))) {
      db.sql("CREATE TABLE IF NOT EXISTS t (id bigint, v bigint) WITH (format_version = 3)").close();
      System.out.println("READY");
      for (long j = Long.parseLong(args[1]); ; j++) {
        db.sql(CrashTest.statement(j)).close();
        System.out.println("ACK " + j);
      }
    }
  }

  private Map<Long, Long> read(S3Server s3) throws Exception {
    Path copies = dir.resolve(".floe").resolve("objects");
    if (Files.isDirectory(copies)) {
      try (var files = Files.walk(copies)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    Map<Long, Long> rows = new TreeMap<>();
    try (Database db = Floe.open(config(dir, s3.endpoint())); Result r = db.sql("SELECT id, v FROM t")) {
      for (Row row : r) {
        rows.put(row.getLong(0), row.getLong(1));
      }
      try (Result files = db.sql("SELECT file_path FROM \"t$files\"")) {
        for (Row f : files) {
          String location = f.getString(0);
          assertThat(location).startsWith("s3://floe/crash/");
          assertThat(s3.objects(location.substring("s3://floe/".length()))).exists();
        }
      }
    }
    return rows;
  }

  @Test
  void acknowledgedCommitsSurviveKillsOnObjectStorage() throws Exception {
    S3Server.useCredentials();
    try (S3Server s3 = S3Server.start(s3dir)) {
      Random random = new Random(7);
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      long next = 0;
      for (int round = 0; round < 3; round++) {
        List<String> command = new ArrayList<>(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "-Djava.io.tmpdir=" + childTmp, "-Daws.accessKeyId=" + S3Server.ACCESS_KEY,
            "-Daws.secretAccessKey=" + S3Server.SECRET_KEY, "-cp", System.getProperty("java.class.path"),
            S3CrashTest.class.getName(), dir.toString(), Long.toString(next), s3.endpoint()));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        long acked = next - 1;
        long deadline = 0;
        StringBuilder output = new StringBuilder();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
            StandardCharsets.UTF_8))) {
          String line;
          while ((line = out.readLine()) != null) {
            if (line.equals("READY")) {
              deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500 + random.nextInt(1500));
            } else if (line.startsWith("ACK ")) {
              acked = Long.parseLong(line.substring(4));
            } else if (output.length() < 4000) {
              output.append(line).append('\n');
            }
            if (deadline != 0 && System.nanoTime() > deadline) {
              p.destroyForcibly(); // SIGKILL
              break;
            }
          }
        }
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(acked).as("the child made progress before it was killed:\n" + output)
            .isGreaterThanOrEqualTo(next);
        Map<Long, Long> actual = read(s3);
        if (actual.equals(CrashTest.expected(acked + 1))) {
          next = acked + 1;
        } else {
          assertThat(actual).as("after the kill in round %d (last acknowledged statement %d)", round, acked)
              .isEqualTo(CrashTest.expected(acked + 2));
          next = acked + 2;
        }
      }
    }
  }
}
