package dev.floe.catalog;

import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * A warehouse's {@link FileIO}: a location on the local file system goes to {@link LocalFileIO}, one on
 * object storage ({@code s3://}) to a {@link CachedFileIO} over S3, whose local copies are what DuckDB reads
 * and writes ({@link TableFiles}). The S3 client is made when a table first needs it.
 */
public final class WarehouseIO implements FileIO {
  private final LocalFileIO local = new LocalFileIO();
  private final Map<String, String> storage;
  private final Path cache;
  private volatile CachedFileIO objects;
  private final long cacheBytes;

  /**
   * @param storage S3FileIO properties (endpoint, path-style access, region)
   * @param cache where local copies of object storage files are kept
   * @param cacheBytes how much the copies of data files may take ({@link #trim})
   */
  public WarehouseIO(Map<String, String> storage, Path cache, long cacheBytes) {
    this.storage = Map.copyOf(storage);
    this.cache = cache;
    this.cacheBytes = cacheBytes;
  }

  /**
   * Deletes local copies of data files beyond the budget, least recently used first, sparing those used in the
   * last {@code idleMillis}; nothing when no table file on object storage was touched yet.
   *
   * @return how many copies were deleted
   */
  public int trim(long idleMillis) {
    CachedFileIO o = objects;
    return o == null ? 0 : o.trim(cacheBytes, idleMillis);
  }

  /** The object storage side, with its local copies. */
  public CachedFileIO objects() {
    CachedFileIO o = objects;
    if (o == null) {
      synchronized (this) {
        if (objects == null) {
          objects = new CachedFileIO(S3.fileIO(storage), cache);
        }
        o = objects;
      }
    }
    return o;
  }

  /** Where local copies of object storage files are kept. */
  public Path cache() {
    return cache;
  }

  private FileIO of(String location) {
    return S3.remote(location) ? objects() : local;
  }

  @Override
  public InputFile newInputFile(String location) {
    return of(location).newInputFile(location);
  }

  @Override
  public InputFile newInputFile(String location, long length) {
    return S3.remote(location) ? objects().newInputFile(location) : local.newInputFile(location, length);
  }

  @Override
  public OutputFile newOutputFile(String location) {
    return of(location).newOutputFile(location);
  }

  @Override
  public void deleteFile(String location) {
    of(location).deleteFile(location);
  }

  @Override
  public Map<String, String> properties() {
    return storage;
  }

  @Override
  public void close() {
    CachedFileIO o = objects;
    if (o != null) {
      o.close();
    }
  }
}
