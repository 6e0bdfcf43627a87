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
 * Debezium batches folded in DuckDB ({@link DebeziumBulk}) against the Java fold, the reference: the
 * same random batches applied to two tables, one by each path, leave the same rows, the same state and
 * report the same outcome, batch after batch. The batches mix what the DuckDB path takes with what it
 * leaves to Java (key changes, truncates, replays within a batch, LWW cells with TTLs and ties, values of
 * the wrong JSON type), so the two paths also meet on each other's state.
 */
class DebeziumBulkTest {
  @TempDir
  Path dir;

  @AfterEach
  void reset() {
    System.clearProperty(DebeziumBulk.MIN_EVENTS_PROPERTY);
  }

  private static final String COLUMNS = "id bigint PRIMARY KEY, name text, amount bigint, score double precision, "
      + "flag boolean, n int";

  @Test
  void randomBatchesLeaveTheSameRowsAndStateAsTheJavaFold() {
    long taken = 0;
    int batches = 0;
    for (long seed = 1; seed <= 6; seed++) {
      Random r = new Random(seed);
      try (Database db = Floe.open(dir.resolve("w" + seed))) {
        for (String t : List.of("bulk", "java")) {
          db.sql("CREATE TABLE " + t + " (" + COLUMNS + (seed % 2 == 0 ? ", note text NOT NULL DEFAULT 'x'" : "")
              + ")").close();
          if (seed % 3 == 0) {
            db.sql("ALTER TABLE " + t + " SET ('floe.cdc.gc-grace-seconds' = '0')").close();
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
          boolean lww = r.nextInt(8) == 0;
          boolean plain = r.nextInt(3) > 0; // only events the DuckDB path takes (but replays)
          for (int i = 0; i < size; i++) {
            lsn += 1 + r.nextInt(3);
            if (lww) {
              batch.add(lwwEnvelope(r, lsn));
            } else {
              batch.add(event(r, lsn, seed % 2 == 0, plain));
            }
          }
          if (!lww && !applied.isEmpty() && r.nextInt(plain ? 8 : 3) == 0) { // a replay of earlier events, once each
            List<String> again = new ArrayList<>(applied.subList(Math.max(0, applied.size() - 80), applied.size()));
            Collections.shuffle(again, r);
            batch.addAll(again.subList(0, r.nextInt(again.size())));
            batch = new ArrayList<>(new java.util.LinkedHashSet<>(batch));
          }
          Collections.shuffle(batch, r);
          long before = DebeziumBulk.TAKEN.get();
          now += r.nextInt(3);
          long[] a;
          long[] b;
          if (lww) {
            a = java(bulk, batch, dev.floe.cdc.ChangeFormat.LWW, now);
            b = java(java, batch, dev.floe.cdc.ChangeFormat.LWW, now);
          } else {
            System.setProperty(DebeziumBulk.MIN_EVENTS_PROPERTY, "1");
            a = bulk(bulk, batch, now);
            b = java(java, batch, dev.floe.cdc.ChangeFormat.DEBEZIUM, now);
          }
          taken += DebeziumBulk.TAKEN.get() - before;
          batches += plain && !lww ? 1 : 0;
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
        assertThat(Rows.of(db, "SELECT count(*) FROM bulk")).isNotEqualTo(List.of("0"));
      }
    }
    assertThat(taken).as("batches DuckDB folded, of " + batches + " of only what it reads").isGreaterThan(batches * 2 / 3);
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

  /** The batch folded in DuckDB (null: it failed); it must be taken unless it holds what only Java reads. */
  private static long[] bulk(ChangeStream s, List<String> batch, long now) {
    try {
      long[] r = s.applyDebezium(batch, null, now);
      return r != null ? r : java(s, batch, dev.floe.cdc.ChangeFormat.DEBEZIUM, now);
    } catch (dev.floe.FloeException e) {
      return null;
    } finally {
      System.clearProperty(DebeziumBulk.MIN_EVENTS_PROPERTY);
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
    String after = "{\"id\": " + id + ", \"name\": " + pick(r, "\"" + NAMES[r.nextInt(NAMES.length)].replace("\\",
        "\\\\").replace("\"", "\\\"") + "\"") + ", \"amount\": " + pick(r, String.valueOf(r.nextLong() >> r.nextInt(64)))
        + ", \"score\": " + pick(r, r.nextBoolean() ? String.valueOf(r.nextInt(100)) : String.valueOf(r.nextDouble()))
        + ", \"flag\": " + pick(r, String.valueOf(r.nextBoolean())) + ", \"n\": " + pick(r, String.valueOf(
        r.nextInt(2000) - 1000)) + (note ? ", \"note\": " + (r.nextInt(40) == 0 ? "null" : "\"nn\"") : "") + "}";
    if (op < 27) {
      after = after.replace("\"amount\": ", "\"amount\": \"1\", \"x\": "); // a string for a bigint, an unknown column
    }
    String opName = op < 30 ? "u" : op < 40 ? "r" : op < 60 ? "c" : "u";
    String before = op < 30 ? "{\"id\": " + (id + 100) + "}" // the key changed
        : r.nextBoolean() ? "null" : "{\"id\": " + id + "}";
    String snapshot = opName.equals("r") ? ", \"snapshot\": " + (r.nextBoolean() ? "\"false\"" : "false") : "";
    return "{\"op\": \"" + opName + "\", \"before\": " + before + ", \"after\": " + after + ", \"source\": {\"lsn\": "
        + lsn + snapshot + "}, \"ts_ms\": 0}";
  }

  private static String pick(Random r, String value) {
    return r.nextInt(6) == 0 ? "null" : value;
  }

  /** An LWW envelope at timestamp {@code ts}: cells with and without TTLs, tombstones, row deletions. */
  private static String lwwEnvelope(Random r, long ts) {
    long id = r.nextInt(60);
    long at = r.nextInt(5) == 0 ? ts - r.nextInt(40) : ts; // some at the timestamp of an earlier event
    return switch (r.nextInt(5)) {
      case 0 -> "{\"key\": {\"id\": " + id + "}, \"ts\": " + at + ", \"delete\": true}";
      case 1 -> "{\"key\": {\"id\": " + id + "}, \"ts\": " + at + ", \"ttl\": " + (r.nextBoolean() ? 1 : 100000)
          + ", \"cells\": {\"amount\": " + r.nextInt(9) + "}}";
      default -> "{\"key\": {\"id\": " + id + "}, \"ts\": " + at + (r.nextBoolean() ? ", \"insert\": true" : "")
          + ", \"cells\": {\"name\": " + (r.nextInt(4) == 0 ? "null" : "\"w" + r.nextInt(3) + "\"") + "}}";
    };
  }
}
