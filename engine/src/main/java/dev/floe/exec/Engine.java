package dev.floe.exec;

import dev.floe.FloeProperties;
import dev.floe.FloeConfig;
import dev.floe.FloeException;
import dev.floe.SnapshotInfo;
import dev.floe.SqlState;
import dev.floe.TableInfo;
import dev.floe.catalog.Warehouse;
import dev.floe.read.DeletionVectors;
import dev.floe.read.FileFooters;
import dev.floe.read.ScanFiles;
import dev.floe.read.ScanPlanner;
import dev.floe.read.Versions;
import dev.floe.types.TypeMapping;
import dev.floe.write.PartitionFunctions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.duckdb.DuckDBConnection;

/**
 * The engine behind a {@link dev.floe.Database}: the warehouse (catalog, lock), one in-process DuckDB
 * instance that executes every query, and the loaded tables.
 */
public final class Engine implements AutoCloseable {
  private final FloeConfig config;
  private final Warehouse warehouse;
  private final DuckDBConnection root;
  private final BufferAllocator allocator;
  private final Tables tables;
  private final ScanPlanner planner;
  private final ScanFiles files;
  private final Path scratch;
  private PgCatalog pgCatalog;
  /** The roles the catalogs list beside {@code floe} (Database#setRoles). */
  private volatile java.util.function.Supplier<List<String>> roles = List::of;

  public void setRoles(java.util.function.Supplier<List<String>> names) {
    this.roles = names;
  }

  /** The roles the catalogs list beside {@code floe}, sorted, without it. */
  List<String> roles() {
    try {
      return roles.get().stream().filter(n -> !n.equals("floe")).sorted().distinct().toList();
    } catch (RuntimeException e) {
      return List.of(); // a front end that cannot tell is listed without its roles
    }
  }
  private final Sequences sequences;
  private final Tails tails;
  private final dev.floe.commit.Committer committer;
  /** The sessions as backends: pg_stat_activity, pg_cancel_backend, pg_terminate_backend. */
  private final Backends backends;
  /** The background maintainer while one runs (its runs are floe_maintenance_runs). */
  private volatile Maintainer maintainer;

  private Engine(FloeConfig config, Warehouse warehouse, DuckDBConnection root, Path scratch) throws SQLException {
    this.config = config;
    this.warehouse = warehouse;
    this.root = root;
    this.scratch = scratch;
    this.planner = new ScanPlanner(warehouse.digests()::verify);
    this.files = new ScanFiles(new FileFooters(), new DeletionVectors((DuckDBConnection) root.duplicate(),
        scratch.resolve("vectors")), warehouse.digests());
    this.allocator = new RootAllocator();
    this.committer = new dev.floe.commit.Committer(warehouse.catalog(), planner::committed,
        config.beforeCommit().orElse(null), new dev.floe.write.DeleteRebase(this::connect, files));
    this.tables = new Tables(warehouse.catalog(), warehouse.locations(), committer);
    if (!config.readOnly()) {
      warehouse.catalog().landings().onRetired((id, files) -> TableMaintenance.retired(this, id, files));
    }
    this.sequences = new Sequences(warehouse.catalog());
    this.sequences.register(root);
    this.tails = new Tails(this);
    this.backends = new Backends(tables.readerPins());
    this.backends.register(root);
  }

  /** The sessions as PostgreSQL's backends. */
  public Backends backends() {
    return backends;
  }

  Tails tails() {
    return tails;
  }

  /** Runs the tiers of every open tail (see {@link Tails#advanceAll}). */
  public void advanceTails(boolean flush) {
    if (!config.readOnly() && tails.anyOpen()) {
      // the files its seals and compactions write are in flight until they commit (orphan removal)
      try (ReaderPins.Hold ignored = tables.readerPins().hold("tail maintenance")) {
        tails.advanceAll(flush);
      }
    }
  }

  /** A new connection to the engine's DuckDB database. */
  DuckDBConnection connect() {
    try {
      return (DuckDBConnection) root.duplicate();
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot connect to the query engine: " + e.getMessage(), e);
    }
  }

