package dev.floe.cli;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Session;
import dev.floe.sql.SqlScript;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/** Runs statements on one session and prints their results as the {@link OutputSettings} say. */
final class StatementRunner {
  private final Session session;
  /** Where results go: through {@link Gate} to the destination of the statement running. */
  private final PrintStream out;
  private final QueryOutput output;
  private final PrintStream err;
  private final OutputSettings settings;
  /** The running statement's destination (the terminal, the pager, {@code \o}'s file). */
  private volatile java.io.OutputStream sink;
  /** The user quit the pager: the rest of the statement's output is dropped. */
  private volatile boolean dropping;
  private final ClientCopy copies;
  /** The progress line of a long statement (the interactive shell on a terminal), or null. */
  private ProgressLine progress;
  /** The running statement's progress line, until its output starts. */
  private volatile ProgressLine.Shown shown;
  /** Where COPY FROM STDIN reads: the script's lines after it, or the terminal's. */
  private ClientCopy.Stdin stdin = InputStream::nullInputStream;
  /** The process's standard input, for {@code \copy ... FROM PSTDIN}. */
  private InputStream processStdin = InputStream.nullInputStream();
  private static final java.util.regex.Pattern COPY = java.util.regex.Pattern.compile("(?i)\\s*copy\\b");

  /** Set by {@link #cancel()}: the running statement stops, its rows too, however many are left to print. */
  private volatile boolean cancelled;
  /** A cancelled statement's output was cut: what it still writes is dropped until it ends. */
  private volatile boolean cut;

  StatementRunner(Session session, PrintStream out, PrintStream err, OutputSettings settings) {
    this(session, new QueryOutput(out, null, settings), err, settings);
  }

  StatementRunner(Session session, QueryOutput output, PrintStream err, OutputSettings settings) {
    this.session = session;
    this.output = output;
    this.sink = output.terminal();
    this.out = new PrintStream(new Gate(), false, java.nio.charset.StandardCharsets.UTF_8);
    this.err = err;
    this.settings = settings;
    this.copies = new ClientCopy(session);
  }

  /** Shows a progress line for statements that run long (the interactive shell on a terminal only). */
  void progress(ProgressLine value) {
    this.progress = value;
  }

  /** The process's standard input, which {@code \copy ... FROM PSTDIN} reads whatever the script is. */
  void processStdin(InputStream value) {
    this.processStdin = value;
  }

  ClientCopy.Stdin stdin() {
    return stdin;
  }

  /** Where COPY FROM STDIN and {@code \copy ... FROM STDIN} read their data from now on. */
  void stdin(ClientCopy.Stdin value) {
    this.stdin = value;
  }

  /**
   * The way to standard output: once the statement is cancelled, its next write stops the writer that
   * prints its rows (an unchecked {@link Cut}, which PrintStream passes on), and later writes are dropped.
   */
  private final class Gate extends java.io.OutputStream {
    @Override
    public void write(int b) throws java.io.IOException {
      if (pass()) {
        sink.write(b);
      }
    }

    @Override
    public void write(byte[] b, int off, int len) throws java.io.IOException {
      if (pass()) {
        sink.write(b, off, len);
      }
    }

    @Override
    public void flush() throws java.io.IOException {
      if (!dropping) {
        sink.flush();
      }
    }

    private boolean pass() {
      ProgressLine.Shown line = shown;
      if (line != null) {
        line.stop(); // the result arrives: the progress line goes before it prints
        shown = null;
      }
      if (cut || dropping) {
        return false;
      }
      if (cancelled) {
        cut = true;
        throw new Cut();
      }
      return true;
    }
  }

  /** Stops a cancelled statement's printing. */
  private static final class Cut extends RuntimeException {
    Cut() {
      super(null, null, false, false);
    }
  }

  /**
   * Cancels the running statement from another thread (Ctrl-C): the engine stops it, and if its rows are
   * being printed, printing stops at the next row.
   */
  void cancel() {
    cancelled = true;
    session.cancel();
  }

  Session session() {
    return session;
  }

  OutputSettings settings() {
    return settings;
  }

  QueryOutput output() {
    return output;
  }

  /**
   * Prints what {@code body} writes to the query output (the terminal, the pager, {@code \o}'s file), as a
   * result is printed: the listings of backslash commands.
   */
  void print(java.util.function.Consumer<PrintStream> body) {
    QueryOutput.Destination destination = output.open();
    PrintStream to = new PrintStream(destination.stream(), false, java.nio.charset.StandardCharsets.UTF_8);
    try {
      body.accept(to);
      to.flush();
    } catch (PagerStream.PagerClosed e) {
      // the user left the pager: the rest is not shown
    } finally {
      destination.close();
    }
  }

