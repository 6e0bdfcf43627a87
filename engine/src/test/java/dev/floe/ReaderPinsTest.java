package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reader holds (exec.ReaderPins): snapshot expiry never takes a version a live reader may still read,
 * whatever the grace period, and takes it once the reader is gone.
 */
class ReaderPinsTest {
  @TempDir
  Path dir;

  private static void exec(Database db, String sql) {
    db.sql(sql).close();
  }

  /** A table whose files a seal and a compaction replace, with a grace period of zero. */
  private static Log replacedTable(Database db) {
    exec(db, "CREATE TABLE t (id int, v text) WITH (tail = true)");
    Log log = db.openLog("t");
    exec(db, "INSERT INTO t SELECT i, 'a' || i FROM range(0, 1000) r(i)");
    log.seal(true);
    exec(db, "ALTER TABLE t SET ('floe.tail.grace-ms' = '0')");
    return log;
  }

  private static void replaceFiles(Database db, Log log) {
    exec(db, "INSERT INTO t SELECT i, 'b' || i FROM range(1000, 2000) r(i)");
    log.seal(true);
    exec(db, "INSERT INTO t SELECT i, 'c' || i FROM range(2000, 3000) r(i)");
    log.seal(true);
    assertThat(log.compact(true)).isGreaterThanOrEqualTo(2); // the block's file is gone from the current version
  }

  @Test
  void aTransactionBlockReadsItsVersionAfterExpiryWithZeroGrace() throws Exception {
    try (Database db = Floe.open(dir)) {
      Log log = replacedTable(db);
      try (Transaction tx = db.begin()) {
        assertThat(Rows.of(tx, "SELECT count(*), min(v) FROM t")).containsExactly("1000|a0");
        replaceFiles(db, log);
        Thread.sleep(5);
        log.reclaim();
        log.sweep();
        // every file of the block's version is still there: the same rows, read from them again
        assertThat(Rows.of(tx, "SELECT count(*), min(v), sum(id) FROM t")).containsExactly("1000|a0|499500");
        tx.commit();
      }
      // the block is gone: its version can go now
      Thread.sleep(5);
      assertThat(log.reclaim()).isGreaterThanOrEqualTo(1);
      assertThat(db.table("t").snapshots()).hasSize(1);
      assertThat(Rows.of(db, "SELECT count(*) FROM t")).containsExactly("3000");
    }
  }

  @Test
  void withNoReaderTheReplacedVersionsGo() throws Exception {
    try (Database db = Floe.open(dir)) {
      Log log = replacedTable(db);
      long first = db.table("t").snapshots().get(db.table("t").snapshots().size() - 1).snapshotId();
      replaceFiles(db, log);
      Thread.sleep(5);
      // nothing holds the first version (the statements that read it have ended): expiry takes it
      assertThat(log.reclaim()).isGreaterThanOrEqualTo(1);
      assertThat(db.table("t").snapshots()).extracting(s -> s.snapshotId()).doesNotContain(first);
    }
  }

  @Test
  void expireSnapshotsWithZeroRetentionKeepsWhatAnOpenBlockReadsAndDeletesTheRestsFiles() throws Exception {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE p (id int, v text)");
      exec(db, "INSERT INTO p SELECT i, 'a' || i FROM range(0, 100) r(i)");
      java.nio.file.Path data = dir.resolve("public").resolve("p").resolve("data");
      try (Transaction tx = db.begin()) {
        assertThat(Rows.of(tx, "SELECT count(*) FROM p")).containsExactly("100");
        exec(db, "DELETE FROM p"); // the block's file leaves the current version
        exec(db, "INSERT INTO p VALUES (1000, 'new')");
        exec(db, "ALTER TABLE p EXECUTE expire_snapshots(retention_threshold => '0s')");
        assertThat(Rows.of(tx, "SELECT count(*), min(v) FROM p")).containsExactly("100|a0");
        tx.commit();
      }
      assertThat(Rows.of(db, "SELECT count(*) FROM \"p$snapshots\"")).containsExactly("3");
      long before;
      try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.list(data)) {
        before = s.count();
      }
      exec(db, "ALTER TABLE p EXECUTE expire_snapshots(retention_threshold => '0s')");
      assertThat(Rows.of(db, "SELECT count(*) FROM \"p$snapshots\"")).containsExactly("1");
      try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.list(data)) {
        assertThat(s.count()).as("the deleted rows' file is gone").isEqualTo(before - 1);
      }
      assertThat(Rows.of(db, "SELECT id, v FROM p")).containsExactly("1000|new");
    }
  }

  /**
   * A busy table always has a reader, and each began a moment ago: what commits replaced before the
   * oldest reader began goes, however recent (this process knows when its commits landed; snapshot
   * timestamps alone would need a clock margin of a minute). The reader's own version stays, with its
   * files, and old metadata files go with the versions.
   */
  @Test
  void aReaderKeepsOnlyWhatWasCurrentWhenItBeganNotTheMinuteBefore() throws Exception {
    try (Database db = Floe.open(dir); Session reader = db.connect(); Session s = db.connect()) {
      exec(db, "CREATE TABLE b (id int, v text) WITH ('write.metadata.previous-versions-max' = '3', "
          + "'floe.history.max-snapshots' = '1')");
      for (int i = 0; i < 20; i++) {
        exec(db, "INSERT INTO b VALUES (" + i + ", 'v" + i + "')");
      }
      exec(db, "DELETE FROM b WHERE id < 5");
      reader.sql("BEGIN").close();
      assertThat(Rows.of(reader, "SELECT count(*), min(id) FROM b")).containsExactly("15|5");
      exec(db, "DELETE FROM b WHERE id < 10");
      exec(db, "INSERT INTO b VALUES (100, 'new')");
      s.sql("VACUUM b").close();
      // 21 versions before the reader's, then its own and two more: the 20 before it go
      assertThat(Rows.of(db, "SELECT count(*) FROM \"b$snapshots\"")).containsExactly("4");
      assertThat(Rows.of(reader, "SELECT count(*), min(id), max(id) FROM b")).containsExactly("15|5|19");
      reader.sql("COMMIT").close();
      java.nio.file.Path metadata = dir.resolve("public").resolve("b").resolve("metadata");
      try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(metadata)) {
        assertThat(files.filter(f -> f.toString().endsWith(".metadata.json")).count())
            .as("metadata files beyond the log's three, replaced before the reader began, are gone")
            .isLessThanOrEqualTo(8);
      }
      assertThat(Rows.of(db, "SELECT count(*), min(id) FROM b")).containsExactly("11|10");
    }
  }
}