  Sequences sequences() {
    return sequences;
  }

  public static Engine open(FloeConfig config) {
    // Iceberg's worker pools register a JVM shutdown hook when first used; a commit made during
    // shutdown (sealing tails) would otherwise be the first, and fail.
    org.apache.iceberg.util.ThreadPools.getWorkerPool();
    // Starting DuckDB (unpacking and loading its native library) takes as long as opening the catalog;
    // do both at once.
    java.util.concurrent.CompletableFuture<DuckDBConnection> duck =
        java.util.concurrent.CompletableFuture.supplyAsync(() -> startDuckDb(config));
    Warehouse warehouse;
    try {
      warehouse = Warehouse.open(config.warehouse(), config.catalogName(), config.readOnly(), config.storageRoots(),
          config.remoteCatalog().orElse(null), config.objectStore().orElse(null));
    } catch (RuntimeException e) {
      duck.thenAccept(Engine::closeQuietly);
      throw e;
    }
    DuckDBConnection root = null;
    try {
      Path scratch = config.readOnly()
          ? Files.createTempDirectory("floe-scratch")
          : warehouse.scratch();
      Files.createDirectories(scratch);
      clearScratch(scratch);
      root = duck.join();
      try (var st = root.createStatement()) {
        st.execute("SET GLOBAL temp_directory = " + dev.floe.sql.Lexer.quoteString(scratch.resolve("spill").toString()));
        // DuckDB's default limit is 90% of the space free when it first spills: once computed on a full
        // disk it stays 0, and spilling fails after space is freed. 90% of the disk's size instead.
        long total = Files.getFileStore(scratch).getTotalSpace();
        st.execute("SET GLOBAL max_temp_directory_size = '" + Math.max(total / 10 * 9, 1L << 20) + "B'");
      }
      if (config.fenced()) {
        List<Path> reach = new ArrayList<>(warehouse.locations().roots());
        reach.add(scratch);
        if (!warehouse.objectCache().startsWith(warehouse.root())) {
          Files.createDirectories(warehouse.objectCache());
          reach.add(warehouse.objectCache());
        }
        fence(root, reach);
      }
      return new Engine(config, warehouse, root, scratch);
    } catch (SQLException | IOException e) {
      closeQuietly(root);
      warehouse.close();
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot start the query engine: " + e.getMessage(), e);
    } catch (java.util.concurrent.CompletionException e) {
      warehouse.close();
      throw e.getCause() instanceof RuntimeException r ? r : new FloeException(SqlState.INTERNAL_ERROR,
          "cannot start the query engine: " + e.getCause(), e.getCause());
    } catch (RuntimeException e) {
      closeQuietly(root);
      warehouse.close();
      throw e;
    }
  }

  private static DuckDBConnection startDuckDb(FloeConfig config) {
    Properties props = new Properties();
    props.setProperty("autoinstall_known_extensions", "false");
    props.setProperty("autoload_known_extensions", "false");
    config.memoryLimit().ifPresent(m -> props.setProperty("memory_limit", m));
    if (config.threads() > 0) {
      props.setProperty("threads", Integer.toString(config.threads()));
    }
    try {
      DuckDBConnection root = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:", props);
      try (var st = root.createStatement()) {
        // Data files are immutable (a path is never rewritten), so their footers can be cached.
        st.execute("SET GLOBAL parquet_metadata_cache = true");
        // Parquet writes without DuckDB 2.0's asynchronous writer: a COPY whose writer is torn down while
        // its writes drain (an interrupt, and once under load a plain INSERT) deadlocked a worker and the
        // statement for good. Synchronous writes cost about 10% on a bulk COPY (decision 0006).
        st.execute("SET GLOBAL async_threads = 0");
        // Every session's defaults (a fenced engine's configuration is locked, so set them once here).
        st.execute("SET GLOBAL errors_as_json = true");
        st.execute("SET GLOBAL integer_division = true");
        st.execute("SET GLOBAL TimeZone = 'UTC'");
        // PostgreSQL sorts NULLs as larger than every value: last ascending, first descending.
        st.execute("SET GLOBAL default_null_order = 'nulls_last_on_asc_first_on_desc'");
      }
      PartitionFunctions.register(root);
      PgFunctions.register(root);
      return root;
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot start the query engine: " + e.getMessage(), e);
    }
  }

