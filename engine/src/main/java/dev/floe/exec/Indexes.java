package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.FloeProperties;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.SortDirection;
import org.apache.iceberg.SortField;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;

/**
 * CREATE INDEX and DROP INDEX. An index of an Iceberg table is what makes reads by its columns fast: the
 * first index of a table without a sort order gives it one, on the index's columns, so new files and
 * compaction cluster rows by them and each file's bounds prune lookups. An index is kept in the table's
 * properties ({@link FloeProperties#INDEX_PREFIX}), listed in {@code pg_index}, {@code pg_indexes} and
 * psql's {@code \d}; both statements are an ALTER TABLE of those properties (and of the sort order) through
 * the one path ALTER TABLE commits by. A unique index is enforced as a UNIQUE constraint is
 * ({@link KeyChecks}); the index of a UNIQUE constraint is one, marked as the constraint's.
 */
final class Indexes {
  private final SessionContext session;
  private final Tables tables;

  Indexes(SessionContext session, Tables tables) {
    this.session = session;
    this.tables = tables;
  }

  /**
   * An index as its property keeps it; {@code constraint}: the index of a UNIQUE constraint, which
   * pg_constraint lists and DROP CONSTRAINT drops.
   */
  record Index(String name, List<Integer> fieldIds, boolean unique, boolean sorted, boolean constraint) {
    static Optional<Index> parse(String key, String value) {
      if (!key.startsWith(FloeProperties.INDEX_PREFIX)) {
        return Optional.empty();
      }
      boolean unique = false;
      boolean sorted = false;
      boolean constraint = false;
      List<Integer> ids = new ArrayList<>();
      try {
        for (String word : value.strip().split("\\s+")) {
          switch (word) {
            case "unique" -> unique = true;
            case "sorted" -> sorted = true;
            case "constraint" -> constraint = true;
            default -> {
              for (String id : word.split(",")) {
                ids.add(Integer.parseInt(id));
              }
            }
          }
        }
      } catch (NumberFormatException e) {
        return Optional.empty(); // another engine's property of that name: not an index
      }
      return ids.isEmpty() ? Optional.empty()
          : Optional.of(new Index(key.substring(FloeProperties.INDEX_PREFIX.length()), ids, unique, sorted,
          constraint));
    }

    String value() {
      return (unique ? "unique " : "") + (sorted ? "sorted " : "") + (constraint ? "constraint " : "")
          + String.join(",", fieldIds.stream().map(String::valueOf).toList());
    }
  }

  /** The indexes of a table, by name. */
  static List<Index> of(Table table) {
    List<Index> out = new ArrayList<>();
    table.properties().entrySet().stream().sorted(Map.Entry.comparingByKey())
        .forEach(e -> Index.parse(e.getKey(), e.getValue()).ifPresent(out::add));
    return out;
  }

