package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.IcebergClients;
import java.math.BigDecimal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The durable tail through SQL and the embedded Log API: offsets, reads across tiers, seal, restart. */
class TailTest {
  @TempDir
  Path dir;

  private Database open() {
    return Floe.open(dir);
  }

  private static List<String> rows(Database db, String sql) {
    List<String> out = new ArrayList<>();
    try (Result r = db.sql(sql)) {
      for (Row row : r) {
        List<String> cells = new ArrayList<>();
        for (int i = 0; i < r.columns().size(); i++) {
          cells.add(row.getString(i));
        }
        out.add(String.join("|", cells));
      }
    }
    return out;
  }

  private static long count(Database db, String table) {
    return Long.parseLong(rows(db, "SELECT count(*) FROM " + table).get(0));
  }

  @Test
  void sqlInsertIsReadableAtOnceAndSealedIntoTheTable() throws Exception {
    try (Database db = open()) {
      db.sql("CREATE TABLE ev (ts timestamp NOT NULL, kind text, n int) WITH (tail = true, sort_by = 'ts')").close();
      assertThat(db.table("ev").columns()).extracting(Column::name).containsExactly("ts", "kind", "n", "_offset");
      db.sql("INSERT INTO ev VALUES (TIMESTAMP '2026-01-02 00:00:00', 'b', 2), "
          + "(TIMESTAMP '2026-01-01 00:00:00', 'a', 1)").close();
      db.sql("INSERT INTO ev (ts, n) VALUES (TIMESTAMP '2026-01-03 00:00:00', 3)").close();
      assertThat(rows(db, "SELECT kind, n, _offset FROM ev ORDER BY _offset"))
          .containsExactly("b|2|0", "a|1|1", "null|3|2");
      // nothing is in the table's files yet: no snapshot
      assertThat(db.table("ev").snapshots()).isEmpty();

      Log log = db.openLog("ev");
      assertThat(log.bufferedRows()).isEqualTo(3);
      assertThat(log.seal(true)).isEqualTo(3);
      assertThat(log.bufferedRows()).isZero();
      assertThat(db.table("ev").snapshots()).hasSize(1);
      assertThat(db.table("ev").properties()).containsEntry("floe.tail.through", "3");
      db.sql("INSERT INTO ev VALUES (TIMESTAMP '2026-01-04 00:00:00', 'd', 4)").close();
      // sealed and unsealed rows, each once
      assertThat(rows(db, "SELECT n, _offset FROM ev ORDER BY _offset")).containsExactly("2|0", "1|1", "3|2", "4|3");
      assertThat(rows(db, "SELECT count(*), sum(e1.n) FROM ev e1 JOIN ev e2 USING (_offset)")).containsExactly("4|10");
    }
    // Iceberg's own reader sees the sealed rows, sorted by ts within the file
    List<String> sealed = new ArrayList<>();
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      Table t = catalog.loadTable(TableIdentifier.of("public", "ev"));
      try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
        it.forEach(r -> sealed.add(r.getField("n") + "@" + r.getField("_offset")));
      }
    }
    assertThat(sealed).containsExactly("1@1", "2@0", "3@2");
  }

  @Test
  void acknowledgedRowsSurviveARestartAndOffsetsContinue() {
    try (Database db = open()) {
      Log log = db.newLog("trades", "ts timestamptz NOT NULL, sym text, px numeric(10,2), qty bigint", "ts");
      assertThat(log.append(Instant.parse("2026-03-01T10:00:00Z"), "ABC", new BigDecimal("10.5"), 100L)).isZero();
      assertThat(log.extend(List.of(
          new Object[] {Instant.parse("2026-03-01T10:00:01Z"), "XYZ", new BigDecimal("7"), 5L},
          Map.of("ts", Instant.parse("2026-03-01T10:00:02Z"), "sym", "ABC", "qty", 7L)))).isEqualTo(1);
      assertThat(log.endOffset()).isEqualTo(3);
      log.seal(true);
      log.append(Instant.parse("2026-03-01T10:00:03Z"), "Q", null, 1L);
    }
    try (Database db = open()) {
      Log log = db.openLog("trades");
      assertThat(log.endOffset()).isEqualTo(4);
      assertThat(log.bufferedRows()).isEqualTo(1);
      assertThat(rows(db, "SELECT sym, px, qty, _offset FROM trades ORDER BY _offset"))
          .containsExactly("ABC|10.50|100|0", "XYZ|7.00|5|1", "ABC|null|7|2", "Q|null|1|3");
      assertThat(log.append(Instant.parse("2026-03-01T10:00:04Z"), "R", BigDecimal.ONE, 2L)).isEqualTo(4);
      try (Result r = log.scan(List.of("sym", "_offset"), "qty < 10", 1, 5)) {
        List<String> got = new ArrayList<>();
        r.forEach(row -> got.add(row.getString(0) + "@" + row.getString(1)));
        assertThat(got).containsExactly("XYZ@1", "ABC@2", "Q@3", "R@4");
      }
      try (Result r = log.sql("SELECT count(*) FROM log WHERE sym = 'ABC'")) {
        assertThat(r.iterator().next().getLong(0)).isEqualTo(2);
      }
    }
  }

  @Test
  void badRowsAreRefusedBeforeAnythingIsWritten() {
    try (Database db = open()) {
      Log log = db.newLog("m", "id int NOT NULL, name varchar(3), d date", null);
      assertThatThrownBy(() -> log.append(null, "a", null)).isInstanceOf(FloeException.class)
          .hasFieldOrPropertyWithValue("sqlState", SqlState.NOT_NULL_VIOLATION);
      assertThatThrownBy(() -> log.append("x", "a", null))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.DATATYPE_MISMATCH);
      assertThatThrownBy(() -> log.append(1L << 40, "a", null))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.NUMERIC_VALUE_OUT_OF_RANGE);
      assertThatThrownBy(() -> log.append(1, "abcd", null))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.STRING_DATA_RIGHT_TRUNCATION);
      assertThatThrownBy(() -> log.append(1, "a"))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.INVALID_PARAMETER_VALUE);
      assertThatThrownBy(() -> log.append(Map.of("id", 1, "nope", 2)))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.UNDEFINED_COLUMN);
      assertThatThrownBy(() -> log.extend(List.of(new Object[] {1, "a", null}, new Object[] {2, "b", "2026"})))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.DATATYPE_MISMATCH);
      assertThatThrownBy(() -> log.validateRow(new Object[] {null, null, null}))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.NOT_NULL_VIOLATION);
      log.validateRow(new Object[] {1, "abc", LocalDate.of(2026, 1, 1)});
      assertThat(log.endOffset()).isZero();
      assertThat(count(db, "m")).isZero();
      assertThatThrownBy(() -> db.sql("INSERT INTO m VALUES (NULL, 'a', NULL)").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.NOT_NULL_VIOLATION);
      assertThatThrownBy(() -> db.sql("INSERT INTO m (id, _offset) VALUES (1, 5)").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.GENERATED_ALWAYS);
      assertThat(log.endOffset()).isZero();
      assertThat(log.append(1, "abc", LocalDate.of(2026, 1, 1))).isZero();
    }
  }

  /**
   * A one-row INSERT of constants into a tail without a key is decided in the JVM: it gives what the
   * general path (the same rows inserted two at a time) gives, refuses what it refuses, and in a block
   * is queued until COMMIT like any other.
   */
  @Test
  void oneRowInsertsOfConstantsGiveWhatTheGeneralPathGives() {
    try (Database db = open(); Session s = db.connect()) {
      for (String t : List.of("one", "two")) {
        db.sql("CREATE TABLE " + t + " (id bigint NOT NULL, small smallint, name varchar(4), note text, n int) "
            + "WITH (tail = true)").close();
      }
      String[] values = {"(1, 2, 'ab', 'x', 3)", "(2, NULL, NULL, NULL, NULL)", "(3, -32768, 'abcd', 'é''s', -7)",
          "(4, 7, 'z', '', 2147483647)"};
      for (String v : values) {
        db.sql("INSERT INTO one VALUES " + v).close();
      }
      db.sql("INSERT INTO one (note, id) VALUES ('named', 5)").close();
      db.sql("INSERT INTO two VALUES " + values[0] + ", " + values[1]).close();
      db.sql("INSERT INTO two VALUES " + values[2] + ", " + values[3]).close();
      db.sql("INSERT INTO two (note, id) SELECT 'named', 5").close();
      String cols = "SELECT id, small, name, note, n FROM ";
      assertThat(rows(db, cols + "one ORDER BY id")).isEqualTo(rows(db, cols + "two ORDER BY id")).hasSize(5);
      assertThat(rows(db, "SELECT _offset FROM one ORDER BY id")).containsExactly("0", "1", "2", "3", "4");

      for (String bad : List.of("(NULL, 1, 'a', 'b', 1)", "(6, 32768, 'a', 'b', 1)", "(6, 1, 'abcde', 'b', 1)",
          "(6, 1, 'a', 'b', 2147483648)", "('x', 1, 'a', 'b', 1)", "(6, 1, 2, 3, 4, 5)")) {
        String sqlState = null;
        try {
          db.sql("INSERT INTO two VALUES " + bad).close();
        } catch (FloeException e) {
          sqlState = e.sqlState();
        }
        assertThat(sqlState).as(bad).isNotNull();
        String general = sqlState;
        assertThatThrownBy(() -> db.sql("INSERT INTO one VALUES " + bad).close()).as(bad)
            .hasFieldOrPropertyWithValue("sqlState", general);
      }
      assertThatThrownBy(() -> db.sql("INSERT INTO one (id, _offset) VALUES (6, 9)").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.GENERATED_ALWAYS);
      assertThat(count(db, "one")).isEqualTo(5);

      s.sql("BEGIN").close();
      s.sql("INSERT INTO one VALUES (6, 1, 'q', 'r', 1)").close();
      assertThat(count(db, "one")).isEqualTo(5); // queued: others see it at COMMIT
      s.sql("COMMIT").close();
      s.sql("BEGIN").close();
      s.sql("INSERT INTO one VALUES (7, 1, 'q', 'r', 1)").close();
      s.sql("ROLLBACK").close();
      assertThat(rows(db, "SELECT id FROM one WHERE id > 5")).containsExactly("6");
    }
  }

  @Test
  void rowLevelStatementsSealFirstAndSeeEveryRow() {
    try (Database db = open()) {
      Log log = db.newLog("r", "id int, v text", "id");
      for (int i = 0; i < 10; i++) {
        log.append(i, "v" + i);
      }
      db.sql("UPDATE r SET v = 'x' WHERE id % 2 = 0").close();
      db.sql("DELETE FROM r WHERE id > 7").close();
      assertThat(log.bufferedRows()).isZero();
      log.append(20, "new");
      assertThat(rows(db, "SELECT id, v, _offset FROM r ORDER BY _offset")).containsExactly("0|x|0", "1|v1|1",
          "2|x|2", "3|v3|3", "4|x|4", "5|v5|5", "6|x|6", "7|v7|7", "20|new|10");
      assertThatThrownBy(() -> {
        try (Transaction t = db.begin()) {
          t.sql("UPDATE r SET v = 'y' WHERE id = 1").close();
        }
      }).hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);
    }
  }

  /**
   * Queries running while appends, seals and evictions go on never miss or double a row: each sees a
   * dense prefix of the offsets, at least every row acknowledged before it started.
   */
  @Test
  void readsSeeEveryRowOnceWhileTiersMove() throws Exception {
    try (Database db = open()) {
      Log log = db.newLog("x", "v bigint NOT NULL", "v", new Log.Config(500, 5, 8 << 10));
      java.util.concurrent.atomic.AtomicLong acked = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      java.util.concurrent.ConcurrentLinkedQueue<Throwable> errors = new java.util.concurrent.ConcurrentLinkedQueue<>();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        threads.add(new Thread(() -> {
          try {
            while (!stop.get()) {
              if (java.util.concurrent.ThreadLocalRandom.current().nextBoolean()) {
                long o = log.append(7L);
                acked.accumulateAndGet(o + 1, Math::max);
              } else {
                List<Object[]> rows = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                  rows.add(new Object[] {7L});
                }
                long o = log.extend(rows);
                acked.accumulateAndGet(o + 50, Math::max);
              }
            }
          } catch (Throwable e) {
            errors.add(e);
          }
        }));
      }
      threads.add(new Thread(() -> {
        try {
          while (!stop.get()) {
            log.advance(java.util.concurrent.ThreadLocalRandom.current().nextInt(3) == 0);
            Thread.sleep(3);
          }
        } catch (Throwable e) {
          errors.add(e);
        }
      }));
      threads.forEach(Thread::start);
      int queries = 0;
      long deadline = System.nanoTime() + 4_000_000_000L;
      while (System.nanoTime() < deadline && errors.isEmpty()) {
        long before = acked.get();
        List<String> r = rows(db, "SELECT count(*), count(DISTINCT _offset), coalesce(max(_offset), -1), sum(v) FROM x");
        long after = acked.get();
        String[] f = r.get(0).split("\\|");
        long count = Long.parseLong(f[0]);
        assertThat(Long.parseLong(f[1])).as("distinct offsets").isEqualTo(count);
        assertThat(Long.parseLong(f[2])).as("offsets are a dense prefix").isEqualTo(count - 1);
        assertThat(count).isBetween(before, after + 100);
        queries++;
      }
      stop.set(true);
      for (Thread t : threads) {
        t.join();
      }
      assertThat(errors).isEmpty();
      assertThat(queries).isGreaterThan(20);
      assertThat(db.table("x").snapshots().size()).as("seals happened").isGreaterThan(3);
      log.advance(true);
      assertThat(rows(db, "SELECT count(*) FROM x")).containsExactly(Long.toString(log.endOffset()));
    }
  }

  @Test
  void theAdvancerSealsByAgeAndEverythingWhenClosed() throws Exception {
    try (Database db = open()) {
      Log log = db.newLog("adv", "v int", null, new Log.Config(1_000_000, 100, 1 << 20));
      AutoCloseable advancer = db.startTailAdvancer(java.time.Duration.ofMillis(20));
      log.append(1);
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (log.bufferedRows() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(log.bufferedRows()).as("sealed once the row was 100 ms old").isZero();
      log.append(2);
      advancer.close();
      assertThat(log.bufferedRows()).as("sealed when the advancer stopped").isZero();
      assertThat(rows(db, "SELECT v FROM adv ORDER BY v")).containsExactly("1", "2");
    }
  }

  @Test
  void compactionMergesSmallSealedFilesAndKeepsEveryRow() throws Exception {
    try (Database db = open()) {
      Log log = db.newLog("c", "k int, v text", "k");
      db.sql("ALTER TABLE c SET ('write.target-file-size-bytes' = '4096')").close();
      java.util.Random random = new java.util.Random(3);
      for (int seal = 0; seal < 12; seal++) {
        List<Object[]> rows = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          rows.add(new Object[] {random.nextInt(1000), "v" + seal});
        }
        log.extend(rows);
        log.seal(true);
      }
      db.sql("DELETE FROM c WHERE v = 'v0'").close(); // a file with deletes is left alone
      List<String> before = rows(db, "SELECT k, v, _offset FROM c ORDER BY _offset");
      assertThat(count(db, "\"c$files\"")).isEqualTo(11);
      assertThat(log.compact(false)).isEqualTo(11);
      long files = count(db, "\"c$files\"");
      assertThat(files).isBetween(1L, 5L);
      assertThat(rows(db, "SELECT k, v, _offset FROM c ORDER BY _offset")).isEqualTo(before);
      // each new file is sorted by k
      try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
        Table t = catalog.loadTable(TableIdentifier.of("public", "c"));
        for (org.apache.iceberg.FileScanTask task : t.newScan().planFiles()) {
          List<Integer> keys = new ArrayList<>();
          try (CloseableIterable<Record> it = org.apache.iceberg.parquet.Parquet.read(t.io().newInputFile(
              task.file().location())).project(t.schema()).createReaderFunc(
              s -> org.apache.iceberg.data.parquet.GenericParquetReaders.buildReader(t.schema(), s)).build()) {
            it.forEach(r -> keys.add((Integer) r.getField("k")));
          }
          assertThat(keys).isSorted();
        }
      }
      assertThat(log.compact(false)).as("nothing left to merge").isZero();
    }
  }

  @Test
  void tierBoundsSkipTheMemtableAndAreReported() {
    try (Database db = open()) {
      Log log = db.newLog("w", "ts timestamptz NOT NULL, n int", "ts");
      Instant t0 = Instant.parse("2026-05-01T00:00:00Z");
      for (int i = 0; i < 10; i++) {
        log.append(t0.plusSeconds(i), i);
      }
      log.seal(true);
      for (int i = 10; i < 15; i++) {
        log.append(t0.plusSeconds(i), i);
      }
      Log.TierStatistics mem = log.columnStatistics("memtable");
      assertThat(mem.rows()).isEqualTo(5);
      assertThat(mem.columns().get("ts").min()).isEqualTo(t0.plusSeconds(10));
      assertThat(mem.columns().get("ts").max()).isEqualTo(t0.plusSeconds(14));
      assertThat(mem.columns().get("_offset").min()).isEqualTo(10L);
      Log.TierStatistics table = log.columnStatistics("table");
      assertThat(table.rows()).isEqualTo(10);
      assertThat(table.columns().get("n").max()).isEqualTo(9);
      assertThatThrownBy(() -> log.columnStatistics("s3"))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.INVALID_PARAMETER_VALUE);

      String old = "ts < TIMESTAMPTZ '2026-05-01 00:00:05+00'";
      String recent = "ts >= TIMESTAMPTZ '2026-05-01 00:00:12+00'";
      assertThat(rows(db, "SELECT count(*) FROM w WHERE " + old)).containsExactly("5");
      assertThat(rows(db, "SELECT count(*) FROM w WHERE " + recent)).containsExactly("3");
      assertThat(String.join("\n", rows(db, "EXPLAIN SELECT n FROM w WHERE " + old)))
          .as("the memtable cannot hold a match").doesNotContain("__floe_tail_");
      String plan = String.join("\n", rows(db, "EXPLAIN SELECT n FROM w WHERE " + recent));
      assertThat(plan).as("the memtable holds the matches").contains("__floe_tail_");
      assertThat(plan).as("no sealed file can").doesNotContain("read_parquet").doesNotContain("READ_PARQUET");
    }
  }

  /** Another process (here: a read-only Database on the same warehouse) reads the unsealed rows too. */
  @Test
  void aReadOnlyReaderBesideTheWriterSeesEveryRowOnce() {
    try (Database writer = open()) {
      Log log = writer.newLog("ro", "v int NOT NULL", null, new Log.Config(1_000_000, 60_000, 4096));
      log.append(1);
      log.append(2);
      try (Database reader = Floe.openReadOnly(dir)) {
        assertThat(rows(reader, "SELECT v, _offset FROM ro ORDER BY v")).containsExactly("1|0", "2|1");
        log.append(3);
        assertThat(rows(reader, "SELECT v FROM ro ORDER BY v")).containsExactly("1", "2", "3");
        log.seal(true);
        log.append(4);
        assertThat(rows(reader, "SELECT v FROM ro ORDER BY v")).containsExactly("1", "2", "3", "4");
        Log followed = reader.openLog("ro");
        assertThat(followed.endOffset()).isEqualTo(4);
        assertThatThrownBy(() -> followed.append(5))
            .hasFieldOrPropertyWithValue("sqlState", SqlState.READ_ONLY_SQL_TRANSACTION);
        // many small segments sealed and evicted between the reader's looks
        for (int round = 0; round < 30; round++) {
          List<Object[]> batch = new ArrayList<>();
          for (int i = 0; i < 40; i++) {
            batch.add(new Object[] {round * 100 + i});
          }
          log.extend(batch);
          if (round % 3 == 0) {
            log.advance(true);
          }
          if (round % 2 == 0) {
            String[] f = rows(reader, "SELECT count(*), count(DISTINCT _offset), max(_offset) FROM ro").get(0)
                .split("\\|");
            assertThat(f[0]).isEqualTo(f[1]);
            assertThat(Long.parseLong(f[2])).isEqualTo(Long.parseLong(f[0]) - 1);
            assertThat(Long.parseLong(f[0])).isEqualTo(log.endOffset());
          }
        }
        assertThat(log.segmentsOnDisk()).isLessThan(20);
      }
    }
  }

  @Test
  void aRetiredLogsSuccessorContinuesItsOffsets() throws Exception {
    try (Database db = open()) {
      Log old = db.newLog("gen1", "v int", null);
      old.extend(List.of(new Object[] {1}, new Object[] {2}, new Object[] {3}));
      long end = old.retire();
      assertThat(end).isEqualTo(3);
      assertThat(db.table("gen1").properties()).containsEntry("floe.tail", "false")
          .containsEntry("floe.tail.retired-at", "3");
      assertThatThrownBy(() -> old.append(4))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE);
      assertThat(rows(db, "SELECT v, _offset FROM gen1 ORDER BY v")).containsExactly("1|0", "2|1", "3|2");
      try (Stream<Path> logs = Files.list(dir.resolve(".floe").resolve("tail"))) {
        assertThat(logs.count()).as("the retired log's files are gone").isZero();
      }
      Log next = db.newLog("gen2", "v int", null, Log.Config.DEFAULT.withStartOffset(end));
      assertThat(next.append(4)).isEqualTo(3);
    }
    try (Database db = open()) {
      assertThat(db.openLog("gen2").append(5)).isEqualTo(4);
    }
  }

  /**
   * The machine that wrote a log is lost with rows it acknowledged but never sealed; another warehouse
   * restores the log from the table: the sealed rows are there, and new offsets start past a window.
   */
  @Test
  void aLogIsRestoredElsewhereFromItsTable() throws Exception {
    Path lost = dir.resolve("lost");
    String metadata;
    try (Database db = Floe.open(lost)) {
      Log log = db.newLog("events", "v int", null);
      log.extend(List.of(new Object[] {1}, new Object[] {2}));
      log.seal(true);
      log.append(3); // acknowledged, never sealed: lost with the machine
      metadata = currentMetadata(lost, "events");
    }
    try (Database db = Floe.open(dir.resolve("new"))) {
      Log log = db.restoreLog("events", metadata, 1000);
      assertThat(rows(db, "SELECT v, _offset FROM events ORDER BY v")).containsExactly("1|0", "2|1");
      assertThat(log.endOffset()).isEqualTo(1002);
      assertThat(log.append(4)).isEqualTo(1002);
      log.seal(true);
      assertThat(rows(db, "SELECT v, _offset FROM events ORDER BY v")).containsExactly("1|0", "2|1", "4|1002");
      assertThatThrownBy(() -> db.restoreLog("events", metadata))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.DUPLICATE_TABLE);
      db.sql("CREATE TABLE plain (x int)").close();
      String plain = currentMetadata(dir.resolve("new"), "plain");
      db.sql("DROP TABLE plain").close();
      assertThatThrownBy(() -> db.restoreLog("plain", plain))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.INVALID_TABLE_DEFINITION);
      assertThatThrownBy(() -> db.openLog("plain")).hasFieldOrPropertyWithValue("sqlState", SqlState.UNDEFINED_TABLE);
    }
  }

  private static String currentMetadata(Path warehouse, String table) {
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(warehouse)) {
      return ((org.apache.iceberg.HasTableOperations) catalog.loadTable(TableIdentifier.of("public", table)))
          .operations().current().metadataFileLocation();
    }
  }

  @Test
  void ingestWritesArrowBatchesStraightToParquetWithTheNextOffsets() throws Exception {
    try (Database db = open()) {
      Log log = db.newLog("ing", "k bigint NOT NULL, s text", "k");
      log.append(-1L, "before");
      try (Result source = db.sql("SELECT range AS k, 'r' || range AS s FROM range(50000) ORDER BY random()");
          org.apache.arrow.vector.ipc.ArrowReader batches = source.arrow()) {
        assertThat(log.ingest(batches)).isEqualTo(1);
      }
      assertThat(log.append(-2L, "after")).isEqualTo(50_001);
      assertThat(log.bufferedRows()).isEqualTo(1);
      assertThat(rows(db, "SELECT count(*), count(DISTINCT _offset), min(_offset), max(_offset), sum(k) FROM ing"))
          .containsExactly("50002|50002|0|50001|1249974997");
      assertThat(rows(db, "SELECT s FROM ing WHERE _offset IN (0, 50001) ORDER BY _offset"))
          .containsExactly("before", "after");
      // checked as an INSERT is: nothing is written when a value does not fit
      try (Result bad = db.sql("SELECT CAST(NULL AS BIGINT) AS k");
          org.apache.arrow.vector.ipc.ArrowReader batches = bad.arrow()) {
        assertThatThrownBy(() -> log.ingest(batches))
            .hasFieldOrPropertyWithValue("sqlState", SqlState.NOT_NULL_VIOLATION);
      }
      try (Result bad = db.sql("SELECT 1 AS nope");
          org.apache.arrow.vector.ipc.ArrowReader batches = bad.arrow()) {
        assertThatThrownBy(() -> log.ingest(batches)).hasFieldOrPropertyWithValue("sqlState", SqlState.UNDEFINED_COLUMN);
      }
      assertThat(log.append(-3L, "still")).isEqualTo(50_002);
    }
    try (Database db = open()) {
      assertThat(db.openLog("ing").endOffset()).isEqualTo(50_003);
      assertThat(rows(db, "SELECT count(*) FROM ing")).containsExactly("50003");
    }
  }

  @Test
  void sweepNeverDeletesAFileFloeDidNotWrite() throws Exception {
    Path outside = dir.resolveSibling(dir.getFileName() + "-outside");
    try (Database db = open()) {
      db.sql("CREATE TABLE victim (v int)").close();
      db.sql("INSERT INTO victim VALUES (1), (2)").close();
      Log log = db.newLog("sw", "v int", "v");
      log.append(1);
      log.seal(true);
      db.sql("ALTER TABLE sw SET ('floe.tail.grace-ms' = '0')").close();
      String victim = db.table("victim").location();
      // Another engine moves the log's table onto a directory that is not its own: another table's, one
      // outside the warehouse, one in the warehouse holding other files. Sweep takes nothing from any.
      Files.createDirectories(outside.resolve("data"));
      Files.writeString(outside.resolve("data").resolve("notes.txt"), "mine");
      Files.write(outside.resolve("data").resolve("old.parquet"), new byte[] {1});
      Path mixed = dir.resolve("public").resolve("mixed");
      Files.createDirectories(mixed.resolve("data"));
      Files.writeString(mixed.resolve("data").resolve("readme.txt"), "mine");
      Files.write(mixed.resolve("data").resolve("old.parquet"), new byte[] {1});
      for (Path p : List.of(outside.resolve("data").resolve("old.parquet"), mixed.resolve("data").resolve("old.parquet"))) {
        Files.setLastModifiedTime(p, java.nio.file.attribute.FileTime.fromMillis(0));
      }
      for (String location : List.of(victim, outside.toString(), mixed.toString())) {
        Set<Path> before = allFiles(Path.of(location));
        try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
          catalog.loadTable(TableIdentifier.of("public", "sw")).updateLocation().setLocation(location).commit();
        }
        Thread.sleep(5);
        assertThat(log.sweep()).as(location).isZero();
        assertThat(allFiles(Path.of(location))).as(location).containsAll(before);
      }
      assertThat(rows(db, "SELECT v FROM victim ORDER BY v")).containsExactly("1", "2");
    } finally {
      dev.floe.write.Scratch.deleteTree(outside);
    }
  }

  private static Set<Path> allFiles(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      return s.filter(Files::isRegularFile).collect(Collectors.toSet());
    }
  }

  @Test
  void reclaimAndSweepDeleteOnlyWhatNoReaderCanStillNeed() throws Exception {
    try (Database db = open()) {
      Log log = db.newLog("rs", "v int", "v");
      for (int i = 0; i < 5; i++) {
        log.append(i);
        log.seal(true);
      }
      assertThat(log.compact(true)).isEqualTo(5);
      assertThat(log.reclaim()).as("within the grace period (10 minutes by default)").isZero();
      Path data = dir.resolve("public").resolve("rs").resolve("data");
      Path orphan = data.resolve("crashed-seal.parquet");
      Files.write(orphan, new byte[] {1, 2, 3});
      Files.setLastModifiedTime(orphan, java.nio.file.attribute.FileTime.fromMillis(0));
      assertThat(log.sweep()).as("only the old orphan").isEqualTo(1);
      assertThat(orphan).doesNotExist();

      db.sql("ALTER TABLE rs SET ('floe.tail.grace-ms' = '0')").close();
      Thread.sleep(5);
      int before = dataFiles(data);
      assertThat(before).isEqualTo(6); // five sealed files and the compacted one
      assertThat(log.reclaim()).isGreaterThanOrEqualTo(5);
      assertThat(dataFiles(data)).isEqualTo(1);
      assertThat(db.table("rs").snapshots()).hasSize(1);
      assertThat(rows(db, "SELECT v FROM rs ORDER BY v")).containsExactly("0", "1", "2", "3", "4");
      assertThat(log.sweep()).as("nothing unreferenced is left").isZero();
      try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
        Table t = catalog.loadTable(TableIdentifier.of("public", "rs"));
        try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
          assertThat(it).hasSize(5);
        }
      }
    }
  }

  private static int dataFiles(Path data) throws java.io.IOException {
    try (Stream<Path> s = Files.walk(data)) {
      return (int) s.filter(p -> p.toString().endsWith(".parquet")).count();
    }
  }

  @Test
  void aTransactionBlockReadsTheSameUnsealedRowsThroughout() {
    try (Database db = open()) {
      Log log = db.newLog("si", "v int", null);
      log.append(1);
      try (Transaction t = db.begin()) {
        try (Result r = t.sql("SELECT count(*) FROM si")) {
          assertThat(r.iterator().next().getLong(0)).isEqualTo(1);
        }
        log.append(2);
        log.append(3);
        try (Result r = t.sql("SELECT count(*), sum(v) FROM si")) {
          Row row = r.iterator().next();
          assertThat(row.getLong(0)).as("the block's snapshot").isEqualTo(1);
        }
        assertThat(rows(db, "SELECT count(*) FROM si")).containsExactly("3");
        t.commit();
      }
      assertThat(rows(db, "SELECT count(*) FROM si")).containsExactly("3");
    }
  }

  @Test
  void droppingTheTableDeletesItsLog() throws Exception {
    try (Database db = open()) {
      db.newLog("gone", "id int", null).append(1);
      Path tails = dir.resolve(".floe").resolve("tail");
      try (Stream<Path> s = Files.list(tails)) {
        assertThat(s.count()).isEqualTo(1);
      }
      db.sql("DROP TABLE gone").close();
      try (Stream<Path> s = Files.list(tails)) {
        assertThat(s.count()).isZero();
      }
    }
  }

  @Test
  void alterTableKeepsTheLogRowsAndSetTailAddsOne() {
    try (Database db = open()) {
      Log log = db.newLog("a", "id int", null);
      log.append(1);
      db.sql("ALTER TABLE a ADD COLUMN note text").close();
      assertThat(log.append(2, "two")).isEqualTo(1);
      db.sql("ALTER TABLE a RENAME TO b").close();
      db.sql("INSERT INTO b VALUES (3, 'three')").close();
      assertThat(rows(db, "SELECT id, note, _offset FROM b ORDER BY _offset"))
          .containsExactly("1|null|0", "2|two|1", "3|three|2");
      assertThatThrownBy(() -> db.sql("ALTER TABLE b DROP COLUMN _offset").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);

      db.sql("CREATE TABLE old (x int)").close();
      db.sql("INSERT INTO old VALUES (10)").close();
      db.sql("ALTER TABLE old SET (tail = true)").close();
      db.sql("INSERT INTO old VALUES (11)").close();
      assertThat(rows(db, "SELECT x, _offset FROM old ORDER BY x")).containsExactly("10|null", "11|0");
      db.sql("ALTER TABLE old SET (tail = false)").close();
      assertThat(rows(db, "SELECT x, _offset FROM old ORDER BY x")).containsExactly("10|null", "11|0");
    }
  }

  /**
   * In a transaction block, appends are queued and made at COMMIT as one record; ROLLBACK (and ROLLBACK
   * TO SAVEPOINT) drop them; a block that appends cannot also change tables.
   */
  @Test
  void aTransactionBlockAppendsAtCommit() {
    try (Database db = open()) {
      Log log = db.newLog("tb", "v int", null);
      db.sql("CREATE TABLE other (x int)").close();
      try (Session s = db.connect()) {
        s.sql("BEGIN").close();
        s.sql("INSERT INTO tb VALUES (1), (2)").close();
        s.sql("SAVEPOINT a").close();
        s.sql("INSERT INTO tb VALUES (3)").close();
        s.sql("ROLLBACK TO SAVEPOINT a").close();
        try (Result r = s.sql("INSERT INTO tb VALUES (4) RETURNING v, _offset")) {
          Row row = r.iterator().next();
          assertThat(row.getLong(0)).isEqualTo(4);
          assertThat(row.isNull(1)).as("no offset before COMMIT").isTrue();
        }
        assertThat(rows(db, "SELECT count(*) FROM tb")).as("not appended yet").containsExactly("0");
        assertThatThrownBy(() -> s.sql("INSERT INTO other VALUES (1)").close())
            .hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);
        s.sql("ROLLBACK").close();
        assertThat(log.endOffset()).isZero();

        s.sql("BEGIN").close();
        s.sql("INSERT INTO tb VALUES (1), (2)").close();
        s.sql("INSERT INTO tb VALUES (4)").close();
        s.sql("COMMIT").close();
        assertThat(rows(db, "SELECT v, _offset FROM tb ORDER BY v")).containsExactly("1|0", "2|1", "4|2");

        s.sql("BEGIN").close();
        s.sql("INSERT INTO other VALUES (1)").close();
        assertThatThrownBy(() -> s.sql("INSERT INTO tb VALUES (5)").close())
            .hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);
        s.sql("ROLLBACK").close();
      }
      assertThat(log.endOffset()).isEqualTo(3);
    }
  }

  /** INSERT ... RETURNING gives each row's offset (and serial ids, as ORMs ask for them). */
  @Test
  void insertReturningGivesOffsets() {
    try (Database db = open()) {
      db.sql("CREATE TABLE ret (id serial, v text) WITH (tail = true)").close();
      assertThat(rows(db, "INSERT INTO ret (v) VALUES ('a'), ('b') RETURNING id, _offset, upper(v)"))
          .containsExactly("1|0|A", "2|1|B");
      assertThat(rows(db, "INSERT INTO ret AS r (v) VALUES ('c') RETURNING *")).containsExactly("3|c|2");
      // a RETURNING that fails appends nothing
      assertThatThrownBy(() -> db.sql("INSERT INTO ret (v) VALUES ('d') RETURNING 1 / (length(v) - 1)").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.DIVISION_BY_ZERO);
      assertThat(rows(db, "SELECT count(*), max(_offset) FROM ret")).containsExactly("3|2");
      assertThatThrownBy(() -> db.sql("INSERT INTO ret (v) VALUES ('e') ON CONFLICT DO NOTHING").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);
    }
  }

  /** A result still being read keeps the unsealed rows it started with, though a seal drops them meanwhile. */
  @Test
  void aStreamingResultOutlivesTheSealOfItsRows() {
    try (Database db = open()) {
      Log log = db.newLog("stream", "v bigint", null);
      List<Object[]> rows = new ArrayList<>();
      for (long i = 0; i < 200_000; i++) {
        rows.add(new Object[] {i});
      }
      log.extend(rows);
      try (Result r = db.sql("SELECT v FROM stream")) {
        java.util.Iterator<Row> it = r.iterator();
        long n = 0;
        long sum = 0;
        Row first = it.next();
        n++;
        sum += first.getLong(0);
        log.seal(true); // the memtable generation the result reads is dropped
        log.append(-1L);
        log.seal(true);
        while (it.hasNext()) {
          sum += it.next().getLong(0);
          n++;
        }
        assertThat(n).isEqualTo(200_000);
        assertThat(sum).isEqualTo(199_999L * 200_000 / 2);
      }
      assertThat(rows(db, "SELECT count(*) FROM stream")).containsExactly("200001");
    }
  }

  /** An ALTER while a writer appends: the writer goes on (its append retried on the new schema), nothing is lost. */
  @Test
  void appendsGoOnThroughAnAlter() throws Exception {
    try (Database db = open()) {
      Log log = db.newLog("live", "v int", null);
      java.util.concurrent.atomic.AtomicLong acked = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
      Thread writer = new Thread(() -> {
        try {
          for (int i = 0; !stop.get(); i++) {
            log.append(Map.of("v", i));
            acked.incrementAndGet();
          }
        } catch (Throwable e) {
          error.set(e);
        }
      });
      writer.start();
      Thread.sleep(200);
      db.sql("ALTER TABLE live ADD COLUMN note text").close();
      Thread.sleep(200);
      stop.set(true);
      writer.join();
      assertThat(error.get()).isNull();
      assertThat(rows(db, "SELECT count(*), count(DISTINCT v), count(DISTINCT _offset) FROM live"))
          .containsExactly(acked.get() + "|" + acked.get() + "|" + acked.get());
      log.append(Map.of("v", -1, "note", "after"));
      assertThat(rows(db, "SELECT note FROM live WHERE v = -1")).containsExactly("after");
    }
  }

  @Test
  void tableOptionsAreChecked() {
    try (Database db = open()) {
      assertThatThrownBy(() -> db.sql("CREATE TABLE a (_offset int) WITH (tail = true)").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.DUPLICATE_COLUMN);
      assertThatThrownBy(() -> db.sql("CREATE TABLE a (l int[]) WITH (tail = true)").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);
      assertThatThrownBy(() -> db.sql("CREATE TABLE a (x int) WITH (tail = maybe)").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.INVALID_PARAMETER_VALUE);
      assertThatThrownBy(() -> db.sql("CREATE TABLE a WITH (tail = true) AS SELECT 1 AS x").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);
      db.sql("CREATE TABLE plain (x int)").close();
      assertThatThrownBy(() -> db.openLog("plain"))
          .hasFieldOrPropertyWithValue("sqlState", SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE);
      assertThatThrownBy(() -> db.openLog("missing")).hasFieldOrPropertyWithValue("sqlState", SqlState.UNDEFINED_TABLE);
    }
  }
}
