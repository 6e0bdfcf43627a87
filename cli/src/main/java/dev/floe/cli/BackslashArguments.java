package dev.floe.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a backslash command line into words as psql does: blanks separate words, {@code 'single quotes'}
 * group a word and are removed ({@code ''} inside is one quote), {@code "double quotes"} stay, so that a
 * quoted identifier reaches the SQL name parser intact.
 */
final class BackslashArguments {
  private BackslashArguments() {}

  /**
   * The words of {@code line}; the first is the command itself, e.g. {@code \d}.
   *
   * @throws IllegalArgumentException on an unterminated quote
   */
  static List<String> split(String line) {
    List<String> words = new ArrayList<>();
    StringBuilder word = null;
    for (int i = 0; i < line.length(); i++) {
      char ch = line.charAt(i);
      if (Character.isWhitespace(ch)) {
        if (word != null) {
          words.add(word.toString());
          word = null;
        }
        continue;
      }
      if (word == null) {
        word = new StringBuilder();
      }
      if (ch == '\'') {
        int end = i + 1;
        while (true) {
          if (end >= line.length()) {
            throw new IllegalArgumentException("unterminated quoted string");
          }
          if (line.charAt(end) == '\'') {
            if (end + 1 < line.length() && line.charAt(end + 1) == '\'') {
              word.append('\'');
              end += 2;
              continue;
            }
            break;
          }
          word.append(line.charAt(end));
          end++;
        }
        i = end;
      } else if (ch == '"') {
        int end = line.indexOf('"', i + 1);
        if (end < 0) {
          throw new IllegalArgumentException("unterminated quoted identifier");
        }
        word.append(line, i, end + 1);
        i = end;
      } else {
        word.append(ch);
      }
    }
    if (word != null) {
      words.add(word.toString());
    }
    return words;
  }
}
