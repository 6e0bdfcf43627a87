package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.catalog.FloeCatalog;
import dev.floe.catalog.Warehouse;
import dev.floe.sql.Ast;
import dev.floe.sql.Lexer;
import dev.floe.sql.Parser;
import dev.floe.sql.QueryBinder;
import dev.floe.sql.SqlScript;
import dev.floe.write.Inserter;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ValidationException;

/**
 * One session: a DuckDB connection with its settings, the current schema, and the statement running on
 * it. Used by one thread at a time.
 */
public final class SessionContext implements AutoCloseable {
  private final Engine engine;
  private final Connection duck;
  private final DuckSql sql;
  private final PreparedStatement serialize;
  /** The DuckDB statements the running statement made, to interrupt on cancel. */
  private final CancellableConnection statements;
  /** The cancel lock: the running statement, its cancel and commit point, the session's termination. */
  private final SessionSignals signals;

  /** SQL from a network client: DuckDB's table functions and file scans are refused (sql.ClientAccess). */
  private final boolean client;
  /** A statement Floe composed itself runs (COPY FROM STDIN reading its staged file): not checked as a client's. */
  private boolean floeSql;
  private String currentSchema = Warehouse.DEFAULT_NAMESPACE;
  private volatile QueryResult openResult;
  private Consumer<dev.floe.Notice> notices = n -> { };
  /** The session's transaction blocks and status. */
  private final TransactionControl blocks;

  private static final java.util.concurrent.atomic.AtomicLong IDS = new java.util.concurrent.atomic.AtomicLong();
  /** This session's number, for state kept per session outside DuckDB (currval, lastval). */
  private final long id = IDS.incrementAndGet();

  /** This session as a backend (pg_stat_activity): its pid, who, from where, its state and query. */
  private final Backends.Activity activity;
  /** How deep statements nest (a statement Floe composed runs inside the user's). */
  private int depth;
  private boolean closed;

  SessionContext(Engine engine, Connection duck, boolean client) throws SQLException {
    this.engine = engine;
    this.activity = new Backends.Activity(engine.backends().newPid());
    this.statements = new CancellableConnection(duck);
    this.signals = new SessionSignals(statements);
    this.duck = statements.connection();
    this.settings = new SessionSettings(this.duck);
    this.sql = new DuckSql(duck);
    this.client = client;
    this.blocks = new TransactionControl(engine.tables(), n -> notices.accept(n),
        name -> settings.get(name), () -> activity.pid(), () -> temporaryTables.blockEnded());
    try (Statement st = duck.createStatement()) {
      // DuckDB settings are the engine's (Engine.startDuckDb); a session has only variables
      st.execute("SET VARIABLE floe_current_schema = " + Lexer.quoteString(currentSchema));
      st.execute("SET VARIABLE " + Sequences.SESSION_VARIABLE + " = CAST(" + id + " AS BIGINT)");
      st.execute("SET VARIABLE floe_backend_pid = '" + activity.pid() + "'");
    }
    this.serialize = duck.prepareStatement("SELECT json_serialize_sql(?::VARCHAR)");
    engine.backends().register(this);
  }

  Backends.Activity activity() {
    return activity;
  }

  /** The backend pid {@code pg_backend_pid()} reports and holds are recorded under. */
  public int backendPid() {
    return activity.pid();
  }

  /**
   * Gives this session backend pid {@code pid}: a front end's connection's (its sessions share it, the
   * first given it is the connection's own).
   */
  public void setBackendPid(int pid) {
    if (pid != activity.pid()) {
      engine.backends().move(this, pid);
      setVariable("floe_backend_pid", Integer.toString(pid));
    }
  }

  /** The user the front end logged in as (current_user, pg_stat_activity, who may signal whom). */
  public void setUser(String user) {
    activity.user = user;
    setVariable("floe_user", user);
  }

  /** The database name the client connected to (current_database(), pg_stat_activity.datname). */
  public void setDatabaseName(String name) {
    activity.database = name;
    setVariable("floe_database", name);
  }

