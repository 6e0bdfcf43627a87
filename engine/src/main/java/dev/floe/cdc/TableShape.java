package dev.floe.cdc;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The columns a change stream writes: the target table's columns (less the tail's {@code _offset}, which
 * a stream never writes), which of them are the primary key (in the key's order), and the others, the
 * cells. Values are Iceberg's internal representation.
 */
public final class TableShape {
  private final String table;
  private final List<Types.NestedField> columns;
  private final List<SqlType> sqlTypes;
  private final int[] key;
  private final int[] cells;
  private final Map<String, Integer> byName = new HashMap<>();
  private final int[] cellOf;
  /** Per column: its place in the key, or -1 (asked once a value by the decoders). */
  private final int[] keyPositionOf;

  /**
   * @param columns the table's columns, in order
   * @param sqlTypes their declared SQL types (smallint, varchar(n)), in the same order
   * @param keyIds the field ids of the primary key, in the key's order
   */
  public TableShape(String table, List<Types.NestedField> columns, List<SqlType> sqlTypes, List<Integer> keyIds) {
    this.table = table;
    this.columns = List.copyOf(columns);
    this.sqlTypes = List.copyOf(sqlTypes);
    if (keyIds.isEmpty()) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "table \"" + table
          + "\" has no primary key: a change stream is applied by key", null,
          "Add one with ALTER TABLE " + table + " ADD PRIMARY KEY (...).", 0, null);
    }
    key = new int[keyIds.size()];
    cellOf = new int[columns.size()];
    keyPositionOf = new int[columns.size()];
    List<Integer> rest = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      Types.NestedField f = columns.get(i);
      byName.put(f.name(), i);
      int k = keyIds.indexOf(f.fieldId());
      cellOf[i] = -1;
      keyPositionOf[i] = k;
      if (k >= 0) {
        key[k] = i;
      } else {
        cellOf[i] = rest.size();
        rest.add(i);
      }
      if (!f.type().isPrimitiveType()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "column \"" + f.name() + "\" of table \"" + table
            + "\" is of type " + sqlTypes.get(i).toString().toLowerCase(java.util.Locale.ROOT)
            + ", which a change stream cannot write yet");
      }
    }
    cells = rest.stream().mapToInt(Integer::intValue).toArray();
  }

  public String table() {
    return table;
  }

  public List<Types.NestedField> columns() {
    return columns;
  }

  public SqlType sqlType(int column) {
    return sqlTypes.get(column);
  }

  /** The key's columns (indexes into {@link #columns}), in the key's order. */
  public int[] key() {
    return key.clone();
  }

  public int keySize() {
    return key.length;
  }

  /** The cells' columns (indexes into {@link #columns}), in table order. */
  public int[] cells() {
    return cells.clone();
  }

  public int cellCount() {
    return cells.length;
  }

  /** Column {@code name}'s index, or -1. */
  public int column(String name) {
    Integer i = byName.get(name);
    return i == null ? -1 : i;
  }

  /** Which cell column {@code column} is, or -1 for a key column. */
  public int cellOf(int column) {
    return cellOf[column];
  }

  /** The position of column {@code column} in the key, or -1. */
  public int keyPosition(int column) {
    return keyPositionOf[column];
  }

  public Type cellType(int cell) {
    return columns.get(cells[cell]).type();
  }

  public Type keyType(int k) {
    return columns.get(key[k]).type();
  }

  /** Compares two values of key column {@code k} in their type's order. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public int compareKey(int k, Object a, Object b) {
    java.util.Comparator c = Comparators.forType(keyType(k).asPrimitiveType());
    return c.compare(a, b);
  }

  /** The key's column names, for messages: {@code (id, ts)}. */
  public String keyNames() {
    StringBuilder b = new StringBuilder("(");
    for (int k = 0; k < key.length; k++) {
      b.append(k > 0 ? ", " : "").append(columns.get(key[k]).name());
    }
    return b.append(')').toString();
  }
}
