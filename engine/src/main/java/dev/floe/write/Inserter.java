package dev.floe.write;

import dev.floe.FloeProperties;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.Durable;
import dev.floe.catalog.LocalFileIO;
import dev.floe.catalog.TableFiles;
import dev.floe.sql.Lexer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortDirection;
import org.apache.iceberg.SortField;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.SortOrderComparators;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.parquet.FloeParquet;
import org.apache.iceberg.util.StructLikeMap;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import dev.floe.types.IcebergValues;
import dev.floe.read.FileFooters;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Writes rows computed by DuckDB as Iceberg data files of a table: Parquet with every column's Iceberg
 * field id and type, zstd-compressed (or the table's codec), split at the table's target file size,
 * sorted by the table's sort order, one directory per partition with the partition values computed by
 * Iceberg's transforms. Files are fsynced in their final place before they are returned; nothing is
 * committed here.
 */
public final class Inserter {
  private static final String PID = "__floe_pid";

  /**
   * Small row groups let a lookup on the sort column decode only the few rows around the key; scans
   * lose nothing measurable (docs/decisions/0002-row-group-size.md).
   */
  public static final long DEFAULT_ROW_GROUP_ROWS = 16_384;

  /** Files written (not yet committed) and the number of rows in them. */
  public record Written(List<DataFile> files, long rows) {}

  private Inserter() {}

  /**
   * Writes the rows of {@code rowsSql}, whose columns are exactly {@code schema}'s columns in order,
   * named as in the schema and already of the stored types.
   *
   * @param table supplies the partition spec, sort order, properties and data locations
   * @param scratch a directory on the same file system as the table, for files in flight
   */
  public static Written write(Connection duck, Table table, Schema schema, String rowsSql, Path scratch) {
    return write(duck, table, schema, rowsSql, scratch, -1);
  }

  /** At most this many rows are written in the JVM instead of by a DuckDB COPY. */
  public static final long FEW_ROWS = 1_000;

  /**
   * The new rows of a write: a DuckDB query of them in the table's column order and stored types
   * ({@code atMost}: how many it returns at most, -1 when unknown), or a few rows (at most
   * {@link #FEW_ROWS}) the caller already holds as Iceberg records of the table's schema, for a table
   * that {@link #writesInJvm}.
   */
  public record Rows(String sql, long atMost, List<Record> records) {
    public static Rows query(String sql, long atMost) {
      return new Rows(sql, atMost, null);
    }

    public static Rows records(List<Record> records) {
      if (records.size() > FEW_ROWS) {
        throw new IllegalArgumentException(records.size() + " rows are more than a few");
      }
      return new Rows(null, records.size(), List.copyOf(records));
    }
  }

  /** Writes new rows, from DuckDB or from the JVM. */
  public static Written write(Connection duck, Table table, Schema schema, Rows rows, Path scratch) {
    if (rows.records() == null) {
      return write(duck, table, schema, rows.sql(), scratch, rows.atMost());
    }
    CompressionCodecName codec = fewRowsCodec(table, schema);
    if (codec == null) {
      throw new IllegalArgumentException("the rows of " + table.name() + " cannot be written in the JVM");
    }
    return writeRecords(table, schema, rows.records(), codec);
  }

  /** Whether rows of this table can be written in the JVM ({@link Rows#records}). */
  public static boolean writesInJvm(Table table, Schema schema) {
    return fewRowsCodec(table, schema) != null;
  }

  /**
   * As above, for a statement that knows how many rows {@code rowsSql} returns at most
   * ({@code maxRows}; -1 when unknown). Where DuckDB cannot write in place (partitioned tables: the rows
   * are materialised, their partitions numbered, written to staging, moved and measured, five DuckDB
   * statements and more), up to {@link #FEW_ROWS} rows are read from DuckDB in one query and written by
   * Iceberg's Parquet writer in the JVM ({@link #writeFew}). In place, one COPY costs about what that
   * query and the JVM writer do together, so it stays (docs/decisions/0003-few-rows-in-the-jvm.md).
   */
  public static Written write(Connection duck, Table table, Schema schema, String rowsSql, Path scratch,
      long maxRows) {
    Path direct = directory(table);
    if (direct == null && maxRows >= 0 && maxRows <= FEW_ROWS) {
      CompressionCodecName codec = fewRowsCodec(table, schema);
      if (codec != null) {
        return writeFew(duck, table, schema, rowsSql, codec, maxRows);
      }
    }
    if (direct != null) {
      return writeInPlace(duck, table, schema, rowsSql, direct);
    }
    Path staging = scratch.resolve("insert-" + UUID.randomUUID());
    String tempRows = null;
    String tempParts = null;
    List<Path> moved = new ArrayList<>();
    try (Statement st = duck.createStatement()) {
      Files.createDirectories(staging);
      PartitionSpec spec = table.spec();
      String options = copyOptions(table, schema);
      String order = orderBy(table.sortOrder(), schema);
      long rows;
      Map<Integer, PartitionData> partitions = new HashMap<>();
      if (spec.isUnpartitioned()) {
        rows = st.executeLargeUpdate("COPY (SELECT * FROM (" + rowsSql + ") AS r" + order + ") TO "
            + Lexer.quoteString(staging.toString()) + " (" + options + ")");
      } else {
        String suffix = UUID.randomUUID().toString().replace("-", "");
        tempRows = "__floe_rows_" + suffix;
        tempParts = "__floe_parts_" + suffix;
        List<PartitionField> fields = spec.fields();
        StringBuilder select = new StringBuilder("SELECT r.*");
        StringBuilder keys = new StringBuilder();
        StringBuilder join = new StringBuilder();
        StringBuilder readBack = new StringBuilder("SELECT " + PID);
        for (int k = 0; k < fields.size(); k++) {
          String p = "__floe_p" + k;
          String source = Lexer.quoteIdentifier(schema.findField(fields.get(k).sourceId()).name());
          select.append(", ").append(PartitionSql.transform(fields.get(k), schema, "r." + source)).append(" AS ")
              .append(p);
          keys.append(k > 0 ? ", " : "").append(p);
          join.append(k > 0 ? " AND " : "").append("i.").append(p).append(" IS NOT DISTINCT FROM p.").append(p);
          readBack.append(", ").append(PartitionSql.readable(fields.get(k), schema, p));
        }
        st.execute("CREATE TEMP TABLE " + tempRows + " AS " + select + " FROM (" + rowsSql + ") AS r");
        st.execute("CREATE TEMP TABLE " + tempParts + " AS SELECT row_number() OVER () AS " + PID + ", * FROM"
            + " (SELECT DISTINCT " + keys + " FROM " + tempRows + ")");
        try (ResultSet rs = st.executeQuery(readBack + " FROM " + tempParts)) {
          while (rs.next()) {
            PartitionData pd = new PartitionData(spec.partitionType());
            for (int k = 0; k < fields.size(); k++) {
              pd.set(k, PartitionSql.internal(fields.get(k), schema, rs, k + 2));
            }
            partitions.put(rs.getInt(1), pd);
          }
        }
        String columns = schema.columns().stream().map(f -> "i." + Lexer.quoteIdentifier(f.name()))
            .collect(Collectors.joining(", "));
        String partOrder = order.isEmpty() ? " ORDER BY " + PID : order.replace(" ORDER BY ", " ORDER BY " + PID + ", ");
        rows = st.executeLargeUpdate("COPY (SELECT * FROM (SELECT " + columns + ", p." + PID + " FROM " + tempRows
            + " AS i JOIN " + tempParts + " AS p ON " + join + ") AS r" + partOrder + ") TO "
            + Lexer.quoteString(staging.toString()) + " (" + options + ", PARTITION_BY (" + PID + "))");
      }
      List<DataFile> files = new ArrayList<>();
      if (rows > 0) {
        files = place(table, schema, staging, partitions, moved);
      }
      return new Written(files, rows);
    } catch (SQLException e) {
      deleteAll(moved);
      throw new WriteFailure(e);
    } catch (IOException e) {
      deleteAll(moved);
      throw new FloeException(SqlState.IO_ERROR, "cannot write data files: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      deleteAll(moved);
      throw e;
    } finally {
      dropQuietly(duck, tempRows);
      dropQuietly(duck, tempParts);
      Scratch.deleteTree(staging);
    }
  }

  /**
   * The codec {@link #writeFew} writes the table's files with, or null when it leaves them to DuckDB:
   * columns of types it does not move (nested, fixed, nanosecond timestamps), codecs it does not write
   * as DuckDB would.
   */
  private static CompressionCodecName fewRowsCodec(Table table, Schema schema) {
    for (Types.NestedField f : schema.columns()) {
      switch (f.type().typeId()) {
        case BOOLEAN, INTEGER, LONG, FLOAT, DOUBLE, DECIMAL, STRING, DATE, TIME, TIMESTAMP, UUID, BINARY -> { }
        default -> {
          return null;
        }
      }
    }
    return FloeParquet.codec(table.properties().getOrDefault(TableProperties.PARQUET_COMPRESSION,
        TableProperties.PARQUET_COMPRESSION_DEFAULT));
  }

  /**
   * Writes a few rows in the JVM: reads them from DuckDB in a lossless form ({@link IcebergValues}) and
   * writes them with {@link #writeRecords}.
   */
  private static Written writeFew(Connection duck, Table table, Schema schema, String rowsSql,
      CompressionCodecName codec, long maxRows) {
    List<Types.NestedField> columns = schema.columns();
    StringBuilder select = new StringBuilder("SELECT ");
    for (int k = 0; k < columns.size(); k++) {
      Types.NestedField f = columns.get(k);
      select.append(k > 0 ? ", " : "").append(IcebergValues.readable(f.type(), "r." + Lexer.quoteIdentifier(
          f.name())));
    }
    select.append(" FROM (").append(rowsSql).append(") AS r");
    List<Record> rows = new ArrayList<>();
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(select.toString())) {
      while (rs.next()) {
        if (rows.size() >= maxRows) {
          // the caller's bound is wrong; a file of one row group must not grow without bound in memory
          throw new IllegalStateException("more than the " + maxRows + " rows expected");
        }
        GenericRecord row = GenericRecord.create(schema);
        for (int k = 0; k < columns.size(); k++) {
          row.set(k, IcebergValues.internal(columns.get(k).type(), rs.getObject(k + 1)));
        }
        rows.add(row);
      }
    } catch (SQLException e) {
      throw new WriteFailure(e);
    }
    return writeRecords(table, schema, rows, codec);
  }

  /**
   * Writes rows given as Iceberg records (of {@code schema}, internal representation) with Iceberg's
   * Parquet writer: sorted by the table's sort order (Iceberg's own comparator, which a DuckDB ORDER BY
   * would cost half a millisecond to plan), one file per partition (partition values from Iceberg's own
   * transforms), each measured as it is written.
   */
  private static Written writeRecords(Table table, Schema schema, List<Record> rows, CompressionCodecName codec) {
    SortOrder order = table.sortOrder();
    if (order != null && order.isSorted() && rows.size() > 1) {
      rows = new ArrayList<>(rows);
      rows.sort(SortOrderComparators.forSchema(schema, order));
    }
    PartitionSpec spec = table.spec();
    MetricsConfig metricsConfig = MetricsConfig.forTable(table);
    PartitionKey key = new PartitionKey(spec, schema);
    Map<StructLike, Open> open = StructLikeMap.create(spec.partitionType());
    List<String> written = new ArrayList<>();
    String prefix = UUID.randomUUID().toString();
    try {
      for (Record row : rows) {
        key.partition(row);
        Open file = open.get(key);
        if (file == null) {
          StructLike partition = key.copy();
          String location = dataLocation(table, spec, spec.fields().isEmpty() ? null : partition,
              String.format(java.util.Locale.ROOT, "%05d-%s.parquet", open.size(), prefix));
          written.add(location);
          file = new Open(location, partition, FloeParquet.appender(table.io().newOutputFile(location), schema,
              codec, metricsConfig));
          open.put(partition, file);
        }
        file.appender().add(row);
      }
      List<DataFile> files = new ArrayList<>();
      for (Open file : open.values()) {
        file.appender().close(); // on disk before the commit, or uploaded (the table's FileIO)
        DataFiles.Builder b = DataFiles.builder(spec)
            .withPath(file.location())
            .withFormat(FileFormat.PARQUET)
            .withFileSizeInBytes(file.appender().length())
            .withMetrics(file.appender().metrics())
            .withSplitOffsets(file.appender().splitOffsets())
            .withSortOrder(table.sortOrder());
        if (!spec.fields().isEmpty()) {
          b.withPartition(file.partition());
        }
        files.add(b.build());
      }
      return new Written(files, rows.size());
    } catch (IOException e) {
      abandon(table, open.values(), written);
      throw new FloeException(SqlState.IO_ERROR, "cannot write data files: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      abandon(table, open.values(), written);
      throw e;
    }
  }

  /** A file {@link #writeFew} is writing: where, for which partition, and its appender. */
  private record Open(String location, StructLike partition, FileAppender<StructLike> appender) {}

  private static void abandon(Table table, Iterable<Open> open, List<String> written) {
    for (Open file : open) {
      try {
        file.appender().close();
      } catch (IOException | RuntimeException ignored) {
        // deleted below
      }
    }
    for (String location : written) {
      try {
        table.io().deleteFile(location);
      } catch (RuntimeException ignored) {
        // an orphan: harmless, and swept by orphan cleanup
      }
    }
  }

  /**
   * The directory where every new data file of an unpartitioned table goes under Iceberg's default
   * layout, so DuckDB can write them in place; null when files need placing one by one (partitioned
   * tables, whose partition directories DuckDB cannot name, and the object-store layout).
   */
  private static Path directory(Table table) {
    if (!table.spec().isUnpartitioned() || !table.spec().fields().isEmpty() || PropertyUtil.propertyAsBoolean(
        table.properties(), TableProperties.OBJECT_STORE_ENABLED, TableProperties.OBJECT_STORE_ENABLED_DEFAULT)) {
      return null;
    }
    String probe = table.locationProvider().newDataLocation("probe.parquet");
    if (!probe.endsWith("/probe.parquet")) {
      return null;
    }
    try {
      return LocalFileIO.toPath(probe).getParent();
    } catch (IllegalArgumentException e) {
      return null; // not a local path
    }
  }

  /**
   * Writes an unpartitioned table's new files straight into its data directory, named
   * {@code <statement id>-<uuid>.parquet}: nothing to move afterwards, and DuckDB names the files it
   * wrote. If the write fails, DuckDB deletes what it wrote; whatever else carries the statement's id
   * (files Floe had not yet described) is deleted too.
   */
  private static Written writeInPlace(Connection duck, Table table, Schema schema, String rowsSql, Path dir) {
    String statement = UUID.randomUUID().toString();
    List<Path> written = new ArrayList<>();
    try (Statement st = duck.createStatement()) {
      if (!Files.isDirectory(dir)) {
        Files.createDirectories(dir);
      }
      long rows;
      try (ResultSet rs = st.executeQuery("COPY (SELECT * FROM (" + rowsSql + ") AS r" + orderBy(table.sortOrder(),
          schema) + ") TO " + Lexer.quoteString(dir.toString()) + " (" + copyOptions(table, schema)
          + ", FILENAME_PATTERN " + Lexer.quoteString(statement + "-{uuid}") + ", APPEND true, RETURN_FILES true)")) {
        rs.next();
        rows = rs.getLong(1);
        java.sql.Array files = rs.getArray(2);
        for (Object f : files == null ? new Object[0] : (Object[]) files.getArray()) {
          written.add(Path.of(f.toString()));
        }
      }
      MetricsConfig metricsConfig = MetricsConfig.forTable(table);
      List<DataFile> files = new ArrayList<>();
      for (Path file : written) {
        Durable.later(file);
        InputFile in = table.io().newInputFile(file.toString());
        Metrics metrics = FileFooters.metrics(in, metricsConfig);
        if (metrics.recordCount() == 0) {
          Files.delete(file);
          continue;
        }
        files.add(DataFiles.builder(table.spec())
            .withPath(file.toString())
            .withFormat(FileFormat.PARQUET)
            .withFileSizeInBytes(in.getLength())
            .withMetrics(metrics)
            .withSortOrder(table.sortOrder())
            .build());
      }
      return new Written(files, rows);
    } catch (SQLException e) {
      deleteStatementFiles(dir, statement);
      throw new WriteFailure(e);
    } catch (IOException e) {
      deleteStatementFiles(dir, statement);
      throw new FloeException(SqlState.IO_ERROR, "cannot write data files: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      deleteStatementFiles(dir, statement);
      throw e;
    }
  }

  /** Deletes what a failed in-place write left: the files whose names start with its statement id. */
  private static void deleteStatementFiles(Path dir, String statement) {
    try (var files = Files.newDirectoryStream(dir, statement + "-*")) {
      for (Path f : files) {
        Files.deleteIfExists(f);
      }
    } catch (IOException ignored) {
      // unreferenced files are harmless, and swept by orphan cleanup
    }
  }

  /** A DuckDB failure while computing or writing the rows; the caller maps it to a SQLSTATE. */
  public static final class WriteFailure extends RuntimeException {
    WriteFailure(SQLException cause) {
      super(cause.getMessage(), cause);
    }

    public SQLException sqlException() {
      return (SQLException) getCause();
    }

    /**
     * The failure of a background write ({@code what}: "seal rows 0..99 of t"): 53100 when the disk was
     * full, else 58030.
     */
    public dev.floe.FloeException as(String what) {
      return dev.floe.DiskFull.of(this).orElseGet(() -> new dev.floe.FloeException(dev.floe.SqlState.IO_ERROR,
          "cannot " + what + ": " + sqlException().getMessage(), this));
    }
  }

  /** Deletes files written for a statement that did not commit. */
  public static void deleteFiles(Table table, List<DataFile> files) {
    for (DataFile f : files) {
      try {
        table.io().deleteFile(f.location());
      } catch (RuntimeException e) {
        // An orphan in the table directory is harmless: nothing references it.
      }
    }
  }

  private static String copyOptions(Table table, Schema schema) {
    String codec = table.properties().getOrDefault(TableProperties.PARQUET_COMPRESSION,
        TableProperties.PARQUET_COMPRESSION_DEFAULT).toLowerCase();
    String duckCodec = switch (codec) {
      case "zstd", "snappy", "gzip", "lz4", "brotli" -> codec;
      case "uncompressed", "none" -> "uncompressed";
      default -> throw new FloeException(SqlState.INVALID_PARAMETER_VALUE,
          "unsupported Parquet compression codec \"" + codec + "\" in " + TableProperties.PARQUET_COMPRESSION);
    };
    long targetSize = PropertyUtil.propertyAsLong(table.properties(), TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
        TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
    String fieldIds = schema.columns().stream()
        .map(f -> Lexer.quoteString(f.name()) + ": " + f.fieldId())
        .collect(Collectors.joining(", ", "{", "}"));
    StringBuilder options = new StringBuilder("FORMAT parquet, FIELD_IDS ").append(fieldIds)
        .append(", COMPRESSION ").append(duckCodec).append(", FILE_SIZE_BYTES ").append(Math.max(targetSize, 1 << 20));
    long rowGroupRows = PropertyUtil.propertyAsLong(table.properties(), FloeProperties.ROW_GROUP_ROWS, DEFAULT_ROW_GROUP_ROWS);
    if (rowGroupRows < 1) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, FloeProperties.ROW_GROUP_ROWS + " must be positive");
    }
    return options.append(", ROW_GROUP_SIZE ").append(rowGroupRows).toString();
  }

  private static String orderBy(SortOrder order, Schema schema) {
    if (order == null || order.isUnsorted()) {
      return "";
    }
    List<String> keys = new ArrayList<>();
    for (SortField f : order.fields()) {
      if (!f.transform().isIdentity()) {
        continue; // sort transforms other than identity are not applied; files stay valid, only less sorted
      }
      Types.NestedField col = schema.findField(f.sourceId());
      if (col == null) {
        continue;
      }
      keys.add("r." + Lexer.quoteIdentifier(col.name()) + (f.direction() == SortDirection.ASC ? " ASC" : " DESC")
          + (f.nullOrder() == org.apache.iceberg.NullOrder.NULLS_FIRST ? " NULLS FIRST" : " NULLS LAST"));
    }
    return keys.isEmpty() ? "" : " ORDER BY " + String.join(", ", keys);
  }

  /** Where a new file of a partition goes (without an empty partition directory when unpartitioned). */
  static String dataLocation(Table table, PartitionSpec spec, org.apache.iceberg.StructLike partition, String name) {
    return partition == null || spec.isUnpartitioned() ? table.locationProvider().newDataLocation(name)
        : table.locationProvider().newDataLocation(spec, partition, name);
  }

  /** Moves each written file to its data location, fsyncs it, and describes it as a DataFile. */
  private static List<DataFile> place(Table table, Schema schema, Path staging, Map<Integer, PartitionData> partitions,
      List<Path> moved) throws IOException {
    List<Path> written;
    try (Stream<Path> walk = Files.walk(staging)) {
      written = walk.filter(p -> p.toString().endsWith(".parquet")).sorted().collect(Collectors.toList());
    }
    PartitionSpec spec = table.spec();
    MetricsConfig metricsConfig = MetricsConfig.forTable(table);
    String prefix = UUID.randomUUID().toString();
    List<DataFile> files = new ArrayList<>();
    int n = 0;
    for (Path file : written) {
      PartitionData partition = null;
      if (spec.isUnpartitioned() && !spec.fields().isEmpty()) {
        partition = new PartitionData(spec.partitionType()); // only void fields: every value is null
      } else if (!spec.isUnpartitioned()) {
        String dir = file.getParent().getFileName().toString();
        if (!dir.startsWith(PID + "=")) {
          throw new IllegalStateException("unexpected partition directory " + dir);
        }
        partition = partitions.get(Integer.parseInt(dir.substring(PID.length() + 1)));
      }
      String name = String.format("%05d-%s.parquet", n++, prefix);
      String location = dataLocation(table, spec, partition, name);
      Path target = TableFiles.target(table.io(), location);
      Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
      moved.add(target);
      TableFiles.written(table.io(), location);
      InputFile in = table.io().newInputFile(location);
      Metrics metrics = FileFooters.metrics(in, metricsConfig);
      if (metrics.recordCount() == 0) {
        table.io().deleteFile(location);
        moved.remove(target);
        continue;
      }
      DataFiles.Builder b = DataFiles.builder(spec)
          .withPath(location)
          .withFormat(FileFormat.PARQUET)
          .withFileSizeInBytes(in.getLength())
          .withMetrics(metrics)
          .withSortOrder(table.sortOrder());
      if (partition != null) {
        b.withPartition(partition);
      }
      files.add(b.build());
    }
    return files;
  }

  private static void deleteAll(List<Path> paths) {
    for (Path p : paths) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException ignored) {
        // unreferenced: harmless
      }
    }
  }

  private static void dropQuietly(Connection duck, String table) {
    if (table == null) {
      return;
    }
    try (Statement st = duck.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table);
    } catch (SQLException ignored) {
      // a temp table dies with its connection anyway
    }
  }
}
