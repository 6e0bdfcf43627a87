package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.FloeProperties;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.Ast.ConstraintKind;
import dev.floe.sql.Ast.TableConstraint;
import dev.floe.sql.Composer;
import dev.floe.sql.Lexer;
import dev.floe.sql.QualifiedName;
import dev.floe.sql.QueryBinder;
import dev.floe.tail.TailLog;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The DDL of UNIQUE, CHECK and FOREIGN KEY constraints: declared in CREATE TABLE or added by ALTER TABLE
 * (the table's rows checked first), dropped by ALTER TABLE ... DROP CONSTRAINT, and what DROP TABLE, DROP
 * COLUMN, RENAME COLUMN and RENAME do to them. A constraint is a property of its table
 * ({@link Constraints}); a foreign key also marks the table it references, before the key itself is
 * committed, so a DELETE there always finds it.
 */
final class ConstraintDdl {
  private final SessionContext session;
  private final Tables tables;

  ConstraintDdl(SessionContext session, Tables tables) {
    this.session = session;
    this.tables = tables;
  }

  /**
   * The properties that declare {@code constraints} on table {@code id} of {@code schema}, whose
   * properties are {@code properties} (the names they take: {@code taken}), checked: their columns exist,
   * a foreign key references a primary key or UNIQUE constraint of columns of comparable types.
   */
  Map<String, String> declare(TableIdentifier id, Schema schema, Map<String, String> properties,
      List<TableConstraint> constraints, Set<String> taken, boolean creating) {
    Map<String, String> out = new LinkedHashMap<>();
    if (!constraints.isEmpty() && TailLog.hasTail(properties)) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "constraints are not supported on table \"" + id.name()
          + "\", which has a tail", null, "A tail acknowledges appends without reading the table; declare the "
          + "constraints on a table without one.", constraints.get(0).position(), null);
    }
    for (TableConstraint c : constraints) {
      List<Types.NestedField> fields = new ArrayList<>();
      for (String column : c.columns()) {
        Types.NestedField f = schema.caseInsensitiveFindField(column);
        if (f == null) {
          throw new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + column + "\" named in key does not exist",
              c.position());
        }
        fields.add(f);
      }
      List<String> names = fields.stream().map(Types.NestedField::name).toList();
      List<Integer> ids = fields.stream().map(Types.NestedField::fieldId).toList();
      switch (c.kind()) {
        case UNIQUE -> {
          String name = name(c, id, names, "key", taken);
          out.put(FloeProperties.INDEX_PREFIX + name, new Indexes.Index(name, ids, true, false, true).value());
        }
        case CHECK -> {
          List<String> mentioned = names.isEmpty() ? Constraints.columnsOf(c.check(), schema) : names;
          if (c.name().isPresent() && creating && taken.contains(c.name().get())) {
            throw new FloeException(SqlState.DUPLICATE_OBJECT, "check constraint \"" + c.name().get()
                + "\" already exists");
          }
          String name = name(c, id, mentioned.isEmpty() ? List.of() : mentioned.subList(0, 1), "check", taken);
          out.put(FloeProperties.CHECK_PREFIX + name, c.check());
        }
        case FOREIGN_KEY -> {
          TableIdentifier parentId = tables.require(c.references().orElseThrow(), session.currentSchema());
          boolean self = parentId.equals(id);
          Schema parentSchema;
          Map<String, String> parentProperties;
          if (self) {
            parentSchema = schema;
            parentProperties = new LinkedHashMap<>(properties);
            parentProperties.putAll(out);
          } else {
            Table parent = tables.live(parentId).orElseThrow(() -> FloeException.undefinedTable(parentId.name()));
            parentSchema = parent.schema();
            parentProperties = parent.properties();
            if (TailLog.hasTail(parent)) {
              throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "a foreign key cannot reference table \""
                  + parentId.name() + "\", which has a tail", c.position());
            }
          }
          List<Types.NestedField> parentFields = referenced(c, parentId, parentSchema, parentProperties);
          if (parentFields.size() != fields.size()) {
            throw new FloeException(SqlState.INVALID_FOREIGN_KEY, "number of referencing and referenced columns "
                + "for foreign key disagree", c.position());
          }
          String name = name(c, id, names, "fkey", taken);
          for (int k = 0; k < fields.size(); k++) {
            if (!comparable(fields.get(k).type(), parentFields.get(k).type())) {
              throw new FloeException(SqlState.DATATYPE_MISMATCH, "foreign key constraint \"" + name + "\" cannot "
                  + "be implemented", "Key columns \"" + fields.get(k).name() + "\" and \"" + parentFields.get(k)
                  .name() + "\" are of incompatible types: " + typeName(schema, properties, fields.get(k)) + " and "
                  + typeName(parentSchema, parentProperties, parentFields.get(k)) + ".", null, 0, null);
            }
          }
          if (self && (ReferentialActions.acts(c.onDelete()) || ReferentialActions.acts(c.onUpdate()))) {
            throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "a foreign key of table \"" + id.name()
                + "\" to itself cannot have an ON DELETE or ON UPDATE action", null, "Use NO ACTION or RESTRICT.",
                c.position(), null);
          }
          Constraints.ForeignKey fk = new Constraints.ForeignKey(name, ids, parentId,
              parentFields.stream().map(Types.NestedField::fieldId).toList(), c.onDelete(), c.onUpdate());
          out.put(FloeProperties.FOREIGN_KEY_PREFIX + name, fk.value());
          if (self) {
            out.put(Constraints.referrerKey(id), "");
          }
        }
        default -> throw new IllegalStateException(c.kind().toString());
      }
    }
    return out;
  }

  /**
   * Marks each table a foreign key of {@code constraints} references (other than {@code child} itself)
   * as referenced by {@code child}: before the key is committed, so a DELETE there never misses it.
   */
  void markReferenced(TableIdentifier child, List<TableConstraint> constraints) {
    for (TableConstraint c : constraints) {
      if (c.kind() != ConstraintKind.FOREIGN_KEY) {
        continue;
      }
      TableIdentifier parentId = tables.require(c.references().orElseThrow(), session.currentSchema());
      if (parentId.equals(child)) {
        continue;
      }
      Optional<Table> parent = tables.live(parentId);
      if (parent.isEmpty() || parent.get().properties().containsKey(Constraints.referrerKey(child))) {
        continue; // declare() reports a missing table
      }
      new Ddl(session, tables).alterTable(new Ast.AlterTable(qualified(parentId), false, List.of(
          new Ast.SetProperties(Map.of(Constraints.referrerKey(child), new Ast.PropertyValue(Optional.of(""),
              List.of(), 0))))));
    }
  }

  /** ALTER TABLE ... ADD CONSTRAINT: declared, the table's rows checked against it (unless NOT VALID). */
  void add(org.apache.iceberg.Transaction txn, TableIdentifier id, TableConstraint c) {
    Table table = txn.table();
    Map<String, String> set = declare(id, table.schema(), table.properties(), List.of(c), Constraints.names(table),
        false);
    if (c.validate()) {
      validate(id, table, set);
    }
    UpdateProperties update = txn.updateProperties();
    set.forEach(update::set);
    update.commit();
  }

  /** ALTER TABLE ... DROP CONSTRAINT. */
  void drop(org.apache.iceberg.Transaction txn, TableIdentifier id, Ast.DropConstraint d) {
    Table table = txn.table();
    String key = null;
    if (table.properties().containsKey(FloeProperties.CHECK_PREFIX + d.name())) {
      key = FloeProperties.CHECK_PREFIX + d.name();
    } else if (table.properties().containsKey(FloeProperties.FOREIGN_KEY_PREFIX + d.name())) {
      key = FloeProperties.FOREIGN_KEY_PREFIX + d.name();
    } else {
      Optional<Indexes.Index> unique = Indexes.of(table).stream().filter(i -> i.constraint() && i.name().equals(
          d.name())).findFirst();
      if (unique.isPresent()) {
        for (var e : ConstraintChecks.referencing(session, id, table)) {
          if (new HashSet<>(e.getValue().parentColumns()).equals(new HashSet<>(unique.get().fieldIds()))) {
            throw dependents("constraint " + d.name() + " on table " + id.name(), "constraint " + e.getValue().name()
                + " on table " + e.getKey().name() + " depends on index " + d.name());
          }
        }
        key = FloeProperties.INDEX_PREFIX + d.name();
      }
    }
    if (key == null) {
      if (d.name().equals(id.name() + "_pkey") && !table.schema().identifierFieldIds().isEmpty()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot drop the primary key of table \"" + id.name()
            + "\"", null, "A primary key is the table's Iceberg identifier fields, which a keyed table keeps.",
            d.position(), null);
      }
      if (d.ifExists()) {
        session.notice("constraint \"" + d.name() + "\" of relation \"" + id.name() + "\" does not exist, skipping");
        return;
      }
      throw new FloeException(SqlState.UNDEFINED_OBJECT, "constraint \"" + d.name() + "\" of relation \"" + id.name()
          + "\" does not exist");
    }
    txn.updateProperties().remove(key).commit();
  }

  /**
   * What dropping the column {@code f} of {@code id} does to constraints: the table's own constraints on
   * it go with it, as in PostgreSQL; a foreign key of another table that references it refuses (2BP01).
   */
  void dropColumn(org.apache.iceberg.Transaction txn, TableIdentifier id, Types.NestedField f) {
    Table table = txn.table();
    for (var e : ConstraintChecks.referencing(session, id, table)) {
      if (e.getValue().parentColumns().contains(f.fieldId()) && !e.getKey().equals(id)) {
        throw new FloeException(SqlState.DEPENDENT_OBJECTS_STILL_EXIST, "cannot drop column " + f.name()
            + " of table " + id.name() + " because other objects depend on it", "constraint " + e.getValue().name()
            + " on table " + e.getKey().name() + " depends on column " + f.name() + " of table " + id.name(),
            "Use DROP ... CASCADE to drop the dependent objects too.", 0, null);
      }
    }
    List<String> gone = new ArrayList<>();
    for (Constraints.Check c : Constraints.checks(table)) {
      if (Constraints.columnsOf(c.expression(), table.schema()).contains(f.name())) {
        gone.add(FloeProperties.CHECK_PREFIX + c.name());
      }
    }
    for (Constraints.ForeignKey fk : Constraints.foreignKeys(table)) {
      if (fk.columns().contains(f.fieldId()) || fk.parent().equals(id) && fk.parentColumns().contains(f.fieldId())) {
        gone.add(FloeProperties.FOREIGN_KEY_PREFIX + fk.name());
      }
    }
    for (Indexes.Index i : Indexes.of(table)) {
      if (i.fieldIds().contains(f.fieldId())) {
        gone.add(FloeProperties.INDEX_PREFIX + i.name());
      }
    }
    if (!gone.isEmpty()) {
      UpdateProperties update = txn.updateProperties();
      gone.forEach(update::remove);
      update.commit();
    }
  }

  /** RENAME COLUMN: the CHECK expressions that name the column name it by its new name. */
  void renameColumn(org.apache.iceberg.Transaction txn, String from, String to) {
    UpdateProperties update = null;
    for (Constraints.Check c : Constraints.checks(txn.table())) {
      String renamed = Constraints.renameColumn(c.expression(), from, to);
      if (!renamed.equals(c.expression())) {
        update = update == null ? txn.updateProperties() : update;
        update.set(FloeProperties.CHECK_PREFIX + c.name(), renamed);
      }
    }
    if (update != null) {
      update.commit();
    }
  }

  /** RENAME TO: refused for a table with foreign keys, or one they reference (they name it). */
  void checkRename(TableIdentifier id, Table table) {
    List<String> keys = new ArrayList<>();
    Constraints.foreignKeys(table).forEach(fk -> keys.add(fk.name()));
    ConstraintChecks.referencing(session, id, table).forEach(e -> keys.add(e.getValue().name()));
    if (!keys.isEmpty()) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot rename table \"" + id.name() + "\": foreign "
          + "key \"" + keys.get(0) + "\" names it", null, "Drop the foreign key, rename the table, and add the key "
          + "again.", 0, null);
    }
  }

  /**
   * DROP TABLE of {@code dropped}: refused while a foreign key of another table references one of them
   * (2BP01); with CASCADE, those keys are dropped first.
   */
  void beforeDrop(List<TableIdentifier> dropped, boolean cascade) {
    for (TableIdentifier id : dropped) {
      Optional<Table> table;
      try {
        table = tables.live(id);
      } catch (RuntimeException unreadable) {
        continue;
      }
      if (table.isEmpty()) {
        continue;
      }
      for (var e : ConstraintChecks.referencing(session, id, table.get())) {
        if (dropped.contains(e.getKey())) {
          continue;
        }
        if (!cascade) {
          throw dependents("table " + id.name(), "constraint " + e.getValue().name() + " on table "
              + e.getKey().name() + " depends on table " + id.name());
        }
        session.notice("drop cascades to constraint " + e.getValue().name() + " on table " + e.getKey().name());
        new Ddl(session, tables).alterTable(new Ast.AlterTable(qualified(e.getKey()), false, List.of(
            new Ast.DropConstraint(e.getValue().name(), true, false, 0))));
      }
    }
  }

  /** Checks the rows of {@code table} against the constraints {@code set} declares. */
  private void validate(TableIdentifier id, Table table, Map<String, String> set) {
    String rows = ConstraintChecks.name(id);
    for (Map.Entry<String, String> e : set.entrySet()) {
      String key = e.getKey();
      if (key.startsWith(FloeProperties.INDEX_PREFIX)) {
        Indexes.Index index = Indexes.Index.parse(key, e.getValue()).orElseThrow();
        uniqueRows(id, table, index);
      } else if (key.startsWith(FloeProperties.CHECK_PREFIX)) {
        String name = key.substring(FloeProperties.CHECK_PREFIX.length());
        if (row("SELECT 1 FROM " + rows + " AS " + Lexer.quoteIdentifier(id.name()) + " WHERE NOT coalesce(("
            + e.getValue() + "), true) LIMIT 1") != null) {
          throw new FloeException(SqlState.CHECK_VIOLATION, "check constraint \"" + name + "\" of relation \""
              + id.name() + "\" is violated by some row");
        }
      } else if (key.startsWith(FloeProperties.FOREIGN_KEY_PREFIX)) {
        Constraints.ForeignKey fk = Constraints.ForeignKey.parse(key.substring(FloeProperties.FOREIGN_KEY_PREFIX
            .length()), e.getValue()).orElseThrow();
        List<String> columns = ConstraintChecks.names(table.schema(), fk.columns());
        Schema parentSchema = fk.parent().equals(id) ? table.schema() : tables.live(fk.parent()).orElseThrow()
            .schema();
        List<String> parentColumns = ConstraintChecks.names(parentSchema, fk.parentColumns());
        StringBuilder match = new StringBuilder();
        StringBuilder present = new StringBuilder();
        StringBuilder values = new StringBuilder("concat_ws(', '");
        for (int k = 0; k < columns.size(); k++) {
          String c = "n." + Lexer.quoteIdentifier(columns.get(k));
          match.append(k > 0 ? " AND " : "").append(c).append(" = p.").append(Lexer.quoteIdentifier(
              parentColumns.get(k)));
          present.append(k > 0 ? " AND " : "").append(c).append(" IS NOT NULL");
          values.append(", CAST(").append(c).append(" AS VARCHAR)");
        }
        Object[] missing = row("SELECT " + values + ") FROM " + rows + " AS n WHERE " + present
            + " AND NOT EXISTS (SELECT 1 FROM " + ConstraintChecks.name(fk.parent()) + " AS p WHERE " + match
            + ") LIMIT 1");
        if (missing != null) {
          throw new FloeException(SqlState.FOREIGN_KEY_VIOLATION, "insert or update on table \"" + id.name()
              + "\" violates foreign key constraint \"" + fk.name() + "\"", "Key (" + String.join(", ", columns)
              + ")=(" + missing[0] + ") is not present in table \"" + fk.parent().name() + "\".", null, 0, null);
        }
      }
    }
  }

  /** CREATE UNIQUE INDEX and ADD UNIQUE on a table with rows: PostgreSQL's error for the first key twice. */
  void uniqueRows(TableIdentifier id, Table table, Indexes.Index index) {
    List<String> columns = ConstraintChecks.names(table.schema(), index.fieldIds());
    StringBuilder list = new StringBuilder();
    StringBuilder present = new StringBuilder();
    StringBuilder values = new StringBuilder("concat_ws(', '");
    for (int k = 0; k < columns.size(); k++) {
      String c = Lexer.quoteIdentifier(columns.get(k));
      list.append(k > 0 ? ", " : "").append(c);
      present.append(k > 0 ? " AND " : "").append(c).append(" IS NOT NULL");
      values.append(", CAST(").append(c).append(" AS VARCHAR)");
    }
    Object[] twice = row("SELECT " + values + ") FROM " + ConstraintChecks.name(id) + " WHERE " + present
        + " GROUP BY " + list + " HAVING count(*) > 1 LIMIT 1");
    if (twice != null) {
      throw new FloeException(SqlState.UNIQUE_VIOLATION, "could not create unique index \"" + index.name() + "\"",
          "Key (" + String.join(", ", columns) + ")=(" + twice[0] + ") is duplicated.", null, 0, null);
    }
  }

  private Object[] row(String sql) {
    Composer c = new Composer().add(sql);
    QueryBinder.Bound bound = session.bind(c.text(), c::position, session.relations());
    return session.sql().queryRow(bound.sql(), o -> 0);
  }

  /** The referenced table's columns: those named, or its primary key; they must be a unique key of it. */
  private static List<Types.NestedField> referenced(TableConstraint c, TableIdentifier parentId, Schema schema,
      Map<String, String> properties) {
    List<Types.NestedField> fields = new ArrayList<>();
    if (c.referencedColumns().isEmpty()) {
      if (schema.identifierFieldIds().isEmpty()) {
        throw new FloeException(SqlState.INVALID_FOREIGN_KEY, "there is no primary key for referenced table \""
            + parentId.name() + "\"");
      }
      for (String name : schema.identifierFieldNames()) {
        fields.add(schema.findField(name));
      }
      return fields;
    }
    for (String column : c.referencedColumns()) {
      Types.NestedField f = schema.caseInsensitiveFindField(column);
      if (f == null) {
        throw new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + column + "\" referenced in foreign key "
            + "constraint does not exist");
      }
      fields.add(f);
    }
    Set<Integer> ids = new HashSet<>();
    fields.forEach(f -> ids.add(f.fieldId()));
    boolean unique = ids.equals(schema.identifierFieldIds());
    for (Map.Entry<String, String> e : properties.entrySet()) {
      unique |= Indexes.Index.parse(e.getKey(), e.getValue()).filter(i -> i.unique()
          && new HashSet<>(i.fieldIds()).equals(ids)).isPresent();
    }
    if (!unique) {
      throw new FloeException(SqlState.INVALID_FOREIGN_KEY, "there is no unique constraint matching given keys for "
          + "referenced table \"" + parentId.name() + "\"");
    }
    return fields;
  }

  /** Whether values of the two types compare as equal keys: the same type, or both numbers or both text. */
  private static boolean comparable(Type a, Type b) {
    return family(a).equals(family(b));
  }

  private static String family(Type t) {
    return switch (t.typeId()) {
      case INTEGER, LONG, DECIMAL, FLOAT, DOUBLE -> "number";
      case STRING -> "text";
      case TIMESTAMP -> ((Types.TimestampType) t).shouldAdjustToUTC() ? "timestamptz" : "timestamp";
      default -> t.typeId().toString();
    };
  }

  private static String typeName(Schema schema, Map<String, String> properties, Types.NestedField f) {
    return dev.floe.types.TypeMapping.fromIceberg(f.type(), Optional.ofNullable(properties.get(
        FloeProperties.columnSqlType(f.fieldId())))).toString();
  }

  /** PostgreSQL's name for an unnamed constraint (table_columns_suffix, numbered if taken), or the given one. */
  private static String name(TableConstraint c, TableIdentifier id, List<String> columns, String suffix,
      Set<String> taken) {
    if (c.name().isPresent()) {
      if (!taken.add(c.name().get())) {
        throw new FloeException(SqlState.DUPLICATE_OBJECT, "constraint \"" + c.name().get() + "\" for relation \""
            + id.name() + "\" already exists");
      }
      return c.name().get();
    }
    String base = id.name() + (columns.isEmpty() ? "" : "_" + String.join("_", columns)) + "_" + suffix;
    String name = base;
    for (int n = 1; !taken.add(name); n++) {
      name = base + n;
    }
    return name;
  }

  private static FloeException dependents(String what, String detail) {
    return new FloeException(SqlState.DEPENDENT_OBJECTS_STILL_EXIST, "cannot drop " + what + " because other objects "
        + "depend on it", detail, "Use DROP ... CASCADE to drop the dependent objects too.", 0, null);
  }

  private static QualifiedName qualified(TableIdentifier id) {
    return new QualifiedName(List.of(id.namespace().level(0), id.name()), 0);
  }
}
