package dev.floe.catalog;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.apache.iceberg.catalog.Namespace;

/**
 * A warehouse directory: {@code catalog.db}, the tables' files, and Floe's private state under
 * {@code .floe/} (the writer lock, scratch space). Exactly one process may open a warehouse for writing;
 * any number may open it read-only beside it.
 */
public final class Warehouse implements AutoCloseable {
  public static final String DEFAULT_NAMESPACE = "public";

  /** The checksums of the table files Floe wrote (see {@link FileDigests}). */
  public FileDigests digests() {
    return digests;
  }

  /** Where tables may be located (see {@link Locations}). */
  public Locations locations() {
    return locations;
  }

  private final Path root;
  private final FloeCatalog catalog;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final Locations locations;
  private final FileDigests digests;
  private final String id;

  private Warehouse(Path root, FloeCatalog catalog, FileChannel lockChannel, FileLock lock, Locations locations) {
    this.root = root;
    this.locations = locations;
    this.digests = catalog.fileDigests();
    this.id = catalog.catalogId().orElse("");
    this.catalog = catalog;
    this.lockChannel = lockChannel;
    this.lock = lock;
  }

  /**
   * Opens or creates a warehouse.
   *
   * @throws FloeException 55006 when another process holds the warehouse open for writing
   */
  public static Warehouse open(Path directory, String catalogName, boolean readOnly) {
    return open(directory, catalogName, readOnly, java.util.List.of());
  }

  /** Opens or creates a warehouse whose tables may also be located under {@code storageRoots}. */
  public static Warehouse open(Path directory, String catalogName, boolean readOnly, java.util.List<Path> storageRoots) {
    return open(directory, catalogName, readOnly, storageRoots, null);
  }

  /**
   * Opens or creates a warehouse whose tables, views and namespaces are in the REST catalog {@code remote}
   * (in its own catalog.db when null). The directory keeps what is Floe's alone; tables may be located under
   * the remote catalog's {@code warehouse} too when that is a local directory.
   */
  public static Warehouse open(Path directory, String catalogName, boolean readOnly, java.util.List<Path> storageRoots,
      dev.floe.RemoteCatalog remote) {
    return open(directory, catalogName, readOnly, storageRoots, remote, null);
  }

