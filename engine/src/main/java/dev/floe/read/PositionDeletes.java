package dev.floe.read;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Positions of file-scoped Parquet position-delete files (format 2) that this process wrote or read, by
 * delete file location: delete files are never rewritten in place, so they stay true. The next delete
 * file of the same data file is then written without a query for the old positions, and point reads
 * skip deleted rows without reading the delete file. Bounded by the number of positions held.
 */
public final class PositionDeletes {
  private PositionDeletes() {}

  private static final Map<String, long[]> KNOWN = new LinkedHashMap<>(16, 0.75f, true);
  private static long held;
  private static final long MAX_POSITIONS = 4_000_000;

  /** Remembers a delete file's positions: sorted, distinct, all for the one data file it references. */
  public static synchronized void remember(String location, long[] positions) {
    if (positions.length > MAX_POSITIONS / 4) {
      return;
    }
    long[] previous = KNOWN.put(location, positions);
    held += positions.length - (previous == null ? 0 : previous.length);
    var it = KNOWN.entrySet().iterator();
    while (held > MAX_POSITIONS && it.hasNext()) {
      held -= it.next().getValue().length;
      it.remove();
    }
  }

  /** A delete file's positions, sorted and distinct, if this process knows them; else null. */
  public static synchronized long[] known(String location) {
    return KNOWN.get(location);
  }
}
