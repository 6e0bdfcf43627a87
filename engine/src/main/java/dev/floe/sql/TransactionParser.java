package dev.floe.sql;

import static dev.floe.sql.TokenCursor.unexpected;

import dev.floe.sql.Ast.Statement;

/**
 * PostgreSQL's transaction statements (docs/transactions.md): BEGIN and START TRANSACTION with their modes
 * (isolation level, READ ONLY/WRITE, [NOT] DEFERRABLE), SET TRANSACTION, COMMIT/END, ROLLBACK/ABORT,
 * SAVEPOINT, ROLLBACK TO and RELEASE, into {@link Ast.TransactionControl}.
 */
final class TransactionParser {
  private final TokenCursor in;

  TransactionParser(TokenCursor in) {
    this.in = in;
  }

  /** One transaction statement, from its first keyword (SET only when TRANSACTION follows). */
  Statement transactionControl() {
    String first = in.next().value();
    Ast.TransactionControl.Kind kind;
    String savepoint = null;
    boolean readOnly = false;
    boolean isolation = false;
    boolean accessMode = false;
    String level = null;
    switch (first) {
      case "begin", "start", "set" -> {
        if (!first.equals("begin")) {
          in.expectKeyword("transaction");
        } else if (!in.acceptKeyword("work")) {
          in.acceptKeyword("transaction");
        }
        kind = first.equals("set") ? Ast.TransactionControl.Kind.SET_MODES : Ast.TransactionControl.Kind.BEGIN;
        // modes: ISOLATION LEVEL ..., READ WRITE | READ ONLY, [NOT] DEFERRABLE, optionally comma-separated
        while (in.peek().type() != Token.Type.EOF && !in.peek().isOp(";")) {
          if (in.acceptKeyword("isolation")) {
            isolation = true;
            in.expectKeyword("level");
            if (in.acceptKeyword("serializable")) {
              level = "serializable";
              continue;
            }
            if (in.acceptKeyword("repeatable")) {
              in.expectKeyword("read");
              level = "repeatable read";
            } else {
              in.expectKeyword("read");
              Token which = in.next();
              if (!which.isKeyword("committed") && !which.isKeyword("uncommitted")) {
                throw unexpected(which);
              }
              level = "read " + which.value();
            }
          } else if (in.acceptKeyword("read")) {
            accessMode = true;
            if (in.acceptKeyword("only")) {
              readOnly = true;
            } else {
              in.expectKeyword("write");
              readOnly = false;
            }
          } else if (in.acceptKeyword("not")) {
            in.expectKeyword("deferrable");
          } else if (!in.acceptKeyword("deferrable") && !in.acceptOp(",")) {
            throw unexpected(in.peek());
          }
        }
      }
      case "commit", "end" -> {
        if (!in.acceptKeyword("work")) {
          in.acceptKeyword("transaction");
        }
        kind = Ast.TransactionControl.Kind.COMMIT;
      }
      case "rollback", "abort" -> {
        if (!in.acceptKeyword("work")) {
          in.acceptKeyword("transaction");
        }
        if (first.equals("rollback") && in.acceptKeyword("to")) {
          in.acceptKeyword("savepoint");
          savepoint = in.identifier();
          kind = Ast.TransactionControl.Kind.ROLLBACK_TO;
        } else {
          kind = Ast.TransactionControl.Kind.ROLLBACK;
        }
      }
      case "savepoint" -> {
        savepoint = in.identifier();
        kind = Ast.TransactionControl.Kind.SAVEPOINT;
      }
      default -> { // release
        in.acceptKeyword("savepoint");
        savepoint = in.identifier();
        kind = Ast.TransactionControl.Kind.RELEASE;
      }
    }
    in.expectEnd();
    if (kind == Ast.TransactionControl.Kind.SET_MODES && !isolation && !accessMode) {
      throw unexpected(in.peek()); // SET TRANSACTION needs a mode
    }
    return new Ast.TransactionControl(kind, savepoint, readOnly, isolation, accessMode, level, first.equals("start"));
  }
}
