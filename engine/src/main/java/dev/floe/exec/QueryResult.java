package dev.floe.exec;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.SqlState;
import dev.floe.types.TypeMapping;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.IntUnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.duckdb.DuckDBResultSet;

/** Rows streamed from a DuckDB result, as Arrow batches or one {@link Row} at a time. */
final class QueryResult implements Result {
  private static final int BATCH_ROWS = 2048;

  private final Statement statement;
  private final ResultSet resultSet;
  private List<Column> columns;
  private final BufferAllocator allocator;
  private final IntUnaryOperator positions;
  private final Runnable onClose;
  private String tag;
  private ArrowReader reader;
  private boolean iterating;
  private long rowsRead;
  private boolean closed;

  QueryResult(Statement statement, ResultSet resultSet, BufferAllocator allocator, IntUnaryOperator positions,
      Runnable onClose) throws SQLException {
    this.statement = statement;
    this.resultSet = resultSet;
    this.allocator = allocator;
    this.positions = positions;
    this.onClose = onClose;
    this.columns = columnsOf(resultSet.getMetaData());
  }

  static List<Column> columnsOf(ResultSetMetaData md) throws SQLException {
    List<Column> cols = new ArrayList<>();
    for (int i = 1; i <= md.getColumnCount(); i++) {
      cols.add(Column.result(md.getColumnName(i), TypeMapping.fromDuckdb(md.getColumnTypeName(i))));
    }
    return List.copyOf(cols);
  }

  /**
   * Records, for output columns that pass a table column through unchanged, where they come from, and
   * reports the column's declared type ({@code varchar(10)}, {@code char(3)}) instead of DuckDB's, where
   * the two store alike.
   */
  QueryResult withOrigins(List<java.util.Optional<dev.floe.sql.QueryBinder.Origin>> origins,
      java.util.function.Function<dev.floe.sql.QueryBinder.Origin, java.util.Optional<dev.floe.ColumnOrigin>> resolve) {
    if (origins.size() != columns.size()) {
      return this;
    }
    List<Column> out = new java.util.ArrayList<>(columns);
    for (int k = 0; k < out.size(); k++) {
      Column c = out.get(k);
      java.util.Optional<dev.floe.SqlType> d = origins.get(k).map(x -> x.column().type());
      if (d.isPresent() && d.get().isString() && c.type().isString()) {
        out.set(k, new Column(c.name(), d.get(), c.nullable(), c.fieldId()));
      }
    }
    columns = List.copyOf(out);
    this.origins = origins;
    this.resolve = resolve;
    return this;
  }

  /** Per column, the table column it passes through, once {@link #withOrigins} has said. */
  private List<java.util.Optional<dev.floe.sql.QueryBinder.Origin>> origins = List.of();
  /** Turns an origin into catalog numbers, when asked (only the PostgreSQL protocol asks). */
  private java.util.function.Function<dev.floe.sql.QueryBinder.Origin, java.util.Optional<dev.floe.ColumnOrigin>>
      resolve;

  @Override
  public java.util.Optional<dev.floe.ColumnOrigin> origin(int column) {
    return column < origins.size() ? origins.get(column).flatMap(resolve) : java.util.Optional.empty();
  }

  @Override
  public List<Column> columns() {
    return columns;
  }

  @Override
  public boolean hasRows() {
    return true;
  }

  @Override
  public long rowCount() {
    return rowsRead;
  }

  @Override
  public String commandTag() {
    return tag != null ? tag : "SELECT " + rowsRead;
  }

  /** For RETURNING: the rows are a query's, the tag is the command's ({@code DELETE 3}). */
  QueryResult withCommandTag(String commandTag) {
    this.tag = commandTag;
    return this;
  }

  @Override
  public ArrowReader arrow() {
    if (iterating) {
      throw new IllegalStateException("rows are already being read with iterator()");
    }
    return reader();
  }

  private ArrowReader reader() {
    if (closed) {
      throw new IllegalStateException("result is closed");
    }
    if (reader == null) {
      try {
        ArrowReader duck = (ArrowReader) resultSet.unwrap(DuckDBResultSet.class)
            .arrowExportStream(allocator, BATCH_ROWS);
        reader = new CountingReader(duck, allocator);
      } catch (SQLException e) {
        throw DuckErrors.map(e, positions);
      }
    }
    return reader;
  }

  /** Keeps the row count and maps DuckDB errors raised while batches are produced. */
  private final class CountingReader extends ArrowReader {
    private final ArrowReader inner;

    CountingReader(ArrowReader inner, BufferAllocator allocator) {
      super(allocator);
      this.inner = inner;
    }

    @Override
    public VectorSchemaRoot getVectorSchemaRoot() throws IOException {
      return inner.getVectorSchemaRoot();
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      try {
        boolean more = inner.loadNextBatch();
        if (more) {
          rowsRead += inner.getVectorSchemaRoot().getRowCount();
        }
        return more;
      } catch (RuntimeException | IOException e) {
        throw translate(e);
      }
    }

    @Override
    public long bytesRead() {
      return inner.bytesRead();
    }

