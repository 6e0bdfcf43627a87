package dev.floe.read;

import org.apache.iceberg.Schema;

/**
 * Where rows the JVM computed (metadata tables) become a relation DuckDB reads: their values are bound,
 * never written into SQL text, so no stored value (a quote, a backslash, a NUL character written by
 * another engine) can change the SQL that reads it.
 */
public interface RowStage {
  /** Takes one row's values, in Iceberg's internal representation, in the schema's column order. */
  interface Sink {
    void row(Object[] values);
  }

  /**
   * SQL naming a relation of the rows {@code rows} gives its sink, with {@code schema}'s column names
   * and types. Each row is taken as it comes (Iceberg's metadata rows may reuse their objects).
   */
  String relation(Schema schema, java.util.function.Consumer<Sink> rows);
}
