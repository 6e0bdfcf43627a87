package dev.floe.sql;

import static dev.floe.sql.TokenCursor.unexpected;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.sql.Ast.Describe;
import dev.floe.sql.Ast.Explain;
import dev.floe.sql.Ast.PartitionField;
import dev.floe.sql.Ast.Query;
import dev.floe.sql.Ast.ShowSchemas;
import dev.floe.sql.Ast.ShowTables;
import dev.floe.sql.Ast.SortField;
import dev.floe.sql.Ast.Statement;
import java.util.Optional;
import java.util.Set;

/**
 * Recursive-descent parser for the statements Floe executes itself: the public entry points, and the dispatch
 * of a statement on its first keyword to the class that parses that kind ({@code DdlParser} for CREATE, ALTER
 * and DROP, {@code DmlParser} for INSERT, UPDATE, DELETE, MERGE and TRUNCATE, {@code TransactionParser} for
 * transaction control), all reading one {@code TokenCursor}; EXPLAIN, SHOW and DESCRIBE, a few lines each, are
 * parsed here. Queries are recognised by their first keyword and returned as text. Errors are PostgreSQL's:
 * {@code syntax error at or near "x"} with the position of the offending token.
 */
public final class Parser {
  private static final Set<String> QUERY_STARTS = Set.of("select", "with", "values", "from", "table");
  private static final Set<String> LATER_STATEMENTS =
      Set.of("copy", "reset", "grant", "revoke", "analyze", "call",
          "prepare", "execute", "deallocate", "listen", "notify", "lock", "comment", "discard", "reindex", "cluster",
          "security", "import", "refresh", "checkpoint", "load");

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

  /** VACUUM in PostgreSQL's two forms; ANALYZE and FREEZE are accepted and have nothing to do. */
  private Statement vacuum() {
    in.expectKeyword("vacuum");
    boolean full = false;
    boolean verbose = false;
    if (in.acceptOp("(")) {
      do {
        Token option = in.next();
        String name = option.value();
        boolean on = true;
        if (in.peek().type() != Token.Type.OP || !(in.peek().isOp(",") || in.peek().isOp(")"))) {
          Token value = in.next();
          on = !(value.isKeyword("false") || value.isKeyword("off") || value.value().equals("0"));
        }
        switch (name) {
          case "full" -> full = on;
          case "verbose" -> verbose = on;
          case "analyze", "freeze", "disable_page_skipping", "skip_locked", "index_cleanup", "process_toast",
              "truncate", "parallel", "process_main", "skip_database_stats", "only_database_stats",
              "buffer_usage_limit" -> { }
          default -> throw new FloeException(SqlState.SYNTAX_ERROR, "unrecognized VACUUM option \"" + name + "\"",
              option.position());
        }
      } while (in.acceptOp(","));
      in.expectOp(")");
    } else {
      full = in.acceptKeyword("full");
      in.acceptKeyword("freeze");
      verbose = in.acceptKeyword("verbose");
      in.acceptKeyword("analyze");
      in.acceptKeyword("analyse");
    }
    java.util.List<QualifiedName> tables = new java.util.ArrayList<>();
    if (in.peek().type() != Token.Type.EOF) {
      do {
        tables.add(in.qualifiedName());
        if (in.peek().isOp("(")) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "VACUUM of a table's columns is not supported",
              in.peek().position());
        }
      } while (in.acceptOp(","));
    }
    in.expectEnd();
    return new Ast.Vacuum(tables, full, verbose);
  }

  private Statement statement() {
    Token first = in.peek();
    if (first.type() == Token.Type.EOF) {
      throw FloeException.syntax("empty statement", 1);
    }
    if (first.isKeyword("with")) {
      Statement withWrite = new DmlParser(in).withWrite();
      if (withWrite != null) {
        return withWrite;
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
      case "vacuum" -> vacuum();
      case "begin", "start", "commit", "end", "rollback", "abort", "savepoint", "release" ->
          new TransactionParser(in).transactionControl();
      case "set" -> {
        if (in.peekAt(1).isKeyword("transaction")) {
          yield new TransactionParser(in).transactionControl();
        }
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "SET is not supported yet", first.position());
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
              first.value().toUpperCase() + " is not supported yet", first.position());
        }
        throw unexpected(first);
      }
    };
  }

  private Statement explain() {
    in.expectKeyword("explain");
    boolean analyze = in.acceptKeyword("analyze") || in.acceptKeyword("analyse");
    Token start = in.peek();
    if (start.type() == Token.Type.EOF) {
      throw unexpected(start);
    }
    if (!startsQuery(start)) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "EXPLAIN is supported for queries only", start.position());
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
    throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "SHOW " + in.peek().text() + " is not supported", in.peek().position());
  }
}
