package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random change streams with duplicates, reordering, ties, TTLs, row, partition and range deletions and
 * primary-key changes, applied in random batches across restarts, against a model written differently:
 * for LWW, each cell's winner is the greatest of all its writes newer than every deletion covering its
 * row, computed once over the whole stream; for Debezium, a map per key changed in source order.
 */
class ChangesDifferentialTest {
  @TempDir
  Path dir;

  static final long NOW = System.currentTimeMillis() / 1000;

  /** One LWW envelope, as the model sees it. */
  record Env(int p, Integer c, long ts, boolean insert, Long expires, Map<String, Object> cells,
      Integer from, Integer to, boolean delete) {
    String json() {
      StringBuilder b = new StringBuilder("{\"key\": {\"p\": " + p + (c == null ? "" : ", \"c\": " + c) + "}, \"ts\": "
          + ts);
      if (delete) {
        if (from == null) {
          b.append(", \"delete\": true");
        } else {
          b.append(", \"delete\": {\"from\": {\"c\": ").append(from).append("}, \"to\": {\"c\": ").append(to)
              .append("}, \"to_inclusive\": false}");
        }
        return b.append('}').toString();
      }
      if (insert) {
        b.append(", \"insert\": true");
      }
      if (expires != null) {
        b.append(", \"expires_at\": ").append(expires);
      }
      b.append(", \"cells\": {");
      int k = 0;
      for (Map.Entry<String, Object> e : cells.entrySet()) {
        b.append(k++ > 0 ? ", " : "").append('"').append(e.getKey()).append("\": ");
        b.append(e.getValue() == null ? "null" : e.getValue() instanceof String s ? "\"" + s + "\"" : e.getValue());
      }
      return b.append("}}").toString();
    }

    boolean deletes(int kp, int kc) {
      return delete && p == kp && (c == null ? from == null || kc >= from && kc < to : c == kc);
    }
  }

  static Env randomEnvelope(Random r, long now) {
    int p = r.nextInt(3);
    long ts = 1 + r.nextInt(40); // narrow: many ties
    int kind = r.nextInt(20);
    if (kind == 0) {
      return new Env(p, null, ts, false, null, Map.of(), null, null, true);
    }
    if (kind == 1) {
      int from = r.nextInt(5);
      return new Env(p, null, ts, false, null, Map.of(), from, from + 1 + r.nextInt(3), true);
    }
    int c = r.nextInt(6);
    if (kind <= 4) {
      return new Env(p, c, ts, false, null, Map.of(), null, null, true);
    }
    Map<String, Object> cells = new LinkedHashMap<>();
    if (r.nextBoolean()) {
      cells.put("a", r.nextInt(5) == 0 ? null : List.of("x", "y", "zz", "é", "").get(r.nextInt(5)));
    }
    if (r.nextBoolean() || cells.isEmpty()) {
      cells.put("b", r.nextInt(5) == 0 ? null : (long) (r.nextInt(7) - 3));
    }
    Long expires = r.nextInt(5) == 0 ? (r.nextBoolean() ? now - 1000 : now + 100_000) : null;
    return new Env(p, c, ts, r.nextInt(3) == 0, expires, cells, null, null, false);
  }

  /** Cassandra's order of two writes of one cell: ts, then tombstone > expiring > value, expiry, bytes. */
  private static int order(Env x, Env y, String column) {
    int c = Long.compare(x.ts, y.ts);
    if (c != 0) {
      return c;
    }
    c = Integer.compare(rank(x, column), rank(y, column));
    if (c != 0) {
      return c;
    }
    c = Long.compare(x.expires == null ? 0 : x.expires, y.expires == null ? 0 : y.expires);
    if (c != 0 || rank(x, column) == 2 || column == null) {
      return c;
    }
    Object a = x.cells.get(column);
    Object b = y.cells.get(column);
    if (a instanceof Long la) {
      return Long.compareUnsigned(la, (Long) b); // big-endian two's complement bytes, compared unsigned
    }
    return Arrays.compareUnsigned(((String) a).getBytes(StandardCharsets.UTF_8),
        ((String) b).getBytes(StandardCharsets.UTF_8));
  }

  private static int rank(Env e, String column) {
    if (column != null && e.cells.get(column) == null) {
      return 2;
    }
    return e.expires != null ? 1 : 0;
  }

  private static boolean live(Env e, String column, long now) {
    return rank(e, column) == 0 || rank(e, column) == 1 && now < e.expires;
  }

  /** The model: each row's live values, "p|c|a|b", from all envelopes at once. */
  static List<String> model(List<Env> all, long now) {
    List<String> out = new ArrayList<>();
    for (int p = 0; p < 3; p++) {
      for (int c = 0; c < 6; c++) {
        long deleted = Long.MIN_VALUE;
        for (Env e : all) {
          if (e.deletes(p, c)) {
            deleted = Math.max(deleted, e.ts);
          }
        }
        Env marker = null;
        Map<String, Env> winners = new HashMap<>();
        for (Env e : all) {
          if (e.delete || e.p != p || e.c != c || e.ts <= deleted) {
            continue;
          }
          if (e.insert && (marker == null || order(e, marker, null) > 0)) {
            marker = e;
          }
          for (String col : e.cells.keySet()) {
            Env w = winners.get(col);
            if (w == null || order(e, w, col) > 0) {
              winners.put(col, e);
            }
          }
        }
        boolean exists = marker != null && live(marker, null, now);
        String[] values = new String[2];
        int k = 0;
        for (String col : List.of("a", "b")) {
          Env w = winners.get(col);
          if (w != null && live(w, col, now)) {
            exists = true;
            values[k] = String.valueOf(w.cells.get(col));
          } else {
            values[k] = "null";
          }
          k++;
        }
        if (exists) {
          out.add(p + "|" + c + "|" + values[0] + "|" + values[1]);
        }
      }
    }
    return out;
  }

  @Test
  void lwwStreamsInAnyOrderAndBatchesReachTheModel() {
    for (int round = 0; round < 6; round++) {
      long seed = 1000 + round;
      Random r = new Random(seed);
      List<Env> envelopes = new ArrayList<>();
      for (int i = 0; i < 150; i++) {
        envelopes.add(randomEnvelope(r, NOW));
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
        int at = 0;
        while (at < stream.size()) {
          int n = Math.min(stream.size() - at, 1 + r.nextInt(40));
          db.changes("t", Changes.Format.LWW).apply(stream.subList(at, at + n));
          at += n;
          if (r.nextInt(4) == 0) {
            db.close();
            db = Floe.open(warehouse);
          }
        }
        assertThat(dev.floe.testing.Rows.of(db, "SELECT p, c, a, b FROM t ORDER BY p, c")).as("seed " + seed)
            .containsExactlyElementsOf(model(envelopes, NOW));
        // everything again, in one batch: nothing changes
        assertThat(db.changes("t", Changes.Format.LWW).apply(stream).committed()).as("seed " + seed).isFalse();
      } finally {
        db.close();
      }
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
