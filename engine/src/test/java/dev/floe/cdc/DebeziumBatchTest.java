package dev.floe.cdc;

import static dev.floe.cdc.ColumnarChecks.broken;
import static dev.floe.cdc.ColumnarChecks.object;
import static dev.floe.cdc.ColumnarChecks.with;
import static dev.floe.cdc.ColumnarChecks.without;
import static dev.floe.cdc.ColumnarChecks.ws;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The columnar decoder ({@link DebeziumBatch}) against the reference ({@link DebeziumEvents} into a
 * {@link Fold}) on random lines: well-formed events written every way JSON allows (field order, white
 * space, escapes, surrogate pairs, number forms, extra fields), events the columnar decoder must leave to
 * the reference (key changes, truncates, initial-snapshot reads, envelopes, TOAST placeholders, values
 * of the wrong type, duplicate fields, two writes at one position), and lines broken one character at a
 * time. Whenever it takes a batch, the reference reads every line and folds it to the same keys,
 * positions and values; whenever the reference fails a batch, it does not take it.
 */
class DebeziumBatchTest {
  @Test
  void takesOnlyWhatTheReferenceReadsAndFoldsItTheSame() {
    int taken = 0;
    int batches = 0;
    for (long seed = 1; seed <= 1000; seed++) {
      Random r = new Random(seed * 0x9E3779B97F4A7C15L); // spread: the first draws of nearby seeds are alike
      boolean textKey = seed % 3 == 0;
      TableShape shape = ColumnarChecks.shape(textKey, true);
      int kind = r.nextInt(4); // 0: clean events; 1: some the reference must take; 2: broken lines; 3: any
      List<String> lines = new ArrayList<>();
      long lsn = r.nextInt(1000);
      int size = 1 + r.nextInt(kind == 0 ? 3000 : 60);
      int oddOne = kind == 1 ? r.nextInt(size) : -1; // one event the reference may have to take
      boolean envelopes = r.nextInt(3) == 0; // with their schema, as Kafka Connect's JSON converter writes them
      for (int i = 0; i < size; i++) {
        lsn += 1 + r.nextInt(2);
        boolean odd = i == oddOne || kind == 3 && r.nextInt(12) == 0;
        String line = event(r, shape, lsn, textKey, odd && !(envelopes && r.nextInt(3) == 0), envelopes);
        if (envelopes) {
          line = envelope(r, line, odd);
        }
        if ((kind == 2 || kind == 3) && r.nextInt(kind == 2 ? 20 : 200) == 0) {
          line = broken(r, line);
        }
        lines.add(line);
      }
      if (r.nextInt(4) == 0) { // a replay: the same event twice
        lines.add(lines.get(r.nextInt(lines.size())));
      }
      if (r.nextInt(4) == 0) { // two writes of a key at one position: Cassandra's tie-break, the reference's
        String line = lines.get(r.nextInt(lines.size()));
        if (line.contains("\"amount\"") && !line.contains("\"op\": \"d\"")) {
          lines.add(line.replaceFirst("\"amount\":( |\t|  \r )*", "\"amount\": 77"));
        }
      }
      Collections.shuffle(lines, r);
      batches++;
      String what = "seed " + seed + ": " + (lines.size() < 4 ? lines : lines.size() + " lines");
      taken += ColumnarChecks.compare(shape, ChangeFormat.DEBEZIUM, lines, DebeziumBatch.fold(shape, lines), what) ? 1 : 0;
    }
    assertThat(taken).as("batches taken of " + batches).isGreaterThan(batches / 4);
  }

  /**
   * A batch of key changes alone has two keys a line (each old key deleted, each new one written): more keys
   * than the fold's key map was sized for, so it grows while the batch folds, and folds as the reference.
   */
  @Test
  void keysBeyondTheLinesGrowTheKeyMap() {
    TableShape shape = ColumnarChecks.shape(false, true);
    List<String> lines = new ArrayList<>();
    Random r = new Random(11);
    for (int i = 0; i < 3000; i++) {
      long from = 1 + r.nextInt(1_000_000);
      lines.add("{\"before\": {\"id\": " + from + "}, \"after\": {\"id\": " + (2_000_000 + i) + ", \"name\": \"k" + i
          + "\", \"amount\": " + i + "}, \"source\": {\"connector\": \"postgresql\", \"lsn\": " + (10 + i)
          + "}, \"op\": \"u\"}");
    }
    FoldedColumns folded = DebeziumBatch.fold(shape, lines);
    assertThat(folded).as("taken").isNotNull();
    assertThat(folded.size).as("keys").isGreaterThan(5000);
    assertThat(ColumnarChecks.compare(shape, ChangeFormat.DEBEZIUM, lines, folded, "key changes")).isTrue();
  }

