package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Session#cancel()} at random moments of a write: before its commit point it commits nothing and
 * fails with 57014, after it the write stands and reports success. Never a failure with the change
 * committed, never a success without it. The moments are spread over the whole statement, DuckDB's
 * work, Floe's file writing and commit, and what runs after the commit.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CancelTest {
  private static final int TRIALS = Integer.getInteger("floe.cancel.trials", 12);

  @TempDir
  static Path dir;

  private Database db;

  @BeforeAll
  void open() {
    db = Floe.open(dir.resolve("wh"));
    db.sql("CREATE TABLE src (id bigint, v text)").close();
    db.sql("INSERT INTO src SELECT i, md5(i::text) FROM range(200000) r(i)").close();
    db.sql("CREATE TABLE t (id bigint, v text)").close();
    db.sql("INSERT INTO t SELECT * FROM src").close();
    db.sql("CREATE TABLE pk (id bigint NOT NULL PRIMARY KEY, v text)").close();
    db.sql("CREATE TABLE logged (id bigint, v text) WITH (tail = true)").close();
  }

  @AfterAll
  void close() {
    db.close();
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "INSERT INTO t SELECT id, md5(v) FROM src WHERE id % 2 = 0",
      "INSERT INTO t SELECT id, v FROM src WHERE id < 3 RETURNING id",
      "UPDATE t SET v = md5(v) WHERE id % 5 = 1",
      "UPDATE t SET v = 'one' WHERE id = 7 RETURNING v",
      "DELETE FROM t WHERE id IN (SELECT id FROM t WHERE id % 7 = 3 ORDER BY id LIMIT 1500)",
      "MERGE INTO t USING (SELECT id, v FROM src WHERE id % 11 = 0) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v",
      "INSERT INTO pk SELECT id, v FROM src WHERE id % 13 = 0 ON CONFLICT (id) DO UPDATE SET v = excluded.v || 'x'",
      "CREATE TABLE made AS SELECT id, md5(v) AS v FROM src",
      "INSERT INTO logged SELECT id, v FROM src WHERE id % 50 = 0"})
  void aCancelledStatementCommitsNothingAndACommittedOneSucceeds(String sql) throws Exception {
    Random random = new Random(sql.hashCode());
    long typical = time(sql);
    int cancelled = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
      String before = state();
      try (Session s = db.connect()) {
        CompletableFuture<String> run = CompletableFuture.supplyAsync(() -> {
          try (Result r = s.sql(sql)) {
            r.forEach(row -> { });
            return "ok";
          } catch (FloeException e) {
            return e.sqlState() + " " + e.getMessage();
          }
        });
        long delay = (long) (random.nextDouble() * typical * 1.2);
        TimeUnit.MICROSECONDS.sleep(delay);
        s.cancel();
        String outcome = run.get(60, TimeUnit.SECONDS);
        String after = state();
        if (outcome.equals("ok")) {
          assertThat(after).as("%s succeeded after a cancel at %d us: it committed", sql, delay).isNotEqualTo(before);
        } else {
          assertThat(outcome).as(sql).startsWith("57014");
          cancelled++;
          assertThat(after).as("%s failed (%s) after a cancel at %d us: it committed nothing", sql, outcome, delay)
              .isEqualTo(before);
        }
      }
      db.sql("DROP TABLE IF EXISTS made").close();
    }
    if (typical > 100_000) {
      // a cancel that comes before the statement starts has nothing to stop: only long ones surely see some
      assertThat(cancelled).as("cancels that stopped %s", sql).isPositive();
    }
  }

  /**
   * A cancel that comes once the statement shows as active stops it, however early: DuckDB forgets an
   * interrupt that comes before its query executes, so the session repeats it until the statement ends.
   * The query would run for hours.
   */
  @org.junit.jupiter.api.Test
  void aCancelAsSoonAsTheStatementIsActiveStopsIt() throws Exception {
    try (Session watcher = db.connect()) {
      for (int trial = 0; trial < 25; trial++) {
        try (Session s = db.connect()) {
          CompletableFuture<String> run = CompletableFuture.supplyAsync(() -> {
            try (Result r = s.sql("SELECT sum(hash(i)) FROM range(100000000000) r(i)")) {
              r.forEach(row -> { });
              return "ok";
            } catch (FloeException e) {
              return e.sqlState();
            }
          });
          String active = "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid = " + s.backendPid();
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
          while (!one(watcher, active).equals("1")) {
            assertThat(System.nanoTime()).as("the statement shows as active").isLessThan(deadline);
          }
          s.cancel();
          assertThat(run.get(30, TimeUnit.SECONDS)).as("trial %d", trial).isEqualTo("57014");
        }
      }
    }
  }

  private static String one(Session s, String sql) {
    try (Result r = s.sql(sql)) {
      return String.valueOf(r.iterator().next().get(0));
    }
  }

  /** How long the statement takes uncancelled, in microseconds: the fastest of three runs (each commits). */
  private long time(String sql) {
    long best = Long.MAX_VALUE;
    for (int k = 0; k < 3; k++) {
      String before = state();
      long t0 = System.nanoTime();
      try (Result r = db.sql(sql)) {
        r.forEach(row -> { });
      }
      best = Math.min(best, TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - t0));
      assertThat(state()).isNotEqualTo(before);
      db.sql("DROP TABLE IF EXISTS made").close();
    }
    return best;
  }

  /** Every target's version: a commit changes one. */
  private String state() {
    StringBuilder b = new StringBuilder();
    for (String q : List.of("SELECT count(*) FROM \"t$snapshots\"", "SELECT count(*) FROM \"pk$snapshots\"",
        "SELECT count(*) FROM logged", "SELECT count(*) FROM pg_class WHERE relname = 'made'")) {
      try (Result r = db.sql(q)) {
        b.append(r.iterator().next().get(0)).append('/');
      }
    }
    return b.toString();
  }
}
