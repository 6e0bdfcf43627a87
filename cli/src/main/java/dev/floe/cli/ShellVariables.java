package dev.floe.cli;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * psql's variables: {@code \set NAME value} (and the unset command), {@code -v NAME=value}, and their
 * interpolation into SQL and backslash commands: {@code :name} as the value, {@code :'name'} as a string literal,
 * {@code :"name"} as a quoted identifier, {@code :{?name}} as TRUE or FALSE. Not inside string literals, quoted
 * identifiers, dollar-quoted strings or comments; {@code ::} is a cast, and an unset name stays as written.
 */
final class ShellVariables {
  private final Map<String, String> values = new TreeMap<>();
  /** Whether the text being interpolated is a backslash command's line. */
  private boolean command;

  /** @throws IllegalArgumentException for a name psql would refuse (letters, digits and underscores only) */
  void set(String name, String value) {
    if (name.isEmpty() || !name.chars().allMatch(c -> Character.isLetterOrDigit(c) || c == '_')) {
      throw new IllegalArgumentException("invalid variable name: \"" + name + "\"");
    }
    values.put(name, value);
  }

  void unset(String name) {
    values.remove(name);
  }

  Optional<String> get(String name) {
    return Optional.ofNullable(values.get(name));
  }

  /** Every variable, by name. */
  Map<String, String> all() {
    return java.util.Collections.unmodifiableMap(new TreeMap<>(values));
  }

  /** {@code text} with the variables it names outside quotes and comments replaced. */
  String interpolate(String text) {
    return interpolate(text, false);
  }

  /**
   * A backslash command's line with its variables replaced, each value as one word of the command (in single
   * quotes, which {@link BackslashArguments} removes), as psql substitutes them after splitting the words.
   */
  String interpolateCommand(String line) {
    return interpolate(line, true);
  }

  private String interpolate(String text, boolean command) {
    this.command = command;
    if (values.isEmpty() || text.indexOf(':') < 0) {
      return text;
    }
    StringBuilder b = new StringBuilder(text.length());
    int i = 0;
    int n = text.length();
    while (i < n) {
      char c = text.charAt(i);
      int end;
      if (c == '\'') {
        boolean escapes = i > 0 && (text.charAt(i - 1) == 'e' || text.charAt(i - 1) == 'E')
            && (i == 1 || !isNameChar(text.charAt(i - 2)));
        end = quoted(text, i, '\'', escapes);
      } else if (c == '"') {
        end = quoted(text, i, '"', false);
      } else if (c == '-' && i + 1 < n && text.charAt(i + 1) == '-') {
        int eol = text.indexOf('\n', i);
        end = eol < 0 ? n : eol;
      } else if (c == '/' && i + 1 < n && text.charAt(i + 1) == '*') {
        end = blockComment(text, i);
      } else if (c == '$' && (i == 0 || !isNameChar(text.charAt(i - 1))) && dollarTag(text, i) != null) {
        String tag = dollarTag(text, i);
        int close = text.indexOf(tag, i + tag.length());
        end = close < 0 ? n : close + tag.length();
      } else if (c == ':' && i + 1 < n && text.charAt(i + 1) == ':') {
        end = i + 2; // a cast
      } else if (c == ':') {
        int replaced = variable(text, i, b);
        if (replaced > i) {
          i = replaced;
          continue;
        }
        end = i + 1;
      } else {
        end = i + 1;
      }
      b.append(text, i, end);
      i = end;
    }
    return b.toString();
  }

  /** Appends the variable at {@code colon} to {@code b}; returns where the text goes on, or {@code colon}. */
  private int variable(String text, int colon, StringBuilder b) {
    int n = text.length();
    int start = colon + 1;
    if (start < n && (text.charAt(start) == '\'' || text.charAt(start) == '"')) {
      char q = text.charAt(start);
      int close = text.indexOf(q, start + 1);
      if (close < 0) {
        return colon;
      }
      String name = text.substring(start + 1, close);
      String value = values.get(name);
      if (value == null || name.isEmpty()) {
        return colon;
      }
      String quoted = q + value.replace(String.valueOf(q), String.valueOf(q) + q) + q;
      b.append(command && q == '\'' ? word(quoted) : quoted);
      return close + 1;
    }
    if (text.startsWith("{?", start)) {
      int close = text.indexOf('}', start);
      if (close < 0) {
        return colon;
      }
      b.append(values.containsKey(text.substring(start + 2, close)) ? "TRUE" : "FALSE");
      return close + 1;
    }
    int end = start;
    while (end < n && isNameChar(text.charAt(end))) {
      end++;
    }
    String value = end > start ? values.get(text.substring(start, end)) : null;
    if (value == null) {
      return colon;
    }
    b.append(command ? word(value) : value);
    return end;
  }

  /** {@code value} as one word of a backslash command. */
  private static String word(String value) {
    return "'" + value.replace("'", "''") + "'";
  }

  private static boolean isNameChar(char c) {
    return Character.isLetterOrDigit(c) || c == '_';
  }

  /** The end of the quoted text at {@code i} (after its closing quote; doubled quotes stay inside). */
  private static int quoted(String text, int i, char q, boolean backslashEscapes) {
    int j = i + 1;
    while (j < text.length()) {
      char c = text.charAt(j);
      if (backslashEscapes && c == '\\') {
        j += 2;
        continue;
      }
      if (c == q) {
        if (j + 1 < text.length() && text.charAt(j + 1) == q) {
          j += 2;
          continue;
        }
        return j + 1;
      }
      j++;
    }
    return text.length();
  }

  private static int blockComment(String text, int i) {
    int depth = 0;
    int j = i;
    while (j < text.length()) {
      if (text.startsWith("/*", j)) {
        depth++;
        j += 2;
      } else if (text.startsWith("*/", j)) {
        depth--;
        j += 2;
        if (depth == 0) {
          return j;
        }
      } else {
        j++;
      }
    }
    return text.length();
  }

  /** {@code $tag$} (or {@code $$}) at {@code i}, or null if none starts there. */
  private static String dollarTag(String text, int i) {
    int j = i + 1;
    while (j < text.length() && (Character.isLetter(text.charAt(j)) || text.charAt(j) == '_'
        || j > i + 1 && Character.isDigit(text.charAt(j)))) {
      j++;
    }
    return j < text.length() && text.charAt(j) == '$' ? text.substring(i, j + 1) : null;
  }
}
