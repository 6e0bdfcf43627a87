package dev.floe.trino;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every Iceberg type both engines write, each way: a row of values and a row of NULLs written by Trino and read by
 * Floe, the same row written by Floe and read by Trino, and both read back as the same values.
 */
class TypesRoundTripTest {
  private TrinoFloe tf;

  /** The row both engines write, as the canonical values both drivers must return. */
  static final List<String> VALUES = List.of("bool:true", "int:-7", "long:9000000000", "float:1.5/3fc00000",
      "double:-2.25/c002000000000000", "decimal:123456789.123", "text:héllo ✓ 'q'", "date:2024-02-29",
      "time:23:59:58.123456", "timestamp:2024-01-02T03:04:05.123456", "timestamptz:2024-01-02T03:04:05.654321Z",
      "bytes:00ff10", "text:6f1c1e9a-0d5e-4b1e-9a43-3c1f0c2f5a77");
  static final List<String> NULLS = Collections.nCopies(VALUES.size(), "NULL");
  static final String COLUMNS = "b, i, l, r, d, dec, s, dt, tm, ts, tz, bin, u";

  @BeforeEach
  void start() {
    tf = TrinoFloe.get(); // the first test starts both servers; each test is skipped if no Java 24+ exists
  }

  @Test
  void trinoWritesEveryTypeFloeReadsIt() throws Exception {
    tf.trinoSchema("types_t");
    tf.trino("CREATE TABLE floe.types_t.t (b boolean, i integer, l bigint, r real, d double, dec decimal(12,3), "
        + "s varchar, dt date, tm time(6), ts timestamp(6), tz timestamp(6) with time zone, bin varbinary, u uuid)");
    tf.trino("INSERT INTO floe.types_t.t VALUES (true, -7, 9000000000, REAL '1.5', DOUBLE '-2.25', "
        + "DECIMAL '123456789.123', 'héllo ✓ ''q''', DATE '2024-02-29', TIME '23:59:58.123456', "
        + "TIMESTAMP '2024-01-02 03:04:05.123456', TIMESTAMP '2024-01-02 03:04:05.654321 UTC', X'00ff10', "
        + "UUID '6f1c1e9a-0d5e-4b1e-9a43-3c1f0c2f5a77'), "
        + "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)");
    String order = " ORDER BY i NULLS LAST";
    assertThat(tf.trino("SELECT " + COLUMNS + " FROM floe.types_t.t" + order)).containsExactly(VALUES, NULLS);
    assertThat(tf.floe("SELECT " + COLUMNS + " FROM types_t.t" + order)).containsExactly(VALUES, NULLS);
  }

  @Test
  void floeWritesEveryTypeTrinoReadsIt() throws Exception {
    tf.floeExec("CREATE SCHEMA types_f",
        "CREATE TABLE types_f.t (b boolean, i int, l bigint, r real, d double precision, dec numeric(12,3), s text, "
            + "dt date, tm time, ts timestamp, tz timestamptz, bin bytea, u uuid)",
        "INSERT INTO types_f.t VALUES (true, -7, 9000000000, 1.5, -2.25, 123456789.123, 'héllo ✓ ''q''', "
            + "'2024-02-29', '23:59:58.123456', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.654321+00', "
            + "'\\x00ff10', '6f1c1e9a-0d5e-4b1e-9a43-3c1f0c2f5a77'), "
            + "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)");
    String order = " ORDER BY i NULLS LAST";
    assertThat(tf.floe("SELECT " + COLUMNS + " FROM types_f.t" + order)).containsExactly(VALUES, NULLS);
    assertThat(tf.trino("SELECT " + COLUMNS + " FROM floe.types_f.t" + order)).containsExactly(VALUES, NULLS);
    // Trino's own predicates over Floe's values (pushed into the Parquet reader as ranges)
    assertThat(tf.trino("SELECT count(*) FROM floe.types_f.t WHERE dec = DECIMAL '123456789.123' "
        + "AND ts = TIMESTAMP '2024-01-02 03:04:05.123456' AND u = UUID '6f1c1e9a-0d5e-4b1e-9a43-3c1f0c2f5a77' "
        + "AND bin = X'00ff10' AND s LIKE 'h%'")).containsExactly(List.of("long:1"));
  }
}
