package dev.floe.write;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.testing.IcebergClients;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Floe writes a few rows (INSERT ... VALUES, small UPDATEs) into a partitioned table with Iceberg's
 * Parquet writer in the JVM, and everything else with DuckDB's COPY. The same values written both ways must read back the same,
 * through Floe and through Iceberg's own reader, land in the same partitions, and carry the same
 * column statistics (which pruning trusts).
 */
class FewRowsWriterTest {
  @TempDir
  Path dir;

  /** A partitioned table (one partition: p is always 1), which few rows are written to in the JVM. */
  private static final String COLUMNS = "id int, b boolean, i int, n bigint, r real, d double precision, "
      + "m numeric(10,2), w numeric(38,6), s text, dt date, tm time, ts timestamp, tz timestamptz, u uuid, "
      + "y bytea, p int) PARTITIONED BY (p";

  /** Edge values of every type the JVM writer takes, as a VALUES list. */
  private static final String ROWS = String.join(", ",
      "(1, true, -2147483648, -9223372036854775808, 'NaN', '-Infinity', -99999999.99, "
          + "-12345678901234567890123456789012.123456, '', '-infinity', '00:00:00', '-infinity', '-infinity', "
          + "'00000000-0000-0000-0000-000000000000', '\\x', 1)",
      "(2, false, 2147483647, 9223372036854775807, 'Infinity', 'NaN', 99999999.99, 0.000001, 'é😀 zz', "
          + "'5874897-12-31', '23:59:59.999999', 'infinity', 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', "
          + "'\\x00ff00', 1)",
      "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1)",
      "(4, true, 0, 0, -0.0, -0.0, 0, 0, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '1970-01-01', '12:34:56.789', "
          + "'1969-12-31 23:59:59.999999', '2024-02-29 12:00:00+05:30', '123e4567-e89b-12d3-a456-426614174000', "
          + "'\\xdeadbeef', 1)",
      "(5, false, 7, 7, 1.5, 1e300, 1.05, 1.000005, 'zzzz', '0001-01-01', '00:00:00.000001', '2262-04-11 23:47:16.854775', "
          + "'1900-01-01 00:00:00+00', '123e4567-e89b-12d3-a456-426614174001', '\\x41', 1)");