  /**
   * Fences DuckDB to {@code directories} for the rest of the process's life: no file elsewhere (DuckDB
   * resolves {@code ..} and symbolic links before it checks), no network, no extension installed or
   * loaded, and its configuration locked, so nothing that runs later can lift it (docs/security.md).
   * The order is DuckDB's: the allowed directories can only be set while external access is still on.
   */
  private static void fence(DuckDBConnection root, List<Path> directories) throws SQLException, IOException {
    StringBuilder list = new StringBuilder("[");
    for (Path d : directories) {
      list.append(list.length() > 1 ? ", " : "").append(dev.floe.sql.Lexer.quoteString(d.toRealPath().toString()));
    }
    try (var st = root.createStatement()) {
      st.execute("SET GLOBAL allowed_directories = " + list.append(']'));
      st.execute("SET GLOBAL allow_community_extensions = false");
      st.execute("SET GLOBAL enable_external_access = false");
      st.execute("SET GLOBAL lock_configuration = true");
    }
  }

  private volatile CatalogService catalogService;

  /** The catalog as other engines reach it (the REST catalog). */
  public CatalogService catalogService() {
    CatalogService c = catalogService;
    if (c == null) {
      synchronized (this) {
        if (catalogService == null) {
          catalogService = new CatalogService(this);
        }
        c = catalogService;
      }
    }
    return c;
  }

  /** Where tables may be located. */
  dev.floe.catalog.Locations locations() {
    return warehouse.locations();
  }

  /** Whether DuckDB is fenced to the warehouse ({@link FloeConfig#fenced()}). */
  public boolean fenced() {
    return config.fenced();
  }

