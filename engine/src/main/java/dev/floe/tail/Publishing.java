package dev.floe.tail;

import dev.floe.FloeProperties;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;

/**
 * A tail's publishing to object storage (see {@link TailLog#publish}): the staging table's files are
 * chosen, claimed, uploaded and committed to the log's {@link Published} table, and evicted from the
 * staging table once a publish found them there.
 *
 * <p><b>Locks.</b> {@link #publish} holds the log's publish lock throughout (one publish at a time) and
 * its seal lock only to choose and claim the files: the requests to object storage run without it, so
 * seals go on meanwhile, and compaction leaves claimed files alone. {@link #evict} holds the seal lock.
 * What this process learned of the published table, and when it last published, are guarded by the
 * log's monitor.
 */
final class Publishing {
  /** The file in the log's directory recording {@link #claimed}. */
  static final String CLAIM_FILE = "publishing";

  private final TailLog log;
  private final TailLog.Host host;
  private final TailLog.Config config;
  private final Path dir;
  private final Schema schema;
  private final Memtable memtable;

  // guarded by the log's monitor
  /**
   * The offset below which staged files may be in the published table (claimed in the file
   * {@value #CLAIM_FILE} before a publish commits, so that compaction never merges them with files that
   * are not); what this process last learned the published table holds.
   */
  private long claimed;
  private long publishedThrough = -1;
  /** When rows were first staged since the last publish (System.nanoTime), or 0. */
  private long stagedSince;
  /** After failed publishes: how many in a row, and when an advance may try again. */
  private int publishFailures;
  private long publishRetryAt = System.nanoTime();
  private String publishedMetadata;

  /** {@code claimed}: what the log's claim file or its staging table says was published, at least. */
  Publishing(TailLog log, TailLog.Host host, TailLog.Config config, Path dir, Schema schema, Memtable memtable,
      long claimed) {
    this.log = log;
    this.host = host;
    this.config = config;
    this.dir = dir;
    this.schema = schema;
    this.memtable = memtable;
    this.claimed = claimed;
  }

  /** See {@link TailLog#publish}. */
  long publish(boolean flush) {
    Optional<Published> target = host.published();
    if (target.isEmpty()) {
      return log.sealedThrough();
    }
    synchronized (log.publishLock) {
      synchronized (log.sealLock) {
        log.checkOpen();
        Table staging = host.table();
        synchronized (log) {
          if (publishedThrough >= 0 && TailLog.through(staging) <= publishedThrough) {
            return publishedThrough; // nothing staged since the last publish
          }
          long since = stagedSince;
          long now = System.nanoTime();
          if (!flush && ((since != 0 && now - since < config.publishAgeMillis() * 1_000_000)
              || now - publishRetryAt < 0)) {
            // let staged files settle (compaction) first; after a failure, wait before trying again
            return Math.max(publishedThrough, TailLog.evicted(staging));
          }
        }
      }
      try {
        long published = publishStaged(target.get());
        synchronized (log) {
          publishFailures = 0;
        }
        return published;
      } catch (RuntimeException e) {
        synchronized (log) {
          // a machine cut off from S3 tries again after 1, 2, 4 ... 60 s (an explicit publish at once)
          publishRetryAt = System.nanoTime() + Math.min(60_000L, 1000L << Math.min(publishFailures++, 6)) * 1_000_000;
        }
        throw e;
      }
    }
  }

  /** Rows were sealed into the staging table: they settle from now, if none were waiting. Holding the log's monitor. */
  void staged() {
    if (stagedSince == 0) {
      stagedSince = System.nanoTime();
    }
  }

  /** The offset below which staged files may be in the published table. Holding the log's monitor. */
  long claimed() {
    return claimed;
  }

  /** Whether this process reached the published table (a publish found it). Holding the log's monitor. */
  boolean reached() {
    return publishedThrough >= 0;
  }

