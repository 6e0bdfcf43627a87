package dev.floe.cdc;

/**
 * A large batch folded per key in columns ({@link DebeziumBatch}, {@link LwwBatch}): one row per key, in
 * no particular order, with the key's newest deletion, its newest row marker and each cell's newest
 * write, each already pruned by the deletion as {@link RowState} prunes (a write at or before the key's
 * deletion is no write). No cell expires: batches with TTLs are the tree decoders'.
 */
public final class FoldedColumns {
  /** How many keys. */
  public final int size;
  /** Per key column: its values ({@code long[]} or {@code String[]}). */
  public final Object[] keys;
  /** Per key: its newest deletion's position, or {@link Long#MIN_VALUE}. */
  public final long[] deletedAt;
  /** Per key: its newest row marker's position, or {@link Long#MIN_VALUE}. */
  public final long[] markerAt;
  /** Per cell, per key: its newest write's position, or {@link Long#MIN_VALUE}. */
  public final long[][] cellAt;
  /** Per cell: the newest write's values ({@code long[]}: booleans as 0/1, doubles as bits; or {@code String[]}). */
  public final Object[] cells;
  /** Per cell, per key: whether the newest write is NULL (a cell tombstone), or there is none. */
  public final boolean[][] cellNulls;
  /** The batch's changes (as {@link Fold#changes} counts them). */
  public final long changes;
  /** The greatest position of a change, or {@link Long#MIN_VALUE}. */
  public final long maxPosition;

  FoldedColumns(int size, Object[] keys, long[] deletedAt, long[] markerAt, long[][] cellAt, Object[] cells,
      boolean[][] cellNulls, long changes, long maxPosition) {
    this.size = size;
    this.keys = keys;
    this.deletedAt = deletedAt;
    this.markerAt = markerAt;
    this.cellAt = cellAt;
    this.cells = cells;
    this.cellNulls = cellNulls;
    this.changes = changes;
    this.maxPosition = maxPosition;
  }

  /** Whether a table's columns are all of types the columnar decoders read (no boolean or double in the key). */
  public static boolean fits(TableShape shape) {
    return ColumnarBatch.kinds(shape) != null;
  }

  /**
   * How column {@code c}'s values are held: BOOLEAN, SMALLINT, INTEGER, BIGINT, REAL and DOUBLE (a double's
   * bits), DATE (days), TIME, TIMESTAMP or TIMESTAMPTZ (microseconds) as {@code long}s; TEXT, UUID (canonical
   * text), DECIMAL (plain, at the column's scale) or BYTEA (a char a byte) as Strings;
   * null for a table that does not {@link #fits}.
   */
  public static String kindOf(TableShape shape, int c) {
    ColumnarBatch.Kind[] kinds = ColumnarBatch.kinds(shape);
    if (kinds == null) {
      return null;
    }
    return kinds[c] == ColumnarBatch.Kind.TIMESTAMP && shape.sqlType(c).kind() == dev.floe.SqlType.Kind.TIMESTAMPTZ
        ? "TIMESTAMPTZ" : kinds[c].name();
  }
}
