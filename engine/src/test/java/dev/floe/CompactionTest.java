package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction gives way to writers: which files it takes (tiers, heavy files), and that a writer's change
 * committed while a compaction runs, or after it, never fails because of it.
 */
class CompactionTest {
  @TempDir
  Path dir;

  private static String verbose(Session s, String sql) {
    List<Notice> notices = new ArrayList<>();
    s.onNotice(notices::add);
    s.sql(sql).close();
    s.onNotice(n -> { });
    return notices.isEmpty() ? "" : notices.get(notices.size() - 1).message();
  }

  /** A database that runs {@code once}'s action, once, just before {@code compactor}'s thread commits. */
  private FloeConfig runningBeforeItsCommit(AtomicReference<Thread> compactor, AtomicReference<Runnable> once) {
    return FloeConfig.builder(dir).beforeCommit(() -> {
      if (Thread.currentThread() == compactor.get()) {
        Runnable r = once.getAndSet(null);
        if (r != null) {
          r.run();
        }
      }
    }).build();
  }

  /** A writer commits deletes to the compaction's files between its read and its commit: it follows them. */
  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void aCompactionFollowsDeletesCommittedWhileItRan(int formatVersion) throws Exception {
    AtomicReference<Thread> compactor = new AtomicReference<>();
    AtomicReference<Runnable> once = new AtomicReference<>();
    FloeConfig config = runningBeforeItsCommit(compactor, once);
    try (Database db = Floe.open(config); Session s = db.connect(); Session writer = db.connect()) {
      s.sql("CREATE TABLE t (id int PRIMARY KEY, bal bigint) WITH ('format-version' = '" + formatVersion + "')")
          .close();
      for (int i = 0; i < 6; i++) {
        s.sql("INSERT INTO t SELECT i, 0 FROM range(" + (i * 10) + ", " + (i * 10 + 10) + ") r(i)").close();
      }
      once.set(() -> {
        writer.sql("UPDATE t SET bal = bal + 1 WHERE id IN (3, 17, 42)").close();
        writer.sql("DELETE FROM t WHERE id = 55").close();
      });
      compactor.set(Thread.currentThread());
      String report = verbose(s, "VACUUM VERBOSE t");
      compactor.set(null);
      assertThat(once.get()).as("the writer ran inside the compaction").isNull();
      assertThat(report).startsWith("vacuuming \"public.t\": 6 file(s) compacted into 1,");
      assertThat(Rows.of(db, "SELECT count(*), sum(bal) FROM t")).containsExactly("59|3");
      assertThat(Rows.of(db, "SELECT bal FROM t WHERE id IN (3, 17, 42, 55) ORDER BY id"))
          .containsExactly("1", "1", "1");
      // the compacted file plus the writer's new rows; the rows it deleted are deleted in the compacted file
      assertThat(Rows.of(db, "SELECT operation FROM \"t$snapshots\" ORDER BY sequence_number DESC LIMIT 1"))
          .containsExactly("replace");
      assertThat(Rows.of(db, "SELECT count(*) FROM t AS OF VERSION 6")).containsExactly("60");
    }
  }

