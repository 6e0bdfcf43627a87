package dev.floe.tail;

import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Lower and upper bounds, null and NaN counts of each column over a set of rows, kept as rows arrive:
 * the statistics Iceberg keeps per data file, for a memtable tier. As a {@link DataFile} they let
 * Iceberg's own metrics evaluator decide whether a query's filter can match any of the rows.
 */
public final class ColumnBounds {
  private final List<Types.NestedField> columns;
  private final Comparator<Object>[] order;
  private final Object[] lower;
  private final Object[] upper;
  private final long[] nulls;
  private final long[] nans;
  private long rows;

  @SuppressWarnings("unchecked")
  ColumnBounds(Schema schema) {
    this.columns = schema.columns();
    int n = columns.size();
    order = new Comparator[n];
    for (int i = 0; i < n; i++) {
      order[i] = (Comparator<Object>) Comparators.forType(columns.get(i).type().asPrimitiveType());
    }
    lower = new Object[n];
    upper = new Object[n];
    nulls = new long[n];
    nans = new long[n];
  }

  /** Column {@code c} of the current row. */
  void add(int c, Object v) {
    if (v == null) {
      nulls[c]++;
      return;
    }
    if (v instanceof Double d && d.isNaN() || v instanceof Float f && f.isNaN()) {
      nans[c]++;
      return;
    }
    if (lower[c] == null || order[c].compare(v, lower[c]) < 0) {
      lower[c] = v;
    }
    if (upper[c] == null || order[c].compare(v, upper[c]) > 0) {
      upper[c] = v;
    }
  }

  /** The current row is complete. */
  void row() {
    rows++;
  }

  void merge(ColumnBounds o) {
    for (int c = 0; c < columns.size(); c++) {
      nulls[c] += o.nulls[c];
      nans[c] += o.nans[c];
      if (o.lower[c] != null && (lower[c] == null || order[c].compare(o.lower[c], lower[c]) < 0)) {
        lower[c] = o.lower[c];
      }
      if (o.upper[c] != null && (upper[c] == null || order[c].compare(o.upper[c], upper[c]) > 0)) {
        upper[c] = o.upper[c];
      }
    }
    rows += o.rows;
  }

  /** Adds a data file's rows by its Iceberg metrics (bounds may be wider than its values: truncated). */
  public void addFile(DataFile file) {
    for (int c = 0; c < columns.size(); c++) {
      Types.NestedField f = columns.get(c);
      Long n = file.nullValueCounts() == null ? null : file.nullValueCounts().get(f.fieldId());
      nulls[c] += n == null ? 0 : n;
      Long nan = file.nanValueCounts() == null ? null : file.nanValueCounts().get(f.fieldId());
      nans[c] += nan == null ? 0 : nan;
      ByteBuffer lo = file.lowerBounds() == null ? null : file.lowerBounds().get(f.fieldId());
      ByteBuffer hi = file.upperBounds() == null ? null : file.upperBounds().get(f.fieldId());
      if (lo != null) {
        Object v = Conversions.fromByteBuffer(f.type(), lo);
        if (lower[c] == null || order[c].compare(v, lower[c]) < 0) {
          lower[c] = v;
        }
      }
      if (hi != null) {
        Object v = Conversions.fromByteBuffer(f.type(), hi);
        if (upper[c] == null || order[c].compare(v, upper[c]) > 0) {
          upper[c] = v;
        }
      }
    }
    rows += file.recordCount();
  }

  /** Empty bounds over a schema's columns. */
  public static ColumnBounds of(Schema schema) {
    return new ColumnBounds(schema);
  }

  /** Every column's statistics as gathered. */
  public Summary result() {
    return summary();
  }

  /** These bounds as the metrics of a (virtual) data file named {@code name}. */
  DataFile asFile(String name) {
    Map<Integer, Long> values = new HashMap<>();
    Map<Integer, Long> nullCounts = new HashMap<>();
    Map<Integer, Long> nanCounts = new HashMap<>();
    Map<Integer, ByteBuffer> lowers = new HashMap<>();
    Map<Integer, ByteBuffer> uppers = new HashMap<>();
    for (int c = 0; c < columns.size(); c++) {
      Types.NestedField f = columns.get(c);
      values.put(f.fieldId(), rows);
      nullCounts.put(f.fieldId(), nulls[c]);
      if (f.type().typeId() == Type.TypeID.FLOAT || f.type().typeId() == Type.TypeID.DOUBLE) {
        nanCounts.put(f.fieldId(), nans[c]);
      }
      if (lower[c] != null) {
        lowers.put(f.fieldId(), Conversions.toByteBuffer(f.type(), lower[c]));
        uppers.put(f.fieldId(), Conversions.toByteBuffer(f.type(), upper[c]));
      }
    }
    return DataFiles.builder(PartitionSpec.unpartitioned()).withPath("memtable:" + name)
        .withFormat(FileFormat.PARQUET).withFileSizeInBytes(1)
        .withMetrics(new Metrics(rows, null, values, nullCounts, nanCounts, lowers, uppers)).build();
  }

  /** One column's statistics over a tier; bounds in Iceberg's internal representation (null: none). */
  public record Column(Object lower, Object upper, long nulls, long nans) {}

  /** Every column's statistics over a tier, by column name, and the tier's row count. */
  public record Summary(long rows, Map<String, Column> columns) {}

  Summary summary() {
    Map<String, Column> out = new LinkedHashMap<>();
    for (int c = 0; c < columns.size(); c++) {
      out.put(columns.get(c).name(), new Column(lower[c], upper[c], nulls[c], nans[c]));
    }
    return new Summary(rows, out);
  }
}
