package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Changes;
import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.testing.Rows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Batches folded in columns and reconciled in DuckDB ({@link ChangeBulk}) against the Java fold, the
 * reference: the same random batches of Debezium events and LWW envelopes applied to two tables, one by
 * each path, leave the same rows, the same state and report the same outcome, batch after batch. The
 * batches mix what the DuckDB path takes with what it leaves to Java (key changes, truncates, replays
 * within a batch, LWW cells with TTLs and ties, values of the wrong JSON type), so the two paths also meet
 * on each other's state.
 */
class ChangeBulkTest {
  @TempDir
  Path dir;

  @AfterEach
  void reset() {
    System.clearProperty(ChangeBulk.MIN_EVENTS_PROPERTY);
    System.clearProperty(ChangeIndex.MODE_PROPERTY);
  }

  private static final String COLUMNS = "id bigint PRIMARY KEY, name text, amount bigint, score double precision, "
      + "flag boolean, n int, code char(4), u uuid, day date, at timestamptz, ts timestamp, price numeric(12,3), "
      + "s smallint, r real, tm time, b bytea, j text";

  @Test
  void randomBatchesLeaveTheSameRowsAndStateAsTheJavaFold() {
    int filled = 0;
    long[] lwwCounts = new long[2];
    long[] debeziumCounts = new long[2];
    for (long seed = 1; seed <= 6; seed++) {
      Random r = new Random(seed);
      try (Database db = Floe.open(dir.resolve("w" + seed))) {
        for (String t : List.of("bulk", "java")) {
          db.sql("CREATE TABLE " + t + " (" + COLUMNS + (seed % 2 == 0 ? ", note text NOT NULL DEFAULT 'x'" : "")
              + ")").close();
          if (seed % 3 == 0) {
            db.sql("ALTER TABLE " + t + " SET ('floe.cdc.gc-grace-seconds' = '0')").close();
          }
          if (seed % 2 == 1) { // rows the streams did not write: older than every change
            db.sql("INSERT INTO " + t + " (id, name, amount, flag) SELECT i, 'row ' || i, i, i % 2 = 0 FROM range(45) AS "
                + "s(i)").close();
          }
        }
        ChangeStream bulk = stream(db.changes("bulk", Changes.Format.DEBEZIUM));
        ChangeStream java = stream(db.changes("java", Changes.Format.DEBEZIUM));
        long now = System.currentTimeMillis() / 1000;
        long lsn = 1000;
        List<String> applied = new ArrayList<>();
        for (int round = 0; round < 25; round++) {
          List<String> batch = new ArrayList<>();
          int size = 1 + r.nextInt(120);
          boolean lww = r.nextInt(4) == 0;
          boolean enveloped = r.nextInt(3) == 0;
          boolean plain = r.nextInt(3) > 0; // only events the DuckDB path takes (but replays)
          for (int i = 0; i < size; i++) {
            lsn += 1 + r.nextInt(3);
            if (lww) {
              batch.add(lwwEnvelope(r, lsn, plain, seed % 2 == 0));
            } else {
              String e = event(r, lsn, seed % 2 == 0, plain);
              // some rounds with the schema, as Kafka Connect's JSON converter writes events
              batch.add(enveloped ? "{\"schema\": {\"type\": \"struct\", \"optional\": false}, \"payload\": " + e + "}" : e);
            }
          }
          if (!lww && !applied.isEmpty() && r.nextInt(plain ? 8 : 3) == 0) {
            batch = withReplay(batch, applied, r);
          }
          Collections.shuffle(batch, r);
          long before = ChangeBulk.TAKEN.get();
          now += r.nextInt(3);
          long[] a;
          long[] b;
          dev.floe.cdc.ChangeFormat format = lww ? dev.floe.cdc.ChangeFormat.LWW : dev.floe.cdc.ChangeFormat.DEBEZIUM;
          System.setProperty(ChangeBulk.MIN_EVENTS_PROPERTY, "1");
          a = bulk(bulk, batch, format, now);
          b = java(java, batch, format, now);
          if (plain && b != null) { // batches of only what the DuckDB path reads, that the reference applies
            long[] counts = lww ? lwwCounts : debeziumCounts;
            counts[0]++;
            counts[1] += ChangeBulk.TAKEN.get() - before;
          }
          if (!lww) {
            applied.addAll(batch);
          }
          String what = "seed " + seed + " round " + round;
          if (a == null || b == null) {
            assertThat(a == null).as(what + ": both paths fail the batch").isEqualTo(b == null);
            continue;
          }
          assertThat(a).as(what).containsExactly(b);
          assertThat(Rows.of(db, "SELECT * FROM bulk ORDER BY id")).as(what)
              .isEqualTo(Rows.of(db, "SELECT * FROM java ORDER BY id"));
          assertThat(state(db, "bulk")).as(what).isEqualTo(state(db, "java"));
        }
        filled += Rows.of(db, "SELECT count(*) FROM bulk").equals(List.of("0")) ? 0 : 1;
      }
    }
    assertThat(filled).as("seeds that end with rows").isGreaterThanOrEqualTo(4);
    // what it does not take: a replay at a stored write's position (a tie with the state), two LWW values
    // of a cell at one timestamp
    assertThat(debeziumCounts[1]).as("Debezium batches DuckDB folded, of " + debeziumCounts[0])
        .isGreaterThan(debeziumCounts[0] * 2 / 3);
    assertThat(lwwCounts[1]).as("LWW batches DuckDB folded, of " + lwwCounts[0]).isGreaterThan(lwwCounts[0] / 2);
  }

