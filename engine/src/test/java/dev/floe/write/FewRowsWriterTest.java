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

  /**
   * Edge values of every type the JVM writer takes, as a VALUES list: the first and last dates and
   * timestamps Floe stores (infinity it refuses, as Iceberg has none).
   */
  private static final String ROWS = String.join(", ",
      "(1, true, -2147483648, -9223372036854775808, 'NaN', '-Infinity', -99999999.99, "
          + "-12345678901234567890123456789012.123456, '', '4714-11-24 BC', '00:00:00', '4714-11-24 00:00:00 BC', "
          + "'4714-11-24 00:00:00+00 BC', "
          + "'00000000-0000-0000-0000-000000000000', '\\x', 1)",
      "(2, false, 2147483647, 9223372036854775807, 'Infinity', 'NaN', 99999999.99, 0.000001, 'é😀 zz', "
          + "'5874897-12-31', '23:59:59.999999', '294247-01-10 04:00:54.775806', '294247-01-10 04:00:54.775806+00', "
          + "'ffffffff-ffff-ffff-ffff-ffffffffffff', "
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

  /**
   * A small UPDATE of an unpartitioned table writes its new rows from the change table's values in the
   * JVM. Every other column's edge value must pass through unchanged, as DuckDB's COPY (an UPDATE of
   * more than a few rows) carries it.
   */
  @Test
  void smallUpdatesCarryEveryTypeAsDuckDbDoes() throws IOException {
    String columns = COLUMNS.replace(") PARTITIONED BY (p", ", sm smallint, vc varchar(40), ch char(3)");
    String rows = ROWS.replace(", 1)", ", 1, -32768, 'abc', 'xy')");
    try (Database db = Floe.open(dir)) {
      for (String t : List.of("jvm", "duck")) {
        exec(db, "CREATE TABLE " + t + " (" + columns + ") WITH (format_version = 3)");
      }
      exec(db, "INSERT INTO jvm VALUES " + rows);
      exec(db, "INSERT INTO duck SELECT * FROM jvm");
      // more than a few rows: the reference's UPDATE is written by DuckDB
      exec(db, "INSERT INTO duck (id, p) SELECT 100 + i, 0 FROM range(0, 1200) r(i)");
      for (int id = 1; id <= 5; id++) {
        exec(db, "UPDATE jvm SET p = p + 1, i = i WHERE id = " + id);
      }
      exec(db, "UPDATE duck SET p = p + 1, i = i");
      exec(db, "DELETE FROM duck WHERE id >= 100");
      String text = "id, b::text, i::text, n::text, r::text, d::text, m::text, w::text, s, dt::text, tm::text, "
          + "ts::text, tz::text, u::text, y::text, p, sm, vc, ch FROM ";
      assertThat(rows(db, text + "jvm")).isEqualTo(rows(db, text + "duck")).hasSize(5);
      try (Result r = db.sql("SELECT count(*) FROM jvm WHERE p = 2")) {
        assertThat(r.iterator().next().get(0)).isEqualTo(5L);
      }
    }
    JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir);
    try (catalog) {
      Table jvm = catalog.loadTable(TableIdentifier.of("public", "jvm"));
      assertThat(icebergRows(jvm)).isEqualTo(icebergRows(catalog.loadTable(TableIdentifier.of("public", "duck"))));
      // the new rows were written in the JVM (named as its files are), not by DuckDB; the first file,
      // every row of it updated, is gone
      List<String> names = new ArrayList<>();
      try (CloseableIterable<FileScanTask> tasks = jvm.newScan().planFiles()) {
        tasks.forEach(t -> names.add(Path.of(t.file().location()).getFileName().toString()));
      }
      assertThat(names).hasSize(5).allMatch(n -> n.matches("00000-.*"));
    }
  }

  /**
   * A few rows into a table with a primary key are read once, for the key check and as the rows the
   * JVM writes; every type's edge values arrive as DuckDB's COPY writes them.
   */
  @Test
  void fewRowsWithAPrimaryKeyAreWrittenInTheJvm() throws IOException {
    String columns = COLUMNS.replace("id int, ", "id int PRIMARY KEY, ").replace(") PARTITIONED BY (p", "");
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE pk (" + columns + ")");
      exec(db, "CREATE TABLE plain (" + columns.replace(" PRIMARY KEY", "") + ")");
      exec(db, "INSERT INTO pk VALUES " + ROWS);
      exec(db, "INSERT INTO plain SELECT * FROM pk"); // a query: DuckDB's COPY
      String text = "id, b::text, i::text, n::text, r::text, d::text, m::text, w::text, s, dt::text, tm::text, "
          + "ts::text, tz::text, u::text, y::text FROM ";
      assertThat(rows(db, text + "pk")).isEqualTo(rows(db, text + "plain")).hasSize(5);
      assertThat(db.table("pk").currentVersion()).isPresent();
    }
    JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir);
    try (catalog) {
      Table pk = catalog.loadTable(TableIdentifier.of("public", "pk"));
      assertThat(icebergRows(pk)).isEqualTo(icebergRows(catalog.loadTable(TableIdentifier.of("public", "plain"))));
      assertThat(Path.of(onlyFile(pk).location()).getFileName().toString()).matches("00000-.*");
    }
  }

  /** Rows written in the JVM land in the table's sort order, as DuckDB's COPY sorts them. */
  @Test
  void jvmWrittenRowsFollowTheSortOrder() throws IOException {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE part (id int, s text, p int) PARTITIONED BY (p) "
          + "WITH (sorted_by = ARRAY['s DESC NULLS FIRST', 'id ASC'])");
      exec(db, "INSERT INTO part VALUES (1, 'b', 1), (2, NULL, 1), (3, 'c', 1), (4, 'b', 1), (0, 'b', 1), (5, 'a', 1)");
      exec(db, "CREATE TABLE flat (id int, s text, p int) WITH (sorted_by = ARRAY['s DESC NULLS FIRST', 'id ASC'])");
      exec(db, "INSERT INTO flat SELECT id, s, 0 FROM part");
      exec(db, "UPDATE flat SET p = 1 WHERE id IN (1, 2, 3, 4, 0)"); // the new rows, written in the JVM
    }
    JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir);
    try (catalog) {
      assertThat(fileOrder(catalog.loadTable(TableIdentifier.of("public", "part"))))
          .containsExactly("2 null", "3 c", "0 b", "1 b", "4 b", "5 a");
      // the smaller file holds the updated rows (the first, with one live row, is read whole here)
      assertThat(fileOrder(catalog.loadTable(TableIdentifier.of("public", "flat"))).subList(0, 5))
          .containsExactly("2 null", "3 c", "0 b", "1 b", "4 b");
    }
  }

  /**
   * id and s of every row in the table's data files (deleted or not), smaller files first, in the order
   * each file holds them.
   */
  private static List<String> fileOrder(Table table) throws IOException {
    List<String> out = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      List<FileScanTask> sorted = new ArrayList<>();
      tasks.forEach(sorted::add);
      sorted.sort(java.util.Comparator.comparing(t -> t.file().recordCount()));
      for (FileScanTask t : sorted) {
        try (CloseableIterable<Record> records = org.apache.iceberg.parquet.Parquet.read(
            table.io().newInputFile(t.file().location()))
            .project(table.schema())
            .createReaderFunc(fs -> org.apache.iceberg.data.parquet.GenericParquetReaders.buildReader(table.schema(), fs))
            .build()) {
          for (Record r : records) {
            out.add(r.getField("id") + " " + r.getField("s"));
          }
        }
      }
    }
    return out;
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

  /** The table's rows through Iceberg's reader, as text (without the {@code _pos} it adds to apply deletes). */
  private static List<String> icebergRows(Table table) throws IOException {
    List<String> out = new ArrayList<>();
    int columns = table.schema().columns().size();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        List<String> values = new ArrayList<>();
        for (int k = 0; k < columns; k++) {
          Object v = r.get(k);
          values.add(v instanceof ByteBuffer b ? java.util.HexFormat.of().formatHex(b.array(), b.arrayOffset()
              + b.position(), b.arrayOffset() + b.limit()) : String.valueOf(v));
        }
        out.add(String.join(", ", values));
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
