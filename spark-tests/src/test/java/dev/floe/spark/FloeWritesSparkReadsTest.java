package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Floe creates and fills tables of every type it supports; Spark, through the Iceberg runtime and a JdbcCatalog
 * on the same catalog.db, reads exactly the same rows: whole tables, and with filters that make Spark prune by the
 * partition values and column bounds Floe wrote.
 */
class FloeWritesSparkReadsTest {
  /**
   * Every type Floe supports except {@code time}: Iceberg's Spark integration (1.12.0 on Spark 4.1) cannot load a
   * table that has a time column at all ("Spark does not support time fields"), even to read other columns. That
   * is pinned by {@link #sparkCannotLoadATableWithATimeColumn}.
   */
  private static final String COLUMNS = "id bigint NOT NULL, b boolean, s smallint, i integer, l bigint, r real,"
      + " d double precision, n numeric(10,2), n38 numeric(38,10), t text, vc varchar(20), dt date,"
      + " ts timestamp, tz timestamptz, u uuid, bin bytea";

  /** Edge values, as SQL literals (ids 1 to 5). */
  private static final List<String> EDGE_ROWS = List.of(
      "(1, true, -32768, -2147483648, -9223372036854775808, CAST('NaN' AS real), CAST('Infinity' AS double precision),"
          + " -12345678.90, -1234567890123456789012345678.0123456789, '', 'x', DATE '0001-01-01',"
          + " TIMESTAMP '0001-01-01 00:00:00', TIMESTAMPTZ '1900-01-01 00:00:00+00',"
          + " '00000000-0000-0000-0000-000000000000', unhex('00ff'))",
      "(2, false, 32767, 2147483647, 9223372036854775807, CAST('-0' AS real), -1.5e300, 0.01,"
          + " 9999999999999999999999999999.9999999999, 'héllo wörld 😀 it''s', 'ünï', DATE '1969-12-31',"
          + " TIMESTAMP '1969-12-31 23:59:59.999999', TIMESTAMPTZ '1969-12-31 23:59:59.999999+00',"
          + " 'ffffffff-ffff-ffff-ffff-ffffffffffff', unhex(''))",
      "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
      "(4, true, 0, 0, 0, 1.5, 0.1, 0.00, 0.0000000001, 'a longer text value that exceeds sixteen characters',"
          + " '', DATE '2024-02-29', TIMESTAMP '2024-02-29 12:34:56.789012',"
          + " TIMESTAMPTZ '2024-02-29 12:34:56.789012+00', '123e4567-e89b-12d3-a456-426614174000', unhex('0102030405'))",
      "(5, false, 1, 1, 1, -3.25, CAST('-0' AS double precision), 1.00, 1, 'a', 'b', DATE '2024-03-01',"
          + " TIMESTAMP '2024-03-01 00:00:00', TIMESTAMPTZ '2024-03-01 00:00:00+00',"
          + " '80000000-0000-0000-0000-000000000000', unhex('deadbeef'))");

  /** 200 more rows (ids 10 to 209) spread over many partitions, some NULLs. */
  private static final String GENERATED_ROWS = "SELECT g,"
      + " CASE WHEN g % 7 = 0 THEN NULL ELSE g % 3 = 0 END,"
      + " CAST(g % 200 - 100 AS smallint),"
      + " CAST(g * 7919 AS integer),"
      + " CAST(g AS bigint) * 1000000007,"
      + " CAST(g AS real) / 4,"
      + " CASE WHEN g % 11 = 0 THEN NULL ELSE CAST(g AS double) / 3 END,"
      + " CAST(g * 0.25 AS decimal(10,2)),"
      + " CAST(g AS decimal(38,10)) / 7,"
      + " 'row-' || g,"
      + " CASE WHEN g % 13 = 0 THEN NULL ELSE repeat('v', CAST(g % 20 AS integer)) END,"
      + " DATE '2024-01-01' + CAST(g AS integer),"
      + " TIMESTAMP '2024-01-01 00:00:00' + to_hours(g * 7) + to_microseconds(g),"
      + " TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_hours(g * 5) + to_microseconds(g),"
      + " CAST(md5('u' || g) AS uuid),"
      + " CASE WHEN g % 17 = 0 THEN NULL ELSE unhex(md5('b' || g)) END"
      + " FROM range(10, 210) AS r(g)";

