package dev.floe.read;

import dev.floe.FloeException;
import dev.floe.SqlType;
import dev.floe.SqlState;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.LocalDate;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * Reads the rows of one Parquet data file whose key column equals a value, in the JVM: the row groups
 * whose statistics admit the key are found in the (cached) footer, the key column of each is decoded
 * to find the matching rows, and only then the pages of the other columns that hold those rows
 * ({@link ColumnChunkReader}). DuckDB would decode every
 * projected column of each such row group and plan a query first; for a lookup that returns a row or
 * two that is most of the time (docs/decisions/0005-point-reads.md).
 *
 * <p>The reader takes only files it reads exactly: every column it needs is a top-level primitive with
 * the Iceberg field id and the physical and logical type Floe's writers give that Iceberg type. For any
 * other file {@link #plan} says so, and the caller reads the table the general way.
 */
public final class PointReader {
  private PointReader() {}

  /**
   * A column to read.
   *
   * @param kind the SQL kind its values are given as (a {@code smallint} column is an Iceberg int)
   */
  public record Field(int id, Type type, SqlType.Kind kind) {}

  /** The row groups of one file that may hold the key, and where each column is in the file. */
  public record Plan(ParquetMetadata footer, List<Integer> groups, Map<Integer, ColumnDescriptor> columns) {}

  /**
   * A row found: its data file (as the plan names it), its position in that file, and the values of the
   * fields asked for, as {@link dev.floe.Row} gives them.
   */
  public record Hit(String location, long position, Object[] values) {}

  /** More candidate row groups than this and DuckDB's scan is the better reader. */
  public static final int MAX_GROUPS = 16;
  /** Deletes read in the JVM: at most what the deletion-vector cache keeps. */
  private static final long MAX_DELETE_BYTES = 4L << 20;

  /** Whether a column of this kind can be the key of a point read. */
  public static boolean keyable(SqlType.Kind kind) {
    return switch (kind) {
      case SMALLINT, INTEGER, BIGINT, TEXT, VARCHAR, UUID -> true;
      default -> false;
    };
  }

  /**
   * The rows of a planned scan whose {@code key} equals {@code value} (Long, String or UUID), at most
   * {@code limit}, with the values of {@code fields}; empty when a file of the plan cannot be read this
   * way (not Parquet, equality deletes or more than 4 MB of position deletes, columns stored otherwise,
   * an encoding {@link ColumnChunkReader} does not decode) or more than {@link #MAX_GROUPS} row groups
   * would be read. Position deletes and deletion vectors are applied.
   */
  public static Optional<List<Hit>> scan(ScanPlan plan, ScanFiles files, Field key, Object value,
      List<Field> fields, long limit) {
    if (!(plan.table().io() instanceof dev.floe.catalog.LocalFileIO
        || plan.table().io() instanceof dev.floe.catalog.WarehouseIO) || !keyable(key.kind())) {
      return Optional.empty();
    }
    files.verify(plan); // a damaged file is XX001 naming it, never rows read from it
    org.apache.iceberg.io.FileIO io = plan.table().io();
    List<Plan> plans = new ArrayList<>();
    int groups = 0;
    for (org.apache.iceberg.FileScanTask task : plan.tasks()) {
      if (task.file().format() != org.apache.iceberg.FileFormat.PARQUET) {
        return Optional.empty();
      }
      long deleteBytes = 0;
      for (org.apache.iceberg.DeleteFile d : task.deletes()) {
        if (d.content() != org.apache.iceberg.FileContent.POSITION_DELETES) {
          return Optional.empty();
        }
        deleteBytes += d.contentSizeInBytes() != null ? d.contentSizeInBytes() : d.fileSizeInBytes();
      }
      if (deleteBytes > MAX_DELETE_BYTES) {
        return Optional.empty();
      }
      Optional<Plan> p = plan(files.footers().footer(io, task.file().location()), key, value, fields);
      if (p.isEmpty()) {
        return Optional.empty();
      }
      groups += p.get().groups().size();
      if (groups > MAX_GROUPS) {
        return Optional.empty();
      }
      plans.add(p.get());
    }
    List<Hit> hits = new ArrayList<>();
    try {
      for (int k = 0; k < plans.size() && hits.size() < limit; k++) {
        if (plans.get(k).groups().isEmpty()) {
          continue; // no row group of the file may hold the key
        }
        org.apache.iceberg.FileScanTask task = plan.tasks().get(k);
        String location = task.file().location();
        read(dev.floe.catalog.TableFiles.readable(io, location), location, plans.get(k), key, value, fields,
            task.deletes().isEmpty() ? null : () -> deleted(task, files, io), limit, hits);
      }
    } catch (Unreadable e) {
      return Optional.empty();
    }
    return Optional.of(hits);
  }

  /** Which positions of a data file its deletes delete (asked only when the key is found in it). */
  public interface Deleted {
    boolean isDeleted(long position);
  }

  /**
   * A task's deletes: positions this process knows for its file-scoped Parquet delete files (the one a
   * point UPDATE just wrote is new every time), else the deletes read once and cached (deletion vectors).
   */
  private static Deleted deleted(org.apache.iceberg.FileScanTask task, ScanFiles files,
      org.apache.iceberg.io.FileIO io) {
    List<long[]> known = new ArrayList<>();
    for (org.apache.iceberg.DeleteFile d : task.deletes()) {
      long[] positions = d.format() == org.apache.iceberg.FileFormat.PARQUET && task.file().location().equals(
          org.apache.iceberg.util.ContentFileUtil.referencedDataFileLocation(d)) ? PositionDeletes.known(d.location())
          : null;
      if (positions == null) {
        PositionDeleteIndex index = files.vectors().load(task.deletes(), io, task.file().location());
        return index::isDeleted;
      }
      known.add(positions);
    }
    return position -> {
      for (long[] p : known) {
        if (java.util.Arrays.binarySearch(p, position) >= 0) {
          return true;
        }
      }
      return false;
    };
  }

  /** Whether {@link #read} can give values of this Iceberg type as {@code kind}. */
  public static boolean readable(Type type, SqlType.Kind kind) {
    return switch (type.typeId()) {
      case BOOLEAN -> kind == SqlType.Kind.BOOLEAN;
      case INTEGER -> kind == SqlType.Kind.INTEGER || kind == SqlType.Kind.SMALLINT;
      case LONG -> kind == SqlType.Kind.BIGINT;
      case FLOAT -> kind == SqlType.Kind.REAL;
      case DOUBLE -> kind == SqlType.Kind.DOUBLE;
      case DECIMAL -> kind == SqlType.Kind.DECIMAL;
      case DATE -> kind == SqlType.Kind.DATE;
      case TIME -> kind == SqlType.Kind.TIME;
      case TIMESTAMP -> kind == (((Types.TimestampType) type).shouldAdjustToUTC() ? SqlType.Kind.TIMESTAMPTZ
          : SqlType.Kind.TIMESTAMP);
      case STRING -> kind == SqlType.Kind.TEXT || kind == SqlType.Kind.VARCHAR;
      case UUID -> kind == SqlType.Kind.UUID;
      case BINARY -> kind == SqlType.Kind.BYTEA;
      default -> false;
    };
  }

  /**
   * The row groups of a file that may hold rows whose {@code key} column equals {@code value} (an Iceberg
   * value of the key's type: Integer, Long, String or UUID), or empty when the file cannot be read this
   * way (a column missing, or stored otherwise than Floe's writers store it).
   */
  public static Optional<Plan> plan(ParquetMetadata footer, Field key, Object value, List<Field> fields) {
    MessageType schema = footer.getFileMetaData().getSchema();
    Map<Integer, ColumnDescriptor> byId = new HashMap<>();
    for (ColumnDescriptor c : schema.getColumns()) {
      PrimitiveType p = c.getPrimitiveType();
      if (c.getPath().length == 1 && c.getMaxRepetitionLevel() == 0 && p.getId() != null) {
        byId.put(p.getId().intValue(), c);
      }
    }
    List<Field> all = new ArrayList<>(fields);
    all.add(key);
    for (Field f : all) {
      ColumnDescriptor c = byId.get(f.id());
      if (c == null || !stored(f.type(), c.getPrimitiveType()) || !readable(f.type(), f.kind())) {
        return Optional.empty();
      }
    }
    ColumnDescriptor keyColumn = byId.get(key.id());
    Object physical = physical(value, keyColumn.getPrimitiveType());
    List<Integer> groups = new ArrayList<>();
    if (physical != null) {
      List<BlockMetaData> blocks = footer.getBlocks();
      org.apache.parquet.hadoop.metadata.ColumnPath keyPath =
          org.apache.parquet.hadoop.metadata.ColumnPath.get(keyColumn.getPath());
      for (int g = 0; g < blocks.size(); g++) {
        if (blocks.get(g).getRowCount() > 0 && mayContain(chunk(blocks.get(g), keyPath), physical)) {
          groups.add(g);
        }
      }
    }
    return Optional.of(new Plan(footer, groups, byId));
  }

  /**
   * Column chunks of row groups read before, decoded whole ({@link ColumnChunkReader#decodeAll}), the
   * most recently used kept up to a budget of heap: a lookup in a row group read before decompresses
   * and decodes nothing (measured: decompressing the key page was three quarters of a point read's time
   * on a 1M-row table, and the value column's page most of the rest of a keyed UPDATE's). Data files
   * never change, so a chunk is known by its file, row group and column. The budget is a sixteenth of
   * the heap, at least 64 MB: with 64 MB, random lookups in a 10M-row table decoded a whole chunk almost
   * every time (its key and value columns decode to 160 MB) and ran at a sixth of the rate of a table
   * whose chunks stay cached.
   */
  private static final Chunks CHUNKS = new Chunks(Math.max(64L << 20, Runtime.getRuntime().maxMemory() / 16));

  static final class Chunks {
    private final long budget;
    private long used;
    private final java.util.LinkedHashMap<Key, ColumnChunkReader> chunks =
        new java.util.LinkedHashMap<>(16, 0.75f, true);

    Chunks(long budget) {
      this.budget = budget;
    }

    interface Load {
      ColumnChunkReader load() throws IOException;
    }

    /** A chunk: its file (the location's hash is cached by the task's String), row group and column. */
    private record Key(String location, int group, int fieldId) {}

    ColumnChunkReader get(String location, int group, ColumnDescriptor column, Load load) throws IOException {
      Key key = new Key(location, group, column.getPrimitiveType().getId().intValue());
      synchronized (this) {
        ColumnChunkReader cached = chunks.get(key);
        if (cached != null) {
          return cached;
        }
      }
      ColumnChunkReader read = load.load().decodeAll(); // outside the lock: readers of other chunks go on
      synchronized (this) {
        if (read.footprint() <= budget / 4 && chunks.putIfAbsent(key, read) == null) {
          used += read.footprint();
          var eldest = chunks.entrySet().iterator();
          while (used > budget && eldest.hasNext()) {
            used -= eldest.next().getValue().footprint();
            eldest.remove();
          }
        }
      }
      return read;
    }
  }

  /** The file holds something {@link ColumnChunkReader} does not decode; read the table the general way. */
  public static final class Unreadable extends Exception {
    Unreadable(String what) {
      super(what, null, false, false);
    }
  }

  /**
   * Reads the planned row groups of the file at {@code path}: rows whose key equals {@code value} and that
   * {@code deletes} (may be null; asked once a row is found) does not delete, as values of {@code fields}, at most {@code limit}.
   */
  public static void read(Path path, String location, Plan plan, Field key, Object value, List<Field> fields,
      java.util.function.Supplier<Deleted> deletes, long limit, List<Hit> out) throws Unreadable {
    if (plan.groups().isEmpty() || limit <= 0) {
      return;
    }
    ColumnDescriptor keyColumn = plan.columns().get(key.id());
    Object physical = physical(value, keyColumn.getPrimitiveType());
    Object search = physical instanceof Binary b ? b.getBytes() : physical;
    Deleted deleted = null;
    try (LazyChannel file = new LazyChannel(path)) {
      for (int g : plan.groups()) {
        BlockMetaData block = plan.footer().getBlocks().get(g);
        long first = block.getRowIndexOffset() >= 0 ? block.getRowIndexOffset() : rowOffset(plan.footer(), g);
        List<Integer> hits = new ArrayList<>();
        ColumnChunkReader keys = CHUNKS.get(location, g, keyColumn, () -> new ColumnChunkReader(file.get(),
            chunk(block, keyColumn), keyColumn));
        for (int row : keys.find(search)) {
          if (deletes != null && deleted == null) {
            deleted = deletes.get();
          }
          if (deleted == null || !deleted.isDeleted(first + row)) {
            hits.add(row);
          }
        }
        if (hits.isEmpty()) {
          continue;
        }
        if (hits.size() > limit - out.size()) {
          hits = hits.subList(0, (int) (limit - out.size()));
        }
        Map<Integer, Object[]> values = new HashMap<>();
        for (Field f : fields) {
          if (!values.containsKey(f.id())) {
            ColumnDescriptor c = plan.columns().get(f.id());
            Object[] raw = (c == keyColumn ? keys : CHUNKS.get(location, g, c, () -> new ColumnChunkReader(file.get(),
                chunk(block, c), c))).valuesAt(hits);
            for (int h = 0; h < raw.length; h++) {
              raw[h] = raw[h] == null ? null : value(raw[h], c.getPrimitiveType(), f);
            }
            values.put(f.id(), raw);
          }
        }
        for (int h = 0; h < hits.size(); h++) {
          Object[] row = new Object[fields.size()];
          for (int k = 0; k < fields.size(); k++) {
            row[k] = values.get(fields.get(k).id())[h];
          }
          out.add(new Hit(location, first + hits.get(h), row));
        }
        if (out.size() >= limit) {
          return;
        }
      }
    } catch (ColumnChunkReader.Unsupported e) {
      throw new Unreadable(e.getMessage());
    } catch (IOException | RuntimeException e) {
      throw new FloeException(SqlState.DATA_CORRUPTED, "cannot read data file " + path + ": " + e.getMessage(), e);
    }
  }

  /** A data file opened when a chunk not cached is read: a lookup of cached chunks opens no file. */
  private static final class LazyChannel implements AutoCloseable {
    private final Path path;
    private FileChannel channel;

    LazyChannel(Path path) {
      this.path = path;
    }

    FileChannel get() throws IOException {
      if (channel == null) {
        channel = FileChannel.open(path, StandardOpenOption.READ);
      }
      return channel;
    }

    @Override
    public void close() throws IOException {
      if (channel != null) {
        channel.close();
      }
    }
  }

  /** A stored value (as {@link ColumnChunkReader} gives it) as the Java type {@link dev.floe.Row} gives. */
  private static Object value(Object v, PrimitiveType p, Field f) {
    return switch (f.type().typeId()) {
      case BOOLEAN, LONG, FLOAT, DOUBLE -> v;
      case INTEGER -> f.kind() == SqlType.Kind.SMALLINT ? (Object) (short) (int) (Integer) v : v;
      case DECIMAL -> {
        int scale = ((Types.DecimalType) f.type()).scale();
        yield switch (p.getPrimitiveTypeName()) {
          case INT32 -> BigDecimal.valueOf((Integer) v, scale);
          case INT64 -> BigDecimal.valueOf((Long) v, scale);
          default -> new BigDecimal(new BigInteger((byte[]) v), scale);
        };
      }
      case DATE -> LocalDate.ofEpochDay((Integer) v);
      case TIME -> LocalTime.ofNanoOfDay((Long) v * 1000L);
      case TIMESTAMP -> ((Types.TimestampType) f.type()).shouldAdjustToUTC()
          ? DateTimeUtil.timestamptzFromMicros((Long) v) : DateTimeUtil.timestampFromMicros((Long) v);
      case STRING -> new String((byte[]) v, StandardCharsets.UTF_8);
      case UUID -> {
        ByteBuffer b = ByteBuffer.wrap((byte[]) v);
        yield new UUID(b.getLong(0), b.getLong(8));
      }
      case BINARY -> v;
      default -> throw new IllegalStateException("unreadable type " + f.type());
    };
  }

  /**
   * A value in Iceberg's internal representation (as a keyed tail's memtable holds it) as the Java type
   * {@link dev.floe.Row} gives, the same a point read of a file gives.
   */
  public static Object rowValue(Object v, Field f) {
    if (v == null) {
      return null;
    }
    return switch (f.type().typeId()) {
      case INTEGER -> f.kind() == SqlType.Kind.SMALLINT ? (Object) (short) (int) (Integer) v : v;
      case DATE -> LocalDate.ofEpochDay((Integer) v);
      case TIME -> LocalTime.ofNanoOfDay((Long) v * 1000L);
      case TIMESTAMP -> ((Types.TimestampType) f.type()).shouldAdjustToUTC()
          ? DateTimeUtil.timestamptzFromMicros((Long) v) : DateTimeUtil.timestampFromMicros((Long) v);
      case STRING -> v.toString();
      case BINARY -> {
        ByteBuffer b = ((ByteBuffer) v).duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        yield bytes;
      }
      default -> v;
    };
  }

  /** Whether Floe's writers store this Iceberg type as this Parquet column (so its values read exactly). */
  static boolean stored(Type type, PrimitiveType p) {
    LogicalTypeAnnotation logical = p.getLogicalTypeAnnotation();
    PrimitiveTypeName physical = p.getPrimitiveTypeName();
    return switch (type.typeId()) {
      case BOOLEAN -> physical == PrimitiveTypeName.BOOLEAN && logical == null;
      case INTEGER -> physical == PrimitiveTypeName.INT32 && (logical == null
          || logical instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i && i.isSigned());
      case LONG -> physical == PrimitiveTypeName.INT64 && (logical == null
          || logical instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i && i.isSigned()
          && i.getBitWidth() == 64);
      case FLOAT -> physical == PrimitiveTypeName.FLOAT && logical == null;
      case DOUBLE -> physical == PrimitiveTypeName.DOUBLE && logical == null;
      case DECIMAL -> logical instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation d
          && d.getPrecision() == ((Types.DecimalType) type).precision()
          && d.getScale() == ((Types.DecimalType) type).scale();
      case DATE -> physical == PrimitiveTypeName.INT32 && logical instanceof LogicalTypeAnnotation.DateLogicalTypeAnnotation;
      case TIME -> physical == PrimitiveTypeName.INT64
          && logical instanceof LogicalTypeAnnotation.TimeLogicalTypeAnnotation t
          && t.getUnit() == LogicalTypeAnnotation.TimeUnit.MICROS;
      case TIMESTAMP -> physical == PrimitiveTypeName.INT64
          && logical instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation t
          && t.getUnit() == LogicalTypeAnnotation.TimeUnit.MICROS
          && t.isAdjustedToUTC() == ((Types.TimestampType) type).shouldAdjustToUTC();
      case STRING -> physical == PrimitiveTypeName.BINARY
          && (logical == null || logical instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation);
      case UUID -> physical == PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY && p.getTypeLength() == 16;
      case BINARY -> physical == PrimitiveTypeName.BINARY && logical == null;
      default -> false;
    };
  }

  /**
   * The key in the Parquet column's own representation, as its statistics hold it: Integer, Long or
   * Binary; null when no stored value can equal it (an int column and a key out of its range).
   */
  private static Object physical(Object value, PrimitiveType p) {
    return switch (p.getPrimitiveTypeName()) {
      case INT32 -> {
        long v = ((Number) value).longValue();
        yield v < Integer.MIN_VALUE || v > Integer.MAX_VALUE ? null : (Object) (int) v;
      }
      case INT64 -> ((Number) value).longValue();
      case BINARY -> Binary.fromString((String) value);
      case FIXED_LEN_BYTE_ARRAY -> {
        UUID u = (UUID) value;
        yield Binary.fromConstantByteArray(ByteBuffer.allocate(16).putLong(u.getMostSignificantBits())
            .putLong(u.getLeastSignificantBits()).array());
      }
      default -> throw new IllegalStateException("not a key column: " + p);
    };
  }

  /** Whether a column chunk's statistics admit the value (or it has none to say). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static boolean mayContain(ColumnChunkMetaData chunk, Object physical) {
    Statistics stats = chunk.getStatistics();
    if (stats == null || stats.isEmpty()) {
      return true;
    }
    if (!stats.hasNonNullValue()) {
      return false; // every value is null
    }
    Comparable min = stats.genericGetMin();
    Comparable max = stats.genericGetMax();
    java.util.Comparator cmp = stats.comparator();
    return cmp.compare(min, physical) <= 0 && cmp.compare(physical, max) <= 0;
  }

  private static ColumnChunkMetaData chunk(BlockMetaData block, ColumnDescriptor c) {
    return chunk(block, org.apache.parquet.hadoop.metadata.ColumnPath.get(c.getPath()));
  }

  /** A row group's chunk of a column (by index: this runs for every row group of every file a lookup plans). */
  private static ColumnChunkMetaData chunk(BlockMetaData block, org.apache.parquet.hadoop.metadata.ColumnPath path) {
    List<ColumnChunkMetaData> columns = block.getColumns();
    for (int i = 0, n = columns.size(); i < n; i++) {
      if (columns.get(i).getPath().equals(path)) {
        return columns.get(i);
      }
    }
    throw new IllegalStateException("row group without column " + path.toDotString());
  }

  private static long rowOffset(ParquetMetadata footer, int group) {
    long offset = 0;
    for (int g = 0; g < group; g++) {
      offset += footer.getBlocks().get(g).getRowCount();
    }
    return offset;
  }



}