  /**
   * The index of a stream's keys ({@link ChangeIndex}) against scans: the same random batches applied to
   * two tables by the DuckDB path, one looking its keys up in the index and one scanning, leave the same
   * rows and state, batch after batch, with the index brought forward over its own batches and built
   * again after writes it did not make (an UPDATE, a DELETE, a compaction, a position recorded alone, a
   * batch folded in Java).
   */
  @Test
  void theIndexLeavesTheSameRowsAndStateAsScans() {
    long uses = ChangeIndex.USES.get();
    long builds = ChangeIndex.BUILDS.get();
    long grown = ChangeIndex.GROWN.get();
    long caughtUp = ChangeIndex.CAUGHT_UP.get();
    for (long seed = 1; seed <= 4; seed++) {
      Random r = new Random(seed * 31);
      try (Database db = Floe.open(dir.resolve("i" + seed))) {
        for (String t : List.of("indexed", "scanned")) {
          db.sql("CREATE TABLE " + t + " (" + COLUMNS + ")").close();
          if (seed % 2 == 0) {
            db.sql("ALTER TABLE " + t + " SET ('floe.cdc.gc-grace-seconds' = '0')").close();
          }
          db.sql("INSERT INTO " + t + " (id, name) SELECT i, 'row ' || i FROM range(40) AS s(i)").close();
        }
        ChangeStream indexed = stream(db.changes("indexed", Changes.Format.DEBEZIUM));
        ChangeStream scanned = stream(db.changes("scanned", Changes.Format.DEBEZIUM));
        long now = System.currentTimeMillis() / 1000;
        long lsn = 1000;
        List<String> applied = new ArrayList<>();
        for (int round = 0; round < 30; round++) {
          String what = "seed " + seed + " round " + round;
          int outside = r.nextInt(12);
          if (outside == 3) { // a position recorded alone: the state side moves, the target's does not
            indexed.advance("advanced " + what);
            scanned.advance("advanced " + what);
          }
          if (outside < 3) { // a write the index did not make: it is built again (a rewrite: followed)
            String sql = switch (outside) {
              case 0 -> "UPDATE %s SET name = 'outside' WHERE id %% 7 = " + r.nextInt(7);
              case 1 -> "DELETE FROM %s WHERE id %% 9 = " + r.nextInt(9);
              default -> "VACUUM FULL %s";
            };
            for (String t : List.of("indexed", "scanned")) {
              db.sql(String.format(sql, t)).close();
            }
          }
          if (outside == 4 || outside == 5) { // the state compacted (the maintainer does), or both tables
            for (String t : List.of("indexed", "scanned")) {
              String state = db.table(t).properties().get(dev.floe.FloeProperties.CDC_STATE);
              if (state != null) {
                db.sql("VACUUM FULL " + state.replace("floe_cdc.", "floe_cdc.\"") + "\"").close();
              }
              if (outside == 5) {
                db.sql("VACUUM FULL " + t).close();
              }
            }
          }
          List<String> batch = new ArrayList<>();
          int size = 1 + r.nextInt(150);
          boolean plain = r.nextInt(5) > 0;
          boolean lww = r.nextInt(5) == 0; // cells, not whole rows: indexed only when forced, as here
          dev.floe.cdc.ChangeFormat format = lww ? dev.floe.cdc.ChangeFormat.LWW : dev.floe.cdc.ChangeFormat.DEBEZIUM;
          for (int i = 0; i < size; i++) {
            lsn += 1 + r.nextInt(3);
            batch.add(lww ? lwwEnvelope(r, lsn, plain, false) : event(r, lsn, false, plain));
          }
          if (!lww && !applied.isEmpty() && r.nextInt(6) == 0) { // keys the batch does not overwrite whole
            batch = withReplay(batch, applied, r);
          }
          Collections.shuffle(batch, r);
          now += r.nextInt(3);
          System.setProperty(ChangeIndex.MODE_PROPERTY, "always");
          System.setProperty(ChangeBulk.MIN_EVENTS_PROPERTY, "1");
          ChangeIndex.lookupRange = 1 + r.nextInt(40); // most batches' keys looked up in ranges on every core
          long[] a = bulk(indexed, batch, format, now);
          ChangeIndex.lookupRange = 50_000;
          System.setProperty(ChangeIndex.MODE_PROPERTY, "never");
          System.setProperty(ChangeBulk.MIN_EVENTS_PROPERTY, "1");
          long[] b = bulk(scanned, batch, format, now);
          System.clearProperty(ChangeIndex.MODE_PROPERTY);
          if (!lww) {
            applied.addAll(batch);
          }
          if (a == null || b == null) {
            assertThat(a == null).as(what + ": both fail the batch").isEqualTo(b == null);
            continue;
          }
          assertThat(a).as(what).containsExactly(b);
          assertThat(Rows.of(db, "SELECT * FROM indexed ORDER BY id")).as(what)
              .isEqualTo(Rows.of(db, "SELECT * FROM scanned ORDER BY id"));
          assertThat(state(db, "indexed")).as(what).isEqualTo(state(db, "scanned"));
        }
      }
    }
    assertThat(ChangeIndex.BUILDS.get() - builds).as("indexes built").isGreaterThan(8);
    assertThat(ChangeIndex.USES.get() - uses).as("batches that found the index current").isGreaterThan(20);
    assertThat(ChangeIndex.GROWN.get() - grown).as("indexes that grew past their first size").isPositive();
    assertThat(ChangeIndex.CAUGHT_UP.get() - caughtUp).as("indexes brought forward over compactions").isGreaterThan(5);
  }

