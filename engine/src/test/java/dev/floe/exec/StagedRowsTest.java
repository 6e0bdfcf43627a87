package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A relation staged through a CSV file of the scratch directory holds exactly what the appender would: the
 * same values, NULLs and empty strings apart, quotes, commas and newlines in text, every double (NaN, the
 * infinities, -0.0, subnormals) to the bit, the integers' extremes. And the file is gone afterwards.
 */
class StagedRowsTest {
  @TempDir
  Path scratch;

  @Test
  void csvStagingKeepsEveryValueAsTheAppenderDoes() throws Exception {
    Schema schema = new Schema(Types.NestedField.optional(1, "s", Types.StringType.get()),
        Types.NestedField.optional(2, "i", Types.IntegerType.get()),
        Types.NestedField.optional(3, "l", Types.LongType.get()),
        Types.NestedField.optional(4, "d", Types.DoubleType.get()),
        Types.NestedField.optional(5, "b", Types.BooleanType.get()));
    List<Object[]> rows = new ArrayList<>();
    String[] texts = {"", "a", "\"", "\"\"", ",", "a,b", "two\nlines", "cr\r\nlf", "tab\t", "é☃😀", "NULL", "\\N",
        " ", "'", "x\"y\"z"};
    double[] doubles = {0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE,
        Double.MAX_VALUE, 0.1, 1e-300, -123.456e78};
    Random r = new Random(7);
    for (int n = 0; n < 3000; n++) {
      rows.add(new Object[] {
          r.nextInt(8) == 0 ? null : texts[r.nextInt(texts.length)] + (r.nextBoolean() ? "" : r.nextInt(99)),
          r.nextInt(8) == 0 ? null : List.of(Integer.MIN_VALUE, Integer.MAX_VALUE, 0, -1, r.nextInt()).get(r.nextInt(5)),
          r.nextInt(8) == 0 ? null : List.of(Long.MIN_VALUE, Long.MAX_VALUE, 0L, r.nextLong()).get(r.nextInt(4)),
          r.nextInt(8) == 0 ? null : r.nextBoolean() ? doubles[r.nextInt(doubles.length)] : r.nextDouble() * 1e10,
          r.nextInt(8) == 0 ? null : r.nextBoolean()});
    }
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:")) {
      String viaAppender = new StagedRows(duck).relation(schema, sink -> rows.forEach(sink::row));
      String viaCsv = new StagedRows(duck, scratch).relation(schema, sink -> rows.forEach(sink::row));
      assertThat(read(duck, viaCsv)).isEqualTo(read(duck, viaAppender)).hasSize(rows.size());
      // the appender's own reading of the values is the input's
      List<String> expected = new ArrayList<>();
      for (Object[] row : rows) {
        expected.add(row[0] + "|" + row[1] + "|" + row[2] + "|" + (row[3] == null ? null
            : Double.doubleToRawLongBits((Double) row[3]) == Double.doubleToRawLongBits(Double.NaN) ? "NaN"
            : Long.toHexString(Double.doubleToLongBits((Double) row[3]))) + "|" + row[4]);
      }
      assertThat(read(duck, viaCsv)).isEqualTo(expected);
    }
    try (var files = Files.list(scratch)) {
      assertThat(files).as("the staging file is deleted").isEmpty();
    }
  }

  /** Each row as text, in staging order; a double by its bits (any NaN as NaN). */
  private static List<String> read(Connection duck, String relation) throws Exception {
    List<String> out = new ArrayList<>();
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery("SELECT s, i, l, d, b FROM ("
        + relation + ")")) {
      while (rs.next()) {
        double d = rs.getDouble(4);
        String dd = rs.wasNull() ? null : Double.isNaN(d) ? "NaN" : Long.toHexString(Double.doubleToLongBits(d));
        out.add(rs.getString(1) + "|" + rs.getObject(2) + "|" + rs.getObject(3) + "|" + dd + "|" + rs.getObject(5));
      }
    }
    return out;
  }
}