  /**
   * Table layouts, each with the predicates that prune by its partition fields (the unpartitioned ones get
   * every predicate: they prune by column bounds only).
   */
  static Stream<Arguments> layouts() {
    return Stream.of(
        Arguments.of("plain_v2", "", 2, List.of()),
        Arguments.of("plain_v3", "", 3, List.of()),
        Arguments.of("ident_day_v2", " PARTITIONED BY (b, day(ts))", 2, List.of("b = true", "b IS NULL", "ts >=", "ts <")),
        Arguments.of("bucket_trunc_v2", " PARTITIONED BY (bucket(4, id), truncate(3, t))", 2,
            List.of("id = 42", "id IN", "t =", "t >=")),
        Arguments.of("day_bucket_trunc_v3", " PARTITIONED BY (day(tz), bucket(3, u), truncate(2, n))", 3,
            List.of("tz <", "n = ", "n < ")),
        Arguments.of("ident_month_hour_v3", " PARTITIONED BY (s, month(dt), hour(tz), bucket(2, bin))", 3,
            List.of("s =", "dt =", "dt BETWEEN", "tz <")),
        Arguments.of("ident_date_v2", " PARTITIONED BY (dt, bucket(5, vc))", 2, List.of("dt =", "dt BETWEEN", "vc =")));
  }

  /** Predicates as Floe and as Spark write them (Spark's TIMESTAMP literal is with local time zone). */
  private static final List<Map.Entry<String, String>> FILTERS = List.of(
      Map.entry("id = 42", "id = 42"),
      Map.entry("id IN (1, 2, 3, 150)", "id IN (1, 2, 3, 150)"),
      Map.entry("b = true", "b = true"),
      Map.entry("b IS NULL", "b IS NULL"),
      Map.entry("s = -58", "s = -58"),
      Map.entry("t = 'row-42'", "t = 'row-42'"),
      Map.entry("t >= 'row-1' AND t < 'row-2'", "t >= 'row-1' AND t < 'row-2'"),
      Map.entry("vc = 'vvvvv'", "vc = 'vvvvv'"),
      Map.entry("n = 10.50", "n = 10.50"),
      Map.entry("n < 0", "n < 0"),
      Map.entry("dt = DATE '2024-02-29'", "dt = DATE '2024-02-29'"),
      Map.entry("dt BETWEEN DATE '2024-03-01' AND DATE '2024-03-10'", "dt BETWEEN DATE '2024-03-01' AND DATE '2024-03-10'"),
      Map.entry("ts >= TIMESTAMP '2024-02-01 00:00:00'", "ts >= TIMESTAMP_NTZ '2024-02-01 00:00:00'"),
      Map.entry("ts < TIMESTAMP '1970-01-01 00:00:00'", "ts < TIMESTAMP_NTZ '1970-01-01 00:00:00'"),
      Map.entry("tz < TIMESTAMPTZ '2024-01-05 00:00:00+00'", "tz < TIMESTAMP '2024-01-05 00:00:00Z'"),
      // No uuid predicates: see uuidBoundsMispruneInIcebergItself.
      Map.entry("i > 1000000 OR l < 0", "i > 1000000 OR l < 0"));

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void sparkReadsWhatFloeWrote(String name, String partitioning, int formatVersion, List<String> filterPrefixes) {
    SparkFloe sf = SparkFloe.get();
    String table = "fw_" + name;
    sf.floeExec("CREATE TABLE " + table + " (" + COLUMNS + ")" + partitioning + " WITH (format_version = "
        + formatVersion + ")");
    // Several statements: several snapshots and data files.
    sf.floeExec("INSERT INTO " + table + " VALUES " + String.join(", ", EDGE_ROWS.subList(0, 3)));
    sf.floeExec("INSERT INTO " + table + " VALUES " + String.join(", ", EDGE_ROWS.subList(3, 5)));
    sf.floeExec("INSERT INTO " + table + " " + GENERATED_ROWS);

    assertThat(sf.floeRows("SELECT count(*) FROM " + table)).containsExactly(List.of("long:205"));
    assertThat(sf.sparkRows("SHOW TBLPROPERTIES floe.public." + table + " ('format-version')"))
        .containsExactly(List.of("text:format-version", "text:" + formatVersion));

    String cols = "*";
    same("whole table", sf.floeRows("SELECT " + cols + " FROM " + table + " ORDER BY id"),
        sf.sparkRows("SELECT " + cols + " FROM floe.public." + table + " ORDER BY id"));
    for (Map.Entry<String, String> f : FILTERS) {
      if (!filterPrefixes.isEmpty() && filterPrefixes.stream().noneMatch(f.getKey()::startsWith)) {
        continue;
      }
      same("WHERE " + f.getKey(),
          sf.floeRows("SELECT " + cols + " FROM " + table + " WHERE " + f.getKey() + " ORDER BY id"),
          sf.sparkRows("SELECT " + cols + " FROM floe.public." + table + " WHERE " + f.getValue() + " ORDER BY id"));
    }
  }