  /**
   * A writer empties one of the compaction's files while it runs (the file leaves the table). Iceberg
   * lets a replace add no more rows than the files it removes held: the compaction follows when the
   * other files' earlier deletes leave room for the emptied file's rows (deleted in its output), and
   * gives way when they do not. Either way nothing fails and the rows are the writer's.
   */
  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void aWriterEmptyingAFileDuringACompactionNeverFailsIt(int formatVersion) throws Exception {
    AtomicReference<Thread> compactor = new AtomicReference<>();
    AtomicReference<Runnable> once = new AtomicReference<>();
    FloeConfig config = runningBeforeItsCommit(compactor, once);
    try (Database db = Floe.open(config); Session s = db.connect(); Session writer = db.connect()) {
      s.sql("CREATE TABLE t (id int PRIMARY KEY, bal bigint) WITH ('format-version' = '" + formatVersion + "')")
          .close();
      for (int i = 0; i < 4; i++) {
        s.sql("INSERT INTO t SELECT i, 0 FROM range(" + (i * 10) + ", " + (i * 10 + 10) + ") r(i)").close();
      }
      // no room: the four files hold 40 rows, all live; emptying one leaves 30 replaced for 40 written
      once.set(() -> writer.sql("DELETE FROM t WHERE id BETWEEN 10 AND 19").close());
      compactor.set(Thread.currentThread());
      String report = verbose(s, "VACUUM VERBOSE t");
      compactor.set(null);
      assertThat(once.get()).as("the writer ran inside the compaction").isNull();
      assertThat(report).contains("gave way");
      assertThat(Rows.of(db, "SELECT count(*), min(id), max(id) FROM t")).containsExactly("30|0|39");
      assertThat(Rows.of(db, "SELECT count(*) FROM t WHERE id BETWEEN 10 AND 19")).containsExactly("0");

      // room: 25 of the 30 remaining rows are deleted first, so the files hold more rows than they keep
      s.sql("DELETE FROM t WHERE id < 5 OR id >= 20 AND id < 40").close();
      s.sql("INSERT INTO t SELECT i, 0 FROM range(100, 103) r(i)").close();
      assertThat(Rows.of(db, "SELECT count(*) FROM t")).containsExactly("8");
      once.set(() -> writer.sql("DELETE FROM t WHERE id >= 100").close());
      compactor.set(Thread.currentThread());
      report = verbose(s, "VACUUM VERBOSE t");
      compactor.set(null);
      assertThat(once.get()).as("the writer ran inside the compaction").isNull();
      assertThat(report).doesNotContain("gave way");
      assertThat(Rows.of(db, "SELECT string_agg(id::text, ',' ORDER BY id) FROM t")).containsExactly("5,6,7,8,9");
      assertThat(Rows.of(db, "SELECT operation FROM \"t$snapshots\" ORDER BY sequence_number DESC LIMIT 1"))
          .containsExactly("replace");
    }
  }

