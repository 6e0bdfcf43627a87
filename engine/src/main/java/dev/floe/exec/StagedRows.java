package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.read.RowStage;
import dev.floe.sql.Lexer;
import dev.floe.types.TypeMapping;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * One statement's staged rows ({@link RowStage}): each relation is a temporary table of the session's
 * DuckDB connection, filled through DuckDB's appender. The statement's n-th relation is table
 * {@code __floe_rows_<n>}, replaced by the next statement that stages as many, and gone with the session.
 */
final class StagedRows implements RowStage {
  private final Connection duck;
  private int next;

  StagedRows(Connection duck) {
    this.duck = duck;
  }

  @Override
  public String relation(Schema schema, java.util.function.Consumer<Sink> rows) {
    String name = "__floe_rows_" + next++;
    List<Types.NestedField> columns = schema.columns();
    StringBuilder ddl = new StringBuilder("CREATE OR REPLACE TEMP TABLE ").append(Lexer.quoteIdentifier(name))
        .append(" (");
    for (int k = 0; k < columns.size(); k++) {
      ddl.append(k > 0 ? ", " : "").append(Lexer.quoteIdentifier(columns.get(k).name())).append(' ')
          .append(TypeMapping.duckdbType(columns.get(k).type()));
    }
    try (Statement st = duck.createStatement()) {
      st.execute(ddl.append(')').toString());
      try (DuckDBAppender appender = duck.unwrap(DuckDBConnection.class).createAppender("temp", "main", name)) {
        rows.accept(row -> {
          try {
            appender.beginRow();
            for (int k = 0; k < columns.size(); k++) {
              append(appender, columns.get(k).type(), row[k]);
            }
            appender.endRow();
          } catch (SQLException e) {
            throw new AppendFailed(e);
          }
        });
      }
    } catch (AppendFailed e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot stage rows for DuckDB: " + e.getCause().getMessage(),
          e.getCause());
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot stage rows for DuckDB: " + e.getMessage(), e);
    }
    return "SELECT * FROM temp.main." + Lexer.quoteIdentifier(name);
  }

  private static final class AppendFailed extends RuntimeException {
    AppendFailed(SQLException cause) {
      super(cause);
    }
  }

  /** Appends one value of Iceberg type {@code type} in Iceberg's internal representation. */
  private static void append(DuckDBAppender a, Type type, Object v) throws SQLException {
    if (v == null) {
      a.appendNull();
      return;
    }
    switch (type.typeId()) {
      case BOOLEAN -> a.append((boolean) (Boolean) v);
      case INTEGER -> a.append(((Number) v).intValue());
      case LONG -> a.append(((Number) v).longValue());
      case FLOAT -> a.append(((Number) v).floatValue());
      case DOUBLE -> a.append(((Number) v).doubleValue());
      case DATE -> a.appendEpochDays(((Number) v).intValue());
      case TIME -> a.appendDayMicros(((Number) v).longValue());
      case TIMESTAMP -> a.appendEpochMicros(((Number) v).longValue());
      case TIMESTAMP_NANO -> a.appendEpochNanos(((Number) v).longValue());
      case STRUCT -> {
        List<Types.NestedField> fields = type.asStructType().fields();
        StructLike struct = (StructLike) v;
        a.beginStruct();
        for (int k = 0; k < fields.size(); k++) {
          append(a, fields.get(k).type(), struct.get(k, Object.class));
        }
        a.endStruct();
      }
      case LIST -> a.append((java.util.Collection<?>) java(type, v));
      case MAP -> a.append((Map<?, ?>) java(type, v));
      default -> {
        Object j = java(type, v);
        if (j instanceof byte[] bytes) {
          a.append(bytes);
        } else if (j instanceof UUID u) {
          a.append(u);
        } else if (j instanceof BigDecimal d) {
          a.append(d);
        } else {
          a.append(j.toString());
        }
      }
    }
  }

  /** A value as the appender takes it inside lists and maps: Java's types, structs as maps by name. */
  private static Object java(Type type, Object v) {
    if (v == null) {
      return null;
    }
    return switch (type.typeId()) {
      case STRING -> v.toString();
      case DATE -> LocalDate.ofEpochDay(((Number) v).longValue());
      case TIME -> LocalTime.ofNanoOfDay(((Number) v).longValue() * 1000);
      case TIMESTAMP -> {
        long micros = ((Number) v).longValue();
        LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
            (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
        yield ((Types.TimestampType) type).shouldAdjustToUTC() ? OffsetDateTime.of(t, ZoneOffset.UTC) : t;
      }
      case BINARY, FIXED -> {
        if (v instanceof byte[] b) {
          yield b;
        }
        ByteBuffer b = ((ByteBuffer) v).duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        yield bytes;
      }
      case UUID -> v instanceof UUID u ? u : UUID.fromString(v.toString());
      case STRUCT -> {
        Map<String, Object> m = new LinkedHashMap<>();
        List<Types.NestedField> fields = type.asStructType().fields();
        for (int k = 0; k < fields.size(); k++) {
          m.put(fields.get(k).name(), java(fields.get(k).type(), ((StructLike) v).get(k, Object.class)));
        }
        yield m;
      }
      case LIST -> {
        List<Object> out = new ArrayList<>();
        for (Object e : (List<?>) v) {
          out.add(java(type.asListType().elementType(), e));
        }
        yield out;
      }
      case MAP -> {
        Map<Object, Object> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
          out.put(java(type.asMapType().keyType(), e.getKey()), java(type.asMapType().valueType(), e.getValue()));
        }
        yield out;
      }
      default -> v;
    };
  }
}
