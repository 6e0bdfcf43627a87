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
  private final SqliteCatalog catalog;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final Locations locations;
  private final FileDigests digests;

  private Warehouse(Path root, SqliteCatalog catalog, FileChannel lockChannel, FileLock lock, Locations locations) {
    this.root = root;
    this.locations = locations;
    this.digests = catalog.fileDigests();
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
    Path root = directory.toAbsolutePath().normalize();
    FileChannel channel = null;
    FileLock lock = null;
    try {
      if (readOnly) {
        if (!Files.isRegularFile(root.resolve("catalog.db"))) {
          throw new FloeException(SqlState.UNDEFINED_OBJECT, "no warehouse at " + root + " (catalog.db is missing)");
        }
      } else {
        Files.createDirectories(root.resolve(".floe"));
        channel = FileChannel.open(root.resolve(".floe").resolve("writer.lock"),
            StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
          lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
          lock = null;
        }
        if (lock == null) {
          channel.close();
          throw new FloeException(SqlState.OBJECT_IN_USE,
              "warehouse " + root + " is already open for writing by another process",
              null, "Open it read-only, or stop the other Floe process.", 0, null);
        }
      }
      SqliteCatalog catalog = SqliteCatalog.open(catalogName, root, new LocalFileIO(), readOnly);
      Warehouse w = new Warehouse(root, catalog, channel, lock, new Locations(root, storageRoots));
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

  private static void closeQuietly(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // nothing more to release
      }
    }
  }

  public Path root() {
    return root;
  }

  public SqliteCatalog catalog() {
    return catalog;
  }

  public boolean readOnly() {
    return lock == null;
  }

  /** Scratch space for in-flight writes and query spill; never holds committed data. */
  public Path scratch() {
    return root.resolve(".floe").resolve("tmp");
  }

  @Override
  public void close() {
    catalog.close();
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
