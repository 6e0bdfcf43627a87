package dev.floe.catalog;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * When this process's commits landed: for each table, the metadata files its pointer moved to in the
 * last {@value #KEEP_SECONDS} seconds, in order, each with the moment (this process's monotonic clock)
 * just after its swap. A version whose successor landed before a reader registered its hold cannot be
 * that reader's: the reader reads the pointer after registering, and the pointer had moved on. That is
 * exact where snapshot timestamps are not (they come from the committers' wall clocks, and a snapshot
 * is stamped before its commit lands), so expiry can take a busy table's history up to its oldest reader
 * instead of a clock margin before it ({@code exec.ReaderPins}).
 *
 * <p>Commits of another process, and those before this one started, are not here: for them the margin
 * still applies. The maintainer also reads which tables landed commits lately ({@link #landedSince}), to
 * expire a busy table's versions between its passes.
 */
public final class Landings {
  static final int KEEP_SECONDS = 120;
  private static final int MAX_PER_TABLE = 100_000;

  /** A landed version: its metadata file, its current snapshot (null: none), when it landed. */
  public record Landing(String metadataLocation, Long snapshotId, long landedNanos) {}

  /** Told, after a landing, the metadata files that left the table's metadata log with it. */
  @FunctionalInterface
  public interface Retired {
    void retired(TableIdentifier id, java.util.List<String> metadataFiles);
  }

  private final Map<TableIdentifier, ArrayDeque<Landing>> byTable = new ConcurrentHashMap<>();
  private volatile Retired retired;

  /** Who is told the metadata files each landing retires (exec: deleted when no reader may read them). */
  public void onRetired(Retired listener) {
    this.retired = listener;
  }

  /**
   * Records that {@code id}'s pointer moved to {@code location} just now, and tells the listener the
   * metadata files that left the table's log with it.
   */
  void landed(TableIdentifier id, String location, Long snapshotId, java.util.List<String> left) {
    record(id, location, snapshotId);
    Retired r = retired;
    if (r != null && !left.isEmpty()) {
      r.retired(id, left);
    }
  }

  private void record(TableIdentifier id, String location, Long snapshotId) {
    long now = System.nanoTime();
    ArrayDeque<Landing> q = byTable.computeIfAbsent(id, k -> new ArrayDeque<>());
    synchronized (q) {
      q.addLast(new Landing(location, snapshotId, now));
      // the newest landing older than the window stays: it says what was current at the window's start
      while (q.size() > 1 && (q.size() > MAX_PER_TABLE
          || now - secondOf(q).landedNanos() > KEEP_SECONDS * 1_000_000_000L)) {
        q.removeFirst();
      }
    }
  }

  private static Landing secondOf(ArrayDeque<Landing> q) {
    Iterator<Landing> it = q.iterator();
    it.next();
    return it.next();
  }

  /** The tables with a landing after {@code nanos} (what this process committed to since). */
  public java.util.Set<TableIdentifier> landedSince(long nanos) {
    java.util.Set<TableIdentifier> ids = new java.util.HashSet<>();
    byTable.forEach((id, q) -> {
      synchronized (q) {
        if (!q.isEmpty() && q.peekLast().landedNanos() - nanos > 0) {
          ids.add(id);
        }
      }
    });
    return ids;
  }

  /** Forgets a table (dropped or renamed: its next landings are another lineage's). */
  void forget(TableIdentifier id) {
    byTable.remove(id);
  }

  /**
   * The newest version of {@code id} that landed before {@code nanos} (a reader's registration): every
   * version before it was replaced before then. Empty when no landing of this process's is that old.
   */
  public Optional<Landing> currentAt(TableIdentifier id, long nanos) {
    ArrayDeque<Landing> q = byTable.get(id);
    if (q == null) {
      return Optional.empty();
    }
    synchronized (q) {
      Landing found = null;
      for (Landing l : q) {
        if (l.landedNanos() - nanos >= 0) {
          break;
        }
        found = l;
      }
      return Optional.ofNullable(found);
    }
  }

  /**
   * Whether the version whose metadata file is named {@code fileName} was replaced, by a landing of this
   * process, before {@code nanos}: no reader registered from then on reads it.
   */
  public boolean replacedBefore(TableIdentifier id, String fileName, long nanos) {
    ArrayDeque<Landing> q = byTable.get(id);
    if (q == null) {
      return false;
    }
    synchronized (q) {
      boolean seen = false;
      for (Landing l : q) {
        if (seen) {
          return l.landedNanos() - nanos < 0;
        }
        seen = l.metadataLocation().endsWith("/" + fileName);
      }
      return false;
    }
  }
}
