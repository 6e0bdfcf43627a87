package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.catalog.LocalFileIO;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Keeping a table's storage bounded without pulling files from under a reader:
 *
 * <ul>
 *   <li><b>reclaim</b> expires snapshots that stopped being current more than a grace period ago, and
 *       deletes the files only they referenced (by reachability, as sweep does: such a file was written
 *       before the snapshot that replaced its own, so it is older than the grace period): a scan that
 *       started on such a snapshot has had the grace period to finish;
 *   <li><b>sweep</b> deletes files in the table's directories that no snapshot or metadata file names
 *       and that are older than the grace period: what a crashed commit or write left behind. A commit
 *       in flight writes its files well within the grace period, so they are never taken.
 * </ul>
 */
final class Maintenance {
  private Maintenance() {}

  /**
   * Expires the snapshots replaced by one committed at least {@code graceMillis} ago (the current one is
   * always kept).
   *
   * @return the number of snapshots expired
   */
  static int reclaim(Engine engine, TableIdentifier id, long graceMillis) {
    synchronized (engine.tables().historyLock(id)) {
      return reclaimLocked(engine, id, graceMillis);
    }
  }

  private static int reclaimLocked(Engine engine, TableIdentifier id, long graceMillis) {
    int expirable;
    synchronized (engine.committer().lock(id)) {
      Table table = engine.tables().current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
      long replacedBefore = replacedBefore(engine, id, table, graceMillis, java.util.Set.of());
      expirable = expirable(table, replacedBefore);
      if (expirable == 0) {
        return 0;
      }
      table.expireSnapshots().expireOlderThan(replacedBefore).retainLast(1).cleanExpiredFiles(false).commit();
    }
    sweep(engine, id, graceMillis);
    return expirable;
  }

  /** What an expiry did. */
  record Expired(int snapshots, List<String> files) {}

  /**
   * Expires the versions that stopped being current more than {@code retentionMillis} ago and no live
   * reader holds (except {@code own}: the holds of the statement asking), keeping the newest
   * {@code minSnapshots}, and deletes the files that only they referenced: those the versions before
   * named and the versions after do not (data and delete files, manifests, manifest lists; never a
   * metadata file, which the metadata log keeps). A file of a commit still in flight is named by neither,
   * so it is never a candidate, whatever the retention. The table's commit lock is taken for the expiry's
   * own commit only: the files every version names are read before it (writers go on meanwhile; what they
   * commit is not a candidate, as it was not named before) and after it (what a writer committed since
   * only adds names).
   */
  static Expired expireBesideWriters(Engine engine, TableIdentifier id, long retentionMillis, int minSnapshots,
      java.util.Set<ReaderPins.Hold> own) {
    return expireBesideWriters(engine, id, retentionMillis, minSnapshots, own, null);
  }

  /**
   * As above, with {@code namedBefore}: every file some version of the table named at some moment before
   * (null: read now). Files committed since are not in it, so they are never candidates, as above.
   */
  static Expired expireBesideWriters(Engine engine, TableIdentifier id, long retentionMillis, int minSnapshots,
      java.util.Set<ReaderPins.Hold> own, Set<String> namedBefore) {
    synchronized (engine.tables().historyLock(id)) {
      return expireLocked(engine, id, retentionMillis, minSnapshots, own, namedBefore);
    }
  }

  private static Expired expireLocked(Engine engine, TableIdentifier id, long retentionMillis, int minSnapshots,
      java.util.Set<ReaderPins.Hold> own, Set<String> namedBefore) {
    Table table = engine.tables().current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    if (expirable(table, replacedBefore(engine, id, table, retentionMillis, own)) == 0) {
      return new Expired(0, List.of());
    }
    Set<String> named = namedBefore != null ? new HashSet<>(namedBefore) : referenced(table, false);
    int before;
    int after;
    synchronized (engine.committer().lock(id)) {
      table = engine.tables().current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
      long replacedBefore = replacedBefore(engine, id, table, retentionMillis, own);
      // never a version that landed after the files were read (the cut-off is an age, and the clock moved
      // on): its files are not among those compared below, and would stay on disk for good
      for (Snapshot s : table.snapshots()) {
        if (s.manifestListLocation() != null && !named.contains(s.manifestListLocation())) {
          replacedBefore = Math.min(replacedBefore, s.timestampMillis());
        }
      }
      if (expirable(table, replacedBefore) == 0) {
        return new Expired(0, List.of());
      }
      before = count(table);
      table.expireSnapshots().expireOlderThan(replacedBefore).retainLast(Math.max(1, minSnapshots))
          .cleanExpiredFiles(false).commit();
      table.refresh();
      after = count(table);
    }
    named.removeAll(referenced(table, false));
    List<String> deleted = new ArrayList<>();
    for (String location : named) {
      if (!location.endsWith(".metadata.json")) {
        table.io().deleteFile(location);
        deleted.add(location);
      }
    }
    engine.files().digests().forget(deleted);
    return new Expired(before - after, List.copyOf(deleted));
  }