  @Test
  void sparkCannotLoadATableWithATimeColumn() {
    // Iceberg's TypeToSparkType has no mapping for Iceberg time (Spark 4.1's TIME type is not used by Iceberg
    // 1.12.0), so loading the table fails before any column is chosen. If this starts to pass, Spark can read
    // Floe's time columns: extend COLUMNS above and docs/spark.md.
    SparkFloe sf = SparkFloe.get();
    sf.floeExec("CREATE TABLE fw_time (id bigint, tm time)");
    sf.floeExec("INSERT INTO fw_time VALUES (1, TIME '12:34:56.789012')");
    assertThatThrownBy(() -> sf.sparkRows("SELECT id FROM floe.public.fw_time"))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("Spark does not support time fields");
  }

  @Test
  void uuidBoundsMispruneInIcebergItself() {
    // Iceberg 1.12.0 compares uuid bounds as signed longs while Parquet (and every writer, Iceberg's own included)
    // orders them as unsigned bytes (apache/iceberg#14500). A file holding 123e4567-... and 80000000-... is
    // pruned for `u = '123e4567-...'`. Here Spark itself writes that file (into a uuid column: Spark SQL cannot
    // declare one, so Floe creates the table) and then misses its own row; so the uuid predicates are left out of
    // FILTERS, the loss is not Floe's. When this starts to fail, Iceberg is fixed: put uuid predicates back.
    SparkFloe sf = SparkFloe.get();
    sf.floeExec("CREATE TABLE fw_spark_uuid (id bigint, u uuid)");
    sf.sparkExec("INSERT INTO floe.public.fw_spark_uuid SELECT /*+ COALESCE(1) */ * FROM VALUES"
        + " (4L, '123e4567-e89b-12d3-a456-426614174000'), (5L, '80000000-0000-0000-0000-000000000000') AS v(id, u)");
    assertThat(sf.floeRows("SELECT count(*) FROM \"fw_spark_uuid$files\"")).containsExactly(List.of("long:1"));
    assertThat(sf.sparkRows("SELECT id FROM floe.public.fw_spark_uuid")).hasSize(2);
    assertThat(sf.sparkRows("SELECT id FROM floe.public.fw_spark_uuid WHERE u = '123e4567-e89b-12d3-a456-426614174000'"))
        .isEmpty();
    // Floe does not use Iceberg's evaluator for uuid bounds in the same way: it finds the row.
    assertThat(sf.floeRows("SELECT id FROM fw_spark_uuid WHERE u = '123e4567-e89b-12d3-a456-426614174000'"))
        .containsExactly(List.of("long:4"));
  }

  /** The same query through Spark and through Floe. */
  private static void sameQuery(SparkFloe sf, String table, String where) {
    String w = where == null ? "" : " WHERE " + where;
    same(table + w, sf.floeRows("SELECT * FROM " + table + w + " ORDER BY id"),
        sf.sparkRows("SELECT * FROM floe.public." + table + w + " ORDER BY id"));
  }

