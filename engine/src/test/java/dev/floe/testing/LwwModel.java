package dev.floe.testing;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * LWW change envelopes (docs/cdc.md) for a table {@code t (p int, c int, a text, b bigint, PRIMARY KEY (p,
 * c))}, and a model of what they leave, written differently from the engine's fold: each cell's winner is
 * the greatest of all its writes newer than every deletion covering its row, computed once over the whole
 * stream, in whatever order it came.
 */
public final class LwwModel {
  private LwwModel() {}

  /** One LWW envelope, as the model sees it. */
  public record Env(int p, Integer c, long ts, boolean insert, Long expires, Map<String, Object> cells,
      Integer from, Integer to, boolean delete) {
    public String json() {
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

  /** A random envelope over keys (0..2, 0..5) with timestamps 1..40; TTLs relative to {@code now}. */
  public static Env randomEnvelope(Random r, long now) {
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

  /** Each live row, "p|c|a|b" in key order, after {@code all} (in any order) at {@code now}. */
  public static List<String> rows(List<Env> all, long now) {
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

}