  /** How many versions {@link #expireBesideWriters} would expire now (at most all but {@code minSnapshots}). */
  static int expirable(Engine engine, TableIdentifier id, Table table, long retentionMillis, int minSnapshots,
      java.util.Set<ReaderPins.Hold> own) {
    int n = expirable(table, replacedBefore(engine, id, table, retentionMillis, own));
    return Math.max(0, Math.min(n, count(table) - Math.max(1, minSnapshots)));
  }

  private static int count(Table table) {
    int n = 0;
    for (Snapshot ignored : table.snapshots()) {
      n++;
    }
    return n;
  }

  /**
   * The timestamp below which a snapshot may be expired: the newest snapshot committed before the
   * cut-off (every older one was replaced at least then), and nothing a live reader may still read (a
   * statement, a block, a time-travel read: {@link ReaderPins}).
   */
  private static long replacedBefore(Engine engine, TableIdentifier id, Table table, long graceMillis,
      java.util.Set<ReaderPins.Hold> ignoring) {
    long cutoff = System.currentTimeMillis() - graceMillis;
    long replacedBefore = Long.MIN_VALUE;
    for (Snapshot s : table.snapshots()) {
      if (s.timestampMillis() <= cutoff) {
        replacedBefore = Math.max(replacedBefore, s.timestampMillis());
      }
    }
    return Math.min(replacedBefore, engine.tables().readerPins().keepFrom(id, table, ignoring));
  }

  private static int expirable(Table table, long replacedBefore) {
    int expirable = 0;
    Snapshot current = table.currentSnapshot();
    for (Snapshot s : table.snapshots()) {
      if (s.timestampMillis() < replacedBefore && (current == null || s.snapshotId() != current.snapshotId())) {
        expirable++;
      }
    }
    return expirable;
  }

  /**
   * Deletes files under the table's data and metadata directories that nothing references and that are
   * older than {@code graceMillis}.
   *
   * @return the files deleted
   */
  static List<String> sweep(Engine engine, TableIdentifier id, long graceMillis) {
    Orphans found = orphans(engine, id, graceMillis, java.util.Set.of());
    if (found.refused().isPresent()) {
      refuse(id, found.refused().get());
      return List.of();
    }
    return deleteOrphans(engine, found.files());
  }

  /**
   * Files in a table's directories that nothing references and that are older than a grace period, or
   * why there is no answer ({@code refused}: the directories are not only this table's).
   */
  record Orphans(List<Orphan> files, java.util.Optional<String> refused) {
    /** How many bytes the orphans take. */
    long bytes() {
      return files.stream().mapToLong(Orphan::bytes).sum();
    }
  }

  /** One unreferenced file: its location (a local path, or an object store location) and size. */
  record Orphan(String location, long bytes) {
    @Override
    public String toString() {
      return location;
    }
  }

  /**
   * The files under the table's data and metadata directories that no metadata file, manifest list or
   * manifest of any version references, that are older than {@code graceMillis} and that no write of
   * this process still in flight may have written: a file modified after the oldest hold of a running
   * statement, transaction block or background writer ({@link ReaderPins#writesFrom}, but for the
   * caller's own {@code ownHolds}) stays, whatever the grace period, zero included. Fail-closed: a listing
   * or a metadata read that fails is an error, before anything is decided.
   */
  static Orphans orphans(Engine engine, TableIdentifier id, long graceMillis, java.util.Set<ReaderPins.Hold> ownHolds) {
    synchronized (engine.tables().historyLock(id)) {
      return orphansLocked(engine, id, graceMillis, ownHolds);
    }
  }

