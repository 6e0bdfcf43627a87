package dev.floe.sql;

import static dev.floe.sql.TokenCursor.unexpected;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Ast.ConstraintKind;
import dev.floe.sql.Ast.TableConstraint;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * UNIQUE, CHECK and FOREIGN KEY constraints, as a column's ({@code x int UNIQUE}, {@code REFERENCES p},
 * {@code CHECK (x > 0)}) or as the table's ({@code UNIQUE (a, b)}, {@code FOREIGN KEY (a) REFERENCES p (id)},
 * {@code CHECK (a < b)}), in CREATE TABLE and ALTER TABLE ... ADD. Their options that Floe does not honour
 * are refused with 0A000 at the word that asks for them; DEFERRABLE is accepted and checked at once
 * (docs/sql.md, "Constraints"). The referential actions are all PostgreSQL's.
 */
final class ConstraintParser {
  private final TokenCursor in;

  ConstraintParser(TokenCursor in) {
    this.in = in;
  }

  /** Whether the next token starts a constraint other than PRIMARY KEY. */
  boolean atTableConstraint() {
    return in.peek().isKeyword("unique") || in.peek().isKeyword("check")
        || in.peek().isKeyword("foreign") && in.peekAt(1).isKeyword("key");
  }

  /** Whether the next token starts a column's constraint other than PRIMARY KEY and NOT NULL. */
  boolean atColumnConstraint() {
    return in.peek().isKeyword("unique") || in.peek().isKeyword("check") || in.peek().isKeyword("references");
  }

  /** A table constraint, at UNIQUE, CHECK or FOREIGN KEY; {@code name} from its CONSTRAINT clause. */
  TableConstraint tableConstraint(Optional<String> name, int position) {
    if (in.acceptKeyword("unique")) {
      nullsDistinct();
      List<String> columns = columnList();
      indexOptions();
      return attributes(new TableConstraint(name, ConstraintKind.UNIQUE, columns, null, Optional.empty(), List.of(),
          'a', 'a', true, position));
    }
    if (in.acceptKeyword("check")) {
      return check(name, List.of(), position);
    }
    in.expectKeyword("foreign");
    in.expectKeyword("key");
    List<String> columns = columnList();
    in.expectKeyword("references");
    return references(name, columns, position);
  }

  /** A column's constraint, at UNIQUE, CHECK or REFERENCES, of column {@code column}. */
  TableConstraint columnConstraint(Optional<String> name, String column, int position) {
    if (in.acceptKeyword("unique")) {
      nullsDistinct();
      indexOptions();
      return attributes(new TableConstraint(name, ConstraintKind.UNIQUE, List.of(column), null, Optional.empty(),
          List.of(), 'a', 'a', true, position));
    }
    if (in.acceptKeyword("check")) {
      return check(name, List.of(column), position);
    }
    in.expectKeyword("references");
    return references(name, List.of(column), position);
  }

  private TableConstraint check(Optional<String> name, List<String> columns, int position) {
    Token open = in.peek();
    in.expectOp("(");
    int depth = 1;
    Token last = open;
    while (true) {
      Token t = in.next();
      if (t.type() == Token.Type.EOF) {
        throw unexpected(t);
      }
      depth += t.isOp("(") ? 1 : t.isOp(")") ? -1 : 0;
      if (depth == 0) {
        break;
      }
      last = t;
    }
    if (last == open) {
      throw unexpected(in.tokens().get(in.index() - 1));
    }
    String expression = in.sql().substring(in.tokens().get(indexOf(open) + 1).start(), last.end());
    if (in.peek().isKeyword("no") && in.peekAt(1).isKeyword("inherit")) {
      in.next();
      in.next();
    }
    return attributes(new TableConstraint(name, ConstraintKind.CHECK, columns, expression, Optional.empty(),
        List.of(), 'a', 'a', true, position));
  }

  private int indexOf(Token t) {
    return in.tokens().indexOf(t);
  }

