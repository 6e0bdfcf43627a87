package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Result;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Floe changes tables with DELETE, UPDATE, MERGE, INSERT ... ON CONFLICT and TRUNCATE, with PostgreSQL's
 * semantics (rows and command tags); Spark reads exactly the rows Floe reads, after every statement and at every
 * snapshot. Tables are format v2 and v3, with Floe's default merge-on-read (position deletes on v2, deletion
 * vectors on v3) and with the copy-on-write {@code write.*.mode} properties.
 *
 * <p>Written ahead of the engine's DML: an engine without these statements fails here with SQLSTATE 0A000 at the
 * first one. The expected rows come from a model of the table kept here, not from Floe; the statements, their
 * command tags and the end states were run on PostgreSQL 15 to check the model.
 */
class FloeMutationsReadBySparkTest {
  private static final String COW = "'write.delete.mode' = 'copy-on-write', 'write.update.mode' = 'copy-on-write',"
      + " 'write.merge.mode' = 'copy-on-write'";

  static Stream<Arguments> layouts() {
    return Stream.of(
        Arguments.of("mor_v2", "", "format_version = 2"),
        Arguments.of("mor_v3", "", "format_version = 3"),
        Arguments.of("cow_v2", "", "format_version = 2, " + COW),
        Arguments.of("cow_v3", "", "format_version = 3, " + COW),
        Arguments.of("mor_v2_bucket", " PARTITIONED BY (bucket(3, k))", "format_version = 2"),
        Arguments.of("mor_v3_day", " PARTITIONED BY (day(d))", "format_version = 3"));
  }

  /** The table as PostgreSQL would hold it: k -> (v, n, d). */
  private static final class Model {
    final TreeMap<Integer, Object[]> rows = new TreeMap<>();

    List<List<String>> canonical() {
      List<List<String>> out = new ArrayList<>();
      rows.forEach((k, r) -> {
        List<String> row = new ArrayList<>();
        row.add(Canonical.value(k));
        for (Object v : r) {
          row.add(Canonical.value(v));
        }
        out.add(row);
      });
      return out;
    }

    /** Applies {@code change} to every row matching {@code where}, returning how many matched. */
    int update(java.util.function.BiPredicate<Integer, Object[]> where, BiConsumer<Integer, Object[]> change) {
      int n = 0;
      for (Map.Entry<Integer, Object[]> e : rows.entrySet()) {
        if (where.test(e.getKey(), e.getValue())) {
          change.accept(e.getKey(), e.getValue());
          n++;
        }
      }
      return n;
    }

    int delete(java.util.function.BiPredicate<Integer, Object[]> where) {
      int before = rows.size();
      rows.entrySet().removeIf(e -> where.test(e.getKey(), e.getValue()));
      return before - rows.size();
    }
  }

  private static BigDecimal dec(String s) {
    return new BigDecimal(s);
  }

  /** A row for key k as first inserted: ('v' || k, k * 1.5, DATE '2024-01-01' + k % 10). */
  private static Object[] initial(int k) {
    return new Object[] {"v" + k, BigDecimal.valueOf(k).multiply(dec("1.5")).setScale(2),
        LocalDate.of(2024, 1, 1).plusDays(k % 10)};
  }

  private static List<String> row(int k, String v, String n, String d) {
    return Arrays.asList(Canonical.value(k), Canonical.value(v), n == null ? "NULL" : Canonical.value(dec(n)),
        d == null ? "NULL" : Canonical.value(LocalDate.parse(d)));
  }

  private static String insertSql(String table, int from, int to) {
    List<String> values = new ArrayList<>();
    for (int k = from; k < to; k++) {
      Object[] r = initial(k);
      values.add("(" + k + ", '" + r[0] + "', " + ((BigDecimal) r[1]).toPlainString() + ", DATE '" + r[2] + "')");
    }
    return "INSERT INTO " + table + " VALUES " + String.join(", ", values);
  }

  /** Runs a Floe command and checks its PostgreSQL command tag. */
  private static void floe(SparkFloe sf, String sql, String expectedTag) {
    try (Result r = sf.floe.sql(sql)) {
      assertThat(r.commandTag()).as(sql).isEqualTo(expectedTag);
    }
  }