  private static Orphans orphansLocked(Engine engine, TableIdentifier id, long graceMillis,
      java.util.Set<ReaderPins.Hold> ownHolds) {
    Table table = engine.tables().current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    java.util.Optional<String> problem = engine.locations().sweepProblem(table.location(),
        engine.tables().otherLocations(id));
    if (problem.isPresent()) {
      return new Orphans(List.of(), problem);
    }
    if (dev.floe.catalog.S3.remote(table.location())) {
      return objectOrphans(engine, table, graceMillis, ownHolds);
    }
    Path root = LocalFileIO.toPath(table.location());
    // a file system stamps modification times from a coarse clock (up to a tick, 4-10 ms, behind the
    // one a writer read before writing): a margin below both the cut-off and the oldest writer's start
    long cutoff = Math.min(System.currentTimeMillis() - graceMillis - 20,
        engine.tables().readerPins().writesFrom(ownHolds) - 1_000);
    // candidates first, references second: a file committed in between is referenced when looked up
    List<Path> old = new ArrayList<>();
    List<Path> foreign = new ArrayList<>();
    for (String dir : List.of("data", "metadata")) {
      Path d = root.resolve(dir);
      if (!Files.isDirectory(d)) {
        continue;
      }
      try {
        Files.walkFileTree(d, new java.nio.file.SimpleFileVisitor<>() {
          @Override
          public java.nio.file.FileVisitResult visitFile(Path p, BasicFileAttributes a) {
            if (!a.isRegularFile() || !dev.floe.catalog.Locations.tableFile(p.getFileName().toString())) {
              foreign.add(p);
            } else if (a.lastModifiedTime().toMillis() < cutoff) {
              old.add(p);
            }
            return java.nio.file.FileVisitResult.CONTINUE;
          }

          @Override
          public java.nio.file.FileVisitResult visitFileFailed(Path p, IOException e) throws IOException {
            if (e instanceof NoSuchFileException) {
              return java.nio.file.FileVisitResult.CONTINUE; // deleted meanwhile (a write that gave up)
            }
            throw e;
          }
        });
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (!foreign.isEmpty()) {
      // Floe deletes only what it can account for: a directory with other files is not only this table's
      return new Orphans(List.of(), java.util.Optional.of("its directories hold files no Iceberg table writes, "
          + "such as " + foreign.get(0)));
    }
    if (old.isEmpty()) {
      return new Orphans(List.of(), java.util.Optional.empty());
    }
    table.refresh();
    Set<Path> referenced = new HashSet<>();
    for (String l : referenced(table, true)) {
      referenced.add(LocalFileIO.toPath(l).toAbsolutePath().normalize());
    }
    List<Orphan> orphans = new ArrayList<>();
    for (Path p : old) {
      String name = p.getFileName().toString();
      if (!name.equals("version-hint.text") && !referenced.contains(p.toAbsolutePath().normalize())) {
        orphans.add(new Orphan(p.toString(), p.toFile().length()));
      }
    }
    return new Orphans(orphans, java.util.Optional.empty());
  }

  /**
   * {@link #orphans} of a table on object storage: its data and metadata prefixes listed (the objects' upload
   * times standing for modification times), the same references, grace and writers in flight.
   */
  private static Orphans objectOrphans(Engine engine, Table table, long graceMillis,
      java.util.Set<ReaderPins.Hold> ownHolds) {
    long cutoff = Math.min(System.currentTimeMillis() - graceMillis - 20,
        engine.tables().readerPins().writesFrom(ownHolds) - 1_000);
    org.apache.iceberg.io.FileIO io = engine.tables().catalog().io();
    if (!(io instanceof dev.floe.catalog.WarehouseIO w)
        || !(w.objects().remote() instanceof org.apache.iceberg.io.SupportsPrefixOperations store)) {
      return new Orphans(List.of(), java.util.Optional.of("its object store cannot be listed"));
    }
    String root = table.location().endsWith("/") ? table.location() : table.location() + "/";
    List<org.apache.iceberg.io.FileInfo> old = new ArrayList<>();
    for (String dir : List.of("data/", "metadata/")) {
      for (org.apache.iceberg.io.FileInfo f : store.listPrefix(root + dir)) {
        String name = f.location().substring(f.location().lastIndexOf('/') + 1);
        if (!dev.floe.catalog.Locations.tableFile(name)) {
          return new Orphans(List.of(), java.util.Optional.of("its location holds objects no Iceberg table writes, "
              + "such as " + f.location()));
        }
        if (f.createdAtMillis() < cutoff) {
          old.add(f);
        }
      }
    }
    if (old.isEmpty()) {
      return new Orphans(List.of(), java.util.Optional.empty());
    }
    table.refresh();
    Set<String> referenced = referenced(table, true);
    List<Orphan> orphans = new ArrayList<>();
    for (org.apache.iceberg.io.FileInfo f : old) {
      if (!referenced.contains(f.location())) {
        orphans.add(new Orphan(f.location(), f.size()));
      }
    }
    return new Orphans(orphans, java.util.Optional.empty());
  }

  /** Deletes {@code orphans} (found by {@link #orphans}); returns those deleted. */
  static List<String> deleteOrphans(Engine engine, List<Orphan> orphans) {
    List<Path> local = new ArrayList<>();
    List<String> deleted = new ArrayList<>();
    for (Orphan o : orphans) {
      if (dev.floe.catalog.S3.remote(o.location())) {
        engine.tables().catalog().io().deleteFile(o.location());
        deleted.add(o.location());
      } else {
        local.add(Path.of(o.location()));
      }
    }
    deleted.addAll(delete(engine, local));
    return deleted;
  }

  /** Deletes local {@code files}; returns those deleted. */
  static List<String> delete(Engine engine, List<Path> files) {
    List<String> deleted = new ArrayList<>();
    for (Path p : files) {
      try {
        Files.deleteIfExists(p);
        deleted.add(p.toString());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    engine.files().digests().forget(deleted);
    return deleted;
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Maintenance.class);
  private static final java.util.Set<TableIdentifier> REFUSED = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** A sweep that will not run: said once per table and process (the advancer asks every minute). */
  private static void refuse(TableIdentifier id, String why) {
    if (REFUSED.add(id)) {
      LOG.warn("not sweeping unreferenced files of table {}: {}", id, why);
    }
  }

  /**
   * Deletes files under a log's published table on object storage that nothing references and that
   * were written more than {@code graceMillis} ago: what a publish that crashed left (a metadata file
   * whose pointer swap never happened, manifests of a commit that never landed, files uploaded by a log
   * that was then restored elsewhere).
   *
   * @return the files deleted
   */
  static List<String> sweep(dev.floe.tail.Published published, long graceMillis) {
    if (published.current().isEmpty()) {
      return List.of();
    }
    long cutoff = System.currentTimeMillis() - graceMillis;
    // candidates first, references second: a file committed in between is referenced when looked up
    List<String> old = new ArrayList<>();
    org.apache.iceberg.io.SupportsPrefixOperations store =
        (org.apache.iceberg.io.SupportsPrefixOperations) published.io().remote();
    for (org.apache.iceberg.io.FileInfo f : store.listPrefix(published.location() + "/")) {
      if (f.createdAtMillis() < cutoff) {
        old.add(f.location());
      }
    }
    Table table = published.current().orElseThrow();
    // the metadata log names every version kept (older ones were deleted as they left it)
    Set<String> referenced = referenced(table, false);
    referenced.add(published.location() + "/" + dev.floe.tail.Published.POINTER);
    List<String> deleted = new ArrayList<>();
    for (String l : old) {
      if (!referenced.contains(l)) {
        published.io().deleteFile(l);
        deleted.add(l);
      }
    }
    return deleted;
  }

  /** Every file the table's metadata names: metadata files, manifest lists, manifests, data and delete files. */
  static Set<String> referenced(Table table, boolean olderMetadata) {
    Set<String> locations = metadataFiles(table, olderMetadata);
    locations.add(((org.apache.iceberg.HasTableOperations) table).operations().current().metadataFileLocation());
    locations.addAll(ReachableFileUtil.statisticsFilesLocations(table));
    Set<String> manifests = new HashSet<>();
    for (Snapshot s : table.snapshots()) {
      if (s.manifestListLocation() != null) {
        locations.add(s.manifestListLocation());
      }
      for (ManifestFile m : s.allManifests(table.io())) {
        if (manifests.add(m.path())) {
          locations.add(m.path());
          addFiles(table, m, locations);
        }
      }
    }
    return locations;
  }

  /**
   * The metadata files the table's metadata log names; with {@code older}, also those the oldest one
   * still on disk names in turn, and so on. Floe deletes the files that leave a log, so most a log names
   * are gone: Iceberg's own walk logs an ERROR for each.
   */
  private static Set<String> metadataFiles(Table table, boolean older) {
    Set<String> locations = new HashSet<>();
    org.apache.iceberg.TableMetadata meta = ((org.apache.iceberg.HasTableOperations) table).operations().current();
    while (meta != null) {
      List<org.apache.iceberg.TableMetadata.MetadataLogEntry> log = meta.previousFiles();
      boolean added = false;
      for (org.apache.iceberg.TableMetadata.MetadataLogEntry e : log) {
        added |= locations.add(e.file());
      }
      meta = null;
      for (int i = 0; older && added && meta == null && i < log.size(); i++) {
        if (table.io().newInputFile(log.get(i).file()).exists()) { // the oldest still there
          meta = org.apache.iceberg.TableMetadataParser.read(table.io(), log.get(i).file());
        }
      }
    }
    return locations;
  }

  private static void addFiles(Table table, ManifestFile m, Set<String> locations) {
    for (ManifestEntries.Entry f : ManifestEntries.of(table, m)) {
      locations.add(f.location());
    }
  }

}
