package dev.floe;

import dev.floe.exec.CopyFrom;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code COPY table [(columns)] FROM STDIN} as a front end runs it: the target's columns (to tell the
 * client what to send), a file in the engine's scratch directory for the front end to fill with the
 * client's rows as CSV, then {@link #load} inserts them in one statement of the session. Close it to
 * delete the file. The engine reads the file itself, so a client never names a file of the server.
 */
public final class CopyIn implements AutoCloseable {
  /**
   * How the file's CSV is written.
   *
   * @param nullString the unquoted text that stands for NULL
   */
  public record Csv(boolean header, char delimiter, char quote, char escape, String nullString) {
    /** Plain CSV: comma, double quotes doubled inside quotes, an empty unquoted field is NULL. */
    public static final Csv PLAIN = new Csv(false, ',', '"', '"', "");
  }

  private final CopyFrom target;

  CopyIn(CopyFrom target) {
    this.target = target;
  }

  /**
   * The columns the rows give, in order: those named, or every column the table takes input for (a
   * table with a tail numbers its rows itself, so its offset column is left out, as PostgreSQL leaves out
   * generated columns).
   */
  public List<Column> columns() {
    return target.columns();
  }

  /** The file to write the rows to. */
  public Path file() {
    return target.file();
  }

  /**
   * Inserts the file's rows into the table as one INSERT of the session (in its transaction block, if one
   * is open). A value that does not convert fails it with 22P02 naming the line and column.
   *
   * @return the INSERT's result; its row count is the COPY's
   */
  public Result load(Csv csv) {
    return target.load(csv.header(), csv.delimiter(), csv.quote(), csv.escape(), csv.nullString());
  }

  @Override
  public void close() {
    target.close();
  }
}