  // ------------------------------------------------------------------ random events

  private static final String[] WORDS = {"ann", "", "émile", "a\"b", "back\\slash", "tab\there", "new\nline",
      "😀 smile", "日本", "slash/", "\u007f", "x"};

  /** A Debezium event; with {@code odd}, maybe one the columnar decoder must leave to the reference. */
  private static String event(Random r, TableShape shape, long lsn, boolean textKey, boolean odd,
      boolean enveloped) {
    int oddity = odd ? r.nextInt(31) : -1;
    if (!odd && r.nextInt(40) == 0) {
      return ws(r) + "null" + ws(r);
    }
    if (!odd && r.nextInt(40) == 0) {
      return "{\"op\": \"m\", \"source\": {\"lsn\": " + lsn + "}, \"message\": {\"prefix\": \"p\", \"content\": \"eA==\"}}";
    }
    long id = r.nextInt(40);
    String region = textKey ? new String[] {"eu", "us", "é\\u00e9"}[r.nextInt(3)] : null;
    String op = r.nextInt(5) == 0 ? "d" : new String[] {"c", "u", "r"}[r.nextInt(3)];
    Map<String, String> after = new java.util.LinkedHashMap<>();
    if (textKey) {
      after.put("region", "\"" + region + "\"");
    }
    after.put("id", String.valueOf(id));
    after.put("name", r.nextInt(6) == 0 ? "null" : text(r, WORDS[r.nextInt(WORDS.length)]));
    after.put("amount", r.nextInt(6) == 0 ? "null" : String.valueOf(r.nextLong() >> r.nextInt(64)));
    after.put("score", r.nextInt(6) == 0 ? "null" : number(r));
    after.put("flag", r.nextInt(6) == 0 ? "null" : String.valueOf(r.nextBoolean()));
    after.put("n", r.nextInt(6) == 0 ? "null" : String.valueOf(r.nextInt(2000) - 1000));
    after.put("code", r.nextInt(6) == 0 ? "null" : ColumnarChecks.shortText(r, odd));
    after.put("tag", r.nextInt(6) == 0 ? "null" : ColumnarChecks.shortText(r, odd));
    for (String t : new String[] {"u", "day", "at", "ts"}) {
      after.put(t, r.nextInt(6) == 0 ? "null" : ColumnarChecks.temporal(r, t, odd));
    }
    after.put("price", r.nextInt(6) == 0 ? "null" : ColumnarChecks.decimal(r, enveloped, odd));
    for (String m : new String[] {"s", "r", "tm", "b", "j"}) {
      after.put(m, r.nextInt(6) == 0 ? "null" : ColumnarChecks.more(r, m, odd));
    }
    // an update of the key: the old key deleted at the change (another key of the batch's, or a new one); one
    // with an unchanged TOAST value is the fold's (the new key takes the old one's value), so none here
    boolean keyChange = op.equals("u") && r.nextInt(6) == 0;
    if (!keyChange && r.nextInt(10) == 0) { // unchanged TOAST values, and a column the image leaves out
      after.put(r.nextBoolean() ? "name" : "amount", "\"" + ChangeFormat.UNAVAILABLE + "\"");
      after.put("b", "\"" + ChangeFormat.UNAVAILABLE_BYTES + "\"");
    }
    if (r.nextInt(10) == 0) {
      after.remove(new String[] {"price", "flag", "tm"}[r.nextInt(3)]);
    }
    Map<String, String> before = new java.util.LinkedHashMap<>();
    if (textKey) {
      before.put("region", "\"" + region + "\"");
    }
    before.put("id", String.valueOf(keyChange ? r.nextInt(50) : id));
    if (r.nextBoolean()) {
      before.put("name", "\"old\""); // REPLICA IDENTITY FULL
    }
    String beforeJson = op.equals("d") || r.nextBoolean() ? object(r, before) : r.nextBoolean() ? "null" : null;
    String afterJson = op.equals("d") ? (r.nextBoolean() ? "null" : null) : object(r, after);
    Map<String, String> source = new java.util.LinkedHashMap<>();
    boolean mysql = r.nextInt(4) == 0; // a binlog file, position and row
    if (mysql) {
      source.put("connector", "\"mysql\"");
      source.put("file", "\"mysql-bin." + String.format("%06d", 1 + lsn / 1000) + "\"");
      source.put("pos", String.valueOf(lsn % 1000 * 300 + 4));
      if (r.nextBoolean()) {
        source.put("row", String.valueOf(lsn % 3));
      }
    } else {
      source.put("connector", "\"postgresql\"");
      source.put("lsn", String.valueOf(lsn));
    }
    if (op.equals("r") || r.nextInt(4) == 0) { // an initial snapshot's reads rank below streamed changes
      source.put("snapshot", new String[] {"\"false\"", "false", "null", "\"incremental\"", "\"true\"", "true",
          "\"last\"", "\"last_in_data_collection\""}[r.nextInt(8)]);
    }
    if (r.nextBoolean()) {
      source.put("ts_ms", "1700000000000");
    }
    switch (oddity) {
      case 0 -> op = "t";
      case 1 -> op = "x";
      case 2 -> source.put("snapshot", r.nextBoolean() ? "\"first\"" : "\"first_in_data_collection\"");
      case 3 -> source.put("lsn", "\"" + lsn + "\"");
      case 4 -> source.put("lsn", lsn + ".0");
      case 5 -> source.remove("lsn");
      case 6 -> source.put("lsn", "123456789012345678901234");
      case 7 -> beforeJson = object(r, Map.of("id", String.valueOf(id + 100))); // a key change (or a d of another key)
      case 8 -> afterJson = afterJson == null || afterJson.equals("null") ? afterJson : afterJson.replace("\"n\":",
          "\"extra\": 1, \"n\":");
      case 9 -> afterJson = afterJson == null || afterJson.equals("null") ? afterJson : object(r, without(after, "amount"));
      case 10 -> afterJson = object(r, with(after, "name", "\"" + ChangeFormat.UNAVAILABLE + "\""));
      case 11 -> afterJson = object(r, with(after, "amount", "\"12\""));
      case 12 -> afterJson = object(r, with(after, "n", "3000000000"));
      case 13 -> afterJson = object(r, with(after, "flag", "1"));
      case 14 -> afterJson = object(r, with(after, "id", "null"));
      case 15 -> afterJson = object(r, with(after, "name", "\"nul\\u0000\""));
      case 16 -> afterJson = object(r, with(after, "amount", "1.5"));
      case 17 -> afterJson = object(r, with(after, "score", "123456789012345678901234567890"));
      case 18 -> beforeJson = "{\"id\": null}";
      case 19 -> beforeJson = "\"text\"";
      case 20 -> afterJson = object(r, with(after, "name", "\"lone \\ud800 surrogate\""));
      case 25 -> source.put("file", "\"mysql-bin\"");
      case 26 -> source.put("row", "\"1\"");
      case 27 -> source.put("pos", String.valueOf(1L << 33));
      case 28 -> source.put("lsn", "null");
      case 29 -> afterJson = object(r, with(after, "s", r.nextBoolean() ? "32768" : "-32769"));
      case 30 -> afterJson = object(r, with(after, "b", "\"AP8\""));
      case 24 -> afterJson = afterJson == null || afterJson.equals("null") ? afterJson
          : afterJson.replaceFirst("\\{", "{\"name\": \"first\", "); // named twice: the last one counts
      default -> { }
    }
    List<String> fields = new ArrayList<>();
    fields.add("\"op\":" + ws(r) + "\"" + op + "\"");
    if (beforeJson != null) {
      fields.add("\"before\":" + ws(r) + beforeJson);
    }
    if (afterJson != null) {
      fields.add("\"after\":" + ws(r) + afterJson);
    }
    fields.add("\"source\":" + ws(r) + object(r, source));
    if (r.nextBoolean()) {
      fields.add("\"ts_ms\": 1700000000001");
    }
    if (r.nextInt(4) == 0) {
      fields.add("\"transaction\": {\"id\": \"571:53195829\", \"total_order\": 1, \"list\": [1, -2.5e3, true, null, [], {}]}");
    }
    switch (oddity) {
      case 21 -> fields.add("\"op\": \"" + op + "\""); // named twice
      case 22 -> {
        return "{\"schema\": {\"type\": \"struct\"}, \"payload\": {" + String.join(", ", fields) + "}}";
      }
      case 23 -> fields.add(0, "\"op\": 7");
      default -> { }
    }
    Collections.shuffle(fields, r);
    return ws(r) + "{" + ws(r) + String.join("," + ws(r), fields) + ws(r) + "}" + ws(r);
  }

