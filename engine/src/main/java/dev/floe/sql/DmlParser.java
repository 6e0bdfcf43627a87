package dev.floe.sql;

import static dev.floe.sql.TokenCursor.unexpected;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Ast.Assignment;
import dev.floe.sql.Ast.Delete;
import dev.floe.sql.Ast.Fragment;
import dev.floe.sql.Ast.Insert;
import dev.floe.sql.Ast.Merge;
import dev.floe.sql.Ast.MergeAction;
import dev.floe.sql.Ast.MergeClause;
import dev.floe.sql.Ast.OnConflict;
import dev.floe.sql.Ast.Query;
import dev.floe.sql.Ast.Statement;
import dev.floe.sql.Ast.Truncate;
import dev.floe.sql.Ast.Update;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The statements that change rows: INSERT (with OVERRIDING, a query or DEFAULT VALUES, ON CONFLICT and
 * RETURNING), UPDATE, DELETE, MERGE and TRUNCATE, and INSERT, UPDATE, DELETE and MERGE behind a WITH. Their
 * expressions, WHERE conditions, FROM/USING lists and sources stay text, as {@link Fragment}s with their
 * offsets, for the binder and DuckDB to read.
 */
final class DmlParser {
  private final TokenCursor in;

  DmlParser(TokenCursor in) {
    this.in = in;
  }

  /**
   * PostgreSQL's {@code WITH ctes INSERT INTO t ... query}: the same as
   * {@code INSERT INTO t ... WITH ctes query}; and {@code WITH ctes UPDATE/DELETE/MERGE ...}. Null if the WITH
   * is an ordinary query.
   */
  Statement withWrite() {
    String sql = in.sql();
    List<Token> tokens = in.tokens();
    int i = in.index();
    int depth = 0;
    for (int k = i; k < tokens.size(); k++) {
      Token t = tokens.get(k);
      if (t.isOp("(")) {
        depth++;
      } else if (t.isOp(")")) {
        depth--;
      } else if (depth == 0 && t.isKeyword("insert")) {
        in.seek(k);
        Insert insert = insert();
        if (insert.source().isEmpty()) {
          throw unexpected(t);
        }
        // The source query, with the CTEs before it: "INSERT INTO t (...)" between them is blanked, so
        // every character keeps its place and positions in the query are the statement's.
        Query source = insert.source().get();
        int from = tokens.get(i).start();
        String text = sql.substring(from, t.start()) + " ".repeat(source.offset() - t.start()) + source.text();
        return new Insert(insert.table(), insert.alias(), insert.columns(), insert.columnPositions(),
            insert.overriding(),
            Optional.of(new Query(text, from)), insert.onConflict(), insert.returning());
      } else if (depth == 0 && (t.isKeyword("update") || t.isKeyword("delete") || t.isKeyword("merge"))) {
        // WITH ctes UPDATE/DELETE/MERGE ...: the CTEs are visible to the statement's FROM, USING and
        // source, as in PostgreSQL.
        Fragment ctes = new Fragment(sql.substring(tokens.get(i).start(), t.start()), tokens.get(i).start());
        in.seek(k);
        if (t.isKeyword("delete")) {
          Delete d = delete();
          return new Delete(d.table(), d.alias(), d.using(), d.where(), d.returning(), Optional.of(ctes));
        } else if (t.isKeyword("update")) {
          Update u = update();
          return new Update(u.table(), u.alias(), u.set(), u.from(), u.where(), u.returning(), Optional.of(ctes));
        }
        Merge m = merge();
        return new Merge(m.table(), m.alias(), m.source(), m.on(), m.clauses(), Optional.of(ctes));
      }
    }
    return null;
  }

