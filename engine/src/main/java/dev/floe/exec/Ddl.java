package dev.floe.exec;

import dev.floe.FloeProperties;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.sql.Ast;
import dev.floe.sql.Ast.AddColumn;
import dev.floe.sql.Ast.AlterAction;
import dev.floe.sql.Ast.AlterColumnType;
import dev.floe.sql.Ast.ColumnDef;
import dev.floe.sql.Ast.DropColumn;
import dev.floe.sql.Ast.DropNotNull;
import dev.floe.sql.Ast.RenameColumn;
import dev.floe.sql.Ast.RenameTable;
import dev.floe.tail.TailLog;
import dev.floe.sql.Ast.SetProperties;
import dev.floe.sql.Ast.UnsetProperties;
import dev.floe.sql.QualifiedName;
import dev.floe.types.IcebergValues;
import dev.floe.types.TypeMapping;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PropertyUtil;

/**
 * Schema and table DDL. Each statement is one Iceberg commit (or one catalog update): it either
 * happens entirely or not at all.
 */
final class Ddl {
  private final SessionContext session;
  private final Tables tables;

  Ddl(SessionContext session, Tables tables) {
    this.session = session;
    this.tables = tables;
  }

  Result createSchema(Ast.CreateSchema s) {
    Namespace ns = namespace(s.name());
    dev.floe.catalog.Locations.checkName(s.name().last(), true, s.name().position());
    if (tables.catalog().namespaceExists(ns)) {
      if (s.ifNotExists()) {
        session.notice("schema \"" + ns + "\" already exists, skipping");
        return new CommandResult("CREATE SCHEMA", 0);
      }
      throw FloeException.duplicateSchema(ns.toString(), 0); // PostgreSQL gives DDL's name errors no position
    }
    tables.catalog().createNamespace(ns, Map.of());
    return new CommandResult("CREATE SCHEMA", 0);
  }

  /** DROP SCHEMA a, b, ...: every name is checked before anything is dropped. */
  Result dropSchema(Ast.DropSchema s) {
    List<Namespace> drop = new ArrayList<>();
    for (QualifiedName name : s.names()) {
      Namespace ns = namespace(name);
      if (!tables.catalog().namespaceExists(ns)) {
        if (s.ifExists()) {
          session.notice("schema \"" + ns + "\" does not exist, skipping");
          continue;
        }
        throw FloeException.undefinedSchema(ns.toString(), 0);
      }
      int contents = tables.catalog().listTables(ns).size();
      int views = tables.catalog().listViews(ns).size();
      if (contents + views > 0 && !s.cascade()) {
        throw new FloeException(SqlState.DEPENDENT_OBJECTS_STILL_EXIST, "cannot drop schema " + ns
            + " because other objects depend on it", "schema " + ns + " contains " + contents + " table(s)"
            + (views > 0 ? " and " + views + " view(s)" : ""),
            "Use DROP ... CASCADE to drop the dependent objects too.", name.position(), null);
      }
      drop.add(ns);
    }
    for (Namespace ns : drop) {
      for (TableIdentifier id : tables.catalog().listViews(ns)) {
        tables.catalog().dropView(id);
      }
      for (TableIdentifier id : tables.catalog().listTables(ns)) {
        drop(id, false);
      }
      tables.catalog().dropNamespace(ns);
    }
    return new CommandResult("DROP SCHEMA", 0);
  }

