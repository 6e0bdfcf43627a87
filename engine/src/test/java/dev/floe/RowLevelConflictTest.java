package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.IcebergClients;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Synchronous changes conflict per row, not per file: two statements or blocks that change different
 * rows of one data file both commit (the second rebased on the first: its delete file merged with the
 * winner's), and only changes of the same row fail with 40001.
 */
class RowLevelConflictTest {
  @TempDir
  Path dir;

  private static long sum(Database db) {
    try (Result r = db.sql("SELECT sum(bal) FROM t")) {
      return r.iterator().next().getLong(0);
    }
  }

  private void create(Database db, int formatVersion) {
    db.sql("CREATE TABLE t (id int PRIMARY KEY, bal bigint NOT NULL) WITH ('format-version' = '" + formatVersion
        + "')").close();
    db.sql("INSERT INTO t SELECT i, 0 FROM range(100) r(i)").close(); // one data file
  }

  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void blocksChangingDifferentRowsOfOneFileBothCommit(int formatVersion) throws Exception {
    try (Database db = Floe.open(dir); Session a = db.connect(); Session b = db.connect()) {
      create(db, formatVersion);
      a.sql("BEGIN").close();
      a.sql("UPDATE t SET bal = bal + 1 WHERE id = 1").close();
      b.sql("BEGIN").close();
      b.sql("UPDATE t SET bal = bal + 10 WHERE id = 2").close();
      b.sql("DELETE FROM t WHERE id = 3").close();
      b.sql("COMMIT").close();
      a.sql("COMMIT").close(); // rebased on b's commit
      assertThat(sum(db)).isEqualTo(11);
      try (Result r = db.sql("SELECT count(*) FROM t")) {
        assertThat(r.iterator().next().getLong(0)).isEqualTo(99);
      }

      // the same row: first committer wins
      a.sql("BEGIN").close();
      a.sql("UPDATE t SET bal = bal + 1 WHERE id = 5").close();
      b.sql("UPDATE t SET bal = bal + 1 WHERE id = 5").close();
      assertThatThrownBy(() -> a.sql("COMMIT").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.SERIALIZATION_FAILURE);
      assertThat(sum(db)).isEqualTo(12);
      // a row the other deleted
      a.sql("BEGIN").close();
      a.sql("UPDATE t SET bal = bal + 1 WHERE id = 6").close();
      b.sql("DELETE FROM t WHERE id = 6").close();
      assertThatThrownBy(() -> a.sql("COMMIT").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.SERIALIZATION_FAILURE);
    }
    assertThat(iceberg(formatVersion)).hasSize(98);
  }

  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void concurrentOneRowUpdatesOfOneFileNeverFail(int formatVersion) throws Exception {
    int threads = 4;
    int each = 25;
    try (Database db = Floe.open(dir)) {
      create(db, formatVersion);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      AtomicInteger failures = new AtomicInteger();
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        done.add(pool.submit(() -> {
          try (Session s = db.connect()) {
            for (int i = 0; i < each; i++) {
              try {
                s.sql("UPDATE t SET bal = bal + 1 WHERE id = " + (thread * each + i)).close();
              } catch (FloeException e) {
                failures.incrementAndGet();
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      pool.shutdown();
      assertThat(failures.get()).as("statements that failed").isZero();
      assertThat(sum(db)).isEqualTo(threads * each);
    }
    List<Record> rows = iceberg(formatVersion);
    assertThat(rows).hasSize(100);
    assertThat(rows.stream().mapToLong(r -> (Long) r.getField("bal")).sum()).isEqualTo(threads * each);
  }

  /**
   * Randomized against a model of first-committer-wins per row: sessions interleave transaction blocks of
   * one-row and two-row UPDATEs and DELETEs (and autocommit statements) on one data file. A block's COMMIT
   * must fail with 40001 exactly when a block that committed after the block's snapshot changed one of the
   * rows it changed; every statement's count, and the table after every COMMIT, must be the model's.
   */
  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void conflictsAreExactlyTheSameRowConflictsOfTheModel(int formatVersion) throws Exception {
    sameRowConflictsOfTheModel(formatVersion, false);
  }

  /**
   * The same, with the table compacted at random moments (VACUUM FULL merges its files and applies their
   * deletes): a compaction changes no row, so the conflicts are exactly the model's still — a block whose
   * rows a compaction moved commits (its deletes follow the rows), and no statement fails because of it.
   */
  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void compactionNeverAddsAConflict(int formatVersion) throws Exception {
    sameRowConflictsOfTheModel(formatVersion, true);
  }

  private void sameRowConflictsOfTheModel(int formatVersion, boolean compacting) throws Exception {
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(Long.getLong("rowconflict.seed", 31L) * formatVersion);
    int sessions = 4;
    int rows = 40;
    int[] expectedRows = new int[1];
    try (Database db = Floe.open(dir)) {
      // the history is kept whole (VACUUM would otherwise expire it to the size bound): the compactions are counted in it
      db.sql("CREATE TABLE t (id int PRIMARY KEY, bal bigint NOT NULL) WITH ('format-version' = '" + formatVersion
          + "', 'floe.history.max-disk-ratio' = '1000000')").close();
      db.sql("INSERT INTO t SELECT i, 0 FROM range(" + rows + ") r(i)").close();
      java.util.TreeMap<Integer, Long> model = new java.util.TreeMap<>();
      for (int i = 0; i < rows; i++) {
        model.put(i, 0L);
      }
      List<java.util.Set<Integer>> committed = new ArrayList<>(); // write set of each commit, in commit order
      Session[] s = new Session[sessions];
      java.util.TreeMap<Integer, Long>[] view = new java.util.TreeMap[sessions]; // null: no snapshot yet
      int[] snapshotAt = new int[sessions]; // commits the snapshot saw
      List<java.util.Set<Integer>> writes = new ArrayList<>();
      boolean[] inBlock = new boolean[sessions];
      int conflicts = 0;
      int rebased = 0;
      for (int k = 0; k < sessions; k++) {
        s[k] = db.connect();
        writes.add(new java.util.HashSet<>());
      }
      try {
        for (int step = 0; step < 300; step++) {
          int k = rnd.nextInt(sessions);
          String context = "step " + step + ", session " + k;
          if (compacting && rnd.nextInt(12) == 0) {
            db.sql("VACUUM FULL t").close();
            assertThat(rowsOf(db)).as(context + ": after VACUUM FULL").isEqualTo(model);
            continue;
          }
          if (!inBlock[k] && rnd.nextInt(4) == 0) {
            // an autocommit statement: its own snapshot, committed at once
            int id = rnd.nextInt(rows);
            long d = 1 + rnd.nextInt(9);
            String tag = tag(s[k], "UPDATE t SET bal = bal + " + d + " WHERE id = " + id);
            boolean present = model.containsKey(id);
            assertThat(tag).as(context).isEqualTo(present ? "UPDATE 1" : "UPDATE 0");
            if (present) {
              model.put(id, model.get(id) + d);
              committed.add(java.util.Set.of(id));
            }
            continue;
          }
          if (!inBlock[k]) {
            s[k].sql("BEGIN").close();
            inBlock[k] = true;
            view[k] = null;
            writes.get(k).clear();
            continue;
          }
          if (view[k] != null && rnd.nextInt(3) == 0) {
            boolean conflict = false;
            for (int c = snapshotAt[k]; c < committed.size(); c++) {
              conflict |= committed.get(c).stream().anyMatch(writes.get(k)::contains);
            }
            FloeException failed = null;
            try {
              s[k].sql("COMMIT").close();
            } catch (FloeException e) {
              failed = e;
            }
            inBlock[k] = false;
            if (conflict) {
              assertThat(failed).as(context + ": COMMIT of a block that changed a row changed since its snapshot")
                  .isNotNull();
              assertThat(failed.sqlState()).isEqualTo(SqlState.SERIALIZATION_FAILURE);
              conflicts++;
              continue;
            }
            assertThat(failed).as(context + ": COMMIT of a block whose rows no later commit changed").isNull();
            if (snapshotAt[k] < committed.size() && !writes.get(k).isEmpty()) {
              rebased++;
            }
            for (int id : writes.get(k)) {
              if (view[k].containsKey(id)) {
                model.put(id, view[k].get(id));
              } else {
                model.remove(id);
              }
            }
            if (!writes.get(k).isEmpty()) {
              committed.add(java.util.Set.copyOf(writes.get(k)));
            }
            assertThat(rowsOf(db)).as(context + ": after COMMIT").isEqualTo(model);
            continue;
          }
          if (view[k] == null) {
            view[k] = new java.util.TreeMap<>(model); // the block's snapshot: at its first statement
            snapshotAt[k] = committed.size();
          }
          int id = rnd.nextInt(rows);
          int other = rnd.nextInt(rows);
          boolean delete = rnd.nextInt(5) == 0;
          boolean two = rnd.nextInt(4) == 0 && other != id;
          List<Integer> ids = two ? List.of(id, other) : List.of(id);
          long d = 1 + rnd.nextInt(9);
          String where = two ? "id IN (" + id + ", " + other + ")" : "id = " + id;
          String tag = tag(s[k], delete ? "DELETE FROM t WHERE " + where : "UPDATE t SET bal = bal + " + d + " WHERE "
              + where);
          int n = 0;
          for (int i : ids) {
            if (view[k].containsKey(i)) {
              n++;
              writes.get(k).add(i);
              if (delete) {
                view[k].remove(i);
              } else {
                view[k].put(i, view[k].get(i) + d);
              }
            }
          }
          assertThat(tag).as(context).isEqualTo((delete ? "DELETE " : "UPDATE ") + n);
        }
      } finally {
        for (Session x : s) {
          x.close();
        }
      }
      assertThat(conflicts).as("same-row conflicts").isPositive();
      assertThat(rebased).as("blocks committed over a later commit to their file").isPositive();
      expectedRows[0] = model.size();
      if (compacting) {
        try (Result r = db.sql("SELECT count(*) FROM \"t$snapshots\" WHERE operation = 'replace'")) {
          assertThat(r.iterator().next().getLong(0)).as("compactions").isGreaterThan(5);
        }
      }
    }
    assertThat(iceberg(formatVersion)).hasSize(expectedRows[0]);
  }

  private static String tag(Session s, String sql) {
    try (Result r = s.sql(sql)) {
      return r.commandTag();
    }
  }

  private static java.util.TreeMap<Integer, Long> rowsOf(Database db) {
    java.util.TreeMap<Integer, Long> out = new java.util.TreeMap<>();
    try (Result r = db.sql("SELECT id, bal FROM t")) {
      for (Row row : r) {
        out.put((int) row.getLong(0), row.getLong(1));
      }
    }
    return out;
  }

  /** The table as Iceberg's generic reader reads it; on v3, at most one deletion vector per data file. */
  private List<Record> iceberg(int formatVersion) throws Exception {
    List<Record> out = new ArrayList<>();
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      Table t = catalog.loadTable(TableIdentifier.of("public", "t"));
      try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          if (formatVersion >= 3) {
            assertThat(task.deletes().stream().filter(d -> d.format() == FileFormat.PUFFIN).count())
                .as("deletion vectors of " + task.file().location()).isLessThanOrEqualTo(1);
          }
        }
      }
      try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
        it.forEach(out::add);
      }
    }
    return out;
  }
}
