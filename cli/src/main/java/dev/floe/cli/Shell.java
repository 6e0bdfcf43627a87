package dev.floe.cli;

import dev.floe.Database;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.sql.SqlScript;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import org.jline.terminal.impl.DumbTerminal;

/**
 * The interactive shell of {@code floe sql}: psql's look and habits over a Floe session. Statements run
 * when a top-level semicolon ends the input; errors are shown with their line and a caret and the shell goes
 * on; Ctrl-C cancels the running statement, or discards the input being typed.
 */
final class Shell {
  static final String HISTORY_VARIABLE = "FLOE_HISTORY";
  static final String HISTORY_FILE = ".floe_history";

  private final Database db;
  private final StatementRunner runner;
  private final Environment env;
  private final PrintStream out;
  private final PrintStream err;
  private final BackslashCommands commands;
  private final ShellVariables variables = new ShellVariables();

  Shell(Database db, StatementRunner runner, Environment env) {
    this.db = db;
    this.runner = runner;
    this.env = env;
    this.out = env.out();
    this.err = env.err();
    this.commands = new BackslashCommands(this, db, runner, env);
  }

  /** Reads and runs input until {@code \q}, {@code quit} or end of input; returns the exit status. */
  int run() {
    return run(openTerminal(env));
  }

  /**
   * Runs the shell on a terminal opened early ({@link #openTerminal}, before the engine), whose typed-ahead keys
   * are the first input; closes it.
   */
  int run(EarlyTerminal early) {
    try (Terminal terminal = early.terminal()) {
      early.restore();
      this.terminal = terminal;
      String name = db.warehouse().getFileName() == null ? "floe" : db.warehouse().getFileName().toString();
      LineReader reader = LineReaderBuilder.builder()
          .terminal(terminal)
          .appName("floe")
          .parser(new ShellParser())
          .completer(new SqlCompleter(this::tableNames, this::columnNames))
          .option(LineReader.Option.COMPLETE_MATCHER_TYPO, false)
          .variable(LineReader.HISTORY_FILE, historyFile())
          .variable(LineReader.HISTORY_SIZE, 1000)
          // '!' is an operator in SQL (!=, !~~), not a history reference.
          .option(LineReader.Option.DISABLE_EVENT_EXPANSION, true)
          .build();
      endOfInputOnCtrlD(reader);
      runner.output().screen(terminal);
      runner.stdin(() -> copyData(terminal));
      if (env.systemTerminal()) {
        runner.progress(new ProgressLine(err, runner.session()::queryProgress, ProgressLine.DELAY_MILLIS));
      }
      out.println("floe " + Version.floe() + ", warehouse " + db.warehouse() + (db.readOnly() ? " (read-only)" : ""));
      out.println("Type \\? for help, \\q to quit.");
      out.println();
      out.flush();
      while (true) {
        String input;
        // psql's prompts: = first, - on a continuation line; * inside a transaction block, ! in a failed one
        String state = switch (runner.session().transactionState().status()) {
          case IN_BLOCK -> "*";
          case FAILED -> "!";
          default -> "";
        };
        reader.setVariable(LineReader.SECONDARY_PROMPT_PATTERN, name.replace("%", "%%") + "-" + state + "> ");
        try {
          String prefill = pending;
          pending = null;
          input = reader.readLine(name + "=" + state + "> ", null, (Character) null, prefill);
        } catch (UserInterruptException e) {
          continue;
        } catch (EndOfFileException e) {
          break;
        }
        String trimmed = input.strip();
        if (trimmed.isEmpty()) {
          continue;
        }
        if (trimmed.startsWith("\\")) {
          if (!backslashCommand(trimmed)) {
            break;
          }
        } else if (ShellParser.isShellWord(trimmed)) {
          if (!trimmed.equalsIgnoreCase("help")) {
            break;
          }
          out.println("You are using floe, the command-line interface to Floe.");
          out.println("Type:  \\? for help with shell commands");
          out.println("       \\q to quit");
          out.println("SQL statements end with a semicolon.");
        } else {
          lastQuery = input;
          runStatements(input);
        }
        out.flush();
      }
      reader.getHistory().save();
      return Main.EXIT_OK;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Ctrl-D as in psql, where each line is read by itself: on an empty line (a continuation line of a
   * statement too) it ends the input; elsewhere it deletes the character under the cursor. JLine's own
   * binding lists completions in a statement that spans lines.
   */
  private static void endOfInputOnCtrlD(LineReader reader) {
    String widget = "floe-ctrl-d";
    reader.getWidgets().put(widget, () -> {
      org.jline.reader.Buffer buffer = reader.getBuffer();
      String text = buffer.toString();
      int lineStart = text.lastIndexOf('\n', Math.max(0, buffer.cursor() - 1)) + 1;
      boolean emptyLine = buffer.cursor() == text.length() && text.substring(lineStart).isBlank();
      if (emptyLine) {
        throw new EndOfFileException();
      }
      reader.callWidget(LineReader.DELETE_CHAR);
      return true;
    });
    reader.getKeyMaps().get(LineReader.MAIN).bind(new org.jline.reader.Reference(widget),
        org.jline.keymap.KeyMap.ctrl('D'));
  }

  /**
   * The shell's terminal, opened as early as possible (before the engine, which takes a second to start): keys
   * typed meanwhile wait, unechoed, for the line reader instead of being echoed by the terminal above the banner.
   *
   * @param terminal the terminal
   * @param original its attributes before, given back before the first prompt
   */
  record EarlyTerminal(Terminal terminal, org.jline.terminal.Attributes original) {
    void restore() {
      if (original != null) {
        terminal.setAttributes(original);
      }
    }

    void close() {
      try {
        terminal.close();
      } catch (IOException e) {
        // the terminal is gone
      }
    }
  }

  static EarlyTerminal openTerminal(Environment env) {
    try {
      if (env.systemTerminal()) {
        Terminal terminal = TerminalBuilder.builder().system(true).name("floe").encoding(StandardCharsets.UTF_8)
            .build();
        return new EarlyTerminal(terminal, terminal.enterRawMode());
      }
      // Built directly: TerminalBuilder would wrap the streams in a pseudo-terminal where one is available.
      return new EarlyTerminal(new DumbTerminal("floe", Terminal.TYPE_DUMB, env.in(), env.out(),
          StandardCharsets.UTF_8), null);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code $FLOE_HISTORY}, else {@code ~/.floe_history}, as psql keeps {@code ~/.psql_history}. */
  private Path historyFile() {
    return env.variable(HISTORY_VARIABLE).map(Path::of).orElseGet(() -> Path.of(
        env.variable("HOME").orElse(System.getProperty("user.home")), HISTORY_FILE));
  }

  /** COPY FROM STDIN's data typed at the terminal, as psql asks for it: lines up to {@code \.} or Ctrl-D. */
  private java.io.InputStream copyData(Terminal terminal) {
    out.println("Enter data to be copied followed by a newline.");
    out.println("End with a backslash and a period on a line by itself, or an EOF signal.");
    out.flush();
    LineReader data = LineReaderBuilder.builder().terminal(terminal).appName("floe")
        .option(LineReader.Option.DISABLE_EVENT_EXPANSION, true).build();
    return ClientCopy.untilEndMarker(new java.util.Iterator<>() {
      private String next;
      private boolean done;

      @Override
      public boolean hasNext() {
        if (next == null && !done) {
          try {
            next = data.readLine(">> ");
          } catch (EndOfFileException e) {
            done = true;
          } catch (UserInterruptException e) {
            throw new FloeException(dev.floe.SqlState.QUERY_CANCELED, "canceling statement due to user request");
          }
        }
        return next != null;
      }

      @Override
      public String next() {
        String line = next;
        next = null;
        return line;
      }
    });
  }

  /** {@code \set}'s variables, interpolated into SQL and backslash commands. */
  ShellVariables variables() {
    return variables;
  }

  /** Runs each statement of the input; an error is shown and the next statement still runs, as in psql. */
  private void runStatements(String typed) {
    String input = variables.interpolate(typed);
    List<SqlScript.Part> parts;
    try {
      parts = SqlScript.split(input);
    } catch (FloeException e) {
      showError(e, input);
      return;
    }
    for (SqlScript.Part part : parts) {
      if (terminal == null) {
        try {
          runner.run(part.text());
        } catch (FloeException e) {
          showError(e, part.text());
        }
        continue;
      }
      Terminal.SignalHandler previous = terminal.handle(Terminal.Signal.INT, signal -> {
        err.println("Cancel request sent");
        runner.cancel();
      });
      try {
        runner.run(part.text());
      } catch (FloeException e) {
        showError(e, part.text());
      } finally {
        terminal.handle(Terminal.Signal.INT, previous);
      }
    }
  }

  void showError(FloeException e, String statement) {
    failed = true;
    out.flush();
    if (scripted) {
      err.println(ErrorReport.oneLine(e));
      return;
    }
    for (String line : ErrorReport.verbose(e, statement)) {
      err.println(line);
    }
  }

  /** Running a script ({@code -c}, {@code -f}): errors in one line each, the first one ends it. */
  private boolean scripted;
  /** A backslash command failed (in a script, that ends it). */
  private boolean failed;

  /** The statements last run from the prompt, for {@code \e}. */
  private String lastQuery;
  /** What the next prompt starts with: an edited statement that is not complete yet. */
  private String pending;
  /** The shell's terminal; null when running a script. */
  private Terminal terminal;

  /**
   * {@code \e [FILE]}: the last statement (or FILE) in {@code $FLOE_EDITOR}, {@code $EDITOR} or {@code $VISUAL}
   * (default vi); what the editor leaves runs if it ends with a semicolon, else it waits at the next prompt, as in
   * psql. Left unchanged, nothing runs.
   */
  void edit(String file) {
    String editor = env.variable("FLOE_EDITOR").or(() -> env.variable("EDITOR")).or(() -> env.variable("VISUAL"))
        .orElse("vi");
    java.nio.file.Path path = null;
    boolean temporary = file == null;
    try {
      String before;
      if (temporary) {
        path = java.nio.file.Files.createTempFile("floe-edit-", ".sql");
        before = lastQuery == null ? "" : lastQuery.endsWith("\n") ? lastQuery : lastQuery + "\n";
        java.nio.file.Files.writeString(path, before);
      } else {
        path = java.nio.file.Path.of(file);
        before = java.nio.file.Files.exists(path) ? java.nio.file.Files.readString(path) : "";
      }
      if (terminal != null) {
        QueryOutput.pause(terminal); // the editor reads the keyboard now
      }
      int status;
      try {
        status = new ProcessBuilder("/bin/sh", "-c", editor + " '" + path.toString().replace("'", "'\\''") + "'")
            .inheritIO().start().waitFor();
      } finally {
        if (terminal != null) {
          terminal.resume();
        }
      }
      if (status != 0) {
        throw new IllegalArgumentException("editor \"" + editor + "\" failed: exit status " + status);
      }
      String after = java.nio.file.Files.readString(path);
      if (after.equals(before) && temporary || after.isBlank()) {
        return;
      }
      String statements = after.stripTrailing();
      if (ShellParser.isComplete(statements)) {
        lastQuery = statements;
        if (terminal != null) {
          out.println(statements); // what runs, as it would have been typed
        }
        runStatements(statements);
      } else if (terminal != null) {
        pending = statements;
      }
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("could not edit \"" + (path == null ? "" : path) + "\": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (temporary && path != null) {
        try {
          java.nio.file.Files.deleteIfExists(path);
        } catch (java.io.IOException e) {
          // a temporary file left behind
        }
      }
    }
  }

  /**
   * Runs a script as psql runs {@code -c} and {@code -f}: its SQL statements, and backslash commands on lines
   * of their own between statements ({@code \d t}, {@code \timing on}); {@code -c '\d t'} is one. The first
   * error ends it.
   *
   * @return whether every statement and command succeeded ({@code \q} ends it successfully)
   */
  boolean runScript(String script) {
    scripted = true;
    ScriptLines data = new ScriptLines(script);
    ClientCopy.Stdin outer = runner.stdin();
    runner.stdin(() -> ClientCopy.untilEndMarker(data)); // COPY FROM STDIN reads the lines after it, as psql's -f
    try {
      int start = 0; // where the SQL not run yet starts
      int pos = 0;
      while (pos < script.length()) {
        int eol = script.indexOf('\n', pos);
        int end = eol < 0 ? script.length() : eol;
        String line = script.substring(pos, end).strip();
        data.pos = end + 1;
        if (line.startsWith("\\") && ShellParser.isComplete(script.substring(start, pos))) {
          if (!script.substring(start, pos).isBlank()
              && !runner.runScript(variables.interpolate(only(script, start, pos)))) {
            return false;
          }
          failed = false;
          boolean goOn = backslashCommand(line);
          out.flush();
          if (failed) {
            return false;
          }
          if (!goOn) {
            return true;
          }
          start = data.pos > end + 1 ? data.pos : end;
        } else if (COPY_FROM_STDIN.matcher(line).find() && ShellParser.isComplete(script.substring(start, end))
            && endsWithCopyFromStdin(script.substring(start, end))) {
          if (!runner.runScript(variables.interpolate(only(script, start, end)))) {
            return false;
          }
          start = data.pos;
        }
        pos = Math.max(end + 1, data.pos);
      }
      return script.substring(Math.min(start, script.length())).isBlank()
          || runner.runScript(variables.interpolate(only(script, start, script.length())));
    } finally {
      runner.stdin(outer);
    }
  }

  private static final java.util.regex.Pattern COPY_FROM_STDIN = java.util.regex.Pattern.compile(
      "(?i)\\bstdin\\b");

  /** Whether the last statement of {@code sql} is a COPY FROM STDIN, whose data follows it in the script. */
  private static boolean endsWithCopyFromStdin(String sql) {
    try {
      List<SqlScript.Part> parts = SqlScript.split(sql);
      if (parts.isEmpty()) {
        return false;
      }
      dev.floe.Copy copy = dev.floe.Copy.parse(parts.get(parts.size() - 1).text());
      return copy != null && copy.in();
    } catch (FloeException e) {
      return false;
    }
  }

  /** A script's lines from a position on: the data of a COPY FROM STDIN in it. */
  private static final class ScriptLines implements java.util.Iterator<String> {
    private final String script;
    int pos;

    ScriptLines(String script) {
      this.script = script;
    }

    @Override
    public boolean hasNext() {
      return pos < script.length();
    }

    @Override
    public String next() {
      int eol = script.indexOf('\n', pos);
      int end = eol < 0 ? script.length() : eol;
      String line = script.substring(pos, end);
      pos = end + 1;
      return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
    }
  }

  /**
   * The script with everything outside {@code [from, to)} blanked, line breaks kept: errors in that part
   * report the line and column of the whole script.
   */
  private static String only(String script, int from, int to) {
    StringBuilder b = new StringBuilder(script.length());
    for (int i = 0; i < script.length(); i++) {
      char c = script.charAt(i);
      b.append(i >= from && i < to || c == '\n' ? c : ' ');
    }
    return b.toString();
  }

  /** Marks the run as failed: in a script, the command that failed ends it. */
  void fail() {
    failed = true;
  }

  /** Runs the statements and commands of an included file ({@code \i}) as a script. */
  void include(String script) {
    boolean outer = scripted;
    failed = !runScript(script) || failed;
    scripted = outer;
  }

  private boolean backslashCommand(String line) {
    return commands.run(line);
  }

  private List<String> columnNames() {
    List<String> names = new ArrayList<>();
    // a session of its own, as for table names: a lookup never touches the user's transaction block
    try (Result r = db.sql("SELECT DISTINCT column_name FROM information_schema.columns "
        + "WHERE table_schema = " + dev.floe.sql.Lexer.quoteString(runner.session().currentSchema()) + " ORDER BY 1")) {
      for (Row row : r) {
        names.add(row.getString(0));
      }
    } catch (FloeException e) {
      // Completion offers what it can.
    }
    return names;
  }

  private List<String> tableNames() {
    List<String> names = new ArrayList<>();
    try (Result r = db.sql("SHOW TABLES")) {
      for (Row row : r) {
        names.add(row.getString(0));
      }
    } catch (FloeException e) {
      // Completion offers what it can; a failing lookup only means no table names.
    }
    return names;
  }
}
