package dev.floe;

import dev.floe.sql.Ast;
import dev.floe.sql.Lexer;
import dev.floe.sql.Parser;
import dev.floe.sql.SessionStatements;
import dev.floe.sql.SqlScript;
import dev.floe.sql.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One SQL statement as the engine parsed it, with its properties computed once: what it is
 * ({@link #kind()}), whether it returns rows, whether it changes a table, and for the statements a front
 * end runs itself, what they say ({@link #command()}, {@link #copy()}). Front ends read these rather than
 * parsing or classifying statements themselves; running the text is {@link Session#sql}.
 *
 * <p>Parsing never fails for a statement that is merely wrong: its kind is {@link StatementKind#INVALID}
 * (or a session command or COPY written wrong keeps its error) and {@link #check()} or running it reports
 * the error, as PostgreSQL reports it when the statement runs.
 */
public final class Statement {
  private final String text;
  private final int offset;
  private final StatementKind kind;
  private final boolean returnsRows;
  private final boolean readOnly;
  private final SessionCommand command;
  private final Copy copy;
  private final FloeException error;
  /** The engine's parse of the text (null for the statements front ends run, and invalid ones). */
  private final Ast.Statement ast;
  private List<Parameter> parameters;

  /**
   * A {@code $n} parameter where it stands in the text.
   *
   * @param number its number, from 1
   * @param start where {@code $n} starts in the text (0-based)
   * @param end where it ends (exclusive)
   * @param integerContext it follows LIMIT, OFFSET, FIRST or NEXT: an integer
   * @param numericContext it stands beside an arithmetic operator: a number, as PostgreSQL infers from the
   *     other operand ({@code abalance + $1})
   */
  public record Parameter(int number, int start, int end, boolean integerContext, boolean numericContext) {}

  private Statement(String text, int offset, StatementKind kind, boolean returnsRows, boolean readOnly,
      SessionCommand command, Copy copy, FloeException error, Ast.Statement ast) {
    this.ast = ast;
    this.text = text;
    this.offset = offset;
    this.kind = kind;
    this.returnsRows = returnsRows;
    this.readOnly = readOnly;
    this.command = command;
    this.copy = copy;
    this.error = error;
  }

  /**
   * The statements of a script, split at top-level semicolons (the last one may lack one).
   *
   * @throws FloeException 42601 for an unterminated string, quoted name or comment
   */
  public static List<Statement> split(String script) {
    List<Statement> out = new ArrayList<>();
    for (SqlScript.Part part : SqlScript.split(script)) {
      out.add(parse(part.text(), part.offset()));
    }
    return out;
  }

  /** One statement (without its terminating semicolon); see {@link #split} for scripts. */
  public static Statement parse(String text) {
    return parse(text, 0);
  }

  private static Statement parse(String text, int offset) {
    List<Token> tokens;
    try {
      tokens = Lexer.tokenize(text);
    } catch (FloeException e) {
      return invalid(text, offset, e);
    }
    if (tokens.isEmpty() || tokens.get(0).type() == Token.Type.EOF || tokens.get(0).isOp(";")) {
      return new Statement(text, offset, StatementKind.EMPTY, false, true, null, null, null, null);
    }
    try {
      Copy c = Copy.parse(text);
      if (c != null) {
        return new Statement(text, offset, StatementKind.COPY, false, !c.in(), null, c, null, null);
      }
      SessionCommand s = SessionStatements.parse(text);
      if (s != null) {
        return new Statement(text, offset, StatementKind.SESSION, s.returnsRows(), true, s, null, null, null);
      }
    } catch (FloeException e) {
      return invalid(text, offset, e);
    }
    Ast.Statement ast;
    try {
      ast = Parser.parse(text);
    } catch (FloeException e) {
      Ast.Statement shape = withNullParameters(text, tokens);
      if (shape == null) {
        return invalid(text, offset, e);
      }
      // a statement whose parameters must be values to parse (its kind is known; it runs once bound)
      return new Statement(text, offset, shape.kind(), shape.returnsRows(), shape.kind().readOnly(), null, null, null,
          null);
    }
    return new Statement(text, offset, ast.kind(), ast.returnsRows(), ast.kind().readOnly(), null, null, null, ast);
  }

  /** The text parsed with NULL for each {@code $n}, or null if it has none or still does not parse. */
  private static Ast.Statement withNullParameters(String text, List<Token> tokens) {
    StringBuilder b = new StringBuilder();
    int from = 0;
    for (Token t : tokens) {
      if (t.type() == Token.Type.PARAM) {
        b.append(text, from, t.start()).append(" NULL ");
        from = t.end();
      }
    }
    if (from == 0) {
      return null;
    }
    try {
      return Parser.parse(b.append(text, from, text.length()).toString());
    } catch (FloeException e) {
      return null;
    }
  }

  private static Statement invalid(String text, int offset, FloeException e) {
    return new Statement(text, offset, StatementKind.INVALID, true, true, null, null, e, null);
  }

  /** The engine's parse of the text, when it is one of the engine's statements and parsed as written. */
  Optional<Ast.Statement> ast() {
    return Optional.ofNullable(ast);
  }

  /** The statement's text. */
  public String text() {
    return text;
  }

  /** Where the text starts in the script it came from (0 for a single statement). */
  public int offset() {
    return offset;
  }

  public StatementKind kind() {
    return kind;
  }

  /** Whether running it returns rows (INSERT, UPDATE and DELETE with RETURNING; SHOW; FETCH). */
  public boolean returnsRows() {
    return returnsRows;
  }

  /** Whether it leaves every table as it is, and so may run in a read-only transaction. */
  public boolean readOnly() {
    return readOnly;
  }

  /** The session command it is ({@link StatementKind#SESSION}). */
  public Optional<SessionCommand> command() {
    return Optional.ofNullable(command);
  }

  /** The COPY it is ({@link StatementKind#COPY}). */
  public Optional<Copy> copy() {
    return Optional.ofNullable(copy);
  }

  /** Whether it ends a transaction block (COMMIT, ROLLBACK, ROLLBACK TO): it runs in a failed block. */
  public boolean endsTransaction() {
    return ast instanceof Ast.TransactionControl tc && tc.endsBlock();
  }

  /**
   * Reports the error the statement's text has, if it has one the engine found without running it.
   *
   * @throws FloeException the statement's syntax error
   */
  public void check() {
    if (error != null) {
      throw error;
    }
  }

  /**
   * The command words PostgreSQL names it by in errors ({@code INSERT}, {@code CREATE TABLE}): "cannot
   * execute CREATE TABLE in a read-only transaction".
   */
  public String commandName() {
    return Ast.commandName(text);
  }

  /**
   * Its {@code $n} parameters in the order they appear.
   *
   * @throws FloeException 42601 for a {@code ?} placeholder, 42P02 for a parameter number out of range
   */
  public List<Parameter> parameters() {
    if (parameters == null) {
      parameters = findParameters(text);
    }
    return parameters;
  }

  /** The number of parameters the text refers to: the highest {@code $n}. */
  public int parameterCount() {
    int max = 0;
    for (Parameter p : parameters()) {
      max = Math.max(max, p.number());
    }
    return max;
  }

  private static List<Parameter> findParameters(String text) {
    List<Token> tokens = Lexer.tokenize(text);
    List<Parameter> found = new ArrayList<>();
    for (int k = 0; k < tokens.size(); k++) {
      Token t = tokens.get(k);
      if (t.type() != Token.Type.PARAM) {
        continue;
      }
      if (t.text().equals("?")) {
        throw FloeException.syntax("syntax error at or near \"?\"", t.position());
      }
      int n;
      try {
        n = Integer.parseInt(t.text().substring(1));
      } catch (NumberFormatException e) {
        throw FloeException.syntax("syntax error at or near \"" + t.text() + "\"", t.position());
      }
      if (n < 1 || n > 65535) {
        throw new FloeException(SqlState.UNDEFINED_PARAMETER, "there is no parameter " + t.text(), t.position());
      }
      Token before = k > 0 ? tokens.get(k - 1) : null;
      Token after = k + 1 < tokens.size() ? tokens.get(k + 1) : null;
      boolean integer = before != null && (before.isKeyword("limit") || before.isKeyword("offset")
          || before.isKeyword("first") || before.isKeyword("next"));
      found.add(new Parameter(n, t.start(), t.end(), integer, isArithmetic(before) || isArithmetic(after)));
    }
    return List.copyOf(found);
  }

  private static boolean isArithmetic(Token t) {
    return t != null && t.type() == Token.Type.OP && (t.isOp("+") || t.isOp("-") || t.isOp("*") || t.isOp("/")
        || t.isOp("%"));
  }

  @Override
  public String toString() {
    return kind + ": " + text;
  }
}
