package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** VACUUM's three steps on the files they touch, what VERBOSE reports, and that readers' versions stay. */
class VacuumTest {
  @TempDir
  Path dir;

  @Test
  void compactsExpiresAndRemovesOldOrphansButNotWhatABlockReads() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      List<Notice> notices = new ArrayList<>();
      s.onNotice(notices::add);
      s.sql("CREATE TABLE t (id int, v text) WITH ('history.expire.max-snapshot-age-ms' = '0')").close();
      for (int i = 0; i < 5; i++) {
        s.sql("INSERT INTO t VALUES (" + i + ", 'v" + i + "')").close();
      }
      Path data = dir.resolve("public").resolve("t").resolve("data");
      Path orphan = data.resolve("crashed-write.parquet");
      Files.write(orphan, new byte[] {1, 2, 3});
      Files.setLastModifiedTime(orphan, FileTime.fromMillis(System.currentTimeMillis() - 8L * 86_400_000));
      Path recent = data.resolve("being-written.parquet");
      Files.write(recent, new byte[] {1});

      try (Transaction tx = db.begin()) {
        assertThat(Rows.of(tx, "SELECT count(*) FROM t")).containsExactly("5");
        s.sql("VACUUM VERBOSE t").close();
        assertThat(notices).last().satisfies(n -> {
          assertThat(n.severity()).isEqualTo("INFO");
          // the four versions replaced before the block began go (their manifest lists); its own stays
          assertThat(n.message()).isEqualTo("vacuuming \"public.t\": 5 file(s) compacted into 1, 4 snapshot(s) expired "
              + "with 4 file(s) only they referenced, 1 orphan file(s) removed");
        });
        // the block's version, with its five files, is still there
        assertThat(Rows.of(tx, "SELECT count(*), min(v) FROM t")).containsExactly("5|v0");
        tx.commit();
      }
      assertThat(orphan).doesNotExist();
      assertThat(recent).exists();
      s.sql("VACUUM VERBOSE t").close();
      // the block's version goes (the compaction's is current), with its data files, manifests and list
      assertThat(notices).last().satisfies(n -> assertThat(n.message()).contains("0 file(s) compacted into 0, 1 "
          + "snapshot(s) expired with ").endsWith(" file(s) only they referenced, 0 orphan file(s) removed"));
      assertThat(Rows.of(db, "SELECT data_files, data_rows, snapshots FROM \"t$health\"")).containsExactly("1|5|1");
      try (var files = Files.list(data)) {
        assertThat(files.filter(p -> !p.equals(recent)).count()).isEqualTo(1);
      }
      assertThat(Rows.of(db, "SELECT count(*), sum(id) FROM t")).containsExactly("5|10");
    }
  }

  /**
   * Two VACUUMs of a table and its writer at once: neither reads a version the other has expired and
   * deleted the files of (each sizes the history, reading every version's manifest list, before it
   * expires), so both succeed every time, and no row is lost.
   */
  @Test
  void twoVacuumsAtOnceBesideAWriterBothSucceed() throws Exception {
    try (Database db = Floe.open(dir); Session writer = db.connect(); Session a = db.connect();
        Session b = db.connect()) {
      writer.sql("CREATE TABLE t (id int, v text) WITH ('history.expire.max-snapshot-age-ms' = '0')").close();
      java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
      List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
      List<Thread> vacuums = new ArrayList<>();
      for (Session s : List.of(a, b)) {
        Thread t = new Thread(() -> {
          while (!done.get()) {
            try {
              s.sql("VACUUM FULL t").close();
            } catch (Throwable e) {
              failures.add(e);
              return;
            }
          }
        });
        t.start();
        vacuums.add(t);
      }
      int rows = 300;
      for (int i = 0; i < rows; i++) {
        writer.sql("INSERT INTO t VALUES (" + i + ", 'v" + i + "')").close();
      }
      done.set(true);
      for (Thread t : vacuums) {
        t.join();
      }
      assertThat(failures).as("VACUUMs that failed").isEmpty();
      assertThat(Rows.of(db, "SELECT count(*), sum(id) FROM t")).containsExactly(rows + "|" + (rows * (rows - 1) / 2));
    }
  }
}
