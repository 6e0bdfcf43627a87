package dev.floe.exec;

import dev.floe.FloeProperties;
import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.sql.Ast;
import dev.floe.sql.Lexer;
import dev.floe.sql.QueryBinder;
import dev.floe.tail.TailLog;
import dev.floe.types.IcebergValues;
import dev.floe.types.SqlLiterals;
import dev.floe.types.TypeMapping;
import dev.floe.commit.TableChange;
import dev.floe.write.Inserter;
import java.sql.PreparedStatement;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * INSERT and CREATE TABLE AS: DuckDB computes the rows, each value is cast to its column's type and
 * checked (NOT NULL, varchar length, smallint range, time within a day, what {@link StoredValues}
 * refuses), the rows are written as new data files, and one
 * Iceberg commit makes them visible. A failure at any step leaves the table as it was and deletes the
 * files written for the statement.
 */
final class Inserts {
  private final SessionContext session;
  private final Tables tables;

  Inserts(SessionContext session, Tables tables) {
    this.session = session;
    this.tables = tables;
  }

  /** The query's output: DuckDB's column names and type names. */
  private record Shape(List<String> names, List<String> types) {}

  Result insert(Ast.Insert s) {
    TableIdentifier id = tables.require(s.table(), session.currentSchema());
    // In a block, a table with a tail is appended to at COMMIT and never written privately: it is
    // looked at, not taken as the block's own copy.
    Optional<Table> tailTable = tables.inTransaction() ? tables.snapshotOf(id).filter(TailLog::hasTail)
        : Optional.empty();
    Table table = tailTable.isPresent() ? tailTable.get() : tables.live(id).orElseThrow(() -> FloeException.undefinedTable(id.name(), s.table().position()));
    Schema schema = table.schema();
    if (TailLog.hasTail(table) && TailLog.keyed(schema)) {
      Optional<Result> one = new Mutations(session, tables).insertOne(s); // one row of constants, in the JVM
      if (one.isPresent()) {
        return one.get();
      }
    } else if (TailLog.hasTail(table) && !TailLog.keyed(schema) && s.onConflict().isEmpty()) {
      Object[] one = new Mutations(session, tables).tailRow(s); // one row of constants, in the JVM
      if (one != null) {
        tailAppend(id, table).applyAsLong(java.util.Collections.singletonList(one));
        return new CommandResult("INSERT 0 1", 1);
      }
    }
    List<Column> columns = TypeMapping.columns(schema, table.properties());

    List<Column> targets = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    boolean tail = TailLog.hasTail(table);
    if (s.columns().isEmpty()) {
      targets.addAll(columns);
      if (tail) {
        targets.removeIf(c -> c.name().equals(TailLog.OFFSET_COLUMN)); // the log numbers rows
      }
    } else {
      for (int k = 0; k < s.columns().size(); k++) {
        String name = s.columns().get(k);
        int position = s.columnPositions().get(k);
        Column c = find(columns, name).orElseThrow(() -> FloeException.undefinedColumn(name, id.name(), position));
        if (!seen.add(c.name())) {
          throw FloeException.columnTwice(name, position);
        }
        targets.add(c);
      }
    }

    String sourceSql;
    Shape shape;
    List<Boolean> untyped;
    java.util.function.IntUnaryOperator positions;
    if (s.source().isEmpty()) {
      sourceSql = "SELECT 1 AS __floe_default";
      shape = new Shape(List.of(), List.of());
      untyped = List.of();
      targets.clear();
      positions = o -> 0;
    } else {
      Ast.Query written = s.source().get();
      List<Column> literalTargets = targets;
      Ast.Query q = new Ast.Query(ValuesLiterals.rewrite(written.text(), literalTargets,
          k -> defaultSql(schema, table.properties(), literalTargets.get(k)), written.offset()), written.offset());
      QueryBinder.Bound bound = session.bind(q);
      sourceSql = bound.sql();
      shape = describe(new QueryResult.Named(bound.sql(), bound::originalPosition));
      untyped = bound.untypedLiterals();
      positions = bound::originalPosition;
      int sourcePosition = q.offset() + 1;
      if (shape.types().size() > targets.size()) {
        int extra = ValuesLiterals.firstExtra(written.text(), targets.size());
        throw FloeException.syntax("INSERT has more expressions than target columns",
            extra < 0 ? sourcePosition : written.offset() + extra + 1);
      }
      if (shape.types().size() < targets.size()) {
        if (!s.columns().isEmpty()) {
          // PostgreSQL points at the first target column without an expression
          throw FloeException.syntax("INSERT has more target columns than expressions",
              s.columnPositions().get(shape.types().size()));
        }
        targets = new ArrayList<>(targets.subList(0, shape.types().size()));
      }
    }
    for (int k = 0; k < targets.size(); k++) {
      Column target = targets.get(k);
      boolean literal = k < untyped.size() && untyped.get(k);
      if (!Assignment.allowed(target.type(), shape.types().get(k), literal)) {
        throw new FloeException(SqlState.DATATYPE_MISMATCH, "column \"" + target.name() + "\" is of type "
            + target.type() + " but expression is of type " + TypeMapping.fromDuckdb(shape.types().get(k)), null,
            "You will need to rewrite or cast the expression.", s.source().get().offset() + 1, null);
      }
    }

    Map<String, String> provided = new HashMap<>();
    for (int k = 0; k < targets.size(); k++) {
      Column target = targets.get(k);
      String identity = table.properties().get(FloeProperties.COLUMN_IDENTITY + target.fieldId());
      if (identity != null && s.overriding().equals(Optional.of("user"))) {
        continue; // OVERRIDING USER VALUE: the given values are ignored, the sequence supplies them
      }
      if ("always".equals(identity) && s.overriding().isEmpty()
          && !ValuesLiterals.onlyDefaults(s.source().get().text(), k)) {
        throw new FloeException(SqlState.GENERATED_ALWAYS, "cannot insert a non-DEFAULT value into column \""
            + target.name() + "\"", "Column \"" + target.name() + "\" is an identity column defined as GENERATED "
            + "ALWAYS.", "Use OVERRIDING SYSTEM VALUE to override.", s.source().get().offset() + 1, null);
      }
      provided.put(target.name(), "q." + Lexer.quoteIdentifier("s" + k));
    }
    String rowsSql = rowsSql(id.name(), schema, table.properties(), columns, provided, sourceSql, targets.size());
    if (tail && TailLog.keyed(schema)) {
      return new Mutations(session, tables).insert(s, rowsSql, positions); // a keyed change of its log
    }
    if (tail) {
      return appendToTail(s, id, table, targets, rowsSql, positions);
    }
    if (!schema.identifierFieldIds().isEmpty() || s.onConflict().isPresent() || s.returning().isPresent()
        || Constraints.any(table)) {
      return new Mutations(session, tables).insert(s, rowsSql, positions);
    }
    long maxRows = s.source().isEmpty() ? 1 : ValuesLiterals.rows(s.source().get().text());
    long rows = write(table, schema, rowsSql, maxRows, positions,
        files -> tables.committer().commit(id, table, TableChange.append(files)));
    return new CommandResult("INSERT 0 " + rows, rows);
  }

