package dev.floe.cli;

import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.jline.reader.Candidate;
import org.jline.reader.Completer;
import org.jline.reader.LineReader;
import org.jline.reader.ParsedLine;

/**
 * Tab completion in the shell: backslash commands at the start of a line (then table names for their
 * arguments), else SQL keywords (in the case the word was started in) and the names of the current
 * schema's tables and their columns. Only prefixes complete: the reader's typo-tolerant matching is off,
 * so {@code MER} never becomes {@code NUMERIC}.
 */
final class SqlCompleter implements Completer {
  static final List<String> BACKSLASH_COMMANDS = List.of(
      "\\q", "\\?", "\\h", "\\conninfo", "\\copy", "\\d", "\\d+", "\\dt", "\\dt+", "\\dn", "\\di", "\\dv",
      "\\du", "\\e", "\\echo", "\\l", "\\i", "\\o", "\\set", "\\unset", "\\timing", "\\pset", "\\x");

  static final List<String> KEYWORDS = List.of(
      "ABORT", "ADD", "ALL", "ALTER", "ANALYZE", "AND", "ARRAY", "AS", "ASC", "BEGIN", "BETWEEN", "BIGINT",
      "BOOLEAN", "BY", "BYTEA", "CASCADE", "CASE", "CAST", "CHAR", "CHECK", "CLOSE", "COALESCE", "COLUMN", "COMMIT",
      "CONFLICT", "CONSTRAINT", "COPY", "COUNT", "CREATE", "CROSS", "CSV", "CURRENT_DATE", "CURRENT_TIMESTAMP",
      "CURSOR", "DATE", "DEALLOCATE", "DECIMAL", "DECLARE", "DEFAULT", "DELETE", "DELIMITER", "DESC", "DESCRIBE",
      "DISCARD", "DISTINCT", "DO", "DOUBLE", "DROP", "ELSE", "END", "EXCEPT", "EXCLUDED", "EXISTS", "EXPLAIN",
      "FALSE", "FETCH", "FIRST", "FOR", "FORMAT", "FROM", "FULL", "GROUP", "HAVING", "HEADER", "IF", "ILIKE", "IN",
      "INNER", "INSERT", "INTEGER", "INTERSECT", "INTERVAL", "INTO", "IS", "ISOLATION", "JOIN", "KEY", "LAST",
      "LATERAL", "LEFT", "LEVEL", "LIKE", "LIMIT", "MATCHED", "MERGE", "NATURAL", "NOT", "NOTHING", "NULL", "NULLS",
      "NUMERIC", "OF", "OFFSET", "ON", "OR", "ORDER", "OUTER", "OVER", "PARTITION", "PARTITIONED", "PRECISION",
      "PRIMARY", "PURGE", "READ", "REAL", "RELEASE", "RENAME", "REPEATABLE", "RESET", "RESTRICT", "RETURNING",
      "RIGHT", "ROLLBACK", "SAVEPOINT", "SCHEMA", "SCHEMAS", "SELECT", "SEQUENCE", "SERIAL", "SERIALIZABLE",
      "SESSION", "SET", "SHOW", "SMALLINT", "START", "STDIN", "STDOUT", "SYSTEM_TIME", "TABLE", "TABLES", "TEXT",
      "THEN", "TIME", "TIMESTAMP", "TIMESTAMPTZ", "TO", "TRANSACTION", "TRUE", "TRUNCATE", "TYPE", "UNION", "UPDATE",
      "USING", "UUID", "VACUUM", "VALUES", "VARCHAR", "VERBOSE", "VERSION", "WHEN", "WHERE", "WINDOW", "WITH",
      "WORK", "ZONE");

  private final Supplier<List<String>> tableNames;
  private final Supplier<List<String>> columnNames;

  /**
   * @param tableNames looked up at each completion, so new tables complete at once
   * @param columnNames the columns of the current schema's tables, looked up the same way
   */
  SqlCompleter(Supplier<List<String>> tableNames, Supplier<List<String>> columnNames) {
    this.tableNames = tableNames;
    this.columnNames = columnNames;
  }

  @Override
  public void complete(LineReader reader, ParsedLine line, List<Candidate> candidates) {
    String word = line.word();
    if (line.line().stripLeading().startsWith("\\")) {
      if (line.wordIndex() == 0) {
        BACKSLASH_COMMANDS.forEach(c -> candidates.add(new Candidate(c)));
      } else {
        tableNames.get().forEach(t -> candidates.add(new Candidate(t))); // \d NAME: a table, never a keyword
      }
      return;
    }
    boolean lower = !word.isEmpty() && Character.isLowerCase(word.charAt(0));
    for (String keyword : KEYWORDS) {
      candidates.add(new Candidate(lower ? keyword.toLowerCase(Locale.ROOT) : keyword));
    }
    for (String table : tableNames.get()) {
      candidates.add(new Candidate(table));
    }
    for (String column : columnNames.get()) {
      candidates.add(new Candidate(column));
    }
  }
}
