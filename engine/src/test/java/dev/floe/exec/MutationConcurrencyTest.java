package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.Session;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two statements on one table, made to overlap: the first has read its snapshot and written its files
 * when the second commits, then the first tries to commit. Conflicting pairs must end with exactly one
 * winner and a 40001 for the other (whose changes, and files, are gone); compatible pairs both commit.
 */
class MutationConcurrencyTest {
  @TempDir
  Path dir;

  /** Run by the database's committer before each commit takes its lock ({@link FloeConfig#beforeCommit}). */
  private final AtomicReference<Runnable> beforeCommit = new AtomicReference<>();

  @AfterEach
  void clearHook() {
    beforeCommit.set(null);
  }

  private Database open() {
    return Floe.open(FloeConfig.builder(dir).beforeCommit(() -> {
      Runnable hook = beforeCommit.get();
      if (hook != null) {
        hook.run();
      }
    }).build());
  }

  private static final String MOR_V2 = "";
  private static final String MOR_V3 = " WITH (format_version = 3)";
  private static final String COW = " WITH (write.delete.mode = 'copy-on-write', write.update.mode = 'copy-on-write',"
      + " write.merge.mode = 'copy-on-write')";

  /**
   * Runs {@code first} in its own session until it is about to commit, then {@code second} to the end,
   * then lets {@code first} finish. Returns first's failure, or null if it committed.
   */
  private FloeException overlap(Database db, String first, String second) throws Exception {
    CountDownLatch paused = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    Thread[] firstThread = new Thread[1];
    beforeCommit.set(() -> {
      if (Thread.currentThread() == firstThread[0] && paused.getCount() > 0) {
        paused.countDown();
        try {
          resume.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    CompletableFuture<FloeException> firstDone = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try (Session s = db.connect(); Result r = s.sql(first)) {
        firstDone.complete(null);
      } catch (FloeException e) {
        firstDone.complete(e);
      } catch (Throwable e) {
        firstDone.completeExceptionally(e);
      }
    });
    firstThread[0] = t;
    t.start();
    if (!paused.await(30, TimeUnit.SECONDS)) {
      // the first statement finished (or failed) without reaching a commit
      throw new AssertionError("first statement did not reach its commit: " + firstDone.getNow(null));
    }
    try (Session s = db.connect()) {
      s.sql(second).close();
    } finally {
      resume.countDown();
    }
    return firstDone.get(30, TimeUnit.SECONDS);
  }

  private static List<String> rows(Database db, String sql) {
    List<String> out = new ArrayList<>();
    try (Result r = db.sql(sql)) {
      for (Row row : r) {
        out.add(row.toString());
      }
    }
    return out;
  }

  private void table(Database db, String with, boolean partitioned) {
    db.sql("CREATE TABLE t (id int, p int, v text)" + (partitioned ? " PARTITIONED BY (p)" : "") + with).close();
    db.sql("INSERT INTO t SELECT i, i % 2, 'v' || i FROM range(0, 20) AS r(i)").close();
  }

  private List<Path> dataFiles() throws IOException {
    try (Stream<Path> files = Files.walk(dir.resolve("public").resolve("t").resolve("data"))) {
      return files.filter(Files::isRegularFile).toList();
    }
  }

  /**
   * Data directory files that are neither from before the race nor in the current snapshot: what the
   * loser wrote and failed to clean up.
   */
  private List<Path> leftovers(Database db, List<Path> before) throws IOException {
    List<String> current = rows(db, "SELECT file_path FROM \"t$files\"");
    List<Path> stray = new ArrayList<>();
    for (Path f : dataFiles()) {
      if (!before.contains(f) && current.stream().noneMatch(r -> r.endsWith("/" + f.getFileName() + ")"))) {
        stray.add(f);
      }
    }
    return stray;
  }

  /**
   * Another engine (Iceberg's own catalog client) appends between a statement's read and its commit,
   * unseen by Floe until its catalog swap fails: the statement is then committed by Iceberg's validated
   * path, which finds the append compatible, and nothing Floe wrote for the lost attempt stays behind.
   */
  @ParameterizedTest
  @ValueSource(strings = {MOR_V2, MOR_V3, COW})
  void aForeignCommitBeforeTheSwapIsValidatedAndKept(String with) throws Exception {
    try (Database db = open()) {
      table(db, with, false);
      rows(db, "SELECT count(*) FROM t"); // the table's metadata is loaded and cached
      Set<String> metadataBefore = metadataFiles();
      org.apache.iceberg.jdbc.JdbcCatalog foreign = dev.floe.testing.IcebergClients.jdbcCatalog(dir);
      try {
        beforeCommit.set(() -> {
          beforeCommit.set(null);
          org.apache.iceberg.Table table = foreign.loadTable(
              org.apache.iceberg.catalog.TableIdentifier.of("public", "t"));
          org.apache.iceberg.data.GenericRecord row = org.apache.iceberg.data.GenericRecord.create(table.schema());
          row.setField("id", 100);
          row.setField("p", 0);
          row.setField("v", "foreign");
          org.apache.iceberg.AppendFiles append = table.newAppend();
          dev.floe.testing.IcebergFiles.writeData(table, List.of(row), 10).forEach(append::appendFile);
          append.commit();
        });
        db.sql("UPDATE t SET v = 'updated' WHERE id = 3").close();
      } finally {
        foreign.close();
      }
      assertThat(rows(db, "SELECT v FROM t WHERE id IN (3, 100) ORDER BY id")).containsExactly("(updated)",
          "(foreign)");
      assertThat(rows(db, "SELECT count(*) FROM t")).containsExactly("(21)");
      // Every manifest list and manifest written since is one the current snapshots reach.
      Set<String> reachable = new java.util.HashSet<>();
      for (String m : rows(db, "SELECT path FROM \"t$all_manifests\"")) {
        reachable.add(Path.of(m.substring(1, m.length() - 1)).getFileName().toString());
      }
      for (String l : rows(db, "SELECT manifest_list FROM \"t$snapshots\"")) {
        reachable.add(Path.of(l.substring(1, l.length() - 1)).getFileName().toString());
      }
      Set<String> written = metadataFiles();
      written.removeAll(metadataBefore);
      written.removeIf(f -> f.endsWith(".json") || f.endsWith(".text"));
      assertThat(reachable).containsAll(written);
    }
  }

  private Set<String> metadataFiles() throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("public").resolve("t").resolve("metadata"))) {
      return files.map(f -> f.getFileName().toString()).collect(java.util.stream.Collectors.toSet());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {MOR_V2, MOR_V3, COW})
  void deletesOfDifferentRowsOfOneFileConflictOnlyWhenTheFileIsRewritten(String with) throws Exception {
    try (Database db = open()) {
      table(db, with, false);
      long before = rows(db, "SELECT * FROM \"t$snapshots\"").size();
      List<Path> files = dataFiles();
      FloeException e = overlap(db, "DELETE FROM t WHERE id = 1", "DELETE FROM t WHERE id = 2");
      if (with.equals(COW)) {
        // copy-on-write rewrote the file the other deleted from: the conflict stands
        assertThat(e).isNotNull();
        assertThat(e.sqlState()).isEqualTo("40001");
        assertThat(rows(db, "SELECT count(*) FROM t")).containsExactly("(19)");
        assertThat(rows(db, "SELECT count(*) FROM t WHERE id = 1")).containsExactly("(1)");
        assertThat(rows(db, "SELECT * FROM \"t$snapshots\"")).hasSize((int) before + 1);
      } else {
        // merge-on-read: different rows, so the loser is rebased on the winner and both commit
        assertThat(e).isNull();
        assertThat(rows(db, "SELECT count(*) FROM t")).containsExactly("(18)");
        assertThat(rows(db, "SELECT count(*) FROM t WHERE id IN (1, 2)")).containsExactly("(0)");
        assertThat(rows(db, "SELECT * FROM \"t$snapshots\"")).hasSize((int) before + 2);
        // the winner's delete file, merged into the loser's, stays for the winner's snapshot: no file is
        // unreferenced
        List<String> all = rows(db, "SELECT file_path FROM \"t$all_files\"");
        for (Path f : leftovers(db, files)) {
          assertThat(all).as("referenced by a snapshot: " + f).anyMatch(r -> r.endsWith("/" + f.getFileName() + ")"));
        }
        return;
      }
      assertThat(leftovers(db, files)).isEmpty();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {MOR_V2, MOR_V3, COW})
  void updatesOfTheSameRowConflict(String with) throws Exception {
    try (Database db = open()) {
      table(db, with, false);
      List<Path> files = dataFiles();
      FloeException e = overlap(db, "UPDATE t SET v = 'first' WHERE id = 3", "UPDATE t SET v = 'second' WHERE id = 3");
      assertThat(e).isNotNull();
      assertThat(e.sqlState()).isEqualTo("40001");
      assertThat(rows(db, "SELECT v FROM t WHERE id = 3")).containsExactly("(second)");
      assertThat(rows(db, "SELECT count(*) FROM t")).containsExactly("(20)");
      assertThat(leftovers(db, files)).isEmpty();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {MOR_V2, MOR_V3, COW})
  void changesInDifferentPartitionsBothCommit(String with) throws Exception {
    try (Database db = open()) {
      table(db, with, true);
      FloeException e = overlap(db, "UPDATE t SET v = 'even' WHERE p = 0 AND id < 6",
          "DELETE FROM t WHERE p = 1 AND id < 6");
      assertThat(e).isNull();
      assertThat(rows(db, "SELECT id, v FROM t WHERE id < 6 ORDER BY id"))
          .containsExactly("(0, even)", "(2, even)", "(4, even)");
      assertThat(rows(db, "SELECT count(*) FROM t")).containsExactly("(17)");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {MOR_V2, MOR_V3, COW})
  void aConcurrentAppendDoesNotConflict(String with) throws Exception {
    try (Database db = open()) {
      table(db, with, false);
      FloeException e = overlap(db, "UPDATE t SET v = 'x' WHERE id < 5", "INSERT INTO t VALUES (100, 0, 'new')");
      assertThat(e).isNull();
      assertThat(rows(db, "SELECT count(*) FROM t WHERE v = 'x'")).containsExactly("(5)");
      assertThat(rows(db, "SELECT v FROM t WHERE id = 100")).containsExactly("(new)");
      assertThat(rows(db, "SELECT count(*) FROM t")).containsExactly("(21)");
    }
  }

  @Test
  void aDeleteAfterTheFileWasTruncatedAwayConflicts() throws Exception {
    try (Database db = open()) {
      table(db, MOR_V2, false);
      FloeException e = overlap(db, "DELETE FROM t WHERE id = 1", "TRUNCATE t");
      assertThat(e).isNotNull();
      assertThat(e.sqlState()).isEqualTo("40001");
      assertThat(rows(db, "SELECT count(*) FROM t")).containsExactly("(0)");
    }
  }

  @Test
  void insertingTheSameNewKeyConcurrentlyConflicts() throws Exception {
    try (Database db = open()) {
      db.sql("CREATE TABLE t (id int PRIMARY KEY, v text)").close();
      db.sql("INSERT INTO t VALUES (1, 'a')").close();
      FloeException e = overlap(db, "INSERT INTO t VALUES (5, 'first')", "INSERT INTO t VALUES (5, 'second')");
      assertThat(e).isNotNull();
      assertThat(e.sqlState()).isEqualTo("40001");
      assertThat(rows(db, "SELECT v FROM t WHERE id = 5")).containsExactly("(second)");
      // Different keys do not conflict.
      assertThat(overlap(db, "INSERT INTO t VALUES (6, 'x')", "INSERT INTO t VALUES (7, 'y')")).isNull();
      assertThat(rows(db, "SELECT count(*) FROM t")).containsExactly("(4)");
    }
  }

  @Test
  void anUpsertRacingAnInsertOfItsKeyConflicts() throws Exception {
    try (Database db = open()) {
      db.sql("CREATE TABLE t (id int PRIMARY KEY, v text)").close();
      FloeException e = overlap(db, "INSERT INTO t VALUES (9, 'upsert') ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v",
          "INSERT INTO t VALUES (9, 'plain')");
      assertThat(e).isNotNull();
      assertThat(e.sqlState()).isEqualTo("40001");
      assertThat(rows(db, "SELECT id, v FROM t")).containsExactly("(9, plain)");
    }
  }
}
