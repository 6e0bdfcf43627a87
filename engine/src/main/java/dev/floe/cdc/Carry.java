package dev.floe.cdc;

import java.util.BitSet;

/**
 * A key change that left cells out (Debezium's placeholder for an unchanged TOAST value: PostgreSQL does
 * not log it, and with the default replica identity the old row's values are not in the event either):
 * the new key {@code to} takes those {@code cells} from the old key {@code from} as it was before
 * {@code at}, written at {@code at}. The old key as it was is its stored state (an earlier batch's) with
 * what the same batch wrote to it before the change ({@code before}: the fold's state of the old key when
 * the change was folded in, null if none; a stream comes in source order, so its earlier writes are there).
 */
public record Carry(Key from, Key to, long at, BitSet cells, RowState before) {
  /** This carry, having seen {@code state} of the old key (the batch's writes to it folded so far). */
  Carry seeing(RowState state) {
    if (state == null) {
      return this;
    }
    if (before == null) {
      return new Carry(from, to, at, cells, state.copy());
    }
    return this;
  }
}
