package dev.floe.sql;

import dev.floe.StatementKind;
import dev.floe.SqlType;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The statements Floe itself understands; queries stay SQL text for DuckDB, bound by {@link QueryBinder}. */
public final class Ast {
  private Ast() {}

  /**
   * The command words PostgreSQL names a statement by in errors ({@code INSERT}, {@code CREATE TABLE}):
   * "cannot execute CREATE TABLE in a read-only transaction".
   */
  public static String commandName(String text) {
    String[] words = text.strip().split("\\s+");
    String name = words[0].toUpperCase(java.util.Locale.ROOT);
    if ((name.equals("CREATE") || name.equals("DROP") || name.equals("ALTER")) && words.length > 1) {
      name += " " + words[1].toUpperCase(java.util.Locale.ROOT);
    }
    return name;
  }

  /**
   * A parsed statement. Its {@link #kind()} (and what follows from it) is stated by each statement, once:
   * callers read it rather than testing for statement classes.
   */
  public sealed interface Statement
      permits Query, Explain, CreateSchema, DropSchema, CreateTable, DropTable, AlterTable, Insert, Delete, Update,
          Merge, Truncate, ShowTables, ShowSchemas, Describe, CreateSequence, DropSequence, TransactionControl,
          Vacuum, CreateIndex, DropIndex, CreateView, DropView, AlterSequence {
    /** What the statement is; schema, table and sequence definitions are DDL unless they say otherwise. */
    default StatementKind kind() {
      return StatementKind.DDL;
    }

    /** Whether running it returns rows (a row-changing statement: only with RETURNING). */
    default boolean returnsRows() {
      return kind().returnsRows();
    }

    /** Calls the visitor's method for this kind of statement. */
    <R> R accept(Visitor<R> visitor);
  }

  /**
   * What to do with each kind of statement: an executor overrides the ones it handles; the others go to
   * {@link #otherwise}. Code that treats statements by kind implements this rather than testing classes.
   */
  public interface Visitor<R> {
    /** Any statement the visitor does not handle by its kind. */
    R otherwise(Statement statement);

    default R transactionControl(TransactionControl s) {
      return otherwise(s);
    }

    default R query(Query s) {
      return otherwise(s);
    }

    default R explain(Explain s) {
      return otherwise(s);
    }

    default R insert(Insert s) {
      return otherwise(s);
    }

    default R delete(Delete s) {
      return otherwise(s);
    }

    default R update(Update s) {
      return otherwise(s);
    }

    default R merge(Merge s) {
      return otherwise(s);
    }

    default R truncate(Truncate s) {
      return otherwise(s);
    }

    default R vacuum(Vacuum s) {
      return otherwise(s);
    }

    default R createTable(CreateTable s) {
      return otherwise(s);
    }

    default R createSchema(CreateSchema s) {
      return otherwise(s);
    }

    default R createSequence(CreateSequence s) {
      return otherwise(s);
    }

    default R dropSequence(DropSequence s) {
      return otherwise(s);
    }

    default R alterSequence(AlterSequence s) {
      return otherwise(s);
    }

    default R createIndex(CreateIndex s) {
      return otherwise(s);
    }

    default R dropIndex(DropIndex s) {
      return otherwise(s);
    }

    default R createView(CreateView s) {
      return otherwise(s);
    }

    default R dropView(DropView s) {
      return otherwise(s);
    }

    default R dropSchema(DropSchema s) {
      return otherwise(s);
    }

    default R dropTable(DropTable s) {
      return otherwise(s);
    }

    default R alterTable(AlterTable s) {
      return otherwise(s);
    }

    default R showTables(ShowTables s) {
      return otherwise(s);
    }

    default R showSchemas(ShowSchemas s) {
      return otherwise(s);
    }

    default R describe(Describe s) {
      return otherwise(s);
    }
  }

