package dev.floe.cli;

import dev.floe.FloeException;
import java.util.ArrayList;
import java.util.List;

/**
 * How errors read on the terminal. Scripts ({@code -c}, {@code -f}) print exactly one line, so that a
 * caller can log or parse it; the shell prints psql's multi-line form with the failing line and a caret.
 */
final class ErrorReport {
  private static final int CONTEXT_CHARS = 60;

  private ErrorReport() {}

  /**
   * {@code ERROR <SQLSTATE>: <message>}, followed by where in the script it happened and the error's
   * detail and hint, all on one line.
   *
   * @param script the whole text the statement came from ({@code -c} text, file, standard input)
   * @param statementOffset where the failing statement starts in {@code script}
   * @param statementNumber the failing statement's 1-based number in the script
   * @param statementCount how many statements the script has
   */
  static String oneLine(FloeException e, String script, int statementOffset, int statementNumber,
      int statementCount) {
    boolean multiLine = script.strip().contains("\n");
    StringBuilder b = new StringBuilder(header(e));
    if (e.position() > 0) {
      int index = Math.min(script.length(), statementOffset + e.position() - 1);
      if (multiLine) {
        b.append(" at line ").append(lineOf(script, index)).append(", column ").append(columnOf(script, index));
      } else {
        b.append(" at position ").append(index + 1);
      }
    } else if (multiLine) {
      b.append(" in the statement at line ").append(lineOf(script, statementOffset));
    } else if (statementCount > 1) {
      b.append(" in statement ").append(statementNumber);
    }
    return appendDetailAndHint(b, e).toString();
  }

  /** One line for an error outside any script: opening the warehouse, reading a file. */
  static String oneLine(FloeException e) {
    return appendDetailAndHint(new StringBuilder(header(e)), e).toString();
  }

  /**
   * psql's form: the error, then the statement line it points at with a caret under the position, then
   * DETAIL and HINT lines.
   *
   * <pre>
   * ERROR 42601: syntax error at or near "form"
   * LINE 1: select * form trips
   *                  ^
   * </pre>
   */
  static List<String> verbose(FloeException e, String statement) {
    List<String> lines = new ArrayList<>();
    lines.add(header(e));
    if (e.position() > 0 && e.position() <= statement.length() + 1) {
      int index = e.position() - 1;
      int lineStart = statement.lastIndexOf('\n', index - 1) + 1;
      int lineEnd = statement.indexOf('\n', lineStart);
      String line = statement.substring(lineStart, lineEnd < 0 ? statement.length() : lineEnd);
      int caret = index - lineStart;
      String prefix = "LINE " + lineOf(statement, index) + ": ";
      // Long lines are cut around the position, as psql does, so the caret stays on screen.
      if (caret > CONTEXT_CHARS) {
        int from = caret - CONTEXT_CHARS / 2;
        line = "..." + line.substring(from);
        caret = caret - from + 3;
      }
      if (line.length() > caret + CONTEXT_CHARS) {
        line = line.substring(0, caret + CONTEXT_CHARS) + "...";
      }
      lines.add(prefix + line.replace('\t', ' '));
      lines.add(" ".repeat(prefix.length() + AlignedTable.displayWidth(line.substring(0, Math.min(caret, line.length()))))
          + "^");
    }
    e.detail().ifPresent(d -> lines.add("DETAIL: " + d));
    e.hint().ifPresent(h -> lines.add("HINT: " + h));
    return lines;
  }

  private static String header(FloeException e) {
    return "ERROR " + e.sqlState() + ": " + singleLine(e.getMessage());
  }

  private static StringBuilder appendDetailAndHint(StringBuilder b, FloeException e) {
    e.detail().ifPresent(d -> b.append(" DETAIL: ").append(singleLine(d)));
    e.hint().ifPresent(h -> b.append(" HINT: ").append(singleLine(h)));
    return b;
  }

  /** Messages quoting a multi-line statement must not break the one-line rule. */
  private static String singleLine(String text) {
    return text.strip().replaceAll("\\s*\\R\\s*", " ");
  }

  private static int lineOf(String text, int index) {
    int line = 1;
    for (int i = 0; i < index && i < text.length(); i++) {
      if (text.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }

  private static int columnOf(String text, int index) {
    return index - (text.lastIndexOf('\n', index - 1) + 1) + 1;
  }
}
