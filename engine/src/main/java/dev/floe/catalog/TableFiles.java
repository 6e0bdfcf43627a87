package dev.floe.catalog;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.iceberg.io.FileIO;

/**
 * A table file as DuckDB and Floe's own readers and writers reach it: the local file for a location on the
 * local file system, its local copy ({@link CachedFileIO}) for one on object storage. Readers ask for
 * {@link #readable} files (fetched when not here yet); writers write at {@link #target} and hand the file
 * over with {@link #written} (made durable before the commit that names it, or uploaded).
 */
public final class TableFiles {
  private static final ExecutorService FETCH = Executors.newFixedThreadPool(8, r -> {
    Thread t = new Thread(r, "floe-fetch");
    t.setDaemon(true);
    return t;
  });

  private TableFiles() {}

  /** The object storage side of {@code io}, for a location on object storage. */
  private static CachedFileIO objects(FileIO io, String location) {
    if (io instanceof WarehouseIO w) {
      return w.objects();
    }
    if (io instanceof CachedFileIO c) {
      return c;
    }
    throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "table file " + location + " is on object storage, "
        + "which this warehouse does not reach");
  }

  /** The local path that names {@code location} (the file, or where its local copy is), without fetching it. */
  public static Path path(FileIO io, String location) {
    return S3.remote(location) ? objects(io, location).copyPath(location) : LocalFileIO.toPath(location);
  }

  /**
   * The local file holding {@code location}'s bytes: the file itself, or its local copy, fetched whole
   * from object storage if it is not here yet.
   *
   * @throws FloeException 58P01 or 58030 when object storage cannot give it
   */
  public static Path readable(FileIO io, String location) {
    return S3.remote(location) ? objects(io, location).localCopy(location) : LocalFileIO.toPath(location);
  }

  /** {@link #readable} for many files at once: those on object storage are fetched in parallel. */
  public static void fetch(FileIO io, Collection<String> locations) {
    List<String> missing = new ArrayList<>();
    for (String l : new LinkedHashSet<>(locations)) {
      if (S3.remote(l)) {
        Path copy = objects(io, l).copyPath(l);
        if (!CachedFileIO.touch(copy)) {
          missing.add(l); // not here: fetched below (a copy here is marked used, so trimming spares it)
        }
      }
    }
    if (missing.size() <= 1) {
      missing.forEach(l -> readable(io, l));
      return;
    }
    List<Future<Path>> running = new ArrayList<>();
    for (String l : missing) {
      running.add(FETCH.submit(() -> readable(io, l)));
    }
    RuntimeException failure = null;
    for (Future<Path> f : running) {
      try {
        f.get();
      } catch (ExecutionException e) {
        if (failure == null) {
          failure = e.getCause() instanceof RuntimeException r ? r
              : new FloeException(SqlState.IO_ERROR, "cannot fetch table files: " + e.getCause(), e.getCause());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new FloeException(SqlState.QUERY_CANCELED, "canceling statement due to user request");
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Where a writer puts the file for {@code location} (its parent directory made), before {@link #written}. */
  public static Path target(FileIO io, String location) {
    Path p = path(io, location);
    try {
      Files.createDirectories(p.getParent());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }

  /**
   * Hands over the complete file a writer put at {@link #target}: a local file is registered with
   * {@link Durable} (on disk before the commit naming it swaps), a local copy is uploaded to its location
   * (on object storage before this returns) and kept.
   */
  public static void written(FileIO io, String location) {
    if (!S3.remote(location)) {
      Durable.later(LocalFileIO.toPath(location));
      return;
    }
    CachedFileIO objects = objects(io, location);
    try {
      objects.upload(objects.copyPath(location), location);
    } catch (IOException | RuntimeException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot write " + location + " to object storage: "
          + e.getMessage(), e);
    }
  }

  /**
   * SQL turning a column of Iceberg locations (position deletes' {@code file_path}) into {@link #path}'s
   * form, as DuckDB reports the files it read.
   */
  public static String pathSql(FileIO io, String column) {
    String local = "regexp_replace(" + column + ", '^file:(//)?', '')";
    Path cache = io instanceof WarehouseIO w ? w.cache() : io instanceof CachedFileIO c ? c.cache() : null;
    if (cache != null) {
      String prefix = cache.toString().replace("'", "''");
      local = "regexp_replace(" + local + ", '^([a-z0-9]+)://', '" + prefix.replace("\\", "\\\\") + "/\\1/')";
    }
    return "regexp_replace(" + local + ", '//+', '/', 'g')";
  }
}
