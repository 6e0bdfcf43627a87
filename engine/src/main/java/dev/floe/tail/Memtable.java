package dev.floe.tail;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import dev.floe.types.TypeMapping;
import java.nio.ByteBuffer;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * A tail's memtable (see {@link TailLog}): its unsealed rows as DuckDB tables in the engine's in-memory
 * database, one generation per seal, which queries union with the table's files. Durable rows wait in
 * the heap ({@link #durable}) until a query or seal needs them ({@link #sync}); a generation is dropped
 * once the table holds its rows ({@link #through}) and no reader pins it.
 *
 * <p><b>Locks.</b> Everything here is guarded by the log's monitor (the {@link TailLog} instance): its
 * methods are called holding it. The exception is the queue of durable rows not yet moved in and its
 * counters, guarded by {@link #pending}, the innermost lock, which the log's flusher takes from
 * {@link Wal} holding no other.
 */
final class Memtable {
  private final TailLog log;
  private final TailLog.Host host;
  private final Schema schema;
  private final Map<Integer, Schema> schemas;
  private final RowCodec codec;
  private final int offsetIndex;
  /** The log this memtable follows when another process writes it; null when this one does. */
  private final WalTailer tailer;
  private final DuckDBConnection duck;
  private final String prefix;
  /** A keyed log's memtable: versions of keys, with the tombstone flag last, loaded as they are queued. */
  private final boolean keyed;
  /** A keyed memtable's versions by key (null otherwise); guarded by the log's monitor. */
  private final KeyIndex index;
  /**
   * A keyed memtable's versions in the index and not yet in its DuckDB tables, contiguous from
   * {@link #syncedEnd} (a one-row DuckDB append costs more than the rest of a keyed change): they move
   * in when SQL needs them ({@link #flushUnloaded}). Guarded by the log's monitor.
   */
  private final List<Object[]> unloaded = new ArrayList<>();

  /**
   * What a keyed change attaches to its record: its rows are in the memtable already ({@link #loaded}),
   * and being durable only moves the durable end.
   */
  static final Object LOADED = new Object();

  // durable rows not yet in the memtable, in offset order; guarded by pending
  private final List<Wal.Durable> pending = new ArrayList<>();
  private volatile long durableEnd;
  /** When the oldest row not yet sealed became durable (System.nanoTime), or 0: none. */
  private volatile long unsealedSince;
  private volatile long pendingRows;

  // guarded by the log's monitor
  private final List<Generation> generations = new ArrayList<>();
  private final TreeMap<Long, Integer> pins = new TreeMap<>();
  private long syncedEnd;
  private long through;
  private int generationCount;

  /**
   * A DuckDB table holding the unsealed rows with offsets in [first, end), and bounds of its columns
   * (kept as rows arrive), with which a query's filter skips it as Iceberg skips a file.
   */
  private static final class Generation {
    final String name;
    final long first;
    long end;
    boolean open = true;
    final ColumnBounds bounds;

    Generation(String name, long first, Schema schema) {
      this.name = name;
      this.first = first;
      this.end = first;
      this.bounds = new ColumnBounds(schema);
    }
  }

  /** What a pin holds: the generations with rows before {@code end}, and their column bounds. */
  record Pinned(long end, List<String> tables, List<org.apache.iceberg.DataFile> bounds) {}

  /**
   * A memtable holding nothing yet, for rows from offset {@code through} on (the table's watermark);
   * {@link #start} makes its first generation.
   */
  Memtable(TailLog log, TailLog.Host host, Schema schema, Map<Integer, Schema> schemas, RowCodec codec,
      int offsetIndex, long through, WalTailer tailer, DuckDBConnection duck) {
    this.log = log;
    this.host = host;
    this.schema = schema;
    this.schemas = schemas;
    this.codec = codec;
    this.offsetIndex = offsetIndex;
    this.through = through;
    this.syncedEnd = through;
    this.durableEnd = through;
    this.tailer = tailer;
    this.duck = duck;
    this.prefix = "__floe_tail_" + UUID.randomUUID().toString().replace("-", "") + "_";
    this.keyed = TailLog.keyed(schema);
    this.index = keyed ? KeyIndex.of(schema) : null;
  }

  /**
   * A keyed memtable's newest version of {@code key} (normalized, {@link KeyIndex#normalize}) with an
   * offset in [from, end), or null when it has none there. Holding the log's monitor.
   */
  KeyIndex.Version version(Object key, long from, long end) {
    return index.newest(key, from, end);
  }

  /** Starts the first generation, at the watermark. Holding the log's monitor. */
  void start() {
    newGeneration(through);
  }

  /** The watermark as the log last committed or found it. Holding the log's monitor. */
  long through() {
    return through;
  }

  /** The offset after the last durable row (moved in or not). */
  long durableEnd() {
    return durableEnd;
  }

  /** The offset after the last row moved into the memtable. Holding the log's monitor. */
  long syncedEnd() {
    return syncedEnd;
  }

  /**
   * The offset after the last row the memtable holds, in its DuckDB tables or (keyed) only indexed so
   * far. Holding the log's monitor.
   */
  long heldEnd() {
    return syncedEnd + unloaded.size();
  }

  /**
   * Moves a keyed memtable's indexed versions into its DuckDB tables, for SQL that reads them. Holding
   * the log's monitor.
   */
  void flushUnloaded() {
    if (unloaded.isEmpty()) {
      return;
    }
    List<Object[]> rows = new ArrayList<>(unloaded);
    unloaded.clear();
    load(List.of(new Wal.Durable(syncedEnd, rows.size(), rows)), true);
  }

  /** When the oldest row not yet sealed became durable (System.nanoTime), or 0: none. */
  long unsealedSince() {
    return unsealedSince;
  }

  /** Durable rows waiting in the heap. */
  long pendingRows() {
    return pendingRows;
  }

  /** Offsets from {@code end} on are the log's to hand out (it opened, or an ingest took those below). */
  void durableFrom(long end) {
    synchronized (pending) {
      durableEnd = end;
    }
  }

  /** A replayed record's rows from offset {@code from} on. */
  Wal.Durable rowsFrom(Wal.Record r, long from) {
    List<Object[]> rows = decode(schemas, r);
    long first = r.first();
    if (first < from) {
      rows = rows.subList((int) (from - first), rows.size());
      first = from;
    }
    return new Wal.Durable(first, rows.size(), rows);
  }

  /** Rows of a replayed record, mapped from the schema it was written with to the current one. */
  private List<Object[]> decode(Map<Integer, Schema> schemas, Wal.Record r) {
    if (r.schemaId() == schema.schemaId()) {
      return codec.decode(r.payload(), r.count());
    }
    Schema written = schemas.get(r.schemaId());
    if (written == null) {
      throw new FloeException(SqlState.DATA_CORRUPTED, "log record at offset " + r.first()
          + " was written with schema " + r.schemaId() + ", which the table does not have");
    }
    List<Types.NestedField> from = TailLog.recordColumns(written);
    List<Types.NestedField> to = TailLog.recordColumns(schema);
    List<Object[]> old = new RowCodec(from).decode(r.payload(), r.count());
    List<Object[]> rows = new ArrayList<>(old.size());
    for (Object[] o : old) {
      Object[] row = new Object[to.size()];
      for (int i = 0; i < to.size(); i++) {
        for (int j = 0; j < from.size(); j++) {
          if (from.get(j).fieldId() == to.get(i).fieldId()) {
            row[i] = o[j];
          }
        }
      }
      rows.add(row);
    }
    return rows;
  }

  /** Called by the log, in offset order, once records are durable. Takes only {@link #pending}. */
  void durable(List<Wal.Durable> records) {
    synchronized (pending) {
      if (unsealedSince == 0) {
        unsealedSince = System.nanoTime();
      }
      Wal.Durable last = records.get(records.size() - 1);
      durableEnd = last.first() + last.count();
      for (Wal.Durable d : records) {
        if (d.attachment() != LOADED) {
          pending.add(d);
          pendingRows += d.count();
        }
      }
    }
  }

  /**
   * A keyed change's versions, queued in the log at {@code first} and not yet durable, loaded at once
   * (after the durable rows still waiting): the change's own later reads and the next changes read them,
   * other readers only once they are durable (their pins end at the durable end). Holding the log's
   * monitor.
   */
  void loaded(long first, List<Object[]> rows) {
    sync();
    if (first != heldEnd()) {
      log.broken();
      throw new FloeException(SqlState.INTERNAL_ERROR, "a keyed change's versions at offset " + first
          + " do not follow the memtable's end " + heldEnd() + "; the tail is reopened from its log");
    }
    long offset = first;
    for (Object[] row : rows) {
      index.add(offset++, row);
    }
    unloaded.addAll(rows);
    if (unloaded.size() > TailLog.MAX_PENDING_ROWS) {
      flushUnloaded(); // nothing has read or sealed for a while: bound what waits in the heap
    }
  }

  /** Moves rows made durable since the last call into the memtable. Holding the log's monitor. */
  void sync() {
    if (tailer != null) {
      follow();
      return;
    }
    List<Wal.Durable> batch;
    synchronized (pending) {
      if (pending.isEmpty()) {
        return;
      }
      batch = new ArrayList<>(pending);
      pending.clear();
      pendingRows = 0;
    }
    load(batch);
  }

  /** Read-only: takes what the writer added to the log since the last look. Holding the log's monitor. */
  private void follow() {
    List<Wal.Record> records;
    try {
      records = tailer.poll(() -> TailLog.through(host.table()));
    } catch (java.io.IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot read the log of this table: " + e.getMessage(), e);
    }
    for (Wal.Record r : records) {
      if (r.end() <= syncedEnd) {
        continue;
      }
      if (r.first() > syncedEnd) {
        // rows between were sealed and their segments evicted before this reader saw them: the table
        // holds them, and the memtable goes on from here
        closeGeneration(r.first());
      }
      load(List.of(rowsFrom(r, syncedEnd)), false);
      durableEnd = syncedEnd;
    }
  }

  /**
   * Ends the open generation (if it has rows) and starts the next at {@code first}. Holding the log's
   * monitor.
   */
  private void closeGeneration(long first) {
    Generation g = generations.get(generations.size() - 1);
    if (g.end == g.first) {
      execute("DROP TABLE memory.main." + Lexer.quoteIdentifier(g.name));
      generations.remove(generations.size() - 1);
    } else {
      g.open = false;
    }
    newGeneration(first);
    syncedEnd = first;
  }

  /**
   * Appends durable rows (contiguous from {@link #syncedEnd}) to the open generation. Holding the log's
   * monitor.
   */
  private void load(List<Wal.Durable> batch) {
    load(batch, false);
  }

  /** As {@link #load(List)}; {@code indexed}: a keyed memtable's rows already in its index. */
  private void load(List<Wal.Durable> batch, boolean indexed) {
    Generation g = generations.get(generations.size() - 1);
    List<Types.NestedField> columns = schema.columns();
    try (DuckDBAppender a = duck.createAppender("memory", "main", g.name)) {
      for (Wal.Durable d : batch) {
        @SuppressWarnings("unchecked")
        List<Object[]> rows = (List<Object[]>) d.attachment();
        long offset = d.first();
        for (Object[] row : rows) {
          a.beginRow();
          int v = 0;
          for (int c = 0; c < columns.size(); c++) {
            Object value = c == offsetIndex ? (Object) offset : row[v++];
            appendValue(a, columns.get(c).type(), value);
            g.bounds.add(c, value);
          }
          if (keyed) {
            appendValue(a, Types.BooleanType.get(), row[v]); // the tombstone flag
            if (!indexed) {
              index.add(offset, row);
            }
          }
          g.bounds.row();
          a.endRow();
          offset++;
        }
      }
      a.flush();
    } catch (SQLException | RuntimeException e) {
      // the memtable may hold part of the batch: it cannot be trusted, and the log is reopened from disk
      log.broken();
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot move log rows into the memtable: " + e.getMessage()
          + "; the tail is reopened from its log", e);
    }
    Wal.Durable last = batch.get(batch.size() - 1);
    syncedEnd = last.first() + last.count();
    g.end = syncedEnd;
  }

  /** Appends a value of Iceberg's internal representation of {@code type} to the appender's row. */
  static void appendValue(DuckDBAppender a, Type type, Object v) throws SQLException {
    if (v == null) {
      a.appendNull();
      return;
    }
    switch (type.typeId()) {
      case BOOLEAN -> a.append((boolean) (Boolean) v);
      case INTEGER -> a.append((int) (Integer) v);
      case LONG -> a.append((long) (Long) v);
      case FLOAT -> a.append((float) (Float) v);
      case DOUBLE -> a.append((double) (Double) v);
      case DATE -> a.appendEpochDays((Integer) v);
      case TIME -> a.appendDayMicros((Long) v);
      case TIMESTAMP -> a.appendEpochMicros((Long) v);
      case TIMESTAMP_NANO -> a.appendEpochNanos((Long) v);
      case STRING -> a.append((String) v);
      case UUID -> a.append((UUID) v);
      case DECIMAL -> a.append((java.math.BigDecimal) v);
      case BINARY, FIXED -> {
        ByteBuffer b = ((ByteBuffer) v).duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        a.append(bytes);
      }
      default -> throw new IllegalStateException("unexpected type " + type);
    }
  }

  /** Starts a memtable generation at {@code first}. Holding the log's monitor. */
  private void newGeneration(long first) {
    String name = prefix + (generationCount++);
    execute("CREATE TABLE memory.main." + Lexer.quoteIdentifier(name) + " (" + columnsDdl(schema) + ")");
    generations.add(new Generation(name, first, schema));
  }

  /**
   * The columns of a DuckDB table of a log's rows, as in CREATE TABLE: the table's (with the offset),
   * and for a keyed log the tombstone flag last.
   */
  static String columnsDdl(Schema schema) {
    StringBuilder ddl = new StringBuilder();
    List<Types.NestedField> columns = schema.columns();
    for (int c = 0; c < columns.size(); c++) {
      ddl.append(c > 0 ? ", " : "").append(Lexer.quoteIdentifier(columns.get(c).name())).append(' ')
          .append(TypeMapping.duckdbType(columns.get(c).type()));
    }
    if (TailLog.keyed(schema)) {
      ddl.append(", ").append(TailLog.DELETED_COLUMN).append(" BOOLEAN");
    }
    return ddl.toString();
  }

  private void execute(String sql) {
    try (var st = duck.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "memtable: " + e.getMessage(), e);
    }
  }

  /**
   * Pins the unsealed rows from offset {@code from} to the end of what is durable now (see
   * {@link TailLog#pin}); empty if the memtable no longer holds rows from {@code from}. Holding the log's
   * monitor.
   */
  Optional<Pinned> pin(long from, boolean writer) {
    if (tailer != null && from > through) {
      // a reader learns the writer's seals from the snapshots it reads: older generations can go
      through = from;
      if (generations.get(generations.size() - 1).end > generations.get(generations.size() - 1).first) {
        closeGeneration(syncedEnd);
      }
      dropSealedGenerations();
    }
    if (from < floor()) {
      return Optional.empty();
    }
    sync();
    // a keyed memtable holds versions queued and not yet durable: only a keyed change reads those
    long end = Math.max(writer ? heldEnd() : Math.min(heldEnd(), durableEnd), from);
    List<String> tables = new ArrayList<>();
    List<org.apache.iceberg.DataFile> bounds = new ArrayList<>();
    for (int i = 0; i < generations.size(); i++) {
      Generation g = generations.get(i);
      // the open generation also holds (keyed) the indexed versions flushUnloaded moves in later
      long gEnd = i == generations.size() - 1 ? Math.max(g.end, heldEnd()) : g.end;
      if (gEnd > from && g.first < end) {
        tables.add(g.name);
        bounds.add(g.bounds.asFile(g.name));
      }
    }
    pins.merge(from, 1, Integer::sum);
    return Optional.of(new Pinned(end, tables, bounds));
  }

  /** Releases a pin from {@code from}. Holding the log's monitor. */
  void unpin(long from) {
    pins.computeIfPresent(from, (k, n) -> n == 1 ? null : n - 1);
    dropSealedGenerations();
  }

  /** The lowest offset the memtable still holds rows from. Holding the log's monitor. */
  private long floor() {
    return generations.isEmpty() ? syncedEnd : generations.get(0).first;
  }

  /** Drops generations the table holds that no reader pins. Holding the log's monitor. */
  private void dropSealedGenerations() {
    long keep = pins.isEmpty() ? through : Math.min(through, pins.firstKey());
    while (generations.size() > 1 && !generations.get(0).open && generations.get(0).end <= keep) {
      Generation g = generations.remove(0);
      execute("DROP TABLE memory.main." + Lexer.quoteIdentifier(g.name));
      if (index != null) {
        index.dropBelow(g.end);
      }
    }
  }

  /**
   * Cuts the rows from {@code from} (the watermark) to {@code to} (the end of what was moved in) off
   * for a seal: the open generation closes, and the next starts at {@code to}. The rows sealed stay
   * readable from the closed generations until {@link #sealed}. Holding the log's monitor.
   *
   * @return a SELECT of the rows to seal
   */
  String cut(long from, long to) {
    Generation g = generations.get(generations.size() - 1);
    g.open = false;
    newGeneration(to);
    List<String> parts = new ArrayList<>();
    for (Generation s : generations) {
      if (s.end > from && s.first < to) {
        parts.add("SELECT * FROM memory.main." + Lexer.quoteIdentifier(s.name) + " WHERE "
            + Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN) + " >= " + from + " AND "
            + Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN) + " < " + to);
      }
    }
    // rows appended from here on are the next seal's; their age counts from now at the latest
    synchronized (pending) {
      unsealedSince = durableEnd > to ? System.nanoTime() : 0;
    }
    return String.join(" UNION ALL ", parts);
  }

  /**
   * The table holds every row below {@code to} now: generations no reader pins go. Holding the log's
   * monitor.
   */
  void sealed(long to) {
    through = to;
    dropSealedGenerations();
  }

  /**
   * An ingest wrote the rows below {@code end} straight into the table: the log goes on from there, in
   * a new generation. Holding the log's monitor.
   */
  void ingested(long end) {
    through = end;
    durableFrom(end);
    closeGeneration(end);
    dropSealedGenerations();
  }

  /**
   * Bounds of each column over the unsealed rows moved in (see {@link TailLog#memtableBounds}). Holding
   * the log's monitor.
   */
  ColumnBounds.Summary bounds() {
    ColumnBounds all = new ColumnBounds(schema);
    for (Generation g : generations) {
      if (g.end > through) {
        all.merge(g.bounds);
      }
    }
    return all.summary();
  }

  /** Drops every generation (the log stops). Holding the log's monitor. */
  void drop() {
    for (Generation g : generations) {
      try (var st = duck.createStatement()) {
        st.execute("DROP TABLE IF EXISTS memory.main." + Lexer.quoteIdentifier(g.name));
      } catch (SQLException ignored) {
        // failing or closing anyway
      }
    }
    generations.clear();
    unloaded.clear();
    if (index != null) {
      index.clear();
    }
  }
}
