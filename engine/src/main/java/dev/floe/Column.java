package dev.floe;

import java.util.Objects;

/**
 * A column of a table or of a query result.
 *
 * @param name the column name as stored (case preserved)
 * @param type its SQL type
 * @param nullable false for NOT NULL table columns; result columns are always nullable
 * @param fieldId the Iceberg field id for table columns, 0 for result columns
 */
public record Column(String name, SqlType type, boolean nullable, int fieldId) {
  public Column {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
  }

  public static Column result(String name, SqlType type) {
    return new Column(name, type, true, 0);
  }
}
