package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.SnapshotInfo;
import dev.floe.TableInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Spark creates Iceberg tables in {@code floe.public} and changes them with INSERT, UPDATE, DELETE and MERGE
 * INTO, merge-on-read (Parquet position deletes on v2, deletion vectors on v3) or copy-on-write. After every
 * statement Floe reads exactly the rows Spark reads; at the end every snapshot reads the same through Floe's
 * {@code FOR VERSION AS OF} as through Spark's {@code VERSION AS OF}.
 */
class SparkMutationsReadByFloeTest {
  private static final String COLUMNS = "id bigint, name string, amount decimal(10,2), qty int, score double,"
      + " ratio float, ts timestamp, ts_ntz timestamp_ntz, dt date, flag boolean, payload binary";

  private static final String MOR = "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read',"
      + " 'write.merge.mode' = 'merge-on-read'";
  private static final String COW = "'write.delete.mode' = 'copy-on-write', 'write.update.mode' = 'copy-on-write',"
      + " 'write.merge.mode' = 'copy-on-write'";

  static Stream<Arguments> layouts() {
    return Stream.of(
        Arguments.of("mor_v2", 2, MOR, ""),
        Arguments.of("mor_v3", 3, MOR, ""),
        Arguments.of("cow_v2", 2, COW, ""),
        Arguments.of("cow_v3", 3, COW, ""),
        Arguments.of("mor_v2_bucket", 2, MOR, " PARTITIONED BY (bucket(3, id))"),
        Arguments.of("mor_v3_days_flag", 3, MOR, " PARTITIONED BY (days(ts), flag)"));
  }

  /** Rows {@code from} to {@code to - 1} as a Spark query with the table's columns; {@code tag} varies the values. */
  private static String rows(long from, long to, String tag) {
    return "SELECT /*+ REPARTITION(2) */ id,"
        + " CASE WHEN id % 11 = 0 THEN NULL ELSE concat('" + tag + "', id) END AS name,"
        + " CAST(id * 1.25 AS DECIMAL(10,2)) AS amount,"
        + " CAST(id % 7 AS INT) AS qty,"
        + " CASE WHEN id % 6 = 0 THEN NULL ELSE CAST(id AS DOUBLE) / 3 END AS score,"
        + " CAST(id AS FLOAT) / 8 AS ratio,"
        + " timestamp_micros(1704067200000000 + id * 18000000123) AS ts,"
        + " CAST(timestamp_micros(1704067200000000 - id * 86400000001) AS TIMESTAMP_NTZ) AS ts_ntz,"
        + " date_add(DATE '2024-01-01', CAST(id AS INT)) AS dt,"
        + " id % 2 = 0 AS flag,"
        + " CASE WHEN id % 13 = 0 THEN NULL ELSE unhex(md5(concat('" + tag + "', id))) END AS payload"
        + " FROM range(" + from + ", " + to + ")";
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void floeReadsWhatSparkChanged(String name, int formatVersion, String modes, String partitioning) {
    SparkFloe sf = SparkFloe.get();
    String table = "sm_" + name;
    String spark = "floe.public." + table;
    sf.sparkExec("CREATE TABLE " + spark + " (" + COLUMNS + ") USING iceberg" + partitioning
        + " TBLPROPERTIES ('format-version' = '" + formatVersion + "', " + modes + ")");
    assertThat(sf.floe.table(table).formatVersion()).isEqualTo(formatVersion);
    assertThat(sf.floeRows("SELECT * FROM " + table)).isEmpty();

    // Each step's rows, keyed by the snapshot it made, for time travel at the end.
    Map<Long, List<List<String>>> versions = new LinkedHashMap<>();
    List<String> steps = List.of(
        "INSERT INTO " + spark + " " + rows(1, 61, "a"),
        "INSERT INTO " + spark + " " + rows(61, 81, "b"),
        "UPDATE " + spark + " SET amount = amount + 100, name = concat(name, '-u') WHERE id % 4 = 0",
        "DELETE FROM " + spark + " WHERE id % 5 = 0",
        // More deletes in files that already have some: a second delete file (v2) or a merged vector (v3).
        "DELETE FROM " + spark + " WHERE id BETWEEN 10 AND 14 OR id = 61",
        "MERGE INTO " + spark + " t USING (" + rows(70, 90, "m") + ") s ON t.id = s.id"
            + " WHEN MATCHED AND s.id % 2 = 0 THEN DELETE"
            + " WHEN MATCHED THEN UPDATE SET t.name = s.name, t.amount = s.amount, t.payload = s.payload"
            + " WHEN NOT MATCHED THEN INSERT *",
        "UPDATE " + spark + " SET score = NULL, name = NULL, ts = NULL WHERE id % 9 = 0",
        "UPDATE " + spark + " SET qty = qty + 1 WHERE id = 3",
        "DELETE FROM " + spark + " WHERE id > 85",
        "INSERT INTO " + spark + " " + rows(200, 203, "c"));
    for (String step : steps) {
      sf.sparkExec(step);
      List<List<String>> sparkRows = sf.sparkRows("SELECT * FROM " + spark + " ORDER BY id");
      List<List<String>> floeRows = sf.floeRows("SELECT * FROM public." + table + " ORDER BY id");
      Canonical.assertSame("after " + step, sparkRows, floeRows);
      versions.put(currentSnapshot(sf, table), sparkRows);
    }
    assertThat(versions).hasSize(steps.size());

    // The deletes are of the kind the layout asks for, so the reads above exercised them.
    List<List<String>> deleteFiles = sf.sparkRows("SELECT DISTINCT content, file_format FROM " + spark
        + ".all_delete_files");
    if (modes.equals(COW)) {
      assertThat(deleteFiles).isEmpty();
    } else if (formatVersion == 2) {
      assertThat(deleteFiles).containsExactly(List.of("int:1", "text:PARQUET"));
    } else {
      assertThat(deleteFiles).containsExactly(List.of("int:1", "text:PUFFIN"));
    }

    // Every snapshot through Floe equals what Spark read when it was current; a few also through Spark's
    // VERSION AS OF (the same rows, by Iceberg's rules; each Spark query costs ~0.3 s of CPU).
    List<Long> snapshots = new ArrayList<>(versions.keySet());
    for (int i = 0; i < snapshots.size(); i++) {
      long snapshot = snapshots.get(i);
      List<List<String>> expected = versions.get(snapshot);
      if (i == 0 || i == snapshots.size() / 2 || i == snapshots.size() - 2) {
        Canonical.assertSame("Spark VERSION AS OF " + snapshot, expected,
            sf.sparkRows("SELECT * FROM " + spark + " VERSION AS OF " + snapshot + " ORDER BY id"));
      }
      Canonical.assertSame("Floe FOR VERSION AS OF " + snapshot, expected,
          sf.floeRows("SELECT * FROM " + table + " FOR VERSION AS OF " + snapshot + " ORDER BY id"));
    }
  }

  /** The id of the table's current snapshot, as Floe sees it. */
  static long currentSnapshot(SparkFloe sf, String table) {
    TableInfo info = sf.floe.table(table);
    long version = info.currentVersion().orElseThrow();
    List<Long> ids = new ArrayList<>();
    for (SnapshotInfo s : info.snapshots()) {
      if (s.version() == version) {
        ids.add(s.snapshotId());
      }
    }
    assertThat(ids).hasSize(1);
    return ids.get(0);
  }
}
