package dev.floe.catalog;

import java.nio.file.Path;
import java.util.Objects;
import java.util.OptionalInt;
import org.apache.iceberg.LocationProviders;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * Commits one table through the {@link FloeCatalog}.
 *
 * <p>A commit writes {@code metadata/v<N>.metadata.json} (exclusive create, fsynced), then swaps the
 * catalog pointer from the base's file to the new one. If another committer moved the pointer first the
 * new file is deleted and {@link CommitFailedException} is raised, which Iceberg's operations retry
 * against the refreshed metadata. After a successful swap the committed metadata becomes current without
 * re-reading the file just written, and {@code version-hint.text} is updated.
 *
 * <p>Any other error of the swap is one SQLite raised before its COMMIT (see
 * {@link FloeCatalog#swapAll}): the pointer did not move, and the new file is deleted too. The one
 * exception is {@link CommitStateUnknownException}, when SQLite's COMMIT itself failed and may have
 * taken effect: the file then stays, since the pointer may name it. Swaps that happened are counted
 * ({@link SwapCount}).
 */
public final class FloeTableOperations implements TableOperations, SwapCount {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FloeTableOperations.class);
  private final FloeCatalog catalog;
  private final TableIdentifier id;
  private final FileIO io;
  private volatile TableMetadata current;
  /** Writes the metadata files, keeping the JSON of snapshots written before. */
  private final org.apache.iceberg.FloeMetadataJson json = new org.apache.iceberg.FloeMetadataJson();
  private volatile boolean loaded;
  private volatile long swaps;

  FloeTableOperations(FloeCatalog catalog, TableIdentifier id, FileIO io) {
    this.catalog = catalog;
    this.id = id;
    this.io = io;
  }

  @Override
  public TableMetadata current() {
    if (!loaded) {
      return refresh();
    }
    return current;
  }

  @Override
  public synchronized TableMetadata refresh() {
    String location = catalog.metadataLocation(id).orElse(null);
    if (location == null) {
      if (current != null) {
        throw new NoSuchTableException("Table does not exist: %s", id);
      }
      loaded = true;
      return null;
    }
    TableMetadata cur = current;
    if (cur == null || !location.equals(cur.metadataFileLocation())) {
      java.util.Optional<TableMetadata> loaded = catalog.loaded(id, location);
      if (loaded.isPresent()) {
        current = loaded.get();
      } else {
        catalog.fileDigests().verify(java.util.List.of(location));
        current = TableMetadataParser.read(io, location);
      }
    }
    loaded = true;
    return current;
  }

  /**
   * Commits, after checking that the manifests the new snapshot carries over from its parent are as
   * written: a commit never builds on a manifest that cannot be read back ({@link FileDigests}).
   */
  @Override
  public synchronized void commit(TableMetadata base, TableMetadata metadata) {
    checkManifests(base, metadata);
    commitChecked(base, metadata);
  }

  /** Checks the manifests of {@code metadata}'s new current snapshot (XX001 naming a damaged one). */
  public void checkManifests(TableMetadata base, TableMetadata metadata) {
    org.apache.iceberg.Snapshot snapshot = metadata.currentSnapshot();
    org.apache.iceberg.Snapshot before = base == null ? null : base.currentSnapshot();
    if (snapshot == null || before != null && before.snapshotId() == snapshot.snapshotId()) {
      return;
    }
    java.util.List<String> paths = new java.util.ArrayList<>();
    for (org.apache.iceberg.ManifestFile m : snapshot.allManifests(io)) {
      paths.add(m.path());
    }
    catalog.fileDigests().verify(paths);
  }

  /** Checks that manifests a commit keeps from its parent are as written (see {@link #commit}). */
  public void checkKept(java.util.Collection<String> manifests) {
    catalog.fileDigests().verify(manifests);
  }

  /** {@link #commit} for a change whose kept manifests the caller checked ({@link #checkKept}). */
  public synchronized void commitChecked(TableMetadata base, TableMetadata metadata) {
    TableMetadata cur = current();
    if (base != cur) {
      throw new CommitFailedException("Cannot commit %s: its metadata changed since the change was planned", id);
    }
    if (base == metadata) {
      return;
    }
    Prepared prepared = prepare(base, metadata);
    boolean swapped;
    try {
      // Every file the new metadata names, and the metadata file itself, is on disk before the swap.
      swapped = catalog.swapAll(java.util.List.of(prepared), Durable.now());
    } catch (CommitStateUnknownException e) {
      throw e; // the pointer may name the new file: it stays
    } catch (RuntimeException e) {
      prepared.abandon(); // failed before SQLite's COMMIT: the pointer did not move
      throw e;
    }
    if (!swapped) {
      prepared.abandon();
      throw new CommitFailedException("Cannot commit %s: another commit moved the table first", id);
    }
    prepared.publish();
  }

  @Override
  public long swaps() {
    return swaps;
  }

  /**
   * A table's change ready to commit: where Floe writes metadata files, its new metadata file written, not
   * yet the table's. {@link FloeCatalog#swapAll} makes it current (together with other tables'), then
   * {@link #publish}; or {@link #abandon} deletes what was written.
   */
  public final class Prepared {
    private final TableMetadata base;
    private final TableMetadata metadata;
    private final Path hint;
    private final java.util.List<String> retired;
    /** The new metadata file: Floe's, or the one a REST catalog wrote ({@link #landed}). */
    private volatile String location;
    /** The table as the catalog has it after the commit, when it answered with it. */
    private volatile TableMetadata landed;

    private Prepared(TableMetadata base, TableMetadata metadata, String location, Path hint) {
      this.base = base;
      this.metadata = metadata;
      this.location = location;
      this.hint = hint;
      this.retired = retired(base, metadata);
    }

    public TableIdentifier id() {
      return id;
    }

    /** The table the change was made against; null for a create. */
    public TableMetadata base() {
      return base;
    }

    /** The table after the change. */
    public TableMetadata metadata() {
      return metadata;
    }

    /** The catalog pointer the swap expects (the base's metadata file). */
    public String expected() {
      return base == null ? null : base.metadataFileLocation();
    }

    /** The new metadata file; null until a catalog that writes its own says where ({@link #landed}). */
    public String location() {
      return location;
    }

    /**
     * A catalog that writes its own metadata files committed the change: to {@code location}, and, when it
     * answered with the table, to {@code table} (null when it did not: the table is read again when next used).
     */
    void landed(String location, TableMetadata table) {
      this.location = location;
      this.landed = table;
    }

    /** After the swap: the committed metadata becomes current, and the version hint moves. */
    public void publish() {
      synchronized (FloeTableOperations.this) {
        swaps++;
        if (location != null) {
          current = landed != null ? landed
              : TableMetadata.buildFrom(metadata).discardChanges().withMetadataLocation(location).build();
          loaded = true;
        } else {
          loaded = false; // committed, but where is the catalog's to say: read it again
        }
      }
      org.apache.iceberg.Snapshot snapshot = metadata.currentSnapshot();
      if (location != null) {
        catalog.landings().landed(id, location, snapshot == null ? null : snapshot.snapshotId(), retired);
      }
      if (hint != null) {
        try {
          VersionHint.publish(hint);
        } catch (RuntimeException e) {
          // The commit is durable in the catalog; failing here would make a caller retry a commit that
          // happened.
          LOG.warn("Committed {} but could not write its version hint: {}", id, e.getMessage());
          discard(hint);
        }
      }
    }

    /** The swap did not happen: the new metadata file goes, if Floe wrote one. */
    public void abandon() {
      if (catalog.writesMetadata()) {
        io.deleteFile(location);
      }
      discard(hint);
    }
  }

  /**
   * The metadata files the base's log named (its own file included) that {@code metadata}'s log no longer
   * names: they left it ({@code write.metadata.previous-versions-max}).
   */
  private static java.util.List<String> retired(TableMetadata base, TableMetadata metadata) {
    if (base == null || base.metadataFileLocation() == null) {
      return java.util.List.of();
    }
    java.util.Set<String> kept = new java.util.HashSet<>();
    for (TableMetadata.MetadataLogEntry e : metadata.previousFiles()) {
      kept.add(e.file());
    }
    java.util.List<String> out = new java.util.ArrayList<>();
    for (TableMetadata.MetadataLogEntry e : base.previousFiles()) {
      if (!kept.contains(e.file())) {
        out.add(e.file());
      }
    }
    if (!kept.contains(base.metadataFileLocation())) {
      out.add(base.metadataFileLocation());
    }
    return out;
  }

  /**
   * Writes the metadata file of {@code metadata} (the version after {@code base}'s, exclusive create,
   * registered with {@link Durable}) and prepares the version hint, without moving the catalog pointer.
   */
  public synchronized Prepared prepare(TableMetadata base, TableMetadata metadata) {
    if (!catalog.writesMetadata()) {
      return new Prepared(base, metadata, null, null); // the catalog writes the file from the change
    }
    String directory = metadataDirectory(metadata);
    if (S3.remote(directory)) {
      // Object storage has no exclusive create: a name no other commit can take, and no version hint.
      int version = nextVersion(base, null);
      String location = directory + "/" + String.format(java.util.Locale.ROOT, "%05d-%s.metadata.json", version,
          java.util.UUID.randomUUID());
      json.write(metadata, io.newOutputFile(location));
      return new Prepared(base, metadata, location, null);
    }
    int version = nextVersion(base, Path.of(TableDirectories.stripScheme(directory)));
    String location;
    for (int attempt = 0; ; attempt++) {
      location = directory + "/" + VersionHint.metadataFileName(version);
      try {
        json.write(metadata, io.newOutputFile(location)); // exclusive create; synced below
        break;
      } catch (AlreadyExistsException e) {
        // Another lineage used this number (a client that names metadata its own way restarted the
        // count, or a commit that lost its race left the file): take the next free one. If a concurrent
        // committer wrote it, the pointer swap fails anyway.
        if (attempt >= 1000) {
          throw new CommitFailedException(e, "Cannot commit %s: no free metadata version after %d", id, version);
        }
        version++;
      }
    }
    Path hint = null;
    try {
      hint = VersionHint.prepare(Path.of(TableDirectories.stripScheme(directory)), version);
    } catch (RuntimeException e) {
      // The hint only helps catalog-less readers, and the next commit rewrites it.
      LOG.warn("Cannot prepare the version hint of {}: {}", id, e.getMessage());
    }
    return new Prepared(base, metadata, location, hint);
  }

  private static void discard(Path hint) {
    if (hint != null) {
      VersionHint.discard(hint);
    }
  }

  /**
   * The version after {@code base}'s, and never below the version hint's (so the hint, which readers
   * without a catalog follow, only moves forward even after other catalog clients' commits).
   */
  private static int nextVersion(TableMetadata base, Path metadataDir) {
    int next = 1;
    if (base != null) {
      OptionalInt v = VersionHint.versionOf(base.metadataFileLocation());
      next = v.isPresent() ? v.getAsInt() + 1 : base.previousFiles().size() + 2;
    }
    OptionalInt hinted = metadataDir == null ? OptionalInt.empty() : VersionHint.read(metadataDir);
    return hinted.isPresent() ? Math.max(next, hinted.getAsInt() + 1) : next;
  }

  private static String metadataDirectory(TableMetadata metadata) {
    String configured = metadata.properties().get(TableProperties.WRITE_METADATA_LOCATION);
    if (configured != null && !configured.isEmpty()) {
      return stripTrailingSlash(configured);
    }
    return stripTrailingSlash(metadata.location()) + "/metadata";
  }

  private static String stripTrailingSlash(String s) {
    return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
  }

  @Override
  public FileIO io() {
    return io;
  }

  @Override
  public String metadataFileLocation(String fileName) {
    return metadataDirectory(current()) + "/" + fileName;
  }

  /**
   * A view of uncommitted metadata (a create-table transaction writing its first files): it places
   * files by that metadata's location and properties, and cannot itself commit.
   */
  @Override
  public TableOperations temp(TableMetadata uncommitted) {
    FloeTableOperations outer = this;
    return new TableOperations() {
      @Override
      public TableMetadata current() {
        return uncommitted;
      }

      @Override
      public TableMetadata refresh() {
        throw new UnsupportedOperationException("cannot refresh uncommitted metadata");
      }

      @Override
      public void commit(TableMetadata base, TableMetadata metadata) {
        throw new UnsupportedOperationException("cannot commit uncommitted metadata");
      }

      @Override
      public FileIO io() {
        return outer.io();
      }

      @Override
      public String metadataFileLocation(String fileName) {
        return metadataDirectory(uncommitted) + "/" + fileName;
      }

      @Override
      public LocationProvider locationProvider() {
        return LocationProviders.locationsFor(uncommitted.location(), uncommitted.properties());
      }

      @Override
      public long newSnapshotId() {
        return outer.newSnapshotId();
      }
    };
  }

  @Override
  public LocationProvider locationProvider() {
    TableMetadata meta = Objects.requireNonNull(current(), "table does not exist");
    return LocationProviders.locationsFor(meta.location(), meta.properties());
  }
}
