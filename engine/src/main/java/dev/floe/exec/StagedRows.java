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
 *
 * <p>Given a scratch directory, a relation whose columns are all booleans, integers, doubles or text (a
 * change stream's batch: a million rows of twenty columns) is written to a CSV file there and loaded by
 * DuckDB's CSV reader instead, on every core: the appender costs about 200 ns a value, the file a third
 * of it (bench/run cdc). Every value comes back exactly: text is quoted (a quoted empty string is not
 * NULL), a double is written as its shortest round-tripping decimal.
 */
final class StagedRows implements RowStage {
  private final Connection duck;
  /** Where a flat relation is written as CSV (null: always the appender). */
  private final java.nio.file.Path scratch;
  private int next;

  StagedRows(Connection duck) {
    this(duck, null);
  }

  StagedRows(Connection duck, java.nio.file.Path scratch) {
    this.duck = duck;
    this.scratch = scratch;
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
    if (scratch != null && columns.stream().allMatch(c -> CSV_TYPES.contains(c.type().typeId()))) {
      return viaCsv(name, columns, rows);
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

  private static final java.util.Set<Type.TypeID> CSV_TYPES = java.util.EnumSet.of(Type.TypeID.BOOLEAN,
      Type.TypeID.INTEGER, Type.TypeID.LONG, Type.TypeID.DOUBLE, Type.TypeID.STRING);

  /** The relation written to a CSV file of the scratch directory, loaded into the temporary table, deleted. */
  private String viaCsv(String name, List<Types.NestedField> columns, java.util.function.Consumer<Sink> rows) {
    java.nio.file.Path file = scratch.resolve("stage-" + UUID.randomUUID() + ".csv");
    try {
      try (java.io.Writer w = new java.io.BufferedWriter(new java.io.OutputStreamWriter(
          java.nio.file.Files.newOutputStream(file), java.nio.charset.StandardCharsets.UTF_8), 1 << 16)) {
        StringBuilder line = new StringBuilder(256);
        rows.accept(row -> {
          line.setLength(0);
          for (int k = 0; k < columns.size(); k++) {
            if (k > 0) {
              line.append(',');
            }
            Object v = row[k];
            if (v == null) {
              continue; // an unquoted empty field: NULL
            }
            if (columns.get(k).type().typeId() == Type.TypeID.STRING) {
              line.append('"');
              String text = v.toString();
              for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                line.append(c);
                if (c == '"') {
                  line.append('"');
                }
              }
              line.append('"');
            } else {
              line.append(v); // Boolean, Integer, Long; a Double as its shortest exact decimal, NaN, Infinity
            }
          }
          line.append('\n');
          try {
            w.append(line);
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
      }
      StringBuilder types = new StringBuilder();
      for (int k = 0; k < columns.size(); k++) {
        types.append(k > 0 ? ", " : "").append(Lexer.quoteString(columns.get(k).name())).append(": ")
            .append(Lexer.quoteString(TypeMapping.duckdbType(columns.get(k).type())));
      }
      try (Statement st = duck.createStatement()) {
        st.execute("CREATE OR REPLACE TEMP TABLE " + Lexer.quoteIdentifier(name) + " AS SELECT * FROM read_csv("
            + Lexer.quoteString(file.toString()) + ", columns = {" + types + "}, header = false, auto_detect = false, "
            + "delim = ',', quote = '\"', escape = '\"', nullstr = '', allow_quoted_nulls = false, new_line = '\\n')");
      }
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot stage rows for DuckDB in " + scratch + ": " + e.getMessage(), e);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot stage rows for DuckDB: " + e.getMessage(), e);
    } finally {
      try {
        java.nio.file.Files.deleteIfExists(file);
      } catch (java.io.IOException ignored) {
        // scratch: swept with the directory
      }
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
