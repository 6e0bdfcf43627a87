package dev.floe.server.pg;

import dev.floe.Column;
import dev.floe.Result;
import dev.floe.Row;
import java.util.Iterator;
import java.util.List;

/**
 * What a statement gives back to the client: rows (streamed from the engine, or made by the protocol
 * layer for SHOW) and a command tag.
 */
interface Reply extends AutoCloseable {
  /** Result columns; empty when the statement returns no rows. */
  List<Column> columns();

  boolean hasRows();

  Iterator<Row> rows();

  /** The command tag, valid once the rows are read. */
  String tag(long rowsSent);

  /** The table column result column {@code k} passes through, for RowDescription; empty when none. */
  default java.util.Optional<dev.floe.ColumnOrigin> origin(int k) {
    return java.util.Optional.empty();
  }

  /** The rows as Arrow batches (the fast path for DataRows), or null: then {@link #rows()}. */
  default ArrowCursor cursor() {
    return null;
  }

  @Override
  void close();

  static Reply of(Result result) {
    return new Reply() {
      private Iterator<Row> rows;
      private ArrowCursor cursor;

      @Override
      public ArrowCursor cursor() {
        if (cursor == null && rows == null && result.hasRows()) {
          cursor = new ArrowCursor(result.arrow(), result.columns());
        }
        return cursor;
      }

      @Override
      public List<Column> columns() {
        return result.columns();
      }

      @Override
      public java.util.Optional<dev.floe.ColumnOrigin> origin(int k) {
        return result.origin(k);
      }

      @Override
      public boolean hasRows() {
        return result.hasRows();
      }

      @Override
      public Iterator<Row> rows() {
        if (cursor != null) {
          throw new IllegalStateException("the rows are being read as Arrow batches");
        }
        if (rows == null) {
          rows = result.iterator();
        }
        return rows;
      }

      @Override
      public String tag(long rowsSent) {
        // a query's tag counts the rows sent; CREATE TABLE AS (no rows) keeps its own, SELECT <rows written>
        String tag = result.commandTag();
        return tag.startsWith("SELECT ") && result.hasRows() ? "SELECT " + rowsSent : tag;
      }

      @Override
      public void close() {
        result.close();
      }
    };
  }

  /** Up to {@code n} more rows of an open result (FETCH from a cursor); closing it leaves the cursor open. */
  static Reply limited(Reply source, long n, String verb) {
    return new Reply() {
      private long given;

      @Override
      public List<Column> columns() {
        return source.columns();
      }

      @Override
      public java.util.Optional<dev.floe.ColumnOrigin> origin(int k) {
        return source.origin(k);
      }

      @Override
      public boolean hasRows() {
        return true;
      }

      @Override
      public Iterator<Row> rows() {
        Iterator<Row> inner = source.rows();
        return new Iterator<>() {
          @Override
          public boolean hasNext() {
            return given < n && inner.hasNext();
          }

          @Override
          public Row next() {
            given++;
            return inner.next();
          }
        };
      }

      @Override
      public String tag(long rowsSent) {
        return verb + " " + rowsSent;
      }

      @Override
      public void close() {
        // the cursor stays open until CLOSE or the end of its transaction
      }
    };
  }

  /** A reply that also closes the engine session it was run in. */
  static Reply closing(Reply inner, dev.floe.Session session) {
    return new Reply() {
      @Override
      public ArrowCursor cursor() {
        return inner.cursor();
      }

      @Override
      public List<Column> columns() {
        return inner.columns();
      }

      @Override
      public java.util.Optional<dev.floe.ColumnOrigin> origin(int k) {
        return inner.origin(k);
      }

      @Override
      public boolean hasRows() {
        return inner.hasRows();
      }

      @Override
      public Iterator<Row> rows() {
        return inner.rows();
      }

      @Override
      public String tag(long rowsSent) {
        return inner.tag(rowsSent);
      }

      @Override
      public void close() {
        try {
          inner.close();
        } finally {
          session.close();
        }
      }
    };
  }

  /** A command without rows. */
  static Reply command(String tag) {
    return rows(tag, List.of(), List.of());
  }

  /** Rows made here (SHOW), all in memory. */
  static Reply rows(String tag, List<Column> columns, List<Object[]> values) {
    return new Reply() {
      private final Iterator<Object[]> it = values.iterator();

      @Override
      public List<Column> columns() {
        return columns;
      }

      @Override
      public boolean hasRows() {
        return !columns.isEmpty();
      }

      @Override
      public Iterator<Row> rows() {
        return new Iterator<>() {
          @Override
          public boolean hasNext() {
            return it.hasNext();
          }

          @Override
          public Row next() {
            return Row.of(columns, it.next());
          }
        };
      }

      @Override
      public String tag(long rowsSent) {
        return tag;
      }

      @Override
      public void close() {
        // nothing held
      }
    };
  }
}
