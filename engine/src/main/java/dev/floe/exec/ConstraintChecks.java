package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Composer;
import dev.floe.sql.Lexer;
import dev.floe.sql.QueryBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;

/**
 * The CHECK and FOREIGN KEY constraints of a row-level statement's change (uniqueness is
 * {@link KeyChecks}'): its new rows make every CHECK true or NULL and reference rows that exist; the rows
 * it removes from a table that foreign keys reference are referenced by no row, unless the change keeps
 * their key. Each check is one DuckDB query over the statement's materialised rows, and the tables read
 * at the statement's snapshot; a violation is PostgreSQL's error, word for word.
 */
final class ConstraintChecks {
  private final SessionContext session;

  ConstraintChecks(SessionContext session) {
    this.session = session;
  }

  /**
   * Checks the new rows {@code newRows} (a temporary table or parenthesised query, the target's columns
   * by name) of target {@code t}: its CHECK constraints, then its foreign keys.
   */
  void checkNew(ChangeTarget t, String newRows, Relations relations) {
    for (Constraints.Check check : Constraints.checks(t.live())) {
      // the rows go by the table's name, as the expression may qualify its columns with it
      String rows = Lexer.quoteIdentifier(t.id().name());
      Composer c = new Composer().add("SELECT " + failingRow(t, rows) + " FROM " + newRows + " AS " + rows
          + " WHERE NOT coalesce((" + check.expression() + "), true) LIMIT 1");
      Object[] failing = query(c, relations, check.name());
      if (failing != null) {
        throw new FloeException(SqlState.CHECK_VIOLATION, "new row for relation \"" + t.id().name()
            + "\" violates check constraint \"" + check.name() + "\"", "Failing row contains (" + failing[0] + ").",
            null, 0, null).violating(t.id().namespace().level(0), t.id().name(), check.name());
      }
    }
    for (Constraints.ForeignKey fk : Constraints.foreignKeys(t.live())) {
      Optional<Table> parent = session.tables().live(fk.parent());
      List<String> columns = names(t.schema(), fk.columns());
      List<String> parentColumns = parent.map(p -> names(p.schema(), fk.parentColumns())).orElse(null);
      if (columns == null || parentColumns == null) {
        continue; // its table or a column of it is gone, and the key with it
      }
      Composer c = new Composer().add("SELECT " + values(columns, "n") + " FROM " + newRows + " AS n WHERE "
          + present(columns, "n") + " AND NOT EXISTS (SELECT 1 FROM " + name(fk.parent()) + " AS p WHERE "
          + join(columns, "n", parentColumns, "p") + ")");
      if (fk.parent().equals(t.id())) {
        // a row may reference a row of the same statement
        c.add(" AND NOT EXISTS (SELECT 1 FROM " + newRows + " AS m WHERE " + join(columns, "n", parentColumns, "m")
            + ")");
      }
      c.add(" LIMIT 1");
      Object[] missing = query(c, relations, fk.name());
      if (missing != null) {
        throw new FloeException(SqlState.FOREIGN_KEY_VIOLATION, "insert or update on table \"" + t.id().name()
            + "\" violates foreign key constraint \"" + fk.name() + "\"", "Key (" + String.join(", ", columns)
            + ")=(" + missing[0] + ") is not present in table \"" + fk.parent().name() + "\".", null, 0, null)
            .violating(t.id().namespace().level(0), t.id().name(), fk.name());
      }
    }
  }

  /**
   * Checks the rows a statement removes from {@code t} (a query of them, the target's columns by name,
   * as stored) against the foreign keys that reference {@code t}: a removed key that the statement's new
   * rows {@code newRows} (null: none) do not bring back must be referenced by no row.
   */
  /** How a statement removes the rows it removes: each referencing key's ON DELETE or ON UPDATE applies. */
  enum Removal { DELETE, UPDATE, MERGE }

