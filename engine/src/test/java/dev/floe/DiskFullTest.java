package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The warehouse's disk fills up (a 64 MB tmpfs) while Floe writes: every statement that needs space fails
 * with 53100 naming what it could not write (never an internal error, never a half-made table), nothing it
 * wrote is committed, acknowledged log rows stay; once space is freed the same statements succeed, spilling
 * works again, and every acknowledged row is there, also after a restart.
 */
class DiskFullTest {
  @TempDir
  Path dir;

  private Path disk;

  @BeforeEach
  void mount() throws Exception {
    disk = dir.resolve("disk");
    Files.createDirectories(disk);
    Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", disk.toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      fail("this test mounts a 64 MB tmpfs to fill, and needs root for it (.ci/run runs as root): " + out);
    }
  }

  @AfterEach
  void unmount() throws Exception {
    new ProcessBuilder("umount", "-l", disk.toString()).start().waitFor(30, TimeUnit.SECONDS);
  }

  @Test
  void everyWriteFailsCleanlyWhenTheDiskIsFullAndWorksOnceSpaceIsFreed() throws Exception {
    Path wh = disk.resolve("wh");
    Path filler = disk.resolve("filler");
    long acknowledged = 0;
    Map<String, String> refused = new LinkedHashMap<>();
    try (Database db = Floe.open(FloeConfig.builder(wh).memoryLimit("48MB").build())) {
      exec(db, "CREATE TABLE t (id bigint, v text)");
      exec(db, "INSERT INTO t SELECT i, md5(i::text) FROM range(20000) r(i)");
      exec(db, "CREATE TABLE p (id bigint, d date) PARTITIONED BY (day(d))");
      exec(db, "INSERT INTO p VALUES (1, '2024-01-01')");
      Log log = db.newLog("tl", "id bigint", "id");
      for (int k = 0; k < 100; k++) {
        log.append((long) k);
        acknowledged++;
        if (k % 25 == 24) {
          log.seal(true); // small sealed files, for compaction to rewrite once the disk is full
        }
      }
      String before = state(db);
      fill(filler);

      for (String sql : writes()) {
        try {
          exec(db, sql);
          refused.put(sql, "ok");
        } catch (FloeException e) {
          refused.put(sql, e.sqlState() + " " + e.getMessage());
        }
      }
      try (Session s = db.connect(); CopyIn copy = s.copyIn("t", List.of())) {
        try (OutputStream o = Files.newOutputStream(copy.file())) {
          for (int k = 0; k < 100_000; k++) {
            o.write((k + ",copied\n").getBytes());
          }
          refused.put("COPY t FROM STDIN", "ok");
        } catch (IOException e) {
          refused.put("COPY t FROM STDIN", "53100 the client's rows could not be staged: " + e.getMessage());
        }
        if (refused.get("COPY t FROM STDIN").equals("ok")) {
          try {
            copy.load().close();
          } catch (FloeException e) {
            refused.put("COPY t FROM STDIN", e.sqlState() + " " + e.getMessage());
          }
        }
      }
      for (int k = 100; k < 200; k++) {
        try {
          log.append((long) k);
          acknowledged++;
        } catch (FloeException e) {
          refused.put("append", e.sqlState() + " " + e.getMessage());
          break;
        }
      }
      try {
        log.seal(true);
      } catch (FloeException e) {
        refused.put("seal", e.sqlState() + " " + e.getMessage());
      }
      try {
        log.compact(true);
      } catch (FloeException e) {
        refused.put("compact", e.sqlState() + " " + e.getMessage());
      }
      try (Result r = db.sql("SELECT count(*) FROM (SELECT i, md5(i::text) AS h FROM range(3000000) r(i) ORDER BY h)")) {
        r.forEach(row -> { });
        refused.put("spill", "ok");
      } catch (FloeException e) {
        refused.put("spill", e.sqlState() + " " + e.getMessage());
      }

      for (Map.Entry<String, String> e : refused.entrySet()) {
        assertThat(e.getValue()).as(e.getKey()).matches("ok|53100 .*|53400 .*").doesNotContain("internal error");
      }
      assertThat(refused.values()).as("the disk was full for these writes").anyMatch(v -> v.startsWith("53100"));
      assertThat(refused.get("INSERT INTO t SELECT i, md5(i::text) FROM range(200000) r(i)")).startsWith("53100")
          .contains("No space left on device");
      assertThat(refused.get("CREATE TABLE made (a int)")).startsWith("53100");
      assertThat(tableDirectories(wh)).as("a table that was not made leaves no directory")
          .containsExactlyInAnyOrder("t", "p", "tl");
      assertThat(state(db)).isEqualTo(before.replace("tl=100", "tl=" + acknowledged));

      Files.delete(filler); // space again: the same writes work, spilling too
      for (String sql : writes()) {
        exec(db, sql);
      }
      try (Result r = db.sql("SELECT count(*) FROM (SELECT i, md5(i::text) AS h FROM range(600000) r(i) ORDER BY h)")) {
        assertThat(r.iterator().next().get(0)).isEqualTo(600000L);
      }
      log.append(-1L);
      acknowledged++;
      log.seal(true);
      assertThat(count(db, "SELECT count(*) FROM tl")).isEqualTo(acknowledged);
    }
    try (Database db = Floe.open(wh)) {
      assertThat(count(db, "SELECT count(*) FROM tl")).isEqualTo(acknowledged);
      assertThat(count(db, "SELECT count(DISTINCT id) FROM tl")).isEqualTo(acknowledged);
      assertThat(db.verify()).allMatch(Verification::ok);
    }
  }

  private static List<String> writes() {
    return List.of(
        "INSERT INTO t SELECT i, md5(i::text) FROM range(200000) r(i)",
        "INSERT INTO t VALUES (-1, 'one')",
        "INSERT INTO p VALUES (2, '2024-01-02')",
        "UPDATE t SET v = 'updated' WHERE id % 3 = 0",
        "DELETE FROM t WHERE id % 5 = 0",
        "MERGE INTO t USING (SELECT 7 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'merged'",
        "CREATE TABLE made (a int)",
        "CREATE TABLE made_as AS SELECT i FROM range(1000) r(i)",
        "DROP TABLE IF EXISTS made",
        "DROP TABLE IF EXISTS made_as");
  }

  /** Writes zeros until the disk is full. */
  private static void fill(Path filler) throws IOException {
    byte[] mb = new byte[1 << 20];
    try (OutputStream o = Files.newOutputStream(filler)) {
      while (true) {
        o.write(mb);
      }
    } catch (IOException e) {
      assertThat(e.getMessage()).contains("No space left");
    }
  }

  private static String state(Database db) {
    return "t=" + count(db, "SELECT count(*) FROM t") + " p=" + count(db, "SELECT count(*) FROM p") + " tl="
        + count(db, "SELECT count(*) FROM tl") + " snapshots=" + db.table("t").snapshots().size();
  }

  private static List<String> tableDirectories(Path wh) throws IOException {
    try (Stream<Path> s = Files.list(wh.resolve("public"))) {
      return new ArrayList<>(s.map(p -> p.getFileName().toString()).collect(java.util.stream.Collectors.toCollection(
          TreeSet::new)));
    }
  }

  private static void exec(Database db, String sql) {
    db.sql(sql).close();
  }

  private static long count(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      return ((Number) r.iterator().next().get(0)).longValue();
    }
  }
}
