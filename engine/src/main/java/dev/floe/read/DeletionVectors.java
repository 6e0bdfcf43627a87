package dev.floe.read;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.FileIO;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * The deleted positions of a data file's deletion vectors, as a relation DuckDB can anti-join, or as a
 * bitstring a scan filters by ({@link #mask}, for a file with many deleted rows: {@link ScanSql#DENSE}).
 *
 * <p>A vector is a compressed bitmap in a Puffin file, which DuckDB cannot read. Positions are handed
 * over as runs ({@code generate_series(first, last)}, the bounds as two comma-separated strings): a bulk delete is a handful of runs however many
 * rows it removed. A vector too fragmented for that is written once as a Parquet file of positions in
 * the scratch directory (a vector never changes, so the file is reused by every later scan until the
 * cache's size budget evicts it). Either way no list of positions is ever held in the JVM.
 */
public final class DeletionVectors implements AutoCloseable {
  /** Most runs written into SQL; past that the positions go to a Parquet file. */
  static final int INLINE_RUNS = 2048;
  private static final long CACHE_BYTES = 512L << 20;

  private final DuckDBConnection duck;
  private final Path dir;
  private final Map<String, Path> cached = new LinkedHashMap<>(16, 0.75f, true);
  private long cachedBytes;

  /**
   * @param duck a connection of its own (files are written through it under a lock)
   * @param dir where position files go (created on first use; cleared with the scratch directory)
   */
  public DeletionVectors(DuckDBConnection duck, Path dir) {
    this.duck = duck;
    this.dir = dir;
  }

  /** Most bytes of serialized vectors whose decoded positions are kept in memory. */
  private static final long LOADED_BYTES = 64L << 20;

  /** Decoded vectors by {@link #key}, so a vector is read once however many statements use it. */
  private final Map<String, Loaded> loaded = new LinkedHashMap<>(16, 0.75f, true);
  private long loadedBytes;

  private record Loaded(PositionDeleteIndex index, long bytes) {}

  /**
   * The positions a data file's deletion vectors delete, read from their Puffin files once and kept (a
   * vector never changes). Scans use them, and so does a statement that merges new deletes into them.
   * The index returned must not be modified.
   */
  public PositionDeleteIndex load(List<DeleteFile> vectors, FileIO io, String dataLocation) {
    StringBuilder b = new StringBuilder(dataLocation);
    long bytes = 0;
    for (DeleteFile d : vectors) {
      b.append('|').append(d.location()).append('@').append(d.contentOffset());
      bytes += d.contentSizeInBytes() == null ? d.fileSizeInBytes() : d.contentSizeInBytes();
    }
    String key = b.toString();
    synchronized (loaded) {
      Loaded cached = loaded.get(key);
      if (cached != null) {
        return cached.index();
      }
    }
    PositionDeleteIndex index;
    try {
      index = loader(io).loadPositionDeletes(vectors, dataLocation);
    } catch (RuntimeException e) {
      throw new FloeException(SqlState.DATA_CORRUPTED, "cannot read deletion vector "
          + vectors.get(0).location() + " for data file " + dataLocation + ": " + e.getMessage(), e);
    }
    if (bytes <= LOADED_BYTES / 16) {
      synchronized (loaded) {
        Loaded previous = loaded.put(key, new Loaded(index, bytes));
        loadedBytes += bytes - (previous == null ? 0 : previous.bytes());
        Iterator<Map.Entry<String, Loaded>> it = loaded.entrySet().iterator();
        while (loadedBytes > LOADED_BYTES && it.hasNext()) {
          Map.Entry<String, Loaded> eldest = it.next();
          if (!eldest.getKey().equals(key)) {
            loadedBytes -= eldest.getValue().bytes();
            it.remove();
          }
        }
      }
    }
    return index;
  }

  /**
   * SQL of ({@code file_idx}, {@code pos}) for the positions the vectors delete from the task's data file,
   * which a scan reads as its file number {@code fileIndex}.
   */
  public String positions(FileScanTask task, List<DeleteFile> vectors, FileIO io, int fileIndex) {
    PositionDeleteIndex index = load(vectors, io, task.file().location());
    String path = "CAST(" + fileIndex + " AS BIGINT)";
    List<long[]> runs = runs(index, INLINE_RUNS);
    if (runs != null) {
      if (runs.isEmpty()) {
        return "SELECT " + path + " AS file_idx, CAST(NULL AS BIGINT) AS pos WHERE false";
      }
      // Two strings rather than a VALUES list: DuckDB parses and binds a constant per tuple (~12 µs
      // each, 25 ms for 2,000 runs), a string once.
      StringBuilder firsts = new StringBuilder();
      StringBuilder lasts = new StringBuilder();
      for (long[] r : runs) {
        firsts.append(firsts.length() > 0 ? "," : "").append(r[0]);
        lasts.append(lasts.length() > 0 ? "," : "").append(r[1]);
      }
      return "SELECT " + path + " AS file_idx, unnest(generate_series(r.first, r.last)) AS pos FROM (SELECT "
          + bigints(firsts) + " AS first, " + bigints(lasts) + " AS last) AS r";
    }
    Path file = file(key(vectors, task), index);
    return "SELECT " + path + " AS file_idx, pos FROM read_parquet(" + Lexer.quoteString(file.toString()) + ")";
  }

  /**
   * SQL of one row whose {@code m} is the bitstring of the rows the vectors delete from the task's data
   * file (bit {@code p} set: row {@code p} deleted; as long as the file's rows, rounded up to a byte). Made
   * from the decoded vector straight into a scratch file of bytes that DuckDB reads as a BLOB, once per
   * vector as the position files are: a scan of a file with many deleted rows filters by it
   * ({@code get_bit}) instead of anti-joining positions ({@link ScanSql#DENSE}).
   */
  public String mask(FileScanTask task, List<DeleteFile> vectors, FileIO io) {
    PositionDeleteIndex index = load(vectors, io, task.file().location());
    Path file = maskFile(key(vectors, task) + "|mask", index, task.file().recordCount());
    return "SELECT CAST(content AS BIT) AS m FROM read_blob(" + Lexer.quoteString(file.toString()) + ")";
  }

  private synchronized Path maskFile(String key, PositionDeleteIndex index, long rows) {
    Path existing = cached.get(key);
    if (existing != null && Files.exists(existing)) {
      return existing;
    }
    byte[] bits = new byte[(int) ((rows + 7) / 8)];
    index.forEach(p -> {
      if (p >= 0 && p < rows) { // a position past the file's rows deletes nothing
        bits[(int) (p >>> 3)] |= (byte) (0x80 >>> (p & 7)); // DuckDB's bit 0 is a byte's highest
      }
    });
    Path file = dir.resolve(UUID.randomUUID() + ".bits");
    try {
      Files.createDirectories(dir);
      Files.write(file, bits);
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot stage the deletion vector of " + key + ": "
          + e.getMessage(), e);
    }
    cached.put(key, file);
    cachedBytes += bits.length;
    evict(key);
    return file;
  }

  private static String bigints(CharSequence csv) {
    return "unnest(CAST(string_split('" + csv + "', ',') AS BIGINT[]))";
  }

  /** The positions as [first, last] runs, or null if there are more than {@code limit}. */
  private static List<long[]> runs(PositionDeleteIndex index, int limit) {
    List<long[]> runs = new ArrayList<>();
    boolean[] tooMany = new boolean[1];
    index.forEach(p -> {
      if (tooMany[0]) {
        return;
      }
      long[] last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
      if (last != null && p == last[1] + 1) {
        last[1] = p;
      } else if (runs.size() == limit) {
        tooMany[0] = true;
      } else {
        runs.add(new long[] {p, p});
      }
    });
    return tooMany[0] ? null : runs;
  }

  private static String key(List<DeleteFile> vectors, FileScanTask task) {
    StringBuilder b = new StringBuilder(task.file().location());
    for (DeleteFile d : vectors) {
      b.append('|').append(d.location()).append('@').append(d.contentOffset());
    }
    return b.toString();
  }

  private synchronized Path file(String key, PositionDeleteIndex index) {
    Path existing = cached.get(key);
    if (existing != null && Files.exists(existing)) {
      return existing;
    }
    String table = "__floe_dv_" + UUID.randomUUID().toString().replace("-", "");
    Path file = dir.resolve(UUID.randomUUID() + ".parquet");
    try (Statement st = duck.createStatement()) {
      Files.createDirectories(dir);
      st.execute("CREATE TEMP TABLE " + table + " (pos BIGINT)");
      try {
        try (DuckDBAppender appender = duck.createAppender("temp", "main", table)) {
          SQLException[] failure = new SQLException[1];
          index.forEach(pos -> {
            if (failure[0] == null) {
              try {
                appender.beginRow().append(pos).endRow();
              } catch (SQLException e) {
                failure[0] = e;
              }
            }
          });
          if (failure[0] != null) {
            throw failure[0];
          }
        }
        st.execute("COPY (SELECT pos FROM " + table + " ORDER BY pos) TO " + Lexer.quoteString(file.toString())
            + " (FORMAT parquet, COMPRESSION zstd)");
      } finally {
        st.execute("DROP TABLE IF EXISTS " + table);
      }
      cached.put(key, file);
      cachedBytes += Files.size(file);
      evict(key);
      return file;
    } catch (SQLException | IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot stage the deletion vector of " + key + ": "
          + e.getMessage(), e);
    }
  }

  /** Deletes the least recently used files over the budget (open readers keep theirs until done). */
  private void evict(String keep) {
    Iterator<Map.Entry<String, Path>> it = cached.entrySet().iterator();
    while (cachedBytes > CACHE_BYTES && it.hasNext()) {
      Map.Entry<String, Path> e = it.next();
      if (e.getKey().equals(keep)) {
        continue;
      }
      try {
        cachedBytes -= Files.size(e.getValue());
        Files.deleteIfExists(e.getValue());
      } catch (IOException ignored) {
        // scratch is cleared at the next open
      }
      it.remove();
    }
  }

  @Override
  public synchronized void close() {
    try {
      duck.close();
    } catch (SQLException ignored) {
      // closing the engine
    }
  }

  /**
   * Iceberg's loader of delete files, reading on the calling thread ({@link InlineExecutor}): with its
   * default pool every load, however small, took 10 ms or more (measured: most of a contended commit's
   * time under the table's lock was that sleep).
   */
  public static BaseDeleteLoader loader(org.apache.iceberg.io.FileIO io) {
    return new BaseDeleteLoader(io::newInputFile, InlineExecutor.INSTANCE);
  }
}
