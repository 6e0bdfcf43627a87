package dev.floe.tail;

import dev.floe.FloeProperties;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.write.Inserter;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.duckdb.DuckDBConnection;

/**
 * A tail's way into the table's files (see {@link TailLog#seal}, {@link TailLog#ingest},
 * {@link TailLog#compact}): unsealed rows written as Parquet and committed with the watermark moved past
 * them; rows ingested straight into files with the next offsets; small sealed files merged.
 *
 * <p><b>Locks.</b> Each of these holds the log's seal lock throughout, so the log changes the table's
 * files one step at a time, and takes the table's commit lock inside it (by committing); the log's
 * monitor only briefly, to read and move the memtable's state, never across a commit.
 */
final class Sealing {
  private final TailLog log;
  private final TailLog.Host host;
  private final TailLog.Config config;
  private final Memtable memtable;
  private final Publishing publishing;
  /** The log, to hold appends back while an ingest takes offsets. */
  private final Wal wal;
  /** The connection seals and compactions write files with. */
  private final DuckDBConnection duck;

  Sealing(TailLog log, TailLog.Host host, TailLog.Config config, Memtable memtable, Publishing publishing,
      Wal wal, DuckDBConnection duck) {
    this.log = log;
    this.host = host;
    this.config = config;
    this.memtable = memtable;
    this.publishing = publishing;
    this.wal = wal;
    this.duck = duck;
  }

  /** See {@link TailLog#seal}. */
  long seal(boolean flush) {
    return seal(flush, Long.MAX_VALUE);
  }

  /**
   * {@link #seal(boolean)}, sealing also when the oldest unsealed row is at least {@code olderThanMillis} old
   * (a reader through the REST catalog wants rows that old in the table).
   */
  long seal(boolean flush, long olderThanMillis) {
    synchronized (log.sealLock) {
      long from;
      long to;
      String sql;
      synchronized (log) {
        log.checkOpen();
        from = memtable.through();
        memtable.sync();
        memtable.flushUnloaded(); // a keyed memtable's indexed versions, into the tables the seal reads
        // a keyed memtable may hold versions queued and not yet durable: those are the next seal's
        to = Math.min(memtable.syncedEnd(), memtable.durableEnd());
        if (to == from) {
          return 0;
        }
        long since = memtable.unsealedSince();
        long ageMillis = since == 0 ? 0 : (System.nanoTime() - since) / 1_000_000;
        if (!flush && to - from < config.sealRows() && ageMillis < Math.min(config.sealAgeMillis(), olderThanMillis)) {
          return 0;
        }
        // the rows sealed stay readable from the closed generations until the commit moves the watermark
        sql = memtable.cut(from, to);
      }
      commitSeal(from, to, sql);
      synchronized (log) {
        publishing.staged();
        memtable.sealed(to);
      }
      return to - from;
    }
  }

  private void commitSeal(long from, long to, String rowsSql) {
    Table table = host.table();
    checkWatermark(table, from);
    if (log.keyed()) {
      // the newest version of each key replaces the table's row of it: one row delta, with the watermark
      dev.floe.commit.TableChange fold = host.fold(duck, table, rowsSql);
      host.committer().commit(host.id(), table, (fold.changesFiles() ? fold.withSummary(watermarkSummary(table, to))
          : fold).withProperties(Map.of(FloeProperties.TAIL_THROUGH, Long.toString(to)), java.util.Set.of()));
      return;
    }
    Inserter.Written written;
    try {
      written = Inserter.write(duck, table, table.schema(), rowsSql, host.scratch(), -1);
    } catch (Inserter.WriteFailure e) {
      throw e.as("seal rows " + from + ".." + to + " of " + table.name());
    }
    commitRows(table, to, written);
  }

  private static void checkWatermark(Table table, long from) {
    long tableThrough = TailLog.through(table);
    if (tableThrough != from) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "table " + table.name()
          + " holds offsets below " + tableThrough + " but its tail expected " + from
          + ": another process is sealing it");
    }
  }

  /**
   * Commits files of rows below {@code to} with the watermark moved to it (the committer deletes them if
   * they do not commit). Holding the seal lock, so the published-version properties the snapshot's
   * summary repeats (which only {@link Publishing#evict} moves, also under it) are as read.
   */
  private void commitRows(Table table, long to, Inserter.Written written) {
    host.committer().commit(host.id(), table, dev.floe.commit.TableChange.append(written.files())
        .withSummary(watermarkSummary(table, to))
        .withProperties(Map.of(FloeProperties.TAIL_THROUGH, Long.toString(to)), java.util.Set.of()));
  }

  /** What the snapshot of a commit moving the watermark to {@code to} records in its summary. */
  private static Map<String, String> watermarkSummary(Table table, long to) {
    Map<String, String> summary = new java.util.HashMap<>();
    summary.put(FloeProperties.TAIL_THROUGH, Long.toString(to));
    for (String k : List.of(FloeProperties.PUBLISHED_THROUGH, FloeProperties.PUBLISHED_METADATA)) {
      if (table.properties().containsKey(k)) {
        summary.put(k, table.properties().get(k)); // what time travel to this snapshot reads from S3
      }
    }
    return summary;
  }

  /** See {@link TailLog#ingest}. */
  long ingest(java.util.function.LongFunction<Inserter.Written> writer) {
    if (log.keyed()) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot ingest into a table with a primary key: its "
          + "log takes keyed changes, which read the table");
    }
    synchronized (log.sealLock) {
      wal.pause();
      long start = -1;
      long end = -1;
      try {
        seal(true);
        synchronized (log) {
          start = memtable.through();
        }
        Table table = host.table();
        checkWatermark(table, start);
        Inserter.Written written = writer.apply(start);
        end = start + written.rows();
        if (written.rows() > 0) {
          commitRows(table, end, written);
        }
        synchronized (log) {
          memtable.ingested(end);
        }
        return start;
      } finally {
        wal.resume(end);
      }
    }
  }

  /** See {@link TailLog#sealedWhile}. */
  <T> T sealedWhile(java.util.function.Supplier<T> change) {
    synchronized (log.sealLock) {
      seal(true);
      return change.get();
    }
  }

  /** See {@link TailLog#compact}. */
  int compact(boolean all) {
    synchronized (log.sealLock) {
      log.checkOpen();
      long from;
      synchronized (log) {
        from = host.published().isPresent() ? publishing.claimed() : Long.MIN_VALUE;
      }
      return host.compact(duck, all, from);
    }
  }
}
