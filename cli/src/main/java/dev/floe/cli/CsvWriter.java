package dev.floe.cli;

import dev.floe.Column;
import dev.floe.Result;
import dev.floe.Row;
import java.io.PrintStream;

/**
 * CSV as RFC 4180 quotes it, with a header line: a field is quoted when it holds a comma, a double quote
 * (doubled inside) or a line break. NULL is an empty field and an empty string is {@code ""}, as
 * PostgreSQL's {@code COPY ... CSV} writes them, so the two stay distinct. Values are PostgreSQL's text
 * forms ({@code t}/{@code f}, {@code 2024-01-31 08:15:00+00}). Lines end with LF, as psql's CSV output does.
 */
final class CsvWriter implements ResultWriter {
  private final PrintStream out;

  CsvWriter(PrintStream out) {
    this.out = out;
  }

  @Override
  public long write(Result result) {
    StringBuilder line = new StringBuilder();
    for (Column column : result.columns()) {
      if (line.length() > 0) {
        line.append(',');
      }
      appendField(line, column.name());
    }
    out.append(line).append('\n');
    long count = 0;
    for (Row row : result) {
      line.setLength(0);
      for (int c = 0; c < row.size(); c++) {
        if (c > 0) {
          line.append(',');
        }
        String text = row.getString(c);
        if (text != null) {
          appendField(line, text);
        }
      }
      out.append(line).append('\n');
      count++;
    }
    return count;
  }

  static void appendField(StringBuilder line, String text) {
    boolean quote = text.isEmpty();
    for (int i = 0; i < text.length() && !quote; i++) {
      char ch = text.charAt(i);
      quote = ch == ',' || ch == '"' || ch == '\n' || ch == '\r';
    }
    if (!quote) {
      line.append(text);
      return;
    }
    line.append('"').append(text.replace("\"", "\"\"")).append('"');
  }
}