  /** Whether the session's user is the superuser ({@link Backends#superuser}: the warehouse's owner). */
  public boolean superuser() {
    return Backends.superuser(activity.user);
  }

  /** Where the client connects from (pg_stat_activity.client_addr, client_port); null for none. */
  public void setClient(String address, Integer port) {
    activity.clientAddress = address;
    activity.clientPort = port;
  }

  /** What the front end does when {@code pg_terminate_backend} ends this session (closes its connection). */
  public void onTerminate(Runnable action) {
    activity.onTerminate = action;
  }

  /** Whether this session runs a network client's SQL ({@link Engine#newClientSession()}). */
  boolean client() {
    return client;
  }

  Connection duck() {
    return duck;
  }

  Path scratch() {
    return engine.scratch();
  }

  public String currentSchema() {
    return currentSchema;
  }

  public void setCurrentSchema(String schema) {
    if (schema.equals(currentSchema)) {
      return; // the DuckDB variable already holds it
    }
    this.currentSchema = schema;
    setVariable("floe_current_schema", schema);
  }

  private final SessionSettings settings;

  /** Run-time parameters for current_setting() (null: reset), and the TimeZone among them. */
  public void setSettings(java.util.Map<String, String> values) {
    settings.set(values);
    activity.applicationName = java.util.Objects.requireNonNullElse(settings.get("application_name"), "");
  }

  java.time.ZoneId timeZone() {
    return settings.timeZone();
  }

  /**
   * Sets a DuckDB variable of this session's connection (the catalog functions read the session's
   * schema, user and settings from them).
   */
  public void setVariable(String name, String value) {
    settings.setVariable(name, value);
  }

  /** Whether key lookups may read their rows in the JVM ({@link SessionSettings#pointReads}). */
  boolean pointReads() {
    return settings.pointReads();
  }

  /** Where NOTICE and WARNING messages (e.g. "relation already exists, skipping") go. */
  public void onNotice(Consumer<dev.floe.Notice> sink) {
    this.notices = sink;
  }

  void notice(String message) {
    notices.accept(dev.floe.Notice.notice(message));
  }

  /** Sends a notice of any severity (INFO of VACUUM VERBOSE, a WARNING). */
  void notice(dev.floe.Notice notice) {
    notices.accept(notice);
  }

  /**
   * Executes one statement (a trailing semicolon is allowed).
   *
   * @throws FloeException with the statement's SQLSTATE; nothing the statement did is visible then
   */
  public Result execute(String sql) {
    List<SqlScript.Part> parts = SqlScript.splitOne(sql);
    if (parts.isEmpty()) {
      closeOpenResult();
      return new CommandResult("EMPTY", 0);
    }
    if (parts.size() > 1) {
      throw FloeException.syntax("cannot run several statements at once; run them one at a time",
          parts.get(1).offset() + 1);
    }
    return execute(parts.get(0), null);
  }

  /**
   * Executes one statement the caller parsed already ({@link dev.floe.Statement}).
   *
   * @param parsed the parse of {@code text}
   */
  public Result execute(String text, Ast.Statement parsed) {
    return execute(new SqlScript.Part(text, 0), parsed);
  }

  private Result execute(SqlScript.Part part, Ast.Statement parsed) {
    boolean outermost = depth == 0;
    if (outermost) {
      if (!signals.start(!floeSql)) {
        endTerminated();
        throw FloeException.terminated();
      }
      activity.started(part.text().strip(), blocks.open() != null);
    }
    depth++;
    boolean ok = false;
    try {
      Result r = executeRunning(part, parsed);
      ok = true;
      return r;
    } catch (FloeException e) {
      throw outermost && signals.terminated() ? FloeException.terminated() : e;
    } finally {
      depth--;
      if (outermost && statementEnded() && ok) {
        // terminated while it ran, and it got to its end: the session ends all the same, as in PostgreSQL
        throw FloeException.terminated();
      }
    }
  }

  /** The outermost statement ended: the session is idle again, or, terminated, ends. Whether it was terminated. */
  private boolean statementEnded() {
    if (signals.end()) {
      endTerminated();
      return true;
    }
    activity.idle(blocks.state());
    for (dev.floe.Notice n; (n = activity.warnings.poll()) != null; ) {
      notices.accept(n); // a signal's warning, on this session's thread
    }
    return false;
  }

