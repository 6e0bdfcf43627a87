package dev.floe.cli;

import dev.floe.Column;
import dev.floe.Copy;
import dev.floe.CopyIn;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.Session;
import dev.floe.SqlState;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.ZoneId;
import java.util.Iterator;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * COPY between the shell's side and a table, as psql's {@code \copy} and its COPY FROM STDIN / TO STDOUT: the
 * file (or program, or the shell's input and output) is read or written here, the rows go through the session
 * with the engine's COPY formats ({@link Session#copyIn}, {@link Copy#line}), so a client file never needs the
 * engine to reach it.
 */
final class ClientCopy {
  /** Where COPY FROM STDIN's data comes from: the lines after the command (a script's, the terminal's). */
  interface Stdin {
    /** The data up to a line {@code \.} or the end of input. */
    InputStream open();
  }

  /** PostgreSQL's external_routine_exception: a COPY's program failed. */
  static final String EXTERNAL_ROUTINE_EXCEPTION = "38000";

  private final Session session;

  ClientCopy(Session session) {
    this.session = session;
  }

  /** A {@code \copy} line (without {@code \copy}) as the COPY statement it stands for, and where its data is. */
  record Parsed(Copy copy, String file, boolean program, boolean shellStdio) {}

  /**
   * Parses {@code \copy table [(cols)] | (query) FROM | TO 'file' | file | PROGRAM 'cmd' | STDIN | STDOUT |
   * PSTDIN | PSTDOUT [[WITH] (options)]} as psql does: the options are COPY's.
   */
  static Parsed parse(String args) {
    int depth = 0;
    int i = 0;
    int keyword = -1;
    boolean in = false;
    String text = args.strip();
    while (i < text.length()) {
      char c = text.charAt(i);
      if (c == '\'' || c == '"') {
        int close = text.indexOf(c, i + 1);
        i = close < 0 ? text.length() : close + 1;
        continue;
      }
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (depth == 0 && (i == 0 || Character.isWhitespace(text.charAt(i - 1)) || text.charAt(i - 1) == ')')) {
        String rest = text.substring(i).toLowerCase(Locale.ROOT);
        if (rest.matches("(?s)from\\s.*")) {
          keyword = i;
          in = true;
          break;
        }
        if (rest.matches("(?s)to\\s.*")) {
          keyword = i;
          break;
        }
      }
      i++;
    }
    if (keyword < 0) {
      throw new IllegalArgumentException("expects FROM or TO: \\copy table FROM 'file' or \\copy table TO 'file'");
    }
    String head = text.substring(0, keyword).strip();
    int pos = keyword + (in ? 4 : 2);
    while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
      pos++;
    }
    boolean program = false;
    if (text.regionMatches(true, pos, "program", 0, 7) && pos + 7 < text.length()
        && Character.isWhitespace(text.charAt(pos + 7))) {
      program = true;
      pos += 7;
      while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
        pos++;
      }
    }
    String target;
    int end;
    if (pos < text.length() && text.charAt(pos) == '\'') {
      StringBuilder b = new StringBuilder();
      end = pos + 1;
      while (true) {
        if (end >= text.length()) {
          throw new IllegalArgumentException("unterminated quoted string");
        }
        if (text.charAt(end) == '\'') {
          if (end + 1 < text.length() && text.charAt(end + 1) == '\'') {
            b.append('\'');
            end += 2;
            continue;
          }
          end++;
          break;
        }
        b.append(text.charAt(end++));
      }
      target = b.toString();
    } else {
      end = pos;
      while (end < text.length() && !Character.isWhitespace(text.charAt(end))) {
        end++;
      }
      target = text.substring(pos, end);
    }
    if (target.isEmpty()) {
      throw new IllegalArgumentException("missing the file: \\copy ... " + (in ? "FROM" : "TO") + " 'file'");
    }
    String word = target.toLowerCase(Locale.ROOT);
    boolean stdio = !program && !text.startsWith("'", pos)
        && (word.equals(in ? "stdin" : "stdout") || word.equals(in ? "pstdin" : "pstdout"));
    String sql = "COPY " + head + (in ? " FROM STDIN " : " TO STDOUT ") + text.substring(end);
    Copy copy = Copy.parse(sql);
    return new Parsed(copy, stdio ? word : target, program, stdio);
  }

  /**
   * COPY FROM: the bytes of {@code data} into the table, in the COPY's format; the rows are one INSERT of the
   * session.
   *
   * @return the rows copied
   */
  long copyIn(Copy copy, InputStream data) {
    try (CopyIn in = session.copyIn(copy)) {
      try (OutputStream to = in.data()) {
        data.transferTo(to);
      } catch (IOException e) {
        throw new FloeException(SqlState.IO_ERROR, "could not read the data to copy: " + e.getMessage(), e);
      }
      try (Result r = in.load()) {
        return r.rowCount();
      }
    } catch (RuntimeException e) {
      if (session.inTransaction()) {
        session.failTransaction(); // as a failing statement fails the block
      }
      throw e;
    }
  }

  /**
   * COPY TO: the table's or query's rows as COPY's text or CSV lines (times in UTC, as the shell shows them).
   *
   * @return the rows copied
   */
  long copyOut(Copy copy, OutputStream to) throws IOException {
    if (copy.format() == Copy.Format.BINARY) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "COPY TO in the binary format is not supported here");
    }
    String query = copy.query() != null ? copy.query() : "SELECT " + (copy.columns().isEmpty() ? "*"
        : String.join(", ", copy.columns())) + " FROM " + copy.table();
    try (Result result = session.sql(query)) {
      if (!result.hasRows()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "COPY query must have a RETURNING clause or return rows");
      }
      int n = result.columns().size();
      if (copy.header()) {
        to.write(copy.header(result.columns().stream().map(Column::name).toList()).getBytes(StandardCharsets.UTF_8));
      }
      long rows = 0;
      Object[] values = new Object[n];
      for (Iterator<Row> it = result.iterator(); it.hasNext(); ) {
        Row row = it.next();
        for (int k = 0; k < n; k++) {
          values[k] = row.get(k);
        }
        to.write(copy.line(values, ZoneId.of("UTC")).getBytes(StandardCharsets.UTF_8));
        rows++;
      }
      to.flush();
      return rows;
    }
  }

  /**
   * Runs a {@code \copy}: the file (or program) opened here, or the shell's input and output for STDIN and
   * STDOUT.
   *
   * @param stdout the query output, for TO STDOUT
   * @return the command tag, {@code COPY n}
   */
  String run(Parsed p, Stdin stdin, Supplier<OutputStream> stdout, InputStream pstdin, OutputStream pstdout) {
    Copy copy = p.copy();
    try {
      if (copy.in()) {
        if (p.shellStdio()) {
          return copy.tag(copyIn(copy, p.file().equals("pstdin") ? pstdin : stdin.open()));
        }
        if (p.program()) {
          Process process = new ProcessBuilder("/bin/sh", "-c", p.file())
              .redirectError(ProcessBuilder.Redirect.INHERIT).start();
          process.getOutputStream().close();
          try (InputStream data = process.getInputStream()) {
            return copy.tag(copyIn(copy, data));
          } finally {
            waitFor(process, p.file());
          }
        }
        try (InputStream data = Files.newInputStream(Path.of(p.file()))) {
          return copy.tag(copyIn(copy, data));
        }
      }
      if (p.shellStdio()) {
        return copy.tag(copyOut(copy, p.file().equals("pstdout") ? pstdout : stdout.get()));
      }
      if (p.program()) {
        Process process = new ProcessBuilder("/bin/sh", "-c", p.file())
            .redirectOutput(ProcessBuilder.Redirect.INHERIT).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        long rows;
        try (OutputStream to = new BufferedOutputStream(process.getOutputStream(), 1 << 16)) {
          rows = copyOut(copy, to);
        }
        waitFor(process, p.file());
        return copy.tag(rows);
      }
      try (OutputStream to = new BufferedOutputStream(Files.newOutputStream(Path.of(p.file())), 1 << 16)) {
        return copy.tag(copyOut(copy, to));
      }
    } catch (NoSuchFileException e) {
      throw new FloeException(SqlCommand.UNDEFINED_FILE, "could not open file \"" + p.file() + "\": No such file");
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, (p.program() ? "could not run \"" : "could not open file \"")
          + p.file() + "\": " + e.getMessage(), e);
    }
  }

  private static void waitFor(Process process, String command) {
    try {
      int status = process.waitFor();
      if (status != 0) {
        throw new FloeException(EXTERNAL_ROUTINE_EXCEPTION, "program \"" + command
            + "\" failed: exit status " + status);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The lines of {@code in} up to a line {@code \.} (not included) or its end, as COPY FROM STDIN reads them. */
  static InputStream untilEndMarker(Iterator<String> lines) {
    StringBuilder b = new StringBuilder();
    while (lines.hasNext()) {
      String line = lines.next();
      if (line.equals("\\.")) {
        break;
      }
      b.append(line).append('\n');
    }
    return new java.io.ByteArrayInputStream(b.toString().getBytes(StandardCharsets.UTF_8));
  }

  /** Standard input's lines, read as they are asked for. */
  static Iterator<String> lines(InputStream in) {
    java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(in, StandardCharsets.UTF_8));
    return r.lines().iterator();
  }
}