  /**
   * A schema as Debezium's PostgreSQL connector sends it: a numeric's scale among its parameters (its
   * values base64), a timestamp and a time of day in milliseconds.
   */
  private static final String SCHEMA = "{\"type\": \"struct\", \"fields\": [{\"type\": \"struct\", \"fields\": "
      + "[{\"type\": \"int64\", \"optional\": false, \"field\": \"id\"}, {\"type\": \"string\", \"optional\": "
      + "true, \"field\": \"name\"}, {\"type\": \"bytes\", \"optional\": true, \"name\": "
      + "\"org.apache.kafka.connect.data.Decimal\", \"version\": 1, \"parameters\": {\"scale\": \"2\", "
      + "\"connect.decimal.precision\": \"10\"}, \"field\": \"price\"}], \"optional\": true, \"name\": "
      + "\"pg.public.t.Value\", \"field\": \"before\"}, {\"type\": \"struct\", \"fields\": [{\"type\": \"int64\", "
      + "\"optional\": true, \"name\": \"org.apache.kafka.connect.data.Timestamp\", \"field\": \"ts\"}, {\"type\": \"int32\", "
      + "\"optional\": true, \"name\": \"io.debezium.time.Time\", \"field\": \"tm\"}], \"optional\": true, "
      + "\"field\": \"after\"}, {\"type\": \"string\", \"optional\": false, \"field\": \"op\"}], \"optional\": false, "
      + "\"name\": \"pg.public.t.Envelope\", \"version\": 2}";

