package dev.floe.cli;

import dev.floe.FloeException;
import dev.floe.sql.SqlScript;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jline.reader.EOFError;
import org.jline.reader.ParsedLine;
import org.jline.reader.Parser;
import org.jline.reader.SyntaxError;
import org.jline.reader.impl.DefaultParser;

/**
 * Decides for JLine when the shell's input is complete: a backslash command or a lone {@code quit},
 * {@code exit} or {@code help} at once, SQL when its last statement ends with a top-level semicolon. Until
 * then Enter continues the input on a new line, so a multi-line statement is edited, and kept in history,
 * as one entry.
 */
final class ShellParser implements Parser {
  private static final Set<String> WORDS = Set.of("quit", "exit", "help");

  /** Splits words for completion; backslash is no escape character in SQL. */
  private final DefaultParser words = new DefaultParser().escapeChars(new char[0]);

  @Override
  public ParsedLine parse(String line, int cursor, ParseContext context) throws SyntaxError {
    if (context == ParseContext.ACCEPT_LINE) {
      if (!isComplete(line)) {
        throw new EOFError(-1, cursor, "statement continues");
      }
      // Only the completeness above decides acceptance; an apostrophe in a dollar-quoted string must not.
      return words.parse(line, cursor, ParseContext.SPLIT_LINE);
    }
    return words.parse(line, cursor, context);
  }

  /** Whether {@code input} is ready to run. */
  static boolean isComplete(String input) {
    String trimmed = input.strip();
    if (trimmed.isEmpty() || trimmed.startsWith("\\") || isShellWord(trimmed)) {
      return true;
    }
    List<SqlScript.Part> parts;
    try {
      parts = SqlScript.split(input);
    } catch (FloeException e) {
      // An open quote, dollar quote or block comment continues on the next line; any other lexical error
      // is complete input for the engine to report.
      return !e.getMessage().startsWith("unterminated");
    }
    if (parts.isEmpty()) {
      return true;
    }
    // SqlScript.Part ends where its text ends; a terminated statement has only blanks, then ';', after it.
    SqlScript.Part last = parts.get(parts.size() - 1);
    return input.substring(last.offset() + last.text().length()).stripLeading().startsWith(";");
  }

  /** {@code quit}, {@code exit} or {@code help} typed alone, as psql accepts them. */
  static boolean isShellWord(String trimmed) {
    return WORDS.contains(trimmed.toLowerCase(Locale.ROOT));
  }
}