  private Result executeRunning(SqlScript.Part part, Ast.Statement parsed) {
    closeOpenResult();
    if (!floeSql) {
      signals.fresh();
    }
    // The statement's holds on what it reads: the first taken before it reads any table, then one per
    // time-travel read. They end with the statement: DuckDB has read every file it needs when its query
    // returns (its results are materialized), so a result left open holds nothing back.
    List<ReaderPins.Hold> outer = statementHolds;
    List<ReaderPins.Hold> mine = new java.util.ArrayList<>();
    mine.add(engine.tables().readerPins().hold("statement", activity.pid()));
    statementHolds = mine;
    try {
      return dev.floe.catalog.CommitGate.guard(signals::passCommitPoint, () -> dispatchMapped(part, parsed));
    } finally {
      statementHolds = outer;
      releasePins();
      release(mine);
    }
  }

  /**
   * {@code pg_terminate_backend}, from any thread: the running statement is cancelled and fails with 57P01;
   * what the session holds is released now when no statement runs, else when its statement ends; the
   * session's thread then rolls back its block and closes it ({@link #endTerminated}).
   */
  void terminate() {
    if (signals.terminate()) {
      engine.tables().readerPins().releaseHeldBy(activity.pid()); // nothing of it reads any more
    }
  }

  /** Whether {@code pg_terminate_backend} ended this session. */
  public boolean terminated() {
    return signals.terminated();
  }

  /** On the session's own thread: a terminated session rolls back its block, lets go of its holds and closes. */
  private void endTerminated() {
    try {
      close();
    } finally {
      engine.tables().readerPins().releaseHeldBy(activity.pid());
    }
  }

  /** Fails with 57P01 once the session was terminated (the API's calls that are no statement). */
  private void checkNotTerminated() {
    if (signals.terminated()) {
      endTerminated();
      throw FloeException.terminated();
    }
  }

  /** Where the running statement's holds go ({@link Relations} adds time-travel reads' holds). */
  private List<ReaderPins.Hold> statementHolds = new java.util.ArrayList<>();

  /** The running statement's own holds (an expiry it runs does not wait for itself). */
  java.util.Set<ReaderPins.Hold> statementHolds() {
    return java.util.Set.copyOf(statementHolds);
  }

  private static void release(List<ReaderPins.Hold> holds) {
    holds.forEach(ReaderPins.Hold::close);
    holds.clear();
  }

  private void closeOpenResult() {
    if (openResult != null) {
      openResult.close();
    }
  }

  /**
   * Unsealed tail rows the statement read stay in the memtable until here: its query has started, and
   * DuckDB shows it the rows it began with to its end.
   */
  private final List<dev.floe.tail.Pin> pins = new java.util.ArrayList<>();

  private void releasePins() {
    for (dev.floe.tail.Pin p : pins) {
      p.close();
    }
    pins.clear();
  }

  private Result dispatchMapped(SqlScript.Part part, Ast.Statement parsed) {
    try {
      return dispatch(part.text(), parsed);
    } catch (Inserter.WriteFailure e) {
      throw DuckErrors.map(e.sqlException(), o -> 0);
    } catch (RuntimeException e) {
      java.util.Optional<FloeException> full = dev.floe.DiskFull.of(e);
      if (full.isPresent()) {
        throw full.get(); // a full disk, wherever the write was (DuckDB, Iceberg, SQLite, a log)
      }
      java.util.Optional<FloeException> store = dev.floe.catalog.S3.unreachable(e);
      if (store.isPresent()) {
        throw store.get(); // object storage that did not answer, wherever Iceberg or Floe asked it
      }
      if (!(e instanceof FloeException)) {
        // Every failure reaches the caller with a SQLSTATE; this one is a bug in Floe.
        LOG.error("internal error executing: {}", part.text(), e);
        throw new FloeException(SqlState.INTERNAL_ERROR, "internal error: " + e, e);
      }
      FloeException f = StatementErrors.refine((FloeException) e, part.text(), this::columnsOf);
      throw f.movedTo(f.position() + part.offset());
    }
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SessionContext.class);

