package dev.floe.exec;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.sql.Ast;
import dev.floe.sql.Composer;
import dev.floe.sql.Lexer;
import dev.floe.types.TypeMapping;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The change query of a MERGE: one row per source row (and matched target row), with the action code
 * of the clause that acts on it ({@code __floe_action}: clause k, 1-based, if it matched; 1000 + k if it
 * did not; 0 for none), the target row's file and position, and the row's new values as
 * {@link Mutations#value} columns, cast to the stored types.
 *
 * @param query the change query, over {@link Relations#TARGET}
 * @param removes a condition on the change table: the rows whose target row goes (UPDATE, DELETE)
 * @param adds a condition on the change table: the rows that bring a new row (UPDATE, INSERT)
 */
record MergeQuery(Composer query, String removes, String adds) {
  private static final String FILE = dev.floe.read.ScanSql.ROW_FILE;
  private static final String POS = dev.floe.read.ScanSql.ROW_POSITION;

  static MergeQuery of(ChangeTarget t, Ast.Merge s) {
    String a = Lexer.quoteIdentifier(t.alias());
    List<Ast.MergeClause> clauses = s.clauses();
    Composer action = new Composer().add("(CASE WHEN " + a + "." + FILE + " IS NOT NULL THEN ");
    boolean anyMatched = whenClauses(action, clauses, true);
    action.add(" ELSE ");
    boolean anyNotMatched = whenClauses(action, clauses, false);
    action.add(" END)");
    if (!anyMatched && !anyNotMatched) {
      throw FloeException.syntax("MERGE needs a WHEN clause", s.on().offset() + 1);
    }
    Composer c = Mutations.with(s.with()).add("SELECT ");
    c.add(action);
    c.add(" AS __floe_action, " + a + "." + FILE + ", " + a + "." + POS);
    List<Map<String, Ast.Assignment>> updates = new ArrayList<>();
    List<Map<String, Optional<Ast.Fragment>>> inserts = new ArrayList<>();
    for (Ast.MergeClause clause : clauses) {
      updates.add(clause.action() == Ast.MergeAction.UPDATE ? t.assignments(clause.set()) : Map.of());
      inserts.add(clause.action() == Ast.MergeAction.INSERT ? insertValues(t, clause) : Map.of());
    }
    boolean writes = clauses.stream().anyMatch(x -> x.action() == Ast.MergeAction.UPDATE
        || x.action() == Ast.MergeAction.INSERT);
    for (int col = 0; col < t.columns().size(); col++) {
      Column column = t.columns().get(col);
      String stored = TypeMapping.duckdbType(column, t.schema().findField(column.fieldId()).type());
      if (!writes) {
        c.add(", CAST(NULL AS " + stored + ") AS " + Mutations.value(col));
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
            c.add(t.defaultSql(column));
          } else {
            c.add("(").add(assign.value().get()).add(")");
          }
          c.add(" AS " + stored + ")");
        } else if (clause.action() == Ast.MergeAction.INSERT) {
          Optional<Ast.Fragment> v = inserts.get(k).getOrDefault(column.name(), Optional.empty());
          c.add(" WHEN " + (1001 + k) + " THEN CAST(");
          if (v.isEmpty()) {
            c.add(t.defaultSql(column));
          } else {
            c.add("(").add(v.get()).add(")");
          }
          c.add(" AS " + stored + ")");
        }
      }
      c.add(" END AS " + Mutations.value(col));
    }
    c.add(t.oldKeys(a)); // a keyed tail deletes the removed rows by key
    c.add(" FROM ").add(s.source()).add(" LEFT JOIN " + Relations.TARGET + " AS " + a + " ON ").add(s.on());
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
    return new MergeQuery(c, actionIn(removing), actionIn(adding));
  }

  private static String actionIn(List<String> codes) {
    return codes.isEmpty() ? "false" : "__floe_action IN (" + String.join(", ", codes) + ")";
  }

  /**
   * {@code CASE WHEN cond THEN code ... ELSE 0 END} over the MATCHED or NOT MATCHED clauses: the first
   * clause whose condition holds decides the row's action. Whether there was any such clause.
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

  /** An INSERT clause's values by column: an expression, or DEFAULT (empty). */
  private static Map<String, Optional<Ast.Fragment>> insertValues(ChangeTarget t, Ast.MergeClause clause) {
    List<String> names = new ArrayList<>();
    if (clause.insertColumns().isEmpty()) {
      t.columns().forEach(c -> names.add(c.name()));
    } else {
      for (String n : clause.insertColumns()) {
        names.add(t.requireColumn(n, clause.position()).name());
      }
    }
    if (clause.insertValues().size() > names.size()) {
      throw FloeException.syntax("INSERT has more expressions than target columns", clause.position());
    }
    if (!clause.insertColumns().isEmpty() && !clause.insertValues().isEmpty()
        && clause.insertValues().size() < names.size()) {
      throw FloeException.syntax("INSERT has more target columns than expressions", clause.position());
    }
    Map<String, Optional<Ast.Fragment>> values = new HashMap<>();
    for (int k = 0; k < clause.insertValues().size(); k++) {
      if (values.put(names.get(k), clause.insertValues().get(k)) != null) {
        throw FloeException.syntax("column \"" + names.get(k) + "\" specified more than once", clause.position());
      }
    }
    return values;
  }
}
