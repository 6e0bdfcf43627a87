package dev.floe.exec;

import dev.floe.FloeProperties;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.tail.Published;
import dev.floe.tail.TailLog;
import dev.floe.write.Inserter;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.duckdb.DuckDBConnection;

/**
 * The open tails of the warehouse's tables, by table UUID (a rename keeps the log): opened the first
 * time a statement or the API touches a table with a tail, replaying what its log holds. Logs live in
 * {@code .floe/tail/<table uuid>/} in the warehouse.
 */
final class Tails implements AutoCloseable {
  private final Engine engine;
  private final Map<String, TailLog> open = new ConcurrentHashMap<>();
  private final Map<String, TableIdentifier> names = new ConcurrentHashMap<>();

  Tails(Engine engine) {
    this.engine = engine;
  }

  /**
   * The tail of {@code table} (named {@code id}), opened if need be; empty if it has none.
   *
   * @throws FloeException 55000 when the tail is another warehouse's ({@link #foreign}): its rows are appended,
   *     sealed and changed by the Floe that keeps its log
   */
  Optional<TailLog> of(TableIdentifier id, Table table) {
    if (!TailLog.hasTail(table)) {
      return Optional.empty();
    }
    if (foreign(table.properties())) {
      String owner = table.properties().get(FloeProperties.TAIL_OWNER);
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "table \"" + id.name() + "\" has a tail "
          + "kept by another Floe (warehouse " + owner + "): its rows change there", null,
          "Write to it through the Floe whose warehouse keeps its log; here it reads the sealed rows.", 0, null);
    }
    String uuid = table.uuid().toString();
    names.put(uuid, id);
    TailLog log = open.get(uuid);
    if (log != null && log.isOpen()) {
      return Optional.of(log);
    }
    synchronized (this) {
      open.computeIfPresent(uuid, (u, l) -> l.isOpen() ? l : null); // a log that failed is opened again
      // a read-only process follows the log the writing process appends to
      return Optional.of(open.computeIfAbsent(uuid, u -> engine.readOnly()
          ? TailLog.openReadOnly(host(u), directory(u)) : TailLog.open(host(u), directory(u))));
    }
  }

  /** The tail of {@code table} for a reader: none when it is another warehouse's (its sealed rows are read). */
  Optional<TailLog> forReading(TableIdentifier id, Table table) {
    return TailLog.hasTail(table) && foreign(table.properties()) ? Optional.empty() : of(id, table);
  }

  /** Whether a table's tail is kept by another warehouse's Floe (a REST catalog two Floes share). */
  boolean foreign(Map<String, String> properties) {
    String owner = properties.get(FloeProperties.TAIL_OWNER);
    return owner != null && !owner.isEmpty() && !owner.equals(engine.warehouseId());
  }

  /** Table properties that make {@code properties}' tail this warehouse's (when they give the table a tail). */
  Map<String, String> owned(Map<String, String> properties) {
    if (!TailLog.hasTail(properties)) {
      return properties;
    }
    Map<String, String> out = new java.util.LinkedHashMap<>(properties);
    out.put(FloeProperties.TAIL_OWNER, engine.warehouseId());
    return out;
  }

  /** Seals every unsealed row of the table, if it has a tail (before a statement that rewrites rows). */
  void flush(TableIdentifier id, Table table) {
    of(id, table).ifPresent(log -> log.seal(true));
  }

  /**
   * Seals every unsealed row of the table, if it has a tail, and runs {@code change} with no seal of the
   * log running until it returns (see {@link TailLog#sealedWhile}); {@code change} may take the table's
   * commit lock. Without a tail, just runs {@code change}.
   */
  <T> T sealedWhile(TableIdentifier id, Table table, java.util.function.Supplier<T> change) {
    Optional<TailLog> log = of(id, table);
    return log.isPresent() ? log.get().sealedWhile(change) : change.get();
  }

  /**
   * Retires the table's log (see {@link TailLog#retire}): the table keeps its rows and becomes a plain
   * table, marked with the offset the log ended at; the log's files go.
   */
  long retire(TableIdentifier id, Table table) {
    TailLog log = of(id, table).orElseThrow(() -> new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE,
        "table \"" + id.name() + "\" has no tail"));
    long end = log.retire();
    Table live = engine.tables().current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    engine.committer().commit(id, live, dev.floe.commit.TableChange.properties(Map.of(FloeProperties.TAIL,
        "false", FloeProperties.TAIL_RETIRED, Long.toString(end)), java.util.Set.of()));
    dropped(table.uuid().toString());
    return end;
  }

  /**
   * Writes Arrow batches (columns matched to the table's by name; ones not given are NULL or their
   * default) straight into the table's files at its target size, numbered with offsets taken from the
   * log (see {@link TailLog#ingest}); the values are checked as an INSERT checks them.
   *
   * @return the offset of the first row and the number of rows
   */
  long[] ingest(TableIdentifier id, Table table, org.apache.arrow.vector.ipc.ArrowReader batches) {
    TailLog log = of(id, table).orElseThrow(() -> new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE,
        "table \"" + id.name() + "\" has no tail"));
    long[] rows = new long[1];
    long first = log.ingest(start -> {
      Table live = engine.tables().current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
      org.apache.iceberg.Schema schema = live.schema();
      java.util.List<dev.floe.Column> columns = dev.floe.types.TypeMapping.columns(schema, live.properties());
      try (DuckDBConnection duck = engine.connect();
          org.apache.arrow.c.ArrowArrayStream stream = org.apache.arrow.c.ArrowArrayStream.allocateNew(
              engine.allocator())) {
        java.util.List<org.apache.arrow.vector.types.pojo.Field> fields;
        try {
          fields = batches.getVectorSchemaRoot().getSchema().getFields();
        } catch (java.io.IOException e) {
          throw new FloeException(SqlState.IO_ERROR, "cannot read the Arrow batches: " + e.getMessage(), e);
        }
        java.util.Map<String, String> provided = new java.util.HashMap<>();
        for (int k = 0; k < fields.size(); k++) {
          String name = fields.get(k).getName();
          dev.floe.Column c = columns.stream().filter(col -> col.name().equalsIgnoreCase(name)).findFirst()
              .orElseThrow(() -> new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + name
                  + "\" of relation \"" + id.name() + "\" does not exist"));
          if (c.name().equals(TailLog.OFFSET_COLUMN)) {
            throw new FloeException(SqlState.GENERATED_ALWAYS, "cannot ingest a value into column \""
                + TailLog.OFFSET_COLUMN + "\": the log numbers the rows");
          }
          if (provided.put(c.name(), "q." + dev.floe.sql.Lexer.quoteIdentifier("s" + k)) != null) {
            throw new FloeException(SqlState.DUPLICATE_COLUMN, "column \"" + name + "\" is given twice");
          }
        }
        // the rows are numbered in the order DuckDB reads them
        provided.put(TailLog.OFFSET_COLUMN, "(" + start + " + row_number() OVER () - 1)");
        // DuckDB releases what it is given; the caller's reader stays the caller's to close
        org.apache.arrow.c.Data.exportArrayStream(engine.allocator(), new Borrowed(engine.allocator(), batches), stream);
        duck.registerArrowStream("__floe_ingest", stream);
        try (var st = duck.createStatement()) {
          // a registered stream can be scanned once: take it into a table first
          st.execute("CREATE TEMP TABLE __floe_ingested AS SELECT * FROM __floe_ingest");
        }
        String rowsSql = Inserts.rowsSql(id.name(), schema, live.properties(), columns, provided,
            "SELECT * FROM __floe_ingested", fields.size());
        Inserter.Written written;
        try {
          written = Inserter.write(duck, live, schema, rowsSql, engine.scratch(), -1);
        } catch (Inserter.WriteFailure e) {
          throw DuckErrors.map(e.sqlException(), o -> 0);
        }
        rows[0] = written.rows();
        return written;
      } catch (java.sql.SQLException e) {
        throw DuckErrors.map(e, o -> 0);
      }
    });
    return new long[] {first, rows[0]};
  }

  /** A reader passing on another's batches, leaving that one open when it is closed. */
  private static final class Borrowed extends org.apache.arrow.vector.ipc.ArrowReader {
    private final org.apache.arrow.vector.ipc.ArrowReader in;

    Borrowed(org.apache.arrow.memory.BufferAllocator allocator, org.apache.arrow.vector.ipc.ArrowReader in) {
      super(allocator);
      this.in = in;
    }

    @Override
    public boolean loadNextBatch() throws java.io.IOException {
      if (!in.loadNextBatch()) {
        return false;
      }
      try (org.apache.arrow.vector.ipc.message.ArrowRecordBatch batch =
          new org.apache.arrow.vector.VectorUnloader(in.getVectorSchemaRoot()).getRecordBatch()) {
        new org.apache.arrow.vector.VectorLoader(getVectorSchemaRoot()).load(batch);
      }
      return true;
    }

    @Override
    public long bytesRead() {
      return in.bytesRead();
    }

    @Override
    protected void closeReadSource() {
      // the caller closes its reader
    }

    @Override
    protected org.apache.arrow.vector.types.pojo.Schema readSchema() throws java.io.IOException {
      return in.getVectorSchemaRoot().getSchema();
    }
  }

  /**
   * Reports the damage in the table's log, and with {@code drop} drops its records from the damage on
   * ({@link dev.floe.tail.WalRepair}); the log, if this process has it open, is closed first.
   */
  dev.floe.LogRepair repair(TableIdentifier id, Table table, boolean drop) {
    String uuid = table.uuid().toString();
    long floor = TailLog.through(table);
    if (!drop) {
      return dev.floe.tail.WalRepair.inspect(id.name(), directory(uuid), floor);
    }
    synchronized (this) {
      reopen(uuid);
      return dev.floe.tail.WalRepair.repair(id.name(), directory(uuid), floor, java.time.Instant.now());
    }
  }

  /** The table was renamed: its log stays, under its new name. */
  void renamed(Table table, TableIdentifier to) {
    names.computeIfPresent(table.uuid().toString(), (k, v) -> to);
  }

  /** Closes the table's log, if open: the next use opens it again (on the table's new schema). */
  void reopen(String uuid) {
    TailLog log = open.remove(uuid);
    if (log != null) {
      log.close();
    }
  }

  /** The table was dropped: its log goes with it. */
  void dropped(String uuid) {
    TailLog log = open.remove(uuid);
    names.remove(uuid);
    if (log != null) {
      log.close();
    }
    dev.floe.write.Scratch.deleteTree(directory(uuid));
    Published p = published.remove(uuid);
    if (p != null) {
      p.close();
    }
    dev.floe.write.Scratch.deleteTree(cache(uuid)); // the published table itself stays where it is
  }

  private final Map<String, Published> published = new ConcurrentHashMap<>();

  /**
   * The published table of {@code table} on object storage, if it names one ({@link Published}); one
   * per table in this process, its local copies in {@code .floe/cache/<table uuid>/}.
   */
  Optional<Published> published(Table table) {
    Optional<String> location = Published.location(table.properties());
    if (location.isEmpty()) {
      return Optional.empty();
    }
    String uuid = table.uuid().toString();
    Published p = published.get(uuid);
    if (p != null && p.location().equals(location.get().endsWith("/")
        ? location.get().substring(0, location.get().length() - 1) : location.get())) {
      return Optional.of(p);
    }
    synchronized (published) {
      Published opened = Published.open(location.get(), Published.storage(table.properties()), cache(uuid));
      Published was = published.put(uuid, opened);
      if (was != null) {
        was.close();
      }
      return Optional.of(opened);
    }
  }

  /**
   * The published tier a read of {@code table} at {@code snapshot} adds: the published table as of the
   * version the staging snapshot names. Rows below that version's watermark left the staging table in
   * the commit that named it, so each row is in exactly one of the two.
   */
  Optional<Table> publishedTier(Table table, Optional<org.apache.iceberg.Snapshot> snapshot, boolean historic) {
    Optional<Published> p = published(table);
    if (p.isEmpty()) {
      return Optional.empty();
    }
    String metadata = null;
    if (historic && snapshot.isPresent()) {
      for (org.apache.iceberg.Snapshot s = snapshot.get(); s != null && metadata == null;
          s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
        metadata = s.summary().get(FloeProperties.PUBLISHED_METADATA);
      }
    } else {
      metadata = table.properties().get(FloeProperties.PUBLISHED_METADATA);
    }
    return metadata == null ? Optional.empty() : Optional.of(p.get().at(metadata));
  }

  private Path cache(String uuid) {
    // a read-only process changes nothing in the warehouse: its copies go to its private scratch directory
    Path root = engine.readOnly() ? engine.scratch() : engine.warehouse().resolve(".floe");
    return root.resolve("cache").resolve(uuid);
  }

  private Path directory(String uuid) {
    return engine.warehouse().resolve(".floe").resolve("tail").resolve(uuid);
  }

  private TailLog.Host host(String uuid) {
    return new TailLog.Host() {
      @Override
      public Table table() {
        TableIdentifier id = names.get(uuid);
        Table t = id == null ? null : engine.tables().current(id).orElse(null);
        if (t == null || !t.uuid().toString().equals(uuid)) {
          throw new FloeException(SqlState.UNDEFINED_TABLE, "the table of tail " + uuid + " no longer exists");
        }
        return t;
      }

      @Override
      public TableIdentifier id() {
        return names.get(uuid);
      }

      @Override
      public dev.floe.commit.Committer committer() {
        return engine.committer();
      }

      @Override
      public Path scratch() {
        return engine.scratch();
      }

      @Override
      public DuckDBConnection connect() {
        return engine.connect();
      }

      @Override
      public int reclaim(long graceMillis) {
        return Maintenance.reclaim(engine, names.get(uuid), graceMillis);
      }

      @Override
      public int sweep(long graceMillis) {
        int swept = Maintenance.sweep(engine, names.get(uuid), graceMillis).size();
        Optional<Published> p = published();
        if (p.isPresent()) {
          try {
            swept += Maintenance.sweep(p.get(), graceMillis).size();
          } catch (RuntimeException e) {
            LOG.debug("sweeping the published table {} waits: {}", p.get().location(), e.getMessage());
          }
        }
        return swept;
      }

      @Override
      public int compact(DuckDBConnection duck, boolean all, long fromOffset) {
        return Compaction.compact(engine, names.get(uuid), duck, all, fromOffset, () -> { }).filesRewritten();
      }

      @Override
      public Optional<Published> published() {
        return Tails.this.published(table());
      }

      @Override
      public dev.floe.commit.TableChange fold(DuckDBConnection duck, Table table, String versions) {
        return KeyedFold.fold(engine, duck, table, versions);
      }
    };
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Tails.class);
  /** The background advancer reclaims and sweeps a table at most this often (they list and read metadata). */
  private static final long MAINTENANCE_INTERVAL_NANOS = 60_000_000_000L;
  private final Map<TailLog, Long> maintained = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Runs every open log's tiers ({@link TailLog#advance}), reclaiming and sweeping once a minute or with
   * {@code flush}. A log that fails is reported and the others still run.
   */
  /** Whether any tail is open (only then has {@link #advanceAll} work, and writes in flight). */
  boolean anyOpen() {
    return !open.isEmpty();
  }

  void advanceAll(boolean flush) {
    for (TailLog log : open.values()) {
      try {
        long now = System.nanoTime();
        Long last = maintained.get(log);
        boolean maintain = flush || last == null || now - last > MAINTENANCE_INTERVAL_NANOS;
        if (maintain) {
          maintained.put(log, now);
        }
        log.advance(flush, maintain);
      } catch (RuntimeException e) {
        if (log.isOpen()) {
          LOG.warn("advancing a tail failed: {}", e.getMessage(), e);
        }
      }
    }
  }

  @Override
  public void close() {
    for (TailLog log : open.values()) {
      log.close();
    }
    open.clear();
    published.values().forEach(Published::close);
    published.clear();
  }
}
