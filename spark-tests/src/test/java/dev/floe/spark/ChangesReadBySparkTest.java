package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Changes;
import dev.floe.testing.LwwModel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Change streams folded by Floe (docs/cdc.md) are plain Iceberg tables to Spark: after random Debezium
 * and LWW streams (shuffled, duplicated, in batches), Spark reads exactly the rows Floe reads, which are
 * the model's, and neither the table nor its state table has an equality delete.
 */
class ChangesReadBySparkTest {
  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void debeziumStreamReadBySpark(int formatVersion) {
    SparkFloe sf = SparkFloe.get();
    String t = "cdc_dbz_v" + formatVersion;
    sf.floeExec("CREATE TABLE " + t + " (id int PRIMARY KEY, name text, amount numeric(10,2), born date, "
        + "seen timestamptz, ok boolean) WITH (format_version = " + formatVersion + ")");
    Random r = new Random(formatVersion);
    TreeMap<Integer, List<String>> model = new TreeMap<>();
    List<String> events = new ArrayList<>();
    long lsn = 100;
    for (int i = 0; i < 400; i++) {
      lsn += 1 + r.nextInt(9);
      int id = r.nextInt(60);
      String name = r.nextInt(5) == 0 ? null : "n" + r.nextInt(1000);
      String amount = r.nextInt(5) == 0 ? null : (r.nextInt(200000) - 100000) / 100 + "." + (10 + r.nextInt(90));
      Integer born = r.nextInt(5) == 0 ? null : r.nextInt(20000);
      String seen = r.nextInt(5) == 0 ? null : java.time.Instant.ofEpochSecond(1_700_000_000L + r.nextInt(1_000_000),
          r.nextInt(1_000_000) * 1000L).toString();
      Boolean ok = r.nextInt(5) == 0 ? null : r.nextBoolean();
      String after = "{\"id\": " + id + ", \"name\": " + quote(name) + ", \"amount\": " + quote(amount) + ", \"born\": "
          + born + ", \"seen\": " + quote(seen) + ", \"ok\": " + ok + "}";
      if (model.containsKey(id) && r.nextInt(4) == 0) {
        model.remove(id);
        events.add(event("d", lsn, "{\"id\": " + id + "}", null));
      } else {
        events.add(event(model.containsKey(id) ? "u" : "c", lsn, model.containsKey(id) ? "{\"id\": " + id + "}" : null,
            after));
        model.put(id, List.of(Canonical.value(id), Canonical.value(name), amount == null ? "NULL"
            : Canonical.value(new java.math.BigDecimal(amount).setScale(2)), born == null ? "NULL"
            : Canonical.value(java.time.LocalDate.ofEpochDay(born)), seen == null ? "NULL"
            : Canonical.value(java.time.Instant.parse(seen)), ok == null ? "NULL" : Canonical.value(ok)));
      }
    }
    List<String> stream = new ArrayList<>(events);
    for (int i = 0; i < 80; i++) {
      stream.add(events.get(r.nextInt(events.size())));
    }
    Collections.shuffle(stream, r);
    Changes changes = sf.floe.changes(t, Changes.Format.DEBEZIUM);
    for (int at = 0; at < stream.size(); at += 97) {
      changes.apply(stream.subList(at, Math.min(stream.size(), at + 97)));
    }
    List<List<String>> expected = new ArrayList<>(model.values());
    String columns = "id, name, amount, born, seen, ok";
    List<List<String>> floe = sf.floeRows("SELECT " + columns + " FROM " + t + " ORDER BY id");
    Canonical.assertSame("Floe (expected: the source)", expected, floe);
    Canonical.assertSame("Spark (expected: Floe)", floe, sf.sparkRows("SELECT " + columns + " FROM floe.public." + t
        + " ORDER BY id"));
    assertNoEqualityDeletes(sf, "floe.public." + t);
    assertNoEqualityDeletes(sf, sf.floe.table(t).properties().get("floe.cdc.state").replace("floe_cdc.",
        "floe.floe_cdc.`") + "`");
  }

  @ParameterizedTest
  @ValueSource(ints = {3})
  void lwwStreamReadBySpark(int formatVersion) {
    SparkFloe sf = SparkFloe.get();
    String t = "cdc_lww_v" + formatVersion;
    sf.floeExec("CREATE TABLE " + t + " (p int, c int, a text, b bigint, PRIMARY KEY (p, c)) WITH (format_version = "
        + formatVersion + ")");
    long now = System.currentTimeMillis() / 1000;
    Random r = new Random(11);
    List<LwwModel.Env> envelopes = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      envelopes.add(LwwModel.randomEnvelope(r, now));
    }
    List<String> stream = new ArrayList<>();
    envelopes.forEach(e -> stream.add(e.json()));
    Collections.shuffle(stream, r);
    Changes changes = sf.floe.changes(t, Changes.Format.LWW);
    for (int at = 0; at < stream.size(); at += 41) {
      changes.apply(stream.subList(at, Math.min(stream.size(), at + 41)));
    }
    List<List<String>> expected = new ArrayList<>();
    for (String row : LwwModel.rows(envelopes, now)) {
      String[] v = row.split("\\|", -1);
      expected.add(List.of(Canonical.value(Integer.parseInt(v[0])), Canonical.value(Integer.parseInt(v[1])),
          Canonical.value(v[2].equals("null") ? null : v[2]), Canonical.value(v[3].equals("null") ? null
          : Long.parseLong(v[3]))));
    }
    List<List<String>> floe = sf.floeRows("SELECT p, c, a, b FROM " + t + " ORDER BY p, c");
    Canonical.assertSame("Floe (expected: the model)", expected, floe);
    Canonical.assertSame("Spark (expected: Floe)", floe, sf.sparkRows("SELECT p, c, a, b FROM floe.public." + t
        + " ORDER BY p, c"));
    assertNoEqualityDeletes(sf, "floe.public." + t);
  }

  private static void assertNoEqualityDeletes(SparkFloe sf, String table) {
    assertThat(sf.sparkRows("SELECT count(*) FROM " + table + ".delete_files WHERE content = 2"))
        .as("equality delete files of " + table).containsExactly(List.of("long:0"));
  }

  private static String quote(String s) {
    return s == null ? "null" : "\"" + s + "\"";
  }

  private static String event(String op, long lsn, String before, String after) {
    return "{\"op\": \"" + op + "\", \"before\": " + before + ", \"after\": " + after + ", \"source\": {\"lsn\": "
        + lsn + "}}";
  }
}
