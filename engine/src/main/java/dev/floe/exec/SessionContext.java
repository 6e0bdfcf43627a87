package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.catalog.SqliteCatalog;
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
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;
import org.apache.iceberg.catalog.Namespace;
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
  private final PreparedStatement serialize;
  /** The DuckDB statements the running statement made, to interrupt on cancel. */
  private final CancellableConnection statements;
  /** Set by {@link #cancel()}: the running statement stops, and commits nothing if it has not yet. */
  private boolean cancelled;
  /** The running statement passed its commit point: it can no longer be cancelled. */
  private boolean committed;
  private final Object cancelLock = new Object();

  /** The statement reached its point of no return ({@link dev.floe.catalog.CommitGate}). */
  private void passCommitPoint() {
    synchronized (cancelLock) {
      if (cancelled) {
        throw dev.floe.catalog.CommitGate.cancelled();
      }
      committed = true;
    }
  }

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

  SessionContext(Engine engine, Connection duck, boolean client) throws SQLException {
    this.engine = engine;
    this.statements = new CancellableConnection(duck);
    this.duck = statements.connection();
    this.client = client;
    this.blocks = new TransactionControl(engine.tables(), n -> notices.accept(n),
        name -> settings.get(name));
    try (Statement st = duck.createStatement()) {
      // DuckDB settings are the engine's (Engine.startDuckDb); a session has only variables
      st.execute("SET VARIABLE floe_current_schema = " + Lexer.quoteString(currentSchema));
      st.execute("SET VARIABLE " + Sequences.SESSION_VARIABLE + " = CAST(" + id + " AS BIGINT)");
    }
    this.serialize = duck.prepareStatement("SELECT json_serialize_sql(?::VARCHAR)");
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

  private final java.util.Map<String, String> settings = new java.util.TreeMap<>();

  /** Run-time parameters for current_setting(): one DuckDB map variable (a variable's name must be constant). */
  public void setSettings(java.util.Map<String, String> values) {
    values.forEach((k, v) -> {
      String key = k.toLowerCase(java.util.Locale.ROOT);
      if (v == null) {
        settings.remove(key);
      } else {
        settings.put(key, v);
      }
    });
    StringBuilder map = new StringBuilder("MAP {");
    boolean first = true;
    for (var e : settings.entrySet()) {
      map.append(first ? "" : ", ").append(Lexer.quoteString(e.getKey())).append(": ")
          .append(Lexer.quoteString(e.getValue()));
      first = false;
    }
    String sql = settings.isEmpty() ? "MAP {}::MAP(VARCHAR, VARCHAR)" : map.append('}').toString();
    try (Statement st = duck.createStatement()) {
      st.execute("SET VARIABLE floe_settings = " + sql);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot set session settings: " + e.getMessage(), e);
    }
  }

  /**
   * Sets a DuckDB variable of this session's connection (the catalog functions read the session's
   * schema, user and settings from them).
   */
  public void setVariable(String name, String value) {
    try (Statement st = duck.createStatement()) {
      st.execute("SET VARIABLE " + Lexer.quoteIdentifier(name) + " = " + (value == null ? "NULL"
          : Lexer.quoteString(value)));
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot set session variable " + name + ": " + e.getMessage(),
          e);
    }
  }

  /** Where NOTICE and WARNING messages (e.g. "relation already exists, skipping") go. */
  public void onNotice(Consumer<dev.floe.Notice> sink) {
    this.notices = sink;
  }

  void notice(String message) {
    notices.accept(dev.floe.Notice.notice(message));
  }

  /**
   * Executes one statement (a trailing semicolon is allowed).
   *
   * @throws FloeException with the statement's SQLSTATE; nothing the statement did is visible then
   */
  public Result execute(String sql) {
    List<SqlScript.Part> parts = SqlScript.split(sql);
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
    closeOpenResult();
    if (!floeSql) {
      synchronized (cancelLock) {
        cancelled = false; // a cancel that came between statements has nothing to stop (as in PostgreSQL)
        committed = false;
      }
      statements.forgetClosed();
    }
    try {
      return dev.floe.catalog.CommitGate.guard(this::passCommitPoint, () -> dispatchMapped(part, parsed));
    } finally {
      releasePins();
    }
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
  private final List<dev.floe.tail.TailLog.Pin> pins = new java.util.ArrayList<>();

  private void releasePins() {
    for (dev.floe.tail.TailLog.Pin p : pins) {
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
      if (!(e instanceof FloeException)) {
        // Every failure reaches the caller with a SQLSTATE; this one is a bug in Floe.
        LOG.error("internal error executing: {}", part.text(), e);
        throw new FloeException(SqlState.INTERNAL_ERROR, "internal error: " + e, e);
      }
      FloeException f = (FloeException) e;
      if (part.offset() > 0 && f.position() > 0) {
        throw new FloeException(f.sqlState(), f.getMessage(), f.detail().orElse(null), f.hint().orElse(null),
            f.position() + part.offset(), f.getCause());
      }
      throw f;
    }
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SessionContext.class);

  private Result dispatch(String sql, Ast.Statement parsed) {
    // Files a failed statement on this thread wrote and registered are not this statement's.
    dev.floe.catalog.Durable.forget();
    Ast.Statement statement = parsed != null ? parsed : Parser.parse(sql);
    if (statement instanceof Ast.TransactionControl tc) {
      return blocks.run(tc);
    }
    blocks.checkNotFailed();
    try {
      if (!statement.kind().readOnly() && blocks.readOnlyNow()) {
        throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION, "cannot execute " + Ast.commandName(sql)
            + " in a read-only transaction");
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
    }
    Transaction block = blocks.open();
    if (statement.kind() == dev.floe.StatementKind.DDL && block != null) {
      // DDL takes effect at once: it is not part of the block. On a table the block changed it would
      // have to commit beside changes the block may still roll back, so that is refused.
      for (TableIdentifier id : ddlTables(statement)) {
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

  /** The tables a DDL statement creates, changes or drops (a dropped schema: every table in it). */
  private java.util.List<TableIdentifier> ddlTables(Ast.Statement statement) {
    java.util.List<TableIdentifier> ids = new java.util.ArrayList<>();
    Tables tables = engine.tables();
    if (statement instanceof Ast.CreateTable c) {
      ids.add(tables.require(c.name(), currentSchema));
    } else if (statement instanceof Ast.DropTable d) {
      d.names().forEach(n -> ids.add(tables.require(n, currentSchema)));
    } else if (statement instanceof Ast.AlterTable a) {
      ids.add(tables.require(a.name(), currentSchema));
    } else if (statement instanceof Ast.DropSchema d) {
      for (dev.floe.sql.QualifiedName n : d.names()) {
        Namespace ns = Namespace.of(n.parts().get(n.parts().size() - 1));
        if (tables.catalog().namespaceExists(ns)) {
          ids.addAll(tables.catalog().listTables(ns));
        }
      }
    }
    return ids;
  }

  private Result dispatchStatement(Ast.Statement statement) {
    try {
      if (statement instanceof Ast.Query q) {
        return query(q);
      } else if (statement instanceof Ast.Explain e) {
        QueryBinder.Bound bound = bind(e.query());
        return run((e.analyze() ? "EXPLAIN ANALYZE " : "EXPLAIN ") + bound.sql(), bound::originalPosition);
      } else if (statement instanceof Ast.Insert i) {
        return new Inserts(this, tables()).insert(i);
      } else if (statement instanceof Ast.Delete d) {
        return mutate(m -> m.delete(d));
      } else if (statement instanceof Ast.Update u) {
        return mutate(m -> m.update(u));
      } else if (statement instanceof Ast.Merge m) {
        return mutate(x -> x.merge(m));
      } else if (statement instanceof Ast.Truncate t) {
        return mutate(m -> m.truncate(t));
      } else if (statement instanceof Ast.CreateTable c) {
        return c.asQuery().isPresent() ? new Inserts(this, engine.tables()).createTableAs(c)
            : new Ddl(this, engine.tables()).createTable(c);
      } else if (statement instanceof Ast.CreateSchema c) {
        return new Ddl(this, engine.tables()).createSchema(c);
      } else if (statement instanceof Ast.CreateSequence c) {
        return new Ddl(this, engine.tables()).createSequence(c);
      } else if (statement instanceof Ast.DropSequence d) {
        return new Ddl(this, engine.tables()).dropSequence(d);
      } else if (statement instanceof Ast.DropSchema d) {
        return new Ddl(this, engine.tables()).dropSchema(d);
      } else if (statement instanceof Ast.DropTable d) {
        return new Ddl(this, engine.tables()).dropTable(d);
      } else if (statement instanceof Ast.AlterTable a) {
        return new Ddl(this, engine.tables()).alterTable(a);
      } else if (statement instanceof Ast.ShowTables s) {
        return showTables(s);
      } else if (statement instanceof Ast.ShowSchemas) {
        return showSchemas();
      } else if (statement instanceof Ast.Describe d) {
        return describe(d);
      }
      throw new IllegalStateException("unhandled statement " + statement);
    } catch (SqliteCatalog.ReadOnlyException e) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION, "cannot write: " + e.getMessage(), e);
    } catch (SqliteCatalog.CatalogException e) {
      throw new FloeException(SqlState.IO_ERROR, e.getMessage(), e);
    } catch (CommitFailedException e) {
      throw new FloeException(SqlState.SERIALIZATION_FAILURE, "could not serialize access due to concurrent update: "
          + e.getMessage(), e);
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
  private Result mutate(java.util.function.Function<Mutations, Result> statement) {
    Mutations m = new Mutations(this, tables());
    try {
      return statement.apply(m);
    } catch (RuntimeException e) {
      m.cleanup();
      throw e;
    }
  }

  private Result query(Ast.Query q) {
    Relations relations = relations();
    java.util.Optional<Result> point = PointQueries.run(this, q.text(), relations);
    if (point.isPresent()) {
      return point.get();
    }
    QueryBinder.Bound bound = bind(q.text(), offset -> q.offset() + offset + 1, relations);
    Named named = withColumnNames(bound);
    Result r = run(named.sql(), named.positions());
    return r instanceof QueryResult qr ? qr.withOrigins(bound.origins(), o -> engine.pgCatalog().origin(o)) : r;
  }

  /**
   * SQL for DuckDB and how its offsets map to positions in the user's statement (1-based; 0 where the
   * offset is in text Floe added).
   */
  record Named(String sql, IntUnaryOperator positions) {}

  /** The bound SQL with PostgreSQL's names for unaliased expression columns ({@code count}, ...). */
  static Named withColumnNames(QueryBinder.Bound bound) {
    List<String> names = bound.columnNames();
    if (names.isEmpty()) {
      return new Named(bound.sql(), bound::originalPosition);
    }
    StringBuilder select = new StringBuilder("SELECT ");
    StringBuilder aliases = new StringBuilder();
    List<java.util.Optional<String>> casts = bound.resultCasts();
    for (int k = 0; k < names.size(); k++) {
      String inner = Lexer.quoteIdentifier("__floe_c" + k);
      String value = "__floe_q." + inner;
      java.util.Optional<String> cast = k < casts.size() ? casts.get(k) : java.util.Optional.empty();
      if (cast.isPresent()) {
        value = "CAST(" + value + " AS " + cast.get() + ")";
      }
      select.append(k > 0 ? ", " : "").append(value).append(" AS ").append(Lexer.quoteIdentifier(names.get(k)));
      aliases.append(k > 0 ? ", " : "").append(inner);
    }
    String prefix = select + " FROM (";
    int inner = prefix.length();
    int end = inner + bound.sql().length();
    // DuckDB's positions are offsets in the whole text; the user's text is inside the subquery.
    return new Named(prefix + bound.sql() + "\n) AS __floe_q(" + aliases + ")",
        offset -> offset >= inner && offset < end ? bound.originalPosition(offset - inner) : 0);
  }

  /**
   * The types of a statement's {@code $n} parameters as their context decides them, where it does: in a
   * query, what DuckDB infers ({@code id = $1} is the type of {@code id}); in {@code INSERT ... VALUES},
   * the type of the column a lone parameter goes into. Null where unknown.
   */
  public List<dev.floe.SqlType> parameterTypes(String sql, int count) {
    try {
      return parameterTypesBound(sql, count);
    } finally {
      releasePins();
    }
  }

  private List<dev.floe.SqlType> parameterTypesBound(String sql, int count) {
    dev.floe.SqlType[] types = new dev.floe.SqlType[count];
    Ast.Statement statement;
    try {
      statement = Parser.parse(sql);
    } catch (FloeException e) {
      return java.util.Arrays.asList(types);
    }
    if (statement instanceof Ast.Query q) {
      try {
        QueryBinder.Bound bound = bind(q);
        try (PreparedStatement ps = duck.prepareStatement(bound.sql())) {
          java.sql.ParameterMetaData md = ps.getParameterMetaData();
          for (int i = 1; i <= Math.min(md.getParameterCount(), count); i++) {
            String name = md.getParameterTypeName(i);
            if (name != null && !name.equalsIgnoreCase("UNKNOWN") && !name.equalsIgnoreCase("NULL")) {
              types[i - 1] = dev.floe.types.TypeMapping.fromDuckdb(name);
            }
          }
        }
      } catch (SQLException | RuntimeException e) {
        // the types stay unknown: the statement reports its own error when it runs
      }
    } else if (statement instanceof Ast.Insert insert && insert.source().isPresent()) {
      engine.tableInfo(insert.table().parts(), currentSchema).ifPresent(info -> {
        List<String> names = insert.columns().isEmpty()
            ? info.columns().stream().map(dev.floe.Column::name).toList() : insert.columns();
        valuesParameters(insert.source().get().text(), (param, position) -> {
          if (param >= 1 && param <= count && position < names.size()) {
            for (dev.floe.Column c : info.columns()) {
              if (c.name().equalsIgnoreCase(names.get(position))) {
                types[param - 1] = c.type();
              }
            }
          }
        });
      });
    }
    return java.util.Arrays.asList(types);
  }

  /** For {@code VALUES (...), (...)}: each element that is a lone {@code $n}, with its position in its row. */
  private static void valuesParameters(String source, java.util.function.BiConsumer<Integer, Integer> sink) {
    List<dev.floe.sql.Token> t = Lexer.tokenize(source);
    if (t.isEmpty() || !t.get(0).isKeyword("values")) {
      return;
    }
    int depth = 0;
    int position = 0;
    for (int i = 1; i < t.size(); i++) {
      dev.floe.sql.Token k = t.get(i);
      if (k.isOp("(")) {
        depth++;
        if (depth == 1) {
          position = 0;
        }
      } else if (k.isOp(")")) {
        depth--;
      } else if (depth == 1 && k.isOp(",")) {
        position++;
      } else if (depth == 1 && k.type() == dev.floe.sql.Token.Type.PARAM && k.text().startsWith("$")
          && t.get(i - 1).isOp("(") || depth == 1 && k.type() == dev.floe.sql.Token.Type.PARAM
          && t.get(i - 1).isOp(",")) {
        dev.floe.sql.Token next = t.get(i + 1);
        if ((next.isOp(",") || next.isOp(")")) && k.text().startsWith("$")) {
          try {
            sink.accept(Integer.parseInt(k.text().substring(1)), position);
          } catch (NumberFormatException ignored) {
            // not a numbered parameter
          }
        }
      }
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
    Relations[] relations = new Relations[1];
    relations[0] = new Relations(tables(), engine.planner(), engine.files(), currentSchema, expression -> {
      QueryBinder.Bound inner = QueryBinder.bind("SELECT " + expression, 0, this::serializeSql, relations[0]);
      return evaluate(inner.sql().substring("SELECT ".length()));
    }, parts -> PgCatalog.systemName(parts).isPresent() ? engine.pgCatalog().relation(parts) : java.util.Optional.empty(),
        engine.tails(), pins::add, client && !floeSql, new StagedRows(duck));
    return relations[0];
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
    blocks.begin(readOnly, null);
  }

  /** Opens a block with the session's default access mode (default_transaction_read_only). */
  public void begin() {
    blocks.beginDefault();
  }

  public void commit() {
    blocks.commit();
  }

  public void rollback() {
    blocks.rollback();
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

  /** The table a name denotes from this session (its current schema), as currently committed. */
  /** Starts a COPY FROM STDIN into {@code table} (see {@link dev.floe.CopyIn}). */
  public CopyFrom copyTarget(String table, List<String> columns) {
    return new CopyFrom(this, table, columns);
  }

  /** Executes a statement Floe composed (not checked as a client's, see {@link #floeSql}). */
  Result executeAsFloe(String sql) {
    floeSql = true;
    try {
      return execute(sql);
    } finally {
      floeSql = false;
    }
  }

  public java.util.Optional<dev.floe.TableInfo> tableInfo(String name) {
    return engine.tableInfo(Parser.parseName(name).parts(), currentSchema);
  }

  Engine engine() {
    return engine;
  }

  /** Runs DuckDB SQL that returns no rows (temp tables, COPY). */
  void execute(String sql, IntUnaryOperator positions) {
    if (LOG.isDebugEnabled()) {
      LOG.debug("DuckDB SQL: {}", sql);
    }
    try (Statement st = duck.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw DuckErrors.map(e, positions);
    } finally {
    }
  }

  /** Runs DuckDB SQL that changes rows (CREATE TABLE AS, INSERT) and returns how many it wrote. */
  long update(String sql, IntUnaryOperator positions) {
    if (LOG.isDebugEnabled()) {
      LOG.debug("DuckDB SQL: {}", sql);
    }
    try (Statement st = duck.createStatement()) {
      return st.executeLargeUpdate(sql);
    } catch (SQLException e) {
      throw DuckErrors.map(e, positions);
    } finally {
    }
  }

  /** Runs a DuckDB query that returns one row, and returns its values. */
  Object[] queryRow(String sql, IntUnaryOperator positions) {
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      if (!rs.next()) {
        return null;
      }
      Object[] row = new Object[rs.getMetaData().getColumnCount()];
      for (int k = 0; k < row.length; k++) {
        row[k] = rs.getObject(k + 1);
      }
      return row;
    } catch (SQLException e) {
      throw DuckErrors.map(e, positions);
    }
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

  private static final java.util.Set<String> VOLATILE = java.util.Set.of("now", "current_timestamp",
      "current_date", "current_time", "localtime", "localtimestamp", "transaction_timestamp", "statement_timestamp",
      "clock_timestamp", "get_current_time", "get_current_timestamp", "today", "random", "uuid", "gen_random_uuid",
      "uuidv4", "uuidv7", "nextval", "currval", "lastval", "setval", "setseed");

  /**
   * Rejects an expression that is not a constant: column references, subqueries, and functions whose
   * value changes per row or per statement (Floe stores such expressions evaluated once).
   */
  void requireConstant(String expression, String what, int position) {
    String problem = nonConstant(expressionTree(expression, what, position).path("statements"));
    if (problem != null) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot use " + problem + " in " + what
          + " expression", null, what + " values are constants, evaluated once when the column is defined.", position,
          null);
    }
  }

  /** DuckDB's parse tree of {@code SELECT (expression)}; a syntax error is 42601. */
  private com.fasterxml.jackson.databind.JsonNode expressionTree(String expression, String what, int position) {
    com.fasterxml.jackson.databind.JsonNode tree;
    try {
      tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(serializeSql("SELECT (" + expression + ")"));
    } catch (java.io.IOException e) {
      throw FloeException.internal("cannot read DuckDB's parse tree", e);
    }
    if (tree.path("error").asBoolean(false)) {
      throw FloeException.syntax("invalid " + what + " expression: " + tree.path("error_message").asText(), position);
    }
    return tree;
  }


  /** Whether an expression is a constant (no columns, subqueries or volatile functions). */
  boolean isConstant(String expression) {
    try {
      requireConstant(expression, "DEFAULT", 0);
      return true;
    } catch (FloeException e) {
      return false;
    }
  }

  /** Refuses an expression that names columns or has subqueries (volatile functions are fine). */
  void requireNoColumns(String expression, String what, int position) {
    String problem = nonConstant(expressionTree(expression, what, position).path("statements"));
    if (problem != null && !problem.startsWith("function")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot use " + problem + " in " + what
          + " expression", null, null, position, null);
    }
  }


  private static String nonConstant(com.fasterxml.jackson.databind.JsonNode node) {
    if (node.isObject()) {
      String cls = node.path("class").asText();
      if (cls.equals("COLUMN_REF")) {
        return "column reference";
      }
      if (cls.equals("SUBQUERY")) {
        return "subquery";
      }
      if (cls.equals("FUNCTION") && VOLATILE.contains(node.path("function_name").asText().toLowerCase())) {
        return "function " + node.path("function_name").asText() + "()";
      }
      for (var it = node.fields(); it.hasNext(); ) {
        String found = nonConstant(it.next().getValue());
        if (found != null) {
          return found;
        }
      }
    } else if (node.isArray()) {
      for (var child : node) {
        String found = nonConstant(child);
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }

  /** Evaluates a constant expression to one JDBC value. */
  Object evaluate(String expression) {
    try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery("SELECT " + expression)) {
      rs.next();
      return rs.getObject(1);
    } catch (SQLException e) {
      throw DuckErrors.map(e, o -> 0);
    }
  }

  private Result showTables(Ast.ShowTables s) {
    String schema = s.schema().map(n -> n.last()).orElse(currentSchema);
    List<String> rows = new ArrayList<>();
    for (TableIdentifier id : engine.tables().catalog().listTables(Namespace.of(schema))) {
      rows.add("(" + Lexer.quoteString(id.name()) + ")");
    }
    return values(List.of("name"), rows, true);
  }

  private Result showSchemas() {
    List<String> rows = new ArrayList<>();
    for (Namespace ns : engine.tables().catalog().listNamespaces(Namespace.empty())) {
      rows.add("(" + Lexer.quoteString(ns.toString()) + ")");
    }
    return values(List.of("name"), rows, true);
  }

  private Result describe(Ast.Describe d) {
    TableIdentifier id = engine.tables().require(d.table(), currentSchema);
    var info = engine.tableInfo(id).orElseThrow(() -> new FloeException(SqlState.UNDEFINED_TABLE,
        "relation \"" + id.name() + "\" does not exist", null, null, d.table().position(), null));
    List<String> rows = new ArrayList<>();
    for (var c : info.columns()) {
      rows.add("(" + Lexer.quoteString(c.name()) + ", " + Lexer.quoteString(c.type().displayName()) + ", "
          + (c.nullable() ? "true" : "false") + ")");
    }
    return values(List.of("column_name", "data_type", "is_nullable"), rows, false);
  }

  private Result values(List<String> names, List<String> rows, boolean sorted) {
    String cols = String.join(", ", names.stream().map(Lexer::quoteIdentifier).toList());
    String sql = rows.isEmpty()
        ? "SELECT " + String.join(", ", names.stream().map(n -> "CAST(NULL AS VARCHAR) AS " + Lexer.quoteIdentifier(n))
            .toList()) + " WHERE false"
        : "SELECT * FROM (VALUES " + String.join(", ", rows) + ") AS t(" + cols + ")" + (sorted ? " ORDER BY 1" : "");
    return run(sql, o -> 0);
  }

  /**
   * Cancels the running statement, from any thread: DuckDB stops what it is running, and a statement
   * that has not reached its commit point commits nothing ({@link dev.floe.catalog.CommitGate}); one
   * past it has committed and reports success.
   */
  public void cancel() {
    synchronized (cancelLock) {
      if (committed) {
        return; // its change stands: what is left of it (cleanup, RETURNING rows) runs to the end
      }
      cancelled = true;
      statements.cancel();
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
