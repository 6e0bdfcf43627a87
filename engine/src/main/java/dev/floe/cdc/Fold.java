package dev.floe.cdc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A batch of changes folded per key: each key's writes absorbed into one {@link RowState}, and the range
 * deletions, one per set of rows (the newest). Adding the same change twice, or changes in another
 * order, gives the same fold.
 */
public final class Fold {
  private final TableShape shape;
  private final Map<Key, RowState> rows;
  private final List<RangeDeletion> ranges = new ArrayList<>();
  private final java.util.Set<Carry> carries = new java.util.LinkedHashSet<>();
  private long changes;
  private long maxPosition = Long.MIN_VALUE;

  public Fold(TableShape shape) {
    this(shape, 16);
  }

  /** A fold sized for about {@code expectedKeys} keys (a batch of that many changes: no rehashing as it fills). */
  public Fold(TableShape shape, int expectedKeys) {
    this.shape = shape;
    this.rows = new HashMap<>((int) Math.min(1 << 30, Math.max(16, expectedKeys * 4L / 3 + 1)));
  }

  public TableShape shape() {
    return shape;
  }

  /** Adds a change; the fold takes its row state over (the caller does not change it afterwards). */
  public void add(Change c) {
    changes++;
    maxPosition = Math.max(maxPosition, c.position());
    if (c.row() != null) {
      RowState s = rows.putIfAbsent(c.row().key(), c.row());
      if (s != null) {
        s.absorb(c.row(), shape);
      }
    } else if (c.range() != null) {
      addRange(ranges, c.range());
    } else {
      carries.add(c.carry().seeing(rows.get(c.carry().from())));
    }
  }

  /** Adds everything {@code other} (of the same shape) folded: the fold of both batches. */
  public void addAll(Fold other) {
    changes += other.changes;
    maxPosition = Math.max(maxPosition, other.maxPosition);
    for (Carry c : other.carries) {
      // the other part came later in the stream: this part's writes to the old key came before the change
      RowState earlier = rows.get(c.from());
      if (earlier != null && c.before() != null) {
        RowState both = earlier.copy();
        both.absorb(c.before(), shape);
        carries.add(new Carry(c.from(), c.to(), c.at(), c.cells(), both));
      } else {
        carries.add(c.seeing(earlier));
      }
    }
    for (RowState r : other.rows.values()) {
      RowState s = rows.putIfAbsent(r.key(), r);
      if (s != null) {
        s.absorb(r, shape);
      }
    }
    other.ranges.forEach(r -> addRange(ranges, r));
  }

  /** Adds {@code r} to {@code ranges}, keeping only the newest deletion of the same rows. */
  public static boolean addRange(List<RangeDeletion> ranges, RangeDeletion r) {
    for (int i = 0; i < ranges.size(); i++) {
      if (ranges.get(i).sameRows(r)) {
        if (r.ts() > ranges.get(i).ts()) {
          ranges.set(i, r);
          return true;
        }
        return false;
      }
    }
    ranges.add(r);
    return true;
  }

  /** The folded writes of each key. */
  public Map<Key, RowState> rows() {
    return rows;
  }

  /** The cells key changes carry over from their old keys ({@link Carry}). */
  public java.util.Set<Carry> carries() {
    return carries;
  }

  /**
   * The cells each key change carries, as writes at the change to its new key ({@link Carry}), by new key.
   * The old key as it was before a change is its stored state ({@code stored}: before the batch, null if
   * none), the batch's writes to it folded before the change ({@link Carry#before}), and what an earlier
   * change of the batch carried into it (a key changed twice: 1 to 2, then 2 to 3); so they are taken in
   * position order.
   */
  public static Map<Key, RowState> carried(Collection<Carry> carries, java.util.function.Function<Key, RowState> stored,
      TableShape shape) {
    List<Carry> ordered = new ArrayList<>(carries);
    ordered.sort(java.util.Comparator.comparingLong(Carry::at));
    Map<Key, RowState> into = new HashMap<>();
    for (Carry c : ordered) {
      RowState from = new RowState(c.from(), shape.cellCount());
      for (RowState part : java.util.Arrays.asList(stored.apply(c.from()), c.before(), into.get(c.from()))) {
        if (part != null) {
          from.absorb(part, shape);
        }
      }
      RowState to = into.computeIfAbsent(c.to(), k -> new RowState(k, shape.cellCount()));
      for (int i = c.cells().nextSetBit(0); i >= 0; i = c.cells().nextSetBit(i + 1)) {
        Cell old = from.cell(i);
        if (old != null && old.ts() < c.at()) {
          to.write(i, new Cell(c.at(), old.kind(), old.localDeletionTime(), old.value()), shape);
        }
      }
    }
    return into;
  }

  /**
   * {@code state} (a new key's, reconciled) with the cells key changes carried to it ({@link #carried}),
   * where it has nothing newer and was not deleted since.
   */
  public static void carry(RowState state, RowState carried, TableShape shape) {
    if (carried == null) {
      return;
    }
    for (int i = 0; i < state.cellCount(); i++) {
      if (carried.cell(i) != null) {
        state.write(i, carried.cell(i), shape);
      }
    }
  }

  /** The range deletions, the newest of each set of rows. */
  public List<RangeDeletion> ranges() {
    return ranges;
  }

  /** How many changes were added. */
  public long changes() {
    return changes;
  }

  /** The greatest position of the changes added ({@link Long#MIN_VALUE}: none). */
  public long maxPosition() {
    return maxPosition;
  }

  /**
   * A key's state after this batch: {@code stored} (null: none) with the batch's writes of the key
   * ({@code batch}, null: none) and every range deletion in {@code ranges} that covers it.
   */
  public static RowState reconcile(RowState stored, RowState batch, Collection<RangeDeletion> ranges,
      TableShape shape) {
    RowState s = stored != null ? stored.copy() : batch.copy();
    if (stored != null && batch != null) {
      s.absorb(batch, shape);
    }
    for (RangeDeletion r : ranges) {
      if (r.ts() > s.deletedAt() && r.covers(s.key(), shape)) {
        s.delete(r.ts());
      }
    }
    return s;
  }
}