  Result create(Ast.CreateIndex s) {
    TableIdentifier id = tables.require(s.table(), session.currentSchema());
    Table table = tables.live(id).orElseThrow(() -> FloeException.undefinedTable(id.name(), s.table().position()));
    List<Integer> ids = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (Ast.SortField c : s.columns()) {
      Types.NestedField f = table.schema().caseInsensitiveFindField(c.column());
      if (f == null) {
        throw new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + c.column() + "\" does not exist",
            c.position());
      }
      ids.add(f.fieldId());
      names.add(f.name());
    }
    String name = s.name().orElseGet(() -> generatedName(id, names));
    Optional<String> taken = relationNamed(id.namespace(), name);
    if (taken.isPresent()) {
      if (s.ifNotExists()) {
        session.notice("relation \"" + name + "\" already exists, skipping");
        return new CommandResult("CREATE INDEX", 0);
      }
      throw new FloeException(SqlState.DUPLICATE_TABLE, "relation \"" + name + "\" already exists");
    }
    if (s.unique() && dev.floe.tail.TailLog.hasTail(table)) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "unique indexes are not supported on table \""
          + id.name() + "\", which has a tail", null, "A tail acknowledges appends without reading the table.",
          s.position(), null);
    }
    boolean sorts = table.sortOrder().isUnsorted();
    Index index = new Index(name, ids, s.unique(), sorts, false);
    if (s.unique() && !new java.util.HashSet<>(ids).equals(table.schema().identifierFieldIds())) {
      new ConstraintDdl(session, tables).uniqueRows(id, table, index); // PostgreSQL checks the rows it has
    }
    Map<String, Ast.PropertyValue> set = new LinkedHashMap<>();
    set.put(FloeProperties.INDEX_PREFIX + name, scalar(index.value()));
    if (sorts) {
      List<String> fields = new ArrayList<>();
      for (int i = 0; i < names.size(); i++) {
        Ast.SortField c = s.columns().get(i);
        fields.add(dev.floe.sql.Lexer.quoteIdentifier(names.get(i)) + (c.descending() ? " DESC" : " ASC")
            + (c.nullsFirst() ? " NULLS FIRST" : " NULLS LAST"));
      }
      set.put("sorted_by", new Ast.PropertyValue(Optional.empty(), fields, s.position()));
    }
    alter(s.table(), List.of(new Ast.SetProperties(set)));
    return new CommandResult("CREATE INDEX", 0);
  }

  Result drop(Ast.DropIndex s) {
    for (QualifiedName n : s.names()) {
      Namespace schema = Namespace.of(n.parts().size() > 1 ? n.parts().get(n.parts().size() - 2)
          : session.currentSchema());
      String name = n.last();
      Optional<TableIdentifier> owner = Optional.empty();
      Index index = null;
      for (TableIdentifier t : tables.catalog().listTables(schema)) {
        Optional<Table> table = readable(t);
        if (table.isEmpty()) {
          continue;
        }
        if (name.equals(t.name() + "_pkey") && !table.get().schema().identifierFieldIds().isEmpty()) {
          throw new FloeException(SqlState.DEPENDENT_OBJECTS_STILL_EXIST, "cannot drop index " + name
              + " because constraint " + name + " on table " + t.name() + " requires it", null,
              "You can drop constraint " + name + " on table " + t.name() + " instead.", 0, null);
        }
        Optional<Index> found = of(table.get()).stream().filter(i -> i.name().equals(name)).findFirst();
        if (found.isPresent()) {
          owner = Optional.of(t);
          index = found.get();
          break;
        }
      }
      if (owner.isEmpty()) {
        if (s.ifExists()) {
          session.notice("index \"" + name + "\" does not exist, skipping");
          continue;
        }
        throw new FloeException(SqlState.UNDEFINED_OBJECT, "index \"" + name + "\" does not exist");
      }
      List<Ast.AlterAction> actions = new ArrayList<>();
      actions.add(new Ast.UnsetProperties(List.of(FloeProperties.INDEX_PREFIX + name), true));
      Table table = readable(owner.get()).orElseThrow();
      if (index.sorted() && sortedBy(table, index.fieldIds())) {
        actions.add(new Ast.SetProperties(Map.of("sorted_by", new Ast.PropertyValue(Optional.empty(), List.of(),
            0)))); // the sort order it gave the table goes with it
      }
      alter(new QualifiedName(List.of(owner.get().namespace().level(0), owner.get().name()), 0), actions);
    }
    return new CommandResult("DROP INDEX", 0);
  }

  /** PostgreSQL's name for an unnamed index: table_column[_column]_idx, with a number if it is taken. */
  private String generatedName(TableIdentifier id, List<String> columns) {
    String base = id.name() + "_" + String.join("_", columns) + "_idx";
    String name = base;
    for (int n = 1; relationNamed(id.namespace(), name).isPresent(); n++) {
      name = base + n;
    }
    return name;
  }

  /** The table, index or primary key of the schema named {@code name}, if there is one. */
  private Optional<String> relationNamed(Namespace schema, String name) {
    for (TableIdentifier t : tables.catalog().listTables(schema)) {
      if (t.name().equals(name)) {
        return Optional.of(name);
      }
      Optional<Table> table = readable(t);
      if (table.isPresent() && (name.equals(t.name() + "_pkey") && !table.get().schema().identifierFieldIds()
          .isEmpty() || of(table.get()).stream().anyMatch(i -> i.name().equals(name)))) {
        return Optional.of(name);
      }
    }
    return Optional.empty();
  }

  private Optional<Table> readable(TableIdentifier t) {
    try {
      return tables.live(t);
    } catch (RuntimeException unreadable) {
      return Optional.empty(); // a table whose metadata cannot be read has no index Floe can see
    }
  }

  private static boolean sortedBy(Table table, List<Integer> fieldIds) {
    List<SortField> fields = table.sortOrder().fields();
    if (fields.size() != fieldIds.size()) {
      return false;
    }
    for (int i = 0; i < fields.size(); i++) {
      if (fields.get(i).sourceId() != fieldIds.get(i) || !fields.get(i).transform().isIdentity()) {
        return false;
      }
    }
    return fields.stream().allMatch(f -> f.direction() == SortDirection.ASC || f.direction() == SortDirection.DESC);
  }

  private void alter(QualifiedName table, List<Ast.AlterAction> actions) {
    new Ddl(session, tables).alterTable(new Ast.AlterTable(table, false, actions));
  }

  private static Ast.PropertyValue scalar(String value) {
    return new Ast.PropertyValue(Optional.of(value), List.of(), 0);
  }
}
