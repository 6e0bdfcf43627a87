package dev.floe;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * The outcome of one statement: rows for a query, an affected-row count for a command.
 *
 * <p>A query's rows stream: they are produced as they are read, either as Arrow batches through
 * {@link #arrow()} or one {@link Row} at a time through {@link #iterator()} (use one of the two). The
 * result holds query resources until closed; always close it, e.g. with try-with-resources.
 *
 * <p>A query reads one consistent snapshot of every table it names, fixed when the statement started;
 * commits made while it runs are not seen, and files it reads are not deleted under it.
 */
public interface Result extends AutoCloseable, Iterable<Row> {

  /** The result columns; empty for commands. */
  List<Column> columns();

  /** True if this result has rows to read (a query, EXPLAIN, SHOW, DESCRIBE). */
  boolean hasRows();

  /**
   * For commands, the rows affected (inserted rows for INSERT); for queries, the rows read so far.
   */
  long rowCount();

  /** The PostgreSQL command tag, e.g. {@code INSERT 0 5}, {@code CREATE TABLE}, {@code SELECT 3}. */
  String commandTag();

  /**
   * The rows as Arrow record batches. The reader is owned by this result: closing the result closes it.
   *
   * @throws IllegalStateException if rows were already read through {@link #iterator()}
   */
  ArrowReader arrow();

  /** The rows one at a time, streamed from the Arrow batches. */
  @Override
  Iterator<Row> iterator();

  /** Reads every remaining row into a list (for small results). */
  default List<Row> toList() {
    List<Row> rows = new ArrayList<>();
    for (Row r : this) {
      rows.add(r);
    }
    return rows;
  }

  /**
   * For result column {@code column} (0-based), the table column it passes through unchanged, when it is
   * a plain reference to one; empty for computed columns and when unknown.
   */
  default java.util.Optional<ColumnOrigin> origin(int column) {
    return java.util.Optional.empty();
  }

  /** Releases the statement's resources; the rest of the rows are discarded. */
  @Override
  void close();
}