  @Test
  void schemaEvolutionAndV3DefaultsByFloe() {
    SparkFloe sf = SparkFloe.get();
    sf.floeExec("CREATE TABLE fw_evo (id bigint, a integer, r real, n numeric(5,2), s varchar(5))"
        + " PARTITIONED BY (bucket(2, id))");
    sf.floeExec("INSERT INTO fw_evo VALUES (1, 1, 1.5, 1.25, 'a'), (2, 2, 2.5, 2.5, 'b')");
    sf.floeExec("ALTER TABLE fw_evo RENAME COLUMN s TO label");
    sameQuery(sf, "fw_evo", "label = 'a'");
    sf.floeExec("ALTER TABLE fw_evo ALTER COLUMN a TYPE bigint");
    sf.floeExec("ALTER TABLE fw_evo ALTER COLUMN r TYPE double precision");
    sf.floeExec("ALTER TABLE fw_evo ALTER COLUMN n TYPE numeric(12,2)");
    sameQuery(sf, "fw_evo", null);
    // A new column with a dropped column's name: the old values must not come back.
    sf.floeExec("ALTER TABLE fw_evo DROP COLUMN label");
    sf.floeExec("ALTER TABLE fw_evo ADD COLUMN label text");
    sf.floeExec("ALTER TABLE fw_evo SET (partitioning = ARRAY['truncate(2, label)'])");
    sf.floeExec("INSERT INTO fw_evo VALUES (3, 3, 3.5, 3.75, 'new')");
    sameQuery(sf, "fw_evo", null);
    sameQuery(sf, "fw_evo", "label = 'new'");
    sameQuery(sf, "fw_evo", "label IS NULL");
    assertThat(sf.sparkRows("SELECT count(*) FROM floe.public.fw_evo WHERE label IS NULL"))
        .containsExactly(List.of("long:2"));

    // v3 column defaults: rows written before the column existed read its initial default, in Spark too.
    sf.floeExec("CREATE TABLE fw_default (id bigint) WITH (format_version = 3)");
    sf.floeExec("INSERT INTO fw_default VALUES (1), (2)");
    sf.floeExec("ALTER TABLE fw_default ADD COLUMN c integer DEFAULT 7");
    sf.floeExec("ALTER TABLE fw_default ADD COLUMN s text NOT NULL DEFAULT 'dflt'");
    sf.floeExec("INSERT INTO fw_default (id) VALUES (3)");
    sf.floeExec("INSERT INTO fw_default VALUES (4, NULL, 'given')");
    same("fw_default", List.of(List.of("long:1", "int:7", "text:dflt"), List.of("long:2", "int:7", "text:dflt"),
        List.of("long:3", "int:7", "text:dflt"), java.util.Arrays.asList("long:4", "NULL", "text:given")),
        sf.sparkRows("SELECT * FROM floe.public.fw_default ORDER BY id"));
    sameQuery(sf, "fw_default", null);
  }

  @Test
  void identityPartitionValuesWithSpecialCharacters() {
    SparkFloe sf = SparkFloe.get();
    // Characters that partition paths escape (Iceberg's data file paths carry the values URL-encoded).
    List<String> values = List.of("a/b", "x=y", "50%", "ünï 😀", "", "sp ace", "?#&", "a+b", "..");
    sf.floeExec("CREATE TABLE fw_part (id bigint, p text) PARTITIONED BY (p)");
    StringBuilder insert = new StringBuilder("INSERT INTO fw_part VALUES (0, NULL)");
    for (int i = 0; i < values.size(); i++) {
      insert.append(", (").append(i + 1).append(", '").append(values.get(i)).append("')");
    }
    sf.floeExec(insert.toString());
    sameQuery(sf, "fw_part", null);
    sameQuery(sf, "fw_part", "p IS NULL");
    for (String v : values) {
      sameQuery(sf, "fw_part", "p = '" + v + "'");
    }
  }

  @Test
  void createTableAsSortedBy() {
    SparkFloe sf = SparkFloe.get();
    sf.floeExec("CREATE TABLE fw_ctas WITH (sorted_by = ARRAY['v DESC']) AS"
        + " SELECT CAST(range AS bigint) AS id, CAST(range % 7 AS integer) AS v FROM range(0, 30)");
    sameQuery(sf, "fw_ctas", null);
    sameQuery(sf, "fw_ctas", "v = 3");
  }

  /**
   * A table with a tail: Spark reads what Floe sealed, offsets included, and sees unsealed rows once a
   * seal puts them in the table; Floe reads both tiers.
   */
  @Test
  void sparkReadsSealedTailRows() {
    SparkFloe sf = SparkFloe.get();
    dev.floe.Log log = sf.floe.newLog("fw_tail", "id bigint NOT NULL, ts timestamptz, s text", "ts");
    for (int i = 0; i < 50; i++) {
      log.append((long) i, java.time.Instant.parse("2026-01-01T00:00:00Z").plusSeconds(50 - i), "s" + i);
    }
    log.seal(true);
    log.append(50L, java.time.Instant.parse("2026-01-02T00:00:00Z"), "unsealed");
    assertThat(sf.sparkRows("SELECT count(*), max(_offset) FROM floe.public.fw_tail"))
        .containsExactly(List.of("long:50", "long:49"));
    assertThat(sf.floeRows("SELECT count(*), max(_offset) FROM fw_tail"))
        .containsExactly(List.of("long:51", "long:50"));
    log.advance(true);
    sameQuery(sf, "fw_tail", null);
    sameQuery(sf, "fw_tail", "_offset >= 25");
  }

  private static void same(String what, List<List<String>> floe, List<List<String>> spark) {
    Canonical.assertSame(what + " (expected: Floe, actual: Spark)", floe, spark);
  }
}
