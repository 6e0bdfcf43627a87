package dev.floe.cdc;

import static dev.floe.cdc.ColumnarChecks.broken;
import static dev.floe.cdc.ColumnarChecks.object;
import static dev.floe.cdc.ColumnarChecks.with;
import static dev.floe.cdc.ColumnarChecks.ws;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The columnar LWW decoder ({@link LwwBatch}) against the reference ({@link LwwEnvelopes} into a
 * {@link Fold}) on random lines, as {@link DebeziumBatchTest} does Debezium's: envelopes written every way
 * JSON allows, envelopes it must leave to the reference (TTLs, partition and range deletions, unknown
 * fields, a key column in the cells, two values of a cell at one timestamp, ...), and broken lines.
 * Whenever it takes a batch, the reference reads it and folds every key to the same deletion, marker and
 * cells; whenever the reference fails a batch, it does not take it.
 */
class LwwBatchTest {
  @Test
  void takesOnlyWhatTheReferenceReadsAndFoldsItTheSame() {
    int taken = 0;
    int batches = 0;
    for (long seed = 1; seed <= 1000; seed++) {
      Random r = new Random(seed * 0x9E3779B97F4A7C15L);
      boolean twoColumnKey = seed % 3 == 0;
      TableShape shape = ColumnarChecks.shape(twoColumnKey, false);
      int kind = r.nextInt(4); // 0: clean; 1: one odd envelope; 2: broken lines; 3: any
      int size = 1 + r.nextInt(kind == 0 ? 3000 : 60);
      int oddOne = kind == 1 ? r.nextInt(size) : -1;
      List<String> lines = new ArrayList<>();
      long ts = 1_700_000_000_000_000L + r.nextInt(1000);
      for (int i = 0; i < size; i++) {
        ts += 1 + r.nextInt(2);
        // some at an earlier envelope's timestamp (in a large batch, a tie of two values is then likely)
        long at = r.nextInt(kind == 0 ? 500 : 10) == 0 ? ts - r.nextInt(30) : ts;
        String line = envelope(r, at, twoColumnKey, i == oddOne || kind == 3 && r.nextInt(12) == 0);
        if ((kind == 2 || kind == 3) && r.nextInt(kind == 2 ? 20 : 200) == 0) {
          line = broken(r, line);
        }
        lines.add(line);
      }
      if (r.nextInt(4) == 0) {
        lines.add(lines.get(r.nextInt(lines.size()))); // a replay
      }
      for (int t = r.nextInt(3); t > 0; t--) { // two writes of a cell at the batch's newest timestamp
        String line = lines.get(r.nextInt(lines.size()));
        if (line.matches(".*\"amount\"\\s*:\\s*-?[0-9].*")) {
          String newest = line.replaceFirst("\"ts\"(\\s*):(\\s*)[0-9]+", "\"ts\": " + (ts + 100));
          lines.add(newest);
          lines.add(newest.replaceFirst("\"amount\"(\\s*):(\\s*)-?[0-9]+", r.nextBoolean() ? "\"amount\": null"
              : "\"amount\": " + (r.nextInt(5) - 2)));
        }
      }
      Collections.shuffle(lines, r);
      batches++;
      String what = "seed " + seed + ": " + (lines.size() < 4 ? lines : lines.size() + " lines");
      taken += ColumnarChecks.compare(shape, ChangeFormat.LWW, lines, LwwBatch.fold(shape, lines), what) ? 1 : 0;
    }
    assertThat(taken).as("batches taken of " + batches).isGreaterThan(batches / 4);
  }

  private static final String[] WORDS = {"ann", "", "émile", "a\\\"b", "back\\\\slash", "tab\\there", "\\u00e9",
      "😀", "\\ud83d\\ude00", "x"};

