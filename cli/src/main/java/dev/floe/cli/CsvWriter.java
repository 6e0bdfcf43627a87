package dev.floe.cli;

import dev.floe.Column;
import dev.floe.Copy;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.CopyEncoder;
import dev.floe.OutBuffer;
import java.io.IOException;
import java.io.PrintStream;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * CSV as RFC 4180 quotes it, with a header line: a field is quoted when it holds a comma, a double quote
 * (doubled inside) or a line break. NULL is an empty field and an empty string is {@code ""}, as
 * PostgreSQL's {@code COPY ... CSV} writes them, so the two stay distinct (a lone {@code \.} in a
 * one-column result is quoted too, as COPY does). Values are PostgreSQL's text forms ({@code t}/{@code f},
 * {@code 2024-01-31 08:15:00+00}). Lines end with LF, as psql's CSV output does.
 *
 * <p>The rows are encoded from the result's Arrow batches straight into a byte buffer by COPY's own
 * encoder (no Java object per value), written out every 64 kB.
 */
final class CsvWriter implements ResultWriter {
  /** COPY TO STDOUT (FORMAT csv): comma, double quotes, NULL as an empty field. */
  private static final Copy CSV = new Copy(null, List.of(), "", false, Copy.Format.CSV, ',', "", false, '"', '"');
  private static final int WRITE_AT = 64 * 1024;

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
    CopyEncoder encoder = new CopyEncoder(CSV, result.columns(), ZoneOffset.UTC);
    OutBuffer buffer = new OutBuffer(WRITE_AT + 8 * 1024);
    long count = 0;
    try {
      ArrowReader reader = result.arrow();
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        int rows = root.getRowCount();
        encoder.batch(root.getFieldVectors());
        for (int row = 0; row < rows; row++) {
          int lineStart = buffer.len;
          try {
            encoder.row(buffer, row);
          } catch (RuntimeException e) {
            buffer.len = lineStart; // no half line
            throw e;
          }
          if (buffer.len >= WRITE_AT) {
            out.write(buffer.buf, 0, buffer.len);
            buffer.len = 0;
          }
        }
        count += rows;
      }
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "reading query results failed: " + e.getMessage(), e);
    } finally {
      out.write(buffer.buf, 0, buffer.len); // what was encoded stays printed
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
