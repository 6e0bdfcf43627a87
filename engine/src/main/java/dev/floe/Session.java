package dev.floe;

import dev.floe.exec.SessionContext;
import java.util.function.Consumer;

/**
 * A connection-like session: statements run one at a time, in order, with session state (the current
 * schema). Not thread-safe; use one session per thread. {@link #cancel()} may be called from any thread.
 */
public final class Session implements AutoCloseable {
  private final SessionContext context;

  Session(SessionContext context) {
    this.context = context;
  }

  /**
   * Executes one SQL statement.
   *
   * <p>Durability: when a writing statement (INSERT, CREATE TABLE AS, DDL) returns, its Iceberg commit
   * is durable (data and metadata files fsynced, catalog pointer swapped in a synchronous SQLite
   * transaction) and visible to every later statement in any session or process. A statement that
   * throws changed nothing.
   *
   * <p>Visibility: a query reads the latest committed snapshot of each table as of the moment it
   * starts, consistently for all its references to that table.
   *
   * @throws FloeException carrying a PostgreSQL SQLSTATE
   */
  public Result sql(String sql) {
    return context.execute(sql);
  }

  /**
   * Executes a statement parsed by {@link Statement#parse} or {@link Statement#split} (not parsed again), as
   * {@link #sql(String)} does. A front end runs the {@link StatementKind#SESSION} and {@link StatementKind#COPY}
   * kinds itself.
   *
   * @throws FloeException carrying a PostgreSQL SQLSTATE
   */
  public Result sql(Statement statement) {
    statement.check();
    return statement.ast().map(a -> context.execute(statement.text(), a))
        .orElseGet(() -> context.execute(statement.text()));
  }

  /**
   * Opens a transaction block: snapshot isolation (PostgreSQL's REPEATABLE READ), its snapshot taken
   * at its first statement; its changes are its own until {@link #commit()}, which applies them to
   * every table at once or fails with SQLSTATE 40001 when a concurrent commit conflicts. DDL runs
   * outside the block (docs/transactions.md). It is read-write unless the session's
   * {@code default_transaction_read_only} setting ({@link #setSettings}) is on.
   */
  public void begin() {
    context.begin();
  }

  /** Opens a read-only transaction block: its reads share one snapshot; writing fails with 25006. */
  public void beginReadOnly() {
    context.begin(true);
  }

  public boolean inTransaction() {
    return context.inTransaction();
  }

  /** Idle, in a block or in a failed block, with the block's isolation level and access mode. */
  public TransactionState transactionState() {
    return context.transactionState();
  }

  /**
   * Tells the session that a statement a front end ran on its behalf (SET, FETCH, a COPY's data) failed: the
   * open transaction block fails, as it does when any of its statements fails.
   */
  public void failTransaction() {
    context.failTransaction();
  }

  /**
   * Runs this session's statements in {@code owner}'s open transaction block, until the owner ends it
   * (a server connection's helper sessions); only the owner commits or rolls back.
   */
  public void joinTransaction(Session owner) {
    context.join(owner.context);
  }

  /** Commits the open transaction block; it ends either way (SQLSTATE 40001: nothing was applied). */
  public void commit() {
    context.commit();
  }

  /** Ends the open transaction block, undoing its changes. */
  public void rollback() {
    context.rollback();
  }

  public void savepoint(String name) {
    context.savepoint(name);
  }

  /** Undoes what the block did since the savepoint, which stays. */
  public void rollbackToSavepoint(String name) {
    context.rollbackToSavepoint(name);
  }

  public void releaseSavepoint(String name) {
    context.releaseSavepoint(name);
  }

  /**
   * The table a name refers to from this session ({@code t} in the current schema, {@code schema.t}),
   * as currently committed; empty if there is none.
   */
  public java.util.Optional<TableInfo> table(String name) {
    return context.tableInfo(name);
  }

  /**
   * Starts a {@code COPY table [(columns)] FROM STDIN} (parsed by {@link Copy#parse}): checks the table and
   * columns, and takes the client's bytes in the COPY's format (see {@link CopyIn}).
   */
  public CopyIn copyIn(Copy copy) {
    if (!copy.in() || copy.table() == null) {
      throw new IllegalArgumentException("not a COPY FROM STDIN: " + copy);
    }
    return new CopyIn(context.copyTarget(copy.table(), copy.columns()), copy);
  }