  /** An LWW envelope at {@code ts}; with {@code odd}, maybe one the columnar decoder must leave to the reference. */
  private static String envelope(Random r, long ts, boolean twoColumnKey, boolean odd) {
    int oddity = odd ? r.nextInt(21) : -1;
    Map<String, String> key = new LinkedHashMap<>();
    if (twoColumnKey) {
      key.put("region", r.nextBoolean() ? "\"eu\"" : "\"us\"");
    }
    key.put("id", String.valueOf(r.nextInt(30)));
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("key", object(r, key));
    fields.put("ts", String.valueOf(ts));
    int what = r.nextInt(6);
    if (what == 0) {
      fields.put("delete", "true");
      if (r.nextInt(4) == 0) {
        fields.put("insert", r.nextBoolean() ? "false" : "null");
      }
    } else {
      Map<String, String> cells = new LinkedHashMap<>();
      String[] names = {"name", "amount", "score", "flag", "code", "tag", "u", "day", "at", "ts", "price", "s", "r",
          "tm", "b", "j"};
      for (String n : names) {
        if (r.nextInt(3) > 0) {
          cells.put(n, r.nextInt(5) == 0 ? "null" : switch (n) {
            case "name" -> "\"" + WORDS[r.nextInt(WORDS.length)] + "\"";
            case "amount" -> String.valueOf(r.nextInt(5) - 2);
            case "code", "tag" -> ColumnarChecks.shortText(r, odd);
            case "u", "day", "at", "ts" -> ColumnarChecks.temporal(r, n, odd);
            case "price" -> ColumnarChecks.decimal(r, false, odd);
            case "s", "r", "tm", "b", "j" -> ColumnarChecks.more(r, n, odd);
            case "score" -> new String[] {"1.5", "-0", "2e3", "0.25E-1", "7"}[r.nextInt(5)];
            default -> String.valueOf(r.nextBoolean());
          });
        }
      }
      boolean insert = what == 1 || cells.isEmpty(); // an envelope that writes nothing is an oddity
      if (insert || r.nextInt(4) == 0) {
        fields.put("insert", insert ? "true" : r.nextBoolean() ? "false" : "null");
      }
      if (!cells.isEmpty() || r.nextInt(4) == 0) {
        fields.put("cells", cells.isEmpty() && r.nextBoolean() ? "null" : object(r, cells));
      }
      if (r.nextInt(6) == 0) {
        fields.put("delete", r.nextBoolean() ? "false" : "null");
      }
    }
    switch (oddity) {
      case 0 -> fields.put("ttl", "60");
      case 1 -> fields.put("expires_at", "1800000000");
      case 2 -> fields.put("extra", "1");
      case 3 -> { // a partition deletion (or a write without its whole key)
        key.remove("id");
        fields.put("key", object(r, key));
      }
      case 4 -> fields.put("delete", "{\"from\": {\"id\": 1}, \"to\": {\"id\": 5}}");
      case 5 -> {
        fields.put("delete", "true");
        fields.put("cells", "{\"amount\": 1}");
      }
      case 6 -> fields.put("key", object(r, with(key, "name", "\"x\"")));
      case 7 -> fields.put("key", object(r, with(key, "id", "null")));
      case 8 -> fields.put("cells", "{\"id\": 3}");
      case 9 -> fields.put("cells", "{\"nope\": 3}");
      case 10 -> fields.put("cells", "{\"amount\": \"3\"}");
      case 11 -> fields.put("cells", "{\"flag\": 1}");
      case 12 -> fields.put("ts", "\"" + ts + "\"");
      case 13 -> fields.put("ts", ts + ".0");
      case 14 -> fields.remove("ts");
      case 15 -> fields.put("insert", "\"true\"");
      case 16 -> {
        fields.remove("cells");
        fields.remove("insert");
        fields.remove("delete");
      }
      case 17 -> fields.put("cells", "{\"amount\": 1, \"amount\": 2}");
      case 18 -> fields.put("key", "[1]");
      case 19 -> fields.put("cells", "{\"name\": \"" + ChangeFormat.UNAVAILABLE + "\"}"); // just a value in LWW
      case 20 -> fields.put("key", fields.get("key").replace("\"id\"", "\"id\": 99, \"id\""));
      default -> { }
    }
    return ws(r) + object(r, fields) + ws(r);
  }
}
