package dev.floe.cdc;

/**
 * One decoded change: writes to one key ({@code row}: its deletion, marker and cells, as a
 * {@link RowState} to fold in) or a deletion of a range of keys ({@code range}); exactly one is set.
 * {@code position} is where the source was (a Debezium LSN or binlog position; for LWW envelopes, the
 * envelope's timestamp), for the batch's summary.
 */
public record Change(RowState row, RangeDeletion range, long position) {
  public Change {
    if ((row == null) == (range == null)) {
      throw new IllegalArgumentException("a change is a row's writes or a range deletion");
    }
  }

  public static Change row(RowState row, long position) {
    return new Change(row, null, position);
  }

  public static Change range(RangeDeletion range, long position) {
    return new Change(null, range, position);
  }
}