  /**
   * INSERT into a table with a tail: the rows, computed and checked by DuckDB as for any INSERT, are
   * appended to the log as one record, and the statement returns once that is durable; they are
   * readable at once, and reach the table's files when the tail is sealed. In a transaction block they
   * are queued and appended at its COMMIT.
   */
  private Result appendToTail(Ast.Insert s, TableIdentifier id, Table table, List<Column> targets, String rowsSql,
      java.util.function.IntUnaryOperator positions) {
    for (Column c : targets) {
      if (c.name().equals(TailLog.OFFSET_COLUMN)) {
        throw new FloeException(SqlState.GENERATED_ALWAYS, "cannot insert a value into column \""
            + TailLog.OFFSET_COLUMN + "\"", "The tail of table \"" + id.name() + "\" numbers the rows appended to it.",
            null, s.table().position(), null);
      }
    }
    if (s.onConflict().isPresent()) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "ON CONFLICT is not supported on table \"" + id.name()
          + "\", which has a tail: appends do not read the table", s.table().position());
    }
    TailLog log = session.engine().tails().of(id, table).orElseThrow();
    java.util.function.ToLongFunction<List<Object[]>> append = tailAppend(id, table);
    if (s.returning().isPresent()) {
      return new Mutations(session, tables).appendToTail(s, log, rowsSql, positions, append);
    }
    List<Object[]> rows = tailRows(session, log.rowColumns(), "(" + rowsSql + ") AS r", positions);
    append.applyAsLong(rows);
    return new CommandResult("INSERT 0 " + rows.size(), rows.size());
  }

  /**
   * How rows checked for a table with a tail are appended: to its log, durably, returning the first
   * row's offset; in a transaction block queued, and appended at its COMMIT (no offsets yet: -1).
   */
  private java.util.function.ToLongFunction<List<Object[]>> tailAppend(TableIdentifier id, Table table) {
    TailLog log = session.engine().tails().of(id, table).orElseThrow();
    Optional<dev.floe.exec.Transaction> block = tables.transaction();
    if (block.isPresent()) {
      return rows -> {
        block.get().append(id, log, rows);
        return -1;
      };
    }
    return rows -> {
      dev.floe.catalog.CommitGate.pass(); // the append is the commit
      return log.extend(rows);
    };
  }

  /**
   * The rows of a SELECT ({@code from}: what follows FROM) as a tail's log takes them: Iceberg's
   * internal values of {@code fields}, read in their lossless forms.
   */
  static List<Object[]> tailRows(SessionContext session, List<Types.NestedField> fields, String from,
      java.util.function.IntUnaryOperator positions) {
    StringBuilder select = new StringBuilder("SELECT ");
    for (int k = 0; k < fields.size(); k++) {
      select.append(k > 0 ? ", " : "").append(IcebergValues.readable(fields.get(k).type(),
          Lexer.quoteIdentifier(fields.get(k).name())));
    }
    List<Object[]> rows = new ArrayList<>();
    try (var st = session.duck().createStatement(); var rs = st.executeQuery(select + " FROM " + from)) {
      while (rs.next()) {
        Object[] row = new Object[fields.size()];
        for (int k = 0; k < row.length; k++) {
          row[k] = IcebergValues.internal(fields.get(k).type(), rs.getObject(k + 1));
        }
        rows.add(row);
      }
    } catch (java.sql.SQLException e) {
      throw DuckErrors.map(e, positions);
    }
    return rows;
  }

  /** CREATE TABLE ... AS query [WITH [NO] DATA]: creates the table and its rows in one commit. */
  Result createTableAs(Ast.CreateTable s) {
    TableIdentifier id = tables.require(s.name(), session.currentSchema());
    new Ddl(session, tables).requireNewTable(id, s.name());
    if (tables.live(id).isPresent()) {
      if (s.ifNotExists()) {
        session.notice("relation \"" + id.name() + "\" already exists, skipping");
        return new CommandResult("CREATE TABLE AS", 0);
      }
      throw Ddl.duplicateTable(id, s.name());
    }
    Ast.Query q = s.asQuery().orElseThrow();
    QueryBinder.Bound bound = session.bind(q);
    Shape shape = describe(QueryResult.withColumnNames(bound));
    TableOptions options = TableOptions.parse(s.properties(), s.partitioning());
    Map<String, String> props = options.tableProperties();
    if (dev.floe.tail.TailLog.hasTail(props)) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "CREATE TABLE AS cannot create a table with a tail",
          null, "Create the table with its columns and WITH (tail = true), then INSERT ... SELECT into it.",
          s.name().position(), null);
    }
    if (s.columnNames().size() > shape.names().size()) {
      throw new FloeException(SqlState.SYNTAX_ERROR, "too many column names were specified", s.name().position());
    }
    List<Types.NestedField> fields = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (int k = 0; k < shape.names().size(); k++) {
      String name = k < s.columnNames().size() ? s.columnNames().get(k) : shape.names().get(k);
      if (!names.add(name.toLowerCase(java.util.Locale.ROOT))) {
        throw Ddl.duplicateColumn(name, q.offset() + 1).withHint("Give the query's columns distinct names.");
      }
      SqlType type;
      try {
        type = TypeMapping.storableType(name, shape.types().get(k));
      } catch (FloeException e) {
        throw e.withPosition(q.offset() + 1);
      }
      // A column passed through unchanged keeps its declared type (varchar(10), char(3)), as in PostgreSQL.
      Optional<SqlType> declared = k < bound.declaredTypes().size() ? bound.declaredTypes().get(k) : Optional.empty();
      if (declared.isPresent() && TypeMapping.toIceberg(declared.get()).equals(TypeMapping.toIceberg(type))) {
        type = declared.get();
      }
      fields.add(Types.NestedField.optional(k + 1, name, TypeMapping.toIceberg(type)));
      if (TypeMapping.needsDeclaredType(type)) {
        props.put(FloeProperties.columnSqlType(k + 1), TypeMapping.declaredTypeText(type));
      }
    }
    SessionContext.checkTableColumns(fields.size());
    Schema schema = new Schema(fields);
    PartitionSpec spec = TableOptions.spec(schema, options.partitioning());
    SortOrder order = TableOptions.sortOrder(schema, options.sortedBy().orElse(List.of()));
    Catalog.TableBuilder builder = tables.catalog().buildTable(id, schema).withPartitionSpec(spec)
        .withSortOrder(order).withProperties(props);
    String location = tables.newLocation(options.location(), id);
    builder.withLocation(location);
    return tables.creating(location, () -> createWithRows(s, id, builder, bound));
  }

  /** The rest of CREATE TABLE AS: the table's first snapshot holds the query's rows. */
  private Result createWithRows(Ast.CreateTable s, TableIdentifier id, Catalog.TableBuilder builder,
      QueryBinder.Bound bound) {
    Transaction txn = builder.createTransaction();
    Table table = txn.table();
    Schema created = table.schema();
    List<Column> columns = TypeMapping.columns(created, table.properties());
    List<DataFile> files = List.of();
    long rows = 0;
    if (s.withData()) {
      Map<String, String> provided = new HashMap<>();
      for (int k = 0; k < columns.size(); k++) {
        provided.put(columns.get(k).name(), "q." + Lexer.quoteIdentifier("s" + k));
      }
      String rowsSql = rowsSql(id.name(), created, Map.of(), columns, provided, bound.sql(), columns.size());
      Inserter.Written written = writeFiles(table, created, rowsSql, bound::originalPosition, -1);
      files = written.files();
      rows = written.rows();
    }
    try {
      tables.committer().create(id, txn, TableChange.append(files));
    } catch (AlreadyExistsException e) {
      throw Ddl.duplicateTable(id, s.name()); // the name was taken meanwhile
    }
    // PostgreSQL's tags: SELECT <rows written>, and CREATE TABLE AS when WITH NO DATA wrote none
    return s.withData() ? new CommandResult("SELECT " + rows, rows) : new CommandResult("CREATE TABLE AS", 0);
  }

  private interface Commit {
    void commit(List<DataFile> files);
  }

  /**
   * Writes the rows ({@code maxRows} at most, -1: unknown) and commits them (the committer deletes them
   * if they do not commit).
   */
  private long write(Table table, Schema schema, String rowsSql, long maxRows,
      java.util.function.IntUnaryOperator positions, Commit commit) {
    Inserter.Written written = writeFiles(table, schema, rowsSql, positions, maxRows);
    if (written.files().isEmpty()) {
      return 0;
    }
    commit.commit(written.files());
    return written.rows();
  }

  /** Writes the rows as new data files of {@code table} ({@code maxRows} at most, -1: unknown). */
  private Inserter.Written writeFiles(Table table, Schema schema, String rowsSql,
      java.util.function.IntUnaryOperator positions, long maxRows) {
    try {
      return Inserter.write(session.duck(), table, schema, rowsSql, session.scratch(), maxRows);
    } catch (Inserter.WriteFailure e) {
      throw DuckErrors.map(e.sqlException(), positions);
    }
  }

  private Shape describe(QueryResult.Named query) {
    try (PreparedStatement ps = session.duck().prepareStatement(query.sql())) {
      ResultSetMetaData md = ps.getMetaData();
      List<String> names = new ArrayList<>();
      List<String> types = new ArrayList<>();
      for (int i = 1; i <= md.getColumnCount(); i++) {
        names.add(md.getColumnName(i));
        types.add(md.getColumnTypeName(i));
      }
      return new Shape(names, types);
    } catch (SQLException e) {
      throw DuckErrors.map(e, query.positions());
    }
  }

  /**
   * SELECT producing the table's columns, in order, from the source query aliased {@code q(s0, s1, ...)}:
   * provided columns cast to their stored type and checked, the others their default or NULL.
   */
  static String rowsSql(String tableName, Schema schema, Map<String, String> properties, List<Column> columns,
      Map<String, String> provided, String sourceSql, int sourceColumns) {
    return rowsSql(tableName, schema, properties, columns, provided, sourceSql, sourceColumns, Set.of());
  }

  /**
   * As above, where the {@code trusted} columns' provided values are a stored row's own (an UPDATE
   * leaves them as they were): they met the column's checks when written, so they are only cast to the
   * stored type. Checks cost DuckDB time to bind, a measurable part of a one-row statement.
   */
  static String rowsSql(String tableName, Schema schema, Map<String, String> properties, List<Column> columns,
      Map<String, String> provided, String sourceSql, int sourceColumns, Set<String> trusted) {
    // Each value is computed once, in an inner select (a default such as nextval() or random() must not
    // be evaluated twice); the outer one checks NOT NULL, with PostgreSQL's DETAIL of the failing row.
    StringBuilder failingRow = new StringBuilder("'Failing row contains (' || concat_ws(', '");
    StringBuilder inner = new StringBuilder("SELECT ");
    StringBuilder outer = new StringBuilder("SELECT ");
    for (int k = 0; k < columns.size(); k++) {
      Column c = columns.get(k);
      Types.NestedField f = schema.findField(c.fieldId());
      String v = "__floe_v" + k;
      String value;
      if (provided.containsKey(c.name()) && trusted.contains(c.name())) {
        value = "CAST(" + provided.get(c.name()) + " AS " + TypeMapping.duckdbType(f.type()) + ")";
      } else if (provided.containsKey(c.name())) {
        value = checked(tableName, c, f.type(), provided.get(c.name()));
      } else if (rawDefault(schema, properties, c) != null) {
        value = checked(tableName, c, f.type(), rawDefault(schema, properties, c));
      } else {
        value = "CAST(NULL AS " + TypeMapping.duckdbType(f.type()) + ")";
      }
      inner.append(k > 0 ? ", " : "").append(value).append(" AS ").append(v);
      failingRow.append(", coalesce(CAST(").append(v).append(" AS VARCHAR), 'null')");
    }
    failingRow.append(") || ').'");
    for (int k = 0; k < columns.size(); k++) {
      Column c = columns.get(k);
      String v = "__floe_v" + k;
      String value = v;
      boolean given = provided.containsKey(c.name()) || rawDefault(schema, properties, c) != null;
      if (given && !(provided.containsKey(c.name()) && trusted.contains(c.name()))) {
        value = StoredValues.checked(c.name(), schema.findField(c.fieldId()).type(), v); // once computed
      }
      if (!c.nullable() && !(provided.containsKey(c.name()) && trusted.contains(c.name()))) {
        value = "CASE WHEN " + v + " IS NULL THEN " + DuckErrors.raise(SqlState.NOT_NULL_VIOLATION,
            "null value in column \"" + c.name() + "\" of relation \"" + tableName + "\" violates not-null constraint",
            failingRow.toString()) + " ELSE " + value + " END";
      }
      outer.append(k > 0 ? ", " : "").append(value).append(" AS ").append(Lexer.quoteIdentifier(c.name()));
    }
    inner.append(" FROM (").append(sourceSql).append(") AS q");
    if (sourceColumns > 0) {
      inner.append('(');
      for (int k = 0; k < sourceColumns; k++) {
        inner.append(k > 0 ? ", " : "").append(Lexer.quoteIdentifier("s" + k));
      }
      inner.append(')');
    }
    return outer.append(" FROM (").append(inner).append(") AS __floe_r").toString();
  }

  /**
   * Whether a value of the column's stored type needs nothing beyond the cast to it to be stored
   * ({@link #checked} is only the cast): no length limit, no narrower declared type, no range limit.
   */
  static boolean castOnly(Column c) {
    return switch (c.type().kind()) {
      case SMALLINT, CHAR, TIME -> false;
      case VARCHAR -> c.type().precision() == 0;
      default -> true;
    };
  }

  /** A value cast to the column's stored type, with the checks its declared SQL type implies. */
  static String checked(String tableName, Column c, Type stored, String expr) {
    String storedType = TypeMapping.duckdbType(stored);
    if (castOnly(c)) {
      return "CAST(" + expr + " AS " + storedType + ")";
    }
    SqlType t = c.type();
    return switch (t.kind()) {
      case SMALLINT -> "CAST(CAST(" + expr + " AS SMALLINT) AS " + storedType + ")";
      case VARCHAR, CHAR -> {
        String v = "CAST(" + expr + " AS VARCHAR)";
        if (t.kind() == SqlType.Kind.CHAR) {
          // char(n)'s trailing spaces are insignificant in PostgreSQL; Floe stores the value without them
          v = "rtrim(" + v + ", ' ')";
        }
        if (t.precision() == 0) {
          yield v;
        }
        // PostgreSQL: too long is an error, unless the excess characters are all spaces (then cut)
        int n = t.precision();
        yield "CASE WHEN " + v + " IS NULL OR length(" + v + ") <= " + n + " THEN " + v + " WHEN rtrim(substr(" + v + ", " + (n + 1)
            + "), ' ') = '' THEN left(" + v + ", " + n + ") ELSE " + DuckErrors.raise(
            SqlState.STRING_DATA_RIGHT_TRUNCATION, "value too long for type " + t) + " END";
      }
      case TIME -> {
        // PostgreSQL and DuckDB take 24:00:00; an Iceberg time is of one day, and readers reject it
        String v = "CAST(" + expr + " AS " + storedType + ")";
        yield "CASE WHEN " + v + " = TIME '24:00:00' THEN " + DuckErrors.raise(SqlState.DATETIME_FIELD_OVERFLOW,
            "time 24:00:00 is out of range for column \"" + c.name() + "\": an Iceberg time is less than 24:00:00")
            + " ELSE " + v + " END";
      }
      default -> "CAST(" + expr + " AS " + storedType + ")";
    };
  }

  /** The expression a column's default is, unevaluated (a property's text, or the Iceberg write default). */
  static String rawDefault(Schema schema, java.util.Map<String, String> properties, Column c) {
    Types.NestedField f = schema.findField(c.fieldId());
    String expression = properties.get(FloeProperties.COLUMN_DEFAULT + c.fieldId());
    if (expression != null) {
      return "(" + expression + ")";
    }
    return f.writeDefault() != null ? SqlLiterals.of(f.type(), f.writeDefault()) : null;
  }

  /** The SQL of a column's default, of the column's stored type: its expression, or a typed NULL. */
  static String defaultSql(Schema schema, java.util.Map<String, String> properties, Column c) {
    Types.NestedField f = schema.findField(c.fieldId());
    String raw = rawDefault(schema, properties, c);
    return raw == null ? "CAST(NULL AS " + TypeMapping.duckdbType(f.type()) + ")"
        : "CAST(" + raw + " AS " + TypeMapping.duckdbType(f.type()) + ")";
  }

  /** The column of this name among {@code columns}: exactly, else ignoring case. */
  static Optional<Column> find(List<Column> columns, String name) {
    for (Column c : columns) {
      if (c.name().equals(name)) {
        return Optional.of(c);
      }
    }
    for (Column c : columns) {
      if (c.name().equalsIgnoreCase(name)) {
        return Optional.of(c);
      }
    }
    return Optional.empty();
  }
}