  private Result dispatch(String sql, Ast.Statement parsed) {
    // the files this statement registers and does not commit are dropped when it ends
    try (var files = dev.floe.catalog.Durable.scope()) {
      return dispatchInScope(sql, parsed);
    }
  }

  private Result dispatchInScope(String sql, Ast.Statement parsed) {
    Ast.Statement statement = parsed != null ? parsed : Parser.parse(sql);
    if (statement.kind() == dev.floe.StatementKind.TRANSACTION) {
      return blocks.run((Ast.TransactionControl) statement);
    }
    blocks.checkNotFailed();
    try {
      if (!statement.kind().readOnly() && blocks.readOnlyNow()) {
        throw FloeException.readOnlyTransaction(Ast.commandName(sql));
      }
      return dispatchChecked(statement);
    } catch (RuntimeException e) {
      blocks.fail(); // as in PostgreSQL: the block fails; ROLLBACK (TO SAVEPOINT) recovers
      throw e;
    }
  }

  private Result dispatchChecked(Ast.Statement statement) {
    if (!statement.kind().readOnly()) {
      engine.checkWritable();
      ChangeStateGuard.check(statement, this, engine.tables());
    }
    Transaction block = blocks.open();
    if (statement.kind() == dev.floe.StatementKind.DDL && block != null) {
      // DDL takes effect at once: it is not part of the block. On a table the block changed it would
      // have to commit beside changes the block may still roll back, so that is refused.
      for (TableIdentifier id : StatementExecutor.ddlTables(statement, engine.tables(), currentSchema)) {
        if (block.wrote(id)) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot change table \"" + id.name()
              + "\" in the transaction block that changed its rows", null,
              "COMMIT or ROLLBACK first: Floe runs DDL outside transaction blocks.", 0, null);
        }
      }
      try {
        return dispatchStatement(statement);
      } finally {
        block.repin(); // the block sees the DDL: tables it has not written are read as they are now
      }
    }
    return dispatchStatement(statement);
  }

  /** Which executor runs each kind of statement (transaction control is {@link TransactionControl}'s). */
  private final StatementExecutor executor = new StatementExecutor(this);
  /** The session's CREATE TEMP TABLE tables, in its DuckDB connection. */
  private final TemporaryTables temporaryTables = new TemporaryTables(this);

  TemporaryTables temporaryTables() {
    return temporaryTables;
  }

  private Result dispatchStatement(Ast.Statement statement) {
    try {
      return statement.accept(executor);
    } catch (FloeCatalog.ReadOnlyException e) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION, "cannot write: " + e.getMessage(), e);
    } catch (FloeCatalog.CatalogException e) {
      throw new FloeException(SqlState.IO_ERROR, e.getMessage(), e);
    } catch (CommitFailedException e) {
      throw FloeException.serializationFailure(e.getMessage(), e);
    } catch (NoSuchNamespaceException e) {
      throw new FloeException(SqlState.INVALID_SCHEMA_NAME, e.getMessage(), e);
    } catch (NoSuchTableException e) {
      throw new FloeException(SqlState.UNDEFINED_TABLE, e.getMessage(), e);
    } catch (AlreadyExistsException e) {
      throw new FloeException(SqlState.DUPLICATE_TABLE, e.getMessage(), e);
    } catch (NotFoundException e) {
      throw new FloeException(SqlState.IO_ERROR, "a file of the table is missing: " + e.getMessage(), e);
    } catch (ValidationException | IllegalArgumentException e) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, e.getMessage(), e);
    } catch (java.io.UncheckedIOException e) {
      throw new FloeException(SqlState.IO_ERROR, e.getMessage(), e);
    }
  }

  /** Runs a row-level statement; its temporary tables go when it fails (or, on success, with its result). */
  Result mutate(java.util.function.Function<Mutations, Result> statement) {
    Mutations m = new Mutations(this, tables());
    try {
      return statement.apply(m);
    } catch (RuntimeException e) {
      m.cleanup();
      throw e;
    }
  }

  Result query(Ast.Query q) {
    Relations relations = relations();
    java.util.Optional<Result> point = PointQueries.run(this, q.text(), relations);
    if (point.isPresent()) {
      return point.get();
    }
    QueryBinder.Bound bound = bind(q.text(), offset -> q.offset() + offset + 1, relations);
    QueryResult.Named named = QueryResult.withColumnNames(bound);
    Result r = run(named.sql(), named.positions());
    return r instanceof QueryResult qr ? qr.withOrigins(bound.origins(), o -> engine.pgCatalog().origin(o)) : r;
  }

  /**
   * The types of a statement's {@code $n} parameters as their context decides them, where it does: in a
   * query, what DuckDB infers ({@code id = $1} is the type of {@code id}); in {@code INSERT ... VALUES},
   * the type of the column a lone parameter goes into. Null where unknown.
   */
  public List<dev.floe.SqlType> parameterTypes(String sql, int count) {
    checkNotTerminated();
    try {
      return ParameterTypes.infer(this, sql, count);
    } finally {
      releasePins();
      release(statementHolds); // a time-travel read's, when no statement runs
    }
  }

  /** Binds a query to the current snapshots of the Floe tables it names. */
  QueryBinder.Bound bind(Ast.Query q) {
    return bind(q.text(), offset -> q.offset() + offset + 1, relations());
  }

  /**
   * The table resolution of one statement: each table is read at one snapshot for the whole statement.
   * Time-travel targets may themselves query tables, e.g. (SELECT max(committed_at) FROM "t$snapshots").
   */
  Relations relations() {
    StagedRows staged = new StagedRows(duck); // the statement's staged relations, numbered in one sequence
    Relations[] relations = new Relations[1];
    relations[0] = new Relations(tables(), engine.planner(), engine.files(), currentSchema, expression -> {
      QueryBinder.Bound inner = QueryBinder.bind("SELECT " + expression, 0, this::serializeSql, relations[0]);
      return sql.evaluate(inner.sql().substring("SELECT ".length()));
    }, parts -> systemRelation(parts, staged), (id, r) -> new Views(this, tables()).relationSql(id, r),
        engine.tails(), pins::add,
        h -> statementHolds.add(h.heldBy(activity.pid())), client && !floeSql, staged, pointReads());
    relations[0].timeZone(settings.timeZone());
    return relations[0];
  }

  /** The columns of the table {@code name} resolves to in this session, for errors; empty if none. */
  private java.util.Optional<List<dev.floe.Column>> columnsOf(List<String> name) {
    try {
      Tables t = tables();
      return t.identifier(name, currentSchema).flatMap(t::live)
          .map(table -> dev.floe.types.TypeMapping.columns(table.schema(), table.properties()));
    } catch (RuntimeException e) {
      return java.util.Optional.empty(); // only an error's hint depends on it
    }
  }

  /** SQL for a system relation the statement names: a catalog, or a live view staged now; empty for others. */
  private java.util.Optional<String> systemRelation(List<String> parts, StagedRows staged) {
    java.util.Optional<String> temporary = temporaryTables.named(parts); // first in the search path, as pg_temp
    if (temporary.isPresent()) {
      return temporary;
    }
    java.util.Optional<String> name = PgCatalog.systemName(parts);
    if (name.isEmpty()) {
      return name;
    }
    java.util.Optional<String> live = ActivityViews.relation(name.get(), engine, staged);
    return live.isPresent() ? live : engine.pgCatalog().relation(parts);
  }

  /** Binds SQL composed for a statement; {@code positions} maps its offsets to the user's statement. */
  QueryBinder.Bound bind(String text, IntUnaryOperator positions, Relations relations) {
    QueryBinder.Bound bound = QueryBinder.bind(text, positions, this::serializeSql, relations);
    if (bound.sql().contains(dev.floe.sql.SystemFunctions.DB)) {
      engine.pgCatalog().refresh(); // the query calls catalog functions, which read the catalogs
    }
    return bound;
  }

  /** The tables as this session's statements see them: through its transaction block, if one is open. */
  Tables tables() {
    Transaction t = blocks.open();
    return t == null ? engine.tables() : engine.tables().in(t);
  }

  java.util.Optional<Transaction> transaction() {
    return java.util.Optional.ofNullable(blocks.open());
  }

  /**
   * Runs this session's statements in {@code owner}'s transaction block (a connection's helper sessions:
   * cursors, statements run while a portal is suspended); only the owner commits or rolls it back.
   */
  public void join(SessionContext owner) {
    blocks.join(owner.blocks);
  }

  // ------------------------------------------------------------------ transaction blocks (TransactionControl)

  public boolean inTransaction() {
    return blocks.open() != null;
  }

  public dev.floe.TransactionState transactionState() {
    return blocks.state();
  }

  /** A statement the front end ran for this session failed: an open block fails, as with any statement. */
  public void failTransaction() {
    blocks.fail();
  }

  public void begin(boolean readOnly) {
    checkNotTerminated();
    blocks.begin(readOnly, null);
    activity.idle(blocks.state());
  }

  /** Opens a block with the session's default access mode (default_transaction_read_only). */
  public void begin() {
    checkNotTerminated();
    blocks.beginDefault();
    activity.idle(blocks.state());
  }

  public void commit() {
    checkNotTerminated();
    try {
      blocks.commit();
    } finally {
      activity.idle(blocks.state());
    }
  }

  public void rollback() {
    checkNotTerminated();
    try {
      blocks.rollback();
    } finally {
      activity.idle(blocks.state());
    }
  }

  public void savepoint(String name) {
    blocks.savepoint(name);
  }

  public void rollbackToSavepoint(String name) {
    blocks.rollbackTo(name);
  }

  public void releaseSavepoint(String name) {
    blocks.release(name);
  }

  /** Starts a COPY FROM STDIN into {@code table} (see {@link dev.floe.CopyIn}). */
  public CopyFrom copyTarget(String table, List<String> columns) {
    dev.floe.sql.QualifiedName name = Parser.parseName(table);
    engine.tables().identifier(name.parts(), currentSchema).filter(ChangeStateGuard::isState).ifPresent(id -> {
      throw ChangeStateGuard.denied(id, ChangeStateGuard.targetOf(engine.tables(), id), 0);
    });
    return new CopyFrom(this, table, columns);
  }

  /** How deep in statements run by statements (a foreign key's action) the session is; 0 at the top. */
  private int nesting;

  int nesting() {
    return nesting;
  }

  /** Runs a statement within the one that runs now: its temporary tables get names of their own. */
  <T> T nested(java.util.function.Supplier<T> statement) {
    nesting++;
    try {
      return statement.get();
    } finally {
      nesting--;
    }
  }

  /** Executes a statement Floe composed (not checked as a client's, see {@link #floeSql}). */
  Result executeAsFloe(String sql) {
    boolean outer = floeSql;
    floeSql = true;
    try {
      return execute(sql);
    } finally {
      floeSql = outer;
    }
  }

  public java.util.Optional<dev.floe.TableInfo> tableInfo(String name) {
    return engine.tableInfo(Parser.parseName(name).parts(), currentSchema);
  }

  Engine engine() {
    return engine;
  }

  /** The session's DuckDB connection, for SQL that is not a streamed result. */
  DuckSql sql() {
    return sql;
  }

  private String serializeSql(String text) {
    try {
      serialize.setString(1, text);
      try (ResultSet rs = serialize.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    } catch (SQLException e) {
      throw DuckErrors.map(e, o -> 0);
    }
  }

  /** Runs DuckDB SQL and streams its rows; {@code afterClose} runs when the result is closed. */
  QueryResult run(String sql, IntUnaryOperator positions, Runnable afterClose) {
    QueryResult r = (QueryResult) run(sql, positions);
    QueryResult wrapped = r;
    openAfterClose = afterClose;
    return wrapped;
  }

  private Runnable openAfterClose;

  /** Runs DuckDB SQL and streams its rows. */
  Result run(String sql, IntUnaryOperator positions) {
    if (LOG.isDebugEnabled()) {
      LOG.debug("DuckDB SQL: {}", sql);
    }
    Statement st = null;
    try {
      st = duck.createStatement();
      ResultSet rs = st.executeQuery(sql);
      if (rs.getMetaData().getColumnCount() > MAX_RESULT_COLUMNS) {
        throw new FloeException(SqlState.TOO_MANY_COLUMNS, "target lists can have at most " + MAX_RESULT_COLUMNS
            + " entries");
      }
      QueryResult result = new QueryResult(st, rs, engine.allocator(), positions, () -> {
        openResult = null;
        Runnable after = openAfterClose;
        openAfterClose = null;
        if (after != null) {
          after.run();
        }
      });
      openResult = result;
      return result;
    } catch (SQLException e) {
      closeQuietly(st);
      throw DuckErrors.map(e, positions, sql, duck);
    } catch (FloeException e) {
      closeQuietly(st);
      throw e;
    }
  }

  /** PostgreSQL's limit on a result's columns (its RowDescription counts them in 16 bits). */
  static final int MAX_RESULT_COLUMNS = QueryBinder.MAX_TARGETS;
  /** PostgreSQL's limit on a table's columns. */
  static final int MAX_TABLE_COLUMNS = 1600;

  /** Refuses a table of more columns than PostgreSQL allows (54011). */
  static void checkTableColumns(int count) {
    if (count > MAX_TABLE_COLUMNS) {
      throw new FloeException(SqlState.TOO_MANY_COLUMNS, "tables can have at most " + MAX_TABLE_COLUMNS + " columns");
    }
  }

  /** Checks of the expressions Floe evaluates once (DEFAULT values): {@link ConstantExpressions}. */
  ConstantExpressions constants() {
    return new ConstantExpressions(this::serializeSql);
  }

  /** Cancels the running statement, from any thread ({@link SessionSignals#cancel}). */
  public void cancel() {
    signals.cancel();
  }

  /** Whether DuckDB keeps this connection's query progress ({@link #queryProgress}). */
  private volatile boolean progressKept;

  /**
   * The running query's progress in percent, as DuckDB estimates it, or -1 when nothing runs or it cannot tell.
   * The first call turns DuckDB's estimate on for this connection (a fenced engine's locked configuration refuses
   * it: -1 always); later calls may come from any thread.
   */
  public double queryProgress() {
    try {
      if (!progressKept) {
        progressKept = true;
        try (Statement st = duck.createStatement()) {
          st.execute("SET enable_progress_bar = true");
          st.execute("SET enable_progress_bar_print = false");
        }
        return -1;
      }
      return serialize.unwrap(org.duckdb.DuckDBPreparedStatement.class).getQueryProgress().getPercentage();
    } catch (SQLException e) {
      return -1;
    }
  }

  private static void closeQuietly(Statement st) {
    if (st != null) {
      try {
        st.close();
      } catch (SQLException ignored) {
        // nothing more to release
      }
    }
  }

  /** Whose currval and lastval this session sees: its own, or a client connection's (shared by its sessions). */
  private long sequenceScope = id;

  /**
   * Makes this session share currval and lastval with every other session given the same (negative)
   * scope: the engine sessions of one client connection. The connection forgets them
   * ({@link #discardSequences}) when it ends.
   */
  public void setSequenceScope(long scope) {
    sequenceScope = scope;
    setVariable(Sequences.SESSION_VARIABLE, Long.toString(scope));
  }

  /** Forgets what this session's sequence functions remember (currval, lastval): DISCARD ALL/SEQUENCES. */
  public void discardSequences() {
    engine.sequences().forget(sequenceScope);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    engine.backends().unregister(this);
    if (openResult != null) {
      openResult.close();
    }
    blocks.abandon();
    if (sequenceScope == id) {
      discardSequences();
    }
    try {
      serialize.close();
      duck.close();
    } catch (SQLException ignored) {
      // the instance closes its connections on shutdown
    }
  }
}
