package dev.floe.exec;

import dev.floe.FloeProperties;
import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import dev.floe.sql.Parser;
import dev.floe.sql.QualifiedName;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code COPY table FROM STDIN} of a session ({@link dev.floe.CopyIn}): the target's columns, the
 * scratch file the front end fills with CSV, and the INSERT that reads it. The INSERT's {@code read_csv}
 * is Floe's text, so a client session may run it; the file is one Floe made, inside the engine's fence.
 */
public final class CopyFrom implements AutoCloseable {
  private final SessionContext session;
  private final String table;
  private final QualifiedName name;
  private final List<Column> columns;
  private final Path file;

  CopyFrom(SessionContext session, String table, List<String> columnsAsWritten) {
    this.session = session;
    this.table = table;
    this.name = Parser.parseName(table);
    String list = columnsAsWritten.isEmpty() ? "*" : String.join(", ", columnsAsWritten);
    List<Column> target;
    try (Result probe = session.execute("SELECT " + list + " FROM " + name + " LIMIT 0")) {
      target = probe.columns();
    }
    boolean tail = columnsAsWritten.isEmpty() && session.tableInfo(table)
        .map(t -> "true".equals(t.properties().get(FloeProperties.TAIL))).orElse(false);
    if (tail) {
      // as PostgreSQL leaves generated columns out of COPY's default list: the tail numbers its rows
      target = target.stream().filter(c -> !c.name().equals(dev.floe.tail.TailLog.OFFSET_COLUMN)).toList();
    }
    this.columns = target;
    this.file = session.scratch().resolve("copy-" + java.util.UUID.randomUUID() + ".csv");
  }

  public List<Column> columns() {
    return columns;
  }

  public Path file() {
    return file;
  }