  private static void closeQuietly(DuckDBConnection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // never used
      }
    }
  }

  /** Files a crashed statement left in scratch are never referenced by a commit: delete them. */
  private static void clearScratch(Path scratch) throws IOException {
    try (var entries = Files.list(scratch)) {
      for (Path p : entries.toList()) {
        dev.floe.write.Scratch.deleteTree(p);
      }
    }
  }

  public SessionContext newSession() {
    return newSession(false);
  }

  /**
   * A session for SQL from a network client: it reaches tables, never the host (no DuckDB table function
   * but pure ones, no name DuckDB would read as a file). Needs a fenced engine.
   */
  public SessionContext newClientSession() {
    if (!config.fenced()) {
      throw new IllegalStateException("a client session needs a fenced database: open it with "
          + "FloeConfig.builder(dir).fenced(true) to serve network clients (docs/security.md)");
    }
    return newSession(true);
  }

  private SessionContext newSession(boolean client) {
    try {
      return new SessionContext(this, root.duplicate(), client);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot open a session: " + e.getMessage(), e);
    }
  }

  Tables tables() {
    return tables;
  }

  /** The PostgreSQL system catalogs, created on first use and brought up to date. */
  synchronized PgCatalog pgCatalog() {
    if (pgCatalog == null) {
      try {
        pgCatalog = new PgCatalog(this, (DuckDBConnection) root.duplicate());
      } catch (SQLException e) {
        throw new FloeException(SqlState.INTERNAL_ERROR, "cannot open the system catalogs: " + e.getMessage(), e);
      }
    }
    return pgCatalog;
  }

  ScanPlanner planner() {
    return planner;
  }

  /** Where every change to a table is committed, and the tables' commit locks. */
  dev.floe.commit.Committer committer() {
    return committer;
  }

  ScanFiles files() {
    return files;
  }

  BufferAllocator allocator() {
    return allocator;
  }

  Path scratch() {
    return scratch;
  }

  /** This warehouse's identity: the owner a tail made here records ({@link FloeProperties#TAIL_OWNER}). */
  String warehouseId() {
    return warehouse.id();
  }

  public Path warehouse() {
    return warehouse.root();
  }

  public boolean readOnly() {
    return config.readOnly();
  }

  void checkWritable() {
    if (config.readOnly()) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION,
          "cannot execute this statement: the warehouse is open read-only");
    }
  }

  /** The change stream of a table with a primary key (see {@link dev.floe.Changes}). */
  public ChangeStream changes(List<String> parts, String defaultSchema) {
    return ChangeStream.open(this, parts, defaultSchema);
  }

  /** A table's tail, as the embedded {@link dev.floe.Log} API uses it. */
  public record TailHandle(TableIdentifier id, dev.floe.tail.TailLog log, dev.floe.tail.RowValues values) {}

  /**
   * The tail of the table named {@code parts}, opened if need be.
   *
   * @throws FloeException 42P01 if there is no such table, 55000 if it has no tail
   */
  public TailHandle tail(List<String> parts, String defaultSchema) {
    TableIdentifier id = tables.identifier(parts, defaultSchema)
        .orElseThrow(() -> FloeException.undefinedTable(String.join(".", parts)));
    Table table = tables.current(id).orElseThrow(() -> FloeException.undefinedTable(String.join(".", parts)));
    dev.floe.tail.TailLog log = tails.of(id, table).orElseThrow(() -> new FloeException(
        SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "table \"" + id.name() + "\" has no tail", null,
        "Create it with WITH (tail = true), or with Database.newLog.", 0, null));
    List<org.apache.iceberg.types.Types.NestedField> fields = log.rowColumns();
    List<dev.floe.Column> all = TypeMapping.columns(log.schema(), table.properties());
    List<dev.floe.Column> columns = new ArrayList<>();
    for (org.apache.iceberg.types.Types.NestedField f : fields) {
      all.stream().filter(c -> c.fieldId() == f.fieldId()).forEach(columns::add);
    }
    return new TailHandle(id, log, new dev.floe.tail.RowValues(id.name(), fields, columns));
  }

  /**
   * Registers the table whose current metadata file is {@code metadataLocation} (a log's table, from a
   * lost machine) as {@code parts}, and gives it a tail whose offsets start {@code window} past every
   * offset the table holds or its log was known to reach (see {@link dev.floe.Database#restoreLog}).
   */
  public TableIdentifier restoreTail(List<String> parts, String defaultSchema, String metadataLocation,
      long window) {
    TableIdentifier id = restoreTarget(parts, defaultSchema, window);
    try {
      tables.catalog().registerTable(id, metadataLocation);
    } catch (org.apache.iceberg.exceptions.NotFoundException | org.apache.iceberg.exceptions.RuntimeIOException e) {
      throw new FloeException(SqlState.UNDEFINED_OBJECT, "cannot read table metadata " + metadataLocation + ": "
          + e.getMessage(), e);
    }
    Table table = tables.current(id).orElseThrow();
    org.apache.iceberg.types.Types.NestedField offset = table.schema().findField(dev.floe.tail.TailLog.OFFSET_COLUMN);
    if (offset == null || offset.type().typeId() != org.apache.iceberg.types.Type.TypeID.LONG) {
      tables.catalog().dropTable(id, false);
      tables.forget(id);
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "table " + metadataLocation
          + " is not a log's table: it has no bigint column " + dev.floe.tail.TailLog.OFFSET_COLUMN);
    }
    long reached = dev.floe.tail.TailLog.through(table);
    for (String key : List.of(FloeProperties.TAIL_RETIRED, FloeProperties.TAIL_START)) {
      reached = Math.max(reached, org.apache.iceberg.util.PropertyUtil.propertyAsLong(table.properties(), key, 0));
    }
    Object max = fileBounds(id).columns().get(dev.floe.tail.TailLog.OFFSET_COLUMN).upper();
    if (max != null) {
      reached = Math.max(reached, (Long) max + 1);
    }
    long start = Math.addExact(reached, window);
    committer.commit(id, table, dev.floe.commit.TableChange.properties(java.util.Map.of(
        FloeProperties.TAIL, "true",
        FloeProperties.TAIL_OWNER, warehouseId(),
        FloeProperties.TAIL_START, Long.toString(start),
        FloeProperties.TAIL_THROUGH, Long.toString(start)), java.util.Set.of(
        FloeProperties.TAIL_RETIRED)));
    return id;
  }

  /** The name a restored log's table takes: new, in an existing schema. */
  private TableIdentifier restoreTarget(List<String> parts, String defaultSchema, long window) {
    checkWritable();
    if (window < 0) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "the offset window must not be negative");
    }
    TableIdentifier id = tables.identifier(parts, defaultSchema)
        .orElseThrow(() -> FloeException.undefinedTable(String.join(".", parts)));
    dev.floe.catalog.Locations.checkName(id.name(), false, 0);
    if (tables.current(id).isPresent()) {
      throw FloeException.duplicateTable(id.name(), 0);
    }
    if (!tables.catalog().namespaceExists(id.namespace())) {
      throw new FloeException(SqlState.INVALID_SCHEMA_NAME, "schema \"" + id.namespace() + "\" does not exist");
    }
    return id;
  }

  /**
   * Rebuilds a log from the table it published at {@code location} on object storage: a new staging
   * table {@code parts} (the published table's columns, field ids, partitioning and sort order) whose
   * log starts {@code window} offsets past every offset the published table holds, and whose reads
   * take the published rows from there.
   */
  public TableIdentifier restorePublishedTail(List<String> parts, String defaultSchema, String location,
      java.util.Map<String, String> storage, long window) {
    dev.floe.tail.Published.check(location, storage);
    TableIdentifier id = restoreTarget(parts, defaultSchema, window);
    java.nio.file.Path cache = scratch.resolve("restore-" + java.util.UUID.randomUUID());
    try (dev.floe.tail.Published published = dev.floe.tail.Published.open(location, storage, cache)) {
      Table pub = published.current().orElseThrow(() -> new FloeException(SqlState.UNDEFINED_OBJECT,
          "no table is published at " + location));
      org.apache.iceberg.types.Types.NestedField offset = pub.schema().findField(dev.floe.tail.TailLog.OFFSET_COLUMN);
      if (offset == null || offset.type().typeId() != org.apache.iceberg.types.Type.TypeID.LONG) {
        throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "the table at " + location
            + " is not a log's table: it has no bigint column " + dev.floe.tail.TailLog.OFFSET_COLUMN);
      }
      long at = dev.floe.tail.Published.through(pub);
      long reached = at;
      if (pub.currentSnapshot() != null) {
        dev.floe.tail.ColumnBounds bounds = dev.floe.tail.ColumnBounds.of(pub.schema());
        for (org.apache.iceberg.FileScanTask task : planner.plan(pub, pub.currentSnapshot(), pub.schema(), null)) {
          bounds.addFile(task.file());
        }
        Object max = bounds.result().columns().get(dev.floe.tail.TailLog.OFFSET_COLUMN).upper();
        if (max != null) {
          reached = Math.max(reached, (Long) max + 1);
        }
      }
      long start = Math.addExact(reached, window);
      java.util.Map<String, String> props = new java.util.HashMap<>(pub.properties());
      props.keySet().removeIf(k -> k.startsWith(FloeProperties.TAIL_PREFIX) || k.equals(org.apache.iceberg.TableProperties.COMMIT_NUM_RETRIES)
          || k.startsWith("write.metadata."));
      props.put(FloeProperties.TAIL, "true");
      props.put(FloeProperties.TAIL_OWNER, warehouseId());
      props.put(FloeProperties.PUBLISH_TO, published.location());
      storage.forEach((k, v) -> props.put(FloeProperties.PUBLISH_STORAGE_PREFIX + k, v));
      props.put(FloeProperties.TAIL_START, Long.toString(start));
      props.put(FloeProperties.TAIL_THROUGH, Long.toString(start));
      props.put(FloeProperties.PUBLISHED_THROUGH, Long.toString(at));
      props.put(FloeProperties.PUBLISHED_METADATA,
          ((org.apache.iceberg.HasTableOperations) pub).operations().current().metadataFileLocation());
      String tableLocation = tables.catalog().newTableLocation(id);
      org.apache.iceberg.TableMetadata staging = org.apache.iceberg.TableMetadata.buildFromEmpty(
              ((org.apache.iceberg.HasTableOperations) pub).operations().current().formatVersion())
          .assignUUID().setLocation(tableLocation).setCurrentSchema(pub.schema(), pub.schema().highestFieldId())
          .setDefaultPartitionSpec(pub.spec()).setDefaultSortOrder(pub.sortOrder()).setProperties(props).build();
      String metadataFile = tableLocation + "/metadata/00000-" + java.util.UUID.randomUUID() + ".metadata.json";
      org.apache.iceberg.TableMetadataParser.write(staging, tables.catalog().io().newOutputFile(metadataFile));
      tables.catalog().registerTable(id, metadataFile);
    } finally {
      dev.floe.write.Scratch.deleteTree(cache);
    }
    return id;
  }

  /**
   * Reports the damage in the log of the table named {@code parts} and, with {@code dropFromDamage},
   * drops its records from the damage on (see {@link dev.floe.Database#repairLog}).
   */
  public dev.floe.LogRepair repairTail(List<String> parts, String defaultSchema, boolean dropFromDamage) {
    if (dropFromDamage) {
      checkWritable();
    }
    TableIdentifier id = tables.identifier(parts, defaultSchema)
        .orElseThrow(() -> FloeException.undefinedTable(String.join(".", parts)));
    Table table = tables.current(id).orElseThrow(() -> FloeException.undefinedTable(String.join(".", parts)));
    if (!dev.floe.tail.TailLog.hasTail(table)) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "table \"" + id.name() + "\" has no tail");
    }
    return tails.repair(id, table, dropFromDamage);
  }

  /** Ingests Arrow batches into a table with a tail (see {@link dev.floe.Log#ingest}). */
  public long[] ingestTail(TableIdentifier id, org.apache.arrow.vector.ipc.ArrowReader batches) {
    checkWritable();
    Table table = tables.current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    return tails.ingest(id, table, batches);
  }

  /** Retires the tail of a table (see {@link dev.floe.Log#retire}). */
  public long retireTail(TableIdentifier id) {
    checkWritable();
    Table table = tables.current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    return tails.retire(id, table);
  }

  /** Bounds of each column over the data files of a table's current snapshot (their Iceberg metrics). */
  public dev.floe.tail.ColumnBounds.Summary fileBounds(TableIdentifier id) {
    Table table = tables.current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    dev.floe.tail.ColumnBounds bounds = dev.floe.tail.ColumnBounds.of(table.schema());
    Snapshot snapshot = table.currentSnapshot();
    if (snapshot != null) {
      for (org.apache.iceberg.FileScanTask task : planner.plan(table, snapshot, table.schema(), null)) {
        bounds.addFile(task.file());
      }
    }
    return bounds.result();
  }

  /**
   * Bounds of each column over the rows a log published to object storage and its staging table let
   * go of (the published table as of the version the staging table names), from the published files'
   * metrics as kept locally.
   */
  public dev.floe.tail.ColumnBounds.Summary publishedBounds(TableIdentifier id) {
    Table table = tables.current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    dev.floe.tail.ColumnBounds bounds = dev.floe.tail.ColumnBounds.of(table.schema());
    Optional<Table> published = tails.publishedTier(table, Optional.ofNullable(table.currentSnapshot()), false);
    if (published.isPresent() && published.get().currentSnapshot() != null) {
      Table p = published.get();
      for (org.apache.iceberg.FileScanTask task : planner.plan(p, p.currentSnapshot(), p.schema(), null)) {
        bounds.addFile(task.file());
      }
    }
    return bounds.result();
  }

  /**
   * Reports on a table's metadata files and, with {@code to} ({@code previous} or a metadata file of the
   * table), points the catalog back to it ({@link MetadataRepair}).
   */
  public dev.floe.TableRepair repairTable(List<String> parts, String defaultSchema, Optional<String> to) {
    TableIdentifier id = tables.identifier(parts, defaultSchema)
        .orElseThrow(() -> FloeException.undefinedTable(String.join(".", parts)));
    return MetadataRepair.repair(this, id, to);
  }

  /** Reads every file of every table again and checks it ({@link dev.floe.Verification}). */
  public List<dev.floe.Verification> verify() {
    return Verifier.verifyAll(this);
  }

  /** The table named {@code parts} as a {@link TableInfo}. */
  public Optional<TableInfo> tableInfo(List<String> parts, String defaultSchema) {
    return tables.identifier(parts, defaultSchema).flatMap(this::tableInfo);
  }

  /**
   * Takes the maintenance steps of the named tables (empty: every table) now, by their policies, or
   * with {@code dryRun} says what they would do; each step is reported to {@code progress} as it ends.
   *
   * @throws dev.floe.FloeException 42P01 for a name that is no table
   */
  public void maintainNow(List<List<String>> names, String defaultSchema, boolean dryRun,
      java.util.function.Consumer<dev.floe.MaintenanceRun> progress) {
    List<TableIdentifier> ids = new ArrayList<>();
    for (List<String> name : names) {
      ids.add(tables.identifier(name, defaultSchema).filter(id -> tables.live(id).isPresent())
          .orElseThrow(() -> dev.floe.FloeException.undefinedTable(String.join(".", name))));
    }
    Maintainer.maintainNow(this, ids, dryRun, progress);
  }

  /** Starts the background maintainer ({@link Maintainer}). */
  public Maintainer startMaintainer(java.time.Duration every) {
    Maintainer m = Maintainer.start(this, every);
    maintainer = m;
    return m;
  }

  /** The maintainer {@code m} stopped: its runs are no longer reported. */
  public void maintainerStopped(Maintainer m) {
    if (maintainer == m) {
      maintainer = null;
    }
  }

  /** The background maintainer's recent steps, oldest first (empty when none runs). */
  public List<dev.floe.MaintenanceRun> maintenanceRuns() {
    Maintainer m = maintainer;
    return m == null ? List.of() : m.runs();
  }

  Optional<TableInfo> tableInfo(TableIdentifier id) {
    return tables.live(id).map(t -> info(id, Tables.frozen(t)));
  }

  private static TableInfo info(TableIdentifier id, Table t) {
    List<SnapshotInfo> snapshots = new ArrayList<>();
    for (Snapshot s : t.snapshots()) {
      snapshots.add(new SnapshotInfo(Versions.of(t, s).orElse(0L), s.snapshotId(), Optional.ofNullable(s.parentId()),
          Instant.ofEpochMilli(s.timestampMillis()), s.operation() == null ? "" : s.operation(), s.summary()));
    }
    Snapshot current = t.currentSnapshot();
    int formatVersion = ((HasTableOperations) t).operations().current().formatVersion();
    return new TableInfo(id.namespace().toString(), id.name(), TypeMapping.columns(t.schema(), t.properties()),
        Optional.ofNullable(current).flatMap(s -> Versions.of(t, s)), snapshots,
        TableOptions.describe(t.spec(), t.schema()), TableOptions.describe(t.sortOrder(), t.schema()), t.properties(),
        t.location(), formatVersion);
  }

  @Override
  public void close() {
    tails.close();
    files.vectors().close();
    try {
      root.close();
    } catch (SQLException ignored) {
      // shutting down anyway
    }
    allocator.close();
    warehouse.close();
    if (config.readOnly()) {
      dev.floe.write.Scratch.deleteTree(scratch); // a private temp directory
    }
  }
}