  /**
   * {@link #open(Path, String, boolean, java.util.List, dev.floe.RemoteCatalog)} whose tables' files are on the
   * object store {@code objects} (new tables are placed there) when it is not null; local copies of them are
   * kept under {@code .floe/objects/} (a temporary directory when read-only).
   */
  public static Warehouse open(Path directory, String catalogName, boolean readOnly, java.util.List<Path> storageRoots,
      dev.floe.RemoteCatalog remote, dev.floe.ObjectStore objects) {
    java.util.List<Path> roots = new java.util.ArrayList<>(storageRoots);
    if (remote != null) {
      localDirectory(remote.properties().get("warehouse")).ifPresent(roots::add);
    }
    Path root = directory.toAbsolutePath().normalize();
    FileChannel channel = null;
    FileLock lock = null;
    try {
      if (readOnly) {
        if (!Files.isRegularFile(root.resolve("catalog.db"))) {
          throw new FloeException(SqlState.UNDEFINED_OBJECT, "no warehouse at " + root + " (catalog.db is missing)");
        }
      } else {
        Lock taken = Lock.take(root);
        channel = taken.channel();
        lock = taken.lock();
      }
      Path idFile = root.resolve(".floe").resolve(ID_FILE);
      Path db = root.resolve("catalog.db");
      if (!readOnly && Files.exists(idFile) && (!Files.exists(db) || Files.size(db) == 0)) {
        throw catalogLost(root, "catalog.db is " + (Files.exists(db) ? "empty" : "missing"));
      }
      // a read-only process's copies go in a directory of its own, made on first use and deleted at close
      Path cache = readOnly ? Path.of(System.getProperty("java.io.tmpdir"), "floe-objects-" + java.util.UUID.randomUUID())
          : root.resolve(".floe").resolve("objects");
      WarehouseIO io = new WarehouseIO(objects == null ? Map.of() : objects.properties(), cache,
          objects == null ? dev.floe.ObjectStore.DEFAULT_CACHE_BYTES : objects.cacheBytes());
      FloeCatalog catalog;
      try {
        catalog = FloeCatalog.open(catalogName, root, io, readOnly, remote,
            objects == null || remote != null ? null : objects.location());
      } catch (FloeCatalog.CatalogException e) {
        throw unreadable(root, e);
      }
      try {
        checkIdentity(catalog, idFile, readOnly, root);
      } catch (RuntimeException | IOException e) {
        catalog.close();
        throw e;
      }
      Warehouse w = new Warehouse(root, catalog, channel, lock, new Locations(root, roots,
          objects == null ? null : objects.location()));
      if (!readOnly && !catalog.namespaceExists(Namespace.of(DEFAULT_NAMESPACE))) {
        catalog.createNamespace(Namespace.of(DEFAULT_NAMESPACE), Map.of());
      }
      return w;
    } catch (IOException e) {
      closeQuietly(channel);
      throw new FloeException(SqlState.IO_ERROR, "cannot open warehouse " + root + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      if (lock != null) {
        closeQuietly(channel);
      }
      throw e;
    }
  }

  /** A remote catalog's warehouse as a local directory, when it is one ({@code /dir} or {@code file:/dir}). */
  private static java.util.Optional<Path> localDirectory(String warehouse) {
    if (warehouse == null || warehouse.isBlank()) {
      return java.util.Optional.empty();
    }
    String path = warehouse.startsWith("file:") ? java.net.URI.create(warehouse).getPath() : warehouse;
    Path p = Path.of(path);
    return p.isAbsolute() && Files.isDirectory(p) ? java.util.Optional.of(p.normalize())
        : java.util.Optional.empty();
  }

  /** The writer lock of a warehouse, held by a process that changes it (see {@link #open}). */
  static final class Lock implements AutoCloseable {
    private final FileChannel channel;
    private final FileLock lock;

    private Lock(FileChannel channel, FileLock lock) {
      this.channel = channel;
      this.lock = lock;
    }

    FileLock lock() {
      return lock;
    }

    /**
     * @throws FloeException 55006 when another process holds it
     */
    static Lock take(Path root) throws IOException {
      Files.createDirectories(root.resolve(".floe"));
      FileChannel channel = FileChannel.open(root.resolve(".floe").resolve("writer.lock"), StandardOpenOption.CREATE,
          StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        channel.close();
        throw new FloeException(SqlState.OBJECT_IN_USE, "warehouse " + root + " is already open for writing by "
            + "another process", null, "A warehouse has one writing process at a time: stop the other one first.", 0,
            null);
      }
      return new Lock(channel, lock);
    }

    FileChannel channel() {
      return channel;
    }

    @Override
    public void close() throws IOException {
      channel.close(); // releases the lock
    }
  }

  /** Where the warehouse keeps the identity its catalog database carries too. */
  static final String ID_FILE = "catalog-id";

  /**
   * An emptied, deleted or replaced catalog.db would present an empty warehouse over its tables' files:
   * the catalog and {@code .floe/} each keep the warehouse's identity, and a catalog without the right one
   * is refused (a warehouse from before identities gets one now).
   */
  private static void checkIdentity(FloeCatalog catalog, Path idFile, boolean readOnly, Path root)
      throws IOException {
    java.util.Optional<String> inCatalog;
    try {
      inCatalog = catalog.catalogId();
    } catch (FloeCatalog.CatalogException e) {
      throw unreadable(root, e);
    }
    java.util.Optional<String> inFile = Files.exists(idFile)
        ? java.util.Optional.of(Files.readString(idFile).strip()) : java.util.Optional.empty();
    if (inFile.isPresent() && !inFile.equals(inCatalog)) {
      throw catalogLost(root, inCatalog.isEmpty() ? "catalog.db does not know this warehouse: it was emptied or "
          + "replaced" : "catalog.db belongs to another warehouse");
    }
    if (readOnly) {
      return;
    }
    String id = inCatalog.orElseGet(() -> java.util.UUID.randomUUID().toString());
    if (inCatalog.isEmpty()) {
      catalog.setCatalogId(id);
    }
    if (inFile.isEmpty()) {
      Path tmp = idFile.resolveSibling(ID_FILE + ".tmp");
      Files.writeString(tmp, id + "\n");
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        ch.force(true);
      }
      Files.move(tmp, idFile, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** A catalog.db SQLite cannot open: a full disk, or a file that is no database (lost). */
  private static FloeException unreadable(Path root, RuntimeException e) {
    java.util.Optional<FloeException> full = dev.floe.DiskFull.of(e);
    if (full.isPresent() || freeBytes(root) < (1 << 20)) {
      return new FloeException(SqlState.DISK_FULL, "cannot open warehouse " + root + ": the disk is full", null,
          "Free space on its disk and open it again.", 0, e);
    }
    String m = e.getMessage() == null ? "" : e.getMessage();
    if (m.contains("NOTADB") || m.contains("not a database") || m.contains("malformed") || m.contains("CORRUPT")) {
      return catalogLost(root, "catalog.db cannot be read: " + m);
    }
    return new FloeException(SqlState.IO_ERROR, "cannot open warehouse " + root + ": " + m, e);
  }

  private static long freeBytes(Path root) {
    try {
      return Files.getFileStore(root).getUsableSpace();
    } catch (IOException e) {
      return Long.MAX_VALUE;
    }
  }

  private static FloeException catalogLost(Path root, String why) {
    return new FloeException(SqlState.DATA_CORRUPTED, "cannot open warehouse " + root + ": " + why, null,
        "Its tables' files are still there: restore catalog.db from a backup, or rebuild it from the tables' "
            + "metadata files with 'floe catalog rebuild' (docs/recovery.md).", 0, null);
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // nothing more to release
      }
    }
  }

  /** The warehouse's identity (its catalog.db's and {@code .floe/catalog-id}'s); empty if it has none yet. */
  public String id() {
    return id;
  }

  public Path root() {
    return root;
  }

  public FloeCatalog catalog() {
    return catalog;
  }

  public boolean readOnly() {
    return lock == null;
  }

  /** Where local copies of the tables' files on object storage are kept. */
  public Path objectCache() {
    return ((WarehouseIO) catalog.io()).cache();
  }

  /** Scratch space for in-flight writes and query spill; never holds committed data. */
  public Path scratch() {
    return root.resolve(".floe").resolve("tmp");
  }

  @Override
  public void close() {
    catalog.close();
    catalog.io().close();
    if (readOnly() && Files.isDirectory(objectCache())) {
      try (var files = Files.walk(objectCache())) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException | java.io.UncheckedIOException e) {
        // a temporary directory: the machine's own cleaning takes what is left
      }
    }
    try {
      if (lock != null) {
        lock.release();
      }
    } catch (IOException ignored) {
      // closing the channel releases it too
    }
    closeQuietly(lockChannel);
  }
}
