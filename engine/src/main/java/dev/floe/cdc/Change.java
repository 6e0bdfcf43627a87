package dev.floe.cdc;

/**
 * One decoded change: writes to one key ({@code row}: its deletion, marker and cells, as a
 * {@link RowState} to fold in), a deletion of a range of keys ({@code range}), or cells a key change
 * carries over from the old key ({@code carry}); exactly one is set.
 * {@code position} is where the source was (a Debezium LSN or binlog position; for LWW envelopes, the
 * envelope's timestamp), for the batch's summary.
 */
public record Change(RowState row, RangeDeletion range, Carry carry, long position) {
  public Change {
    if ((row != null ? 1 : 0) + (range != null ? 1 : 0) + (carry != null ? 1 : 0) != 1) {
      throw new IllegalArgumentException("a change is a row's writes, a range deletion or a carry");
    }
  }

  public static Change row(RowState row, long position) {
    return new Change(row, null, null, position);
  }

  public static Change range(RangeDeletion range, long position) {
    return new Change(null, range, null, position);
  }

  public static Change carry(Carry carry, long position) {
    return new Change(null, null, carry, position);
  }
}
