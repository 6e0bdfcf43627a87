package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.S3Server;
import dev.floe.testing.S3ServerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A log publishing to a table on a real S3-compatible server (s3proxy, started here): publish, reads
 * across the published, staged and unsealed tiers, a machine cut off from S3, catching up when it
 * returns, and restoring the log on a fresh warehouse from the published table.
 */
class PublishS3Test {
  @RegisterExtension
  static final S3ServerExtension S3 = new S3ServerExtension();
  @TempDir
  Path dir;

  private static final LocalDateTime T0 = LocalDateTime.of(2026, 1, 1, 0, 0);

  private static Log.Config publishingTo(String path) {
    return new Log.Config(1_000_000, 60_000, 1 << 20).withPublishTo("s3://" + S3Server.BUCKET + "/" + path,
        S3.server().storage());
  }

  /** Appends rows {@code from..to-1}: ts = T0 + i seconds, sym = "s" + i % 7, px = i. */
  private static void append(Log log, int from, int to) {
    List<Object[]> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      rows.add(new Object[] {T0.plusSeconds(i), "s" + (i % 7), (double) i});
    }
    log.extend(rows);
  }

  private static String one(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      for (Row row : r) {
        return row.getString(0);
      }
    }
    return null;
  }

  /** count, count of distinct offsets, sum of px: every row once. */
  private static String census(Database db, String table) {
    try (Result r = db.sql("SELECT count(*), count(DISTINCT _offset), sum(px) FROM " + table)) {
      for (Row row : r) {
        return row.getString(0) + "|" + row.getString(1) + "|" + row.getString(2);
      }
    }
    throw new AssertionError();
  }

  private static String expected(long rows) {
    return rows + "|" + rows + "|" + (rows * (rows - 1) / 2);
  }

  private static List<Record> publishedRows(String path) throws IOException {
    return S3.server().readPublished("s3://" + S3Server.BUCKET + "/" + path);
  }

  /** A new log publishing to {@code path}, with rows 0..rows-1 appended and published. */
  private static Log publishedLog(Database db, String path, int rows) {
    Log log = newLog(db, path);
    append(log, 0, rows);
    log.advance(true);
    return log;
  }

  /** A new log of (ts, sym, px) publishing to {@code path} in the bucket. */
  private static Log newLog(Database db, String path) {
    return db.newLog("ev", "ts timestamp NOT NULL, sym text, px double precision", "ts", publishingTo(path));
  }

  private long stagedFiles(Database db, String table) {
    return Long.parseLong(one(db, "SELECT count(*) FROM \"" + table + "$files\""));
  }

  @Test
  void publishedRowsAreReadOnceFromEveryTierAndByIcebergReaders() throws Exception {
    try (Database db = Floe.open(dir)) {
      Log log = newLog(db, "pub/ev1");
      append(log, 0, 1000);
      assertThat(log.publishedThrough()).isZero();
      assertThat(log.advance(true)).isEqualTo(1000);
      assertThat(log.publishedThrough()).isEqualTo(1000);
      // the staging table let the published files go: the rows are read from the published table
      assertThat(stagedFiles(db, "ev")).isZero();
      assertThat(db.table("ev").properties()).containsEntry("floe.tail.published", "1000");
      assertThat(census(db, "ev")).isEqualTo(expected(1000));

      long published1000 = db.table("ev").snapshots().get(db.table("ev").snapshots().size() - 1).snapshotId();
      append(log, 1000, 1500);
      log.seal(true); // staged, not published
      append(log, 1500, 1700); // unsealed
      assertThat(census(db, "ev")).isEqualTo(expected(1700));
      assertThat(one(db, "SELECT count(*) FROM ev WHERE ts >= TIMESTAMP '2026-01-01 00:25:00'"))
          .isEqualTo(Long.toString(1700 - 1500));
      assertThat(log.columnStatistics("published").rows()).isEqualTo(1000);
      assertThat(log.columnStatistics("published").columns().get("_offset").max()).isEqualTo(999L);
      assertThat(log.columnStatistics("table").rows()).isEqualTo(500);

      assertThat(log.publish()).isEqualTo(1500);
      log.evict();
      assertThat(census(db, "ev")).isEqualTo(expected(1700));
      // time travel reads the published version its staging snapshot named
      assertThat(one(db, "SELECT count(*) FROM ev FOR VERSION AS OF " + published1000)).isEqualTo("1000");
      long sealed1500 = db.table("ev").snapshots().get(db.table("ev").snapshots().size() - 2).snapshotId();
      assertThat(one(db, "SELECT count(*) FROM ev FOR VERSION AS OF " + sealed1500)).isEqualTo("1500");
      try (Result r = log.sql("SELECT count(*) FROM log WHERE _offset BETWEEN 990 AND 1009")) {
        assertThat(r.iterator().next().getLong(0)).isEqualTo(20L);
      }
    }
    List<Record> published = publishedRows("pub/ev1");
    assertThat(published).hasSize(1500);
    assertThat(published.stream().mapToLong(r -> (Long) r.getField("_offset")).distinct().count()).isEqualTo(1500);
    // and after a restart, the tiers are found again
    try (Database db = Floe.open(dir)) {
      assertThat(census(db, "ev")).isEqualTo(expected(1700));
      Log log = db.openLog("ev");
      log.advance(true);
      assertThat(log.publishedThrough()).isEqualTo(1700);
      assertThat(census(db, "ev")).isEqualTo(expected(1700));
    }
    assertThat(publishedRows("pub/ev1")).hasSize(1700);
    // a read-only process reads every tier too, and keeps its local copies out of the warehouse (the
    // writer's copies of the data files are gone, so it must fetch them)
    try (Stream<Path> files = Files.walk(dir.resolve(".floe").resolve("cache"))) {
      for (Path p : files.filter(p -> p.toString().endsWith(".parquet")).toList()) {
        Files.delete(p);
      }
    }
    long copies = filesUnder(dir.resolve(".floe").resolve("cache"));
    try (Database reader = Floe.openReadOnly(dir)) {
      assertThat(census(reader, "ev")).isEqualTo(expected(1700));
    }
    assertThat(filesUnder(dir.resolve(".floe").resolve("cache"))).isEqualTo(copies);
  }

  private static long filesUnder(Path p) throws IOException {
    try (Stream<Path> files = Files.walk(p)) {
      return files.filter(Files::isRegularFile).count();
    }
  }

  @Test
  void aMachineCutOffFromS3KeepsAppendingAndPublishesWhenItReturns() throws Exception {
    try (Database db = Floe.open(dir)) {
      Log log = publishedLog(db, "pub/ev2", 1000);
      assertThat(log.publishedThrough()).isEqualTo(1000);
      // the data files' local copies go (as the cache trims them): old rows are only in S3 now
      try (Stream<Path> files = Files.walk(dir.resolve(".floe").resolve("cache"))) {
        for (Path p : files.filter(p -> p.toString().endsWith(".parquet")).toList()) {
          Files.delete(p);
        }
      }
      S3.server().stop();
      try {
        for (int k = 0; k < 5; k++) {
          append(log, 1000 + k * 200, 1200 + k * 200);
          assertThatThrownBy(() -> log.advance(true)).isInstanceOf(FloeException.class)
              .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("58030"));
        }
        // every local step still ran: sealed, and the log segments the staging table holds are gone
        assertThat(log.sealedThrough()).isEqualTo(2000);
        assertThat(log.bufferedRows()).isZero();
        assertThat(log.segmentsOnDisk()).isLessThanOrEqualTo(1);
        assertThat(log.publishedThrough()).isEqualTo(1000);
        // a recent window reads only local tiers: no request reaches S3
        assertThat(one(db, "SELECT count(*) FROM ev WHERE ts >= TIMESTAMP '2026-01-01 00:20:00'"))
            .isEqualTo("800");
        // what needs a published file it no longer has says so
        assertThatThrownBy(() -> census(db, "ev")).isInstanceOf(FloeException.class)
            .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("58030"));
      } finally {
        S3.server().start();
      }
      log.advance(true);
      assertThat(log.publishedThrough()).isEqualTo(2000);
      assertThat(stagedFiles(db, "ev")).isZero();
      assertThat(census(db, "ev")).isEqualTo(expected(2000));
    }
    assertThat(publishedRows("pub/ev2")).hasSize(2000);
  }

  @Test
  void aLogIsRestoredOnAFreshWarehouseFromItsPublishedTable(@TempDir Path other) throws Exception {
    String location = "s3://" + S3Server.BUCKET + "/pub/ev3";
    try (Database db = Floe.open(dir)) {
      Log log = publishedLog(db, "pub/ev3", 1000);
      append(log, 1000, 1100); // acknowledged, never published: lost with the machine
    }
    try (Database db = Floe.open(other)) {
      Log log = db.restoreLog("ev", location, S3.server().storage(), 1_000_000);
      assertThat(census(db, "ev")).isEqualTo(expected(1000));
      assertThat(log.publishedThrough()).isEqualTo(1000);
      long first = log.append(T0.plusSeconds(5000), "x", 1.0);
      assertThat(first).isEqualTo(1000 + 1_000_000);
      log.advance(true);
      assertThat(log.publishedThrough()).isEqualTo(first + 1);
      assertThat(one(db, "SELECT count(*) FROM ev")).isEqualTo("1001");
    }
    assertThat(publishedRows("pub/ev3")).hasSize(1001);
    // the lost machine comes back: it cannot publish over the restored log's rows
    try (Database db = Floe.open(dir)) {
      Log log = db.openLog("ev");
      assertThatThrownBy(() -> log.advance(true)).isInstanceOf(FloeException.class)
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("55000"));
    }
    assertThat(publishedRows("pub/ev3")).hasSize(1001);
    try (Database db = Floe.open(other.resolve("third"))) {
      assertThatThrownBy(() -> db.restoreLog("ev", "s3://" + S3Server.BUCKET + "/pub/nothing-here", S3.server().storage(), 10))
          .isInstanceOf(FloeException.class)
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("42704"));
    }
  }

  @Test
  void readsSeeEveryRowOnceWhilePublishingAndEvicting() throws Exception {
    try (Database db = Floe.open(dir)) {
      Log log = newLog(db, "pub/ev4");
      AtomicLong acked = new AtomicLong();
      AtomicBoolean done = new AtomicBoolean();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread reader = new Thread(() -> {
        try {
          while (!done.get()) {
            long before = acked.get();
            try (Result r = db.sql("SELECT count(*), count(DISTINCT _offset), min(_offset), max(_offset) FROM ev")) {
              Row row = r.iterator().next();
              long n = row.getLong(0);
              assertThat(row.getLong(1)).isEqualTo(n);
              assertThat(n).isGreaterThanOrEqualTo(before);
              if (n > 0) {
                assertThat(row.getLong(2)).isZero();
                assertThat(row.getLong(3)).isEqualTo(n - 1);
              }
            }
          }
        } catch (Throwable t) {
          failure.set(t);
        }
      });
      // publishes run beside the seals (a publish holds the seal lock only to choose its files)
      Thread publisher = new Thread(() -> {
        try {
          while (!done.get()) {
            log.publish();
            log.evict();
            log.compact(true);
          }
        } catch (Throwable t) {
          failure.set(t);
        }
      });
      reader.start();
      publisher.start();
      try {
        for (int k = 0; k < 30; k++) {
          append(log, k * 100, (k + 1) * 100);
          acked.set((k + 1) * 100L);
          if (k % 2 == 0) {
            log.seal(true);
          }
        }
      } finally {
        done.set(true);
        reader.join();
        publisher.join();
      }
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      log.advance(true);
      assertThat(census(db, "ev")).isEqualTo(expected(3000));
    }
  }

  @Test
  void sweepDeletesWhatNoPublishedSnapshotNamesOnceTheGracePeriodIsOver() throws Exception {
    try (Database db = Floe.open(dir)) {
      Log log = publishedLog(db, "pub/ev6", 500);
      // what a crashed publish leaves: an uploaded file and a metadata file nothing names
      Path strayData = S3.server().objects("pub/ev6/data/crashed-upload.parquet");
      Path strayMetadata = S3.server().objects("pub/ev6/metadata/00042-crashed.metadata.json");
      Files.writeString(strayData, "not committed");
      Files.writeString(strayMetadata, "{}");
      assertThat(log.sweep()).isZero(); // younger than the grace period (10 minutes)
      assertThat(strayData).exists();
      db.sql("ALTER TABLE ev SET ('floe.tail.grace-ms' = '0')").close();
      Thread.sleep(20);
      assertThat(log.sweep()).isGreaterThanOrEqualTo(2);
      assertThat(strayData).doesNotExist();
      assertThat(strayMetadata).doesNotExist();
      assertThat(census(db, "ev")).isEqualTo(expected(500));
    }
    assertThat(publishedRows("pub/ev6")).hasSize(500);
  }

  @Test
  void retiringAPublishingLogPublishesEveryRow() throws Exception {
    try (Database db = Floe.open(dir)) {
      Log log = publishedLog(db, "pub/ev7", 300);
      append(log, 300, 400);
      log.seal(true);
      append(log, 400, 450);
      assertThat(log.retire()).isEqualTo(450);
      assertThat(db.table("ev").properties()).containsEntry("floe.tail", "false")
          .containsEntry("floe.tail.published", "450");
      assertThat(stagedFiles(db, "ev")).isZero();
      assertThat(census(db, "ev")).isEqualTo(expected(450));
    }
    assertThat(publishedRows("pub/ev7")).hasSize(450);
  }

  @Test
  void publishSettingsAndAppendOnlyRowsAreChecked() throws Exception {
    try (Database db = Floe.open(dir)) {
      assertThatThrownBy(() -> db.sql("CREATE TABLE a (x int) WITH (publish_to = 's3://floe/a')").close())
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("22023"));
      assertThatThrownBy(() -> db.sql("CREATE TABLE a (x int) WITH (tail = true, publish_to = '/tmp/a')").close())
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("22023"));
      assertThatThrownBy(() -> db.sql("CREATE TABLE a (x int) WITH (tail = true, publish_to = 's3://floe/a', "
          + "'floe.tail.publish.s3.secret-access-key' = 'x')").close())
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("22023"));
      assertThatThrownBy(() -> new Log.Config(10, 10, 1 << 20).withPublishTo("s3://floe",
          Map.of()))
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("22023"));
      assertThat(one(db, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'a'")).isEqualTo("0");

      Log log = publishedLog(db, "pub/ev5", 10);
      for (String sql : List.of("UPDATE ev SET px = 0", "DELETE FROM ev WHERE px > 1", "TRUNCATE ev",
          "ALTER TABLE ev ADD COLUMN y int", "ALTER TABLE ev SET (publish_to = 's3://floe/other')",
          "ALTER TABLE ev RESET ('floe.tail.publish-to')")) {
        assertThatThrownBy(() -> db.sql(sql).close()).as(sql)
            .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("0A000"));
      }
      // appends are what a published log takes: one row, several, with RETURNING
      db.sql("INSERT INTO ev VALUES (TIMESTAMP '2026-01-01 00:00:00', 'one', 100)").close();
      db.sql("INSERT INTO ev VALUES (TIMESTAMP '2026-01-01 00:00:01', 'a', 1), (TIMESTAMP '2026-01-01 00:00:02', 'b', 2)")
          .close();
      assertThat(one(db, "INSERT INTO ev (sym, ts, px) VALUES ('r', TIMESTAMP '2026-01-01 00:00:03', 3) RETURNING _offset"))
          .isEqualTo("13");
      assertThat(one(db, "SELECT count(*) || '|' || count(DISTINCT _offset) || '|' || sum(px)::bigint FROM ev"))
          .isEqualTo("14|14|" + (45 + 100 + 1 + 2 + 3));
      // sizing can change; credentials were never stored anywhere
      db.sql("ALTER TABLE ev SET ('floe.tail.seal-rows' = '5000')").close();
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path p : files.filter(Files::isRegularFile).toList()) {
          if (!p.toString().endsWith(".parquet")) {
            assertThat(Files.readString(p, StandardCharsets.ISO_8859_1)).as(p.toString())
                .doesNotContain(S3Server.SECRET_KEY);
          }
        }
      }
    }
  }
}
