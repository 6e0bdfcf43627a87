package dev.floe.exec;

import dev.floe.Column;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.sql.QueryBinder;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.util.DateTimeUtil;

/**
 * A query's rows already read into the JVM (a point query's): given one at a time, or as one Arrow
 * batch of the types DuckDB's export would give them ({@link ArrowValues} reads both the same way).
 * Takes scalar columns only.
 */
final class RowsResult implements Result {
  private final List<Column> columns;
  private final List<Object[]> rows;
  private final BufferAllocator allocator;
  private final List<Optional<QueryBinder.Origin>> origins;
  private final Function<QueryBinder.Origin, Optional<dev.floe.ColumnOrigin>> resolve;
  private long read;
  private boolean started;
  private ArrowReader reader;

  RowsResult(List<Column> columns, List<Object[]> rows, BufferAllocator allocator,
      List<Optional<QueryBinder.Origin>> origins, Function<QueryBinder.Origin, Optional<dev.floe.ColumnOrigin>> resolve) {
    this.columns = columns;
    this.rows = rows;
    this.allocator = allocator;
    this.origins = origins;
    this.resolve = resolve;
  }

  @Override
  public List<Column> columns() {
    return columns;
  }

  @Override
  public Optional<dev.floe.ColumnOrigin> origin(int column) {
    return column < origins.size() ? origins.get(column).flatMap(resolve) : Optional.empty();
  }

  @Override
  public boolean hasRows() {
    return true;
  }

  @Override
  public long rowCount() {
    return read;
  }

  @Override
  public String commandTag() {
    return "SELECT " + read;
  }

  @Override
  public Iterator<Row> iterator() {
    if (started) {
      throw new IllegalStateException(reader != null ? "rows are already being read with arrow()"
          : "rows are already being read");
    }
    started = true;
    Iterator<Object[]> it = rows.iterator();
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public Row next() {
        Object[] values = it.next();
        read++;
        return Row.of(columns, values);
      }
    };
  }

  @Override
  public ArrowReader arrow() {
    if (reader != null) {
      return reader;
    }
    if (started) {
      throw new IllegalStateException("rows are already being read with iterator()");
    }
    started = true;
    reader = new ArrowReader(allocator) {
      private boolean loaded;

      @Override
      public boolean loadNextBatch() throws java.io.IOException {
        if (loaded) {
          return false;
        }
        loaded = true;
        VectorSchemaRoot root = getVectorSchemaRoot();
        root.allocateNew();
        for (int k = 0; k < columns.size(); k++) {
          FieldVector v = root.getVector(k);
          for (int i = 0; i < rows.size(); i++) {
            set(v, i, rows.get(i)[k]);
          }
          v.setValueCount(rows.size());
        }
        root.setRowCount(rows.size());
        read = rows.size();
        return true;
      }

      @Override
      public long bytesRead() {
        return 0;
      }

      @Override
      protected void closeReadSource() {}

      @Override
      protected Schema readSchema() {
        List<Field> fields = new ArrayList<>();
        for (Column c : columns) {
          fields.add(new Field(c.name(), FieldType.nullable(arrowType(c)), null));
        }
        return new Schema(fields);
      }
    };
    return reader;
  }

  /** The Arrow type DuckDB exports a column of this SQL type as. */
  private static ArrowType arrowType(Column c) {
    return switch (c.type().kind()) {
      case BOOLEAN -> ArrowType.Bool.INSTANCE;
      case SMALLINT -> new ArrowType.Int(16, true);
      case INTEGER -> new ArrowType.Int(32, true);
      case BIGINT -> new ArrowType.Int(64, true);
      case REAL -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case DOUBLE -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case DECIMAL -> new ArrowType.Decimal(c.type().precision(), c.type().scale(), 128);
      case DATE -> new ArrowType.Date(DateUnit.DAY);
      case TIME -> new ArrowType.Time(TimeUnit.MICROSECOND, 64);
      case TIMESTAMP -> new ArrowType.Timestamp(TimeUnit.MICROSECOND, null);
      case TIMESTAMPTZ -> new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC");
      case BYTEA -> ArrowType.Binary.INSTANCE;
      case TEXT, VARCHAR, CHAR, UUID -> ArrowType.Utf8.INSTANCE;
      default -> throw new IllegalStateException("no Arrow form for " + c.type());
    };
  }

  private static void set(FieldVector v, int i, Object value) {
    if (value == null) {
      v.setNull(i);
      return;
    }
    if (v instanceof BitVector b) {
      b.setSafe(i, (Boolean) value ? 1 : 0);
    } else if (v instanceof SmallIntVector s) {
      s.setSafe(i, (Short) value);
    } else if (v instanceof IntVector n) {
      n.setSafe(i, (Integer) value);
    } else if (v instanceof BigIntVector n) {
      n.setSafe(i, (Long) value);
    } else if (v instanceof Float4Vector f) {
      f.setSafe(i, (Float) value);
    } else if (v instanceof Float8Vector f) {
      f.setSafe(i, (Double) value);
    } else if (v instanceof DecimalVector d) {
      d.setSafe(i, (BigDecimal) value);
    } else if (v instanceof DateDayVector d) {
      d.setSafe(i, (int) ((LocalDate) value).toEpochDay());
    } else if (v instanceof TimeMicroVector t) {
      t.setSafe(i, ((LocalTime) value).toNanoOfDay() / 1000L);
    } else if (v instanceof TimeStampMicroTZVector t) {
      t.setSafe(i, DateTimeUtil.microsFromTimestamptz((OffsetDateTime) value));
    } else if (v instanceof TimeStampMicroVector t) {
      t.setSafe(i, DateTimeUtil.microsFromTimestamp((LocalDateTime) value));
    } else if (v instanceof VarBinaryVector b) {
      b.setSafe(i, (byte[]) value);
    } else if (v instanceof VarCharVector s) {
      s.setSafe(i, value.toString().getBytes(StandardCharsets.UTF_8));
    } else {
      throw new IllegalStateException("no Arrow form for " + value.getClass());
    }
  }

  @Override
  public void close() {
    if (reader != null) {
      try {
        reader.close();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }
}
