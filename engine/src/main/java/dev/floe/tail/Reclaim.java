package dev.floe.tail;

import java.util.Optional;

/**
 * What a tail's table no longer needs goes (see {@link TailLog#reclaim}, {@link TailLog#sweep}): snapshots
 * replaced more than the grace period ago, the files only they named, files nothing names, and local
 * copies of published files beyond the cache's size.
 *
 * <p><b>Locks.</b> Both hold the log's seal lock throughout, so nothing they delete is being written by a
 * seal or compaction of this log; the engine's reclaim takes the table's commit lock inside it.
 */
final class Reclaim {
  private final TailLog log;
  private final TailLog.Host host;
  private final TailLog.Config config;
  private final Publishing publishing;

  Reclaim(TailLog log, TailLog.Host host, TailLog.Config config, Publishing publishing) {
    this.log = log;
    this.host = host;
    this.config = config;
    this.publishing = publishing;
  }

  /** See {@link TailLog#reclaim}. */
  int reclaim() {
    synchronized (log.sealLock) {
      log.checkOpen();
      int expired = host.reclaim(config.graceMillis());
      Optional<Published> target = host.published();
      boolean reached;
      synchronized (log) {
        reached = publishing.reached(); // this process reached the published table
      }
      if (target.isPresent()) {
        // local copies of published files beyond the cache's size go, least recently used first
        target.get().io().trim(config.cacheBytes(), config.graceMillis());
      }
      if (target.isPresent() && reached) {
        try {
          expired += target.get().reclaim(config.graceMillis());
        } catch (RuntimeException e) {
          // object storage is away (or another writer took the table, which publish reports): the
          // published table's old snapshots wait for the next reclaim
        }
      }
      return expired;
    }
  }

  /** See {@link TailLog#sweep}. */
  int sweep() {
    synchronized (log.sealLock) {
      log.checkOpen();
      return host.sweep(config.graceMillis());
    }
  }
}
