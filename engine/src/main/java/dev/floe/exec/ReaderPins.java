package dev.floe.exec;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import dev.floe.catalog.Landings;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * What live readers hold, as LMDB's reader table: every running statement (to its end: DuckDB materializes results),
 * every open transaction block and every time-travel read registers a hold saying "I may read a version
 * current at or after this moment", before it reads any table's metadata. Snapshot expiry keeps, for
 * each table, every snapshot that was current at or after the oldest hold on it ({@link #keepFrom}), so
 * it never removes a snapshot, or a file, that a live reader may still read — however long the reader
 * runs, and with any grace period, zero included.
 *
 * <p>Holds are times, not snapshot ids: a reader registers one before it knows which snapshot it will
 * read, so there is no moment between reading a table's metadata and registering in which expiry could
 * take the snapshot away. Snapshot timestamps come from the committers' clocks, so a hold keeps
 * {@value #CLOCK_MARGIN_MILLIS} ms more than its time says (Iceberg accepts snapshot timestamps up to a
 * minute out of order).
 *
 * <p>Registering and releasing a hold is one concurrent set operation: cheap enough for every statement.
 */
public final class ReaderPins {
  static final long CLOCK_MARGIN_MILLIS = 60_000;

  private final Set<Hold> holds = ConcurrentHashMap.newKeySet();
  /** When this process's commits landed (null: unknown, the clock margin alone decides). */
  private final Landings landings;

  public ReaderPins(Landings landings) {
    this.landings = landings;
  }

  /** A reader's hold. Closing it (more than once is harmless) releases it. */
  public final class Hold implements AutoCloseable {
    private final TableIdentifier table;
    private final long sinceMillis;
    /** When it registered (monotonic clock), or null for a hold on one old version (time travel). */
    private final Long registeredNanos;
    private final String holder;
    /** The backend (session) holding it, or 0 for the engine's own background work. */
    private volatile int pid;

    private Hold(TableIdentifier table, long sinceMillis, Long registeredNanos, String holder, int pid) {
      this.table = table;
      this.sinceMillis = sinceMillis;
      this.registeredNanos = registeredNanos;
      this.holder = holder;
      this.pid = pid;
    }

    /** The table held, or empty when the hold covers every table (a statement's, a block's). */
    public Optional<TableIdentifier> table() {
      return Optional.ofNullable(table);
    }

    /** The versions kept: those current at or after this time (epoch milliseconds). */
    public long sinceMillis() {
      return sinceMillis;
    }

    /** Who holds it: a statement, a transaction block, a time-travel read, the maintainer, tail maintenance. */
    public String holder() {
      return holder;
    }

    /** The backend pid of the session holding it ({@link Backends}), or 0 for background work. */
    public int pid() {
      return pid;
    }

    /** Says which session's backend holds it (a time-travel read's hold, taken by {@link Relations}). */
    Hold heldBy(int backendPid) {
      this.pid = backendPid;
      return this;
    }

    @Override
    public void close() {
      holds.remove(this);
    }

    @Override
    public String toString() {
      return holder + " since " + java.time.Instant.ofEpochMilli(sinceMillis) + (table == null ? "" : " on " + table);
    }
  }

  /** A hold on every table, from now, by background work: taken before it reads any table's metadata. */
  public Hold hold(String holder) {
    return hold(holder, 0);
  }

  /** A hold on every table, from now, by the session of backend {@code pid}. */
  public Hold hold(String holder, int pid) {
    return add(new Hold(null, System.currentTimeMillis(), System.nanoTime(), holder, pid));
  }

  /** A hold on one version of one table (a time-travel read of {@code snapshot}). */
  public Hold hold(TableIdentifier table, Snapshot snapshot, String holder) {
    return add(new Hold(table, snapshot.timestampMillis(), null, holder, 0));
  }

  private Hold add(Hold h) {
    holds.add(h);
    return h;
  }

  /** The oldest hold, if any (what keeps the most history). */
  public Optional<Hold> oldest() {
    Hold oldest = null;
    for (Hold h : holds) {
      if (oldest == null || h.sinceMillis < oldest.sinceMillis) {
        oldest = h;
      }
    }
    return Optional.ofNullable(oldest);
  }

  /**
   * The time from which files written in this process may belong to a write still in flight
   * ({@code Long.MAX_VALUE}: nothing runs): the oldest hold on every table but {@code ignoring}. Every
   * statement, transaction block and background writer (a tail's seals, the maintainer) holds one from
   * before it writes its first file, so a file modified before this time was written by a write that has
   * ended — committed, or left behind for good.
   */
  long writesFrom(Set<Hold> ignoring) {
    long since = Long.MAX_VALUE;
    for (Hold h : holds) {
      if (h.table == null && !ignoring.contains(h)) {
        since = Math.min(since, h.sinceMillis);
      }
    }
    return since;
  }

  /** The live holds, oldest first ({@code floe_reader_holds}). */
  public java.util.List<Hold> holds() {
    java.util.List<Hold> all = new java.util.ArrayList<>(holds);
    all.sort(java.util.Comparator.comparingLong(Hold::sinceMillis));
    return all;
  }

  /** The oldest time held by backend {@code pid}'s sessions, if they hold any. */
  Optional<Long> oldestOf(int pid) {
    long oldest = Long.MAX_VALUE;
    for (Hold h : holds) {
      if (h.pid == pid) {
        oldest = Math.min(oldest, h.sinceMillis);
      }
    }
    return oldest == Long.MAX_VALUE ? Optional.empty() : Optional.of(oldest);
  }

  /**
   * Releases every hold of backend {@code pid} (it was terminated while no statement of it ran: nothing of it
   * reads any more); closing them again later is harmless.
   */
  void releaseHeldBy(int pid) {
    holds.removeIf(h -> h.pid == pid);
  }

  /** How many holds there are. */
  public int count() {
    return holds.size();
  }

  /**
   * The timestamp from which expiry must keep {@code table}'s snapshots ({@code Long.MAX_VALUE}: no hold
   * on it): for each hold, the snapshot that was current when it began, and everything after it.
   */
  long keepFrom(TableIdentifier id, Table table) {
    return keepFrom(id, table, Set.of());
  }

  /**
   * {@link #keepFrom(TableIdentifier, Table)} but for the holds {@code ignoring} (the asking statement's).
   * A hold registered before its reader read the table needs the version current at registration: the
   * newest landed before it, when this process's commits say which ({@link Landings}); otherwise the
   * newest snapshot stamped {@value #CLOCK_MARGIN_MILLIS} ms before it. A time-travel hold needs its
   * snapshot (and, by the margin, what was stamped around it).
   */
  long keepFrom(TableIdentifier id, Table table, Set<Hold> ignoring) {
    long registeredMillis = Long.MAX_VALUE;
    long registeredNanos = 0;
    boolean registered = false;
    long travelMillis = Long.MAX_VALUE;
    for (Hold h : holds) {
      if ((h.table == null || h.table.equals(id)) && !ignoring.contains(h)) {
        if (h.registeredNanos == null) {
          travelMillis = Math.min(travelMillis, h.sinceMillis);
        } else {
          registeredMillis = Math.min(registeredMillis, h.sinceMillis);
          registeredNanos = !registered || h.registeredNanos - registeredNanos < 0 ? h.registeredNanos
              : registeredNanos;
          registered = true;
        }
      }
    }
    long keep = Long.MAX_VALUE;
    if (registered) {
      keep = Math.max(byMargin(table, registeredMillis), byLanding(id, table, registeredNanos));
    }
    if (travelMillis != Long.MAX_VALUE) {
      keep = Math.min(keep, byMargin(table, travelMillis));
    }
    return keep;
  }

  /** The newest snapshot stamped a clock margin before {@code sinceMillis} (none: keep them all). */
  private static long byMargin(Table table, long sinceMillis) {
    long at = sinceMillis - CLOCK_MARGIN_MILLIS;
    long keepFrom = Long.MIN_VALUE;
    for (Snapshot s : table.snapshots()) {
      if (s.timestampMillis() <= at) {
        keepFrom = Math.max(keepFrom, s.timestampMillis());
      }
    }
    return keepFrom;
  }

  /**
   * The timestamp of the snapshot current when a reader registered at {@code nanos}, by this process's
   * landings ({@code Long.MIN_VALUE} when they do not tell): every snapshot before it in the table's
   * history was replaced before the reader read the pointer. Only when every snapshot the history has
   * after it is stamped no earlier (so expiring what is stamped before it takes only what came before).
   */
  private long byLanding(TableIdentifier id, Table table, long nanos) {
    if (landings == null) {
      return Long.MIN_VALUE;
    }
    Optional<Landings.Landing> landing = landings.currentAt(id, nanos);
    if (landing.isEmpty() || landing.get().snapshotId() == null) {
      return Long.MIN_VALUE;
    }
    Snapshot current = table.snapshot(landing.get().snapshotId());
    if (current == null) {
      return Long.MIN_VALUE;
    }
    boolean after = false;
    for (org.apache.iceberg.HistoryEntry e : table.history()) {
      if (after && e.timestampMillis() < current.timestampMillis()) {
        return Long.MIN_VALUE;
      }
      after |= e.snapshotId() == current.snapshotId();
    }
    return after ? current.timestampMillis() : Long.MIN_VALUE;
  }

  /**
   * Whether no hold but {@code ignoring} may read {@code id}'s metadata file named {@code fileName}: this
   * process replaced it before the oldest hold began (or before now, with no hold). False when the
   * landings do not tell.
   */
  boolean unreadable(TableIdentifier id, String fileName, Set<Hold> ignoring) {
    if (landings == null) {
      return false;
    }
    long since = System.nanoTime();
    for (Hold h : holds) {
      if ((h.table == null || h.table.equals(id)) && !ignoring.contains(h)) {
        if (h.registeredNanos == null) {
          continue; // reads an old snapshot of the current metadata, with its statement's hold
        }
        since = h.registeredNanos - since < 0 ? h.registeredNanos : since;
      }
    }
    return landings.replacedBefore(id, fileName, since);
  }
}
