package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.Rows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The background maintainer: it compacts and expires a table by its policy's triggers, leaves alone a
 * table that opted out, records what it did, and keeps what a reader holds; {@link Database#maintain}
 * takes the same steps at once, or says what they would do.
 */
class MaintainerTest {
  @TempDir
  Path dir;

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(100);
    }
  }

  private static long number(Database db, String sql) {
    return Long.parseLong(Rows.of(db, sql).get(0));
  }

  @Test
  void compactsAndExpiresByPolicyAndLeavesAnOptedOutTableAlone() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id int, v text) WITH ('floe.maintenance.min-files' = '8', "
          + "'floe.history.max-snapshots' = '3')").close();
      db.sql("CREATE TABLE quiet (id int) WITH ('floe.maintenance.enabled' = 'false')").close();
      for (int i = 0; i < 12; i++) {
        db.sql("INSERT INTO t VALUES (" + i + ", 'v" + i + "')").close();
        db.sql("INSERT INTO quiet VALUES (" + i + ")").close();
      }
      db.sql("DELETE FROM t WHERE id = 3").close(); // its file's only row: the file goes
      try (AutoCloseable m = db.startMaintainer(Duration.ofMillis(200))) {
        await(() -> number(db, "SELECT data_files FROM \"t$health\"") == 1
            && number(db, "SELECT snapshots FROM \"t$health\"") <= 3
            && db.maintenanceRuns().stream().anyMatch(r -> r.snapshotsExpired() > 0), "t compacted and expired");
        List<MaintenanceRun> runs = db.maintenanceRuns();
        assertThat(runs).anySatisfy(r -> {
          assertThat(r.table()).isEqualTo("public.t");
          assertThat(r.action()).isEqualTo("compact");
          assertThat(r.trigger()).startsWith("11 data files");
          assertThat(r.filesRemoved()).isEqualTo(11);
          assertThat(r.filesAdded()).isEqualTo(1);
          assertThat(r.outcome()).isEqualTo("done");
        });
        assertThat(runs).anySatisfy(r -> {
          assertThat(r.action()).isEqualTo("expire");
          assertThat(r.trigger()).contains(" snapshots");
          assertThat(r.snapshotsExpired()).isPositive();
        });
        assertThat(runs).noneMatch(r -> r.table().equals("public.quiet"));
      }
      assertThat(Rows.of(db, "SELECT count(*), sum(id) FROM t")).containsExactly("11|63");
      assertThat(number(db, "SELECT data_files FROM \"quiet$health\"")).isEqualTo(12);
      assertThat(db.maintenanceRuns()).as("stopped").isEmpty();
    }
  }

  /**
   * A table this process keeps committing to is expired between the maintainer's passes (every two
   * seconds), so its metadata stays near its policy's count however long the pass interval.
   */
  @Test
  void aBusyTableIsExpiredBetweenPasses() throws Exception {
    try (Database db = Floe.open(dir); Session writer = db.connect()) {
      db.sql("CREATE TABLE busy (id int) WITH ('floe.history.max-snapshots' = '5', "
          + "'floe.maintenance.min-files' = '100000', 'write.metadata.previous-versions-max' = '3')").close();
      db.sql("INSERT INTO busy VALUES (0)").close();
      try (AutoCloseable m = db.startMaintainer(Duration.ofHours(1))) {
        for (int i = 1; i <= 30; i++) {
          writer.sql("INSERT INTO busy VALUES (" + i + ")").close(); // a statement holds while it runs
        }
        await(() -> number(db, "SELECT snapshots FROM \"busy$health\"") <= 5, "busy expired without a pass");
        assertThat(db.maintenanceRuns()).allSatisfy(r -> {
          assertThat(r.action()).isEqualTo("expire");
          assertThat(r.outcome()).isEqualTo("done");
        }).isNotEmpty();
        assertThat(metadataFiles("busy")).as("metadata files the log no longer names went with the versions")
            .isLessThanOrEqualTo(10);
      }
      assertThat(Rows.of(db, "SELECT count(*), sum(id) FROM busy")).containsExactly("31|465");
    }
  }

  /**
   * A table with a tail is compacted by its log, and its versions are expired by the maintainer by the
   * same policy as every table's, not only once they are a grace period ({@code floe.tail.grace-ms}, 10
   * minutes) old: each seal is a version, and a keyed tail's seals rewrite delete files.
   */
  @Test
  void aTailTablesVersionsAreExpiredByItsPolicy() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE k (id int PRIMARY KEY, v int) WITH (tail = true, 'floe.history.max-snapshots' = '5')")
          .close();
      Log log = db.openLog("k");
      try (AutoCloseable m = db.startMaintainer(Duration.ofHours(1))) {
        for (int i = 0; i < 30; i++) {
          db.sql("INSERT INTO k VALUES (" + i % 7 + ", " + i + ") ON CONFLICT (id) DO UPDATE SET v = excluded.v")
              .close();
          log.seal(true);
        }
        await(() -> number(db, "SELECT snapshots FROM \"k$health\"") <= 5, "k expired without a pass");
        assertThat(db.maintenanceRuns()).anySatisfy(r -> {
          assertThat(r.table()).isEqualTo("public.k");
          assertThat(r.action()).isEqualTo("expire");
          assertThat(r.snapshotsExpired()).isPositive();
        }).noneMatch(r -> r.action().equals("compact")); // the log's own
      }
      assertThat(Rows.of(db, "SELECT count(*), sum(v) FROM k")).containsExactly("7|" + (23 + 24 + 25 + 26 + 27 + 28 + 29));
      for (String version : Rows.of(db, "SELECT sequence_number FROM \"k$snapshots\"")) {
        assertThat(Rows.of(db, "SELECT count(*) FROM k AS OF VERSION " + version)).hasSize(1);
      }
      List<MaintenanceRun> dry = new ArrayList<>();
      db.maintain(List.of("k"), true, dry::add);
      assertThat(dry).extracting(MaintenanceRun::action).containsExactly("expire", "remove_orphans");
    }
  }

  /**
   * A few versions that each replaced the whole table — too few for the count to call for an expiry — are
   * expired once the files they hold take the table past 3× its data on disk.
   */
  @Test
  void versionsHoldingReplacedFilesAreExpiredBySize() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE w (id bigint, v text)").close();
      try (AutoCloseable m = db.startMaintainer(Duration.ofHours(1))) {
        for (int round = 0; round < 4; round++) {
          db.sql("DELETE FROM w").close(); // drops the file whole
          db.sql("INSERT INTO w SELECT i, md5((i + " + round + ")::text) FROM range(60000) r(i)").close();
        }
        Path table = dir.resolve("public").resolve("w");
        await(() -> {
          long live = number(db, "SELECT sum(file_size_in_bytes) FROM \"w$files\"");
          try {
            return bytesUnder(table.resolve("data")) <= 3 * live;
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }, "w's replaced files expired");
        assertThat(number(db, "SELECT snapshots FROM \"w$health\"")).isLessThan(8);
        assertThat(db.maintenanceRuns()).anySatisfy(r -> {
          assertThat(r.table()).isEqualTo("public.w");
          assertThat(r.action()).isEqualTo("expire");
          assertThat(r.trigger()).contains("replaced files");
        });
      }
      assertThat(Rows.of(db, "SELECT count(*), count(DISTINCT v) FROM w")).containsExactly("60000|60000");
    }
  }

  /** The metadata files on disk of table {@code public.name}. */
  private long metadataFiles(String name) throws java.io.IOException {
    try (java.util.stream.Stream<Path> files = Files.list(dir.resolve("public").resolve(name).resolve("metadata"))) {
      return files.filter(f -> f.toString().endsWith(".metadata.json")).count();
    }
  }

  private static long bytesUnder(Path dir) throws java.io.IOException {
    try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
      return files.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
    }
  }

  /**
   * A table written a row at a time keeps the history its size allows ({@code floe.history.max-disk-ratio},
   * 3× its data), never fewer than the newest 16 versions, and every version kept still reads.
   */
  @Test
  void historyIsBoundedByTheTablesSize() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE small (id int, v int)").close();
      db.sql("INSERT INTO small SELECT i, 0 FROM range(1000) r(i)").close();
      db.sql("CREATE TABLE roomy (id int, v int) WITH ('floe.history.max-disk-ratio' = '1000000')").close();
      db.sql("INSERT INTO roomy SELECT i, 0 FROM range(1000) r(i)").close();
      db.sql("CREATE TABLE mid (id bigint, v text)").close();
      db.sql("INSERT INTO mid SELECT i, md5(i::text) FROM range(60000) r(i)").close();
      java.util.Map<Long, Integer> sums = new java.util.HashMap<>(); // small's versions: sum(v) in each
      for (int i = 0; i < 80; i++) {
        for (String t : List.of("small", "roomy", "mid")) {
          db.sql("UPDATE " + t + " SET v = " + (t.equals("mid") ? "'x'" : "v + 1") + " WHERE id = " + i).close();
        }
        sums.put(number(db, "SELECT max(sequence_number) FROM \"small$snapshots\""), i + 1);
      }
      db.maintain(List.of(), false, r -> { });
      // each version of a one-row UPDATE costs tens of KB of metadata, far more than 3× a 1,000-row table's
      // data: a small table keeps 2 MiB of history instead, a few dozen versions
      List<String> versions = Rows.of(db, "SELECT sequence_number FROM \"small$snapshots\"");
      assertThat(versions).hasSizeBetween(16, 60);
      for (String version : versions) {
        Integer sum = sums.get(Long.parseLong(version));
        if (sum != null) { // else the compaction's, newest
          assertThat(Rows.of(db, "SELECT sum(v) FROM small AS OF VERSION " + version)).containsExactly("" + sum);
        }
      }
      assertThat(number(db, "SELECT snapshots FROM \"roomy$health\"")).as("all, and the compaction's").isEqualTo(82);
      long kept = number(db, "SELECT snapshots FROM \"mid$health\"");
      assertThat(kept).as("the bound, between a few and every version").isBetween(4L, 79L);
      // right after an expiry the metadata log's files still list the versions it took: a dozen commits later
      // they list what the bound keeps, and the next expiry measures the table as it will stay
      for (int i = 80; i < 92; i++) {
        db.sql("UPDATE mid SET v = 'x' WHERE id = " + i).close();
        db.sql("UPDATE small SET v = v + 1 WHERE id = " + i).close();
      }
      db.maintain(List.of("mid", "small"), false, r -> { });
      long smallData = number(db, "SELECT data_bytes FROM \"small$health\"");
      assertThat(bytesUnder(dir.resolve("public").resolve("small"))).as("small on disk, data " + smallData)
          .isLessThanOrEqualTo(smallData + (2 << 20));
      // the bound leaves room for the versions that land before the trigger fires (a quarter more, at
      // least 8): with all of them landed, the table is still within 3× its data (give or take a hundredth:
      // the bound reckons the versions to come at what the kept ones cost)
      long bound = number(db, "SELECT snapshots FROM \"mid$health\"");
      int more = (int) Math.max(8, bound / 4);
      for (int i = 92; i < 92 + more; i++) {
        db.sql("UPDATE mid SET v = 'x' WHERE id = " + i).close();
      }
      long data = number(db, "SELECT data_bytes FROM \"mid$health\"");
      assertThat(bytesUnder(dir.resolve("public").resolve("mid"))).as("on disk, data " + data + ", bound " + bound)
          .isLessThanOrEqualTo(data * 3 + data / 100);
      assertThat(Rows.of(db, "SELECT count(*) FILTER (WHERE v = 'x') FROM mid")).containsExactly("" + (92 + more));
    }
  }

  /**
   * Once a table's writes pause ({@code floe.maintenance.quiet-ms}), the maintainer tidies it: its small
   * files merged into one and their deletes rewritten away, so that a scan reads one file with no anti-join;
   * but never rewriting more bytes than the table's writers wrote since: a table whose one-row write left
   * a few deletes on a file much bigger than the write keeps them, and a big file is not rewritten to
   * absorb a few small ones (the small ones are merged among themselves).
   */
  @Test
  void aQuietTableIsTidiedWithinWhatItsWritersWrote() throws Exception {
    try (Database db = Floe.open(dir)) {
      // min-files high: the triggered compaction leaves both tables alone, only the tidy merges
      db.sql("CREATE TABLE busy (id bigint, v bigint) WITH ('floe.maintenance.quiet-ms' = '500', "
          + "'floe.maintenance.min-files' = '1000')").close();
      db.sql("INSERT INTO busy SELECT i, 0 FROM range(10000) r(i)").close();
      db.sql("CREATE TABLE big (id bigint, v text) WITH ('floe.maintenance.quiet-ms' = '500', "
          + "'floe.maintenance.min-files' = '1000')").close();
      db.sql("INSERT INTO big SELECT i, md5(i::text) FROM range(100000) r(i)").close();
      db.sql("CREATE TABLE grown (id bigint, v text) WITH ('floe.maintenance.quiet-ms' = '500', "
          + "'floe.maintenance.min-files' = '1000')").close();
      db.sql("INSERT INTO grown SELECT i, md5(i::text) FROM range(100000) r(i)").close();
      try (AutoCloseable m = db.startMaintainer(Duration.ofMillis(200))) {
        for (int i = 0; i < 40; i++) {
          db.sql("UPDATE busy SET v = v + 1 WHERE id = " + (i * 97)).close();
        }
        db.sql("UPDATE big SET v = 'x' WHERE id = 7").close();
        for (int i = 0; i < 6; i++) {
          db.sql("INSERT INTO grown VALUES (" + (100000 + i) + ", 'new')").close();
        }
        assertThat(number(db, "SELECT delete_files FROM \"busy$health\"")).isPositive();
        await(() -> number(db, "SELECT data_files FROM \"busy$health\"") == 1
            && number(db, "SELECT delete_files FROM \"busy$health\"") == 0, "busy tidied");
        // the step is recorded as it ends, just after its commit
        await(() -> db.maintenanceRuns().stream().anyMatch(r -> r.table().equals("public.busy")
            && r.action().equals("compact")), "busy's tidy recorded");
        assertThat(db.maintenanceRuns()).anySatisfy(r -> {
          assertThat(r.table()).isEqualTo("public.busy");
          assertThat(r.action()).isEqualTo("compact");
          assertThat(r.trigger()).startsWith("quiet for 0.5 s after ");
          assertThat(r.filesAdded()).isEqualTo(1);
        });
        // busy: its writers wrote more than its 10,000 rows take (a one-row file and a delete file each);
        // grown: its six one-row files fit what its writers wrote, its 2 MB file does not: the six are merged
        await(() -> number(db, "SELECT data_files FROM \"grown$health\"") == 2, "grown's new files merged");
        // big: its writer wrote a one-row file and a delete of one position, far less than its 2 MB file
        Thread.sleep(2_000);
        assertThat(db.maintenanceRuns()).noneSatisfy(r -> assertThat(r.table()).isEqualTo("public.big"));
        assertThat(Rows.of(db, "SELECT data_files, delete_files FROM \"big$health\"")).containsExactly("2|1");
      }
      assertThat(Rows.of(db, "SELECT count(*), sum(v) FROM busy")).containsExactly("10000|40");
      assertThat(Rows.of(db, "SELECT count(*) FILTER (WHERE v = 'x') FROM big")).containsExactly("1");
      assertThat(Rows.of(db, "SELECT count(*), count(*) FILTER (WHERE v = 'new') FROM grown"))
          .containsExactly("100006|6");
    }
  }

  /** The metadata file a commit's log no longer names is deleted as the commit lands, with no maintainer. */
  @Test
  void aMetadataFileLeavingTheLogIsDeletedAtOnce() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id int) WITH ('write.metadata.previous-versions-max' = '3')").close();
      for (int i = 0; i < 20; i++) {
        db.sql("INSERT INTO t VALUES (" + i + ")").close();
      }
      assertThat(metadataFiles("t")).as("the current metadata file and the three the log names").isEqualTo(4);
      assertThat(Rows.of(db, "SELECT count(*) FROM \"t$metadata_log_entries\"")).containsExactly("4");
    }
  }

  @Test
  void aTransactionBlockKeepsItsVersionFromTheMaintainer() throws Exception {
    try (Database db = Floe.open(dir); Session reader = db.connect()) {
      db.sql("CREATE TABLE t (id int) WITH ('floe.maintenance.min-files' = '4', 'floe.history.max-snapshots' = '1')")
          .close();
      for (int i = 0; i < 6; i++) {
        db.sql("INSERT INTO t VALUES (" + i + ")").close();
      }
      reader.sql("BEGIN").close();
      assertThat(Rows.of(reader, "SELECT count(*) FROM t")).containsExactly("6");
      try (AutoCloseable m = db.startMaintainer(Duration.ofMillis(200))) {
        await(() -> number(db, "SELECT data_files FROM \"t$health\"") == 1, "t compacted");
        await(() -> db.maintenanceRuns().stream().anyMatch(r -> r.action().equals("expire")), "an expiry");
        // the block's version and its six files are still there
        assertThat(Rows.of(reader, "SELECT count(*), sum(id) FROM t")).containsExactly("6|15");
        reader.sql("COMMIT").close();
        await(() -> number(db, "SELECT snapshots FROM \"t$health\"") == 1, "the block's version expired");
      }
      assertThat(Rows.of(db, "SELECT count(*), sum(id) FROM t")).containsExactly("6|15");
    }
  }

  @Test
  void maintainNowAndItsDryRun() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id int) WITH ('history.expire.max-snapshot-age-ms' = '0')").close();
      for (int i = 0; i < 5; i++) {
        db.sql("INSERT INTO t VALUES (" + i + ")").close();
      }
      Path orphan = dir.resolve("public").resolve("t").resolve("data").resolve("crashed.parquet");
      Files.write(orphan, new byte[] {1});
      Files.setLastModifiedTime(orphan, java.nio.file.attribute.FileTime.fromMillis(
          System.currentTimeMillis() - 8L * 86_400_000));

      List<MaintenanceRun> dry = new ArrayList<>();
      db.maintain(List.of("t"), true, dry::add);
      assertThat(dry).extracting(MaintenanceRun::action).containsExactly("compact", "expire", "remove_orphans");
      assertThat(dry).allSatisfy(r -> assertThat(r.outcome()).startsWith("dry run"));
      assertThat(dry.get(0).outcome()).isEqualTo("dry run: would rewrite 5 file(s) in 1 commit(s)");
      assertThat(dry.get(1).outcome()).isEqualTo("dry run: would expire 4 snapshot(s)");
      assertThat(dry.get(2).outcome()).isEqualTo("dry run: would delete 1 orphan file(s)");
      assertThat(number(db, "SELECT data_files FROM \"t$health\"")).isEqualTo(5);
      assertThat(orphan).exists();

      List<MaintenanceRun> done = new ArrayList<>();
      db.maintain(List.of(), false, done::add);
      assertThat(done).extracting(MaintenanceRun::action).containsExactly("compact", "expire", "remove_orphans");
      assertThat(done).allSatisfy(r -> assertThat(r.outcome()).isEqualTo("done"));
      assertThat(done.get(1).snapshotsExpired()).isEqualTo(5); // the five inserts' (the compaction's is current)
      assertThat(orphan).doesNotExist();
      assertThat(Rows.of(db, "SELECT data_files, snapshots FROM \"t$health\"")).containsExactly("1|1");
      assertThat(Rows.of(db, "SELECT count(*) FROM t")).containsExactly("5");

      assertThatThrownBy(() -> db.maintain(List.of("nope"), true, r -> { }))
          .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("42P01"));
      db.sql("ALTER TABLE t SET ('floe.history.max-snapshots' = 'many')").close();
      assertThatThrownBy(() -> db.maintain(List.of("t"), true, r -> { }))
          .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("22023"));
    }
  }
}
