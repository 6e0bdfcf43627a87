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
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

/**
 * The physical top-level columns of Parquet data files, read from their footers and cached (a data
 * file never changes). Needed only where Iceberg metadata cannot say how a file names its columns:
 * files imported without field ids, read through the table's name mapping.
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
