package dev.floe;

import java.util.Arrays;
import java.util.List;

/**
 * One result row. Values are Java objects by SQL type: Boolean, Short, Integer, Long, Float, Double,
 * BigDecimal, String, LocalDate, LocalTime, LocalDateTime (timestamp), OffsetDateTime in UTC
 * (timestamptz), UUID, byte[] (bytea), and for DuckDB's nested types List and Map; null for SQL NULL.
 */
public final class Row {
  private final List<Column> columns;
  private final Object[] values;

  Row(List<Column> columns, Object[] values) {
    this.columns = columns;
    this.values = values;
  }

  /** Creates a row; for implementations of {@link Result}. */
  public static Row of(List<Column> columns, Object[] values) {
    if (columns.size() != values.length) {
      throw new IllegalArgumentException("row has " + values.length + " values for " + columns.size() + " columns");
    }
    return new Row(columns, values);
  }

  public int size() {
    return values.length;
  }

  /** The value of column {@code index} (0-based). */
  public Object get(int index) {
    return values[index];
  }

  /** The value of the first column named {@code name} (case-insensitive). */
  public Object get(String name) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equalsIgnoreCase(name)) {
        return values[i];
      }
    }
    throw new IllegalArgumentException("no column \"" + name + "\" in " + columns.stream().map(Column::name).toList());
  }

  public boolean isNull(int index) {
    return values[index] == null;
  }

  /** The value as text as PostgreSQL prints it (null for NULL). */
  public String getString(int index) {
    return Values.toText(values[index]);
  }

  public long getLong(int index) {
    Object v = values[index];
    if (v == null) {
      throw new NullPointerException("column " + index + " is NULL");
    }
    return ((Number) v).longValue();
  }

  public double getDouble(int index) {
    Object v = values[index];
    if (v == null) {
      throw new NullPointerException("column " + index + " is NULL");
    }
    return ((Number) v).doubleValue();
  }

  public List<Column> columns() {
    return columns;
  }

  /** All values, in column order. */
  public List<Object> values() {
    return Arrays.asList(values.clone());
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("(");
    for (int i = 0; i < values.length; i++) {
      if (i > 0) {
        b.append(", ");
      }
      b.append(values[i] == null ? "NULL" : Values.toText(values[i]));
    }
    return b.append(')').toString();
  }
}
