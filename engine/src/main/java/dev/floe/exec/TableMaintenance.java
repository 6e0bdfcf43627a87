package dev.floe.exec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The maintenance steps of one table by its {@link MaintenancePolicy}, as the background maintainer,
 * {@code VACUUM} and {@code floe maintain} take them: expiry of the history the policy does not keep
 * (and of the metadata files that left the metadata log), a manifest rewrite, orphan removal. Each
 * returns what it did.
 */
final class TableMaintenance {
  private TableMaintenance() {}

  /**
   * Expires the versions the policy does not keep — older than its age, or beyond its count — but what
   * readers hold (except {@code own}), with the files only they referenced, taking the table's commit lock
   * for the expiry's commit only; then deletes the metadata files older than every one the metadata log still names.
   */
  static Maintainer.Done expire(Engine engine, TableIdentifier id, MaintenancePolicy policy,
      Set<ReaderPins.Hold> own) {
    return expire(engine, id, policy, own, 0);
  }

  /**
   * As above, leaving room in the table's size bound for {@code reserve} bytes more: the files a rewrite
   * is about to write, beside those it replaces.
   */
  static Maintainer.Done expire(Engine engine, TableIdentifier id, MaintenancePolicy policy,
      Set<ReaderPins.Hold> own, long reserve) {
    // sized and expired under the history's lock: another expiry may not delete what the sizing reads
    synchronized (engine.tables().historyLock(id)) {
      return expireLocked(engine, id, policy, own, reserve);
    }
  }

  private static Maintainer.Done expireLocked(Engine engine, TableIdentifier id, MaintenancePolicy policy,
      Set<ReaderPins.Hold> own, long reserve) {
    Table current = engine.tables().current(id).orElse(null);
    if (current == null) {
      return null;
    }
    HistorySize size = HistorySize.of(current);
    MaintenancePolicy.Retention retention = retention(engine, id, current, policy, size, true, reserve);
    Maintenance.Expired expired = Maintenance.expireBesideWriters(engine, id, retention.millis(),
        retention.retainLast(), own, size.named());
    List<String> metadata = oldMetadata(engine, id, own);
    MaintenancePolicy.Bound bound = engine.tables().sizeBounds().get(id);
    if (bound != null && LOG.isDebugEnabled()) {
      LOG.debug("expiry of {}: the size bound keeps {} of {} versions, {} of {} bytes, within {} with room for {} "
          + "versions ({} bytes) landing before the next expiry", id, bound.present(), size.costs().size(),
          bound.presentBytes(), size.costs().stream().mapToLong(Long::longValue).sum(), bound.budget(),
          bound.landing(), bound.landingBytes());
    }
    return new Maintainer.Done(expired.files().size() + metadata.size(), 0, 0, 0, expired.snapshots(),
        expired.snapshots() == 0 ? "nothing to expire: readers hold the versions, or none is old enough" : "done");
  }

  /**
   * The retention that keeps the versions the policy's count, age and size bound allow; with
   * {@code remember}, the size bound's count is remembered for the trigger and the next expiry
   * ({@link Tables#sizeBounds}).
   */
  private static MaintenancePolicy.Retention retention(Engine engine, TableIdentifier id, Table table,
      MaintenancePolicy policy, HistorySize size, boolean remember, long reserve) {
    MaintenancePolicy.Bound bound = policy.keep(size, engine.tables().sizeBounds().get(id), reserve);
    if (remember) {
      engine.tables().sizeBounds().put(id, bound);
    }
    return policy.retention(table, System.currentTimeMillis(), bound.kept());
  }

  /**
   * Deletes the table's metadata files that left its metadata log ({@code write.metadata.previous-versions-max}
   * keeps the newest) and that no reader may still read (but the holds {@code own}): those this process
   * replaced before the oldest reader registered ({@link ReaderPins#unreadable}), and those stamped a clock
   * margin before the oldest file the log names. A metadata file being written by a commit in flight is
   * neither: it has not been replaced, and it is newer than every one the log names.
   *
   * <p>The log is read and the directory listed under the table's commit lock: a commit landing between
   * the two would add files the read log does not name but the table's new log does, and this process
   * may already count them as replaced.
   */
  static List<String> oldMetadata(Engine engine, TableIdentifier id, Set<ReaderPins.Hold> own) {
    List<Path> old;
    synchronized (engine.committer().lock(id)) {
      old = leftTheLog(engine, id, own);
    }
    return Maintenance.delete(engine, old);
  }

