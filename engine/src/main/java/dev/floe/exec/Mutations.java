package dev.floe.exec;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.Composer;
import dev.floe.sql.Lexer;
import dev.floe.sql.QueryBinder;
import dev.floe.types.IcebergValues;
import dev.floe.types.SqlLiterals;
import dev.floe.types.TypeMapping;
import dev.floe.commit.TableChange;
import dev.floe.write.DeltaWriter;
import dev.floe.write.Inserter;
import java.sql.PreparedStatement;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.IntUnaryOperator;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;

/**
 * Row-level statements: DELETE, UPDATE, MERGE, INSERT with a primary key, ON CONFLICT or RETURNING, and
 * TRUNCATE. Each runs in three steps:
 *
 * <ol>
 *   <li>DuckDB computes the change from one snapshot of the target: the rows that go away, named by
 *       (data file, position), and the rows that arrive, cast and checked like INSERT's; both are
 *       materialised in temporary tables, so the statement sees one consistent input even with volatile
 *       functions;
 *   <li>{@link DeltaWriter} writes delete files (merge-on-read) or rewritten data files (copy-on-write),
 *       per the table's {@code write.delete.mode} / {@code write.update.mode} / {@code write.merge.mode};
 *   <li>one Iceberg RowDelta commits it, validated against everything committed since that snapshot:
 *       a data file it deletes from that was removed, or that got new deletes matching the statement's
 *       filter, or (with a primary key) new rows with its keys, fail the statement with 40001.
 * </ol>
 *
 * A statement that fails at any step leaves the table as it was and deletes what it wrote.
 */
final class Mutations {
  private static final String FILE = dev.floe.read.ScanSql.ROW_FILE;
  private static final String POS = dev.floe.read.ScanSql.ROW_POSITION;

  private final SessionContext session;
  private final Tables tables;
  private final String suffix = UUID.randomUUID().toString().replace("-", "");
  private final List<String> temps = new ArrayList<>();
  /** Row counts of the temporary tables, as their creation reported them. */
  private final Map<String, Long> sizes = new HashMap<>();

  Mutations(SessionContext session, Tables tables) {
    this.session = session;
    this.tables = tables;
  }

  /** The target of a statement: its live table (for the commit) and its columns. */
  private record Target(TableIdentifier id, Table live, Schema schema, List<Column> columns, String alias,
      List<String> keys) {}

  private Target target(dev.floe.sql.QualifiedName name, Optional<String> alias) {
    return target(name, alias, true);
  }