  /** After REFERENCES: the table, its columns, MATCH and the ON DELETE / ON UPDATE actions. */
  private TableConstraint references(Optional<String> name, List<String> columns, int position) {
    QualifiedName table = in.qualifiedName();
    List<String> referenced = in.peek().isOp("(") ? columnList() : List.of();
    if (!referenced.isEmpty() && referenced.size() != columns.size()) {
      throw new FloeException(SqlState.INVALID_FOREIGN_KEY, "number of referencing and referenced columns for "
          + "foreign key disagree", position);
    }
    char onDelete = 'a';
    char onUpdate = 'a';
    while (true) {
      if (in.acceptKeyword("match")) {
        Token kind = in.next();
        if (kind.isKeyword("full") || kind.isKeyword("partial")) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "MATCH " + kind.text().toUpperCase(
              java.util.Locale.ROOT) + " is not supported", null, "Floe's foreign keys are MATCH SIMPLE: a row with "
              + "a NULL in its key references nothing.", kind.position(), null);
        }
        if (!kind.isKeyword("simple")) {
          throw unexpected(kind);
        }
      } else if (in.peek().isKeyword("on") && in.peekAt(1).isKeyword("delete")) {
        in.next();
        in.next();
        onDelete = action();
      } else if (in.peek().isKeyword("on") && in.peekAt(1).isKeyword("update")) {
        in.next();
        in.next();
        onUpdate = action();
      } else {
        break;
      }
    }
    return attributes(new TableConstraint(name, ConstraintKind.FOREIGN_KEY, columns, null, Optional.of(table),
        referenced, onDelete, onUpdate, true, position));
  }

  /** A referential action, in pg_constraint's letter; the ones Floe does not carry out are refused. */
  private char action() {
    Token t = in.peek();
    char action;
    if (in.acceptKeyword("restrict")) {
      action = 'r';
    } else if (in.acceptKeyword("cascade")) {
      action = 'c';
    } else if (in.acceptKeyword("no")) {
      in.expectKeyword("action");
      action = 'a';
    } else if (in.acceptKeyword("set")) {
      action = in.acceptKeyword("null") ? 'n' : 'd';
      if (action == 'd') {
        in.expectKeyword("default");
      }
      if (in.peek().isOp("(")) {
        columnList(); // SET NULL (columns), PostgreSQL 15: the columns are those of the key
      }
    } else {
      throw unexpected(t);
    }
    return action;
  }

  /** The constraint's [NOT] DEFERRABLE, INITIALLY DEFERRED | IMMEDIATE and NOT VALID, in any order. */
  private TableConstraint attributes(TableConstraint c) {
    boolean validate = c.validate();
    while (true) {
      if (in.peek().isKeyword("not") && in.peekAt(1).isKeyword("deferrable")) {
        in.next();
        in.next();
      } else if (in.acceptKeyword("deferrable")) {
        // accepted (Django declares every foreign key so) and checked at each statement, which is stricter
      } else if (in.acceptKeyword("initially")) {
        if (!in.acceptKeyword("deferred")) {
          in.expectKeyword("immediate");
        }
      } else if (in.peek().isKeyword("not") && in.peekAt(1).isKeyword("valid")) {
        in.next();
        in.next();
        validate = false;
      } else {
        break;
      }
    }
    return new TableConstraint(c.name(), c.kind(), c.columns(), c.check(), c.references(), c.referencedColumns(),
        c.onDelete(), c.onUpdate(), validate, c.position());
  }

  private void nullsDistinct() {
    if (in.peek().isKeyword("nulls")) {
      Token nulls = in.next();
      if (in.acceptKeyword("not")) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "NULLS NOT DISTINCT is not supported", null,
            "Floe's unique constraints treat NULLs as distinct, as PostgreSQL does by default.", nulls.position(),
            null);
      }
      in.expectKeyword("distinct");
    }
  }

  /** A UNIQUE constraint's index options: INCLUDE (...), WITH (...), USING INDEX TABLESPACE name. */
  private void indexOptions() {
    while (true) {
      if (in.acceptKeyword("include")) {
        columnList();
      } else if (in.peek().isKeyword("with") && in.peekAt(1).isOp("(")) {
        in.next();
        skipParenthesised();
      } else if (in.peek().isKeyword("using") && in.peekAt(1).isKeyword("index")) {
        in.next();
        in.next();
        in.expectKeyword("tablespace");
        in.identifier();
      } else {
        return;
      }
    }
  }

  private void skipParenthesised() {
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

  private List<String> columnList() {
    in.expectOp("(");
    List<String> columns = new ArrayList<>();
    do {
      columns.add(in.identifier());
    } while (in.acceptOp(","));
    in.expectOp(")");
    return columns;
  }
}
