package dev.floe.sql;

import static dev.floe.sql.TokenCursor.unexpected;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.sql.Ast.Assignment;
import dev.floe.sql.Ast.Delete;
import dev.floe.sql.Ast.Describe;
import dev.floe.sql.Ast.Explain;
import dev.floe.sql.Ast.Fragment;
import dev.floe.sql.Ast.Insert;
import dev.floe.sql.Ast.Merge;
import dev.floe.sql.Ast.OnConflict;
import dev.floe.sql.Ast.PartitionField;
import dev.floe.sql.Ast.Query;
import dev.floe.sql.Ast.ShowSchemas;
import dev.floe.sql.Ast.ShowTables;
import dev.floe.sql.Ast.SortField;
import dev.floe.sql.Ast.Statement;
import dev.floe.sql.Ast.Update;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Recursive-descent parser for the statements Floe executes itself (DDL, INSERT, SHOW, DESCRIBE).
 * Queries are recognised by their first keyword and returned as text. Errors are PostgreSQL's:
 * {@code syntax error at or near "x"} with the position of the offending token.
 */
public final class Parser {
  private static final Set<String> QUERY_STARTS = Set.of("select", "with", "values", "from", "table");
  private static final Set<String> LATER_STATEMENTS =
      Set.of("copy", "reset", "grant", "revoke", "vacuum", "analyze", "call",
          "prepare", "execute", "deallocate", "listen", "notify", "lock", "comment", "discard");

  private final TokenCursor in;

  private Parser(String sql) {
    this.in = new TokenCursor(sql);
  }

  /** Parses one statement (no trailing semicolon handling: use {@link SqlScript} for scripts). */
  public static Statement parse(String sql) {
    return new Parser(sql).statement();
  }

  /** Parses a column type name such as {@code numeric(10,2)} or {@code timestamp with time zone}. */
  public static SqlType parseType(String text) {
    TokenCursor in = new TokenCursor(text);
    SqlType t = new TypeNameParser(in).type();
    in.expectEnd();
    return t;
  }

  /** Parses a possibly qualified object name such as {@code s.t} or {@code "My Table"}. */
  public static QualifiedName parseName(String text) {
    TokenCursor in = new TokenCursor(text);
    QualifiedName name = in.qualifiedName();
    in.expectEnd();
    return name;
  }

  /** Parses a partition field written as text, e.g. {@code bucket(id, 16)} or {@code month(ts)}. */
  public static PartitionField parsePartitionField(String text, int position) {
    TokenCursor in = new TokenCursor(text);
    PartitionField f = new DdlParser(in).partitionField();
    in.expectEnd();
    return new PartitionField(f.transform(), f.column(), f.argument(), position);
  }

  /** Parses a sort field written as text, e.g. {@code ts DESC NULLS LAST}. */
  public static SortField parseSortField(String text, int position) {
    TokenCursor in = new TokenCursor(text);
    String column = in.identifier();
    boolean desc = false;
    if (in.acceptKeyword("desc")) {
      desc = true;
    } else {
      in.acceptKeyword("asc");
    }
    boolean nullsFirst = !desc;
    if (in.acceptKeyword("nulls")) {
      if (in.acceptKeyword("first")) {
        nullsFirst = true;
      } else {
        in.expectKeyword("last");
        nullsFirst = false;
      }
    }
    in.expectEnd();
    return new SortField(column, desc, nullsFirst, position);
  }

  // ------------------------------------------------------------------ statements