  /**
   * @param seal seal a tail first (a statement that changes rows); an append to the tail does not, and
   *     only looks at the table (in a block it is not the block's to write)
   */
  private Target target(dev.floe.sql.QualifiedName name, Optional<String> alias, boolean seal) {
    TableIdentifier id = tables.require(name, session.currentSchema());
    Table live = (seal ? tables.live(id) : tables.snapshotOf(id)).orElseThrow(() -> new FloeException(
        SqlState.UNDEFINED_TABLE,
        "relation \"" + id.name() + "\" does not exist", null, null, name.position(), null));
    if (dev.floe.tail.Published.location(live.properties()).isPresent()) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot change rows of table \"" + id.name()
          + "\": its log publishes to " + dev.floe.tail.Published.location(live.properties()).get()
          + ", and a published log is append-only", null, null, name.position(), null);
    }
    if (seal && dev.floe.tail.TailLog.hasTail(live)) {
      if (tables.inTransaction()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot change rows of table \"" + id.name()
            + "\" in a transaction block: it has a tail", null, "Run the statement outside the block (autocommit).",
            name.position(), null);
      }
      // the statement changes rows wherever they are: the unsealed ones are sealed into files first
      session.engine().tails().flush(id, live);
      live = tables.live(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    }
    Schema schema = live.schema();
    List<String> keys = new ArrayList<>();
    for (int fieldId : schema.identifierFieldIds()) {
      keys.add(schema.findField(fieldId).name());
    }
    return new Target(id, live, schema, TypeMapping.columns(schema, live.properties()), alias.orElse(id.name()),
        keys);
  }

  /**
   * Temporary tables of at most this many rows outlive their statement: the session's next statement
   * replaces them ({@code CREATE OR REPLACE}), which spares a small statement its DROP.
   */
  private static final long KEPT_ROWS = 1_000;

  /**
   * A temporary table for this statement. Tables read only while the statement runs have one name per
   * session and kind; RETURNING rows, which a client may still be reading when the session runs its next
   * statement, get a name of their own.
   */
  private String temp(String kind) {
    String name = "__floe_" + kind + (kind.equals("ret") ? "_" + suffix : "");
    temps.add(name);
    return name;
  }

  /** Materialises a query as a temporary table, and remembers its row count. */
  private String materialize(String kind, String sql, IntUnaryOperator positions) {
    String name = temp(kind);
    sizes.put(name, session.update("CREATE OR REPLACE TEMP TABLE " + name + " AS " + sql, positions));
    return name;
  }

  /** Drops the statement's temporary tables, except small ones the next statement will replace. */
  void cleanup() {
    StringBuilder drops = new StringBuilder();
    for (String t : temps) {
      Long rows = sizes.get(t);
      if (t.endsWith(suffix) || rows == null || rows > KEPT_ROWS) {
        drops.append("DROP TABLE IF EXISTS ").append(t).append(";");
      }
    }
    temps.clear();
    sizes.clear();
    if (drops.isEmpty()) {
      return;
    }
    try {
      session.execute(drops.toString(), o -> 0);
    } catch (FloeException ignored) {
      // temporary tables die with the session anyway
    }
  }

  // ------------------------------------------------------------------ DELETE

  Result delete(Ast.Delete s) {
    Target t = target(s.table(), s.alias());
    String a = Lexer.quoteIdentifier(t.alias());
    // Only a USING join can name a target row twice.
    Composer c = with(s.with()).add("SELECT " + (s.using().isPresent() ? "DISTINCT " : "") + a + "." + FILE + ", "
        + a + "." + POS);
    if (s.returning().isPresent()) {
      for (Column col : t.columns()) {
        c.add(", " + a + "." + Lexer.quoteIdentifier(col.name()));
      }
    }
    c.add(" FROM " + Relations.TARGET + " AS " + a);
    s.using().ifPresent(u -> c.add(", ").add(u));
    s.where().ifPresent(w -> c.add(" WHERE ").add(w));
    Relations relations = session.relations().target(t.id());
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
    Relations.TableRelation read = relations.targetRelation();
    String changes = materialize("chg", bound.sql(), bound::originalPosition);
    long count = count(changes, "");
    Optional<String> returning = s.returning().map(r -> returningTable(r, "SELECT * EXCLUDE (" + FILE + ", " + POS
        + ") FROM " + changes, t.alias(), relations));
    if (count > 0) {
      DeltaWriter.Deleted deleted = count <= Inserter.FEW_ROWS ? readFew(changes, false).deleted()
          : new DeltaWriter.Deleted("SELECT " + FILE + ", " + POS + " FROM " + changes, count, null);
      commit(t, relations, read, deleted, null, mode(t, TableProperties.DELETE_MODE), Optional.empty());
    }
    return result("DELETE " + count, returning);
  }

  // ------------------------------------------------------------------ UPDATE

  Result update(Ast.Update s) {
    Target t = target(s.table(), s.alias());
    String a = Lexer.quoteIdentifier(t.alias());
    Map<String, Ast.Assignment> set = assignments(t, s.set());
    // Only a FROM join can name a target row twice; PostgreSQL then updates it once, with one of them.
    Composer c = with(s.with()).add("SELECT " + (s.from().isPresent() ? "DISTINCT ON (" + a + "." + FILE + ", " + a
        + "." + POS + ") " : "") + a + "." + FILE + ", " + a + "." + POS);
    for (int k = 0; k < t.columns().size(); k++) {
      Column col = t.columns().get(k);
      c.add(", ");
      Ast.Assignment assign = set.get(col.name());
      if (assign == null) {
        c.add(a + "." + Lexer.quoteIdentifier(col.name()));
      } else if (assign.value().isEmpty()) {
        c.add(defaultSql(t, col));
      } else {
        c.add("(").add(assign.value().get()).add(")");
      }
      c.add(" AS " + value(k));
    }
    c.add(" FROM " + Relations.TARGET + " AS " + a);
    s.from().ifPresent(f -> c.add(", ").add(f));
    s.where().ifPresent(w -> c.add(" WHERE ").add(w));
    Relations relations = session.relations().target(t.id());
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
    Relations.TableRelation read = relations.targetRelation();
    String changes = materialize("chg", bound.sql(), bound::originalPosition);
    long count = count(changes, "");
    // A small change is read once: the column types for the assignment check, the positions, and the
    // values (which become the new rows, when nothing is left for DuckDB to do to them).
    Few few = count > 0 && count <= Inserter.FEW_ROWS ? readFew(changes, true) : null;
    checkAssignable(t, bound, few != null ? few.types() : columnTypes(changes), set, 2);
    Set<String> unchanged = new HashSet<>();
    t.columns().forEach(col -> unchanged.add(col.name()));
    unchanged.removeAll(set.keySet());
    String newRows = newRows(t, changes, "", unchanged);
    boolean keysChange = t.keys().stream().anyMatch(set::containsKey);
    Optional<String> returning = s.returning().map(r -> returningTable(r, "SELECT * FROM " + newRows, t.alias(),
        relations));
    if (count > 0) {
      DeltaWriter.Deleted deleted = few != null ? few.deleted()
          : new DeltaWriter.Deleted("SELECT " + FILE + ", " + POS + " FROM " + changes, count, null);
      if (keysChange) {
        checkKeys(t, newRows, deleted.sql(), relations);
      }
      List<Record> records = few != null ? newRecords(t, few, set) : null;
      commit(t, relations, read, deleted, records != null ? Inserter.Rows.records(records)
          : Inserter.Rows.query("SELECT * FROM " + newRows, count), mode(t, TableProperties.UPDATE_MODE),
          keysChange ? keyFilter(t, newRows) : Optional.empty());
    }
    return result("UPDATE " + count, returning);
  }

  /** The assignments by column, checked: the columns exist, each is assigned once. */
  private static Map<String, Ast.Assignment> assignments(Target t, List<Ast.Assignment> list) {
    Map<String, Ast.Assignment> set = new LinkedHashMap<>();
    for (Ast.Assignment assign : list) {
      Column col = column(t, assign.column()).orElseThrow(() -> new FloeException(SqlState.UNDEFINED_COLUMN,
          "column \"" + assign.column() + "\" of relation \"" + t.id().name() + "\" does not exist", null, null,
          assign.position(), null));
      if (set.put(col.name(), assign) != null) {
        throw FloeException.syntax("multiple assignments to same column \"" + col.name() + "\"", assign.position());
      }
      if (assign.value().isPresent()
          && "always".equals(t.live().properties().get(Ddl.IDENTITY_PROPERTY + col.fieldId()))) {
        throw new FloeException(SqlState.GENERATED_ALWAYS, "column \"" + col.name() + "\" can only be updated to "
            + "DEFAULT", "Column \"" + col.name() + "\" is an identity column defined as GENERATED ALWAYS.", null,
            assign.position(), null);
      }
    }
    return set;
  }

  private static Optional<Column> column(Target t, String name) {
    for (Column c : t.columns()) {
      if (c.name().equals(name)) {
        return Optional.of(c);
      }
    }
    for (Column c : t.columns()) {
      if (c.name().equalsIgnoreCase(name)) {
        return Optional.of(c);
      }
    }
    return Optional.empty();
  }

  /**
   * PostgreSQL's assignment rules for SET values (42804, before anything is written), checked on the
   * types of the materialised change table, whose column {@code first + k} is column k's new value.
   */
  private void checkAssignable(Target t, QueryBinder.Bound bound, List<String> types, Map<String, Ast.Assignment> set,
      int first) {
    for (int k = 0; k < t.columns().size(); k++) {
      Column col = t.columns().get(k);
      Ast.Assignment assign = set.get(col.name());
      if (assign == null || assign.value().isEmpty()) {
        continue;
      }
      int index = first + k;
      boolean literal = index < bound.untypedLiterals().size() && bound.untypedLiterals().get(index);
      if (!Assignment.allowed(col.type(), types.get(index), literal)) {
        throw new FloeException(SqlState.DATATYPE_MISMATCH, "column \"" + col.name() + "\" is of type "
            + col.type() + " but expression is of type " + TypeMapping.fromDuckdb(types.get(index)), null,
            "You will need to rewrite or cast the expression.", assign.position(), null);
      }
    }
  }

  /**
   * A small change table, read: its column types, the rows it deletes with their positions, and when
   * asked its values after {@code __floe_file} and {@code __floe_pos} as JDBC gives them
   * ({@link IcebergValues#jdbcValue}; null when a value could not be read so).
   */
  private record Few(List<String> types, DeltaWriter.Deleted deleted, List<Object[]> values) {}

  /**
   * Reads a small change table (at most {@link Inserter#FEW_ROWS} rows) whose first two
   * columns are {@code __floe_file} and {@code __floe_pos}: one query that gives the column types and
   * the positions, which the delete writers then use without a query of their own.
   */
  private Few readFew(String changes, boolean withValues) {
    Map<String, List<Long>> byFile = new LinkedHashMap<>();
    List<String> types = new ArrayList<>();
    List<Object[]> values = withValues ? new ArrayList<>() : null;
    try (var st = session.duck().createStatement(); var rs = st.executeQuery("SELECT * FROM " + changes)) {
      ResultSetMetaData md = rs.getMetaData();
      for (int i = 1; i <= md.getColumnCount(); i++) {
        types.add(md.getColumnTypeName(i));
      }
      while (rs.next()) {
        byFile.computeIfAbsent(rs.getString(1), f -> new ArrayList<>()).add(rs.getLong(2));
        if (values != null) {
          Object[] row = new Object[types.size() - 2];
          try {
            for (int i = 0; i < row.length; i++) {
              row[i] = IcebergValues.jdbcValue(rs, i + 3, types.get(i + 2));
            }
            values.add(row);
          } catch (SQLException | RuntimeException e) {
            values = null; // a value the driver cannot give as such: the rows are written by DuckDB
          }
        }
      }
    } catch (SQLException e) {
      throw DuckErrors.map(e, o -> 0);
    }
    Map<String, long[]> positions = new LinkedHashMap<>();
    long rows = 0;
    for (Map.Entry<String, List<Long>> e : byFile.entrySet()) {
      long[] sorted = e.getValue().stream().mapToLong(Long::longValue).sorted().distinct().toArray();
      positions.put(e.getKey(), sorted);
      rows += sorted.length;
    }
    return new Few(types, new DeltaWriter.Deleted("SELECT " + FILE + ", " + POS + " FROM " + changes, rows,
        positions), values);
  }

  /**
   * The new rows of a small UPDATE as Iceberg records, taken from its change table's values when nothing
   * is left for DuckDB to do to them: every value already has its column's stored type, no assigned
   * value needs a check beyond that (a length or range limit), and no NOT NULL column is assigned a
   * NULL. Otherwise null, and DuckDB writes them, raising the precise error where there is one.
   * Written in the JVM, one UPDATE runs one DuckDB statement fewer (docs/decisions/0003).
   */
  private List<Record> newRecords(Target t, Few few, Map<String, Ast.Assignment> set) {
    if (few.values() == null || !Inserter.writesInJvm(t.live(), t.schema())) {
      return null;
    }
    int n = t.columns().size();
    Types.NestedField[] fields = new Types.NestedField[n];
    for (int k = 0; k < n; k++) {
      Column col = t.columns().get(k);
      fields[k] = t.schema().findField(col.fieldId());
      // unchanged values come as the target's scan gives them (smallint columns as SMALLINT)
      if (fields[k] == null || !TypeMapping.isDuckdbType(few.types().get(2 + k), TypeMapping.duckdbType(col,
          fields[k].type()))) {
        return null;
      }
      String stored = TypeMapping.duckdbType(fields[k].type());
      if (set.containsKey(col.name())
          && !Inserts.checked(t.id().name(), col, fields[k].type(), "v").equals("CAST(v AS " + stored + ")")) {
        return null;
      }
    }
    List<Record> records = new ArrayList<>(few.values().size());
    for (Object[] values : few.values()) {
      GenericRecord row = GenericRecord.create(t.schema());
      for (int k = 0; k < n; k++) {
        Column col = t.columns().get(k);
        if (values[k] == null && !col.nullable() && set.containsKey(col.name())) {
          return null;
        }
        try {
          Object value = IcebergValues.internal(fields[k].type(), values[k]);
          if (set.containsKey(col.name()) && !StoredValues.storable(fields[k].type(), value)) {
            return null; // DuckDB's write raises the error
          }
          row.setField(fields[k].name(), value);
        } catch (RuntimeException e) {
          return null;
        }
      }
      records.add(row);
    }
    return records;
  }

  private List<String> columnTypes(String table) {
    try (var st = session.duck().createStatement(); var rs = st.executeQuery("SELECT * FROM " + table + " LIMIT 0")) {
      ResultSetMetaData md = rs.getMetaData();
      List<String> types = new ArrayList<>();
      for (int i = 1; i <= md.getColumnCount(); i++) {
        types.add(md.getColumnTypeName(i));
      }
      return types;
    } catch (SQLException e) {
      throw DuckErrors.map(e, o -> 0);
    }
  }

  // ------------------------------------------------------------------ MERGE

  Result merge(Ast.Merge s) {
    Target t = target(s.table(), s.alias());
    String a = Lexer.quoteIdentifier(t.alias());
    List<Ast.MergeClause> clauses = s.clauses();
    // The action code of a row: clause k (1-based) if it matched, 1000 + k if it did not; 0 for nothing.
    Composer action = new Composer().add("(CASE WHEN " + a + "." + FILE + " IS NOT NULL THEN ");
    boolean anyMatched = whenClauses(action, clauses, true);
    action.add(" ELSE ");
    boolean anyNotMatched = whenClauses(action, clauses, false);
    action.add(" END)");
    if (!anyMatched && !anyNotMatched) {
      throw FloeException.syntax("MERGE needs a WHEN clause", s.on().offset() + 1);
    }
    Composer c = with(s.with()).add("SELECT ");
    c.add(action);
    c.add(" AS __floe_action, " + a + "." + FILE + ", " + a + "." + POS);
    List<Map<String, Ast.Assignment>> updates = new ArrayList<>();
    List<Map<String, Ast.Fragment>> inserts = new ArrayList<>();
    for (Ast.MergeClause clause : clauses) {
      updates.add(clause.action() == Ast.MergeAction.UPDATE ? assignments(t, clause.set()) : Map.of());
      inserts.add(clause.action() == Ast.MergeAction.INSERT ? insertValues(t, clause) : Map.of());
    }
    for (int col = 0; col < t.columns().size(); col++) {
      Column column = t.columns().get(col);
      String stored = TypeMapping.duckdbType(column, t.schema().findField(column.fieldId()).type());
      if (clauses.stream().noneMatch(x -> x.action() == Ast.MergeAction.UPDATE
          || x.action() == Ast.MergeAction.INSERT)) {
        c.add(", CAST(NULL AS " + stored + ") AS " + value(col));
        continue;
      }
      c.add(", CASE ");
      c.add(action);
      for (int k = 0; k < clauses.size(); k++) {
        Ast.MergeClause clause = clauses.get(k);
        if (clause.action() == Ast.MergeAction.UPDATE) {
          Ast.Assignment assign = updates.get(k).get(column.name());
          c.add(" WHEN " + (k + 1) + " THEN CAST(");
          if (assign == null) {
            c.add(a + "." + Lexer.quoteIdentifier(column.name()));
          } else if (assign.value().isEmpty()) {
            c.add(defaultSql(t, column));
          } else {
            c.add("(").add(assign.value().get()).add(")");
          }
          c.add(" AS " + stored + ")");
        } else if (clause.action() == Ast.MergeAction.INSERT) {
          Ast.Fragment v = inserts.get(k).get(column.name());
          c.add(" WHEN " + (1001 + k) + " THEN CAST(");
          if (v == null || v.text().equalsIgnoreCase("default")) {
            c.add(defaultSql(t, column));
          } else {
            c.add("(").add(v).add(")");
          }
          c.add(" AS " + stored + ")");
        }
      }
      c.add(" END AS " + value(col));
    }
    c.add(" FROM ").add(s.source()).add(" LEFT JOIN " + Relations.TARGET + " AS " + a + " ON ").add(s.on());
    Relations relations = session.relations().target(t.id());
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
    Relations.TableRelation read = relations.targetRelation();
    String changes = materialize("chg", bound.sql(), bound::originalPosition);
    List<String> removing = new ArrayList<>();
    List<String> adding = new ArrayList<>();
    for (int k = 0; k < clauses.size(); k++) {
      Ast.MergeAction kind = clauses.get(k).action();
      int code = clauses.get(k).matched() ? k + 1 : 1001 + k;
      if (kind == Ast.MergeAction.UPDATE || kind == Ast.MergeAction.DELETE) {
        removing.add(Integer.toString(code));
      }
      if (kind == Ast.MergeAction.UPDATE || kind == Ast.MergeAction.INSERT) {
        adding.add(Integer.toString(code));
      }
    }
    String removeFilter = removing.isEmpty() ? "false" : "__floe_action IN (" + String.join(", ", removing) + ")";
    String addFilter = adding.isEmpty() ? "false" : "__floe_action IN (" + String.join(", ", adding) + ")";
    // As in PostgreSQL, a target row is an error only when a second source row would change it again:
    // matches that no clause acts on (or DO NOTHING) do not count.
    Object[] twice = session.queryRow("SELECT " + FILE + ", " + POS + " FROM " + changes + " WHERE " + FILE
        + " IS NOT NULL AND (" + removeFilter + ") GROUP BY 1, 2 HAVING count(*) > 1 LIMIT 1", o -> 0);
    if (twice != null) {
      throw new FloeException(SqlState.CARDINALITY_VIOLATION, "MERGE command cannot affect row a second time", null,
          "Ensure that not more than one source row matches any one target row.", s.on().offset() + 1, null);
    }
    long count = count(changes, " WHERE " + removeFilter + " OR " + addFilter);
    if (count > 0) {
      String newRows = newRows(t, changes, " WHERE " + addFilter);
      String deleted = "SELECT " + FILE + ", " + POS + " FROM " + changes + " WHERE " + removeFilter;
      checkKeys(t, newRows, deleted, relations);
      commit(t, relations, read, DeltaWriter.Deleted.of(deleted), Inserter.Rows.query("SELECT * FROM " + newRows,
          count),
          mode(t, TableProperties.MERGE_MODE),
          keyFilter(t, newRows));
    }
    return result("MERGE " + count, Optional.empty());
  }

  /**
   * {@code CASE WHEN cond THEN code ... ELSE 0 END} over the MATCHED or NOT MATCHED clauses: the first
   * clause whose condition holds decides the row's action (clause k is code k, or 1000 + k when NOT
   * MATCHED); 0 when there is none. Whether there was any such clause.
   */
  private static boolean whenClauses(Composer c, List<Ast.MergeClause> clauses, boolean matched) {
    boolean any = false;
    for (int k = 0; k < clauses.size(); k++) {
      Ast.MergeClause clause = clauses.get(k);
      if (clause.matched() != matched) {
        continue;
      }
      c.add(any ? " WHEN " : "CASE WHEN ");
      any = true;
      if (clause.condition().isPresent()) {
        c.add("(").add(clause.condition().get()).add(")");
      } else {
        c.add("true");
      }
      c.add(" THEN " + (matched ? k + 1 : 1001 + k));
    }
    c.add(any ? " ELSE 0 END" : "0");
    return any;
  }

  private static Map<String, Ast.Fragment> insertValues(Target t, Ast.MergeClause clause) {
    List<String> names = new ArrayList<>();
    if (clause.insertColumns().isEmpty()) {
      t.columns().forEach(c -> names.add(c.name()));
    } else {
      for (String n : clause.insertColumns()) {
        names.add(column(t, n).orElseThrow(() -> new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + n
            + "\" of relation \"" + t.id().name() + "\" does not exist", null, null, clause.position(), null)).name());
      }
    }
    if (clause.insertValues().size() > names.size()) {
      throw FloeException.syntax("INSERT has more expressions than target columns", clause.position());
    }
    if (!clause.insertColumns().isEmpty() && !clause.insertValues().isEmpty()
        && clause.insertValues().size() < names.size()) {
      throw FloeException.syntax("INSERT has more target columns than expressions", clause.position());
    }
    Map<String, Ast.Fragment> values = new HashMap<>();
    for (int k = 0; k < clause.insertValues().size(); k++) {
      if (values.put(names.get(k), clause.insertValues().get(k)) != null) {
        throw FloeException.syntax("column \"" + names.get(k) + "\" specified more than once", clause.position());
      }
    }
    return values;
  }

  // ------------------------------------------------------------------ INSERT with keys, ON CONFLICT, RETURNING

  /**
   * INSERT that needs more than an append: the table has a primary key (new keys must be new), or the
   * statement has ON CONFLICT or RETURNING.
   *
   * @param rows a DuckDB query of the rows to insert, already cast and checked, in column order
   */
  Result insert(Ast.Insert s, String rows, IntUnaryOperator positions) {
    Target t = target(s.table(), s.alias());
    String proposed = materialize("ins", rows, positions);
    Optional<Ast.OnConflict> conflict = s.onConflict();
    if (conflict.isPresent() && !conflict.get().columns().isEmpty()) {
      List<String> named = new ArrayList<>();
      for (String n : conflict.get().columns()) {
        named.add(column(t, n).map(Column::name).orElse(n).toLowerCase(Locale.ROOT));
      }
      List<String> keys = t.keys().stream().map(k -> k.toLowerCase(Locale.ROOT)).sorted().toList();
      if (!named.stream().sorted().toList().equals(keys)) {
        throw new FloeException(SqlState.INVALID_COLUMN_REFERENCE, "there is no unique or exclusion constraint "
            + "matching the ON CONFLICT specification", null, null, conflict.get().position(), null);
      }
    }
    if (t.keys().isEmpty()) {
      // No key: nothing can conflict. ON CONFLICT DO NOTHING inserts every row.
      if (conflict.isPresent() && !conflict.get().doNothing()) {
        throw new FloeException(SqlState.INVALID_COLUMN_REFERENCE, "ON CONFLICT DO UPDATE requires inference "
            + "specification or constraint name", null, "The table has no primary key.", conflict.get().position(),
            null);
      }
      return appendRows(t, s, proposed, null);
    }
    String keyList = keyColumns(t, "");
    Relations relations = session.relations().target(t.id());
    if (conflict.isEmpty()) {
      fewRows(t, proposed); // read once: their keys for the check, the rows for the write
      checkKeys(t, proposed, null, relations);
      return appendRows(t, s, proposed, relations);
    }
    String a = Lexer.quoteIdentifier(t.alias());
    String on = keyJoin(t, "excluded", a);
    if (conflict.get().doNothing()) {
      // Rows whose key exists, or repeats an earlier row of the statement, are skipped.
      Composer c = new Composer().add("SELECT * EXCLUDE (__floe_n) FROM (SELECT excluded.*, row_number() OVER "
          + "(PARTITION BY " + keyColumns(t, "excluded.") + " ORDER BY excluded.rowid) AS __floe_n FROM " + proposed
          + " AS excluded WHERE NOT EXISTS (SELECT 1 FROM " + Relations.TARGET + " AS " + a + " WHERE " + on
          + ")) WHERE __floe_n = 1");
      QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
      String fresh = materialize("new", bound.sql(), bound::originalPosition);
      return appendRows(t, s, fresh, relations);
    }
    Object[] twice = session.queryRow("SELECT " + keyList + " FROM " + proposed + " GROUP BY " + keyList
        + " HAVING count(*) > 1 LIMIT 1", o -> 0);
    if (twice != null) {
      throw new FloeException(SqlState.CARDINALITY_VIOLATION,
          "ON CONFLICT DO UPDATE command cannot affect row a second time", null,
          "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
          conflict.get().position(), null);
    }
    Map<String, Ast.Assignment> set = assignments(t, conflict.get().set());
    Composer c = new Composer().add("SELECT " + a + "." + FILE + ", " + a + "." + POS);
    for (int k = 0; k < t.columns().size(); k++) {
      Column col = t.columns().get(k);
      Ast.Assignment assign = set.get(col.name());
      c.add(", ");
      if (assign == null) {
        c.add(a + "." + Lexer.quoteIdentifier(col.name()));
      } else if (assign.value().isEmpty()) {
        c.add(defaultSql(t, col));
      } else {
        c.add("(").add(assign.value().get()).add(")");
      }
      c.add(" AS " + value(k));
    }
    c.add(" FROM " + proposed + " AS excluded JOIN " + Relations.TARGET + " AS " + a + " ON " + on);
    conflict.get().where().ifPresent(w -> c.add(" WHERE ").add(w));
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
    Relations.TableRelation read = relations.targetRelation();
    String changes = materialize("chg", bound.sql(), bound::originalPosition);
    checkAssignable(t, bound, columnTypes(changes), set, 2);
    String updated = newRows(t, changes, "");
    Composer fresh = new Composer().add("SELECT excluded.* FROM " + proposed + " AS excluded WHERE NOT EXISTS "
        + "(SELECT 1 FROM " + Relations.TARGET + " AS " + a + " WHERE " + on + ")");
    QueryBinder.Bound freshBound = session.bind(fresh.text(), fresh::position, relations);
    String inserted = materialize("fresh", freshBound.sql(), freshBound::originalPosition);
    String all = materialize("all", "SELECT * FROM " + updated + " UNION ALL SELECT * FROM " + inserted, o -> 0);
    long count = count(all, "");
    Optional<String> returning = s.returning().map(r -> returningTable(r, "SELECT * FROM " + all, t.alias(),
        relations));
    if (count > 0) {
      DeltaWriter.Deleted deleted = DeltaWriter.Deleted.of("SELECT " + FILE + ", " + POS + " FROM " + changes);
      commit(t, relations, read, deleted, Inserter.Rows.query("SELECT * FROM " + all, count),
          mode(t, TableProperties.UPDATE_MODE),
          keyFilter(t, all));
    }
    return result("INSERT 0 " + count, returning);
  }

  /**
   * Appends the rows of a temporary table.
   *
   * @param relations the statement's reading of the table when keys were checked against it (its
   *     snapshot is what concurrent inserts of the same keys are detected from); null without keys
   */
  private Result appendRows(Target t, Ast.Insert s, String table, Relations relations) {
    long count = count(table, "");
    Optional<String> returning = s.returning().map(r -> returningTable(r, "SELECT * FROM " + table, t.alias(),
        relations == null ? session.relations() : relations));
    if (count > 0) {
      List<Record> few = fewRows(t, table);
      commit(t, relations, null, null, few != null ? Inserter.Rows.records(few)
          : Inserter.Rows.query("SELECT * FROM " + table, count),
          DeltaWriter.Mode.MERGE_ON_READ,
          t.keys().isEmpty() ? Optional.empty() : keyFilter(t, table));
    }
    return result("INSERT 0 " + count, returning);
  }

  // ------------------------------------------------------------------ TRUNCATE

  Result truncate(Ast.Truncate s) {
    List<Target> targets = new ArrayList<>();
    for (dev.floe.sql.QualifiedName name : s.tables()) {
      targets.add(target(name, Optional.empty()));
    }
    for (Target t : targets) {
      // Every data and delete file the table has when its turn to commit comes: a metadata-only commit.
      tables.committer().commit(t.id(), t.live(), this::truncation);
    }
    return new CommandResult("TRUNCATE TABLE", 0);
  }

  /** The change that drops every file of the table's current snapshot (none if it has none). */
  private TableChange truncation(Table table) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    List<org.apache.iceberg.DataFile> data = new ArrayList<>();
    List<org.apache.iceberg.DeleteFile> deletes = new ArrayList<>();
    if (current != null) {
      Set<String> seen = new HashSet<>();
      for (org.apache.iceberg.FileScanTask task : session.engine().planner().plan(table, current, table.schema(),
          null)) {
        data.add(task.file());
        for (org.apache.iceberg.DeleteFile d : task.deletes()) {
          if (seen.add(d.location() + "@" + d.contentOffset())) {
            deletes.add(d);
          }
        }
      }
    }
    return TableChange.rowDelta(current == null ? null : current.snapshotId(), List.of(), List.of(), data, deletes,
        TableChange.Validation.READ_ALL, List.of());
  }

  // ------------------------------------------------------------------ shared steps

  /** A composer that starts with the statement's WITH clause, if it has one. */
  private static Composer with(Optional<Ast.Fragment> ctes) {
    Composer c = new Composer();
    ctes.ifPresent(w -> c.add(w).add(" "));
    return c;
  }

  private static String value(int k) {
    return "__floe_v" + k;
  }

  private static String defaultSql(Target t, Column c) {
    return Inserts.defaultSql(t.schema(), t.live().properties(), c);
  }

  /**
   * The new rows of a (materialised) change table, cast and checked as INSERT does: a parenthesised
   * query, computed again wherever it is used (it is deterministic), so bulk changes are not copied.
   */
  private String newRows(Target t, String changes, String where) {
    return newRows(t, changes, where, Set.of());
  }

  /**
   * As {@link #newRows(Target, String, String)}, where the columns {@code unchanged} carry the target
   * row's stored values, which met the column's constraints when they were written: only cast.
   */
  private String newRows(Target t, String changes, String where, Set<String> unchanged) {
    StringBuilder source = new StringBuilder("SELECT ");
    for (int k = 0; k < t.columns().size(); k++) {
      source.append(k > 0 ? ", " : "").append(value(k));
    }
    source.append(" FROM ").append(changes).append(where);
    Map<String, String> provided = new HashMap<>();
    for (int k = 0; k < t.columns().size(); k++) {
      provided.put(t.columns().get(k).name(), "q." + Lexer.quoteIdentifier("s" + k));
    }
    String rows = Inserts.rowsSql(t.id().name(), t.schema(), t.live().properties(), t.columns(), provided,
        source.toString(), t.columns().size(), unchanged);
    return "(" + rows + ")";
  }

  private long count(String table, String where) {
    if (where.isEmpty() && sizes.containsKey(table)) {
      return sizes.get(table);
    }
    Object[] row = session.queryRow("SELECT count(*) FROM " + table + where, o -> 0);
    return ((Number) row[0]).longValue();
  }

  private String keyColumns(Target t, String prefix) {
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < t.keys().size(); k++) {
      b.append(k > 0 ? ", " : "").append(prefix).append(Lexer.quoteIdentifier(t.keys().get(k)));
    }
    return b.toString();
  }

  private static String keyJoin(Target t, String left, String right) {
    StringBuilder b = new StringBuilder();
    for (int k = 0; k < t.keys().size(); k++) {
      String key = Lexer.quoteIdentifier(t.keys().get(k));
      b.append(k > 0 ? " AND " : "").append(left).append('.').append(key).append(" = ").append(right).append('.')
          .append(key);
    }
    return b.toString();
  }

  /**
   * Primary-key uniqueness of {@code newRows} (a temporary table): no key twice among them, none equal to
   * a row of the table that the statement does not delete ({@code deleted}, or null).
   */
  private void checkKeys(Target t, String newRows, String deleted, Relations relations) {
    if (t.keys().isEmpty()) {
      return;
    }
    String keys = keyColumns(t, "");
    long size = sizes.getOrDefault(newRows, -1L); // known for a materialised table
    if (size < 0 || size > 1) {
      Object[] twice = session.queryRow("SELECT " + keys + " FROM " + newRows + " GROUP BY " + keys
          + " HAVING count(*) > 1 LIMIT 1", o -> 0);
      if (twice != null) {
        throw duplicateKey(t, twice);
      }
    }
    String a = "__floe_existing";
    Composer c = new Composer().add("SELECT " + keyColumns(t, "n.") + " FROM " + newRows + " AS n JOIN "
        + Relations.TARGET + " AS " + a + " ON " + keyJoin(t, "n", a));
    Optional<String> few = keyPredicate(t, newRows, a);
    few.ifPresent(p -> c.add(" WHERE " + p));
    if (deleted != null) {
      c.add((few.isPresent() ? " AND" : " WHERE") + " NOT EXISTS (SELECT 1 FROM (" + deleted
          + ") AS d WHERE d." + FILE + " = " + a + "." + FILE + " AND d." + POS + " = " + a + "." + POS + ")");
    }
    c.add(" LIMIT 1");
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations.target(t.id()));
    Object[] existing = session.queryRow(bound.sql(), bound::originalPosition);
    if (existing != null) {
      throw duplicateKey(t, existing);
    }
  }

  /**
   * The distinct values of each key column among the new rows, when there are at most
   * {@value #FEW_KEYS} keys (empty otherwise). {@code k1 IN (...) AND k2 IN (...)} over them holds for
   * every new key: the existing-key lookup prunes files with it, and the commit detects concurrent
   * inserts of the same keys with it. Read once per new-rows query.
   */
  private Optional<List<List<Object>>> newKeys(Target t, String newRows) {
    return keyValues.computeIfAbsent(newRows, rows -> {
      List<Types.NestedField> fields = t.keys().stream().map(k -> t.schema().findField(k)).toList();
      StringBuilder select = new StringBuilder("SELECT DISTINCT ");
      for (int k = 0; k < fields.size(); k++) {
        select.append(k > 0 ? ", " : "").append(IcebergValues.readable(fields.get(k).type(),
            Lexer.quoteIdentifier(fields.get(k).name())));
      }
      List<java.util.Set<Object>> values = new ArrayList<>();
      fields.forEach(f -> values.add(new java.util.LinkedHashSet<>()));
      int n = 0;
      try (var st = session.duck().createStatement();
          var rs = st.executeQuery(select + " FROM " + rows + " LIMIT " + (FEW_KEYS + 1))) {
        while (rs.next()) {
          if (++n > FEW_KEYS) {
            return Optional.empty();
          }
          for (int k = 0; k < fields.size(); k++) {
            Object v = IcebergValues.internal(fields.get(k).type(), rs.getObject(k + 1));
            if (v != null) {
              values.get(k).add(v);
            }
          }
        }
      } catch (SQLException e) {
        throw DuckErrors.map(e, o -> 0);
      }
      List<List<Object>> out = new ArrayList<>();
      values.forEach(v -> out.add(new ArrayList<>(v)));
      return Optional.of(out);
    });
  }

  /**
   * The rows of a small temporary table of new rows (the target's columns, checked and of their stored
   * types), read once as Iceberg records, when the table's rows can be written in the JVM; their keys
   * fill the cache {@link #newKeys} reads. Null otherwise (DuckDB writes them).
   */
  private List<Record> fewRows(Target t, String table) {
    Long size = sizes.get(table);
    if (size == null || size < 1 || size > Inserter.FEW_ROWS || !Inserter.writesInJvm(t.live(), t.schema())) {
      return null;
    }
    if (fewRecords.containsKey(table)) {
      return fewRecords.get(table);
    }
    List<Record> records = new ArrayList<>();
    try (var st = session.duck().createStatement(); var rs = st.executeQuery("SELECT * FROM " + table)) {
      ResultSetMetaData md = rs.getMetaData();
      int n = t.columns().size();
      Types.NestedField[] fields = new Types.NestedField[n];
      String[] types = new String[n];
      for (int k = 0; k < n; k++) {
        fields[k] = t.schema().findField(t.columns().get(k).fieldId());
        types[k] = md.getColumnTypeName(k + 1);
        if (md.getColumnCount() != n || fields[k] == null
            || !TypeMapping.isDuckdbType(types[k], TypeMapping.duckdbType(fields[k].type()))) {
          fewRecords.put(table, null);
          return null;
        }
      }
      while (rs.next()) {
        GenericRecord row = GenericRecord.create(t.schema());
        for (int k = 0; k < n; k++) {
          row.setField(fields[k].name(), IcebergValues.internal(fields[k].type(),
              IcebergValues.jdbcValue(rs, k + 1, types[k])));
        }
        records.add(row);
      }
    } catch (SQLException | RuntimeException e) {
      fewRecords.put(table, null); // a value the driver cannot give as such: DuckDB writes the rows
      return null;
    }
    if (!t.keys().isEmpty() && records.size() <= FEW_KEYS) {
      List<List<Object>> keys = new ArrayList<>();
      for (String key : t.keys()) {
        java.util.Set<Object> values = new java.util.LinkedHashSet<>();
        records.forEach(r -> {
          Object v = r.getField(t.schema().findField(key).name());
          if (v != null) {
            values.add(v);
          }
        });
        keys.add(new ArrayList<>(values));
      }
      keyValues.put(table, Optional.of(keys));
    }
    fewRecords.put(table, records);
    return records;
  }

  private final Map<String, List<Record>> fewRecords = new HashMap<>();

  private static final int FEW_KEYS = 1000;
  private final Map<String, Optional<List<List<Object>>>> keyValues = new HashMap<>();

  /** The new keys as a SQL predicate on {@code alias}, when there are few. */
  private Optional<String> keyPredicate(Target t, String newRows, String alias) {
    return newKeys(t, newRows).map(values -> {
      List<String> conjuncts = new ArrayList<>();
      for (int k = 0; k < values.size(); k++) {
        Types.NestedField f = t.schema().findField(t.keys().get(k));
        if (values.get(k).isEmpty()) {
          return "false";
        }
        List<String> literals = values.get(k).stream().map(v -> SqlLiterals.of(f.type(), v)).toList();
        conjuncts.add(alias + "." + Lexer.quoteIdentifier(f.name()) + " IN (" + String.join(", ", literals) + ")");
      }
      return String.join(" AND ", conjuncts);
    });
  }

  /** The Iceberg filter of the new keys, for detecting concurrent inserts of the same keys. */
  private Optional<Expression> keyFilter(Target t, String newRows) {
    if (t.keys().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(newKeys(t, newRows).map(values -> {
      Expression e = Expressions.alwaysTrue();
      for (int k = 0; k < values.size(); k++) {
        String name = t.schema().findField(t.keys().get(k)).name();
        e = Expressions.and(e, values.get(k).isEmpty() ? Expressions.alwaysFalse()
            : Expressions.in(name, values.get(k).toArray()));
      }
      return e;
    }).orElse(Expressions.alwaysTrue()));
  }

  private FloeException duplicateKey(Target t, Object[] key) {
    List<String> values = new ArrayList<>();
    for (Object v : key) {
      values.add(String.valueOf(v));
    }
    return new FloeException(SqlState.UNIQUE_VIOLATION, "duplicate key value violates unique constraint \""
        + t.id().name() + "_pkey\"", "Key (" + String.join(", ", t.keys()) + ")=(" + String.join(", ", values)
        + ") already exists.", null, 0, null);
  }

  private static DeltaWriter.Mode mode(Target t, String property) {
    if (((HasTableOperations) t.live()).operations().current().formatVersion() < 2) {
      return DeltaWriter.Mode.COPY_ON_WRITE; // format v1 has no delete files
    }
    String mode = t.live().properties().getOrDefault(property, "merge-on-read");
    return switch (mode.toLowerCase(Locale.ROOT)) {
      case "copy-on-write" -> DeltaWriter.Mode.COPY_ON_WRITE;
      case "merge-on-read" -> DeltaWriter.Mode.MERGE_ON_READ;
      default -> throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "table property " + property
          + " must be merge-on-read or copy-on-write, not \"" + mode + "\"");
    };
  }

  /**
   * INSERT ... RETURNING into a table with a tail: the rows are numbered, RETURNING is evaluated once
   * before the append (offsets still NULL), so an expression that fails appends nothing, and again
   * after it with each row's offset; in a transaction block, where {@code append} queues the rows and
   * returns -1, the offsets stay NULL.
   */
  Result appendToTail(Ast.Insert s, dev.floe.tail.TailLog log, String rowsSql, IntUnaryOperator positions,
      java.util.function.ToLongFunction<List<Object[]>> append) {
    Target t = target(s.table(), s.alias(), false);
    String rows = materialize("tail", "SELECT *, row_number() OVER () AS __floe_rn FROM (" + rowsSql + ") AS r",
        positions);
    Ast.Fragment returning = s.returning().orElseThrow();
    String offset = Lexer.quoteIdentifier(dev.floe.tail.TailLog.OFFSET_COLUMN);
    String before = returningTable(returning, "SELECT * EXCLUDE (__floe_rn) FROM " + rows, t.alias(),
        session.relations());
    List<Object[]> values = Inserts.tailRows(session, log.rowColumns(), rows + " ORDER BY __floe_rn", positions);
    long first = append.applyAsLong(values);
    if (first < 0) {
      // queued in a transaction block: the offsets come at COMMIT
      return result("INSERT 0 " + values.size(), Optional.of(before));
    }
    String appended = "SELECT * EXCLUDE (__floe_rn) REPLACE (" + first + " + __floe_rn - 1 AS " + offset + ") FROM "
        + rows;
    return result("INSERT 0 " + values.size(),
        Optional.of(returningTable(returning, appended, t.alias(), session.relations())));
  }

  /** Materialises RETURNING rows (before the commit, so a bad expression changes nothing). */
  private String returningTable(Ast.Fragment returning, String rows, String alias, Relations relations) {
    Composer c = new Composer().add("SELECT ").add(returning).add(" FROM (" + rows + ") AS "
        + Lexer.quoteIdentifier(alias));
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
    SessionContext.Named named = SessionContext.withColumnNames(bound);
    return materialize("ret", named.sql(), named.positions());
  }

  private Result result(String tag, Optional<String> returning) {
    if (returning.isEmpty()) {
      cleanup();
      return new CommandResult(tag, Long.parseLong(tag.substring(tag.lastIndexOf(' ') + 1)));
    }
    return session.run("SELECT * FROM " + returning.get(), o -> 0, this::cleanup).withCommandTag(tag);
  }

  /**
   * Writes and commits a change: {@code deleted} rows ({@code __floe_file}, {@code __floe_pos}) of the
   * target as read by {@code relations}, and {@code newRows}, of which there are at most
   * {@code newRowsAtMost} (-1: unknown).
   */
  private void commit(Target t, Relations relations, Relations.TableRelation read, DeltaWriter.Deleted deleted,
      Inserter.Rows newRows, DeltaWriter.Mode mode, Optional<Expression> keys) {
    dev.floe.read.ScanPlan plan = read == null ? null : read.lastPlan;
    Table live = t.live();
    int formatVersion = ((HasTableOperations) live).operations().current().formatVersion();

    DeltaWriter.Delta delta;
    try {
      delta = DeltaWriter.write(session.duck(), live, plan, session.engine().files(), deleted, newRows, mode,
          formatVersion, session.scratch());
    } catch (Inserter.WriteFailure e) {
      throw DuckErrors.map(e.sqlException(), o -> 0);
    }
    if (delta.isEmpty()) {
      return;
    }
    // Decided from the snapshot the statement read: validated against everything committed since.
    Optional<Snapshot> base = plan != null ? plan.snapshot()
        : relations != null ? relations.statementTable(t.id()).map(Table::currentSnapshot) : Optional.empty();
    TableChange.Validation validation = new TableChange.Validation(read == null ? Expressions.alwaysFalse()
        : read.lastFilter, keys.orElse(null), !delta.referencedDataFiles().isEmpty()
        || !delta.removedDataFiles().isEmpty(), delta.referencedDataFiles());
    tables.committer().commit(t.id(), live, TableChange.rowDelta(base.map(Snapshot::snapshotId).orElse(null),
        delta.addedDataFiles(), delta.addedDeleteFiles(), delta.removedDataFiles(), delta.removedDeleteFiles(),
        validation, delta.writtenLocations()));
  }
}
