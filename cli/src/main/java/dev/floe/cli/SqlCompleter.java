package dev.floe.cli;

import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.jline.reader.Candidate;
import org.jline.reader.Completer;
import org.jline.reader.LineReader;
import org.jline.reader.ParsedLine;

/**
 * Tab completion in the shell: backslash commands at the start of a line, else SQL keywords (in the case
 * the word was started in) and the names of the tables of the current schema.
 */
final class SqlCompleter implements Completer {
  static final List<String> BACKSLASH_COMMANDS = List.of(
      "\\q", "\\?", "\\conninfo", "\\d", "\\dt", "\\dn", "\\i", "\\timing", "\\pset");

  static final List<String> KEYWORDS = List.of(
      "ALL", "ALTER", "ANALYZE", "AND", "ARRAY", "AS", "ASC", "BETWEEN", "BIGINT", "BOOLEAN", "BY", "CASE", "CAST",
      "COLUMN", "COUNT", "CREATE", "CROSS", "DATE", "DESC", "DESCRIBE", "DISTINCT", "DOUBLE", "DROP", "ELSE",
      "END", "EXCEPT", "EXISTS", "EXPLAIN", "FALSE", "FROM", "FULL", "GROUP", "HAVING", "IF", "ILIKE", "IN",
      "INNER", "INSERT", "INTEGER", "INTERSECT", "INTERVAL", "INTO", "IS", "JOIN", "LEFT", "LIKE", "LIMIT", "NOT",
      "NULL", "NULLS", "NUMERIC", "OF", "OFFSET", "ON", "OR", "ORDER", "OUTER", "OVER", "PARTITION", "PARTITIONED",
      "PRECISION", "PURGE", "RENAME", "RIGHT", "SCHEMA", "SCHEMAS", "SELECT", "SET", "SHOW", "SMALLINT", "TABLE",
      "TABLES", "TEXT", "THEN", "TIMESTAMP", "TIMESTAMPTZ", "TO", "TRUE", "UNION", "USING", "VALUES", "VARCHAR",
      "VERSION", "WHEN", "WHERE", "WINDOW", "WITH");

  private final Supplier<List<String>> tableNames;

  /** @param tableNames looked up at each completion, so new tables complete at once */
  SqlCompleter(Supplier<List<String>> tableNames) {
    this.tableNames = tableNames;
  }

  @Override
  public void complete(LineReader reader, ParsedLine line, List<Candidate> candidates) {
    String word = line.word();
    if (line.wordIndex() == 0 && line.line().stripLeading().startsWith("\\")) {
      BACKSLASH_COMMANDS.forEach(c -> candidates.add(new Candidate(c)));
      return;
    }
    boolean lower = !word.isEmpty() && Character.isLowerCase(word.charAt(0));
    for (String keyword : KEYWORDS) {
      candidates.add(new Candidate(lower ? keyword.toLowerCase(Locale.ROOT) : keyword));
    }
    for (String table : tableNames.get()) {
      candidates.add(new Candidate(table));
    }
  }
}
