package dev.floe.sql;

import static dev.floe.sql.TokenCursor.unexpected;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Ast.CreateSequence;
import dev.floe.sql.Ast.Query;
import dev.floe.sql.Ast.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * CREATE of the objects that are not tables: INDEX, VIEW and SEQUENCE, from the word after CREATE (and
 * UNIQUE, OR REPLACE); {@link DdlParser} hands them here.
 */
final class ObjectDdlParser {
  private final TokenCursor in;
  private final TypeNameParser types;
  private final DdlParser ddl;

  ObjectDdlParser(TokenCursor in, TypeNameParser types, DdlParser ddl) {
    this.in = in;
    this.types = types;
    this.ddl = ddl;
  }

  /**
   * CREATE [OR REPLACE] VIEW name [(column, ...)] [WITH (...)] AS query [WITH [CASCADED | LOCAL] CHECK
   * OPTION]; a CHECK OPTION is refused (0A000): Floe's views are not updatable.
   */
  Statement createView() {
    boolean orReplace = in.acceptKeyword("or");
    if (orReplace) {
      in.expectKeyword("replace");
    }
    in.expectKeyword("view");
    QualifiedName name = in.qualifiedName();
    List<String> columns = new ArrayList<>();
    if (in.acceptOp("(")) {
      do {
        columns.add(in.identifier());
      } while (in.acceptOp(","));
      in.expectOp(")");
    }
    if (in.peek().isKeyword("with") && in.peekAt(1).isOp("(")) {
      in.next();
      ddl.properties(); // view options (security_barrier, ...) mean nothing for Floe's views
    }
    in.expectKeyword("as");
    Token start = in.peek();
    List<Token> tokens = in.tokens();
    int n = tokens.size();
    int end = in.sql().length();
    int last = n - 1; // EOF
    if (last > 0 && tokens.get(last - 1).isOp(";")) {
      last--;
    }
    if (last >= 3 && tokens.get(last - 1).isKeyword("option") && tokens.get(last - 2).isKeyword("check")) {
      Token with = tokens.get(last - 3).isKeyword("with") ? tokens.get(last - 3) : tokens.get(last - 4);
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "WITH CHECK OPTION is not supported", null,
          "Floe's views are read-only.", with.position(), null);
    }
    end = last < n - 1 ? tokens.get(last).start() : end;
    if (start.type() == Token.Type.EOF || start.start() >= end) {
      throw unexpected(start);
    }
    return new Ast.CreateView(name, orReplace, columns, new Query(in.sql().substring(start.start(), end).strip(),
        start.start()));
  }

  /** Index access methods whose meaning Floe gives (docs/sql.md, "Indexes"); others are refused. */
  private static final Set<String> INDEX_METHODS = Set.of("btree", "hash", "brin");

  /**
   * CREATE [UNIQUE] INDEX [CONCURRENTLY] [[IF NOT EXISTS] name] ON [ONLY] table [USING method] (column
   * [ASC | DESC] [NULLS FIRST | LAST], ...) [INCLUDE (...)] [NULLS [NOT] DISTINCT] [WITH (...)]
   * [TABLESPACE name]; an expression, an operator class, a collation or a WHERE is refused (0A000).
   */
  Statement createIndex() {
    int position = in.peek().position();
    boolean unique = in.acceptKeyword("unique");
    in.expectKeyword("index");
    in.acceptKeyword("concurrently");
    boolean ifNotExists = ddl.ifNotExists();
    Optional<String> name = Optional.empty();
    if (!in.peek().isKeyword("on")) {
      name = Optional.of(in.identifier());
    }
    in.expectKeyword("on");
    in.acceptKeyword("only");
    QualifiedName table = in.qualifiedName();
    if (in.acceptKeyword("using")) {
      Token method = in.next();
      if (!INDEX_METHODS.contains(method.value())) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "access method \"" + method.value()
            + "\" is not supported", null, "Floe's indexes are btree, hash or brin (docs/sql.md, \"Indexes\").",
            method.position(), null);
      }
    }
    in.expectOp("(");
    List<Ast.SortField> columns = new ArrayList<>();
    do {
      Token column = in.peek();
      if (!column.isIdentifier() || in.peekAt(1).isOp("(") || in.peekAt(1).isOp(".")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "index expressions are not supported", null,
            "Index a column.", column.position(), null);
      }
      String columnName = in.identifier();
      boolean desc = false;
      if (in.acceptKeyword("desc")) {
        desc = true;
      } else {
        in.acceptKeyword("asc");
      }
      boolean nullsFirst = desc; // PostgreSQL's default: NULLs sort as larger than any value
      if (in.acceptKeyword("nulls")) {
        nullsFirst = in.acceptKeyword("first");
        if (!nullsFirst) {
          in.expectKeyword("last");
        }
      }
      if (!in.peek().isOp(",") && !in.peek().isOp(")")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "operator classes and collations in an index are "
            + "not supported", in.peek().position());
      }
      columns.add(new Ast.SortField(columnName, desc, nullsFirst, column.position()));
    } while (in.acceptOp(","));
    in.expectOp(")");
    while (!in.peek().isOp(";") && in.peek().type() != Token.Type.EOF) {
      if (in.acceptKeyword("include") || in.acceptKeyword("with")) {
        skipParenthesized(); // covering columns and storage parameters mean nothing to an Iceberg table
      } else if (in.acceptKeyword("nulls")) {
        in.acceptKeyword("not");
        in.expectKeyword("distinct");
      } else if (in.acceptKeyword("tablespace")) {
        in.identifier();
      } else if (in.peek().isKeyword("where")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "partial indexes are not supported",
            in.peek().position());
      } else {
        throw unexpected(in.peek());
      }
    }
    in.expectEnd();
    return new Ast.CreateIndex(name, unique, ifNotExists, table, columns, position);
  }

  private void skipParenthesized() {
    in.expectOp("(");
    int depth = 1;
    while (depth > 0) {
      Token t = in.next();
      if (t.type() == Token.Type.EOF) {
        throw unexpected(t);
      }
      depth += t.isOp("(") ? 1 : t.isOp(")") ? -1 : 0;
    }
  }

  /**
   * Sequence options: START [WITH] n and INCREMENT [BY] n (positive: Hibernate's pooled ids ask for 50) are
   * kept; AS type, CACHE, NO CYCLE, ... are accepted; a negative step is refused.
   */
  Statement createSequence() {
    boolean ifNotExists = ddl.ifNotExists();
    QualifiedName name = in.qualifiedName();
    long start = 1;
    long increment = 1;
    while (in.peek().type() != Token.Type.EOF && !in.peek().isOp(";")) {
      Token t = in.next();
      if (t.isKeyword("start")) {
        in.acceptKeyword("with");
        start = signedLong();
      } else if (t.isKeyword("increment")) {
        in.acceptKeyword("by");
        increment = signedLong();
        if (increment < 1) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "sequences advance by a positive step only",
              t.position());
        }
      } else if (t.isKeyword("minvalue") || t.isKeyword("maxvalue") || t.isKeyword("cache")) {
        signedLong();
      } else if (t.isKeyword("as")) {
        types.type();
      } else if (!(t.isKeyword("no") || t.isKeyword("cycle") || t.isKeyword("owned") || t.isKeyword("by")
          || t.isKeyword("none") || t.isIdentifier() || t.isOp("."))) {
        throw unexpected(t);
      }
    }
    in.expectEnd();
    return new CreateSequence(name, ifNotExists, start, increment);
  }

  /**
   * ALTER SEQUENCE [IF EXISTS] name [RESTART [[WITH] n]] [OWNED BY {table.column | NONE}]; other options
   * (INCREMENT, CACHE, ...) are refused with 0A000.
   */
  Statement alterSequence() {
    boolean ifExists = ddl.ifExists();
    QualifiedName name = in.qualifiedName();
    Optional<Long> restart = Optional.empty();
    while (in.peek().type() != Token.Type.EOF && !in.peek().isOp(";")) {
      Token t = in.next();
      if (t.isKeyword("restart")) {
        in.acceptKeyword("with");
        restart = Optional.of(in.peek().type() == Token.Type.NUMBER || in.peek().isOp("-") ? signedLong() : 1L);
        if (restart.get() < 1) {
          throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "RESTART value (" + restart.get()
              + ") cannot be less than MINVALUE (1)", t.position());
        }
      } else if (t.isKeyword("owned")) {
        in.expectKeyword("by");
        in.qualifiedName(); // a serial column's sequence goes with its table already
      } else {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "ALTER SEQUENCE ... " + t.text().toUpperCase(
            java.util.Locale.ROOT) + " is not supported", null, "ALTER SEQUENCE takes RESTART and OWNED BY.",
            t.position(), null);
      }
    }
    in.expectEnd();
    return new Ast.AlterSequence(name, ifExists, restart);
  }

  private long signedLong() {
    boolean negative = in.acceptOp("-");
    Token t = in.next();
    if (t.type() != Token.Type.NUMBER) {
      throw unexpected(t);
    }
    try {
      return negative ? -Long.parseLong(t.text()) : Long.parseLong(t.text());
    } catch (NumberFormatException e) {
      throw unexpected(t);
    }
  }
}