  /**
   * @return the referential actions (ON DELETE / ON UPDATE CASCADE, SET NULL, SET DEFAULT) to run once the
   *     statement's own change is in its transaction, as PostgreSQL runs them after the row changed
   */
  List<Runnable> checkRemoved(ChangeTarget t, String removed, String newRows, Relations relations,
      Removal removal) {
    List<java.util.Map.Entry<TableIdentifier, Constraints.ForeignKey>> referrers = referencing(session, t.id(),
        t.live());
    List<Runnable> actions = new ArrayList<>();
    for (var e : referrers) {
      char action = removal == Removal.UPDATE ? e.getValue().onUpdate() : e.getValue().onDelete();
      if (removal == Removal.MERGE && (ReferentialActions.acts(e.getValue().onDelete())
          || ReferentialActions.acts(e.getValue().onUpdate()))) {
        throw ReferentialActions.notInMerge(t, e.getKey(), e.getValue());
      }
      if (ReferentialActions.acts(action)) {
        actions.add(() -> new ReferentialActions(session).apply(t, e.getKey(), e.getValue(), removed, newRows,
            action, removal));
      }
    }
    for (var e : referrers) {
      TableIdentifier child = e.getKey();
      Constraints.ForeignKey fk = e.getValue();
      char action = removal == Removal.UPDATE ? fk.onUpdate() : fk.onDelete();
      if (ReferentialActions.acts(action)) {
        continue; // done above
      }
      Optional<Table> table = session.tables().live(child);
      {
        List<String> columns = names(table.orElseThrow().schema(), fk.columns());
        List<String> keys = names(t.schema(), fk.parentColumns());
        if (columns == null || keys == null) {
          continue;
        }
        Composer c = new Composer().add("SELECT " + values(keys, "o") + " FROM (" + removed + ") AS o WHERE "
            + present(keys, "o"));
        if (newRows != null) {
          c.add(" AND NOT EXISTS (SELECT 1 FROM " + newRows + " AS n WHERE " + join(keys, "n", keys, "o") + ")");
        }
        c.add(" AND EXISTS (SELECT 1 FROM " + name(child) + " AS r WHERE " + join(columns, "r", keys, "o"));
        if (child.equals(t.id())) {
          // rows of the table removed with their parent do not reference it after the statement
          c.add(" AND NOT EXISTS (SELECT 1 FROM (" + removed + ") AS g WHERE " + join(columns, "g", columns, "r")
              + ")");
        }
        c.add(") LIMIT 1");
        Object[] referenced = query(c, relations, fk.name());
        if (referenced != null) {
          throw new FloeException(SqlState.FOREIGN_KEY_VIOLATION, "update or delete on table \"" + t.id().name()
              + "\" violates foreign key constraint \"" + fk.name() + "\" on table \"" + child.name() + "\"",
              "Key (" + String.join(", ", keys) + ")=(" + referenced[0] + ") is still referenced from table \""
              + child.name() + "\".", null, 0, null).violating(child.namespace().level(0), child.name(), fk.name());
        }
      }
    }
    return actions;
  }

  /** Whether {@code t} has rows a removal must not orphan: foreign keys of other tables may reference it. */
  static boolean referenced(ChangeTarget t) {
    return !Constraints.referrers(t.live()).isEmpty();
  }

  /** The foreign keys that reference {@code parent}, with the table each belongs to. */
  static List<java.util.Map.Entry<TableIdentifier, Constraints.ForeignKey>> referencing(SessionContext session,
      TableIdentifier parent, Table table) {
    List<java.util.Map.Entry<TableIdentifier, Constraints.ForeignKey>> out = new ArrayList<>();
    for (TableIdentifier child : Constraints.referrers(table)) {
      Optional<Table> found;
      try {
        found = session.tables().live(child);
      } catch (RuntimeException unreadable) {
        continue; // its keys cannot be read, nor its rows
      }
      found.ifPresent(c -> Constraints.foreignKeys(c).stream().filter(fk -> fk.parent().equals(parent))
          .forEach(fk -> out.add(java.util.Map.entry(child, fk))));
    }
    return out;
  }

  /** The columns of {@code t} that foreign keys of other tables reference. */
  static java.util.Set<String> referencedColumns(SessionContext session, ChangeTarget t) {
    java.util.Set<String> out = new java.util.HashSet<>();
    if (!referenced(t)) {
      return out;
    }
    for (var e : referencing(session, t.id(), t.live())) {
      List<String> columns = names(t.schema(), e.getValue().parentColumns());
      if (columns != null) {
        out.addAll(columns);
      }
    }
    return out;
  }

  private Object[] query(Composer c, Relations relations, String constraint) {
    QueryBinder.Bound bound;
    try {
      bound = session.bind(c.text(), c::position, relations);
    } catch (FloeException e) {
      throw new FloeException(e.sqlState(), e.getMessage(), "While checking constraint \"" + constraint + "\".",
          e.hint().orElse(null), 0, e);
    }
    return session.sql().queryRow(bound.sql(), o -> 0);
  }

  /** The row's values as PostgreSQL's DETAIL shows a failing row: text, {@code null} for NULL. */
  private static String failingRow(ChangeTarget t, String alias) {
    List<String> columns = new ArrayList<>();
    t.columns().forEach(c -> columns.add(c.name()));
    return values(columns, alias);
  }

  private static String values(List<String> columns, String alias) {
    StringBuilder b = new StringBuilder("concat_ws(', '");
    for (String c : columns) {
      b.append(", coalesce(CAST(").append(alias).append('.').append(Lexer.quoteIdentifier(c))
          .append(" AS VARCHAR), 'null')");
    }
    return b.append(')').toString();
  }

  private static String present(List<String> columns, String alias) {
    List<String> out = new ArrayList<>();
    columns.forEach(c -> out.add(alias + "." + Lexer.quoteIdentifier(c) + " IS NOT NULL"));
    return String.join(" AND ", out);
  }

  private static String join(List<String> left, String l, List<String> right, String r) {
    List<String> out = new ArrayList<>();
    for (int k = 0; k < left.size(); k++) {
      out.add(l + "." + Lexer.quoteIdentifier(left.get(k)) + " = " + r + "." + Lexer.quoteIdentifier(right.get(k)));
    }
    return String.join(" AND ", out);
  }

  static String name(TableIdentifier id) {
    return Lexer.quoteIdentifier(id.namespace().level(0)) + "." + Lexer.quoteIdentifier(id.name());
  }

  /** The names of the fields, or null if one is gone. */
  static List<String> names(Schema schema, List<Integer> fieldIds) {
    List<String> out = new ArrayList<>();
    for (int id : fieldIds) {
      Types.NestedField f = schema.findField(id);
      if (f == null) {
        return null;
      }
      out.add(f.name());
    }
    return out;
  }
}
