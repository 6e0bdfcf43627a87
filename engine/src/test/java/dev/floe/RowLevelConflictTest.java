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
