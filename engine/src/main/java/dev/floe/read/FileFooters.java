package dev.floe.read;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import java.util.stream.Stream;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.parquet.ParquetUtil;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

/**
 * Parquet footers of data files, cached (a data file never changes): the physical top-level columns,
 * needed where Iceberg metadata cannot say how a file names its columns (files imported without field
 * ids, read through the table's name mapping), and whole footers for point reads.
 */
public final class FileFooters {
  private static final int MAX_ENTRIES = 50_000;

  /**
   * A file's top-level columns.
   *
   * @param names column names in file order
   * @param hasIds whether the columns carry Iceberg field ids
   */
  public record Columns(List<String> names, boolean hasIds) {}

  private final Map<String, Columns> cache = new LinkedHashMap<>(256, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Columns> eldest) {
      return size() > MAX_ENTRIES;
    }
  };

  /**
   * Whole footers, for point reads ({@link PointReader}). Their heap cost grows with row groups times
   * columns, so the cache is bounded by an estimate of that, not by a count.
   */
  private static final long FOOTER_BYTES = 64L << 20;
  private final Map<String, ParquetMetadata> footers = new LinkedHashMap<>(64, 0.75f, true);
  private long footerBytes;

  private static long estimate(ParquetMetadata footer) {
    long chunks = 0;
    for (BlockMetaData b : footer.getBlocks()) {
      chunks += b.getColumns().size();
    }
    return 4096 + chunks * 512;
  }

  /** A data file's footer, read once and kept while the cache's budget allows. */
  public ParquetMetadata footer(FileIO io, String location) {
    synchronized (footers) {
      ParquetMetadata cached = footers.get(location);
      if (cached != null) {
        return cached;
      }
    }
    InputFile file = io.newInputFile(location);
    ParquetMetadata footer;
    try (ParquetFileReader reader = ParquetFileReader.open(new ParquetInput(file), OPTIONS)) {
      footer = reader.getFooter();
    } catch (IOException | RuntimeException e) {
      throw new FloeException(SqlState.DATA_CORRUPTED, "cannot read the Parquet footer of " + location + ": "
          + e.getMessage(), e);
    }
    long bytes = estimate(footer);
    synchronized (footers) {
      ParquetMetadata previous = footers.put(location, footer);
      footerBytes += bytes - (previous == null ? 0 : estimate(previous));
      java.util.Iterator<Map.Entry<String, ParquetMetadata>> it = footers.entrySet().iterator();
      while (footerBytes > FOOTER_BYTES && it.hasNext()) {
        Map.Entry<String, ParquetMetadata> eldest = it.next();
        if (!eldest.getKey().equals(location)) {
          footerBytes -= estimate(eldest.getValue());
          it.remove();
        }
      }
    }
    return footer;
  }

  public Columns columns(FileIO io, String location) {
    synchronized (cache) {
      Columns cached = cache.get(location);
      if (cached != null) {
        return cached;
      }
    }
    Columns read = read(io.newInputFile(location));
    synchronized (cache) {
      cache.put(location, read);
    }
    return read;
  }

  /**
   * Parquet read options without Hadoop: Parquet's default builder makes a Hadoop Configuration, which
   * parses Hadoop's XML defaults every time (milliseconds per footer).
   */
  private static final ParquetReadOptions OPTIONS = ParquetReadOptions.builder(new PlainParquetConfiguration())
      .build();

  /**
   * Whether Iceberg's Parquet support takes this classpath's Parquet types. It does not when Iceberg
   * comes from a runtime jar with Parquet relocated inside it (Spark's iceberg-spark-runtime, when Floe
   * is embedded beside Spark); then Iceberg reads footers itself (slower, through Hadoop).
   */
  private static final boolean UNSHADED_ICEBERG_PARQUET = unshaded();

  private static boolean unshaded() {
    try {
      ParquetUtil.class.getMethod("footerMetrics", org.apache.parquet.hadoop.metadata.ParquetMetadata.class,
          Stream.class, MetricsConfig.class);
      return true;
    } catch (NoSuchMethodException | LinkageError e) {
      return false;
    }
  }

  /** Iceberg metrics (counts, sizes, bounds by field id) of a Parquet file Floe just wrote. */
  public static Metrics metrics(InputFile file, MetricsConfig config) {
    if (!UNSHADED_ICEBERG_PARQUET) {
      return ParquetUtil.fileMetrics(file, config);
    }
    try (ParquetFileReader reader = ParquetFileReader.open(new ParquetInput(file), OPTIONS)) {
      return ParquetUtil.footerMetrics(reader.getFooter(), Stream.empty(), config);
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot read the Parquet footer of " + file.location() + ": "
          + e.getMessage(), e);
    }
  }

  private static Columns read(InputFile file) {
    try (ParquetFileReader reader = ParquetFileReader.open(new ParquetInput(file), OPTIONS)) {
      MessageType schema = reader.getFileMetaData().getSchema();
      List<String> names = new ArrayList<>();
      boolean ids = !schema.getFields().isEmpty();
      for (Type t : schema.getFields()) {
        names.add(t.getName());
        ids &= t.getId() != null;
      }
      return new Columns(List.copyOf(names), ids);
    } catch (IOException | RuntimeException e) {
      throw new FloeException(SqlState.DATA_CORRUPTED, "cannot read the Parquet footer of " + file.location() + ": "
          + e.getMessage(), e);
    }
  }

  /** Parquet's view of an Iceberg input file. */
  private record ParquetInput(InputFile file) implements org.apache.parquet.io.InputFile {
    @Override
    public long getLength() {
      return file.getLength();
    }

    @Override
    public SeekableInputStream newStream() {
      org.apache.iceberg.io.SeekableInputStream in = file.newStream();
      return new DelegatingSeekableInputStream(in) {
        @Override
        public long getPos() throws IOException {
          return in.getPos();
        }

        @Override
        public void seek(long newPos) throws IOException {
          in.seek(newPos);
        }
      };
    }
  }
}
