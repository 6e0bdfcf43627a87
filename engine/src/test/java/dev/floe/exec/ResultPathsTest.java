package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Column;
import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rows read one at a time (JDBC) and as Arrow batches hold the same Java values, edge values included. */
class ResultPathsTest {
  @TempDir
  Path dir;

  private static final String EDGES = "SELECT * FROM (VALUES"
      + " (true, 1::smallint, (-2147483648)::int, 9223372036854775807::bigint, 1.5::real, -0.0::double,"
      + "  12345678901234567890.123456::decimal(38,6), 'héllo', date '1582-10-10', time '23:59:59.999999',"
      + "  timestamp '1582-10-10 10:00:00.5', timestamptz '0001-01-01 00:00:00+00',"
      + "  uuid '6b8a6c38-8bb0-4e0e-a1a0-2f2e6e0f0d4e', '\\x00ff'::bytea, 170141183460469231731687303715884105727::hugeint),"
      + " (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, date '9999-12-31', NULL, timestamp '1970-01-01 00:00:00',"
      + "  timestamptz '2024-03-10 02:30:00.5+00', NULL, NULL, NULL)) AS t";

  /** Every value with its Java class, bytes by content. */
  private static List<String> text(List<List<Object>> rows) {
    List<String> out = new ArrayList<>();
    for (List<Object> row : rows) {
      for (Object v : row) {
        out.add(v == null ? "null" : v.getClass().getSimpleName() + ":" + dev.floe.Values.toText(v));
      }
    }
    return out;
  }

  /** A result's rows read from its Arrow batches, as {@link Row} would give them. */
  static List<List<Object>> arrowRows(Result r) throws java.io.IOException {
    List<Column> columns = r.columns();
    List<List<Object>> rows = new ArrayList<>();
    ArrowReader reader = r.arrow();
    while (reader.loadNextBatch()) {
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      List<FieldVector> vectors = root.getFieldVectors();
      for (int i = 0; i < root.getRowCount(); i++) {
        List<Object> values = new ArrayList<>();
        for (int c = 0; c < vectors.size(); c++) {
          values.add(ArrowValues.get(vectors.get(c), i, columns.get(c)));
        }
        rows.add(values);
      }
    }
    return rows;
  }

  @Test
  void bothPathsAgree() throws Exception {
    try (Database db = Floe.open(dir)) {
      List<List<Object>> rows = new ArrayList<>();
      try (Result r = db.sql(EDGES)) {
        for (Row row : r) {
          rows.add(row.values());
        }
      }
      List<List<Object>> batches;
      try (Result r = db.sql(EDGES)) {
        batches = arrowRows(r);
      }
      assertThat(rows).hasSize(2);
      assertThat(text(rows)).isEqualTo(text(batches));
      assertThat(rows.get(0).get(13)).isEqualTo(new byte[] {0, (byte) 0xff});
      assertThat(rows.get(0).get(8).toString()).isEqualTo("1582-10-10");
      assertThat(rows.get(0).get(10).toString()).isEqualTo("1582-10-10T10:00:00.500");
    }
  }
}