  /**
   * Starts {@code COPY table [(columns)] FROM STDIN} in plain CSV ({@link Copy#csvFrom}).
   *
   * @param table the table's name as written ({@code t}, {@code s."T"})
   * @param columns the columns as written, or empty for all
   */
  public CopyIn copyIn(String table, java.util.List<String> columns) {
    return copyIn(Copy.csvFrom(table, columns));
  }

  /** The schema unqualified table names resolve in ({@code public} by default). */
  public String currentSchema() {
    return context.currentSchema();
  }

  public void setCurrentSchema(String schema) {
    context.setCurrentSchema(schema);
  }

  /**
   * The user name the catalog functions report ({@code current_user}, {@code session_user}) and
   * {@code pg_stat_activity} shows; who may cancel or terminate whose backend follows from it (only the
   * warehouse's owner, {@code floe}, is a superuser; embedded sessions run as it).
   */
  public void setUser(String user) {
    context.setUser(user);
  }

  /** Run-time parameters' values as {@code current_setting(name)} reports them (a null value: unset). */
  public void setSettings(java.util.Map<String, String> values) {
    context.setSettings(values);
  }

  /** The database name {@code current_database()} reports (the one a client connected to). */
  public void setDatabaseName(String name) {
    context.setDatabaseName(name);
  }

  /**
   * The number {@code pg_backend_pid()} reports and {@code pg_stat_activity} shows (the protocol's process
   * id for cancel requests), from {@link Database#newBackendPid()}. Sessions given the same pid serve one
   * client connection: the first is the connection's own, the others its helpers; they share {@code currval}
   * and {@code lastval}, which the connection forgets with {@link #discardSequences()} when it ends, and
   * {@code pg_cancel_backend} and {@code pg_terminate_backend} reach them all. Without it a session has a
   * pid of its own.
   */
  public void setBackendPid(int pid) {
    context.setBackendPid(pid);
    context.setSequenceScope(-1 - Integer.toUnsignedLong(pid));
  }

  /**
   * Whether the session's user is a superuser, as {@code is_superuser} reports it: only the warehouse's
   * owner {@code floe} (and embedded sessions, which run as it) is; it may signal any backend.
   */
  public boolean superuser() {
    return context.superuser();
  }

  /** This session's backend pid ({@code pg_backend_pid()}). */
  public int backendPid() {
    return context.backendPid();
  }

  /**
   * Where the session's client connects from, as {@code pg_stat_activity} shows it ({@code client_addr},
   * {@code client_port}); null for none (a local socket, an embedded caller).
   */
  public void setClient(String address, Integer port) {
    context.setClient(address, port);
  }

  /**
   * What a front end does when {@code pg_terminate_backend} ends this session, called on the terminating
   * thread: the session's statement, if one runs, fails with 57P01, and so does every later call; the
   * front end closes its connection (PostgreSQL's FATAL). Its transaction block is rolled back and what it
   * held for its reads released.
   */
  public void onTerminate(Runnable action) {
    context.onTerminate(action);
  }

  /** Whether {@code pg_terminate_backend} ended this session (every call now fails with 57P01). */
  public boolean terminated() {
    return context.terminated();
  }

  /** Forgets what {@code currval} and {@code lastval} would return (DISCARD SEQUENCES, DISCARD ALL). */
  public void discardSequences() {
    context.discardSequences();
  }

  /**
   * The types of a statement's {@code $1 ... $count} parameters that their context decides (a comparison
   * with a column, an INSERT target column), as far as Floe can tell; null entries are unknown.
   */
  public java.util.List<SqlType> parameterTypes(String sql, int count) {
    return context.parameterTypes(sql, count);
  }

  /**
   * Receives NOTICE and WARNING messages, such as "relation ... already exists, skipping" or "there is no
   * transaction in progress".
   */
  public void onNotice(Consumer<Notice> sink) {
    context.onNotice(sink);
  }

  /**
   * How far the running statement has got, in percent as DuckDB estimates it from the rows its scans have read,
   * or -1 when nothing runs or it cannot tell. Callable from any thread while a statement runs; the first call
   * turns the estimate on for this session, so make it before the statements to watch (a front end's progress
   * line). A fenced engine (a server's) always answers -1.
   */
  public double queryProgress() {
    return context.queryProgress();
  }

  /** Interrupts the statement running in this session; it fails with SQLSTATE 57014. */
  public void cancel() {
    context.cancel();
  }

  @Override
  public void close() {
    context.close();
  }
}