  /** Inserts the file's rows; see {@link dev.floe.CopyIn#load}. */
  public Result load(boolean header, char delimiter, char quote, char escape, String nullString) {
    if (!Files.isRegularFile(file)) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "COPY FROM STDIN: no data file was written");
    }
    StringBuilder types = new StringBuilder("{");
    StringBuilder names = new StringBuilder();
    List<String> values = new java.util.ArrayList<>();
    for (int k = 0; k < columns.size(); k++) {
      String duckType = columns.get(k).type().duckdbName();
      String value = Lexer.quoteIdentifier("c" + k);
      switch (columns.get(k).type().kind()) {
        case DATE, TIMESTAMP, TIMESTAMPTZ -> {
          // read as PostgreSQL reads them ('0044-03-15 BC'), not as DuckDB's CSV reader would
          value = PgFunctions.datetimeIn(value, switch (columns.get(k).type().kind()) {
            case DATE -> "DATE";
            case TIMESTAMP -> "TIMESTAMP";
            default -> "TIMESTAMPTZ";
          });
          duckType = "VARCHAR";
        }
        default -> { }
      }
      types.append(k > 0 ? ", " : "").append(Lexer.quoteString("c" + k)).append(": ")
          .append(Lexer.quoteString(duckType));
      names.append(k > 0 ? ", " : "").append(Lexer.quoteIdentifier(columns.get(k).name()));
      values.add(value);
    }
    types.append('}');
    String csv = "read_csv(" + Lexer.quoteString(file.toString()) + ", header = " + header + ", delim = "
        + Lexer.quoteString(String.valueOf(delimiter)) + ", quote = " + Lexer.quoteString(String.valueOf(quote))
        + ", escape = " + Lexer.quoteString(String.valueOf(escape)) + ", nullstr = " + Lexer.quoteString(nullString)
        + ", allow_quoted_nulls = false, auto_detect = false, strict_mode = true, columns = " + types + ")";
    String insert = "INSERT INTO " + name + " (" + names + ") SELECT " + String.join(", ", values) + " FROM " + csv;
    try {
      return session.executeAsFloe(insert);
    } catch (FloeException e) {
      throw dataError(e, header, csv, values);
    }
  }

  private static final Pattern CSV_ERROR = Pattern.compile(
      "(?s).*CSV Error on Line: (\\d+).*converting column \"c(\\d+)\"\\. Could not convert string \"(.*?)\" to '(.*?)'.*");
  private static final Pattern COLUMN_COUNT = Pattern.compile(
      "(?s).*CSV Error on Line: (\\d+)\\s*Original Line: (.*?)\\s*Expected Number of Columns: (\\d+) Found: (\\d+).*");

  /**
   * A COPY that failed on its data, told as PostgreSQL tells it: the error, with the line (and column)
   * in the DETAIL (PostgreSQL's CONTEXT), never DuckDB's words or Floe's staging file.
   */
  private FloeException dataError(FloeException e, boolean header, String csv, List<String> values) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      // DuckDB's message may arrive JSON-encoded (errors_as_json): unescape its quotes first
      String raw = t.getMessage() == null ? "" : t.getMessage().replace("\\\"", "\"").replace("\\n", "\n");
      Matcher m = CSV_ERROR.matcher(raw);
      if (m.matches()) {
        int column = Integer.parseInt(m.group(2));
        String col = column < columns.size() ? columns.get(column).name() : "?";
        String type = column < columns.size() ? columns.get(column).type().displayName() : m.group(4).toLowerCase();
        long line = Long.parseLong(m.group(1)); // DuckDB counts the file's lines, the header's too
        return new FloeException(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type " + type
            + ": \"" + m.group(3) + "\"", e).withContext("COPY " + table + ", line " + line + ", column " + col
            + ": \"" + m.group(3) + "\"");
      }
      Matcher count = COLUMN_COUNT.matcher(raw);
      if (count.matches()) {
        int expected = Integer.parseInt(count.group(3));
        int found = Integer.parseInt(count.group(4));
        long line = Long.parseLong(count.group(1));
        String message = found > expected ? "extra data after last expected column"
            : "missing data for column \"" + columns.get(Math.min(found, columns.size() - 1)).name() + "\"";
        return new FloeException(SqlState.BAD_COPY_FILE_FORMAT, message, e).withContext("COPY " + table + ", line "
            + line + ": \"" + count.group(2) + "\"");
      }
    }
    if (e.sqlState().equals(SqlState.INVALID_DATETIME_FORMAT) || e.sqlState().equals(SqlState.DATETIME_FIELD_OVERFLOW)) {
      return located(e, header, csv, values);
    }
    return e;
  }

  /**
   * A date or time Floe's own reading refused (after DuckDB's CSV reader): the first line whose value does
   * not read, found by reading the file again in order, for the DETAIL.
   */
  private FloeException located(FloeException e, boolean header, String csv, List<String> values) {
    for (int k = 0; k < columns.size(); k++) {
      String c = Lexer.quoteIdentifier("c" + k);
      if (values.get(k).equals(c)) {
        continue;
      }
      String probe = "SELECT n, " + c + " FROM (SELECT row_number() OVER () AS n, * FROM " + csv.replace(
          "strict_mode = true", "strict_mode = true, parallel = false") + ") WHERE " + c + " IS NOT NULL AND try("
          + values.get(k) + ") IS NULL ORDER BY n LIMIT 1";
      try (Result r = session.executeAsFloe(probe)) {
        java.util.Iterator<dev.floe.Row> rows = r.iterator();
        if (rows.hasNext()) {
          dev.floe.Row row = rows.next();
          long line = ((Number) row.get(0)).longValue() + (header ? 1 : 0);
          return new FloeException(e.sqlState(), e.getMessage(), null, e.hint().orElse(null), 0, e).withContext("COPY "
              + table + ", line " + line + ", column " + columns.get(k).name() + ": \"" + row.get(1) + "\"");
        }
      } catch (FloeException ignored) {
        // the error stands as it is
      }
    }
    return e;
  }

  @Override
  public void close() {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // a leftover in scratch is cleared when the engine next opens
    }
  }
}
