package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.Rows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ALTER TABLE t EXECUTE remove_orphan_files(...)}: a dry run by default, deletion when asked, only
 * files no version references and older than the retention, and nothing at all when the table's
 * directories hold files it cannot account for.
 */
class OrphanFilesTest {
  @TempDir
  Path dir;

  private static Path old(Path file) throws Exception {
    Files.write(file, new byte[] {1, 2, 3});
    Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() - 30L * 86_400_000));
    return file;
  }

  @Test
  void dryRunByDefaultThenDeletesOnlyOldUnreferencedFiles() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      List<String> notices = new ArrayList<>();
      s.onNotice(n -> notices.add(n.message()));
      s.sql("CREATE TABLE t (id int)").close();
      s.sql("INSERT INTO t VALUES (1), (2)").close();
      s.sql("DELETE FROM t WHERE id = 1").close(); // the first file is still referenced by the first version
      Path data = dir.resolve("public").resolve("t").resolve("data");
      Path orphan = old(data.resolve("crashed-write.parquet"));
      Path young = data.resolve("being-written.parquet");
      Files.write(young, new byte[] {1});
      long referenced;
      try (var files = Files.list(data)) {
        referenced = files.count() - 2;
      }

      s.sql("ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '7d')").close();
      assertThat(notices.get(notices.size() - 1)).startsWith("dry run: would delete 1 orphan file(s) of table \"t\" (3 bytes)")
          .contains(orphan.toString()).contains("dry_run => 'false'");
      assertThat(orphan).exists();

      s.sql("ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '7d', dry_run => false)").close();
      assertThat(notices.get(notices.size() - 1)).isEqualTo("deleted 1 orphan file(s) of table \"t\" (3 bytes)");
      assertThat(orphan).doesNotExist();
      assertThat(young).as("younger than the retention").exists();
      try (var files = Files.list(data)) {
        assertThat(files.count() - 1).isEqualTo(referenced);
      }
      assertThat(Rows.of(db, "SELECT id FROM t")).containsExactly("2");
      assertThat(Rows.of(db, "SELECT count(*) FROM t AS OF VERSION 1")).containsExactly("2");

      assertThatThrownBy(() -> s.sql("ALTER TABLE t EXECUTE remove_orphan_files('10 parsecs')").close())
          .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("22023"));
      assertThatThrownBy(() -> s.sql("ALTER TABLE t EXECUTE remove_orphan_files(dry_run => 'maybe')").close())
          .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("42883"));
    }
  }

  /**
   * A zero retention is honoured, and a file that a write still in flight may have written is not taken:
   * one modified after an open transaction block began stays until the block ends.
   */
  @Test
  void zeroRetentionSparesWhatAWriteInFlightMayHaveWritten() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect(); Session writer = db.connect()) {
      s.sql("CREATE TABLE t (id int)").close();
      s.sql("INSERT INTO t VALUES (1)").close();
      Path data = dir.resolve("public").resolve("t").resolve("data");
      Path crashed = old(data.resolve("crashed-write.parquet"));
      writer.sql("BEGIN").close();
      writer.sql("INSERT INTO t VALUES (2)").close();
      Thread.sleep(1_100); // past the file system's time resolution margin
      Path inFlight = data.resolve("in-flight.parquet");
      Files.write(inFlight, new byte[] {1});

      s.sql("ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '0s', dry_run => false)").close();
      assertThat(crashed).doesNotExist();
      assertThat(inFlight).as("written after the open block began").exists();
      writer.sql("COMMIT").close();
      assertThat(Rows.of(db, "SELECT id FROM t ORDER BY id")).containsExactly("1", "2");

      // a zero retention still keeps files younger than the file system clock's margin (20 ms): on a warm
      // JVM the statements since the file was written can take less
      Thread.sleep(50);
      s.sql("ALTER TABLE t EXECUTE remove_orphan_files(retention_threshold => '0s', dry_run => false)").close();
      assertThat(inFlight).doesNotExist();
      assertThat(Rows.of(db, "SELECT id FROM t ORDER BY id")).containsExactly("1", "2");
    }
  }

  @Test
  void aDirectoryWithFilesOfSomethingElseIsLeftAlone() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id int)").close();
      db.sql("INSERT INTO t VALUES (1)").close();
      Path data = dir.resolve("public").resolve("t").resolve("data");
      Path orphan = old(data.resolve("crashed-write.parquet"));
      Path foreign = old(data.resolve("notes.txt"));
      assertThatThrownBy(() -> db.sql("ALTER TABLE t EXECUTE remove_orphan_files(dry_run => false)").close())
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo("55000");
            assertThat(e.getMessage()).contains("notes.txt");
          });
      assertThat(orphan).exists();
      assertThat(foreign).exists();
    }
  }
}