  /**
   * Runs the statements of {@code script} in order and stops at the first error, which it reports on one
   * line on standard error.
   *
   * @return true if every statement succeeded
   */
  boolean runScript(String script) {
    List<SqlScript.Part> parts;
    try {
      parts = SqlScript.split(script);
    } catch (FloeException e) {
      // The lexer's positions (an unterminated string) count from the start of the script.
      err.println(ErrorReport.oneLine(e, script, 0, 1, 1));
      return false;
    }
    for (int i = 0; i < parts.size(); i++) {
      SqlScript.Part part = parts.get(i);
      try {
        run(part.text());
      } catch (FloeException e) {
        out.flush();
        err.println(ErrorReport.oneLine(e, script, part.offset(), i + 1, parts.size()));
        return false;
      }
    }
    return true;
  }

  /**
   * Runs one statement and prints its rows (or, in the table format, its command tag), then, if timing is
   * on and it succeeded, the time it took.
   *
   * @throws FloeException if it fails; positions count from the start of {@code statement}
   */
  void run(String statement) {
    if (COPY.matcher(statement).lookingAt()) {
      dev.floe.Copy copy = dev.floe.Copy.parse(statement);
      if (copy != null) {
        copy(new ClientCopy.Parsed(copy, copy.in() ? "stdin" : "stdout", false, true));
        return;
      }
    }
    long start = System.nanoTime();
    cancelled = false;
    cut = false;
    dropping = false;
    QueryOutput.Destination destination = output.open();
    sink = destination.stream();
    shown = progress == null ? null : progress.start();
    try (Result result = session.sql(statement)) {
      if (result.hasRows()) {
        settings.format().writer(out, settings, destination.screenWidth()).write(result);
      } else if (settings.format().printsCommandTags()) {
        out.println(result.commandTag());
      }
    } catch (Cut e) {
      throw new FloeException(dev.floe.SqlState.QUERY_CANCELED, "canceling statement due to user request");
    } catch (PagerStream.PagerClosed e) {
      dropping = true; // the user left the pager before the end: the rest of the rows are not read
    } finally {
      stopProgress();
      out.flush();
      if (cut) {
        cut = false;
        cancelled = false;
        out.println(); // the cut row's line ends
        out.flush();
      }
      destination.close();
      sink = output.terminal();
      dropping = false;
    }
    if (settings.timing()) {
      output.terminal().println(timing(System.nanoTime() - start - destination.waitedNanos()));
      output.terminal().flush();
    }
  }

  /**
   * Runs a COPY between the shell's side and a table ({@code \copy}, COPY FROM STDIN, COPY TO STDOUT), then
   * prints its tag ({@code COPY n}) and its time; TO STDOUT writes to the query output.
   */
  void copy(ClientCopy.Parsed parsed) {
    long start = System.nanoTime();
    cancelled = false;
    cut = false;
    dropping = false;
    QueryOutput.Destination destination = output.open();
    sink = destination.stream();
    String tag = null;
    // not while the user types COPY FROM STDIN's data
    shown = progress == null || parsed.copy().in() && parsed.shellStdio() ? null : progress.start();
    try {
      tag = copies.run(parsed, stdin, () -> out, processStdin, output.terminal());
    } catch (Cut e) {
      throw new FloeException(dev.floe.SqlState.QUERY_CANCELED, "canceling statement due to user request");
    } catch (PagerStream.PagerClosed e) {
      dropping = true;
    } finally {
      stopProgress();
      out.flush();
      if (tag != null && settings.format().printsCommandTags()) {
        out.println(tag);
        out.flush();
      }
      destination.close();
      sink = output.terminal();
      dropping = false;
      cut = false;
      cancelled = false;
    }
    if (settings.timing()) {
      output.terminal().println(timing(System.nanoTime() - start - destination.waitedNanos()));
      output.terminal().flush();
    }
  }

  private void stopProgress() {
    ProgressLine.Shown line = shown;
    if (line != null) {
      line.stop();
      shown = null;
    }
  }

  /**
   * psql's timing line: {@code Time: 12.345 ms}, and from one second on also minutes and seconds,
   * {@code Time: 83012.345 ms (01:23.012)}.
   */
  static String timing(long nanos) {
    double millis = nanos / 1e6;
    String time = String.format(Locale.ROOT, "Time: %.3f ms", millis);
    if (millis < 1000) {
      return time;
    }
    double seconds = millis / 1000;
    long minutes = (long) Math.floor(seconds / 60);
    seconds -= 60.0 * minutes;
    if (minutes < 60) {
      return time + String.format(Locale.ROOT, " (%02d:%06.3f)", minutes, seconds);
    }
    long hours = minutes / 60;
    minutes -= 60 * hours;
    if (hours < 24) {
      return time + String.format(Locale.ROOT, " (%02d:%02d:%06.3f)", hours, minutes, seconds);
    }
    long days = hours / 24;
    hours -= 24 * days;
    return time + String.format(Locale.ROOT, " (%d d %02d:%02d:%06.3f)", days, hours, minutes, seconds);
  }
}