  Insert insert() {
    in.expectKeyword("insert");
    in.expectKeyword("into");
    QualifiedName table = in.qualifiedName();
    Optional<String> alias = Optional.empty();
    if (in.acceptKeyword("as")) {
      alias = Optional.of(in.identifier());
    }
    List<String> columns = new ArrayList<>();
    List<Integer> columnPositions = new ArrayList<>();
    if (in.peek().isOp("(") && !Parser.startsQuery(in.peekAt(1))) {
      in.next();
      do {
        columnPositions.add(in.peek().position());
        columns.add(in.identifier());
      } while (in.acceptOp(","));
      in.expectOp(")");
    }
    Optional<String> overriding = Optional.empty();
    if (in.acceptKeyword("overriding")) {
      if (in.acceptKeyword("system")) {
        overriding = Optional.of("system");
      } else {
        in.expectKeyword("user");
        overriding = Optional.of("user");
      }
      in.expectKeyword("value");
    }
    Optional<Query> source = Optional.empty();
    if (in.acceptKeyword("default")) {
      in.expectKeyword("values");
    } else {
      Token start = in.peek();
      if (!Parser.startsQuery(start)) {
        throw unexpected(start);
      }
      // The query runs to ON CONFLICT or RETURNING at the top level.
      List<Token> tokens = in.tokens();
      int depth = 0;
      int end = tokens.size() - 1;
      for (int k = in.index(); k < tokens.size(); k++) {
        Token t = tokens.get(k);
        if (t.isOp("(") || t.isOp("[")) {
          depth++;
        } else if (t.isOp(")") || t.isOp("]")) {
          depth--;
        } else if (depth == 0 && ((t.isKeyword("on") && k + 1 < tokens.size()
            && tokens.get(k + 1).isKeyword("conflict")) || t.isKeyword("returning"))) {
          end = k;
          break;
        }
      }
      source = Optional.of(new Query(in.sql().substring(start.start(), tokens.get(end).start()).strip(),
          start.start()));
      in.seek(end);
    }
    Optional<OnConflict> onConflict = Optional.empty();
    if (in.peek().isKeyword("on")) {
      onConflict = Optional.of(onConflict());
    }
    Optional<Fragment> returning = returning();
    in.expectEnd();
    return new Insert(table, alias, columns, columnPositions, overriding, source, onConflict, returning);
  }

