package dev.floe;

import dev.floe.exec.Engine;
import dev.floe.exec.SessionContext;
import dev.floe.sql.Parser;
import dev.floe.sql.QualifiedName;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * An open warehouse: SQL over its Iceberg tables. Safe for concurrent use by many threads; each
 * {@link #sql} call runs in its own session. Close it to release the warehouse lock.
 */
public final class Database implements AutoCloseable {
  private final Engine engine;
  private final ConcurrentLinkedQueue<SessionContext> idle = new ConcurrentLinkedQueue<>();
  private volatile boolean closed;

  Database(Engine engine) {
    this.engine = engine;
  }

  /**
   * Executes one SQL statement in a fresh session (current schema {@code public}).
   *
   * <p>Durability: when a writing statement returns, its commit is durable and visible to every later
   * statement, in this process or another. A statement that throws changed nothing.
   *
   * <p>Visibility: a query reads, for each table it names, the latest snapshot committed when it
   * started; the returned {@link Result} streams rows and must be closed.
   *
   * @throws FloeException carrying a PostgreSQL SQLSTATE
   */
  public Result sql(String sql) {
    checkOpen();
    SessionContext s = idle.poll();
    while (s != null && s.terminated()) {
      s.close(); // pg_terminate_backend ended it while pooled
      s = idle.poll();
    }
    if (s == null) {
      s = engine.newSession();
    }
    SessionContext session = s;
    Result result;
    try {
      result = session.execute(sql);
    } catch (RuntimeException e) {
      release(session);
      throw e;
    }
    if (session.inTransaction()) {
      // BEGIN: a block spans statements, and each call here gets a session of its own
      result.close();
      release(session);
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "a transaction block needs a session of its own",
          null, "Use Database.begin(), or BEGIN on a Session from Database.connect().", 0, null);
    }
    if (!result.hasRows()) {
      release(session);
      return result;
    }
    return new ReleasingResult(result, () -> release(session));
  }

  private void release(SessionContext session) {
    if (session.terminated()) {
      session.close();
      return;
    }
    if (session.inTransaction()) {
      session.rollback();
    }
    session.setCurrentSchema(dev.floe.catalog.Warehouse.DEFAULT_NAMESPACE);
    session.onNotice(n -> { });
    if (closed) {
      session.close();
    } else {
      idle.add(session);
    }
  }

  /**
   * Opens a transaction on a session of its own (snapshot isolation, docs/transactions.md); use it in
   * try-with-resources, and {@link Transaction#commit()} it.
   */
  public Transaction begin() {
    return new Transaction(connect(), false);
  }

  /** Opens a read-only transaction: its statements read one snapshot; writes fail with 25006. */
  public Transaction beginReadOnly() {
    return new Transaction(connect(), true);
  }

  /** A new session, for a sequence of statements sharing session state. Close it when done. */
  public Session connect() {
    checkOpen();
    return new Session(engine.newSession());
  }

  /**
   * Lists a table's metadata files (newest first, each with whether it reads) and says what is wrong with
   * its current one; with {@code to}, {@code "previous"} (the newest readable one before the current) or
   * the location of one of them, points the catalog back to it. For a table whose current metadata file is
   * damaged (docs/recovery.md).
   */
  public TableRepair repairTable(String name, java.util.Optional<String> to) {
    checkOpen();
    return engine.repairTable(Parser.parseName(name).parts(), dev.floe.catalog.Warehouse.DEFAULT_NAMESPACE, to);
  }

  /**
   * Reads every file of every table again and compares it with the checksum recorded when Floe wrote it
   * (data and delete files, manifests, manifest lists, metadata files of every snapshot kept). Queries
   * check each file the first time this process reads it; this checks them all, again, now.
   */
  public java.util.List<Verification> verify() {
    checkOpen();
    return engine.verify();
  }

  /**
   * A new session for SQL from a network client (a server's connection): it reaches this database's
   * tables and never the host: no DuckDB table function but pure ones, no file, no setting
   * (docs/security.md). Needs a database opened {@link FloeConfig.Builder#fenced fenced}.
   *
   * @throws IllegalStateException if the database is not fenced
   */
  public Session connectClient() {
    checkOpen();
    return new Session(engine.newClientSession());
  }

  /** Whether the database was opened {@link FloeConfig#fenced() fenced}, as serving clients needs. */
  public boolean fenced() {
    return engine.fenced();
  }

  /**
   * The warehouse's Iceberg catalog, for a front end that serves it to other engines (the REST catalog):
   * their commits go through the same compare-and-swap, under the same locks, as Floe's own.
   */
  public IcebergCatalog icebergCatalog() {
    checkOpen();
    return new IcebergCatalog(engine.catalogService());
  }

  /**
   * The table a name refers to ({@code t}, {@code schema.t} or {@code floe.schema.t}), as currently
   * committed.
   *
   * @throws FloeException 42P01 if there is no such table
   */
  public TableInfo table(String name) {
    checkOpen();
    Objects.requireNonNull(name, "name");
    QualifiedName q = Parser.parseName(name);
    return engine.tableInfo(q.parts(), dev.floe.catalog.Warehouse.DEFAULT_NAMESPACE)
        .orElseThrow(() -> FloeException.undefinedTable(name));
  }

  /** The warehouse directory. */
  public Path warehouse() {
    return engine.warehouse();
  }

  public boolean readOnly() {
    return engine.readOnly();
  }

  /**
   * Creates a table with a durable tail and returns its log: {@code columns} are SQL column definitions
   * ({@code "ts timestamptz NOT NULL, sym text, px double precision"}), {@code sortBy} the columns sealed
   * files are sorted by (null: unsorted). The table gets a column {@code _offset bigint} at the end.
   *
   * @throws FloeException 42P07 if the table exists
   */
  public Log newLog(String name, String columns, String sortBy, Log.Config config) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(columns, "columns");
    Objects.requireNonNull(config, "config");
    String with = "tail = true, " + config.withClause()
        + (sortBy == null || sortBy.isBlank() ? "" : ", sort_by = " + dev.floe.sql.Lexer.quoteString(sortBy));
    sql("CREATE TABLE " + name + " (" + columns + ") WITH (" + with + ")").close();
    return new Log(this, engine, name, false);
  }

  public Log newLog(String name, String columns, String sortBy) {
    return newLog(name, columns, sortBy, Log.Config.DEFAULT);
  }

  /**
   * The change stream of table {@code name}, which has a primary key (docs/cdc.md): envelopes of
   * {@code format} applied in batches, exactly once.
   *
   * @throws FloeException 42P01 if there is no such table, 55000 if it has no primary key, 0A000 for a
   *     column of a type a stream cannot write
   */
  public Changes changes(String name, Changes.Format format) {
    checkOpen();
    Objects.requireNonNull(name, "name");
    return new Changes(this, engine.changes(Parser.parseName(name).parts(), dev.floe.catalog.Warehouse.DEFAULT_NAMESPACE),
        name, format);
  }

  /** The default offset window of {@link #restoreLog(String, String)}: 2^32 offsets. */
  public static final long RESTORE_WINDOW = 1L << 32;

  /**
   * Rebuilds a log on this warehouse from its published table, after the machine that wrote it was
   * lost: the table whose current metadata file is {@code publishedMetadata} is registered here as
   * {@code name} (its files stay where they are), and its new log starts {@code window} offsets past
   * every offset the table holds or its old log is known to have reached. The rows the lost machine
   * acknowledged but had not published are gone; the window keeps their offsets from being handed out
   * again to other rows, as long as the lost machine served fewer than {@code window} of them.
   *
   * @throws FloeException 42P07 if {@code name} exists, 42P16 if the table has no {@code _offset}
   */
  public Log restoreLog(String name, String publishedMetadata, long window) {
    checkOpen();
    Objects.requireNonNull(publishedMetadata, "publishedMetadata");
    engine.restoreTail(Parser.parseName(name).parts(), dev.floe.catalog.Warehouse.DEFAULT_NAMESPACE,
        publishedMetadata, window);
    return new Log(this, engine, name, false);
  }

  /**
   * Rebuilds a log on this warehouse from the table it published on object storage at
   * {@code location} ({@code s3://bucket/path}), after the machine that wrote it was lost: a new
   * staging table {@code name} reads the published rows from there and goes on publishing to it, its
   * log starting {@code window} offsets past every offset the published table holds. {@code storage}
   * are S3FileIO properties (endpoint, region, path-style access); credentials come from the AWS
   * default chain.
   *
   * @throws FloeException 42P07 if {@code name} exists, 42704 if nothing is published there, 58030 if
   *     object storage cannot be reached
   */
  public Log restoreLog(String name, String location, Map<String, String> storage, long window) {
    checkOpen();
    Objects.requireNonNull(location, "location");
    Objects.requireNonNull(storage, "storage");
    engine.restorePublishedTail(Parser.parseName(name).parts(), dev.floe.catalog.Warehouse.DEFAULT_NAMESPACE,
        location, storage, window);
    return new Log(this, engine, name, false);
  }

  /** {@link #restoreLog(String, String, long)} with the default window ({@value #RESTORE_WINDOW}). */
  public Log restoreLog(String name, String publishedMetadata) {
    return restoreLog(name, publishedMetadata, RESTORE_WINDOW);
  }

  /**
   * Looks for damage in the log of the table {@code name} (docs/recovery.md): a record that fails its
   * checks where the log had acknowledged it, which makes every use of the table fail with XX001. With
   * {@code dropFromDamage}, gives up that record and everything after it: the rest of its segment and
   * the later segments are dropped (the files are kept aside as {@code <name>.damaged-<time>}), and the
   * log goes on past every offset it ever acknowledged. Without it, only reports; a sound log is left
   * alone either way.
   *
   * @throws FloeException 42P01 if there is no such table, 55000 if it has no tail, 25006 to drop on a
   *     read-only warehouse
   */
  public LogRepair repairLog(String name, boolean dropFromDamage) {
    checkOpen();
    Objects.requireNonNull(name, "name");
    return engine.repairTail(Parser.parseName(name).parts(), dev.floe.catalog.Warehouse.DEFAULT_NAMESPACE,
        dropFromDamage);
  }

  /** The log of an existing table with a tail. */
  public Log openLog(String name) {
    return openLog(name, false);
  }

  /**
   * The log of an existing table with a tail; {@code readOnly}: for reading only ({@code sql},
   * {@code scan}, offsets), beside writers of the same log.
   */
  public Log openLog(String name, boolean readOnly) {
    checkOpen();
    Objects.requireNonNull(name, "name");
    return new Log(this, engine, name, readOnly || engine.readOnly());
  }

  /**
   * Starts a thread that advances every open tail (seal by the size and age triggers, then evict) once
   * per {@code every}; the database owns no such thread unless asked. Closing the returned handle stops
   * it after a last pass that seals everything (as at shutdown).
   */
  public AutoCloseable startTailAdvancer(java.time.Duration every) {
    checkOpen();
    if (every.isNegative() || every.isZero()) {
      throw new IllegalArgumentException("the advancer's interval must be positive");
    }
    java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors
        .newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "floe-tail-advancer");
          t.setDaemon(true);
          return t;
        });
    timer.scheduleWithFixedDelay(() -> engine.advanceTails(false), every.toMillis(), every.toMillis(),
        java.util.concurrent.TimeUnit.MILLISECONDS);
    return () -> {
      timer.shutdown();
      try {
        timer.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (!closed) {
        engine.advanceTails(true);
      }
    };
  }

  /** The maintainer this database started, stopped before the engine closes. */
  private volatile dev.floe.exec.Maintainer maintainer;

  /**
   * Starts the background maintainer (docs/maintenance.md): once per {@code every}, each table's
   * compaction, expiry, manifest rewrite and orphan removal as its policy asks, yielding to a busy
   * machine. The database runs none unless asked ({@code floe serve} does). Closing the returned handle
   * stops it after the step it is taking.
   */
  public AutoCloseable startMaintainer(java.time.Duration every) {
    checkOpen();
    if (readOnly()) {
      throw new IllegalStateException("a read-only database cannot maintain its tables");
    }
    dev.floe.exec.Maintainer m = engine.startMaintainer(every);
    maintainer = m;
    return () -> {
      m.close();
      engine.maintainerStopped(m);
      if (maintainer == m) {
        maintainer = null;
      }
    };
  }

  /**
   * The background maintainer's recent steps, oldest first (empty when it is not running); SQL reads the
   * same as {@code floe_maintenance_runs}.
   */
  public java.util.List<MaintenanceRun> maintenanceRuns() {
    return engine.maintenanceRuns();
  }

  /**
   * Where the catalogs' roles come from ({@code pg_roles}, {@code pg_user}, psql's {@code \du}): a front end
   * that signs users in gives the names it knows (the server: {@code floe user}'s): each a login, beside the
   * built-in superuser {@code floe} (docs/activity.md: who may signal whom).
   */
  public void setRoles(java.util.function.Supplier<java.util.List<String>> names) {
    engine.setRoles(names);
  }

  /**
   * A new backend process id, never handed out before in this process, for a front end's connection
   * (its BackendKeyData and {@code pg_backend_pid()}): give it to the connection's sessions with
   * {@link Session#setBackendPid}. Embedded sessions get one of their own.
   */
  public int newBackendPid() {
    return engine.backends().newPid();
  }

  /**
   * Takes the maintenance steps of the named tables ({@code t}, {@code schema.t}; none: every table) now,
   * by their policies, or with {@code dryRun} says what they would do, reporting each step to
   * {@code progress} as it ends ({@code floe maintain}).
   *
   * @throws FloeException 42P01 for a name that is no table
   */
  public void maintain(java.util.List<String> tables, boolean dryRun,
      java.util.function.Consumer<MaintenanceRun> progress) {
    checkOpen();
    if (readOnly() && !dryRun) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION, "cannot maintain tables in a read-only database");
    }
    java.util.List<java.util.List<String>> names = new java.util.ArrayList<>();
    for (String t : tables) {
      names.add(Parser.parseName(t).parts());
    }
    engine.maintainNow(names, dev.floe.catalog.Warehouse.DEFAULT_NAMESPACE, dryRun, progress);
  }

  void checkOpen() {
    if (closed) {
      throw new IllegalStateException("database is closed");
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    dev.floe.exec.Maintainer m = maintainer;
    if (m != null) {
      m.close(); // before the engine it works on
    }
    closed = true;
    SessionContext s;
    while ((s = idle.poll()) != null) {
      s.close();
    }
    engine.close();
  }

  /** Returns the session to the pool when the result is closed. */
  private static final class ReleasingResult implements Result {
    private final Result inner;
    private final Runnable release;
    private boolean released;

    ReleasingResult(Result inner, Runnable release) {
      this.inner = inner;
      this.release = release;
    }

    @Override
    public java.util.List<Column> columns() {
      return inner.columns();
    }

    @Override
    public boolean hasRows() {
      return true;
    }

    @Override
    public long rowCount() {
      return inner.rowCount();
    }

    @Override
    public String commandTag() {
      return inner.commandTag();
    }

    @Override
    public org.apache.arrow.vector.ipc.ArrowReader arrow() {
      return inner.arrow();
    }

    @Override
    public java.util.Iterator<Row> iterator() {
      return inner.iterator();
    }

    @Override
    public java.util.Optional<ColumnOrigin> origin(int column) {
      return inner.origin(column);
    }

    @Override
    public void close() {
      inner.close();
      if (!released) {
        released = true;
        release.run();
      }
    }
  }
}
