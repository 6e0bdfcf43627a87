package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.exec.ArrowValues;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bytes {@link ArrowText} and {@link CopyEncoder} write straight from Arrow vectors are the bytes of the
 * way through Java values ({@link ArrowValues}, {@link PgValues}, {@link CopyFormats#line}), for every type's
 * edges and many values in between, in several time zones. (What those bytes are beside PostgreSQL's own is
 * checked against a real PostgreSQL by the server's CopyOutTest.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ArrowTextTest {
  @TempDir
  static Path dir;
  Database db;

  /**
   * Edge values, one row each, then 20,000 generated rows, then a row of NULLs (in a later batch than the
   * last NULL of most columns).
   */
  private static final String VALUES = """
      SELECT * FROM (VALUES
        (true, 0::tinyint, 0::smallint, 0::int, 0::bigint, 0::decimal(4,2), 0::decimal(18,6), 0::decimal(38,9),
         'plain', date '2024-02-29', time '00:00:00', timestamp '2024-02-29 12:34:56',
         timestamptz '2024-02-29 12:34:56.5+00', 1.5::real, 0.1::double, uuid '6b8a6c38-8bb0-4e0e-a1a0-2f2e6e0f0d4e',
         '\\x00ff'::bytea, [1, NULL, 3], 123::hugeint),
        (false, (-128)::tinyint, (-32768)::smallint, (-2147483648)::int, (-9223372036854775807 - 1)::bigint,
         (-99.99)::decimal(4,2), (-999999999999.999999)::decimal(18,6),
         (-99999999999999999999999999999.999999999)::decimal(38,9), '', date '0001-01-01', time '23:59:59.999999',
         timestamp '0001-01-01 00:00:00', timestamptz '0001-01-01 00:00:00+00', 'NaN'::real, '-Infinity'::double,
         NULL, ''::bytea, [], (-170141183460469231731687303715884105727)::hugeint),
        (NULL, 127::tinyint, 32767::smallint, 2147483647::int, 9223372036854775807::bigint, 0.01::decimal(4,2),
         (-0.000001)::decimal(18,6), 9223372036854775807.000000001::decimal(38,9), E'tab\\there\\nline\\\\back,comma"quote',
         date '9999-12-31', time '12:00:00.000001', timestamp '9999-12-31 23:59:59.999999',
         timestamptz '9999-12-31 23:59:59.999999+00', (-0.0)::real, 1e300::double, NULL, NULL, NULL, NULL),
        (NULL, NULL, NULL, NULL, NULL, (-0.05)::decimal(4,2), 123456789012.345678::decimal(18,6),
         (-0.000000001)::decimal(38,9), '\\.', date '0044-03-15' - 32000, NULL, timestamp '0044-03-15 10:00:00' - INTERVAL 16000 YEAR,
         timestamptz '0001-01-01 00:00:00+00' - INTERVAL 1 SECOND, NULL, NULL, NULL, NULL, NULL, NULL),
        (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'NULL', date '10000-01-01', NULL,
         timestamp '10000-01-01 00:00:00', timestamptz '10000-01-01 00:00:00+00', NULL, NULL, NULL, NULL, NULL, NULL),
        (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'héllo wörld ✓', 'infinity'::date, NULL,
         'infinity'::timestamp, '-infinity'::timestamptz, NULL, NULL, NULL, NULL, NULL, NULL),
        (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, E'\\x01\\x08\\x0b\\x0c\\r', '-infinity'::date, NULL,
         '-infinity'::timestamp, 'infinity'::timestamptz, NULL, NULL, NULL, NULL, NULL, NULL)
      ) AS e(b, ti, si, i, bi, d1, d2, d3, s, dt, tm, ts, tz, r, f, u, bt, arr, h)
      UNION ALL
      SELECT i % 3 = 0, (i % 256 - 128)::tinyint, (i * 7 % 65536 - 32768)::smallint,
        ((hash(i) % 4294967296)::bigint - 2147483648)::int, (hash(i * 31) % 9223372036854775807)::bigint * CASE WHEN i % 2 = 0 THEN -1 ELSE 1 END,
        ((hash(i) % 19999)::int - 9999) / 100.0,
        ((hash(i * 3) % 1999999999999)::bigint - 999999999999)::decimal(18,0) / 1000000,
        ((hash(i * 5) % 1999999999999999)::bigint - 999999999999999)::decimal(38,9) / 1000,
        'row ' || i || CASE WHEN i % 97 = 0 THEN E'\\t,' ELSE '' END,
        date '1970-01-01' + ((hash(i * 11) % 5000000)::int - 2500000),
        make_time(0, 0, 0) + to_microseconds((hash(i * 13) % 86400000000)::bigint),
        make_timestamp(((hash(i * 17) % 500000000000000000)::bigint - 250000000000000000)),
        make_timestamp(((hash(i * 19) % 500000000000000000)::bigint - 250000000000000000))::timestamptz,
        (i / 7.0)::real, i / 3.0 * CASE WHEN i % 2 = 0 THEN 1e-5 ELSE 1e10 END, NULL, NULL, NULL, NULL
      FROM range(20000) AS g(i)
      UNION ALL
      SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL""";

  @BeforeAll
  void open() {
    db = Floe.open(dir);
  }

  @AfterAll
  void close() {
    db.close();
  }

  private static final List<ZoneId> ZONES = List.of(ZoneOffset.UTC, ZoneId.of("America/New_York"),
      ZoneId.of("Asia/Kolkata"), ZoneId.of("Europe/Amsterdam"), ZoneOffset.ofHoursMinutes(-3, -30));

  interface BatchCheck {
    void check(List<Column> columns, List<FieldVector> vectors, int rows) throws Exception;
  }

  private long eachBatch(BatchCheck check) throws Exception {
    long rows = 0;
    try (Result r = db.sql(VALUES)) {
      ArrowReader reader = r.arrow();
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        check.check(r.columns(), root.getFieldVectors(), root.getRowCount());
        rows += root.getRowCount();
      }
    }
    return rows;
  }

  @Test
  void textIsPgValuesText() throws Exception {
    for (ZoneId zone : ZONES) {
      long rows = eachBatch((columns, vectors, n) -> {
        OutBuffer out = new OutBuffer(16);
        for (int k = 0; k < vectors.size(); k++) {
          FieldVector v = vectors.get(k);
          ArrowText.Encoder e = ArrowText.text(v, columns.get(k), zone);
          for (int row = 0; row < n; row++) {
            if (v.isNull(row)) {
              continue;
            }
            out.len = 0;
            e.write(out, row);
            String expected = new String(PgValues.text(ArrowValues.get(v, row, columns.get(k)), zone),
                StandardCharsets.UTF_8);
            assertThat(new String(out.buf, 0, out.len, StandardCharsets.UTF_8))
                .as("column %s row %d in %s", columns.get(k).name(), row, zone).isEqualTo(expected);
          }
        }
      });
      assertThat(rows).isEqualTo(20008);
    }
  }

  @Test
  void binaryIsPgValuesBinary() throws Exception {
    for (ZoneId zone : List.of(ZoneOffset.UTC, ZoneId.of("Asia/Kolkata"))) {
      eachBatch((columns, vectors, n) -> {
        OutBuffer out = new OutBuffer(16);
        for (int k = 0; k < vectors.size(); k++) {
          FieldVector v = vectors.get(k);
          PgType type = PgType.of(columns.get(k).type());
          ArrowText.Encoder e = ArrowText.binary(v, columns.get(k), type, zone);
          for (int row = 0; row < n; row++) {
            if (v.isNull(row)) {
              continue;
            }
            out.len = 0;
            e.write(out, row);
            byte[] expected = PgValues.binary(ArrowValues.get(v, row, columns.get(k)), type, zone);
            assertThat(HexFormat.of().formatHex(Arrays.copyOf(out.buf, out.len)))
                .as("column %s row %d", columns.get(k).name(), row).isEqualTo(HexFormat.of().formatHex(expected));
          }
        }
      });
    }
  }

  @Test
  void copyLinesAreCopyFormatsLines() throws Exception {
    List<String> options = List.of("", "(DELIMITER ',')", "(DELIMITER '|', NULL 'NULL')", "(FORMAT csv)",
        "(FORMAT csv, DELIMITER ';', NULL 'NULL', QUOTE '''', ESCAPE '\\')", "(FORMAT csv, DELIMITER E'\\t')",
        "(DELIMITER '-')", "(DELIMITER 'n')");
    for (String o : options) {
      Copy c = Copy.parse("COPY (SELECT 1) TO STDOUT " + o);
      ZoneId zone = ZoneId.of("America/New_York");
      CopyEncoder[] encoders = new CopyEncoder[2]; // one for every batch
      eachBatch((columns, vectors, n) -> {
        if (encoders[0] == null) {
          encoders[0] = new CopyEncoder(c, columns, zone);
          encoders[1] = new CopyEncoder(c, columns.subList(8, 9), zone);
        }
        CopyEncoder encoder = encoders[0];
        OutBuffer out = new OutBuffer(16);
        encoder.batch(vectors);
        for (int row = 0; row < n; row++) {
          out.len = 0;
          encoder.row(out, row);
          Object[] values = new Object[vectors.size()];
          for (int k = 0; k < values.length; k++) {
            values[k] = ArrowValues.get(vectors.get(k), row, columns.get(k));
          }
          assertThat(new String(out.buf, 0, out.len, StandardCharsets.UTF_8)).as("%s row %d", o, row)
              .isEqualTo(c.line(values, zone));
        }
        // one column: a lone \. is quoted in CSV
        CopyEncoder single = encoders[1];
        single.batch(vectors.subList(8, 9));
        for (int row = 0; row < n; row++) {
          out.len = 0;
          single.row(out, row);
          Object[] values = {ArrowValues.get(vectors.get(8), row, columns.get(8))};
          assertThat(new String(out.buf, 0, out.len, StandardCharsets.UTF_8)).isEqualTo(c.line(values, zone));
        }
      });
    }
  }

  @Test
  void copyBinaryTuplesArePgValuesBinary() throws Exception {
    Copy c = Copy.parse("COPY (SELECT 1) TO STDOUT (FORMAT binary)");
    CopyEncoder[] encoders = new CopyEncoder[1]; // one for every batch
    eachBatch((columns, vectors, n) -> {
      if (encoders[0] == null) {
        encoders[0] = new CopyEncoder(c, columns, ZoneOffset.UTC);
      }
      CopyEncoder encoder = encoders[0];
      encoder.batch(vectors);
      OutBuffer out = new OutBuffer(16);
      OutBuffer expected = new OutBuffer(16);
      for (int row = 0; row < n; row++) {
        out.len = 0;
        encoder.row(out, row);
        expected.len = 0;
        expected.putShort(vectors.size());
        for (int k = 0; k < vectors.size(); k++) {
          byte[] b = PgValues.binary(ArrowValues.get(vectors.get(k), row, columns.get(k)),
              PgType.of(columns.get(k).type()), ZoneOffset.UTC);
          if (b == null) {
            expected.putInt(-1);
          } else {
            expected.putInt(b.length);
            expected.put(b);
          }
        }
        assertThat(Arrays.copyOf(out.buf, out.len)).isEqualTo(Arrays.copyOf(expected.buf, expected.len));
      }
    });
  }

  @Test
  void doublesArePgValuesText() {
    java.util.Random random = new java.util.Random(42);
    OutBuffer out = new OutBuffer(1);
    int fast = 0;
    for (int i = 0; i < 2_000_000; i++) {
      double d = switch (i % 5) {
        case 0 -> Double.longBitsToDouble(random.nextLong());
        case 1 -> random.nextInt(2_000_000) / Math.pow(10, random.nextInt(12)) - 1000;
        case 2 -> random.nextDouble() * Math.pow(10, random.nextInt(40) - 20);
        case 3 -> (double) random.nextLong() / (1L << random.nextInt(63));
        default -> Math.nextUp(random.nextInt(100_000) / 1000.0) * (random.nextBoolean() ? 1 : -1);
      };
      out.len = 0;
      if (ArrowText.putDouble(out, d)) {
        fast++;
        assertThat(new String(out.buf, 0, out.len, StandardCharsets.US_ASCII)).as("%s", d)
            .isEqualTo(new String(PgValues.text(d, ZoneOffset.UTC), StandardCharsets.US_ASCII));
      }
    }
    for (double d : new double[] {1e-4, 9.999999999999999e14, 1e15, 0.1, 0.3, 1.0 / 3, 2.0 / 3, 123456789012345.0,
        12345678901234.5, 0.00012345678901234, 1.7976931348623157e308, 4.9e-324, -1e-4, 5e-5}) {
      out.len = 0;
      if (ArrowText.putDouble(out, d)) {
        assertThat(new String(out.buf, 0, out.len, StandardCharsets.US_ASCII)).as("%s", d)
            .isEqualTo(new String(PgValues.text(d, ZoneOffset.UTC), StandardCharsets.US_ASCII));
      }
    }
    assertThat(fast).as("values written by the fast path").isGreaterThan(300_000);
  }

  @Test
  void longsAndDecimalsAtEveryLength() {
    OutBuffer out = new OutBuffer(1);
    List<String> seen = new ArrayList<>();
    for (long v = 1; v > 0 && v < Long.MAX_VALUE / 3; v = v * 10 + 7) {
      for (long x : new long[] {v, -v, v - 1, -(v - 1)}) {
        out.len = 0;
        ArrowText.putLong(out, x);
        assertThat(new String(out.buf, 0, out.len, StandardCharsets.US_ASCII)).isEqualTo(Long.toString(x));
        for (int scale = 1; scale <= 20; scale++) {
          out.len = 0;
          ArrowText.putDecimal(out, x, scale);
          String s = new String(out.buf, 0, out.len, StandardCharsets.US_ASCII);
          assertThat(s).isEqualTo(java.math.BigDecimal.valueOf(x, scale).toPlainString());
          seen.add(s);
        }
      }
    }
    out.len = 0;
    ArrowText.putLong(out, Long.MIN_VALUE);
    assertThat(new String(out.buf, 0, out.len, StandardCharsets.US_ASCII)).isEqualTo(Long.toString(Long.MIN_VALUE));
    assertThat(seen).contains("0.0000000000000000000", "-0.000000000000000001");
  }
}
