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

  /**
   * {@link #split}, without tokenizing a text that plainly holds one statement (no semicolon at all, and
   * not starting with a comment): the statement is parsed next anyway, and a point query's text was
   * tokenized three times.
   */
  public static List<Part> splitOne(String script) {
    if (script.indexOf(';') >= 0) {
      return split(script);
    }
    int first = 0;
    while (first < script.length() && Character.isWhitespace(script.charAt(first))) {
      first++;
    }
    if (first == script.length()) {
      return List.of();
    }
    if (script.startsWith("--", first) || script.startsWith("/*", first)) {
      return split(script);
    }
    return List.of(new Part(script.substring(first).strip(), first));
  }

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
