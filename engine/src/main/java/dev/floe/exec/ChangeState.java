package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.cdc.Cell;
import dev.floe.cdc.Key;
import dev.floe.cdc.RangeDeletion;
import dev.floe.cdc.RowState;
import dev.floe.cdc.TableShape;
import dev.floe.sql.Lexer;
import dev.floe.tail.TailLog;
import dev.floe.types.TypeMapping;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Where a change stream's target keeps what its rows were reconciled from (docs/cdc.md): an Iceberg
 * table {@code floe_cdc."<target uuid>"} with one row per key the stream wrote (its values, and for each
 * cell its timestamp, kind and local deletion time; the row's deletion and marker) and one per range
 * deletion. Tombstones outlive the rows they deleted here, so a late write older than a deletion stays
 * dead; they go after the grace period ({@code floe.cdc.gc-grace-seconds}, default 10 days, as Cassandra's
 * {@code gc_grace_seconds}). Columns are named by the target's field ids, so renaming a target column
 * keeps its state; a column added to the target is added here at the next apply.
 */
final class ChangeState {
  /** The namespace of every target's state table. */
  static final String NAMESPACE = "floe_cdc";
  static final long GC_GRACE_DEFAULT = 864_000;
  /** Snapshot summary: the source position a batch reached (the stream's, as it gave it). */
  static final String POSITION = "floe.cdc.position";
  /** Snapshot summary: how many changes the batch applied. */
  static final String CHANGES = "floe.cdc.changes";
  /**
   * Snapshot summary: the batch's id, the same in both tables' snapshots of one batch (a rollback of the
   * table takes the state back to the batch that wrote the version it goes to: {@link ChangeRollback}).
   */
  static final String BATCH = "floe.cdc.batch";

  static final String DELETED_AT = "deleted_at";
  static final String MARKER_TS = "marker_ts";
  static final String MARKER_EXPIRES = "marker_expires";
  static final String DEAD_SINCE = "dead_since";
  static final String EXPIRES_NEXT = "expires_next";
  static final String RANGE = "range_rows";

  final TableIdentifier id;
  final TableShape shape;
  /** The target's field ids, in shape column order. */
  private final int[] fieldIds;

  private ChangeState(TableIdentifier id, TableShape shape, int[] fieldIds) {
    this.id = id;
    this.shape = shape;
    this.fieldIds = fieldIds;
  }

  /** The shape of {@code target}'s stream: its columns but the tail's {@code _offset}, and its key. */
  static ChangeState of(Table target, String name) {
    Schema schema = target.schema();
    List<Types.NestedField> columns = new ArrayList<>();
    List<dev.floe.SqlType> types = new ArrayList<>();
    List<dev.floe.Column> sql = TypeMapping.columns(schema, target.properties());
    for (int i = 0; i < schema.columns().size(); i++) {
      Types.NestedField f = schema.columns().get(i);
      if (!f.name().equals(TailLog.OFFSET_COLUMN) || !TailLog.hasTail(target)) {
        columns.add(f);
        types.add(sql.get(i).type());
      }
    }
    TableShape shape = new TableShape(name, columns, types, List.copyOf(schema.identifierFieldIds().stream()
        .sorted(java.util.Comparator.comparingInt(k -> keyOrder(schema, k))).toList()));
    int[] ids = columns.stream().mapToInt(Types.NestedField::fieldId).toArray();
    return new ChangeState(idOf(target), shape, ids);
  }

  /** The state table of {@code target}'s stream, named by its uuid: a table made again under a name has its own. */
  static TableIdentifier idOf(Table target) {
    return TableIdentifier.of(Namespace.of(NAMESPACE), target.uuid().toString());
  }

  /** The key's order: the columns' order in the table (Iceberg keeps identifier fields as a set). */
  private static int keyOrder(Schema schema, int fieldId) {
    return schema.columns().indexOf(schema.findField(fieldId));
  }

  /** The target's field id of shape column {@code column}. */
  int fieldId(int column) {
    return fieldIds[column];
  }

  static String value(int fieldId) {
    return "v_" + fieldId;
  }

  static String ts(int fieldId) {
    return "t_" + fieldId;
  }

  static String kind(int fieldId) {
    return "k_" + fieldId;
  }

  static String ldt(int fieldId) {
    return "x_" + fieldId;
  }

  /** The state table's schema. */
  Schema schema() {
    List<Types.NestedField> fields = new ArrayList<>();
    int next = 1;
    for (int i = 0; i < fieldIds.length; i++) {
      fields.add(Types.NestedField.optional(next++, value(fieldIds[i]), shape.columns().get(i).type()));
      if (shape.cellOf(i) >= 0) {
        fields.add(Types.NestedField.optional(next++, ts(fieldIds[i]), Types.LongType.get()));
        fields.add(Types.NestedField.optional(next++, kind(fieldIds[i]), Types.IntegerType.get()));
        fields.add(Types.NestedField.optional(next++, ldt(fieldIds[i]), Types.LongType.get()));
      }
    }
    for (String n : List.of(DELETED_AT, MARKER_TS, MARKER_EXPIRES, DEAD_SINCE, EXPIRES_NEXT)) {
      fields.add(Types.NestedField.optional(next++, n, Types.LongType.get()));
    }
    fields.add(Types.NestedField.optional(next, RANGE, Types.StringType.get()));
    return new Schema(fields);
  }

  /** Columns of {@link #schema} the state table lacks (the target gained columns since it was made). */
  List<Types.NestedField> missing(Schema stored) {
    List<Types.NestedField> out = new ArrayList<>();
    for (Types.NestedField f : schema().columns()) {
      if (stored.findField(f.name()) == null) {
        out.add(f);
      }
    }
    return out;
  }

  /** The SELECT list that reads a state row for {@link #row}: every column of {@link #schema}, by name. */
  String selectList(String alias) {
    StringBuilder b = new StringBuilder();
    for (Types.NestedField f : schema().columns()) {
      b.append(b.length() > 0 ? ", " : "").append(alias).append('.').append(Lexer.quoteIdentifier(f.name()));
    }
    return b.toString();
  }

  /** A stored row read with {@link #selectList} from column {@code first} on: a key's state. */
  RowState row(ResultSet rs, int first) throws SQLException {
    int col = first;
    Object[] key = new Object[shape.keySize()];
    Object[] values = new Object[fieldIds.length];
    long[] ts = new long[fieldIds.length];
    int[] kinds = new int[fieldIds.length];
    long[] ldts = new long[fieldIds.length];
    boolean[] present = new boolean[fieldIds.length];
    for (int i = 0; i < fieldIds.length; i++) {
      values[i] = internal(rs, col++, shape.columns().get(i).type());
      if (shape.cellOf(i) >= 0) {
        long t = rs.getLong(col++);
        present[i] = !rs.wasNull();
        ts[i] = t;
        kinds[i] = rs.getInt(col++);
        ldts[i] = rs.getLong(col++);
      }
    }
    int[] k = shape.key();
    for (int i = 0; i < k.length; i++) {
      key[i] = values[k[i]];
    }
    RowState s = new RowState(new Key(key), shape.cellCount());
    long deletedAt = rs.getLong(col++);
    if (!rs.wasNull()) {
      s.delete(deletedAt);
    }
    long markerTs = rs.getLong(col++);
    boolean marked = !rs.wasNull();
    long markerExpires = rs.getLong(col);
    if (marked) {
      s.mark(Cell.marker(markerTs, markerExpires));
    }
    for (int i = 0; i < fieldIds.length; i++) {
      int cell = shape.cellOf(i);
      if (cell >= 0 && present[i]) {
        s.write(cell, new Cell(ts[i], Cell.Kind.values()[kinds[i]], ldts[i], values[i]), shape);
      }
    }
    return s;
  }

  /**
   * The timestamp of what the table holds of a key its stream has not written (rows loaded by INSERT or COPY
   * before the stream, or written by a statement): older than every change, so a cell the stream does not
   * write keeps the table's value (docs/cdc.md). Above {@link ChangeIndex#NONE} (nothing) and below a Debezium
   * snapshot's reads (a position less 2^62).
   */
  static final long TABLE_ROW_TS = Long.MIN_VALUE + 2;

  /**
   * SQL of the state row, in {@link #schema} order and with its column names, of a key the stream has not
   * written from its table row ({@code r}, the target's columns by name): its marker and each non-NULL cell
   * written at {@link #TABLE_ROW_TS}.
   */
  String tableRowList(String r) {
    List<String> values = new ArrayList<>();
    for (int i = 0; i < fieldIds.length; i++) {
      String v = r + "." + Lexer.quoteIdentifier(shape.columns().get(i).name());
      values.add(v);
      if (shape.cellOf(i) >= 0) {
        values.add("CASE WHEN " + v + " IS NOT NULL THEN CAST(" + TABLE_ROW_TS + " AS BIGINT) END");
        values.add("CASE WHEN " + v + " IS NOT NULL THEN " + Cell.Kind.VALUE.ordinal() + " END");
        values.add("CASE WHEN " + v + " IS NOT NULL THEN 0 END");
      }
    }
    // deleted_at, marker_ts, marker_expires, dead_since, expires_next, range_rows
    values.addAll(List.of("NULL", "CAST(" + TABLE_ROW_TS + " AS BIGINT)", "0", "NULL", "NULL", "NULL"));
    List<Types.NestedField> columns = schema().columns();
    StringBuilder b = new StringBuilder();
    for (int j = 0; j < values.size(); j++) {
      b.append(j > 0 ? ", " : "").append("CAST(").append(values.get(j)).append(" AS ")
          .append(dev.floe.types.TypeMapping.duckdbType(columns.get(j).type())).append(") AS ")
          .append(Lexer.quoteIdentifier(columns.get(j).name()));
    }
    return b.toString();
  }

  /**
   * The state of a key the stream has not written, from its table row ({@code values}, Iceberg's internal
   * representation in shape column order): as {@link #tableRowList}.
   */
  RowState tableRow(Object[] values) {
    int[] k = shape.key();
    Object[] key = new Object[k.length];
    for (int i = 0; i < k.length; i++) {
      key[i] = values[k[i]];
    }
    RowState s = new RowState(new Key(key), shape.cellCount());
    s.mark(Cell.marker(TABLE_ROW_TS, 0));
    for (int i = 0; i < values.length; i++) {
      int cell = shape.cellOf(i);
      if (cell >= 0 && values[i] != null) {
        s.write(cell, Cell.write(TABLE_ROW_TS, values[i], 0), shape);
      }
    }
    return s;
  }

  /** A state row's values in {@link #schema} order, Iceberg's internal representation. */
  Object[] stored(RowState s, Long deadSince, long expiresNext) {
    List<Object> out = new ArrayList<>();
    int[] key = shape.key();
    for (int i = 0; i < fieldIds.length; i++) {
      int cell = shape.cellOf(i);
      if (cell < 0) {
        int k = 0;
        while (key[k] != i) {
          k++;
        }
        out.add(s.key().values()[k]);
        continue;
      }
      Cell c = s.cell(cell);
      out.add(c == null ? null : c.value());
      out.add(c == null ? null : c.ts());
      out.add(c == null ? null : c.kind().ordinal());
      out.add(c == null ? null : c.localDeletionTime());
    }
    out.add(s.deletedAt() == RowState.NEVER ? null : s.deletedAt());
    out.add(s.marker() == null ? null : s.marker().ts());
    out.add(s.marker() == null ? null : s.marker().localDeletionTime());
    out.add(deadSince);
    out.add(expiresNext == Long.MAX_VALUE ? null : expiresNext);
    out.add(null);
    return out.toArray();
  }

  /** A range deletion's state row, {@link #schema} order. */
  Object[] stored(RangeDeletion r, long since) {
    List<Types.NestedField> columns = schema().columns();
    Object[] out = new Object[columns.size()];
    out[columns.size() - 6] = r.ts();
    out[columns.size() - 3] = since;
    out[columns.size() - 1] = r.encode(shape);
    return out;
  }

  /** Column {@code index} of the current row as Iceberg's internal value of {@code type}. */
  static Object internal(ResultSet rs, int index, Type type) throws SQLException {
    Object raw = rs.getObject(index);
    if (raw == null) {
      return null;
    }
    return switch (type.typeId()) {
      case BOOLEAN -> (Boolean) raw;
      case INTEGER -> ((Number) raw).intValue();
      case LONG -> ((Number) raw).longValue();
      case FLOAT -> ((Number) raw).floatValue();
      case DOUBLE -> ((Number) raw).doubleValue();
      case DECIMAL -> (raw instanceof BigInteger b ? new BigDecimal(b) : (BigDecimal) raw)
          .setScale(((Types.DecimalType) type).scale(), RoundingMode.UNNECESSARY);
      case DATE -> Math.toIntExact((raw instanceof LocalDate d ? d : LocalDate.parse(raw.toString())).toEpochDay());
      case TIME -> rs.getObject(index, LocalTime.class).toNanoOfDay() / 1000;
      case TIMESTAMP -> {
        java.time.Instant at = ((Types.TimestampType) type).shouldAdjustToUTC()
            ? rs.getObject(index, OffsetDateTime.class).toInstant()
            : rs.getObject(index, LocalDateTime.class).toInstant(ZoneOffset.UTC);
        yield Math.addExact(Math.multiplyExact(at.getEpochSecond(), 1_000_000L), at.getNano() / 1000);
      }
      case BINARY, FIXED -> ByteBuffer.wrap(rs.getBytes(index));
      case UUID -> raw instanceof java.util.UUID u ? u : java.util.UUID.fromString(raw.toString());
      case STRING -> raw.toString();
      default -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "a change stream cannot keep a value of "
          + type);
    };
  }

  /** The target's grace period ({@link dev.floe.FloeProperties#CDC_GC_GRACE_SECONDS}), checked. */
  static long gcGrace(Table target) {
    String v = target.properties().get(dev.floe.FloeProperties.CDC_GC_GRACE_SECONDS);
    if (v == null) {
      return GC_GRACE_DEFAULT;
    }
    try {
      long seconds = Long.parseLong(v.strip());
      if (seconds >= 0) {
        return seconds;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid value for table property \""
        + dev.floe.FloeProperties.CDC_GC_GRACE_SECONDS + "\": \"" + v + "\"", "It is a number of seconds, 0 or more.",
        null, 0, null);
  }

  /**
   * The state table's Parquet codec: every batch rewrites a large share of it, which Floe alone reads, so
   * writing speed comes before size. A 1M-row state batch was written in 0.43 s with snappy and 0.49 s
   * with zstd, the table's default (docs/decisions/0010).
   */
  static final String STATE_CODEC = "snappy";

  /** The properties of a new state table: what it is, for an operator who finds it; its codec. */
  static Map<String, String> properties(Table target, String targetName) {
    return Map.of("comment", "change-stream state of " + targetName + " (" + target.uuid() + ")",
        "floe.cdc.target", target.uuid().toString(), org.apache.iceberg.TableProperties.PARQUET_COMPRESSION,
        STATE_CODEC);
  }
}
