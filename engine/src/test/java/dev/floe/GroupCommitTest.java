package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.IcebergClients;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Group commit of synchronous statements: statements that reach a table's commit lock while it is held
 * share one snapshot, each validated alone (a conflicting one fails alone with 40001), and other engines
 * read the result. The test holds the table's commit lock itself while the statements arrive, so they
 * form one group for certain.
 */
class GroupCommitTest {
  private static final TableIdentifier ID = TableIdentifier.of("public", "t");

  @TempDir
  Path dir;

  /** Runs {@code statements}, each in its own session, as one group; returns each one's error or null. */
  private static List<FloeException> group(Database db, List<String> statements) throws Exception {
    return group(db, statements, List.of());
  }

  /** As {@link #group(Database, List)}, cancelling the statements at {@code cancel} while they wait. */
  private static List<FloeException> group(Database db, List<String> statements, List<Integer> cancel)
      throws Exception {
    Object lock = commitLock(db);
    List<Thread> threads = new ArrayList<>();
    List<CompletableFuture<FloeException>> outcomes = new ArrayList<>();
    List<Session> sessions = new ArrayList<>();
    synchronized (lock) {
      for (String sql : statements) {
        CompletableFuture<FloeException> outcome = new CompletableFuture<>();
        outcomes.add(outcome);
        Session session = db.connect();
        sessions.add(session);
        Thread t = new Thread(() -> {
          try (Session s = session) {
            s.sql(sql).close();
            outcome.complete(null);
          } catch (FloeException e) {
            outcome.complete(e);
          } catch (Throwable e) {
            outcome.completeExceptionally(e);
          }
        });
        threads.add(t);
        t.start();
        waitBlocked(t); // queued, waiting for the lock: in arrival order
      }
      cancel.forEach(k -> sessions.get(k).cancel());
    }
    List<FloeException> out = new ArrayList<>();
    for (CompletableFuture<FloeException> o : outcomes) {
      out.add(o.get(60, TimeUnit.SECONDS));
    }
    return out;
  }

