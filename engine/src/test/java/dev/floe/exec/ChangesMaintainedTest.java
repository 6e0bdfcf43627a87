package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Changes;
import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.Session;
import dev.floe.testing.Rows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A change stream and the background maintainer side by side, as a served warehouse runs them: every
 * batch commits (none loses to a compaction or an expiry of its table or of its state table), the
 * maintainer keeps both tables' files and versions bounded, and the table ends equal to the stream's
 * fold.
 */
class ChangesMaintainedTest {
  @TempDir
  Path dir;

  @Test
  void everyBatchCommitsBesideTheMaintainerAndItKeepsBothTablesSmall() throws Exception {
    Random random = new Random(23);
    Map<Integer, String> model = new TreeMap<>();
    long lsn = 0;
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id int PRIMARY KEY, v text) WITH ('floe.maintenance.min-files' = '4', "
          + "'floe.history.max-snapshots' = '3')").close();
      Changes c = db.changes("t", Changes.Format.DEBEZIUM);
      try (AutoCloseable m = db.startMaintainer(Duration.ofMillis(50))) {
        for (int batch = 0; batch < 150; batch++) {
          List<String> events = new ArrayList<>();
          for (int i = 0; i < 40; i++) {
            int id = random.nextInt(300);
            lsn++;
            String v = "v" + lsn;
            if (!model.containsKey(id)) {
              events.add(event("c", lsn, null, after(id, v)));
              model.put(id, v);
            } else if (random.nextInt(4) == 0) {
              events.add(event("d", lsn, "{\"id\": " + id + "}", null));
              model.remove(id);
            } else {
              events.add(event("u", lsn, "{\"id\": " + id + "}", after(id, v)));
              model.put(id, v);
            }
          }
          assertThat(c.apply(events, "lsn " + lsn).committed()).as("batch %d", batch).isTrue();
        }
        List<String> expected = new ArrayList<>();
        model.forEach((id, v) -> expected.add(id + "|" + v));
        assertThat(Rows.of(db, "SELECT id, v FROM t ORDER BY id")).containsExactlyElementsOf(expected);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (Long.parseLong(Rows.of(db, "SELECT data_files FROM \"t$health\"").get(0)) > 4
            && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
        assertThat(Long.parseLong(Rows.of(db, "SELECT data_files FROM \"t$health\"").get(0))).isLessThanOrEqualTo(4);
        assertThat(db.maintenanceRuns()).anySatisfy(r -> {
          assertThat(r.table()).isEqualTo("public.t");
          assertThat(r.action()).isEqualTo("compact");
          assertThat(r.outcome()).isEqualTo("done");
        });
        assertThat(db.maintenanceRuns()).anySatisfy(r -> {
          assertThat(r.table()).doesNotStartWith("public.");
          assertThat(r.action()).isEqualTo("compact");
          assertThat(r.outcome()).isEqualTo("done");
        });
      }
      assertThat(Rows.of(db, "SELECT id, v FROM t ORDER BY id")).hasSize(model.size());
    }
  }

  /**
   * The maintainer compacts a stream's table between two of its batches, not under one: a compaction
   * landing under a batch of a million rows makes it find each row it deletes again by value, which costs
   * more than the compaction. Held by a batch, the stream's lock keeps the compaction waiting.
   */
  @Test
  void theMaintainerCompactsAStreamsTableBetweenItsBatches() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id int PRIMARY KEY, v text) WITH ('floe.maintenance.min-files' = '4')").close();
      Changes c = db.changes("t", Changes.Format.DEBEZIUM);
      for (int batch = 0; batch < 6; batch++) {
        c.apply(List.of(event("c", batch + 1, null, after(batch, "v" + batch))), "lsn " + (batch + 1));
      }
      java.lang.reflect.Field f = Database.class.getDeclaredField("engine");
      f.setAccessible(true);
      Engine engine = (Engine) f.get(db);
      org.apache.iceberg.catalog.TableIdentifier id = org.apache.iceberg.catalog.TableIdentifier.of("public", "t");
      java.util.concurrent.locks.ReentrantLock stream = ChangeLocks.writing(id,
          engine.tables().current(id).orElseThrow().uuid().toString()).orElseThrow();
      stream.lock(); // as a batch does
      try (AutoCloseable m = db.startMaintainer(Duration.ofMillis(50))) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!stream.hasQueuedThreads() && System.nanoTime() < deadline
            && Rows.of(db, "SELECT count(*) FROM \"t$snapshots\" WHERE operation = 'replace'").get(0).equals("0")) {
          Thread.sleep(20);
        }
        assertThat(Rows.of(db, "SELECT count(*) FROM \"t$snapshots\" WHERE operation = 'replace'"))
            .as("no compaction under the batch").containsExactly("0");
        assertThat(stream.hasQueuedThreads()).as("the maintainer waits for the batch").isTrue();
        Thread.sleep(2000); // a long batch: its time is not the compaction's
        stream.unlock();
        while (Rows.of(db, "SELECT count(*) FROM \"t$snapshots\" WHERE operation = 'replace'").get(0).equals("0")
            && System.nanoTime() < deadline) {
          Thread.sleep(50);
        }
        assertThat(Rows.of(db, "SELECT count(*) FROM \"t$snapshots\" WHERE operation = 'replace'"))
            .as("compacted once the batch let go").doesNotContain("0");
        dev.floe.MaintenanceRun run = db.maintenanceRuns().stream().filter(r -> r.table().equals("public.t")
            && r.action().equals("compact") && r.outcome().equals("done")).findFirst().orElseThrow();
        java.util.regex.Matcher waited = java.util.regex.Pattern.compile("after waiting (\\d+) ms for a batch")
            .matcher(run.trigger());
        assertThat(waited.find()).as(run.trigger()).isTrue();
        assertThat(Long.parseLong(waited.group(1))).as("the wait, said apart").isGreaterThanOrEqualTo(2000);
        assertThat(run.millis()).as("the compaction's own time").isLessThan(2000);
      } finally {
        if (stream.isHeldByCurrentThread()) {
          stream.unlock();
        }
      }
      assertThat(Rows.of(db, "SELECT count(*) FROM t")).containsExactly("6");
    }
  }

  /**
   * A compaction of every table and an expiry of every version no reader holds land between a batch's
   * reads and its commit, on each path a batch can take (Debezium events and LWW envelopes, folded in Java
   * and reconciled in DuckDB): the batch follows the compaction and commits, and the table is the fold.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"debezium", "debezium-in-duckdb", "lww", "lww-in-duckdb"})
  void aBatchFollowsACompactionAndExpiryLandingUnderIt(String path) throws Exception {
    AtomicReference<Thread> applier = new AtomicReference<>();
    AtomicReference<Runnable> once = new AtomicReference<>();
    FloeConfig config = onceUnder(applier, once);
    boolean lww = path.startsWith("lww");
    String bulk = System.getProperty("floe.cdc.bulk-min-events");
    if (path.endsWith("-in-duckdb")) {
      System.setProperty("floe.cdc.bulk-min-events", "1");
    }
    Random random = new Random(path.hashCode());
    Map<Integer, String> model = new TreeMap<>();
    long lsn = 0;
    try (Database db = Floe.open(config); Session other = db.connect()) {
      // a uuid column: the rows the batch deletes are found again in the compaction's files by value, which
      // Iceberg's bounds of a uuid column cannot prune (ScanPlan.prunesBy)
      db.sql("CREATE TABLE t (id int PRIMARY KEY, v text, u uuid) WITH ("
          + "'history.expire.max-snapshot-age-ms' = '1')").close();
      Changes c = db.changes("t", lww ? Changes.Format.LWW : Changes.Format.DEBEZIUM);
      for (int batch = 0; batch < 8; batch++) {
        List<String> events = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
          int id = random.nextInt(60);
          lsn++;
          String v = "v" + lsn;
          String u = new java.util.UUID(random.nextLong(), random.nextLong()).toString(); // half with the high bit
          boolean delete = model.containsKey(id) && random.nextInt(4) == 0;
          if (lww) {
            events.add(delete ? "{\"key\": {\"id\": " + id + "}, \"ts\": " + lsn + ", \"delete\": true}"
                : "{\"key\": {\"id\": " + id + "}, \"ts\": " + lsn + ", \"insert\": true, \"cells\": {\"v\": \""
                    + v + "\", \"u\": \"" + u + "\"}}");
          } else if (delete) {
            events.add(event("d", lsn, "{\"id\": " + id + "}", null));
          } else {
            events.add(event(model.containsKey(id) ? "u" : "c", lsn,
                model.containsKey(id) ? "{\"id\": " + id + "}" : null,
                "{\"id\": " + id + ", \"v\": \"" + v + "\", \"u\": \"" + u + "\"}"));
          }
          if (delete) {
            model.remove(id);
          } else {
            model.put(id, v + "|" + u);
          }
        }
        boolean last = batch == 7;
        if (last) {
          once.set(() -> elsewhere(other, "VACUUM FULL"));
          applier.set(Thread.currentThread());
        }
        long taken = ChangeBulk.TAKEN.get();
        assertThat(c.apply(events, "lsn " + lsn).committed()).as("batch %d", batch).isTrue();
        if (path.endsWith("-in-duckdb")) {
          assertThat(ChangeBulk.TAKEN.get()).as("folded in DuckDB").isEqualTo(taken + 1);
        }
        if (last) {
          assertThat(once.get()).as("the vacuum ran under the batch").isNull();
        }
      }
      applier.set(null);
      List<String> expected = new ArrayList<>();
      model.forEach((id, v) -> expected.add(id + "|" + v));
      assertThat(Rows.of(db, "SELECT id, v, u FROM t ORDER BY id")).containsExactlyElementsOf(expected);
      assertThat(Rows.of(db, "SELECT operation FROM \"t$snapshots\" ORDER BY sequence_number DESC LIMIT 2"))
          .as("the batch on the compaction").containsExactly("overwrite", "replace");
      // the version the batch read (its pin kept it from the expiry), the compaction, the batch
      assertThat(Rows.of(db, "SELECT count(*) FROM \"t$snapshots\"")).as("expired").containsExactly("3");
    } finally {
      if (bulk == null) {
        System.clearProperty("floe.cdc.bulk-min-events");
      } else {
        System.setProperty("floe.cdc.bulk-min-events", bulk);
      }
    }
  }

  /**
   * A batch that loses a race its commit cannot be rebased over (another writer deleted a row the batch
   * replaces, committed under the batch) is applied again from the table as it then is, rather than
   * failing the stream: the batch lands once, and its rows are the table's.
   */
  @Test
  void aBatchThatLosesARaceIsAppliedAgain() throws Exception {
    AtomicReference<Thread> applier = new AtomicReference<>();
    AtomicReference<Runnable> once = new AtomicReference<>();
    FloeConfig config = onceUnder(applier, once);
    try (Database db = Floe.open(config); Session other = db.connect()) {
      db.sql("CREATE TABLE t (id int PRIMARY KEY, v text)").close();
      Changes c = db.changes("t", Changes.Format.DEBEZIUM);
      c.apply(List.of(event("c", 1, null, after(1, "a")), event("c", 2, null, after(2, "b"))), "lsn 2");
      once.set(() -> elsewhere(other, "DELETE FROM t WHERE id = 1"));
      applier.set(Thread.currentThread());
      Changes.Applied applied = c.apply(List.of(event("u", 3, "{\"id\": 1}", after(1, "a2")),
          event("u", 4, "{\"id\": 2}", after(2, "b2"))), "lsn 4");
      applier.set(null);
      assertThat(once.get()).as("the delete ran under the batch").isNull();
      assertThat(applied.committed()).isTrue();
      assertThat(Rows.of(db, "SELECT id, v FROM t ORDER BY id")).containsExactly("1|a2", "2|b2");
      assertThat(c.position()).contains("lsn 4");
      // applied once: again, it changes nothing
      assertThat(c.apply(List.of(event("u", 3, "{\"id\": 1}", after(1, "a2")),
          event("u", 4, "{\"id\": 2}", after(2, "b2"))), "lsn 4").keysChanged()).isZero();
    }
  }

  /** A database whose commits by thread {@code applier} first run what {@code once} holds, once. */
  private FloeConfig onceUnder(AtomicReference<Thread> applier, AtomicReference<Runnable> once) {
    return FloeConfig.builder(dir).beforeCommit(() -> {
      if (Thread.currentThread() == applier.get()) {
        Runnable r = once.getAndSet(null);
        if (r != null) {
          r.run();
        }
      }
    }).build();
  }

  /** {@code sql} run by {@code session} on another thread (the caller holds the batch's locks), to its end. */
  private static void elsewhere(Session session, String sql) {
    Thread t = new Thread(() -> session.sql(sql).close());
    t.start();
    try {
      t.join();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  private static String event(String op, long lsn, String before, String after) {
    return "{\"op\": \"" + op + "\", \"before\": " + before + ", \"after\": " + after + ", \"source\": {\"lsn\": "
        + lsn + ", \"ts_ms\": 0}, \"ts_ms\": 0}";
  }

  private static String after(int id, String v) {
    return "{\"id\": " + id + ", \"v\": \"" + v + "\"}";
  }
}