  @Test
  void jvmAndDuckDbWritersAgreeOnEveryType() throws IOException {
    try (Database db = Floe.open(dir)) {
      for (String t : List.of("jvm", "duck")) {
        exec(db, "CREATE TABLE " + t + " (" + COLUMNS + ")");
      }
      exec(db, "INSERT INTO jvm VALUES " + ROWS);
      exec(db, "INSERT INTO duck SELECT * FROM jvm"); // a query: DuckDB's COPY
      // as text, as a client sees them
      String text = "id, b::text, i::text, n::text, r::text, d::text, m::text, w::text, s, dt::text, tm::text, "
          + "ts::text, tz::text, u::text, y::text FROM ";
      assertThat(rows(db, text + "jvm")).isEqualTo(rows(db, text + "duck")).hasSize(5);
    }
    JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir);
    try (catalog) {
      Table jvm = catalog.loadTable(TableIdentifier.of("public", "jvm"));
      Table duck = catalog.loadTable(TableIdentifier.of("public", "duck"));
      assertThat(icebergRows(jvm)).isEqualTo(icebergRows(duck));
      DataFile a = onlyFile(jvm);
      DataFile b = onlyFile(duck);
      assertThat(a.recordCount()).isEqualTo(b.recordCount());
      assertThat(a.nullValueCounts()).isEqualTo(b.nullValueCounts());
      assertThat(a.valueCounts()).isEqualTo(b.valueCounts());
      assertThat(bounds(jvm, a.lowerBounds())).isEqualTo(bounds(duck, b.lowerBounds()));
      assertThat(bounds(jvm, a.upperBounds())).isEqualTo(bounds(duck, b.upperBounds()));
    }
  }

  @Test
  void partitionsMatchWhicheverWriterComputesThem() throws IOException {
    try (Database db = Floe.open(dir)) {
      String spec = "PARTITIONED BY (bucket(4, id), day(ts), truncate(2, s), month(dt), hour(tz))";
      for (String t : List.of("jvm", "duck")) {
        exec(db, "CREATE TABLE " + t + " (id bigint, s text, ts timestamp, dt date, tz timestamptz) " + spec);
      }
      StringBuilder values = new StringBuilder();
      for (int k = 0; k < 40; k++) {
        values.append(k > 0 ? ", " : "").append("(").append(k * 7919L - 100).append(", 'k").append(k % 5)
            .append("', TIMESTAMP '2024-01-01' + INTERVAL ").append(k * 13).append(" HOUR, DATE '1969-11-01' + ")
            .append(k * 11).append(", TIMESTAMPTZ '2024-06-01 00:00:00+00' + INTERVAL ").append(k * 37)
            .append(" MINUTE)");
      }
      values.append(", (NULL, NULL, NULL, NULL, NULL)");
      exec(db, "INSERT INTO jvm VALUES " + values);
      exec(db, "INSERT INTO duck SELECT * FROM jvm");
      assertThat(rows(db, "jvm")).isEqualTo(rows(db, "duck")).hasSize(41);
      for (String filter : List.of("id = 7819", "ts >= TIMESTAMP '2024-01-05'", "s = 'k3'", "dt < DATE '1970-01-01'",
          "tz BETWEEN TIMESTAMPTZ '2024-06-01 03:00:00+00' AND TIMESTAMPTZ '2024-06-01 05:00:00+00'", "id IS NULL")) {
        assertThat(rows(db, "jvm WHERE " + filter)).isEqualTo(rows(db, "duck WHERE " + filter));
      }
    }
    JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir);
    try (catalog) {
      Table jvm = catalog.loadTable(TableIdentifier.of("public", "jvm"));
      Table duck = catalog.loadTable(TableIdentifier.of("public", "duck"));
      assertThat(partitions(jvm)).isEqualTo(partitions(duck)).hasSizeGreaterThan(20);
      assertThat(icebergRows(jvm)).isEqualTo(icebergRows(duck));
    }
  }

  @Test
  void smallUpdatesAndDeletesReadBackThroughIceberg() throws IOException {
    try (Database db = Floe.open(dir)) {
      for (int v : List.of(2, 3)) {
        String t = "t" + v;
        exec(db, "CREATE TABLE " + t + " (id bigint NOT NULL, s text, m numeric(10,2)) PARTITIONED BY (bucket(3, id))"
            + " WITH (format_version = " + v + ")");
        exec(db, "INSERT INTO " + t + " SELECT i, 'row ' || i, i / 100 FROM range(0, 3000) r(i)");
        java.util.TreeMap<Long, String> model = new java.util.TreeMap<>();
        for (long i = 0; i < 3000; i++) {
          model.put(i, i + "|row " + i + "|" + new java.math.BigDecimal(i / 100).setScale(2) + "|");
        }
        for (int k = 0; k < 30; k++) {
          exec(db, "UPDATE " + t + " SET s = s || '!', m = m + 1 WHERE id % 97 = " + k);
          for (long i = k; i < 3000; i += 97) {
            if (model.containsKey(i)) {
              model.put(i, i + "|row " + i + "!|" + new java.math.BigDecimal(i / 100 + 1).setScale(2) + "|");
            }
          }
          exec(db, "DELETE FROM " + t + " WHERE id = " + (k * 31 + 5));
          model.remove((long) (k * 31 + 5));
        }
        assertThat(rows(db, t)).isEqualTo(new ArrayList<>(model.values()));
      }
      assertThat(rows(db, "t2")).isEqualTo(rows(db, "t3"));
    }
    JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir);
    try (catalog) {
      assertThat(icebergRows(catalog.loadTable(TableIdentifier.of("public", "t2"))))
          .isEqualTo(icebergRows(catalog.loadTable(TableIdentifier.of("public", "t3"))));
    }
  }

  private static void exec(Database db, String sql) {
    db.sql(sql).close();
  }

  /** Rows of {@code from} (a table, or a select list and its FROM), in order, as text. */
  private static List<String> rows(Database db, String from) {
    List<String> out = new ArrayList<>();
    String select = from.contains(" FROM ") ? "SELECT " + from : "SELECT * FROM " + from;
    try (Result r = db.sql(select + " ORDER BY 1, 2")) {
      for (Row row : r) {
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < r.columns().size(); k++) {
          Object v = row.get(k);
          b.append(v instanceof byte[] bytes ? java.util.HexFormat.of().formatHex(bytes) : String.valueOf(v))
              .append('|');
        }
        out.add(b.toString());
      }
    }
    return out;
  }

  private static List<String> icebergRows(Table table) throws IOException {
    List<String> out = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        out.add(r.toString());
      }
    }
    out.sort(null);
    return out;
  }

  private static DataFile onlyFile(Table table) throws IOException {
    List<DataFile> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(t -> files.add(t.file()));
    }
    assertThat(files).hasSize(1);
    return files.get(0);
  }

  private static List<String> partitions(Table table) throws IOException {
    List<String> out = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        out.add(t.file().partition().toString() + " rows=" + t.file().recordCount());
      }
    }
    out.sort(null);
    return out;
  }

  /** Bounds by column name, decoded to values (their byte encodings are what Iceberg compares). */
  private static Map<String, Object> bounds(Table table, Map<Integer, ByteBuffer> bounds) {
    Map<String, Object> out = new HashMap<>();
    if (bounds == null) {
      return out;
    }
    for (Map.Entry<Integer, ByteBuffer> e : bounds.entrySet()) {
      Types.NestedField f = table.schema().findField(e.getKey());
      Object v = Conversions.fromByteBuffer(f.type(), e.getValue());
      out.put(f.name(), v instanceof ByteBuffer bb ? java.util.HexFormat.of().formatHex(bb.array(),
          bb.arrayOffset() + bb.position(), bb.arrayOffset() + bb.limit()) : String.valueOf(v));
    }
    return out;
  }
}