  /** See {@link TailLog#publishedThrough}. Holding the log's monitor. */
  long publishedThrough() {
    if (host.published().isEmpty()) {
      return memtable.through();
    }
    return Math.max(publishedThrough, TailLog.evicted(host.table()));
  }

  /** Evicts from the staging table what the last publish found in the published table (see {@link TailLog#evict}). */
  void evict() {
    synchronized (log.sealLock) {
      log.checkOpen();
      evictPublished();
    }
  }

  /**
   * Publishes what is staged (see {@link #publish}). Holding the publish lock: the requests to object
   * storage run without the seal lock, so seals go on meanwhile. The files are chosen and claimed
   * under it, and compaction leaves claimed files alone.
   */
  private long publishStaged(Published published) {
    Table staging = host.table();
    Table table = published.current().orElse(null);
    if (table == null) {
      if (staging.properties().containsKey(FloeProperties.PUBLISHED_METADATA)) {
        throw new FloeException(SqlState.DATA_CORRUPTED, "the published table " + published.location()
            + " is gone, but " + staging.name() + " published rows to it");
      }
      table = published.create(staging.schema(), staging.spec(), staging.sortOrder(),
          ((org.apache.iceberg.HasTableOperations) staging).operations().current().formatVersion(),
          publishedProperties(staging.properties()), staging.uuid().toString());
    } else if (!staging.properties().containsKey(FloeProperties.PUBLISHED_METADATA)
        && !staging.uuid().toString().equals(table.properties().get(FloeProperties.PUBLISHED_LOG))) {
      throw new FloeException(SqlState.DUPLICATE_TABLE, "a table is published at " + published.location()
          + " already, by another log");
    }
    long at = Published.through(table);
    long to;
    Map<org.apache.iceberg.DataFile, Path> local = new java.util.LinkedHashMap<>();
    synchronized (log.sealLock) {
      log.checkOpen();
      staging = host.table();
      long evicted = TailLog.evicted(staging);
      synchronized (log) {
        if (at < evicted || at > claimed) {
          // this log published at least what its staging table let go of, and at most what its
          // publishes claimed (committed, not yet evicted); anything else was published by another process
          throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "the published table "
              + published.location() + " holds offsets below " + at + " but this log published below " + evicted
              + ": another process publishes to it (was the log restored elsewhere?)");
        }
        publishedThrough = at;
        publishedMetadata = ((org.apache.iceberg.HasTableOperations) table).operations().current()
            .metadataFileLocation();
      }
      to = TailLog.through(staging);
      if (to <= at) {
        return at;
      }
      for (org.apache.iceberg.DataFile f : stagedFiles(staging)) {
        long[] range = offsets(f);
        if (range[1] < at) {
          continue; // published before: the next evict lets it go
        }
        if (range[0] < at) {
          throw new FloeException(SqlState.DATA_CORRUPTED, "staged file " + f.location() + " holds offsets "
              + range[0] + ".." + range[1] + " on both sides of the published watermark " + at);
        }
        local.put(f, dev.floe.catalog.TableFiles.readable(staging.io(), f.location()));
      }
      claim(to); // from here compaction leaves these files alone, and they stay until evict
    }
    String metadata = published.publish(host.committer(), table, local, at, to);
    synchronized (log) {
      publishedThrough = to;
      publishedMetadata = metadata;
      stagedSince = memtable.through() > to ? System.nanoTime() : 0;
    }
    return to;
  }

  /** Properties the published table takes from the staging table: all but the log's own. */
  private static Map<String, String> publishedProperties(Map<String, String> staging) {
    Map<String, String> props = new java.util.HashMap<>();
    staging.forEach((k, v) -> {
      if (!k.startsWith(FloeProperties.TAIL_PREFIX) && !k.equals(FloeProperties.TAIL)) {
        props.put(k, v);
      }
    });
    return props;
  }

  /** The data files of the staging table's current snapshot (a log's staging table has no deletes). */
  private static List<org.apache.iceberg.DataFile> stagedFiles(Table staging) {
    List<org.apache.iceberg.DataFile> files = new ArrayList<>();
    if (staging.currentSnapshot() == null) {
      return files;
    }
    try (var tasks = staging.newScan().useSnapshot(staging.currentSnapshot().snapshotId()).includeColumnStats()
        .planFiles()) {
      for (org.apache.iceberg.FileScanTask t : tasks) {
        if (!t.deletes().isEmpty()) {
          throw new FloeException(SqlState.DATA_CORRUPTED, "staged file " + t.file().location()
              + " has deletes: the rows of a published log do not change");
        }
        files.add(t.file());
      }
    } catch (java.io.IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot list the staged files: " + e.getMessage(), e);
    }
    return files;
  }

  /** The lowest and highest offset in a file, from its Iceberg metrics. */
  private long[] offsets(org.apache.iceberg.DataFile f) {
    int id = schema.findField(TailLog.OFFSET_COLUMN).fieldId();
    ByteBuffer lower = f.lowerBounds() == null ? null : f.lowerBounds().get(id);
    ByteBuffer upper = f.upperBounds() == null ? null : f.upperBounds().get(id);
    if (lower == null || upper == null) {
      throw new FloeException(SqlState.DATA_CORRUPTED, "staged file " + f.location() + " has no bounds on "
          + TailLog.OFFSET_COLUMN);
    }
    return new long[] {
        org.apache.iceberg.types.Conversions.<Long>fromByteBuffer(Types.LongType.get(), lower),
        org.apache.iceberg.types.Conversions.<Long>fromByteBuffer(Types.LongType.get(), upper)};
  }

  /**
   * Removes from the staging table the files whose rows the published table holds (as the last publish
   * found it), recording the published version that holds them, in one staging commit.
   */
  private void evictPublished() {
    long at;
    String metadata;
    synchronized (log) {
      at = publishedThrough;
      metadata = publishedMetadata;
    }
    Table staging = host.table();
    if (metadata == null || at <= TailLog.evicted(staging)) {
      return;
    }
    List<org.apache.iceberg.DataFile> gone = new ArrayList<>();
    for (org.apache.iceberg.DataFile f : stagedFiles(staging)) {
      if (offsets(f)[1] < at) {
        gone.add(f);
      }
    }
    Map<String, String> published = Map.of(FloeProperties.PUBLISHED_THROUGH, Long.toString(at),
        FloeProperties.PUBLISHED_METADATA, metadata);
    dev.floe.commit.TableChange change = gone.isEmpty()
        ? dev.floe.commit.TableChange.properties(published, java.util.Set.of())
        : dev.floe.commit.TableChange.delete(gone).withSummary(published).withProperties(published, java.util.Set.of());
    host.committer().commit(host.id(), staging, change);
  }

  /** Records, durably, that staged files below {@code to} may be in the published table from now on. */
  private void claim(long to) {
    synchronized (log) {
      if (to <= claimed) {
        return;
      }
      claimed = to;
    }
    Path file = dir.resolve(CLAIM_FILE);
    Path tmp = dir.resolve(CLAIM_FILE + ".tmp");
    try {
      java.nio.file.Files.writeString(tmp, Long.toString(to));
      dev.floe.catalog.LocalFileIO.syncFile(tmp);
      java.nio.file.Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      dev.floe.catalog.LocalFileIO.syncDirectory(dir);
    } catch (java.io.IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot record a publish in " + file + ": " + e.getMessage(), e);
    }
  }

  /** What the claim file in {@code dir} records (0 without one). */
  static long readClaim(Path dir) {
    try {
      return Long.parseLong(java.nio.file.Files.readString(dir.resolve(CLAIM_FILE)).strip());
    } catch (java.nio.file.NoSuchFileException e) {
      return 0;
    } catch (java.io.IOException | NumberFormatException e) {
      throw new FloeException(SqlState.DATA_CORRUPTED, "cannot read " + dir.resolve(CLAIM_FILE) + ": "
          + e.getMessage(), e);
    }
  }
}