  /**
   * BEGIN / START TRANSACTION (with {@code readOnly}), COMMIT / END, ROLLBACK / ABORT, SAVEPOINT, RELEASE
   * [SAVEPOINT], ROLLBACK TO [SAVEPOINT], SET TRANSACTION; {@code savepoint} names the savepoint of
   * SAVEPOINT, RELEASE and ROLLBACK TO.
   */
  public record TransactionControl(Kind action, String savepoint, boolean readOnly, boolean isolation,
      boolean accessMode, String isolationLevel, boolean start) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.transactionControl(this);
    }

    /** SET_MODES: {@code SET TRANSACTION}, whose {@code isolation} and {@code accessMode} say what it sets. */
    public enum Kind { BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK_TO, SET_MODES }

    @Override
    public StatementKind kind() {
      return StatementKind.TRANSACTION;
    }

    /** COMMIT, ROLLBACK and ROLLBACK TO: they end (or leave) the block, and so run in a failed one. */
    public boolean endsBlock() {
      return action == Kind.COMMIT || action == Kind.ROLLBACK || action == Kind.ROLLBACK_TO;
    }

    /** The command tag PostgreSQL reports. */
    public String tag() {
      return switch (action) {
        case BEGIN -> start ? "START TRANSACTION" : "BEGIN";
        case COMMIT -> "COMMIT";
        case ROLLBACK, ROLLBACK_TO -> "ROLLBACK";
        case SAVEPOINT -> "SAVEPOINT";
        case RELEASE -> "RELEASE";
        case SET_MODES -> "SET";
      };
    }
  }

  /** A piece of SQL (an expression, a FROM list, a condition) kept as text, with where it starts. */
  public record Fragment(String text, int offset) {}

  /** {@code column = value}; {@code value} empty for DEFAULT. */
  public record Assignment(String column, Optional<Fragment> value, int position) {}

  /**
   * A query (SELECT, WITH, VALUES, FROM-first) left as text.
   *
   * @param offset where {@code text} starts in the statement, so positions in it map back
   */
  public record Query(String text, int offset) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.query(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.QUERY;
    }
  }

  public record Explain(boolean analyze, Query query) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.explain(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.UTILITY;
    }
  }

  public record CreateSchema(QualifiedName name, boolean ifNotExists) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.createSchema(this);
    }
  }

  public record DropSchema(List<QualifiedName> names, boolean ifExists, boolean cascade) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.dropSchema(this);
    }
  }

  /** A column definition; {@code defaultSql} is the DEFAULT expression's text, if any. */
  /**
   * A column definition.
   *
   * @param identity for {@code serial} types "serial", for {@code GENERATED ... AS IDENTITY} "always" or
   *     "by default"; empty otherwise
   */
  public record ColumnDef(String name, SqlType type, boolean notNull, Optional<String> defaultSql, int position,
      Optional<String> identity) {
    public ColumnDef(String name, SqlType type, boolean notNull, Optional<String> defaultSql, int position) {
      this(name, type, notNull, defaultSql, position, Optional.empty());
    }
  }

  /**
   * A partition field: {@code transform} is identity, year, month, day, hour, bucket, truncate or void;
   * {@code argument} the bucket count or truncate width.
   */
  public record PartitionField(String transform, String column, Optional<Integer> argument, int position) {}

  public record SortField(String column, boolean descending, boolean nullsFirst, int position) {}

  /** A table property value: a scalar (string, number, boolean, identifier) or an ARRAY[...] of strings. */
  public record PropertyValue(Optional<String> scalar, List<String> array, int position) {
    public static PropertyValue of(String value, int position) {
      return new PropertyValue(Optional.of(value), List.of(), position);
    }

    public static PropertyValue ofArray(List<String> values, int position) {
      return new PropertyValue(Optional.empty(), List.copyOf(values), position);
    }

    public boolean isArray() {
      return scalar.isEmpty();
    }
  }

  /**
   * CREATE TABLE: either {@code columns} (definitions) or {@code asQuery}, whose output columns
   * {@code columnNames} renames (the first n of them).
   */
  public record CreateTable(
      QualifiedName name,
      boolean ifNotExists,
      List<ColumnDef> columns,
      List<String> columnNames,
      List<PartitionField> partitioning,
      List<String> primaryKey,
      Map<String, PropertyValue> properties,
      Optional<Query> asQuery,
      boolean withData,
      List<TableConstraint> constraints,
      Optional<TempTable> temporary,
      int primaryKeyPosition)
      implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.createTable(this);
    }
  }

  /** DROP TABLE; {@code cascade} also drops the foreign keys of other tables that reference them. */
  public record DropTable(List<QualifiedName> names, boolean ifExists, boolean purge, boolean cascade)
      implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.dropTable(this);
    }
  }

  public record AlterTable(QualifiedName name, boolean ifExists, List<AlterAction> actions) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.alterTable(this);
    }
  }

  public sealed interface AlterAction
      permits AddColumn, DropColumn, RenameColumn, AlterColumnType, DropNotNull, SetProperties, UnsetProperties,
          RenameTable, Execute, AddConstraint, DropConstraint, SetDefault {}

  /** {@code ALTER COLUMN c SET DEFAULT expression} ({@code sql}), or DROP DEFAULT (empty). */
  public record SetDefault(String column, Optional<String> sql, int position) implements AlterAction {}

  /**
   * A CREATE TEMP TABLE's: the table is the session's own, and {@code onCommit} says what a transaction
   * block's COMMIT does to it ({@code PRESERVE ROWS}, {@code DELETE ROWS}, {@code DROP}).
   */
  public record TempTable(String onCommit) {}

  /** What a table constraint other than the primary key asks of the table's rows. */
  public enum ConstraintKind { UNIQUE, CHECK, FOREIGN_KEY }

  /**
   * A UNIQUE, CHECK or FOREIGN KEY constraint, of a column or of the table.
   *
   * @param name its name, when the statement gives one
   * @param columns the constrained columns (UNIQUE, FOREIGN KEY; for a column's CHECK, that column)
   * @param check a CHECK's expression, as written
   * @param references the table a FOREIGN KEY references
   * @param referencedColumns its columns (empty: its primary key)
   * @param onDelete what a FOREIGN KEY does when a referenced row goes: "a" (no action), "r" (restrict),
   *     "c" (cascade), "n" (set null), "d" (set default), as PostgreSQL's pg_constraint spells them
   * @param onUpdate the same, when a referenced key changes
   * @param validate whether the rows already in the table are checked (not for ADD ... NOT VALID)
   * @param position 1-based offset of the constraint, for errors
   */
  public record TableConstraint(Optional<String> name, ConstraintKind kind, List<String> columns, String check,
      Optional<QualifiedName> references, List<String> referencedColumns, char onDelete, char onUpdate,
      boolean validate, int position) {
    public TableConstraint {
      columns = List.copyOf(columns);
      referencedColumns = List.copyOf(referencedColumns);
    }
  }

  /** {@code ALTER TABLE t ADD [CONSTRAINT name] UNIQUE | CHECK | FOREIGN KEY ...}. */
  public record AddConstraint(TableConstraint constraint) implements AlterAction {}

  /** {@code ALTER TABLE t DROP CONSTRAINT [IF EXISTS] name [CASCADE | RESTRICT]}. */
  public record DropConstraint(String name, boolean ifExists, boolean cascade, int position) implements AlterAction {}

  /**
   * {@code ALTER TABLE t EXECUTE procedure(args)}: a table procedure, as Trino's Iceberg connector names
   * them ({@code rollback_to_snapshot(id)}); it is the statement's only action.
   *
   * @param position 1-based offset of the procedure's name
   */
  public record Execute(String procedure, List<ProcedureArgument> arguments, int position) implements AlterAction {
    public Execute {
      arguments = List.copyOf(arguments);
    }
  }

  /**
   * A procedure's argument: a constant, positional or named ({@code name => value}).
   *
   * @param name the argument's name, or null when positional
   * @param value the constant's text: a number's digits (with its sign) or a string's value
   * @param string whether it was written as a string
   */
  public record ProcedureArgument(String name, String value, boolean string, int position) {}

  public record AddColumn(ColumnDef column, boolean ifNotExists) implements AlterAction {}

  public record DropColumn(String name, boolean ifExists, int position) implements AlterAction {}

  public record RenameColumn(String from, String to, int position) implements AlterAction {}

  public record AlterColumnType(String name, SqlType type, int position) implements AlterAction {}

  public record DropNotNull(String name, int position) implements AlterAction {}

  public record SetProperties(Map<String, PropertyValue> properties) implements AlterAction {}

  public record UnsetProperties(List<String> keys, boolean ifExists) implements AlterAction {}

  public record RenameTable(QualifiedName to) implements AlterAction {}

  /**
   * INSERT INTO table [AS alias] [(columns)] [OVERRIDING {SYSTEM | USER} VALUE] source | DEFAULT VALUES
   * [ON CONFLICT ...] [RETURNING ...].
   *
   * @param columns the target columns as written, empty for "all columns in order"
   * @param columnPositions where each of {@code columns} is in the statement (1-based), for errors
   * @param overriding "system" or "user" when OVERRIDING is given
   * @param source the rows to insert; empty for DEFAULT VALUES
   */
  public record Insert(QualifiedName table, Optional<String> alias, List<String> columns,
      List<Integer> columnPositions, Optional<String> overriding,
      Optional<Query> source, Optional<OnConflict> onConflict, Optional<Fragment> returning) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.insert(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.INSERT;
    }

    @Override
    public boolean returnsRows() {
      return returning().isPresent();
    }
  }

  /**
   * {@code ON CONFLICT [(columns)] DO NOTHING | DO UPDATE SET ... [WHERE ...]}.
   *
   * @param columns the conflict target; empty when not given
   */
  public record OnConflict(List<String> columns, boolean doNothing, List<Assignment> set, Optional<Fragment> where,
      int position) {}

  /** {@code DELETE FROM table [AS alias] [USING ...] [WHERE ...] [RETURNING ...]}. */
  public record Delete(QualifiedName table, Optional<String> alias, Optional<Fragment> using,
      Optional<Fragment> where, Optional<Fragment> returning, Optional<Fragment> with) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.delete(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.DELETE;
    }

    @Override
    public boolean returnsRows() {
      return returning().isPresent();
    }
  }

  /** {@code UPDATE table [AS alias] SET ... [FROM ...] [WHERE ...] [RETURNING ...]}. */
  public record Update(QualifiedName table, Optional<String> alias, List<Assignment> set, Optional<Fragment> from,
      Optional<Fragment> where, Optional<Fragment> returning, Optional<Fragment> with) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.update(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.UPDATE;
    }

    @Override
    public boolean returnsRows() {
      return returning().isPresent();
    }
  }

  /** {@code MERGE INTO table [AS alias] USING source ON condition WHEN ...}. */
  public record Merge(QualifiedName table, Optional<String> alias, Fragment source, Fragment on,
      List<MergeClause> clauses, Optional<Fragment> with) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.merge(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.MERGE;
    }
  }

  /** What a WHEN clause of MERGE does. */
  public enum MergeAction { UPDATE, DELETE, INSERT, NOTHING }

  /**
   * One WHEN clause.
   *
   * @param matched WHEN MATCHED (true) or WHEN NOT MATCHED
   * @param insertColumns for INSERT, the target columns (empty: all, in order)
   * @param insertValues for INSERT, the values, each an expression or DEFAULT (empty); none with
   *     DEFAULT VALUES
   */
  public record MergeClause(boolean matched, Optional<Fragment> condition, MergeAction action, List<Assignment> set,
      List<String> insertColumns, List<Optional<Fragment>> insertValues, int position) {}

  /** {@code TRUNCATE [TABLE] t [, ...]}. */
  /** TRUNCATE; {@code cascade} also truncates the tables whose foreign keys reference them. */
  public record Truncate(List<QualifiedName> tables, boolean cascade) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.truncate(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.TRUNCATE;
    }
  }

  /**
   * {@code VACUUM [FULL] [VERBOSE] [ANALYZE] [table, ...]} or {@code VACUUM (option, ...) [table, ...]}:
   * maintenance of the named tables (none: every table) by their policies.
   */
  public record Vacuum(List<QualifiedName> tables, boolean full, boolean verbose) implements Statement {
    public Vacuum {
      tables = List.copyOf(tables);
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.vacuum(this);
    }
  }

  /** {@code CREATE SEQUENCE [IF NOT EXISTS] name [START [WITH] n] [...]}. */
  public record CreateSequence(QualifiedName name, boolean ifNotExists, long start, long increment)
      implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.createSequence(this);
    }
  }

  /**
   * {@code CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON table [USING method] (column [ASC|DESC] [NULLS
   * FIRST|LAST], ...)}.
   *
   * @param name the index's name; empty: PostgreSQL's generated one ({@code table_column_idx})
   * @param columns the indexed columns, each as a sort field (its direction and NULLs order)
   */
  public record CreateIndex(Optional<String> name, boolean unique, boolean ifNotExists, QualifiedName table,
      List<SortField> columns, int position) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.createIndex(this);
    }
  }

  /**
   * {@code CREATE [OR REPLACE] VIEW name [(column, ...)] AS query}.
   *
   * @param columns names for the query's first columns (empty: the query's own)
   */
  public record CreateView(QualifiedName name, boolean orReplace, List<String> columns, Query query)
      implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.createView(this);
    }
  }

  /** {@code DROP VIEW [IF EXISTS] name [, ...] [CASCADE | RESTRICT]}. */
  public record DropView(List<QualifiedName> names, boolean ifExists) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.dropView(this);
    }
  }

  /** {@code DROP INDEX [IF EXISTS] name [, ...] [CASCADE | RESTRICT]}. */
  public record DropIndex(List<QualifiedName> names, boolean ifExists) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.dropIndex(this);
    }
  }

  /**
   * {@code ALTER SEQUENCE [IF EXISTS] name [RESTART [[WITH] n]] [OWNED BY ...]}.
   *
   * @param restart the value handed out next, when it restarts
   */
  public record AlterSequence(QualifiedName name, boolean ifExists, Optional<Long> restart) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.alterSequence(this);
    }
  }

  /** {@code DROP SEQUENCE [IF EXISTS] name [, ...]}. */
  public record DropSequence(List<QualifiedName> names, boolean ifExists) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.dropSequence(this);
    }
  }

  public record ShowTables(Optional<QualifiedName> schema) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.showTables(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.UTILITY;
    }
  }

  public record ShowSchemas() implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.showSchemas(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.UTILITY;
    }
  }

  public record Describe(QualifiedName table) implements Statement {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.describe(this);
    }

    @Override
    public StatementKind kind() {
      return StatementKind.UTILITY;
    }
  }
}