  private static Namespace namespace(QualifiedName name) {
    if (name.parts().size() != 1) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "schema names have one part: " + name, null, null,
          name.position(), null);
    }
    return Namespace.of(name.parts().get(0));
  }

  /** CREATE TABLE with column definitions (CREATE TABLE AS is in {@link Inserts}). */
  Result createTable(Ast.CreateTable s) {
    TableIdentifier id = tables.require(s.name(), session.currentSchema());
    requireNewTable(id, s.name());
    if (tables.live(id).isPresent()) {
      if (s.ifNotExists()) {
        session.notice("relation \"" + id.name() + "\" already exists, skipping");
        return new CommandResult("CREATE TABLE", 0);
      }
      throw duplicateTable(id, s.name());
    }
    Set<String> keyNames = primaryKey(s);
    TableOptions options = TableOptions.parse(s.properties(), s.partitioning());
    int formatVersion = PropertyUtil.propertyAsInt(options.properties(), TableProperties.FORMAT_VERSION,
        TableOptions.DEFAULT_FORMAT_VERSION);
    List<Types.NestedField> fields = new ArrayList<>();
    Map<String, String> props = session.engine().tails().owned(options.tableProperties());
    Set<String> names = new HashSet<>();
    Set<Integer> keyIds = new java.util.LinkedHashSet<>();
    List<String> sequences = new ArrayList<>();
    int fieldId = 1;
    for (ColumnDef written : s.columns()) {
      ColumnDef c = ValuesLiterals.typedDefault(written); // DEFAULT '0044-03-15 BC' is a date
      if (!names.add(c.name().toLowerCase(java.util.Locale.ROOT))) {
        boolean exact = s.columns().stream().filter(o -> o != written).anyMatch(o -> o.name().equals(c.name()));
        throw exact ? new FloeException(SqlState.DUPLICATE_COLUMN, "column \"" + c.name() + "\" specified more than "
            + "once", 0) : duplicateColumn(c.name(), 0);
      }
      Type type = TypeMapping.toIceberg(c.type());
      boolean key = keyNames.contains(c.name().toLowerCase(java.util.Locale.ROOT));
      if (key && (type.typeId() == Type.TypeID.FLOAT || type.typeId() == Type.TypeID.DOUBLE)) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "primary key column \"" + c.name() + "\" cannot be of "
            + "type " + c.type(), null, "Iceberg identifier fields cannot be floating point.", c.position(), null);
      }
      if (key) {
        keyIds.add(fieldId);
      }
      Types.NestedField.Builder f = Types.NestedField.builder().withId(fieldId).withName(c.name()).ofType(type)
          .isOptional(!c.notNull() && !key);
      if (c.identity().isPresent()) {
        // serial / identity: the default is the next value of the column's own sequence
        String sequence = id.namespace() + "." + id.name() + "_" + c.name() + "_seq";
        sequences.add(sequence);
        props.put(FloeProperties.COLUMN_DEFAULT + fieldId, Sequences.nextValueSql(sequence));
        if (!c.identity().get().equals("serial")) {
          props.put(FloeProperties.COLUMN_IDENTITY + fieldId, c.identity().get());
        }
      } else if (c.defaultSql().isPresent()) {
        if (formatVersion >= 3 && session.constants().isConstant(c.defaultSql().get())) {
          Literal<?> value = defaultValue(c, type, formatVersion, false);
          f.withInitialDefault(value).withWriteDefault(value);
        } else {
          // now(), gen_random_uuid(), or a v1/v2 table: an expression Floe evaluates for each row it writes
          checkDefaultExpression(c, type);
          props.put(FloeProperties.COLUMN_DEFAULT + fieldId, c.defaultSql().get());
        }
      }
      fields.add(f.build());
      if (TypeMapping.needsDeclaredType(c.type())) {
        props.put(FloeProperties.columnSqlType(fieldId), TypeMapping.declaredTypeText(c.type()));
      }
      fieldId++;
    }
    if (dev.floe.tail.Published.location(props).isPresent() || props.keySet().stream()
        .anyMatch(k -> k.startsWith(FloeProperties.PUBLISH_STORAGE_PREFIX))) {
      if (!TailLog.hasTail(props) || dev.floe.tail.Published.location(props).isEmpty()) {
        throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "publish_to and its storage properties are "
            + "for a table with a tail: WITH (tail = true, publish_to = 's3://bucket/path')", null, null,
            s.name().position(), null);
      }
      if (session.client()) {
        // the server would open connections to an endpoint of the client's choosing
        throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: a network client cannot make "
            + "the server publish to object storage", null, "Create a publishing log with the embedded API "
            + "(Database.newLog with Log.Config.withPublishTo).", s.name().position(), null);
      }
      dev.floe.tail.Published.check(dev.floe.tail.Published.location(props).get(),
          dev.floe.tail.Published.storage(props));
    }
    if (TailLog.hasTail(props)) {
      // a tail numbers its rows: the offset column is the table's last
      if (names.contains(TailLog.OFFSET_COLUMN)) {
        throw new FloeException(SqlState.DUPLICATE_COLUMN, "column \"" + TailLog.OFFSET_COLUMN + "\" is reserved "
            + "in a table with a tail: it holds each appended row's offset", null, null, s.name().position(), null);
      }
      if (!keyIds.isEmpty() && dev.floe.tail.Published.location(props).isPresent()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "a table with a primary key cannot publish its "
            + "log: a published log is append-only", s.name().position());
      }
      fields.add(Types.NestedField.optional(fieldId, TailLog.OFFSET_COLUMN, Types.LongType.get()));
      try {
        TailLog.checkSchema(new Schema(fields));
      } catch (FloeException e) {
        throw e.withPosition(s.name().position());
      }
    }
    SessionContext.checkTableColumns(fields.size());
    Schema schema = new Schema(fields, keyIds);
    ConstraintDdl constraints = new ConstraintDdl(session, tables);
    Set<String> constraintNames = new HashSet<>(keyIds.isEmpty() ? Set.of() : Set.of(id.name() + "_pkey"));
    props.putAll(constraints.declare(id, schema, props, s.constraints(), constraintNames, true));
    PartitionSpec spec = TableOptions.spec(schema, options.partitioning());
    // a keyed tail's seals look rows up by key: sorted by it, its files' key bounds leave most out
    List<Ast.SortField> sortedBy = options.sortedBy().orElse(TailLog.hasTail(props) && !keyIds.isEmpty()
        ? s.primaryKey().stream().map(k -> new Ast.SortField(k, false, false, s.name().position())).toList()
        : List.of());
    SortOrder order = TableOptions.sortOrder(schema, sortedBy);
    Catalog.TableBuilder builder = tables.catalog().buildTable(id, schema).withPartitionSpec(spec)
        .withSortOrder(order).withProperties(props);
    String location = tables.newLocation(options.location(), id);
    builder.withLocation(location);
    constraints.markReferenced(id, s.constraints()); // before the table whose keys reference them
    for (String sequence : sequences) {
      session.engine().sequences().create(sequence); // (re)starts at 1, before any row can take a value
    }
    return tables.creating(location, () -> {
      try {
        builder.create();
      } catch (AlreadyExistsException e) {
        throw duplicateTable(id, s.name());
      }
      return new CommandResult("CREATE TABLE", 0);
    });
  }

  /**
   * The PRIMARY KEY columns (lower case), checked: each names a column of the table, once. They become
   * the table's Iceberg identifier fields, which are required columns.
   */
  private static Set<String> primaryKey(Ast.CreateTable s) {
    Set<String> columns = new HashSet<>();
    s.columns().forEach(c -> columns.add(c.name().toLowerCase(java.util.Locale.ROOT)));
    Set<String> keys = new java.util.LinkedHashSet<>();
    for (String k : s.primaryKey()) {
      String lower = k.toLowerCase(java.util.Locale.ROOT);
      if (!columns.contains(lower)) {
        throw new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + k + "\" named in key does not exist", null,
            null, s.primaryKeyPosition() > 0 ? s.primaryKeyPosition() : s.name().position(), null);
      }
      if (!keys.add(lower)) {
        throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "column \"" + k
            + "\" appears twice in primary key constraint", null, "A table has at most one primary key.",
            s.name().position(), null);
      }
    }
    return keys;
  }

  /** Queries resolve column names case-insensitively, so names differing only in case cannot coexist. */
  static FloeException duplicateColumn(String name, int position) {
    return new FloeException(SqlState.DUPLICATE_COLUMN, "column \"" + name + "\" specified more than once", null,
        "Column names that differ only in letter case are the same column in Floe.", position, null);
  }

  /** A table about to be created or renamed to {@code id}: its name can be a directory, its schema exists. */
  void requireNewTable(TableIdentifier id, QualifiedName name) {
    dev.floe.catalog.Locations.checkName(id.name(), false, name.position());
    if (!tables.catalog().namespaceExists(id.namespace())) {
      throw FloeException.undefinedSchema(id.namespace().toString(), name.position());
    }
  }

  static FloeException duplicateTable(TableIdentifier id, QualifiedName name) {
    return FloeException.duplicateTable(id.name(), 0);
  }

  /** A DEFAULT expression must name no columns or subqueries and have a value of the column's type. */
  /**
   * ALTER COLUMN SET DEFAULT / DROP DEFAULT: the default rows Floe writes from now on take, kept as the
   * column's {@link FloeProperties#COLUMN_DEFAULT} (an Iceberg write default the column had is cleared, so
   * one default holds).
   */
  private void setDefault(Transaction txn, TableIdentifier id, Schema schema, Ast.SetDefault d) {
    Types.NestedField f = field(schema, d.column(), id, d.position(), false);
    if (txn.table().properties().containsKey(FloeProperties.COLUMN_IDENTITY + f.fieldId())) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "column \"" + f.name() + "\" of relation \""
          + id.name() + "\" is an identity column", null, "Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead.",
          0, null);
    }
    String key = FloeProperties.COLUMN_DEFAULT + f.fieldId();
    UpdateProperties update = txn.updateProperties();
    if (d.sql().isPresent()) {
      SqlType type = TypeMapping.fromIceberg(f.type(),
          Optional.ofNullable(txn.table().properties().get(FloeProperties.columnSqlType(f.fieldId()))));
      checkDefaultExpression(new ColumnDef(f.name(), type, false, d.sql(), d.position(), Optional.empty()), f.type());
      update.set(key, d.sql().get());
    } else if (txn.table().properties().containsKey(key)) {
      update.remove(key);
    }
    update.commit();
    if (f.writeDefault() != null) {
      txn.updateSchema().updateColumnDefault(f.name(), null).commit();
    }
  }

  private void checkDefaultExpression(ColumnDef c, Type type) {
    session.constants().requireNoColumns(c.defaultSql().get(), "DEFAULT", c.position());
    try {
      session.sql().evaluate("CAST((" + c.defaultSql().get() + ") AS " + TypeMapping.duckdbType(type) + ")");
    } catch (FloeException e) {
      throw new FloeException(e.sqlState(), "invalid DEFAULT for column \"" + c.name() + "\": " + e.getMessage(),
          null, null, c.position(), e);
    }
  }

  /**
   * A constant DEFAULT, evaluated once and stored as the column's Iceberg initial and write default.
   *
   * @param check apply the column's declared-type checks now (ADD COLUMN); otherwise, as in PostgreSQL,
   *     they apply when a row takes the default
   */
  private Literal<?> defaultValue(ColumnDef c, Type type, int formatVersion, boolean check) {
    if (formatVersion < 3) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
          "column defaults need an Iceberg format version 3 table", null,
          "Create the table WITH (format_version = 3).", c.position(), null);
    }
    session.constants().requireConstant(c.defaultSql().get(), "DEFAULT", c.position());
    dev.floe.Column column = new dev.floe.Column(c.name(), c.type(), true, 0);
    Object raw;
    try {
      String value = "(" + c.defaultSql().get() + ")";
      raw = session.sql().evaluate(IcebergValues.readable(type, check ? Inserts.checked("", column, type, value)
          : "CAST(" + value + " AS " + TypeMapping.duckdbType(type) + ")"));
    } catch (FloeException e) {
      throw new FloeException(e.sqlState(), "invalid DEFAULT for column \"" + c.name() + "\": " + e.getMessage(),
          null, "Defaults must be constants.", c.position(), e);
    }
    Object value = IcebergValues.internal(type, raw);
    if (value == null) {
      return null;
    }
    try {
      StoredValues.check(c.name(), type, value); // an Iceberg default is a stored value
    } catch (FloeException e) {
      throw new FloeException(e.sqlState(), "invalid DEFAULT for column \"" + c.name() + "\": " + e.getMessage(),
          e.detail().orElse(null), null, c.position(), e);
    }
    return literal(type, value);
  }

  @SuppressWarnings("unchecked")
  private static Literal<?> literal(Type type, Object internal) {
    return switch (type.typeId()) {
      case BOOLEAN -> Literal.of((Boolean) internal);
      case INTEGER -> Literal.of((Integer) internal);
      case LONG -> Literal.of((Long) internal);
      case FLOAT -> Literal.of((Float) internal);
      case DOUBLE -> Literal.of((Double) internal);
      case DECIMAL -> Literal.of((java.math.BigDecimal) internal);
      case STRING -> Literal.of((String) internal);
      case UUID -> Literal.of((java.util.UUID) internal);
      case BINARY -> Literal.of((java.nio.ByteBuffer) internal);
      case DATE -> Literal.of((Integer) internal).to(Types.DateType.get());
      case TIME -> Literal.of((Long) internal).to(Types.TimeType.get());
      case TIMESTAMP -> Literal.of((Long) internal).to(type);
      default -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "no DEFAULT for type " + type);
    };
  }

  Result dropTable(Ast.DropTable s) {
    List<TableIdentifier> ids = new ArrayList<>();
    for (QualifiedName name : s.names()) {
      TableIdentifier id = tables.require(name, session.currentSchema());
      if (tables.catalog().metadataLocation(id).isEmpty()) {
        if (tables.catalog().viewLocation(id).isPresent()) {
          throw new FloeException(SqlState.WRONG_OBJECT_TYPE, "\"" + id.name() + "\" is not a table", null,
              "Use DROP VIEW to remove a view.", 0, null);
        }
        if (s.ifExists()) {
          session.notice("table \"" + id.name() + "\" does not exist, skipping");
          continue;
        }
        throw new FloeException(SqlState.UNDEFINED_TABLE, "table \"" + id.name() + "\" does not exist");
      }
      ids.add(id);
    }
    new ConstraintDdl(session, tables).beforeDrop(ids, s.cascade());
    for (TableIdentifier id : ids) {
      drop(id, s.purge());
    }
    return new CommandResult("DROP TABLE", 0);
  }

  /** Drops a table from the catalog, and its tail's log with it. */
  private void drop(TableIdentifier id, boolean purge) {
    Optional<Table> table;
    try {
      table = session.engine().tables().current(id);
    } catch (RuntimeException unreadable) {
      // A table whose metadata cannot be read can still be dropped: its catalog entry goes. Its files stay,
      // since without its metadata Floe cannot tell which are its own (docs/recovery.md).
      tables.catalog().dropTable(id, false);
      tables.forget(id);
      session.notice("table \"" + id.name() + "\" was dropped" + (purge ? "; its files were kept" : "")
          + ": its metadata cannot be read (" + unreadable.getMessage() + ")");
      return;
    }
    tables.catalog().dropTable(id, purge);
    tables.forget(id);
    table.filter(TailLog::hasTail).ifPresent(t -> session.engine().tails().dropped(t.uuid().toString()));
    table.ifPresent(t -> dropState(t, purge));
  }

  /**
   * A change stream's state goes with its table (its name is the table's uuid, so a table made again under
   * the name starts a stream of its own); a crash before this leaves it to be dropped by hand.
   */
  private void dropState(Table target, boolean purge) {
    TableIdentifier state = ChangeState.idOf(target);
    ChangeIndex.forget(session.engine(), state.name());
    if (tables.catalog().metadataLocation(state).isPresent()) {
      tables.catalog().dropTable(state, purge);
      tables.forget(state);
    }
  }

  Result alterTable(Ast.AlterTable s) {
    TableIdentifier id = tables.require(s.name(), session.currentSchema());
    Optional<Table> found;
    try {
      found = tables.live(id);
    } catch (RuntimeException unreadable) {
      if (s.actions().size() == 1 && s.actions().get(0) instanceof RenameTable r) {
        // renaming needs only the catalog entry: a table whose metadata cannot be read can be renamed
        rename(id, r);
        return new CommandResult("ALTER TABLE", 0);
      }
      throw unreadable;
    }
    if (found.isEmpty()) {
      if (s.ifExists()) {
        session.notice("relation \"" + id.name() + "\" does not exist, skipping");
        return new CommandResult("ALTER TABLE", 0);
      }
      throw FloeException.undefinedTable(id.name());
    }
    Table table = found.get();
    // the tables its new foreign keys reference are marked first, each under its own lock
    new ConstraintDdl(session, tables).markReferenced(id, s.actions().stream().filter(a -> a instanceof
        Ast.AddConstraint).map(a -> ((Ast.AddConstraint) a).constraint()).toList());
    if (s.actions().get(0) instanceof Ast.Execute e && TableProcedures.withoutLock(e)) {
      AlterChecks.checkAlter(s, id, table);
      return TableProcedures.run(session, id, table, e); // takes the commit lock only to commit
    }
    if (s.actions().get(0) instanceof Ast.Execute e && ChangeRollback.applies(table, e)) {
      AlterChecks.checkAlter(s, id, table);
      return ChangeRollback.run(session, id, table, e); // the stream's lock first, then both tables' commit locks
    }
    if (!TailLog.hasTail(table) || AlterChecks.renameOnly(s)) {
      synchronized (tables.committer().lock(id)) {
        return alterTable(s, id, table, false);
      }
    }
    // The log's rows are of the old schema: they are all sealed, and none is sealed again until the log is
    // reopened on the new one. The log's seal lock, which ensures that, is taken before the table's commit
    // lock, in the order the log's own seals take them (docs/ARCHITECTURE.md, "Concurrency").
    AlterChecks.checkAlter(s, id, table); // an ALTER that is refused seals nothing
    return session.engine().tails().sealedWhile(id, table, () -> {
      table.refresh(); // the seal committed: alter the table as it is now
      Result result;
      synchronized (tables.committer().lock(id)) {
        result = alterTable(s, id, table, true);
      }
      session.engine().tails().reopen(table.uuid().toString());
      if (!TailLog.hasTail(session.engine().tables().current(id).orElseThrow())) {
        session.engine().tails().dropped(table.uuid().toString()); // every row is sealed: the log goes
      }
      return result;
    });
  }

  /** Alters the table, holding its commit lock; {@code sealed}: holding its tail's seal lock, all sealed. */
  private Result alterTable(Ast.AlterTable s, TableIdentifier id, Table table, boolean sealed) {
    table.refresh();
    AlterChecks.checkAlter(s, id, table);
    if (!sealed && TailLog.hasTail(table) && !AlterChecks.renameOnly(s)) {
      // another ALTER TABLE gave it a tail since it was read: the log's rows were not sealed
      throw changedConcurrently(id, null);
    }
    return alterTableChecked(s, id, table);
  }

  private static FloeException changedConcurrently(TableIdentifier id, Throwable cause) {
    return new FloeException(SqlState.SERIALIZATION_FAILURE,
        "could not alter table \"" + id.name() + "\": it was changed concurrently", cause);
  }


  /**
   * ALTER TABLE ... SET (tail = true): the table gets its offset column (NULL in the rows it has); its
   * log starts at offset 0.
   */
  private static void addTail(Transaction txn, TableIdentifier id) {
    Schema schema = txn.table().schema();
    if (schema.caseInsensitiveFindField(TailLog.OFFSET_COLUMN) != null) {
      throw new FloeException(SqlState.DUPLICATE_COLUMN, "table \"" + id.name() + "\" has a column \""
          + TailLog.OFFSET_COLUMN + "\", which a tail needs for its offsets");
    }
    txn.updateSchema().addColumn(TailLog.OFFSET_COLUMN, Types.LongType.get()).commit();
    TailLog.checkSchema(txn.table().schema());
  }

  private Result alterTableChecked(Ast.AlterTable s, TableIdentifier id, Table table) {
    if (s.actions().get(0) instanceof Ast.Execute e) {
      return TableProcedures.run(session, id, table, e); // EXECUTE is the statement's only action
    }
    List<RenameTable> renames = new ArrayList<>();
    Transaction txn = table.newTransaction();
    for (AlterAction action : s.actions()) {
      if (action instanceof RenameTable r) {
        renames.add(r);
        continue;
      }
      alter(txn, table, id, action);
    }
    if (!renames.isEmpty() && s.actions().size() > 1) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "RENAME TO cannot be combined with other actions",
          null, null, s.name().position(), null);
    }
    try {
      txn.commitTransaction();
    } catch (CommitFailedException e) {
      throw changedConcurrently(id, e);
    }
    for (RenameTable r : renames) {
      TableIdentifier to = rename(id, r);
      if (TailLog.hasTail(table)) {
        session.engine().tails().renamed(table, to);
      }
    }
    return new CommandResult("ALTER TABLE", 0);
  }

  /** Renames a table in the catalog (its files stay where they are); returns its new name. */
  private TableIdentifier rename(TableIdentifier id, RenameTable r) {
    Optional<Table> renamed;
    try {
      renamed = tables.live(id);
    } catch (RuntimeException unreadable) {
      renamed = Optional.empty(); // its metadata cannot be read, nor its keys: its catalog entry is renamed
    }
    renamed.ifPresent(t -> new ConstraintDdl(session, tables).checkRename(id, t));
    TableIdentifier to = tables.require(r.to(), id.namespace().level(0));
    if (r.to().parts().size() == 1) {
      to = TableIdentifier.of(id.namespace(), r.to().last());
    }
    requireNewTable(to, r.to());
    try {
      tables.catalog().renameTable(id, to);
    } catch (AlreadyExistsException e) {
      throw duplicateTable(to, r.to());
    }
    tables.forget(id);
    return to;
  }

  private void alter(Transaction txn, Table table, TableIdentifier id, AlterAction action) {
    Schema schema = txn.table().schema();
    int formatVersion = ((org.apache.iceberg.HasTableOperations) table).operations().current().formatVersion();
    if (action instanceof AddColumn a) {
      ColumnDef c = ValuesLiterals.typedDefault(a.column());
      if (schema.caseInsensitiveFindField(c.name()) != null) {
        if (a.ifNotExists()) {
          session.notice("column \"" + c.name() + "\" of relation \"" + id.name() + "\" already exists, skipping");
          return;
        }
        throw new FloeException(SqlState.DUPLICATE_COLUMN, "column \"" + c.name() + "\" of relation \""
            + id.name() + "\" already exists");
      }
      if (c.identity().isPresent()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot add a serial or identity column to an "
            + "existing table", null, "Create the table with it.", c.position(), null);
      }
      SessionContext.checkTableColumns(schema.columns().size() + 1);
      Type type = TypeMapping.toIceberg(c.type());
      // Existing rows take the default, so it must fit the column now (PostgreSQL checks it here too).
      Literal<?> def = c.defaultSql().isPresent() ? defaultValue(c, type, formatVersion, true) : null;
      if (c.notNull() && def == null && hasRows(txn.table())) {
        throw new FloeException(SqlState.NOT_NULL_VIOLATION, "column \"" + c.name()
            + "\" cannot be added as NOT NULL without a default: existing rows have no value", null, null,
            c.position(), null);
      }
      UpdateSchema update = txn.updateSchema();
      if (c.notNull()) {
        update.allowIncompatibleChanges().addRequiredColumn(c.name(), type, def);
      } else if (def != null) {
        update.addColumn(c.name(), type, def);
      } else {
        update.addColumn(c.name(), type);
      }
      update.commit();
      if (TypeMapping.needsDeclaredType(c.type())) {
        int newId = txn.table().schema().findField(c.name()).fieldId();
        txn.updateProperties().set(FloeProperties.columnSqlType(newId), TypeMapping.declaredTypeText(c.type()))
            .commit();
      }
    } else if (action instanceof DropColumn d) {
      Types.NestedField f = field(schema, d.name(), id, d.position(), d.ifExists());
      if (f == null) {
        session.notice("column \"" + d.name() + "\" of relation \"" + id.name() + "\" does not exist, skipping");
        return;
      }
      for (org.apache.iceberg.PartitionField pf : txn.table().spec().fields()) {
        if (pf.sourceId() == f.fieldId()) {
          throw new FloeException(SqlState.DEPENDENT_OBJECTS_STILL_EXIST, "cannot drop column \"" + f.name()
              + "\" because the table is partitioned by it", null, null, d.position(), null);
        }
      }
      new ConstraintDdl(session, tables).dropColumn(txn, id, f);
      txn.updateSchema().deleteColumn(f.name()).commit();
      String declared = FloeProperties.columnSqlType(f.fieldId());
      if (txn.table().properties().containsKey(declared)) {
        txn.updateProperties().remove(declared).commit();
      }
    } else if (action instanceof RenameColumn r) {
      Types.NestedField f = field(schema, r.from(), id, -1, false);
      if (schema.caseInsensitiveFindField(r.to()) != null) {
        throw new FloeException(SqlState.DUPLICATE_COLUMN, "column \"" + r.to() + "\" of relation \"" + id.name()
            + "\" already exists");
      }
      txn.updateSchema().renameColumn(f.name(), r.to()).commit();
      new ConstraintDdl(session, tables).renameColumn(txn, f.name(), r.to());
    } else if (action instanceof AlterColumnType t) {
      Types.NestedField f = field(schema, t.name(), id, t.position(), false);
      SqlType current = TypeMapping.fromIceberg(f.type(),
          Optional.ofNullable(txn.table().properties().get(FloeProperties.columnSqlType(f.fieldId()))));
      Type target = TypeMapping.toIceberg(t.type());
      boolean sameStorage = target.equals(f.type());
      if (!sameStorage && !widens(f.type(), target)) {
        throw new FloeException(SqlState.DATATYPE_MISMATCH, "column \"" + f.name() + "\" cannot be changed from "
            + current + " to " + t.type(), null,
            "Iceberg allows widening only: integer to bigint, real to double precision, numeric precision increases.",
            t.position(), null);
      }
      if (sameStorage && narrowsDeclared(current, t.type())) {
        throw new FloeException(SqlState.DATATYPE_MISMATCH, "column \"" + f.name() + "\" cannot be changed from "
            + current + " to " + t.type() + ": existing values may not fit", null, null, t.position(), null);
      }
      if (!sameStorage) {
        txn.updateSchema().updateColumn(f.name(), target.asPrimitiveType()).commit();
      }
      String declared = FloeProperties.columnSqlType(f.fieldId());
      UpdateProperties props = txn.updateProperties();
      if (TypeMapping.needsDeclaredType(t.type())) {
        props.set(declared, TypeMapping.declaredTypeText(t.type()));
      } else {
        props.remove(declared);
      }
      props.commit();
    } else if (action instanceof Ast.AddConstraint a) {
      new ConstraintDdl(session, tables).add(txn, id, a.constraint());
    } else if (action instanceof Ast.DropConstraint d) {
      new ConstraintDdl(session, tables).drop(txn, id, d);
    } else if (action instanceof Ast.SetDefault d) {
      setDefault(txn, id, schema, d);
    } else if (action instanceof DropNotNull n) {
      Types.NestedField f = field(schema, n.name(), id, n.position(), false);
      if (f.isRequired()) {
        txn.updateSchema().makeColumnOptional(f.name()).commit();
      }
    } else if (action instanceof SetProperties p) {
      TableOptions options = TableOptions.parse(p.properties(), List.of());
      if (options.partitioningGiven()) {
        org.apache.iceberg.UpdatePartitionSpec update = txn.updateSpec();
        for (org.apache.iceberg.PartitionField old : txn.table().spec().fields()) {
          update.removeField(old.name());
        }
        PartitionSpec spec = TableOptions.spec(schema, options.partitioning());
        // Iceberg names evolved fields by transform and argument (id_bucket_8, name_trunc_4), so a field
        // never takes the name an earlier spec gave a different transform.
        for (org.apache.iceberg.PartitionField pf : spec.fields()) {
          update.addField(org.apache.iceberg.expressions.Expressions.transform(
              schema.findColumnName(pf.sourceId()), pf.transform()));
        }
        update.commit();
      }
      if (options.sortedBy().isPresent()) {
        org.apache.iceberg.ReplaceSortOrder sort = txn.replaceSortOrder();
        for (Ast.SortField sf : options.sortedBy().get()) {
          Types.NestedField column = schema.caseInsensitiveFindField(sf.column());
          if (column == null) {
            throw new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + sf.column()
                + "\" named in sorted_by does not exist", null, null, sf.position(), null);
          }
          org.apache.iceberg.NullOrder nulls = sf.nullsFirst() ? org.apache.iceberg.NullOrder.NULLS_FIRST
              : org.apache.iceberg.NullOrder.NULLS_LAST;
          if (sf.descending()) {
            sort.desc(column.name(), nulls);
          } else {
            sort.asc(column.name(), nulls);
          }
        }
        sort.commit();
      }
      if (options.location().isPresent()) {
        txn.updateLocation().setLocation(tables.checkedLocation(options.location().get(), id)).commit();
      }
      for (String key : options.properties().keySet()) {
        boolean publishing = dev.floe.tail.Published.location(table.properties()).isPresent();
        if (key.startsWith(FloeProperties.PUBLISH_TO) || key.startsWith(FloeProperties.PUBLISH_STORAGE_PREFIX)
            || (publishing && key.equals(FloeProperties.TAIL) && !TailLog.hasTail(options.properties()))) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot set \"" + key + "\" of table \"" + id.name()
              + "\": where and how a log publishes is set when it is created", null,
              publishing ? "Log.retire() publishes every row and ends the log." : null, 0, null);
        }
      }
      if (!options.properties().isEmpty()) {
        UpdateProperties update = txn.updateProperties();
        options.properties().forEach(update::set);
        update.commit();
      }
      if (TailLog.hasTail(options.properties()) && !TailLog.hasTail(table)) {
        if (Constraints.any(txn.table()) || !Constraints.referrers(txn.table()).isEmpty()) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "table \"" + id.name() + "\" cannot have a tail: "
              + "it has constraints", null, "A tail acknowledges appends without reading the table; drop the "
              + "UNIQUE, CHECK and FOREIGN KEY constraints first.", 0, null);
        }
        addTail(txn, id);
        txn.updateProperties().set(FloeProperties.TAIL_OWNER, session.engine().warehouseId()).commit();
      }
    } else if (action instanceof UnsetProperties u) {
      UpdateProperties update = txn.updateProperties();
      for (String key : u.keys()) {
        if (key.startsWith(FloeProperties.PUBLISH_PREFIX) && txn.table().properties().containsKey(key)) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot reset \"" + key + "\" of table \""
              + id.name() + "\": where and how a log publishes is set when it is created");
        }
        if (!txn.table().properties().containsKey(key)) {
          if (u.ifExists()) {
            continue;
          }
          throw new FloeException(SqlState.UNDEFINED_OBJECT, "table \"" + id.name() + "\" has no property \"" + key
              + "\"");
        }
        if (key.toLowerCase(Locale.ROOT).startsWith(FloeProperties.COLUMN_PREFIX)) {
          throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "property \"" + key + "\" is managed by Floe");
        }
        update.remove(key);
      }
      update.commit();
    }
  }

  private static boolean hasRows(Table table) {
    org.apache.iceberg.Snapshot current = table.currentSnapshot();
    return current != null && !"0".equals(current.summary().get("total-records"));
  }

  /**
   * The column {@code name}, or 42703 (without a position, as PostgreSQL's DDL errors; {@code position} -1
   * for RENAME COLUMN, whose message names no relation).
   */
  private static Types.NestedField field(Schema schema, String name, TableIdentifier id, int position,
      boolean ifExists) {
    Types.NestedField f = schema.findField(name);
    if (f == null) {
      f = schema.caseInsensitiveFindField(name);
    }
    if (f == null && !ifExists) {
      // as PostgreSQL: no position, and RENAME COLUMN's message does not name the relation
      throw new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + name + "\"" + (position < 0 ? "" : " of relation \""
          + id.name() + "\"") + " does not exist");
    }
    return f;
  }

  private static boolean widens(Type from, Type to) {
    if (from.typeId() == Type.TypeID.INTEGER && to.typeId() == Type.TypeID.LONG) {
      return true;
    }
    if (from.typeId() == Type.TypeID.FLOAT && to.typeId() == Type.TypeID.DOUBLE) {
      return true;
    }
    if (from instanceof Types.DecimalType a && to instanceof Types.DecimalType b) {
      return a.scale() == b.scale() && b.precision() >= a.precision();
    }
    return false;
  }

  /** Same storage type, but the declared SQL type gets tighter (e.g. varchar(20) to varchar(5)). */
  private static boolean narrowsDeclared(SqlType from, SqlType to) {
    if (to.kind() == SqlType.Kind.SMALLINT && from.kind() != SqlType.Kind.SMALLINT) {
      return true;
    }
    if (to.kind() == SqlType.Kind.VARCHAR || to.kind() == SqlType.Kind.CHAR) {
      int newMax = to.precision();
      if (newMax == 0) {
        return false;
      }
      int oldMax = from.isString() ? from.precision() : 0;
      return oldMax == 0 || newMax < oldMax;
    }
    return false;
  }
}
