package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import dev.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A foreign key's ON DELETE / ON UPDATE action when a statement removes or changes keys that rows of
 * another table reference: CASCADE deletes those rows (or, on UPDATE, gives them the new key), SET NULL
 * and SET DEFAULT change their key columns. Each is a DELETE or UPDATE of the referencing table run as
 * its own statement within the statement's transaction (StatementExecutor opens one when none is open),
 * so the tables change together or not at all, and that statement's own keys, checks and actions apply
 * in turn.
 */
final class ReferentialActions {
  /** The name prefix of the columns that carry an UPDATE's new values beside the removed rows. */
  static final String NEW = "__floe_new_";

  private final SessionContext session;

  ReferentialActions(SessionContext session) {
    this.session = session;
  }

  /** MERGE does not carry out referential actions: it is refused before it changes anything. */
  static FloeException notInMerge(ChangeTarget t, TableIdentifier child, Constraints.ForeignKey fk) {
    return new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "MERGE cannot change rows of table \"" + t.id().name()
        + "\": foreign key \"" + fk.name() + "\" of table \"" + child.name() + "\" has an ON DELETE or ON UPDATE "
        + "action", null, "Use DELETE and UPDATE, whose actions Floe carries out.", 0, null);
  }

  /** Whether {@code action} changes the referencing rows (CASCADE, SET NULL, SET DEFAULT). */
  static boolean acts(char action) {
    return action == 'c' || action == 'n' || action == 'd';
  }

  /** Whether a DELETE, UPDATE or MERGE of {@code name} may run an action on another table. */
  static boolean anyFor(SessionContext session, QualifiedName name) {
    try {
      TableIdentifier id = session.tables().require(name, session.currentSchema());
      Table table = session.tables().live(id).orElse(null);
      if (table == null) {
        return false;
      }
      return ConstraintChecks.referencing(session, id, table).stream().anyMatch(e -> acts(e.getValue().onDelete())
          || acts(e.getValue().onUpdate()));
    } catch (FloeException e) {
      return false; // the statement reports the name itself
    }
  }

  /**
   * Runs {@code fk}'s {@code action} on {@code child} for the keys of {@code t} that the statement's removed
   * rows ({@code removed}) had and its new rows ({@code newRows}, null: none) do not.
   */
  void apply(ChangeTarget t, TableIdentifier child, Constraints.ForeignKey fk, String removed, String newRows,
      char action, ConstraintChecks.Removal removal) {
    Table childTable = session.tables().live(child).orElseThrow();
    List<String> columns = ConstraintChecks.names(childTable.schema(), fk.columns());
    List<String> keys = ConstraintChecks.names(t.schema(), fk.parentColumns());
    if (columns == null || keys == null) {
      return;
    }
    boolean cascadeUpdate = removal == ConstraintChecks.Removal.UPDATE && action == 'c';
    String gone = "__floe_gone_" + UUID.randomUUID().toString().replace("-", "");
    StringBuilder select = new StringBuilder("SELECT DISTINCT ");
    List<String> match = new ArrayList<>();
    List<String> present = new ArrayList<>();
    for (int k = 0; k < keys.size(); k++) {
      String key = Lexer.quoteIdentifier(keys.get(k));
      select.append(k > 0 ? ", " : "").append("o.").append(key);
      if (cascadeUpdate) {
        select.append(", o.").append(Lexer.quoteIdentifier(NEW + keys.get(k)));
      }
      match.add("n." + key + " = o." + key);
      present.add("o." + key + " IS NOT NULL");
    }
    select.append(" FROM (").append(removed).append(") AS o WHERE ").append(String.join(" AND ", present));
    if (newRows != null) {
      select.append(" AND NOT EXISTS (SELECT 1 FROM ").append(newRows).append(" AS n WHERE ")
          .append(String.join(" AND ", match)).append(')');
    }
    run("CREATE TEMP TABLE " + gone + " AS " + select);
    try {
      StringBuilder referencing = new StringBuilder();
      for (int k = 0; k < keys.size(); k++) {
        referencing.append(k > 0 ? " AND " : "").append("__floe_r.").append(Lexer.quoteIdentifier(columns.get(k)))
            .append(" = __floe_g.").append(Lexer.quoteIdentifier(keys.get(k)));
      }
      String table = ConstraintChecks.name(child) + " AS __floe_r";
      String where = " WHERE EXISTS (SELECT 1 FROM " + gone + " AS __floe_g WHERE " + referencing + ")";
      StringBuilder set = new StringBuilder();
      for (int k = 0; k < columns.size(); k++) {
        set.append(k > 0 ? ", " : "").append(Lexer.quoteIdentifier(columns.get(k))).append(" = ").append(
            cascadeUpdate ? "__floe_g." + Lexer.quoteIdentifier(NEW + keys.get(k)) : action == 'n' ? "NULL" : "DEFAULT");
      }
      String statement;
      if (action == 'c' && !cascadeUpdate) {
        statement = "DELETE FROM " + table + where;
      } else if (cascadeUpdate) {
        statement = "UPDATE " + table + " SET " + set + " FROM " + gone + " AS __floe_g WHERE " + referencing;
      } else {
        statement = "UPDATE " + table + " SET " + set + where;
      }
      session.nested(() -> {
        session.executeAsFloe(statement).close();
        return null;
      });
    } finally {
      run("DROP TABLE IF EXISTS " + gone);
    }
  }

  private void run(String sql) {
    try (var st = session.duck().createStatement()) {
      st.execute(sql);
    } catch (java.sql.SQLException e) {
      throw DuckErrors.map(e, o -> 0);
    }
  }
}
