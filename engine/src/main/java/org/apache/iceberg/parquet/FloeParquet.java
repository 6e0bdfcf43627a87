package org.apache.iceberg.parquet;

import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.data.parquet.InternalWriter;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.io.OutputFile;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * Iceberg's Parquet writer for the few rows of a small statement, set up without what makes a writer
 * cost milliseconds before its first row: {@link Parquet#write}'s builder parses Hadoop's XML
 * configuration for every file, dictionary pages pay off only for many rows, and the compressor's
 * buffers are sized by the page. Rows are in Iceberg's
 * internal representation (days, microseconds, ByteBuffers); the writer gathers the file's metrics as
 * it goes, so nothing is read back.
 */
public final class FloeParquet {
  /** No resources loaded: the writer only asks it for values that have defaults. */
  private static final Configuration CONF = new Configuration(false);

  /**
   * Pages of a small file: the compressor sizes its buffers by the page size, and 1 MB buffers (Iceberg's
   * default page) cost a zstd file ~0.3 ms more to set up.
   */
  private static final int PAGE_BYTES = 64 * 1024;

  /**
   * Whether this Iceberg's Parquet module takes Parquet's own classes. Not when Floe shares a JVM with an
   * Iceberg runtime that relocates them (Spark's iceberg-spark-runtime): callers then keep DuckDB's COPY.
   */
  private static final boolean AVAILABLE = linkable();

  private FloeParquet() {}

  private static boolean linkable() {
    try {
      ParquetWriter.class.getDeclaredConstructor(Configuration.class, OutputFile.class, Schema.class,
          org.apache.parquet.schema.MessageType.class, long.class, Map.class, java.util.function.BiFunction.class,
          CompressionCodecName.class, ParquetProperties.class, MetricsConfig.class, ParquetFileWriter.Mode.class,
          org.apache.parquet.crypto.FileEncryptionProperties.class, boolean.class);
      return true;
    } catch (NoSuchMethodException | LinkageError e) {
      return false;
    }
  }

  /** Whether {@link #appender} can be used in this JVM. */
  public static boolean available() {
    return AVAILABLE;
  }

  /**
   * The codec for a table's {@code write.parquet.compression-codec}, or null where this writer would
   * write something else than Floe's DuckDB writer does (gzip, lz4 and brotli are left to DuckDB) or is
   * not {@link #available}.
   */
  public static CompressionCodecName codec(String property) {
    if (!AVAILABLE) {
      return null;
    }
    return switch (property.toLowerCase(Locale.ROOT)) {
      case "zstd" -> CompressionCodecName.ZSTD;
      case "snappy" -> CompressionCodecName.SNAPPY;
      case "uncompressed", "none" -> CompressionCodecName.UNCOMPRESSED;
      default -> null;
    };
  }

  /** An appender of rows of {@code schema}, in one row group, to a new file. */
  public static <T extends StructLike> FileAppender<T> appender(OutputFile file, Schema schema,
      CompressionCodecName codec, MetricsConfig metrics) {
    return new ParquetWriter<>(CONF, file, schema, ParquetSchemaUtil.convert(schema, "table"), Long.MAX_VALUE,
        Map.of(), InternalWriter::createWriter, codec,
        ParquetProperties.builder().withDictionaryEncoding(false).withPageSize(PAGE_BYTES).build(), metrics,
        ParquetFileWriter.Mode.CREATE, null, false);
  }
}