  private Statement statement() {
    Token first = in.peek();
    if (first.type() == Token.Type.EOF) {
      throw FloeException.syntax("empty statement", 1);
    }
    if (first.isKeyword("with")) {
      Statement withInsert = withInsert();
      if (withInsert != null) {
        return withInsert;
      }
    }
    if (startsQuery(first)) {
      return new Query(in.sql(), 0);
    }
    if (first.type() != Token.Type.IDENT) {
      throw unexpected(first);
    }
    return switch (first.value()) {
      case "explain" -> explain();
      case "create" -> new DdlParser(in).create();
      case "drop" -> new DdlParser(in).drop();
      case "alter" -> new DdlParser(in).alter();
      case "insert" -> new DmlParser(in).insert();
      case "delete" -> new DmlParser(in).delete();
      case "update" -> new DmlParser(in).update();
      case "merge" -> new DmlParser(in).merge();
      case "truncate" -> new DmlParser(in).truncate();
      case "show" -> show();
      case "begin", "start", "commit", "end", "rollback", "abort", "savepoint", "release" ->
          new TransactionParser(in).transactionControl();
      case "set" -> {
        if (in.peekAt(1).isKeyword("transaction")) {
          yield new TransactionParser(in).transactionControl();
        }
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "SET is not supported yet", null, null,
            first.position(), null);
      }
      case "describe", "desc" -> {
        in.next();
        QualifiedName name = in.qualifiedName();
        in.expectEnd();
        yield new Describe(name);
      }
      default -> {
        if (LATER_STATEMENTS.contains(first.value())) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
              first.value().toUpperCase() + " is not supported yet", null, null, first.position(), null);
        }
        throw unexpected(first);
      }
    };
  }

  /**
   * PostgreSQL's {@code WITH ctes INSERT INTO t ... query}: the same as
   * {@code INSERT INTO t ... WITH ctes query}. Null if the WITH is an ordinary query.
   */
  private Statement withInsert() {
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
        String ctes = sql.substring(tokens.get(i).start(), t.start());
        Statement inner = new Parser(sql.substring(t.start())).statement();
        if (!(inner instanceof Insert insert) || insert.source().isEmpty()) {
          throw unexpected(t);
        }
        Query source = insert.source().get();
        return new Insert(insert.table(), insert.alias(), insert.columns(), insert.overriding(),
            Optional.of(new Query(ctes + source.text(), 0)), insert.onConflict().map(c -> shifted(c, t.start())),
            insert.returning().map(r -> shifted(r, t.start())));
      } else if (depth == 0 && (t.isKeyword("update") || t.isKeyword("delete") || t.isKeyword("merge"))) {
        // WITH ctes UPDATE/DELETE/MERGE ...: the CTEs are visible to the statement's FROM, USING and
        // source, as in PostgreSQL.
        Fragment ctes = new Fragment(sql.substring(tokens.get(i).start(), t.start()), tokens.get(i).start());
        in.seek(k);
        Statement inner = statement();
        if (inner instanceof Delete d) {
          return new Delete(d.table(), d.alias(), d.using(), d.where(), d.returning(), Optional.of(ctes));
        } else if (inner instanceof Update u) {
          return new Update(u.table(), u.alias(), u.set(), u.from(), u.where(), u.returning(), Optional.of(ctes));
        }
        Merge m = (Merge) inner;
        return new Merge(m.table(), m.alias(), m.source(), m.on(), m.clauses(), Optional.of(ctes));
      }
    }
    return null;
  }

  private static Fragment shifted(Fragment f, int by) {
    return new Fragment(f.text(), f.offset() + by);
  }

  private static OnConflict shifted(OnConflict c, int by) {
    List<Assignment> set = new ArrayList<>();
    for (Assignment a : c.set()) {
      set.add(new Assignment(a.column(), a.value().map(v -> shifted(v, by)), a.position() + by));
    }
    return new OnConflict(c.columns(), c.doNothing(), set, c.where().map(w -> shifted(w, by)), c.position() + by);
  }

  private Statement explain() {
    in.expectKeyword("explain");
    boolean analyze = in.acceptKeyword("analyze") || in.acceptKeyword("analyse");
    Token start = in.peek();
    if (start.type() == Token.Type.EOF) {
      throw unexpected(start);
    }
    if (!startsQuery(start)) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "EXPLAIN is supported for queries only",
          null, null, start.position(), null);
    }
    return new Explain(analyze, new Query(in.sql().substring(start.start()), start.start()));
  }

  /** Whether a query starts at {@code t}: a parenthesis or a query's first keyword. */
  static boolean startsQuery(Token t) {
    return t.isOp("(") || (t.type() == Token.Type.IDENT && QUERY_STARTS.contains(t.value()));
  }

  private Statement show() {
    in.expectKeyword("show");
    if (in.acceptKeyword("tables")) {
      Optional<QualifiedName> schema = Optional.empty();
      if (in.acceptKeyword("from") || in.acceptKeyword("in")) {
        schema = Optional.of(in.qualifiedName());
      }
      in.expectEnd();
      return new ShowTables(schema);
    }
    if (in.acceptKeyword("schemas")) {
      in.expectEnd();
      return new ShowSchemas();
    }
    if (in.peek().type() == Token.Type.EOF) {
      throw unexpected(in.peek());
    }
    throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "SHOW " + in.peek().text() + " is not supported",
        null, null, in.peek().position(), null);
  }

}