  /** A uuid key and a timestamp key column: the fold's keys meet the state's and the table's as their types. */
  @Test
  void uuidAndTimestampKeysLeaveTheSameRowsAndState() {
    Random r = new Random(5);
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      keys.add(new java.util.UUID(r.nextLong(), r.nextLong()).toString());
    }
    try (Database db = Floe.open(dir)) {
      for (String t : List.of("bulk", "java")) {
        db.sql("CREATE TABLE " + t + " (id uuid, happened timestamptz, v text, PRIMARY KEY (id, happened))").close();
      }
      ChangeStream bulk = stream(db.changes("bulk", Changes.Format.DEBEZIUM));
      ChangeStream java = stream(db.changes("java", Changes.Format.DEBEZIUM));
      long lsn = 0;
      long taken = ChangeBulk.TAKEN.get();
      for (int round = 0; round < 8; round++) {
        List<String> batch = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
          String key = "\"id\": \"" + keys.get(r.nextInt(keys.size())) + "\", \"happened\": \"2024-01-0" + (1 + r.nextInt(2))
              + "T00:00:00" + (r.nextBoolean() ? "Z" : "+00:00") + "\"";
          lsn++;
          batch.add(r.nextInt(4) == 0
              ? "{\"op\": \"d\", \"before\": {" + key + "}, \"after\": null, \"source\": {\"lsn\": " + lsn + "}}"
              : "{\"op\": \"u\", \"before\": null, \"after\": {" + key + ", \"v\": \"v" + lsn + "\"}, \"source\": "
                  + "{\"lsn\": " + lsn + "}}");
        }
        Collections.shuffle(batch, r);
        long now = System.currentTimeMillis() / 1000;
        System.setProperty(ChangeBulk.MIN_EVENTS_PROPERTY, "1");
        assertThat(bulk(bulk, batch, dev.floe.cdc.ChangeFormat.DEBEZIUM, now))
            .containsExactly(java(java, batch, dev.floe.cdc.ChangeFormat.DEBEZIUM, now));
        assertThat(Rows.of(db, "SELECT * FROM bulk ORDER BY id, happened")).as("round " + round)
            .isEqualTo(Rows.of(db, "SELECT * FROM java ORDER BY id, happened"));
        assertThat(state(db, "bulk")).as("round " + round).isEqualTo(state(db, "java"));
      }
      assertThat(ChangeBulk.TAKEN.get() - taken).as("batches DuckDB folded").isEqualTo(8);
      assertThat(Rows.of(db, "SELECT count(*) > 20 FROM bulk")).containsExactly("true");
    }
  }

  /** The batch with a replay of some of the last 80 events applied, each once. */
  private static List<String> withReplay(List<String> batch, List<String> applied, Random r) {
    List<String> again = new ArrayList<>(applied.subList(Math.max(0, applied.size() - 80), applied.size()));
    Collections.shuffle(again, r);
    List<String> out = new ArrayList<>(batch);
    out.addAll(again.subList(0, r.nextInt(again.size())));
    return new ArrayList<>(new java.util.LinkedHashSet<>(out));
  }

  /** The stream behind the API (to give both paths one clock: TTLs and the grace period are judged by it). */
  private static ChangeStream stream(Changes changes) {
    try {
      java.lang.reflect.Field f = Changes.class.getDeclaredField("stream");
      f.setAccessible(true);
      return (ChangeStream) f.get(changes);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  /** The batch folded in DuckDB (null: it failed), or in Java if that path does not take it. */
  private static long[] bulk(ChangeStream s, List<String> batch, dev.floe.cdc.ChangeFormat format, long now) {
    try {
      long[] r = s.applyColumnar(format, batch, null, now);
      return r != null ? r : java(s, batch, format, now);
    } catch (dev.floe.FloeException e) {
      return null;
    } finally {
      System.clearProperty(ChangeBulk.MIN_EVENTS_PROPERTY);
    }
  }

  /** The batch folded in Java (null: it failed). */
  private static long[] java(ChangeStream s, List<String> batch, dev.floe.cdc.ChangeFormat format, long now) {
    try {
      dev.floe.cdc.ChangeFormat.Decoder decoder = format.decoder(s.shape());
      dev.floe.cdc.Fold fold = new dev.floe.cdc.Fold(s.shape());
      batch.forEach(line -> decoder.decode(line).forEach(fold::add));
      return s.apply(fold, null, now);
    } catch (dev.floe.FloeException e) {
      return null;
    }
  }

  /** The state table's rows, but when a dead row died (the second each batch ran at). */
  private static List<String> state(Database db, String table) {
    String state = db.table(table).properties().get("floe.cdc.state");
    if (state == null) {
      return List.of();
    }
    return Rows.of(db, "SELECT * EXCLUDE (dead_since), dead_since IS NULL FROM " + state.replace("floe_cdc.",
        "floe_cdc.\"") + "\" ORDER BY ALL");
  }

  private static final String[] NAMES = {"ann", "bob", "cy", "dee", "émile \"q\"", "", "x\\y"};

  private static String event(Random r, long lsn, boolean note, boolean plain) {
    long id = r.nextInt(60);
    int op = plain ? 2 + r.nextInt(23) + (r.nextBoolean() ? 0 : 28 + r.nextInt(50)) : r.nextInt(100);
    if (r.nextInt(plain ? 400 : 150) == 0) { // not an event: the batch fails both ways
      return r.nextBoolean() ? "[1]" : "{\"before\": null, \"source\": {\"lsn\": " + lsn + "}}"; // no op
    }
    if (op < 2) {
      return "{\"op\": \"t\", \"source\": {\"lsn\": " + lsn + "}}";
    }
    if (op < 4) {
      return "null";
    }
    if (op < 6) {
      return "{\"op\": \"m\", \"source\": {\"lsn\": " + lsn + "}, \"message\": {\"prefix\": \"p\"}}";
    }
    if (op < 25) {
      return "{\"op\": \"d\", \"before\": {\"id\": " + id + "}, \"after\": null, \"source\": {\"lsn\": " + lsn + "}}";
    }
    String after = "{\"id\": " + id + ", \"name\": " + (r.nextInt(8) == 0 ? "\"__debezium_unavailable_value\""
        : pick(r, "\"" + NAMES[r.nextInt(NAMES.length)].replace("\\", "\\\\").replace("\"", "\\\"") + "\""))
        + ", \"amount\": " + pick(r, String.valueOf(r.nextLong() >> r.nextInt(64)))
        + ", \"score\": " + pick(r, r.nextBoolean() ? String.valueOf(r.nextInt(100)) : String.valueOf(r.nextDouble()))
        + ", \"flag\": " + pick(r, String.valueOf(r.nextBoolean())) + ", \"n\": " + pick(r, String.valueOf(
        r.nextInt(2000) - 1000)) + ", \"code\": " + pick(r, new String[] {"\"ab  \"", "\"abcd\"", "\"x\""}[r.nextInt(3)])
        + ", \"u\": " + pick(r, "\"" + new java.util.UUID(r.nextLong(), r.nextLong()) + "\"") + ", \"day\": "
        + pick(r, String.valueOf(r.nextInt(40_000) - 10_000)) + ", \"at\": " + pick(r, "\"" + java.time.Instant
        .ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000) * 1000L) + "\"") + ", \"ts\": " + pick(r,
        "\"2024-0" + (1 + r.nextInt(9)) + "-1" + r.nextInt(10) + " 12:34:5" + r.nextInt(10) + "." + r.nextInt(1000) + "\"") + ", \"price\": "
        + pick(r, r.nextBoolean() ? "\"" + java.math.BigDecimal.valueOf(r.nextInt(2_000_000) - 1_000_000, 3) + "\""
            : String.valueOf(r.nextInt(100_000)))
        + ", \"s\": " + pick(r, String.valueOf(r.nextInt(65_536) - 32_768)) + ", \"r\": " + pick(r,
        String.valueOf(r.nextFloat() * 1000)) + ", \"tm\": " + pick(r, r.nextBoolean() ? String.valueOf(
        r.nextLong(86_400_000_000L)) : "\"1" + r.nextInt(10) + ":0" + r.nextInt(10) + ":30.25\"") + ", \"b\": "
        + pick(r, "\"" + java.util.Base64.getEncoder().encodeToString(new byte[] {(byte) r.nextInt(), 0, -1}) + "\"")
        + ", \"j\": " + pick(r, "\"{\\\"k\\\": " + r.nextInt(9) + "}\"")
        + (note ? ", \"note\": " + (r.nextInt(40) == 0 ? "null" : "\"nn\"") : "") + "}";
    if (op < 27) {
      after = after.replace("\"amount\": ", "\"amount\": \"1\", \"x\": "); // a string for a bigint, an unknown column
    }
    if (r.nextInt(8) == 0) { // a column the image leaves out, as it is
      after = after.replaceFirst(", \"flag\": [a-z]+", "");
    }
    String opName = op < 30 ? "u" : op < 40 ? "r" : op < 60 ? "c" : "u";
    String before = op < 30 ? "{\"id\": " + (r.nextBoolean() ? id + 100 : (id + 1 + r.nextInt(59)) % 60) + "}" // the key changed
        : r.nextBoolean() ? "null" : "{\"id\": " + id + "}";
    // an initial snapshot's reads ("true", "last") rank below every streamed change
    String snapshot = opName.equals("r") ? ", \"snapshot\": " + new String[] {"\"false\"", "false", "\"true\"",
        "\"last\""}[r.nextInt(4)] : "";
    return "{\"op\": \"" + opName + "\", \"before\": " + before + ", \"after\": " + after + ", \"source\": {\"lsn\": "
        + lsn + snapshot + "}, \"ts_ms\": 0}";
  }

  private static String pick(Random r, String value) {
    return r.nextInt(6) == 0 ? "null" : value;
  }

  /** An LWW envelope at timestamp {@code ts}: cells with and without TTLs, tombstones, row deletions. */
  /**
   * An LWW envelope at timestamp {@code ts}: cells with and without TTLs (none if {@code plain}: what the
   * DuckDB path takes), tombstones, row deletions, some at an earlier envelope's timestamp.
   */
  private static String lwwEnvelope(Random r, long ts, boolean plain, boolean note) {
    long id = r.nextInt(60);
    long at = r.nextInt(5) == 0 ? ts - r.nextInt(40) : ts; // some at the timestamp of an earlier event
    return switch (r.nextInt(plain ? 4 : 5)) {
      case 0 -> "{\"key\": {\"id\": " + id + "}, \"ts\": " + at + ", \"delete\": true}";
      case 1 -> "{\"key\": {\"id\": " + id + "}, \"ts\": " + at + ", \"cells\": {\"amount\": " + r.nextInt(9)
          + ", \"flag\": " + (r.nextBoolean() ? "null" : "true") + ", \"score\": " + r.nextInt(3) + ".5, \"u\": "
          + (r.nextBoolean() ? "null" : "\"" + new java.util.UUID(r.nextLong(), r.nextLong()) + "\"") + ", \"day\": \"2020-01-0"
          + (1 + r.nextInt(9)) + "\", \"at\": \"2020-01-01T00:00:0" + r.nextInt(10) + "+01:00\", \"s\": " + (r.nextInt(3) - 1)
          + ", \"r\": " + r.nextInt(3) + ".25, \"tm\": \"00:00:0" + r.nextInt(3) + "\", \"b\": \"AP8=\"}}";
      case 4 -> "{\"key\": {\"id\": " + id + "}, \"ts\": " + at + ", \"ttl\": " + (r.nextBoolean() ? 1 : 100000)
          + ", \"cells\": {\"amount\": " + r.nextInt(9) + "}}";
      default -> "{\"key\": {\"id\": " + id + "}, \"ts\": " + at + (r.nextBoolean() ? ", \"insert\": true" : "")
          + ", \"cells\": {\"name\": " + (r.nextInt(4) == 0 ? "null" : "\"w" + r.nextInt(3) + "\"")
          + (note ? ", \"note\": \"n" + r.nextInt(2) + "\"" : "") + "}}";
    };
  }
}
