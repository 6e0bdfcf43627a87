package dev.floe.sql;

import java.util.ArrayList;
import java.util.List;

/** Splits a script into statements at top-level semicolons (never inside strings, comments or quotes). */
public final class SqlScript {
  private SqlScript() {}

  /**
   * One statement of a script.
   *
   * @param text the statement without its terminating semicolon
   * @param offset where it starts in the script
   */
  public record Part(String text, int offset) {}

  public static List<Part> split(String script) {
    List<Part> parts = new ArrayList<>();
    int start = 0;
    Integer first = null;
    for (Token t : Lexer.tokenize(script)) {
      if (t.type() == Token.Type.EOF || t.isOp(";")) {
        if (first != null) {
          parts.add(new Part(script.substring(first, t.start()).strip(), first));
        }
        first = null;
        start = t.end();
        continue;
      }
      if (first == null) {
        first = t.start();
      }
    }
    return parts;
  }
}
