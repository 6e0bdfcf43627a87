package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.LwwModel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random change streams with duplicates, reordering, ties, TTLs, row, partition and range deletions and
 * primary-key changes, applied in random batches across restarts (some to a table that already holds rows),
 * against a model written differently:
 * for LWW, {@link LwwModel} (each cell's winner computed once over the whole stream); for Debezium, a map
 * per key changed in source order.
 */
class ChangesDifferentialTest {
  @TempDir
  Path dir;

  static final long NOW = System.currentTimeMillis() / 1000;

  @Test
  void lwwStreamsInAnyOrderAndBatchesReachTheModel() {
    for (int round = 0; round < 6; round++) {
      long seed = 1000 + round;
      Random r = new Random(seed);
      List<LwwModel.Env> envelopes = new ArrayList<>();
      for (int i = 0; i < (round % 2 == 0 ? 150 : 45); i++) {
        LwwModel.Env e = LwwModel.randomEnvelope(r, NOW);
        // odd rounds start from rows in the table, with fewer envelopes and no partition or range deletion
        // (which would delete most of those rows early): many of them meet writes of some of their cells only
        if (round % 2 == 0 || !(e.delete() && e.c() == null)) {
          envelopes.add(e);
        }
      }
      List<String> stream = new ArrayList<>();
      envelopes.forEach(e -> stream.add(e.json()));
      for (int i = 0; i < 30; i++) {
        stream.add(stream.get(r.nextInt(stream.size()))); // duplicates
      }
      Collections.shuffle(stream, r);
      Path warehouse = dir.resolve("lww" + round);
      Database db = Floe.open(warehouse);
      try {
        db.sql("CREATE TABLE t (p int, c int, a text, b bigint, PRIMARY KEY (p, c))").close();
        // odd rounds: rows in the table before the stream, which count as written before every change
        List<LwwModel.Env> model = new ArrayList<>(envelopes);
        for (int p = 0; p < 3 && round % 2 == 1; p++) {
          for (int c = 0; c < 6; c++) {
            if (r.nextInt(3) > 0) {
              String a = "t" + p + c;
              long b = r.nextInt(100) - 50;
              db.sql("INSERT INTO t VALUES (" + p + ", " + c + ", '" + a + "', " + b + ")").close();
              Map<String, Object> cells = new java.util.LinkedHashMap<>();
              cells.put("a", a);
              cells.put("b", b);
              model.add(new LwwModel.Env(p, c, Long.MIN_VALUE + 2, true, null, cells, null, null, false));
            }
          }
        }
        int at = 0;
        int markAt = r.nextInt(stream.size());
        String mark = null; // a version of the table midway, rolled back to at the end
        while (at < stream.size()) {
          int n = Math.min(stream.size() - at, 1 + r.nextInt(40));
          db.changes("t", Changes.Format.LWW).apply(stream.subList(at, at + n));
          at += n;
          if (mark == null && at >= markAt) {
            List<String> v = dev.floe.testing.Rows.of(db, "SELECT snapshot_id FROM \"t$snapshots\" ORDER BY "
                + "sequence_number DESC LIMIT 1");
            mark = v.isEmpty() ? null : v.get(0);
          }
          if (r.nextInt(4) == 0) {
            db.close();
            db = Floe.open(warehouse);
          }
        }
        if (mark != null) {
          // the table and its state go back together: the whole stream replayed reaches the model again
          db.sql("ALTER TABLE t EXECUTE rollback_to_snapshot(" + mark + ")").close();
          for (int from = 0; from < stream.size(); ) {
            int n = Math.min(stream.size() - from, 1 + r.nextInt(40));
            db.changes("t", Changes.Format.LWW).apply(stream.subList(from, from + n));
            from += n;
          }
        }
        assertThat(dev.floe.testing.Rows.of(db, "SELECT p, c, a, b FROM t ORDER BY p, c")).as("seed " + seed)
            .containsExactlyElementsOf(LwwModel.rows(model, NOW));
        // everything again, in one batch: nothing changes
        assertThat(db.changes("t", Changes.Format.LWW).apply(stream).committed()).as("seed " + seed).isFalse();
      } finally {
        db.close();
      }
    }
  }

  @Test
  void aLargeBatchIsDecodedInPartsAndFoldsTheSame() {
    Random r = new Random(77);
    List<LwwModel.Env> envelopes = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      envelopes.add(LwwModel.randomEnvelope(r, NOW));
    }
    List<String> stream = new ArrayList<>();
    for (int copy = 0; copy < 120; copy++) { // 48,000 envelopes: decoded in parts on every core
      envelopes.forEach(e -> stream.add(e.json()));
    }
    Collections.shuffle(stream, r);
    try (Database db = Floe.open(dir.resolve("large"))) {
      db.sql("CREATE TABLE t (p int, c int, a text, b bigint, PRIMARY KEY (p, c))").close();
      Changes.Applied a = db.changes("t", Changes.Format.LWW).apply(stream);
      assertThat(a.envelopes()).isEqualTo(48_000);
      assertThat(dev.floe.testing.Rows.of(db, "SELECT p, c, a, b FROM t ORDER BY p, c"))
          .containsExactlyElementsOf(LwwModel.rows(envelopes, NOW));
      // a bad envelope deep in the second part is reported as that envelope
      List<String> bad = new ArrayList<>(stream);
      bad.set(40_000, "{\"key\": {\"p\": 1, \"c\": 1}, \"ts\": 1, \"cells\": {\"b\": \"x\"}}");
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> db.changes("t", Changes.Format.LWW).apply(bad))
          .satisfies(e -> assertThat(((FloeException) e).context()).contains("change envelope 40001"));
    }
  }

  @Test
  void debeziumStreamsInAnyOrderReachTheSourceTable() {
    debezium(2000, 5, 200);
  }

  private void debezium(long first, int rounds, int count) {
    for (int round = 0; round < rounds; round++) {
      long seed = first + round;
      Random r = new Random(seed);
      // the source: a table changed in LSN order, as PostgreSQL would
      TreeMap<Integer, String[]> source = new TreeMap<>();
      List<String> events = new ArrayList<>();
      long lsn = 1000;
      for (int i = 0; i < count; i++) {
        lsn += 1 + r.nextInt(50);
        int op = r.nextInt(20);
        if (op == 0) {
          source.clear();
          events.add("{\"op\": \"t\", \"source\": {\"lsn\": " + lsn + "}}");
          continue;
        }
        int id = r.nextInt(25);
        String[] row = {r.nextInt(4) == 0 ? null : "n" + r.nextInt(100), r.nextInt(4) == 0 ? null
            : String.valueOf(r.nextInt(2000) - 1000)};
        if (!source.containsKey(id)) {
          source.put(id, row);
          events.add(ChangesTest.event(op < 3 ? "r" : "c", lsn, null, image(id, row)));
        } else if (op < 6) {
          source.remove(id);
          events.add(ChangesTest.event("d", lsn, "{\"id\": " + id + "}", null));
          events.add("null");
        } else if (op < 8 && !source.containsKey(id + 25)) {
          source.remove(id);
          source.put(id + 25, row); // the key changed
          events.add(ChangesTest.event("u", lsn, "{\"id\": " + id + "}", image(id + 25, row)));
        } else {
          source.put(id, row);
          events.add(ChangesTest.event("u", lsn, "{\"id\": " + id + "}", image(id, row)));
        }
      }
      List<String> expected = new ArrayList<>();
      source.forEach((id, row) -> expected.add(id + "|" + row[0] + "|" + row[1]));
      List<String> stream = new ArrayList<>(events);
      for (int i = 0; i < 40; i++) {
        stream.add(events.get(r.nextInt(events.size())));
      }
      Collections.shuffle(stream, r);
      Path warehouse = dir.resolve("dbz" + seed);
      try (Database db = Floe.open(warehouse)) {
        db.sql("CREATE TABLE s (id int PRIMARY KEY, name text, amount numeric(8,2))").close();
        Changes c = db.changes("s", Changes.Format.DEBEZIUM);
        int at = 0;
        while (at < stream.size()) {
          int n = Math.min(stream.size() - at, 1 + r.nextInt(60));
          c.apply(stream.subList(at, at + n));
          at += n;
        }
        List<String> actual = new ArrayList<>();
        for (String line : dev.floe.testing.Rows.of(db, "SELECT id, name, amount FROM s ORDER BY id")) {
          String[] f = line.split("\\|");
          actual.add(f[0] + "|" + f[1] + "|" + (f[2].equals("null") ? "null"
              : String.valueOf(new java.math.BigDecimal(f[2]).intValueExact())));
        }
        assertThat(actual).as("seed " + seed).containsExactlyElementsOf(expected);
      }
    }
  }

  private static String image(int id, String[] row) {
    return "{\"id\": " + id + ", \"name\": " + (row[0] == null ? "null" : "\"" + row[0] + "\"") + ", \"amount\": "
        + (row[1] == null ? "null" : "\"" + row[1] + "\"") + "}";
  }
}