  /**
   * The event in a schema envelope (a tombstone's: a null payload); with {@code odd}, maybe one the tree
   * decoder reads otherwise: half an envelope, an event's members beside it, a scale that is no integer.
   */
  private static String envelope(Random r, String event, boolean odd) {
    String payload = event.strip().equals("null") ? "null" : event;
    String schema = payload.equals("null") && r.nextBoolean() ? "null" : SCHEMA;
    return switch (odd ? r.nextInt(4) : -1) {
      case 0 -> "{\"payload\": " + payload + "}";
      case 1 -> "{\"schema\": " + schema + ", \"op\": \"c\", \"payload\": " + payload + "}";
      case 2 -> "{\"schema\": " + schema.replace("\"scale\": \"2\"", "\"scale\": \"two\"") + ", \"payload\": "
          + payload + "}";
      // the schema first, as Kafka Connect's JSON converter writes it, or after the payload it describes
      default -> r.nextBoolean() ? "{\"schema\":" + ws(r) + schema + "," + ws(r) + "\"payload\":" + payload + "}"
          : "{\"payload\": " + payload + ", \"schema\": " + schema + "}";
    };
  }

  /** A string's JSON text, escaped one of the ways JSON allows. */
  private static String text(Random r, String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(c == '\n' ? "\\n" : c == '\t' ? "\\t" : String.format("\\u%04x", (int) c));
      } else if (c > 0x7e && r.nextBoolean() || c == '/' && r.nextBoolean()) {
        b.append(String.format(r.nextBoolean() ? "\\u%04x" : "\\u%04X", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  private static String number(Random r) {
    return switch (r.nextInt(8)) {
      case 0 -> String.valueOf(r.nextInt(100) - 50);
      case 1 -> "-0";
      case 2 -> "-0.0";
      case 3 -> String.valueOf(r.nextDouble() * 1000);
      case 4 -> (r.nextInt(9) + 1) + "e" + (r.nextInt(40) - 20);
      case 5 -> "1.5E+" + r.nextInt(308); // 1.5E+308 and above do not fit a double precision (22003): odd, not clean
      case 6 -> "0." + r.nextInt(1000) + "e-3";
      default -> String.valueOf(r.nextLong());
    };
  }
}
