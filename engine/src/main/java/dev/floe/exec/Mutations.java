package dev.floe.exec;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.Composer;
import dev.floe.sql.Lexer;
import dev.floe.sql.QueryBinder;
import dev.floe.types.TypeMapping;
import dev.floe.commit.TableChange;
import dev.floe.write.DeltaWriter;
import dev.floe.write.Inserter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntUnaryOperator;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;

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
  private final TempTables temps;
  private final KeyChecks keys;
  private final ConstraintChecks constraints;
  private final SmallChanges small;

  Mutations(SessionContext session, Tables tables) {
    this.session = session;
    this.tables = tables;
    this.temps = new TempTables(session);
    this.keys = new KeyChecks(session, temps);
    this.constraints = new ConstraintChecks(session);
    this.small = new SmallChanges(session, temps, keys);
  }

  private ChangeTarget target(dev.floe.sql.QualifiedName name, Optional<String> alias) {
    return target(name, alias, true);
  }

  /**
   * @param seal seal a tail first (a statement that changes rows); an append to the tail does not, and
   *     only looks at the table (in a block it is not the block's to write)
   */
  private ChangeTarget target(dev.floe.sql.QualifiedName name, Optional<String> alias, boolean seal) {
    TableIdentifier id = tables.require(name, session.currentSchema());
    // a block's keyed change goes to its own versions: the table is read, never taken as the block's copy
    boolean blockVersions = versions != null && tables.inTransaction();
    Table live = (seal && !blockVersions ? tables.live(id) : tables.snapshotOf(id)).orElseThrow(
        () -> FloeException.undefinedTable(id.name(), name.position()));
    if (seal && dev.floe.tail.Published.location(live.properties()).isPresent()) { // appends are its rows
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot change rows of table \"" + id.name()
          + "\": its log publishes to " + dev.floe.tail.Published.location(live.properties()).get()
          + ", and a published log is append-only", name.position());
    }
    if (seal && dev.floe.tail.TailLog.hasTail(live)) {
      if (tables.inTransaction() && !blockVersions) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot change rows of table \"" + id.name()
            + "\" in a transaction block: it has a tail", null, "Run the statement outside the block (autocommit).",
            name.position(), null);
      }
      if (versions == null) {
        // the statement changes rows wherever they are: the unsealed ones are sealed into files first
        session.engine().tails().flush(id, live);
        live = tables.live(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
      }
    }
    Schema schema = live.schema();
    List<String> keys = new ArrayList<>();
    for (int fieldId : schema.identifierFieldIds()) {
      keys.add(schema.findField(fieldId).name());
    }
    return new ChangeTarget(id, live, schema, TypeMapping.columns(schema, live.properties()), alias.orElse(id.name()),
        keys);
  }

  /** While a keyed tail's change runs (see {@link #keyed}): where its versions go; null otherwise. */
  private dev.floe.tail.TailLog.Versions versions;
  private dev.floe.tail.TailLog versionsLog;

  /**
   * Runs a row-level statement on {@code name}: for a table with a keyed tail (a tail and a primary key)
   * as one of its log's keyed changes ({@link dev.floe.tail.TailLog#change}): the statement reads the
   * newest version of every key (memtable and files), and instead of writing files it appends the
   * versions it decides, acknowledged once durable; in a transaction block, the block's own versions
   * ({@link dev.floe.tail.Draft}), which its COMMIT appends. Otherwise it just runs.
   */
  private Result keyed(dev.floe.sql.QualifiedName name, java.util.function.Supplier<Result> statement) {
    TableIdentifier id = tables.require(name, session.currentSchema());
    Optional<Table> table = tables.snapshotOf(id);
    if (table.isEmpty() || !dev.floe.tail.TailLog.hasTail(table.get())
        || !dev.floe.tail.TailLog.keyed(table.get().schema())) {
      return statement.get();
    }
    dev.floe.tail.TailLog log = session.engine().tails().of(id, table.get()).orElseThrow();
    Optional<Transaction> block = tables.transaction();
    if (block.isPresent()) {
      // the block reads the table through its pin, its own versions over the pinned ones
      dev.floe.tail.Pin pin = session.relations().tailPin(id).orElseThrow();
      return withVersions(block.get().keyedVersions(id, pin, session.duck()), log, statement);
    }
    dev.floe.catalog.CommitGate.pass(); // the append is the commit
    return log.change(v -> withVersions(v, log, statement));
  }

  /** Runs {@code statement} with its keyed change's versions going to {@code v}. */
  private Result withVersions(dev.floe.tail.TailLog.Versions v, dev.floe.tail.TailLog log,
      java.util.function.Supplier<Result> statement) {
    versions = v;
    versionsLog = log;
    try {
      return statement.get();
    } finally {
      versions = null;
      versionsLog = null;
    }
  }

  /**
   * A keyed tail's change: the deletions of the keys {@code deletedKeys} selects (columns named as the
   * keys; null: none) and the rows of {@code newRows} (cast and checked, in column order) appended to
   * its log as one record, in that order.
   */
  private void appendVersions(ChangeTarget t, String deletedKeys, String newRows) {
    appendVersionsFrom(t, deletedKeys, newRows == null ? null : "(" + newRows + ") AS r");
  }

  /**
   * {@link #appendVersions} of the rows of temporary table {@code rowsTable}; with RETURNING, that is
   * evaluated again over the new rows with the offsets the log gave them (the evaluation before the
   * append only checked it, as for an append to a tail) and its table returned.
   */
  private Optional<String> appendVersions(ChangeTarget t, String deletedKeys, String rowsTable,
      Optional<String> returning, Ast.Fragment returningList, Relations relations) {
    if (returning.isEmpty()) {
      appendVersions(t, deletedKeys, "SELECT * FROM " + rowsTable);
      return returning;
    }
    String numbered = materialize("num", "SELECT *, row_number() OVER () AS __floe_rn FROM " + rowsTable, o -> 0);
    long first = appendVersionsFrom(t, deletedKeys, numbered + " AS r ORDER BY r.__floe_rn");
    return Optional.of(returningTable(returningList, "SELECT * EXCLUDE (__floe_rn) REPLACE (" + first
        + " + __floe_rn - 1 AS " + Lexer.quoteIdentifier(dev.floe.tail.TailLog.OFFSET_COLUMN) + ") FROM " + numbered,
        t.alias(), relations));
  }

  /**
   * As {@link #appendVersions}, the new rows being those of {@code rowsFrom} (what follows FROM, in the
   * order the versions take).
   *
   * @return the offset of the first new row
   */
  private long appendVersionsFrom(ChangeTarget t, String deletedKeys, String rowsFrom) {
    List<org.apache.iceberg.types.Types.NestedField> fields = versionsLog.rowColumns();
    List<Object[]> deleted = new ArrayList<>();
    if (deletedKeys != null) {
      List<org.apache.iceberg.types.Types.NestedField> keyFields = new ArrayList<>();
      List<Integer> at = new ArrayList<>();
      for (int i = 0; i < fields.size(); i++) {
        if (t.schema().identifierFieldIds().contains(fields.get(i).fieldId())) {
          keyFields.add(fields.get(i));
          at.add(i);
        }
      }
      for (Object[] key : Inserts.tailRows(session, keyFields, "(" + deletedKeys + ") AS d", o -> 0)) {
        Object[] row = new Object[fields.size()];
        for (int k = 0; k < at.size(); k++) {
          row[at.get(k)] = key[k];
        }
        deleted.add(row);
      }
    }
    List<Object[]> rows = rowsFrom == null ? List.of() : Inserts.tailRows(session, fields, rowsFrom, o -> 0);
    return versions.append(deleted, rows) + deleted.size();
  }

  /**
   * The distinct values of a one-column key in a few proposed rows (a keyed tail's INSERT reads only
   * those keys' rows: {@link Relations#targetKeys}); empty for a key of several columns or of another
   * type, or for many rows.
   */
  private Optional<List<Object>> proposedKeys(ChangeTarget t, String proposed) {
    if (t.keys().size() != 1 || temps.count(proposed, "") > dev.floe.read.ScanSql.MAX_POINT_ROWS) {
      return Optional.empty();
    }
    org.apache.iceberg.types.Type type = t.schema().findField(t.keys().get(0)).type();
    if (type.typeId() != org.apache.iceberg.types.Type.TypeID.INTEGER
        && type.typeId() != org.apache.iceberg.types.Type.TypeID.LONG
        && type.typeId() != org.apache.iceberg.types.Type.TypeID.STRING) {
      return Optional.empty();
    }
    List<Object> keys = new ArrayList<>();
    try (var st = session.duck().createStatement(); var rs = st.executeQuery("SELECT DISTINCT " + t.keyColumns("")
        + " FROM " + proposed + " WHERE " + t.keyColumns("") + " IS NOT NULL")) {
      while (rs.next()) {
        Object v = rs.getObject(1);
        keys.add(v instanceof Number n ? (Object) n.longValue() : v.toString());
      }
    } catch (java.sql.SQLException e) {
      throw DuckErrors.map(e, o -> 0);
    }
    return Optional.of(keys);
  }

  /**
   * The stored rows a change removes (those of change table {@code changes} that {@code where} keeps),
   * materialised with the target's columns, for the foreign keys that reference the target.
   */
  private String removedRows(ChangeTarget t, String changes, String where, Relations relations) {
    return removedRows(t, changes, where, relations, false);
  }

  /**
   * As above; {@code withNew}: each removed row also carries the values an UPDATE gives it
   * ({@link ReferentialActions#NEW} + column), for ON UPDATE CASCADE.
   */
  private String removedRows(ChangeTarget t, String changes, String where, Relations relations, boolean withNew) {
    StringBuilder columns = new StringBuilder();
    for (int k = 0; k < t.columns().size(); k++) {
      Column col = t.columns().get(k);
      columns.append(columns.length() > 0 ? ", " : "").append("o.").append(Lexer.quoteIdentifier(col.name()));
      if (withNew) {
        columns.append(", d.").append(value(k)).append(" AS ").append(Lexer.quoteIdentifier(ReferentialActions.NEW
            + col.name()));
      }
    }
    Composer c = new Composer().add("SELECT " + columns + " FROM " + Relations.TARGET + " AS o JOIN (SELECT * FROM "
        + changes + where + ") AS d ON d." + FILE + " = o." + FILE + " AND d." + POS + " = o." + POS);
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations.target(t.id()));
    return materialize("old", bound.sql(), o -> 0);
  }

  /** Drops the statement's temporary tables, except small ones the next statement will replace. */
  void cleanup() {
    temps.cleanup();
  }

  private String materialize(String kind, String sql, IntUnaryOperator positions) {
    return temps.materialize(kind, sql, positions);
  }

  // ------------------------------------------------------------------ DELETE

  Result delete(Ast.Delete s) {
    return keyed(s.table(), () -> deleteRows(s));
  }

  private Result deleteRows(Ast.Delete s) {
    ChangeTarget t = target(s.table(), s.alias());
    if (versions != null) {
      Optional<Result> one = PointUpdates.delete(session, t, s, versions); // one key, decided in the JVM
      if (one.isPresent()) {
        return one.get();
      }
    }
    String a = Lexer.quoteIdentifier(t.alias());
    // Only a USING join can name a target row twice.
    Composer c = with(s.with()).add("SELECT " + (s.using().isPresent() ? "DISTINCT " : "") + a + "." + FILE + ", "
        + a + "." + POS);
    if (s.returning().isPresent()) {
      for (Column col : t.columns()) {
        c.add(", " + a + "." + Lexer.quoteIdentifier(col.name()));
      }
    }
    c.add(t.oldKeys(a));
    c.add(" FROM " + Relations.TARGET + " AS " + a);
    s.using().ifPresent(u -> c.add(", ").add(u));
    s.where().ifPresent(w -> c.add(" WHERE ").add(w));
    Relations relations = session.relations().target(t.id());
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
    Relations.TargetScan read = relations.targetScan();
    String changes = materialize("chg", bound.sql(), bound::originalPosition);
    long count = temps.count(changes, "");
    Optional<String> returning = s.returning().map(r -> returningTable(r, "SELECT * EXCLUDE (" + FILE + ", " + POS
        + t.oldKeyNames() + ") FROM " + changes, t.alias(), relations));
    List<Runnable> actions = List.of();
    if (count > 0 && ConstraintChecks.referenced(t)) {
      actions = constraints.checkRemoved(t, removedRows(t, changes, "", relations), null, relations,
          ConstraintChecks.Removal.DELETE);
    }
    if (count > 0 && t.keyedTail()) {
      appendVersions(t, "SELECT " + t.oldKeysAsKeys() + " FROM " + changes, null);
    } else if (count > 0) {
      DeltaWriter.Deleted deleted = count <= Inserter.FEW_ROWS ? small.read(changes, false).deleted()
          : new DeltaWriter.Deleted("SELECT " + FILE + ", " + POS + " FROM " + changes, count, null);
      commit(t, relations, read, deleted, null, t.mode(TableProperties.DELETE_MODE), Optional.empty());
    }
    actions.forEach(Runnable::run); // once the rows are gone, as PostgreSQL's actions run after the change
    return result("DELETE " + count, returning);
  }

  // ------------------------------------------------------------------ UPDATE

  Result update(Ast.Update s) {
    return keyed(s.table(), () -> updateRows(s));
  }

  private Result updateRows(Ast.Update s) {
    ChangeTarget t = target(s.table(), s.alias());
    if (versions != null) {
      Optional<Result> one = PointUpdates.update(session, t, s, versions); // one key, decided in the JVM
      if (one.isPresent()) {
        return one.get();
      }
    }
    String a = Lexer.quoteIdentifier(t.alias());
    Map<String, Ast.Assignment> set = t.assignments(s.set());
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
        c.add(t.defaultSql(col));
      } else {
        c.add("(").add(assign.value().get()).add(")");
      }
      c.add(" AS " + value(k));
    }
    c.add(t.oldKeys(a));
    c.add(" FROM " + Relations.TARGET + " AS " + a);
    s.from().ifPresent(f -> c.add(", ").add(f));
    s.where().ifPresent(w -> c.add(" WHERE ").add(w));
    Relations relations = session.relations().target(t.id());
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
    Relations.TargetScan read = relations.targetScan();
    String changes = materialize("chg", bound.sql(), bound::originalPosition);
    long count = temps.count(changes, "");
    // A small change is read once: the column types for the assignment check, the positions, and the
    // values (which become the new rows, when nothing is left for DuckDB to do to them).
    SmallChanges.Few few = count > 0 && count <= Inserter.FEW_ROWS && !t.keyedTail() ? small.read(changes, true)
        : null;
    checkAssignable(t, bound, few != null ? few.types() : temps.columnTypes(changes), set, 2);
    Set<String> unchanged = new HashSet<>();
    t.columns().forEach(col -> unchanged.add(col.name()));
    unchanged.removeAll(set.keySet());
    String newRows = newRows(t, changes, "", unchanged);
    boolean keysChange = t.keys().stream().anyMatch(set::containsKey);
    boolean uniqueChange = KeyChecks.touches(t, set.keySet());
    Optional<String> returning = s.returning().map(r -> returningTable(r, "SELECT * FROM " + newRows, t.alias(),
        relations));
    List<Runnable> actions = List.of();
    if (count > 0) {
      DeltaWriter.Deleted deleted = few != null ? few.deleted()
          : new DeltaWriter.Deleted("SELECT " + FILE + ", " + POS + " FROM " + changes, count, null);
      if (uniqueChange) {
        keys.check(t, newRows, deleted.sql(), relations);
      }
      constraints.checkNew(t, newRows, relations);
      if (set.keySet().stream().anyMatch(ConstraintChecks.referencedColumns(session, t)::contains)) {
        actions = constraints.checkRemoved(t, removedRows(t, changes, "", relations, true), newRows, relations,
            ConstraintChecks.Removal.UPDATE);
      }
      if (t.keyedTail()) {
        // a row whose key changes leaves its old key deleted
        return result("UPDATE " + count, appendVersions(t, keysChange ? "SELECT " + t.oldKeysAsKeys() + " FROM "
            + changes : null, newRows, returning, s.returning().orElse(null), relations));
      }
      List<Record> records = few != null ? small.updated(t, few, set) : null;
      commit(t, relations, read, deleted, records != null ? Inserter.Rows.records(records)
          : Inserter.Rows.query("SELECT * FROM " + newRows, count), t.mode(TableProperties.UPDATE_MODE),
          uniqueChange ? keys.filter(t, newRows) : Optional.empty());
    }
    actions.forEach(Runnable::run);
    return result("UPDATE " + count, returning);
  }

  /**
   * PostgreSQL's assignment rules for SET values (42804, before anything is written), checked on the
   * types of the materialised change table, whose column {@code first + k} is column k's new value.
   */
  private void checkAssignable(ChangeTarget t, QueryBinder.Bound bound, List<String> types, Map<String, Ast.Assignment> set,
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

  // ------------------------------------------------------------------ MERGE

  Result merge(Ast.Merge s) {
    return keyed(s.table(), () -> mergeRows(s));
  }

  private Result mergeRows(Ast.Merge s) {
    ChangeTarget t = target(s.table(), s.alias());
    MergeQuery merge = MergeQuery.of(t, s);
    Composer c = merge.query();
    Relations relations = session.relations().target(t.id());
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
    Relations.TargetScan read = relations.targetScan();
    String changes = materialize("chg", bound.sql(), bound::originalPosition);
    // As in PostgreSQL, a target row is an error only when a second source row would change it again:
    // matches that no clause acts on (or DO NOTHING) do not count.
    Object[] twice = session.sql().queryRow("SELECT " + FILE + ", " + POS + " FROM " + changes + " WHERE " + FILE
        + " IS NOT NULL AND (" + merge.removes() + ") GROUP BY 1, 2 HAVING count(*) > 1 LIMIT 1", o -> 0);
    if (twice != null) {
      throw new FloeException(SqlState.CARDINALITY_VIOLATION, "MERGE command cannot affect row a second time", null,
          "Ensure that not more than one source row matches any one target row.", 0, null); // as PostgreSQL: no position
    }
    long count = temps.count(changes, " WHERE " + merge.removes() + " OR " + merge.adds());
    if (count > 0) {
      String newRows = newRows(t, changes, " WHERE " + merge.adds());
      String deleted = "SELECT " + FILE + ", " + POS + " FROM " + changes + " WHERE " + merge.removes();
      keys.check(t, newRows, deleted, relations);
      constraints.checkNew(t, newRows, relations);
      if (ConstraintChecks.referenced(t)) {
        constraints.checkRemoved(t, removedRows(t, changes, " WHERE " + merge.removes(), relations), newRows,
            relations, ConstraintChecks.Removal.MERGE);
      }
      if (t.keyedTail()) {
        appendVersions(t, "SELECT " + t.oldKeysAsKeys() + " FROM " + changes + " WHERE " + merge.removes(),
            "SELECT * FROM " + newRows);
      } else {
        commit(t, relations, read, DeltaWriter.Deleted.of(deleted), Inserter.Rows.query("SELECT * FROM " + newRows,
            count), t.mode(TableProperties.MERGE_MODE), keys.filter(t, newRows));
      }
    }
    return result("MERGE " + count, Optional.empty());
  }

  // ------------------------------------------------------------------ INSERT with keys, ON CONFLICT, RETURNING

  /**
   * A one-row INSERT of constants into a keyed tail decided in the JVM ({@link PointUpdates#insert}), as
   * one keyed change; empty when the general path must run it.
   */
  Optional<Result> insertOne(Ast.Insert s) {
    return Optional.ofNullable(keyed(s.table(), () -> versions == null ? null
        : PointUpdates.insert(session, target(s.table(), s.alias()), s, versions).orElse(null)));
  }

  /**
   * The log row of a one-row INSERT of constants into a table with a tail and no key, decided in the
   * JVM ({@link PointUpdates#proposed}); null when the general path must compute it.
   */
  Object[] tailRow(Ast.Insert s) {
    ChangeTarget t = target(s.table(), s.alias(), false);
    Object[] proposed = PointUpdates.proposed(t, s);
    return proposed == null ? null : PointUpdates.logRow(t, proposed);
  }

  /**
   * INSERT that needs more than an append: the table has a primary key (new keys must be new), or the
   * statement has ON CONFLICT or RETURNING.
   *
   * @param rows a DuckDB query of the rows to insert, already cast and checked, in column order
   */
  Result insert(Ast.Insert s, String rows, IntUnaryOperator positions) {
    return keyed(s.table(), () -> insertRows(s, rows, positions));
  }

  private Result insertRows(Ast.Insert s, String rows, IntUnaryOperator positions) {
    ChangeTarget t = target(s.table(), s.alias());
    String proposed = materialize("ins", rows, positions);
    Optional<Ast.OnConflict> conflict = s.onConflict();
    if (conflict.isPresent() && !conflict.get().columns().isEmpty()) {
      List<String> named = new ArrayList<>();
      for (String n : conflict.get().columns()) {
        named.add(t.column(n).map(Column::name).orElse(n).toLowerCase(Locale.ROOT));
      }
      List<String> keyNames = t.keys().stream().map(k -> k.toLowerCase(Locale.ROOT)).sorted().toList();
      if (!named.stream().sorted().toList().equals(keyNames)) {
        throw new FloeException(SqlState.INVALID_COLUMN_REFERENCE, "there is no unique or exclusion constraint "
            + "matching the ON CONFLICT specification", conflict.get().position());
      }
    }
    if (t.keys().isEmpty()) {
      // No key: nothing can conflict. ON CONFLICT DO NOTHING inserts every row.
      if (conflict.isPresent() && !conflict.get().doNothing()) {
        throw new FloeException(SqlState.INVALID_COLUMN_REFERENCE, "ON CONFLICT DO UPDATE requires inference "
            + "specification or constraint name", null, "The table has no primary key.", conflict.get().position(),
            null);
      }
      Relations checked = session.relations();
      keys.check(t, proposed, null, checked); // its UNIQUE constraints
      constraints.checkNew(t, proposed, checked);
      return appendRows(t, s, proposed, checked);
    }
    String keyList = t.keyColumns("");
    Relations relations = session.relations().target(t.id());
    if (t.keyedTail()) {
      proposedKeys(t, proposed).ifPresent(relations::targetKeys);
    }
    if (conflict.isEmpty()) {
      small.newRows(t, proposed); // read once: their keys for the check, the rows for the write
      keys.check(t, proposed, null, relations);
      constraints.checkNew(t, proposed, relations);
      return appendRows(t, s, proposed, relations);
    }
    String a = Lexer.quoteIdentifier(t.alias());
    String on = t.keyJoin("excluded", a);
    if (conflict.get().doNothing()) {
      // Rows whose key exists, or repeats an earlier row of the statement, are skipped.
      Composer c = new Composer().add("SELECT * EXCLUDE (__floe_n) FROM (SELECT excluded.*, row_number() OVER "
          + "(PARTITION BY " + t.keyColumns("excluded.") + " ORDER BY excluded.rowid) AS __floe_n FROM " + proposed
          + " AS excluded WHERE NOT EXISTS (SELECT 1 FROM " + Relations.TARGET + " AS " + a + " WHERE " + on
          + ")) WHERE __floe_n = 1");
      QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
      String fresh = materialize("new", bound.sql(), bound::originalPosition);
      if (Constraints.any(t.live())) {
        keys.check(t, fresh, null, relations); // its UNIQUE constraints
        constraints.checkNew(t, fresh, relations);
      }
      return appendRows(t, s, fresh, relations);
    }
    Object[] twice = session.sql().queryRow("SELECT " + keyList + " FROM " + proposed + " GROUP BY " + keyList
        + " HAVING count(*) > 1 LIMIT 1", o -> 0);
    if (twice != null) {
      throw new FloeException(SqlState.CARDINALITY_VIOLATION,
          "ON CONFLICT DO UPDATE command cannot affect row a second time", null,
          "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
          conflict.get().position(), null);
    }
    Map<String, Ast.Assignment> set = t.assignments(conflict.get().set());
    Composer c = new Composer().add("SELECT " + a + "." + FILE + ", " + a + "." + POS);
    for (int k = 0; k < t.columns().size(); k++) {
      Column col = t.columns().get(k);
      Ast.Assignment assign = set.get(col.name());
      c.add(", ");
      if (assign == null) {
        c.add(a + "." + Lexer.quoteIdentifier(col.name()));
      } else if (assign.value().isEmpty()) {
        c.add(t.defaultSql(col));
      } else {
        c.add("(").add(assign.value().get()).add(")");
      }
      c.add(" AS " + value(k));
    }
    c.add(t.oldKeys(a));
    c.add(" FROM " + proposed + " AS excluded JOIN " + Relations.TARGET + " AS " + a + " ON " + on);
    conflict.get().where().ifPresent(w -> c.add(" WHERE ").add(w));
    QueryBinder.Bound bound = session.bind(c.text(), c::position, relations);
    Relations.TargetScan read = relations.targetScan();
    String changes = materialize("chg", bound.sql(), bound::originalPosition);
    checkAssignable(t, bound, temps.columnTypes(changes), set, 2);
    String updated = newRows(t, changes, "");
    Composer fresh = new Composer().add("SELECT excluded.* FROM " + proposed + " AS excluded WHERE NOT EXISTS "
        + "(SELECT 1 FROM " + Relations.TARGET + " AS " + a + " WHERE " + on + ")");
    QueryBinder.Bound freshBound = session.bind(fresh.text(), fresh::position, relations.target(t.id()));
    String inserted = materialize("fresh", freshBound.sql(), freshBound::originalPosition);
    String all = materialize("all", "SELECT * FROM " + updated + " UNION ALL SELECT * FROM " + inserted, o -> 0);
    long count = temps.count(all, "");
    Optional<String> returning = s.returning().map(r -> returningTable(r, "SELECT * FROM " + all, t.alias(),
        relations));
    if (count > 0 && t.keyedTail()) {
      boolean keysChange = t.keys().stream().anyMatch(set::containsKey);
      if (keysChange) {
        keys.check(t, all, "SELECT " + FILE + ", " + POS + " FROM " + changes, relations);
      }
      returning = appendVersions(t, keysChange ? "SELECT " + t.oldKeysAsKeys() + " FROM " + changes : null, all,
          returning, s.returning().orElse(null), relations);
    } else if (count > 0) {
      if (Constraints.any(t.live()) || t.keys().stream().anyMatch(set::containsKey)) {
        keys.check(t, all, "SELECT " + FILE + ", " + POS + " FROM " + changes, relations);
        constraints.checkNew(t, all, relations);
      }
      List<Runnable> actions = List.of();
      if (set.keySet().stream().anyMatch(ConstraintChecks.referencedColumns(session, t)::contains)) {
        actions = constraints.checkRemoved(t, removedRows(t, changes, "", relations, true), all, relations,
            ConstraintChecks.Removal.UPDATE);
      }
      DeltaWriter.Deleted deleted = DeltaWriter.Deleted.of("SELECT " + FILE + ", " + POS + " FROM " + changes);
      commit(t, relations, read, deleted, Inserter.Rows.query("SELECT * FROM " + all, count),
          t.mode(TableProperties.UPDATE_MODE), keys.filter(t, all));
      actions.forEach(Runnable::run);
    }
    return result("INSERT 0 " + count, returning);
  }

  /**
   * Appends the rows of a temporary table.
   *
   * @param relations the statement's reading of the table when keys were checked against it (its
   *     snapshot is what concurrent inserts of the same keys are detected from); null without keys
   */
  private Result appendRows(ChangeTarget t, Ast.Insert s, String table, Relations relations) {
    long count = temps.count(table, "");
    Optional<String> returning = s.returning().map(r -> returningTable(r, "SELECT * FROM " + table, t.alias(),
        relations == null ? session.relations() : relations));
    if (count > 0 && t.keyedTail()) {
      returning = appendVersions(t, null, table, returning, s.returning().orElse(null),
          relations == null ? session.relations() : relations);
    } else if (count > 0) {
      List<Record> few = small.newRows(t, table);
      commit(t, relations, null, null, few != null ? Inserter.Rows.records(few)
          : Inserter.Rows.query("SELECT * FROM " + table, count),
          DeltaWriter.Mode.MERGE_ON_READ,
          keys.filter(t, table));
    }
    return result("INSERT 0 " + count, returning);
  }

  // ------------------------------------------------------------------ TRUNCATE

  Result truncate(Ast.Truncate s) {
    List<ChangeTarget> targets = new ArrayList<>();
    for (dev.floe.sql.QualifiedName name : s.tables()) {
      try {
        targets.add(target(name, Optional.empty()));
      } catch (FloeException e) {
        if (e.sqlState().equals(SqlState.UNDEFINED_TABLE)) {
          throw new FloeException(e.sqlState(), e.getMessage()); // PostgreSQL's TRUNCATE names no position
        }
        throw e;
      }
    }
    Set<TableIdentifier> truncated = new HashSet<>();
    targets.forEach(t -> truncated.add(t.id()));
    for (int i = 0; i < targets.size(); i++) { // grows with CASCADE's tables
      ChangeTarget t = targets.get(i);
      for (var e : ConstraintChecks.referencing(session, t.id(), t.live())) {
        if (truncated.contains(e.getKey())) {
          continue;
        }
        if (!s.cascade()) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot truncate a table referenced in a foreign "
              + "key constraint", "Table \"" + e.getKey().name() + "\" references \"" + t.id().name() + "\".",
              "Truncate table \"" + e.getKey().name() + "\" at the same time, or use TRUNCATE ... CASCADE.", 0,
              null);
        }
        session.notice("truncate cascades to table \"" + e.getKey().name() + "\"");
        truncated.add(e.getKey());
        targets.add(target(new dev.floe.sql.QualifiedName(List.of(e.getKey().namespace().level(0),
            e.getKey().name()), 0), Optional.empty()));
      }
    }
    for (ChangeTarget t : targets) {
      if (t.keyedTail()) {
        // no keyed change runs meanwhile: its versions, decided from rows the truncation removes,
        // would be sealed after it
        dev.floe.tail.TailLog log = session.engine().tails().of(t.id(), t.live()).orElseThrow();
        log.change(v -> {
          session.engine().tails().flush(t.id(), t.live());
          tables.committer().commit(t.id(), tables.live(t.id()).orElseThrow(), this::truncation);
          return null;
        });
        continue;
      }
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
  static Composer with(Optional<Ast.Fragment> ctes) {
    Composer c = new Composer();
    ctes.ifPresent(w -> c.add(w).add(" "));
    return c;
  }

  /** The name of the change table's column holding the new value of the target's column k. */
  static String value(int k) {
    return "__floe_v" + k;
  }

  /**
   * The new rows of a (materialised) change table, cast and checked as INSERT does: a parenthesised
   * query, computed again wherever it is used (it is deterministic), so bulk changes are not copied.
   */
  private String newRows(ChangeTarget t, String changes, String where) {
    return newRows(t, changes, where, Set.of());
  }

  /**
   * As {@link #newRows(ChangeTarget, String, String)}, where the columns {@code unchanged} carry the target
   * row's stored values, which met the column's constraints when they were written: only cast.
   */
  private String newRows(ChangeTarget t, String changes, String where, Set<String> unchanged) {
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

  /**
   * INSERT ... RETURNING into a table with a tail: the rows are numbered, RETURNING is evaluated once
   * before the append (offsets still NULL), so an expression that fails appends nothing, and again
   * after it with each row's offset; in a transaction block, where {@code append} queues the rows and
   * returns -1, the offsets stay NULL.
   */
  Result appendToTail(Ast.Insert s, dev.floe.tail.TailLog log, String rowsSql, IntUnaryOperator positions,
      java.util.function.ToLongFunction<List<Object[]>> append) {
    ChangeTarget t = target(s.table(), s.alias(), false);
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
    QueryResult.Named named = QueryResult.withColumnNames(bound);
    return materialize("ret", named.sql(), named.positions());
  }

  private Result result(String tag, Optional<String> returning) {
    if (returning.isEmpty()) {
      temps.cleanup();
      return new CommandResult(tag, Long.parseLong(tag.substring(tag.lastIndexOf(' ') + 1)));
    }
    return session.run("SELECT * FROM " + returning.get(), o -> 0, temps::cleanup).withCommandTag(tag);
  }

  /**
   * Writes and commits a change: {@code deleted} rows ({@code __floe_file}, {@code __floe_pos}) of the
   * target as read by {@code relations}, and {@code newRows}, of which there are at most
   * {@code newRowsAtMost} (-1: unknown).
   */
  private void commit(ChangeTarget t, Relations relations, Relations.TargetScan read, DeltaWriter.Deleted deleted,
      Inserter.Rows newRows, DeltaWriter.Mode mode, Optional<Expression> keys) {
    dev.floe.read.ScanPlan plan = read == null ? null : read.plan();
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
        : read.filter(), keys.orElse(null), !delta.referencedDataFiles().isEmpty()
        || !delta.removedDataFiles().isEmpty(), delta.referencedDataFiles());
    tables.committer().commit(t.id(), live, TableChange.rowDelta(base.map(Snapshot::snapshotId).orElse(null),
        delta.addedDataFiles(), delta.addedDeleteFiles(), delta.removedDataFiles(), delta.removedDeleteFiles(),
        validation, delta.writtenLocations()));
  }
}