    @Override
    protected void closeReadSource() throws IOException {
      inner.close();
    }

    @Override
    protected org.apache.arrow.vector.types.pojo.Schema readSchema() throws IOException {
      return inner.getVectorSchemaRoot().getSchema();
    }
  }

  private RuntimeException translate(Exception e) {
    Throwable t = e;
    while (t != null) {
      if (t instanceof SQLException s) {
        return DuckErrors.map(s, positions);
      }
      t = t.getCause();
    }
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    if (message.startsWith("{") || message.contains("exception_type")) {
      return DuckErrors.map(new SQLException(message, e), positions);
    }
    return new FloeException(SqlState.INTERNAL_ERROR, "reading query results failed: " + message, e);
  }

  @Override
  public Iterator<Row> iterator() {
    if (reader != null && !iterating) {
      throw new IllegalStateException("rows are already being read with arrow()");
    }
    if (closed) {
      throw new IllegalStateException("result is closed");
    }
    iterating = true;
    if (reader == null && JdbcValues.handles(columns)) {
      return jdbcRows();
    }
    ArrowReader r = reader();
    return new Iterator<>() {
      private VectorSchemaRoot root;
      private int next;
      private boolean done;

      @Override
      public boolean hasNext() {
        if (done) {
          return false;
        }
        try {
          while (root == null || next >= root.getRowCount()) {
            if (!r.loadNextBatch()) {
              done = true;
              return false;
            }
            root = r.getVectorSchemaRoot();
            next = 0;
          }
          return true;
        } catch (IOException e) {
          throw translate(e);
        }
      }

      @Override
      public Row next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        List<FieldVector> vectors = root.getFieldVectors();
        Object[] values = new Object[columns.size()];
        for (int c = 0; c < values.length; c++) {
          values[c] = ArrowValues.get(vectors.get(c), next, columns.get(c));
        }
        next++;
        return Row.of(columns, values);
      }
    };
  }

  /** Rows straight from the JDBC result set: no Arrow export, which costs more than small results. */
  private Iterator<Row> jdbcRows() {
    return new Iterator<>() {
      private boolean ready;
      private boolean done;

      @Override
      public boolean hasNext() {
        if (done) {
          return false;
        }
        if (!ready) {
          try {
            ready = resultSet.next();
          } catch (SQLException e) {
            throw DuckErrors.map(e, positions);
          }
          done = !ready;
        }
        return ready;
      }

      @Override
      public Row next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        ready = false;
        Object[] values = new Object[columns.size()];
        try {
          for (int c = 0; c < values.length; c++) {
            values[c] = JdbcValues.get(resultSet, c + 1, columns.get(c));
          }
        } catch (SQLException e) {
          throw DuckErrors.map(e, positions);
        }
        rowsRead++;
        return Row.of(columns, values);
      }
    };
  }

  /** Interrupts the running statement from another thread. */
  void cancel() {
    try {
      statement.cancel();
    } catch (SQLException ignored) {
      // already finished
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (reader != null) {
        reader.close();
      }
    } catch (IOException | RuntimeException ignored) {
      // closing the result set below frees the rest
    } finally {
      try {
        resultSet.close();
        statement.close();
      } catch (SQLException ignored) {
        // nothing more to release
      }
      onClose.run();
    }
  }

  /**
   * SQL for DuckDB and how its offsets map to positions in the user's statement (1-based; 0 where the
   * offset is in text Floe added).
   */
  record Named(String sql, IntUnaryOperator positions) {}

  /** The bound SQL with PostgreSQL's names for unaliased expression columns ({@code count}, ...). */
  static Named withColumnNames(dev.floe.sql.QueryBinder.Bound bound) {
    List<String> names = bound.columnNames();
    if (names.isEmpty()) {
      return new Named(bound.sql(), bound::originalPosition);
    }
    StringBuilder select = new StringBuilder("SELECT ");
    StringBuilder aliases = new StringBuilder();
    List<java.util.Optional<String>> casts = bound.resultCasts();
    for (int k = 0; k < names.size(); k++) {
      String inner = dev.floe.sql.Lexer.quoteIdentifier("__floe_c" + k);
      String value = "__floe_q." + inner;
      java.util.Optional<String> cast = k < casts.size() ? casts.get(k) : java.util.Optional.empty();
      if (cast.isPresent()) {
        value = "CAST(" + value + " AS " + cast.get() + ")";
      }
      select.append(k > 0 ? ", " : "").append(value).append(" AS ").append(dev.floe.sql.Lexer.quoteIdentifier(names.get(k)));
      aliases.append(k > 0 ? ", " : "").append(inner);
    }
    String prefix = select + " FROM (";
    int inner = prefix.length();
    int end = inner + bound.sql().length();
    // DuckDB's positions are offsets in the whole text; the user's text is inside the subquery.
    return new Named(prefix + bound.sql() + "\n) AS __floe_q(" + aliases + ")",
        offset -> offset >= inner && offset < end ? bound.originalPosition(offset - inner) : 0);
  }
}