  /** Floe's rows equal the model's, Spark's equal Floe's; records the snapshot for time travel. */
  private static void check(SparkFloe sf, String table, String after, Model model,
      Map<Long, List<List<String>>> versions) {
    List<List<String>> floeRows = sf.floeRows("SELECT * FROM public." + table + " ORDER BY k");
    Canonical.assertSame("Floe after " + after + " (expected: PostgreSQL semantics)", model.canonical(), floeRows);
    List<List<String>> sparkRows = sf.sparkRows("SELECT * FROM floe.public." + table + " ORDER BY k");
    Canonical.assertSame("Spark after " + after + " (expected: Floe)", floeRows, sparkRows);
    versions.put(SparkMutationsReadByFloeTest.currentSnapshot(sf, table), floeRows);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void sparkReadsWhatFloeChanged(String name, String partitioning, String with) {
    SparkFloe sf = SparkFloe.get();
    String t = "fm_" + name;
    sf.floeExec("CREATE TABLE " + t + " (k integer NOT NULL, v text, n numeric(10,2), d date)" + partitioning
        + " WITH (" + with + ")");
    Model m = new Model();
    Map<Long, List<List<String>>> versions = new LinkedHashMap<>();

    // Two data files.
    floe(sf, insertSql(t, 1, 21), "INSERT 0 20");
    floe(sf, insertSql(t, 21, 41), "INSERT 0 20");
    for (int k = 1; k < 41; k++) {
      m.rows.put(k, initial(k));
    }
    check(sf, t, "INSERT", m, versions);

    String sql = "DELETE FROM " + t + " WHERE k % 5 = 0";
    floe(sf, sql, "DELETE " + m.delete((k, r) -> k % 5 == 0));
    check(sf, t, sql, m, versions);

    sql = "UPDATE " + t + " SET v = v || '-u', n = n + 100 WHERE k % 3 = 0";
    floe(sf, sql, "UPDATE " + m.update((k, r) -> k % 3 == 0, (k, r) -> {
      r[0] = r[0] + "-u";
      r[1] = ((BigDecimal) r[1]).add(dec("100"));
    }));
    check(sf, t, sql, m, versions);

    // More deletes in a file that already has some: a second delete file (v2) or a merged vector (v3).
    sql = "DELETE FROM " + t + " WHERE k BETWEEN 11 AND 14";
    floe(sf, sql, "DELETE " + m.delete((k, r) -> k >= 11 && k <= 14));
    check(sf, t, sql, m, versions);

    sql = "MERGE INTO " + t + " AS t USING (VALUES (1, 'm1'), (3, 'm3'), (50, 'm50'), (51, 'm51')) AS s(k, v)"
        + " ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v)";
    m.rows.get(1)[0] = "m1";
    m.rows.get(3)[0] = "m3";
    m.rows.put(50, new Object[] {"m50", null, null});
    m.rows.put(51, new Object[] {"m51", null, null});
    floe(sf, sql, "MERGE 4");
    check(sf, t, sql, m, versions);

    // MERGE with a condition, DELETE and DO NOTHING branches.
    sql = "MERGE INTO " + t + " AS t USING (VALUES (2, 'x'), (4, 'del'), (6, 'x'), (60, 'new')) AS s(k, v)"
        + " ON t.k = s.k"
        + " WHEN MATCHED AND s.v = 'del' THEN DELETE"
        + " WHEN MATCHED AND t.k % 3 = 0 THEN DO NOTHING"
        + " WHEN MATCHED THEN UPDATE SET n = t.n * 2, v = t.v || s.v"
        + " WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v, 0.5, DATE '2025-06-01')";
    m.rows.remove(4);
    m.rows.get(2)[1] = ((BigDecimal) m.rows.get(2)[1]).multiply(dec("2")).setScale(2);
    m.rows.get(2)[0] = m.rows.get(2)[0] + "x";
    m.rows.put(60, new Object[] {"new", dec("0.50"), LocalDate.of(2025, 6, 1)});
    floe(sf, sql, "MERGE 3"); // PostgreSQL counts rows inserted, updated or deleted, not DO NOTHING
    check(sf, t, sql, m, versions);

    sql = "UPDATE " + t + " SET n = NULL, d = NULL WHERE k = 7";
    floe(sf, sql, "UPDATE " + m.update((k, r) -> k == 7, (k, r) -> {
      r[1] = null;
      r[2] = null;
    }));
    check(sf, t, sql, m, versions);

    // Changing the key moves the row (and, partitioned by day(d), changing d moves it to another partition).
    sql = "UPDATE " + t + " SET k = k + 1000, d = DATE '2030-01-01' WHERE k IN (8, 9)";
    Object[] r8 = m.rows.remove(8);
    Object[] r9 = m.rows.remove(9);
    r8[2] = LocalDate.of(2030, 1, 1);
    r9[2] = LocalDate.of(2030, 1, 1);
    m.rows.put(1008, r8);
    m.rows.put(1009, r9);
    floe(sf, sql, "UPDATE 2");
    check(sf, t, sql, m, versions);

    // Every remaining row of the second file.
    sql = "DELETE FROM " + t + " WHERE k > 20 AND k <= 40";
    floe(sf, sql, "DELETE " + m.delete((k, r) -> k > 20 && k <= 40));
    check(sf, t, sql, m, versions);

    // Nothing matches: nothing changes (PostgreSQL: DELETE 0).
    sql = "DELETE FROM " + t + " WHERE k < 0";
    floe(sf, sql, "DELETE 0");
    Canonical.assertSame("Floe after " + sql, m.canonical(), sf.floeRows("SELECT * FROM " + t + " ORDER BY k"));
    Canonical.assertSame("Spark after " + sql, m.canonical(),
        sf.sparkRows("SELECT * FROM floe.public." + t + " ORDER BY k"));

    // The model's end state is what PostgreSQL 15 printed for the same statements.
    Canonical.assertSame("model vs PostgreSQL 15", List.of(
        row(1, "m1", "1.50", "2024-01-02"), row(2, "v2x", "6.00", "2024-01-03"), row(3, "m3", "104.50", "2024-01-04"),
        row(6, "v6-u", "109.00", "2024-01-07"), row(7, "v7", null, null), row(16, "v16", "24.00", "2024-01-07"),
        row(17, "v17", "25.50", "2024-01-08"), row(18, "v18-u", "127.00", "2024-01-09"),
        row(19, "v19", "28.50", "2024-01-10"), row(50, "m50", null, null), row(51, "m51", null, null),
        row(60, "new", "0.50", "2025-06-01"), row(1008, "v8", "12.00", "2030-01-01"),
        row(1009, "v9-u", "113.50", "2030-01-01")), m.canonical());

    // The deletes are of the kind the table's write modes ask for, so Spark read them.
    List<List<String>> deleteFiles = sf.sparkRows("SELECT DISTINCT content, file_format FROM floe.public." + t
        + ".all_delete_files");
    if (with.contains("copy-on-write")) {
      assertThat(deleteFiles).as("delete files of a copy-on-write table").isEmpty();
    } else if (with.contains("format_version = 2")) {
      assertThat(deleteFiles).as("v2 merge-on-read: position deletes").containsExactly(List.of("int:1", "text:PARQUET"));
    } else {
      assertThat(deleteFiles).as("v3 merge-on-read: deletion vectors").containsExactly(List.of("int:1", "text:PUFFIN"));
    }

    assertThat(versions).hasSize(9);
    for (Map.Entry<Long, List<List<String>>> v : versions.entrySet()) {
      Canonical.assertSame("Floe FOR VERSION AS OF " + v.getKey(), v.getValue(),
          sf.floeRows("SELECT * FROM " + t + " FOR VERSION AS OF " + v.getKey() + " ORDER BY k"));
      Canonical.assertSame("Spark VERSION AS OF " + v.getKey(), v.getValue(),
          sf.sparkRows("SELECT * FROM floe.public." + t + " VERSION AS OF " + v.getKey() + " ORDER BY k"));
    }
  }

  @Test
  void mergeUpsertOfTwoColumns() {
    for (int version : new int[] {2, 3}) {
      SparkFloe sf = SparkFloe.get();
      String t = "fm_merge_v" + version;
      sf.floeExec("CREATE TABLE " + t + " (k integer, v text) WITH (format_version = " + version + ")");
      floe(sf, "INSERT INTO " + t + " VALUES (1, 'a'), (2, 'b'), (3, 'c')", "INSERT 0 3");
      String sql = "MERGE INTO " + t + " AS t USING (VALUES (2, 'B'), (3, NULL), (4, 'D')) AS s(k, v) ON t.k = s.k"
          + " WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v)";
      floe(sf, sql, "MERGE 3");
      List<List<String>> expected = List.of(List.of("int:1", "text:a"), List.of("int:2", "text:B"),
          Arrays.asList("int:3", "NULL"), List.of("int:4", "text:D"));
      Canonical.assertSame("Floe v" + version, expected, sf.floeRows("SELECT * FROM " + t + " ORDER BY k"));
      Canonical.assertSame("Spark v" + version, expected,
          sf.sparkRows("SELECT * FROM floe.public." + t + " ORDER BY k"));
    }
  }

  @Test
  void insertOnConflict() {
    // PostgreSQL needs a unique index for ON CONFLICT (k): the primary key.
    SparkFloe sf = SparkFloe.get();
    String t = "fm_upsert";
    sf.floeExec("CREATE TABLE " + t + " (k integer PRIMARY KEY, v text, c integer) WITH (format_version = 3)");
    floe(sf, "INSERT INTO " + t + " VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 0)", "INSERT 0 3");
    floe(sf, "INSERT INTO " + t + " VALUES (2, 'B', 0), (4, 'd', 0) ON CONFLICT (k) DO NOTHING", "INSERT 0 1");
    floe(sf, "INSERT INTO " + t + " AS t VALUES (3, 'C', 0), (5, 'e', 0) ON CONFLICT (k)"
        + " DO UPDATE SET v = EXCLUDED.v, c = t.c + 1", "INSERT 0 2");
    List<List<String>> expected = List.of(List.of("int:1", "text:a", "int:0"), List.of("int:2", "text:b", "int:0"),
        List.of("int:3", "text:C", "int:1"), List.of("int:4", "text:d", "int:0"), List.of("int:5", "text:e", "int:0"));
    Canonical.assertSame("Floe", expected, sf.floeRows("SELECT * FROM " + t + " ORDER BY k"));
    Canonical.assertSame("Spark", expected, sf.sparkRows("SELECT * FROM floe.public." + t + " ORDER BY k"));
  }

  /**
   * A keyed tail (a tail and a primary key): its statements are versions in the log, and each seal folds them
   * into one snapshot with position deletes (v2) or deletion vectors (v3). Spark reads every sealed version as
   * Floe reads it, the current one and each earlier one by time travel.
   */
  @Test
  void sparkReadsEverySealedVersionOfAKeyedTail() {
    for (int version : new int[] {2, 3}) {
      SparkFloe sf = SparkFloe.get();
      String t = "fm_keyed_v" + version;
      sf.floeExec("CREATE TABLE " + t + " (k integer PRIMARY KEY, v text, c bigint) WITH (tail = true, format_version = "
          + version + ")");
      floe(sf, "INSERT INTO " + t + " VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 0), (4, 'd', 0)", "INSERT 0 4");
      Map<Long, List<List<String>>> sealed = new LinkedHashMap<>();
      List<List<String>> statements = List.of(
          List.of("UPDATE " + t + " SET c = c + 1 WHERE k = 1", "UPDATE 1", "DELETE FROM " + t + " WHERE k = 2",
              "DELETE 1", "INSERT INTO " + t + " VALUES (3, 'C', 5) ON CONFLICT (k) DO UPDATE SET v = excluded.v, c = "
                  + t + ".c + excluded.c", "INSERT 0 1", "INSERT INTO " + t + " VALUES (5, 'e', 0)", "INSERT 0 1",
              "UPDATE " + t + " SET v = upper(v) WHERE c = 0", "UPDATE 2"),
          List.of("UPDATE " + t + " SET c = c + 10 WHERE k = 1", "UPDATE 1", "UPDATE " + t + " SET c = c + 10 WHERE k = 1",
              "UPDATE 1", "DELETE FROM " + t + " WHERE k = 5", "DELETE 1", "INSERT INTO " + t + " VALUES (2, 'again', 2)",
              "INSERT 0 1", "UPDATE " + t + " SET k = 6 WHERE k = 4", "UPDATE 1"));
      for (int round = -1; round < statements.size(); round++) {
        if (round >= 0) {
          List<String> batch = statements.get(round);
          for (int i = 0; i < batch.size(); i += 2) {
            floe(sf, batch.get(i), batch.get(i + 1));
          }
        }
        sf.floe.openLog(t).seal(true);
        List<List<String>> floeRows = sf.floeRows("SELECT * FROM public." + t + " ORDER BY k");
        Canonical.assertSame("Spark after seal " + round, floeRows, sf.sparkRows("SELECT * FROM floe.public." + t
            + " ORDER BY k"));
        sealed.put(SparkMutationsReadByFloeTest.currentSnapshot(sf, t), floeRows);
      }
      sealed.forEach((snapshot, rows) -> Canonical.assertSame("Spark at sealed version " + snapshot, rows,
          sf.sparkRows("SELECT * FROM floe.public." + t + " VERSION AS OF " + snapshot + " ORDER BY k")));
    }
  }

  @Test
  void truncate() {
    for (int version : new int[] {2, 3}) {
      SparkFloe sf = SparkFloe.get();
      String t = "fm_truncate_v" + version;
      sf.floeExec("CREATE TABLE " + t + " (k integer, v text) WITH (format_version = " + version + ")");
      floe(sf, "INSERT INTO " + t + " VALUES (1, 'a'), (2, 'b')", "INSERT 0 2");
      long before = SparkMutationsReadByFloeTest.currentSnapshot(sf, t);
      floe(sf, "TRUNCATE TABLE " + t, "TRUNCATE TABLE");
      assertThat(sf.floeRows("SELECT * FROM " + t)).isEmpty();
      assertThat(sf.sparkRows("SELECT * FROM floe.public." + t)).isEmpty();
      // The old rows stay readable at the old snapshot.
      List<List<String>> old = List.of(List.of("int:1", "text:a"), List.of("int:2", "text:b"));
      Canonical.assertSame("Spark before TRUNCATE", old,
          sf.sparkRows("SELECT * FROM floe.public." + t + " VERSION AS OF " + before + " ORDER BY k"));
      floe(sf, "INSERT INTO " + t + " VALUES (3, 'c')", "INSERT 0 1");
      Canonical.assertSame("Spark after TRUNCATE and INSERT", List.of(List.of("int:3", "text:c")),
          sf.sparkRows("SELECT * FROM floe.public." + t));
    }
  }
  @Test
  void secondDeleteInDataFilesWhoseVectorsShareOnePuffinFile() {
    // v3: one DELETE touching two data files writes both deletion vectors into one Puffin file. The next DELETE in
    // those files must replace both vectors; a data file left with two vectors cannot be scanned by any Iceberg
    // reader ("Can't index multiple DVs").
    SparkFloe sf = SparkFloe.get();
    String t = "fm_two_dvs";
    sf.floeExec("CREATE TABLE " + t + " (k integer, v text) WITH (format_version = 3)");
    floe(sf, "INSERT INTO " + t + " VALUES (1, 'a'), (2, 'b'), (5, 'e')", "INSERT 0 3");
    floe(sf, "INSERT INTO " + t + " VALUES (3, 'c'), (4, 'd'), (6, 'f')", "INSERT 0 3");
    floe(sf, "DELETE FROM " + t + " WHERE k IN (1, 3)", "DELETE 2");
    floe(sf, "DELETE FROM " + t + " WHERE k IN (2, 4)", "DELETE 2");
    List<List<String>> expected = List.of(List.of("int:5", "text:e"), List.of("int:6", "text:f"));
    Canonical.assertSame("Floe", expected, sf.floeRows("SELECT * FROM " + t + " ORDER BY k"));
    Canonical.assertSame("Spark", expected, sf.sparkRows("SELECT * FROM floe.public." + t + " ORDER BY k"));
  }
}