  /** Small files merge by tiers; a big file is left alone until its deletes make it heavy. */
  @Test
  void tiersLeaveABigFileAloneUntilItsDeletesMakeItHeavy() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.sql("CREATE TABLE t (id int PRIMARY KEY, pad text)").close();
      // a file of ~10 MB (above the 8 MB tier floor), then small ones
      s.sql("INSERT INTO t SELECT i, md5(i::text) || md5((i + 1)::text) || md5((i + 2)::text) FROM range(400000) r(i)")
          .close();
      long big = Long.parseLong(Rows.of(db, "SELECT max(file_size_in_bytes) FROM \"t$files\"").get(0));
      assertThat(big).isGreaterThan(8L << 20);
      for (int i = 0; i < 5; i++) {
        s.sql("INSERT INTO t VALUES (" + (900000 + i) + ", 'x')").close();
      }
      assertThat(verbose(s, "VACUUM VERBOSE t")).contains(": 5 file(s) compacted into 1,");
      assertThat(Rows.of(db, "SELECT count(*) FROM \"t$files\"")).containsExactly("2");
      // deleting a fifth of the big file's rows makes it heavy: rewritten without them and its deletes
      s.sql("DELETE FROM t WHERE id < 80000").close();
      assertThat(verbose(s, "VACUUM VERBOSE t")).contains(": 1 file(s) compacted into 1,");
      assertThat(Rows.of(db, "SELECT delete_files, data_rows FROM \"t$health\"")).containsExactly("0|320005");
      assertThat(Rows.of(db, "SELECT count(*) FROM t")).containsExactly("320005");
    }
  }

  /**
   * A file is heavy at √(2 · its rows · the rows a write deletes) deleted rows (at least 4,096), or at the
   * delete ratio: writes that delete thousands of rows each (a change stream's batches) leave a big file
   * alone until its share is reached, where one-row writes have it rewritten at 4,096.
   */
  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void aFileIsHeavySoonerUnderSmallDeletesThanUnderLargeOnes(int formatVersion) throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.sql("CREATE TABLE t (id int PRIMARY KEY, pad text) WITH ('format-version' = '" + formatVersion + "')").close();
      s.sql("INSERT INTO t SELECT i, md5(i::text) FROM range(400000) r(i)").close();
      // one write of 5,000 rows: heavy at √(2 · 400,000 · 5,000) = 63,245, not at 4,096
      s.sql("DELETE FROM t WHERE id < 5000").close();
      assertThat(verbose(s, "VACUUM VERBOSE t")).contains(": 0 file(s) compacted into 0,");
      assertThat(Rows.of(db, "SELECT delete_files FROM \"t$health\"")).containsExactly("1");
      // then eight one-row writes: each deletes one row, so 5,008 deleted rows are past 4,096
      for (int i = 0; i < 8; i++) {
        s.sql("DELETE FROM t WHERE id = " + (10000 + i)).close();
      }
      assertThat(verbose(s, "VACUUM VERBOSE t")).contains("compacted into 1,");
      assertThat(Rows.of(db, "SELECT delete_files, data_rows FROM \"t$health\"")).containsExactly("0|394992");
    }
  }

  /**
   * Writers win, concurrently: sessions update and delete rows by key (autocommit and in blocks) while
   * another compacts the table over and over; no statement fails, and the table is the model's.
   */
  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void concurrentWritersNeverFailBecauseOfCompaction(int formatVersion) throws Exception {
    int rows = 200;
    int writers = 3;
    int each = 60;
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id int PRIMARY KEY, bal bigint NOT NULL) WITH ('format-version' = '" + formatVersion
          + "')").close();
      db.sql("INSERT INTO t SELECT i, 0 FROM range(" + rows + ") r(i)").close();
      Map<Integer, Long> model = new ConcurrentHashMap<>();
      for (int i = 0; i < rows; i++) {
        model.put(i, 0L);
      }
      List<Throwable> failures = new CopyOnWriteArrayList<>();
      AtomicBoolean done = new AtomicBoolean();
      List<String> reports = new CopyOnWriteArrayList<>();
      Thread compactor = new Thread(() -> {
        try (Session s = db.connect()) {
          while (!done.get()) {
            reports.add(verbose(s, "VACUUM VERBOSE t"));
          }
        } catch (Throwable e) {
          failures.add(new RuntimeException("compactor", e));
        }
      });
      compactor.start();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int me = w;
        Thread t = new Thread(() -> {
          java.util.SplittableRandom rnd = new java.util.SplittableRandom(me * 7919L + formatVersion);
          try (Session s = db.connect()) {
            for (int i = 0; i < each; i++) {
              int id = me + writers * rnd.nextInt(rows / writers); // each writer its own rows
              long d = 1 + rnd.nextInt(9);
              if (rnd.nextInt(5) == 0) {
                s.sql("BEGIN").close();
                s.sql("UPDATE t SET bal = bal + " + d + " WHERE id = " + id).close();
                s.sql("UPDATE t SET bal = bal + 1 WHERE id = " + id).close();
                s.sql("COMMIT").close();
                model.computeIfPresent(id, (k, v) -> v + d + 1);
              } else if (rnd.nextInt(10) == 0) {
                s.sql("DELETE FROM t WHERE id = " + id).close();
                model.remove(id);
              } else {
                s.sql("UPDATE t SET bal = bal + " + d + " WHERE id = " + id).close();
                model.computeIfPresent(id, (k, v) -> v + d);
              }
            }
          } catch (Throwable e) {
            failures.add(e);
          }
        });
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        t.join();
      }
      done.set(true);
      compactor.join();
      failures.forEach(Throwable::printStackTrace);
      assertThat(failures).as("statements that failed").isEmpty();
      Map<Integer, Long> table = new TreeMap<>();
      for (String r : Rows.of(db, "SELECT id, bal FROM t")) {
        String[] f = r.split("\\|");
        table.put(Integer.parseInt(f[0]), Long.parseLong(f[1]));
      }
      assertThat(table).isEqualTo(new TreeMap<>(model));
      assertThat(Long.parseLong(Rows.of(db, "SELECT count(*) FROM \"t$snapshots\" WHERE operation = 'replace'")
          .get(0))).as("compactions committed").isPositive();
      System.out.println("compactions: " + reports.size() + ", gave way: "
          + reports.stream().filter(r -> r.contains("gave way")).count());
    }
  }
}