  /** Waits until {@code t} has stayed blocked on a monitor (the commit lock the test holds) a while. */
  private static void waitBlocked(Thread t) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    int blocked = 0;
    while (blocked < 20) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the statement did not reach the commit lock: " + t.getState());
      }
      blocked = t.getState() == Thread.State.BLOCKED ? blocked + 1 : 0;
      Thread.sleep(5);
    }
  }

  private static Object commitLock(Database db) throws Exception {
    java.lang.reflect.Field engine = Database.class.getDeclaredField("engine");
    engine.setAccessible(true);
    Object e = engine.get(db);
    java.lang.reflect.Method committer = e.getClass().getDeclaredMethod("committer");
    committer.setAccessible(true);
    return ((dev.floe.commit.Committer) committer.invoke(e)).lock(ID);
  }

  private static int snapshots(Database db) {
    return db.table("t").snapshots().size();
  }

  private static Map<Long, Long> rows(Database db) {
    Map<Long, Long> out = new TreeMap<>();
    try (Result r = db.sql("SELECT id, bal FROM t")) {
      for (Row row : r.toList()) {
        out.put(row.getLong(0), row.getLong(1));
      }
    }
    return out;
  }

  /** The table as Iceberg's generic reader reads it (at most one deletion vector per data file on v3). */
  private Map<Long, Long> iceberg(int formatVersion) throws Exception {
    Map<Long, Long> out = new TreeMap<>();
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      Table t = catalog.loadTable(ID);
      try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          if (formatVersion >= 3) {
            assertThat(task.deletes().stream().filter(d -> d.format() == FileFormat.PUFFIN).count())
                .as("deletion vectors of " + task.file().location()).isLessThanOrEqualTo(1);
          }
        }
      }
      try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
        it.forEach(r -> out.put(((Number) r.getField("id")).longValue(), ((Number) r.getField("bal")).longValue()));
      }
    }
    return out;
  }

  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void statementsWaitingForTheLockShareOneSnapshot(int formatVersion) throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint PRIMARY KEY, bal bigint NOT NULL) WITH ('format-version' = '"
          + formatVersion + "')").close();
      db.sql("INSERT INTO t SELECT i, 0 FROM range(100) r(i)").close(); // one data file
      int before = snapshots(db);
      List<FloeException> errors = group(db, List.of(
          "UPDATE t SET bal = bal + 1 WHERE id = 1",
          "UPDATE t SET bal = bal + 10 WHERE id = 2",
          "DELETE FROM t WHERE id = 3",
          "INSERT INTO t VALUES (1000, 7)",
          "UPDATE t SET bal = bal + 100 WHERE id = 4"));
      assertThat(errors).containsOnlyNulls();
      assertThat(snapshots(db)).isEqualTo(before + 1);

      Map<Long, Long> expected = new TreeMap<>();
      for (long i = 0; i < 100; i++) {
        expected.put(i, 0L);
      }
      expected.put(1L, 1L);
      expected.put(2L, 10L);
      expected.remove(3L);
      expected.put(1000L, 7L);
      expected.put(4L, 100L);
      assertThat(rows(db)).isEqualTo(expected);
      assertThat(iceberg(formatVersion)).isEqualTo(expected);
    }
  }

  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void aStatementThatConflictsFailsAloneInItsGroup(int formatVersion) throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint PRIMARY KEY, bal bigint NOT NULL) WITH ('format-version' = '"
          + formatVersion + "')").close();
      db.sql("INSERT INTO t SELECT i, 0 FROM range(100) r(i)").close();
      int before = snapshots(db);
      List<FloeException> errors = group(db, List.of(
          "UPDATE t SET bal = bal + 1 WHERE id = 5",
          "UPDATE t SET bal = bal + 10 WHERE id = 5", // the same row as the first: first committer wins
          "UPDATE t SET bal = bal + 100 WHERE id = 6",
          "INSERT INTO t VALUES (1000, 0)",
          "INSERT INTO t VALUES (1000, 1)", // the key the group's earlier statement added
          "DELETE FROM t WHERE id = 7"));
      assertThat(errors.get(0)).isNull();
      assertThat(errors.get(1)).isNotNull().extracting(FloeException::sqlState)
          .isEqualTo(SqlState.SERIALIZATION_FAILURE);
      assertThat(errors.get(2)).isNull();
      assertThat(errors.get(3)).isNull();
      assertThat(errors.get(4)).isNotNull().extracting(FloeException::sqlState)
          .isEqualTo(SqlState.SERIALIZATION_FAILURE);
      assertThat(errors.get(5)).isNull();
      assertThat(snapshots(db)).isEqualTo(before + 1);
      Map<Long, Long> rows = rows(db);
      assertThat(rows).hasSize(100).containsEntry(5L, 1L).containsEntry(6L, 100L).containsEntry(1000L, 0L)
          .doesNotContainKey(7L);
      assertThat(rows.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(101);
      assertThat(iceberg(formatVersion)).isEqualTo(rows);
    }
  }

  /**
   * A statement cancelled while it waits fails alone with 57014 and commits nothing, whichever of the
   * group commits it (the first queued is the likeliest leader); the others commit in one snapshot.
   */
  @Test
  void aStatementCancelledWhileItWaitsFailsAlone() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint PRIMARY KEY, bal bigint NOT NULL)").close();
      db.sql("INSERT INTO t SELECT i, 0 FROM range(10) r(i)").close();
      int before = snapshots(db);
      List<FloeException> errors = group(db, List.of(
          "UPDATE t SET bal = 1 WHERE id = 1",
          "UPDATE t SET bal = 2 WHERE id = 2",
          "UPDATE t SET bal = 3 WHERE id = 3",
          "UPDATE t SET bal = 4 WHERE id = 4"), List.of(0, 2));
      for (int k : List.of(0, 2)) {
        assertThat(errors.get(k)).as("statement %d", k).isNotNull().extracting(FloeException::sqlState)
            .isEqualTo(SqlState.QUERY_CANCELED);
      }
      assertThat(errors.get(1)).isNull();
      assertThat(errors.get(3)).isNull();
      assertThat(snapshots(db)).isEqualTo(before + 1);
      assertThat(rows(db)).containsEntry(1L, 0L).containsEntry(2L, 2L).containsEntry(3L, 0L).containsEntry(4L, 4L);
    }
  }

  @Test
  void insertsIntoATableWithoutAKeyShareOneAppend() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint, bal bigint)").close();
      db.sql("INSERT INTO t VALUES (0, 0)").close();
      int before = snapshots(db);
      List<String> inserts = new ArrayList<>();
      for (int i = 1; i <= 6; i++) {
        inserts.add("INSERT INTO t VALUES (" + i + ", " + i * 10 + ")");
      }
      assertThat(group(db, inserts)).containsOnlyNulls();
      assertThat(snapshots(db)).isEqualTo(before + 1);
      try (Result r = db.sql("SELECT count(*), sum(bal) FROM t")) {
        Row row = r.toList().get(0);
        assertThat(row.getLong(0)).isEqualTo(7);
        assertThat(row.getLong(1)).isEqualTo(210);
      }
      assertThat(iceberg(2)).hasSize(7);
    }
  }

  @Test
  void concurrentWritersLoseNothing() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint PRIMARY KEY, bal bigint NOT NULL)").close();
      db.sql("INSERT INTO t SELECT i, 0 FROM range(40) r(i)").close();
      int writers = 6;
      int each = 15;
      List<CompletableFuture<Integer>> done = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int me = w;
        done.add(CompletableFuture.supplyAsync(() -> {
          int committed = 0;
          try (Session s = db.connect()) {
            for (int i = 0; i < each; i++) {
              // rows of its own (40 / 6 writers): nothing of another's, so nothing conflicts
              s.sql("UPDATE t SET bal = bal + 1 WHERE id = " + (me + writers * (i % 6))).close();
              committed++;
            }
          }
          return committed;
        }));
      }
      long total = 0;
      for (CompletableFuture<Integer> f : done) {
        total += f.get(120, TimeUnit.SECONDS);
      }
      assertThat(total).isEqualTo((long) writers * each);
      try (Result r = db.sql("SELECT sum(bal) FROM t")) {
        assertThat(r.toList().get(0).getLong(0)).isEqualTo(total);
      }
      assertThat(iceberg(2).values().stream().mapToLong(Long::longValue).sum()).isEqualTo(total);
    }
  }
}
