package dev.floe;

import java.nio.file.FileSystemException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A write that failed because the disk is full, however it reached Floe (DuckDB's COPY, Iceberg's
 * manifest writer, SQLite, a log append): PostgreSQL's {@code 53100 could not write to file "...": No
 * space left on device}, naming the file when the failure did.
 */
public final class DiskFull {
  private static final Pattern QUOTED = Pattern.compile("\"([^\"]+)\"");
  private static final Pattern FOR_PATH = Pattern.compile("(?:path|file):? ([^\\s,:]+)");

  private DiskFull() {}

  /** The 53100 error a failure is, if anything in its chain says the disk was full. */
  public static Optional<FloeException> of(Throwable failure) {
    String path = null;
    boolean full = false;
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof FloeException f && f.sqlState().equals(SqlState.DISK_FULL)) {
        return Optional.of(f);
      }
      String m = t.getMessage() == null ? "" : t.getMessage();
      if (t instanceof FileSystemException fs && fs.getFile() != null && path == null) {
        path = fs.getFile();
      }
      if (m.contains("No space left on device") || m.contains("SQLITE_FULL") || m.contains("database or disk is full")
          || m.contains("ENOSPC")) {
        full = true;
      }
      if (path == null) {
        Matcher q = QUOTED.matcher(m);
        Matcher p = FOR_PATH.matcher(m);
        if (q.find() && q.group(1).contains("/")) {
          path = q.group(1);
        } else if (p.find() && p.group(1).contains("/")) {
          path = p.group(1);
        }
      }
    }
    if (!full) {
      return Optional.empty();
    }
    return Optional.of(new FloeException(SqlState.DISK_FULL, path == null ? "could not write: No space left on device"
        : "could not write to file \"" + path + "\": No space left on device", null,
        "Free space on the disk of the warehouse; nothing of the failed statement was committed.", 0, failure));
  }
}