  /** The metadata files {@link #oldMetadata} deletes, with the table's commits held off. */
  private static List<Path> leftTheLog(Engine engine, TableIdentifier id, Set<ReaderPins.Hold> own) {
    Table table = engine.tables().current(id).orElse(null);
    if (table == null) {
      return List.of();
    }
    if (dev.floe.catalog.S3.remote(table.location())) {
      return List.of(); // an object store is not listed: what a commit retires is deleted as it lands
    }
    TableMetadata meta = ((HasTableOperations) table).operations().current();
    Set<String> named = new HashSet<>();
    long oldest = meta.lastUpdatedMillis();
    for (TableMetadata.MetadataLogEntry e : meta.previousFiles()) {
      named.add(dev.floe.catalog.LocalFileIO.toPath(e.file()).toAbsolutePath().normalize().toString());
      oldest = Math.min(oldest, e.timestampMillis());
    }
    if (meta.metadataFileLocation() != null) {
      named.add(dev.floe.catalog.LocalFileIO.toPath(meta.metadataFileLocation()).toAbsolutePath().normalize()
          .toString());
    }
    Path dir = dev.floe.catalog.LocalFileIO.toPath(table.location()).resolve("metadata");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    long before = oldest - ReaderPins.CLOCK_MARGIN_MILLIS;
    ReaderPins pins = engine.tables().readerPins();
    List<Path> old = new ArrayList<>();
    try (var files = Files.list(dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        String name = p.getFileName().toString();
        if (name.endsWith(".metadata.json") && !named.contains(p.toAbsolutePath().normalize().toString())) {
          try {
            if (pins.unreadable(id, name, own) || Files.getLastModifiedTime(p).toMillis() < before) {
              old.add(p);
            }
          } catch (java.nio.file.NoSuchFileException e) {
            // gone meanwhile
          }
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return old;
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TableMaintenance.class);

  /**
   * Deletes, as a commit of this process lands, the metadata files that left the table's metadata log with
   * it and that no reader of this process may still read ({@link ReaderPins#unreadable}): a table taking
   * tens of commits a second would otherwise hold a metadata file per commit until the next expiry. What a
   * reader may still read stays for {@link #oldMetadata}. Never fails the commit, which has landed.
   */
  static void retired(Engine engine, TableIdentifier id, List<String> files) {
    try {
      ReaderPins pins = engine.tables().readerPins();
      List<Path> unread = new ArrayList<>();
      for (String f : files) {
        if (dev.floe.catalog.S3.remote(f)) {
          String name = f.substring(f.lastIndexOf('/') + 1);
          if (pins.unreadable(id, name, Set.of())) {
            engine.tables().catalog().io().deleteFile(f);
          }
          continue;
        }
        Path p = dev.floe.catalog.LocalFileIO.toPath(f);
        if (pins.unreadable(id, p.getFileName().toString(), Set.of())) {
          unread.add(p);
        }
      }
      Maintenance.delete(engine, unread);
    } catch (RuntimeException e) {
      LOG.warn("could not delete the metadata files that left the log of {}: {}", id, e.toString());
    }
  }

  /** Rewrites the table's manifests into few (by partition, of Iceberg's target manifest size). */
  static Maintainer.Done rewriteManifests(Engine engine, TableIdentifier id) {
    synchronized (engine.committer().lock(id)) {
      Table table = engine.tables().current(id).orElse(null);
      if (table == null || table.currentSnapshot() == null) {
        return null;
      }
      List<ManifestFile> before = table.currentSnapshot().allManifests(table.io());
      table.rewriteManifests().commit();
      table.refresh();
      Snapshot after = table.currentSnapshot();
      int now = after.allManifests(table.io()).size();
      long bytes = 0;
      for (ManifestFile m : before) {
        bytes += m.length();
      }
      return new Maintainer.Done(before.size(), now, bytes, 0, 0, "done");
    }
  }

  /** What {@link #expire} would expire now. */
  static Maintainer.Done wouldExpire(Engine engine, TableIdentifier id, Table table, MaintenancePolicy policy,
      Set<ReaderPins.Hold> own) {
    MaintenancePolicy.Retention retention;
    synchronized (engine.tables().historyLock(id)) {
      retention = retention(engine, id, table, policy, HistorySize.of(table), false, 0);
    }
    int n = Maintenance.expirable(engine, id, table, retention.millis(), retention.retainLast(), own);
    return new Maintainer.Done(0, 0, 0, 0, n, "dry run: would expire " + n + " snapshot(s)");
  }

  /**
   * Removes (dry: lists) the orphan files older than the policy's retention that no write in flight may
   * have written.
   */
  static Maintainer.Done removeOrphans(Engine engine, TableIdentifier id, MaintenancePolicy policy,
      Set<ReaderPins.Hold> own, boolean dry) {
    Maintenance.Orphans found = Maintenance.orphans(engine, id, policy.orphanRetentionMillis(), own);
    if (found.refused().isPresent()) {
      return new Maintainer.Done(0, 0, 0, 0, 0, "skipped: " + found.refused().get());
    }
    long bytes = found.bytes();
    if (dry) {
      return new Maintainer.Done(found.files().size(), 0, bytes, 0, 0, "dry run: would delete "
          + found.files().size() + " orphan file(s)");
    }
    List<String> deleted = Maintenance.deleteOrphans(engine, found.files());
    return new Maintainer.Done(deleted.size(), 0, bytes, 0, 0, "done");
  }
}
