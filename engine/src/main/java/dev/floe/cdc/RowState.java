package dev.floe.cdc;

import java.util.Arrays;
import java.util.Objects;

/**
 * Everything known about one key: the newest deletion of the whole row (a row, prefix or range
 * tombstone, as a timestamp: every write at or before it is dead), the row marker (Cassandra's primary
 * key liveness: an INSERT's, or a Debezium after-image's; the row exists while it is live even if every
 * cell is NULL) and the winning write of each cell. Writes a deletion shadows are dropped, so two states
 * that hold the same winners are equal.
 *
 * <p>{@link #absorb} is the fold: a maximum per part, so absorbing states in any order, any number of
 * times, reaches the same state.
 */
public final class RowState {
  /** No deletion. */
  public static final long NEVER = Long.MIN_VALUE;

  private final Key key;
  private long deletedAt = NEVER;
  private Cell marker;
  private final Cell[] cells;

  public RowState(Key key, int cellCount) {
    this.key = Objects.requireNonNull(key, "key");
    this.cells = new Cell[cellCount];
  }

  public Key key() {
    return key;
  }

  public long deletedAt() {
    return deletedAt;
  }

  public Cell marker() {
    return marker;
  }

  /** Cell {@code i}'s winning write, or null if none (or a deletion shadows it). */
  public Cell cell(int i) {
    return cells[i];
  }

  public int cellCount() {
    return cells.length;
  }

  /** Records a deletion of the whole row at {@code ts}. */
  public RowState delete(long ts) {
    if (ts > deletedAt) {
      deletedAt = ts;
      prune();
    }
    return this;
  }

  /** Records a row marker write. */
  public RowState mark(Cell m) {
    if (m.ts() > deletedAt) {
      marker = Cell.max(marker, m, null);
    }
    return this;
  }

  /** Records a write of cell {@code i}, of type {@code shape.cellType(i)}. */
  public RowState write(int i, Cell c, TableShape shape) {
    if (c.ts() > deletedAt) {
      cells[i] = Cell.max(cells[i], c, shape.cellType(i));
    }
    return this;
  }

  /** Folds {@code other} (the same key's) into this state. */
  public void absorb(RowState other, TableShape shape) {
    if (other.deletedAt > deletedAt) {
      deletedAt = other.deletedAt;
      prune();
    }
    if (other.marker != null) {
      mark(other.marker);
    }
    for (int i = 0; i < cells.length; i++) {
      if (other.cells[i] != null) {
        write(i, other.cells[i], shape);
      }
    }
  }

  private void prune() {
    if (marker != null && marker.ts() <= deletedAt) {
      marker = null;
    }
    for (int i = 0; i < cells.length; i++) {
      if (cells[i] != null && cells[i].ts() <= deletedAt) {
        cells[i] = null;
      }
    }
  }

  /** Whether the row exists at {@code nowSeconds}: its marker or one of its cells holds a value. */
  public boolean live(long nowSeconds) {
    if (marker != null && marker.live(nowSeconds)) {
      return true;
    }
    for (Cell c : cells) {
      if (c != null && c.live(nowSeconds)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The row as the table holds it at {@code nowSeconds} (every column in table order: the key, and each
   * cell's live value or NULL), or null when it does not exist.
   */
  public Object[] row(TableShape shape, long nowSeconds) {
    if (!live(nowSeconds)) {
      return null;
    }
    Object[] row = new Object[shape.columns().size()];
    int[] k = shape.key();
    for (int i = 0; i < k.length; i++) {
      row[k[i]] = key.values()[i];
    }
    int[] c = shape.cells();
    for (int i = 0; i < c.length; i++) {
      row[c[i]] = cells[i] != null && cells[i].live(nowSeconds) ? cells[i].value() : null;
    }
    return row;
  }

  /**
   * When the row next changes by itself (an expiring cell or marker that is live at {@code nowSeconds}
   * expires), in seconds; {@link Long#MAX_VALUE} if never.
   */
  public long nextExpiry(long nowSeconds) {
    long next = Long.MAX_VALUE;
    if (marker != null && marker.kind() == Cell.Kind.EXPIRING && marker.live(nowSeconds)) {
      next = marker.localDeletionTime();
    }
    for (Cell c : cells) {
      if (c != null && c.kind() == Cell.Kind.EXPIRING && c.live(nowSeconds)) {
        next = Math.min(next, c.localDeletionTime());
      }
    }
    return next;
  }

  public RowState copy() {
    RowState s = new RowState(key, cells.length);
    s.deletedAt = deletedAt;
    s.marker = marker;
    System.arraycopy(cells, 0, s.cells, 0, cells.length);
    return s;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RowState s && key.equals(s.key) && deletedAt == s.deletedAt && Objects.equals(marker, s.marker)
        && Arrays.equals(cells, s.cells);
  }

  @Override
  public int hashCode() {
    return key.hashCode();
  }

  @Override
  public String toString() {
    return key + (deletedAt == NEVER ? "" : " deleted@" + deletedAt) + (marker == null ? "" : " marker " + marker)
        + " " + Arrays.toString(cells);
  }
}