  private OnConflict onConflict() {
    Token on = in.next();
    in.expectKeyword("conflict");
    List<String> columns = new ArrayList<>();
    if (in.acceptOp("(")) {
      do {
        columns.add(in.identifier());
      } while (in.acceptOp(","));
      in.expectOp(")");
      if (in.peek().isKeyword("where")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "ON CONFLICT with a partial index predicate is "
            + "not supported", in.peek().position());
      }
    } else if (in.peek().isKeyword("on") && in.peekAt(1).isKeyword("constraint")) {
      in.next();
      in.next();
      in.identifier(); // the table's primary key is its only constraint
    }
    in.expectKeyword("do");
    if (in.acceptKeyword("nothing")) {
      return new OnConflict(columns, true, List.of(), Optional.empty(), on.position());
    }
    in.expectKeyword("update");
    in.expectKeyword("set");
    List<Assignment> set = assignments(Set.of("where", "returning"));
    Optional<Fragment> where = Optional.empty();
    if (in.acceptKeyword("where")) {
      where = Optional.of(fragment(Set.of("returning"), false));
    }
    return new OnConflict(columns, false, set, where, on.position());
  }

  private Optional<Fragment> returning() {
    if (!in.acceptKeyword("returning")) {
      return Optional.empty();
    }
    return Optional.of(fragment(Set.of(), false));
  }

  Delete delete() {
    in.expectKeyword("delete");
    in.expectKeyword("from");
    in.acceptKeyword("only");
    QualifiedName table = in.qualifiedName();
    Optional<String> alias = alias(Set.of("using", "where", "returning"));
    Optional<Fragment> using = Optional.empty();
    if (in.acceptKeyword("using")) {
      using = Optional.of(fragment(Set.of("where", "returning"), false));
    }
    Optional<Fragment> where = where();
    Optional<Fragment> returning = returning();
    in.expectEnd();
    return new Delete(table, alias, using, where, returning, Optional.empty());
  }

  private Optional<Fragment> where() {
    if (!in.acceptKeyword("where")) {
      return Optional.empty();
    }
    if (in.peek().isKeyword("current") && in.peekAt(1).isKeyword("of")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "WHERE CURRENT OF is not supported", in.peek().position());
    }
    return Optional.of(fragment(Set.of("returning"), false));
  }

  Update update() {
    in.expectKeyword("update");
    in.acceptKeyword("only");
    QualifiedName table = in.qualifiedName();
    Optional<String> alias = alias(Set.of("set"));
    in.expectKeyword("set");
    List<Assignment> set = assignments(Set.of("from", "where", "returning"));
    Optional<Fragment> from = Optional.empty();
    if (in.acceptKeyword("from")) {
      from = Optional.of(fragment(Set.of("where", "returning"), false));
    }
    Optional<Fragment> where = where();
    Optional<Fragment> returning = returning();
    in.expectEnd();
    return new Update(table, alias, set, from, where, returning, Optional.empty());
  }

  /** {@code col = expr | DEFAULT} and {@code (a, b) = (x, y)}, comma separated. */
  private List<Assignment> assignments(Set<String> stop) {
    List<Assignment> out = new ArrayList<>();
    do {
      Token start = in.peek();
      if (in.acceptOp("(")) {
        List<String> columns = new ArrayList<>();
        do {
          columns.add(in.identifier());
        } while (in.acceptOp(","));
        in.expectOp(")");
        in.expectOp("=");
        in.acceptKeyword("row");
        Token open = in.peek();
        in.expectOp("(");
        if (Parser.startsQuery(in.peek())) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "assigning a sub-SELECT to several columns is "
              + "not supported", open.position());
        }
        List<Optional<Fragment>> values = valuesOrDefault();
        if (values.size() != columns.size()) {
          throw FloeException.syntax("number of columns does not match number of values", open.position());
        }
        for (int k = 0; k < columns.size(); k++) {
          out.add(new Assignment(columns.get(k), values.get(k), start.position()));
        }
        continue;
      }
      String column = in.identifier();
      if (in.peek().isOp(".") || in.peek().isOp("[")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "assigning to a field or element of a column is "
            + "not supported", in.peek().position());
      }
      in.expectOp("=");
      if (in.peek().isKeyword("default") && (in.peekAt(1).isOp(",") || in.peekAt(1).type() == Token.Type.EOF
          || in.peekAt(1).isOp(";")
          || (in.peekAt(1).type() == Token.Type.IDENT && stop.contains(in.peekAt(1).value())))) {
        in.next();
        out.add(new Assignment(column, Optional.empty(), start.position()));
      } else {
        out.add(new Assignment(column, Optional.of(fragment(stop, true)), start.position()));
      }
    } while (in.acceptOp(","));
    return out;
  }

  Merge merge() {
    Token merge = in.next();
    in.expectKeyword("into");
    QualifiedName table = in.qualifiedName();
    Optional<String> alias = alias(Set.of("using"));
    in.expectKeyword("using");
    Fragment source = fragment(Set.of("on"), false);
    in.expectKeyword("on");
    Fragment on = fragment(Set.of("when"), false);
    List<MergeClause> clauses = new ArrayList<>();
    while (in.peek().isKeyword("when")) {
      clauses.add(mergeClause());
    }
    if (clauses.isEmpty()) {
      throw unexpected(in.peek());
    }
    in.expectEnd();
    return new Merge(table, alias, source, on, clauses, Optional.empty());
  }

  private MergeClause mergeClause() {
    Token when = in.next();
    boolean matched = !in.acceptKeyword("not");
    in.expectKeyword("matched");
    if (in.acceptKeyword("by")) {
      if (in.acceptKeyword("source")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "WHEN NOT MATCHED BY SOURCE is not supported", when.position());
      }
      in.expectKeyword("target");
    }
    Optional<Fragment> condition = Optional.empty();
    if (in.acceptKeyword("and")) {
      condition = Optional.of(fragment(Set.of("then"), false));
    }
    in.expectKeyword("then");
    if (matched) {
      if (in.acceptKeyword("update")) {
        in.expectKeyword("set");
        return new MergeClause(true, condition, MergeAction.UPDATE, assignments(Set.of("when")), List.of(),
            List.of(), when.position());
      }
      if (in.acceptKeyword("delete")) {
        return new MergeClause(true, condition, MergeAction.DELETE, List.of(), List.of(), List.of(),
            when.position());
      }
    } else if (in.acceptKeyword("insert")) {
      List<String> columns = new ArrayList<>();
      if (in.acceptOp("(")) {
        do {
          columns.add(in.identifier());
        } while (in.acceptOp(","));
        in.expectOp(")");
      }
      if (in.acceptKeyword("default")) {
        in.expectKeyword("values");
        return new MergeClause(false, condition, MergeAction.INSERT, List.of(), columns, List.of(), when.position());
      }
      in.expectKeyword("values");
      in.expectOp("(");
      List<Optional<Fragment>> values = valuesOrDefault();
      return new MergeClause(false, condition, MergeAction.INSERT, List.of(), columns, values, when.position());
    }
    in.expectKeyword("do");
    in.expectKeyword("nothing");
    return new MergeClause(matched, condition, MergeAction.NOTHING, List.of(), List.of(), List.of(),
        when.position());
  }

  Statement truncate() {
    in.expectKeyword("truncate");
    in.acceptKeyword("table");
    in.acceptKeyword("only");
    List<QualifiedName> tables = new ArrayList<>();
    do {
      tables.add(in.qualifiedName());
    } while (in.acceptOp(","));
    while (in.acceptKeyword("restart") || in.acceptKeyword("continue")) {
      in.expectKeyword("identity");
    }
    boolean cascade = in.acceptKeyword("cascade");
    if (!cascade) {
      in.acceptKeyword("restrict");
    }
    in.expectEnd();
    return new Truncate(tables, cascade);
  }

  /** An optional table alias ({@code [AS] name}) that is not one of the keywords that may follow. */
  private Optional<String> alias(Set<String> following) {
    if (in.acceptKeyword("as")) {
      return Optional.of(in.identifier());
    }
    Token t = in.peek();
    if (t.type() == Token.Type.QUOTED_IDENT || (t.type() == Token.Type.IDENT && !following.contains(t.value()))) {
      return Optional.of(in.identifier());
    }
    return Optional.empty();
  }

  /**
   * The text from here to the first top-level stop keyword (or comma, or closing parenthesis, when
   * {@code list} is set), which must not be empty.
   */
  /**
   * A parenthesised list's values up to and including its {@code )}, each an expression or the keyword
   * DEFAULT (empty).
   */
  private List<Optional<Fragment>> valuesOrDefault() {
    List<Optional<Fragment>> values = new ArrayList<>();
    do {
      if (in.peek().isKeyword("default") && (in.peekAt(1).isOp(",") || in.peekAt(1).isOp(")"))) {
        in.next();
        values.add(Optional.empty());
      } else {
        values.add(Optional.of(fragment(Set.of(), true)));
      }
    } while (in.acceptOp(","));
    in.expectOp(")");
    return values;
  }

  private Fragment fragment(Set<String> stop, boolean list) {
    Token start = in.peek();
    int depth = 0;
    int cases = 0; // CASE ... END nesting: its WHEN, THEN and ELSE are not the statement's
    Token last = null;
    while (true) {
      Token t = in.peek();
      if (t.type() == Token.Type.EOF || (depth == 0 && t.isOp(";") && in.peekAt(1).type() == Token.Type.EOF)) {
        break;
      }
      boolean top = depth == 0 && cases == 0;
      // IS [NOT] DISTINCT FROM: that FROM belongs to the expression
      boolean distinctFrom = t.isKeyword("from") && last != null && last.isKeyword("distinct");
      if (top && t.type() == Token.Type.IDENT && stop.contains(t.value()) && !distinctFrom) {
        break;
      }
      if (top && list && (t.isOp(",") || t.isOp(")"))) {
        break;
      }
      if (t.isOp("(") || t.isOp("[")) {
        depth++;
      } else if (t.isOp(")") || t.isOp("]")) {
        if (depth == 0) {
          throw unexpected(t);
        }
        depth--;
      } else if (t.isKeyword("case")) {
        cases++;
      } else if (t.isKeyword("end") && cases > 0) {
        cases--;
      }
      last = in.next();
    }
    if (last == null) {
      throw unexpected(start);
    }
    return new Fragment(in.sql().substring(start.start(), last.end()), start.start());
  }
}
