package dev.floe.cli;

import dev.floe.Column;
import dev.floe.Database;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.TableInfo;
import dev.floe.sql.SqlScript;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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

  Shell(Database db, StatementRunner runner, Environment env) {
    this.db = db;
    this.runner = runner;
    this.env = env;
    this.out = env.out();
    this.err = env.err();
  }

  /** Reads and runs input until {@code \q}, {@code quit} or end of input; returns the exit status. */
  int run() {
    try (Terminal terminal = openTerminal()) {
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
          input = reader.readLine(name + "=" + state + "> ");
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
          runStatements(terminal, input);
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

  private Terminal openTerminal() throws IOException {
    if (env.systemTerminal()) {
      return TerminalBuilder.builder().system(true).name("floe").encoding(StandardCharsets.UTF_8).build();
    }
    // Built directly: TerminalBuilder would wrap the streams in a pseudo-terminal where one is available.
    return new DumbTerminal("floe", Terminal.TYPE_DUMB, env.in(), out, StandardCharsets.UTF_8);
  }

  /** {@code $FLOE_HISTORY}, else {@code ~/.floe_history}, as psql keeps {@code ~/.psql_history}. */
  private Path historyFile() {
    return env.variable(HISTORY_VARIABLE).map(Path::of).orElseGet(() -> Path.of(
        env.variable("HOME").orElse(System.getProperty("user.home")), HISTORY_FILE));
  }

  /** Runs each statement of the input; an error is shown and the next statement still runs, as in psql. */
  private void runStatements(Terminal terminal, String input) {
    List<SqlScript.Part> parts;
    try {
      parts = SqlScript.split(input);
    } catch (FloeException e) {
      showError(e, input);
      return;
    }
    for (SqlScript.Part part : parts) {
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

  private void showError(FloeException e, String statement) {
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

  /**
   * Runs a script as psql runs {@code -c} and {@code -f}: its SQL statements, and backslash commands on lines
   * of their own between statements ({@code \d t}, {@code \timing on}); {@code -c '\d t'} is one. The first
   * error ends it.
   *
   * @return whether every statement and command succeeded ({@code \q} ends it successfully)
   */
  boolean runScript(String script) {
    scripted = true;
    int start = 0; // where the SQL not run yet starts
    int pos = 0;
    while (pos < script.length()) {
      int eol = script.indexOf('\n', pos);
      int end = eol < 0 ? script.length() : eol;
      String line = script.substring(pos, end).strip();
      if (line.startsWith("\\") && ShellParser.isComplete(script.substring(start, pos))) {
        if (!script.substring(start, pos).isBlank() && !runner.runScript(only(script, start, pos))) {
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
        start = end;
      }
      pos = end + 1;
    }
    return script.substring(start).isBlank() || runner.runScript(only(script, start, script.length()));
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

  /**
   * Runs a backslash command.
   *
   * @return false to leave the shell
   */
  private boolean backslashCommand(String line) {
    List<String> words = BackslashArguments.split(line);
    String command = words.get(0);
    List<String> args = words.subList(1, words.size());
    try {
      switch (command) {
        case "\\q" -> {
          return false;
        }
        case "\\?" -> help();
        case "\\conninfo" -> out.println("You are connected to warehouse \"" + db.warehouse() + "\" ("
            + (db.readOnly() ? "read-only" : "read-write") + ").");
        case "\\d" -> {
          if (args.isEmpty()) {
            listTables(null);
          } else {
            for (String table : args) {
              describe(table);
            }
          }
        }
        case "\\dt" -> listTables(args.isEmpty() ? null : args.get(0));
        case "\\dn" -> listSchemas();
        case "\\l" -> catalogList("List of databases", List.of("Name", "Owner", "Encoding", "Collate", "Ctype"),
            "SELECT datname, pg_get_userbyid(datdba), pg_encoding_to_char(encoding), datcollate, datctype "
                + "FROM pg_database ORDER BY 1", "Did not find any databases.");
        case "\\du" -> catalogList("List of roles", List.of("Role name", "Attributes"),
            "SELECT rolname, concat_ws(', ', CASE WHEN rolsuper THEN 'Superuser' END, CASE WHEN rolcreaterole THEN "
                + "'Create role' END, CASE WHEN rolcreatedb THEN 'Create DB' END, CASE WHEN NOT rolcanlogin THEN "
                + "'Cannot login' END) FROM pg_roles ORDER BY 1", "Did not find any roles.");
        case "\\di" -> catalogList("List of relations", List.of("Schema", "Name", "Type", "Owner", "Table"),
            "SELECT schemaname, indexname, 'index', 'floe', tablename FROM pg_indexes WHERE schemaname = "
                + dev.floe.sql.Lexer.quoteString(runner.session().currentSchema()) + " ORDER BY 2",
            "Did not find any relations.");
        case "\\dv" -> out.println("Did not find any relations."); // Floe keeps no views (docs/sql.md)
        case "\\timing" -> {
          runner.settings().timing(args.isEmpty() ? !runner.settings().timing() : onOff(args.get(0)));
          out.println("Timing is " + (runner.settings().timing() ? "on." : "off."));
        }
        case "\\pset" -> pset(args);
        case "\\i" -> {
          if (args.size() != 1) {
            failed = true;
            err.println("\\i: missing required argument: the file to run");
          } else {
            boolean outer = scripted;
            failed = !runScript(SqlCommand.read(args.get(0), env.in())) || failed;
            scripted = outer;
          }
        }
        default -> {
          failed = true;
          err.println("invalid command " + command);
          err.println("Try \\? for help.");
        }
      }
    } catch (FloeException e) {
      showError(e, "");
    } catch (IllegalArgumentException e) {
      failed = true;
      err.println(command + ": " + e.getMessage());
    }
    return true;
  }

  private void help() {
    String[][] lines = {
        {"General", null},
        {"\\q", "quit (also quit, exit, Ctrl-D)"},
        {"\\?", "show this help"},
        {"\\conninfo", "show the warehouse this shell works on"},
        {"Informational", null},
        {"\\d [NAME]", "describe a table: columns, partitioning, sort order, versions; no NAME lists tables"},
        {"\\dt [SCHEMA]", "list tables"},
        {"\\dn", "list schemas"},
        {"\\di", "list indexes"},
        {"\\dv", "list views (Floe keeps none)"},
        {"\\l", "list databases"},
        {"\\du", "list roles"},
        {"Input and output", null},
        {"\\i FILE", "run the statements of FILE"},
        {"\\timing [on|off]", "show how long each statement takes (now " + (runner.settings().timing() ? "on" : "off")
            + ")"},
        {"\\pset null [TEXT]", "show NULL as TEXT in tables (now \"" + runner.settings().nullDisplay() + "\")"},
        {"\\pset format FORMAT", "table, csv or json (now " + runner.settings().format() + ")"},
    };
    for (String[] l : lines) {
      if (l[1] == null) {
        out.println(l[0]);
      } else {
        out.println(String.format(Locale.ROOT, "  %-20s %s", l[0], l[1]));
      }
    }
    out.println();
    out.println("SQL statements end with a semicolon and may span several lines.");
    out.println("Ctrl-C cancels the running statement, or discards the input being typed.");
  }

  private void pset(List<String> args) {
    if (args.isEmpty()) {
      throw new IllegalArgumentException("expects null [TEXT] or format FORMAT");
    }
    switch (args.get(0)) {
      case "null" -> {
        runner.settings().nullDisplay(args.size() > 1 ? args.get(1) : "");
        out.println("Null display is \"" + runner.settings().nullDisplay() + "\".");
      }
      case "format" -> {
        if (args.size() < 2) {
          throw new IllegalArgumentException("expects a format: table, csv or json");
        }
        OutputFormat format;
        try {
          format = OutputFormat.valueOf(args.get(1).toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("allowed formats are table, csv, json");
        }
        runner.settings().format(format);
        out.println("Output format is " + format + ".");
      }
      default -> throw new IllegalArgumentException("unknown option: " + args.get(0));
    }
  }

  private static boolean onOff(String value) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "on", "true", "yes", "1" -> true;
      case "off", "false", "no", "0" -> false;
      default -> throw new IllegalArgumentException("unrecognized value \"" + value + "\": expected on or off");
    };
  }

  private void listTables(String schema) {
    String sql = schema == null ? "SHOW TABLES" : "SHOW TABLES FROM " + schema;
    String shown = schema == null ? runner.session().currentSchema() : schema;
    List<String[]> rows = new ArrayList<>();
    try (Result r = runner.session().sql(sql)) {
      for (Row row : r) {
        rows.add(new String[] {shown, row.getString(0)});
      }
    }
    if (rows.isEmpty()) {
      out.println("Did not find any tables.");
      return;
    }
    printList("List of tables", List.of("Schema", "Name"), rows);
  }

  private void listSchemas() {
    List<String[]> rows = new ArrayList<>();
    try (Result r = runner.session().sql("SHOW SCHEMAS")) {
      for (Row row : r) {
        rows.add(new String[] {row.getString(0)});
      }
    }
    printList("List of schemas", List.of("Name"), rows);
  }

  /** A psql listing of what {@code sql} returns, or {@code none} when it returns nothing. */
  private void catalogList(String title, List<String> headers, String sql, String none) {
    List<String[]> rows = new ArrayList<>();
    try (Result r = runner.session().sql(sql)) {
      for (Row row : r) {
        String[] cells = new String[headers.size()];
        for (int c = 0; c < cells.length; c++) {
          cells[c] = row.getString(c) == null ? "" : row.getString(c);
        }
        rows.add(cells);
      }
    }
    if (rows.isEmpty()) {
      out.println(none);
      return;
    }
    printList(title, headers, rows);
  }

  private void printList(String title, List<String> headers, List<String[]> rows) {
    AlignedTable table = new AlignedTable(headers, new boolean[headers.size()]);
    rows.forEach(table::fit);
    table.printTitle(out, title);
    table.printHeader(out);
    rows.forEach(r -> table.printRow(out, r));
    out.println(AlignedTable.footer(rows.size()));
    out.println();
  }

  /**
   * psql's {@code \d}: the columns with their collation, nullability and default, the primary key under
   * Indexes (from the catalogs psql reads), then the table's Iceberg layout and history below.
   */
  private void describe(String name) {
    TableInfo info = db.table(name);
    String relation = dev.floe.sql.Lexer.quoteString(dev.floe.sql.Lexer.quoteIdentifier(info.schema()) + "."
        + dev.floe.sql.Lexer.quoteIdentifier(info.name())) + "::regclass";
    java.util.Map<String, String> defaults = new java.util.HashMap<>();
    try (Result r = runner.session().sql("SELECT a.attname, pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d "
        + "JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.adrelid = " + relation)) {
      for (Row row : r) {
        defaults.put(row.getString(0), row.getString(1));
      }
    }
    List<String> indexes = new ArrayList<>();
    // psql's lines: the primary key first, then the other indexes by name
    try (Result r = runner.session().sql("SELECT i.relname, x.indisprimary, x.indisunique, pg_get_indexdef("
        + "x.indexrelid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = " + relation
        + " ORDER BY x.indisprimary DESC, i.relname")) {
      for (Row row : r) {
        String def = row.getString(3);
        String columns = def.substring(def.indexOf('('));
        String kind = Boolean.TRUE.equals(row.get(1)) ? "PRIMARY KEY, " : Boolean.TRUE.equals(row.get(2))
            ? "UNIQUE, " : "";
        indexes.add("    \"" + row.getString(0) + "\" " + kind + "btree " + columns);
      }
    }
    List<String[]> rows = new ArrayList<>();
    for (Column c : info.columns()) {
      rows.add(new String[] {c.name(), c.type().displayName(), "", c.nullable() ? "" : "not null",
          defaults.getOrDefault(c.name(), "")});
    }
    AlignedTable table = new AlignedTable(List.of("Column", "Type", "Collation", "Nullable", "Default"),
        new boolean[5]);
    rows.forEach(table::fit);
    table.printTitle(out, "Table \"" + info.schema() + "." + info.name() + "\"");
    table.printHeader(out);
    rows.forEach(r -> table.printRow(out, r));
    if (!indexes.isEmpty()) {
      out.println("Indexes:");
      indexes.forEach(out::println);
    }
    if (!info.partitioning().isEmpty()) {
      out.println("Partition key: " + String.join(", ", info.partitioning()));
    }
    if (!info.sortOrder().isEmpty()) {
      out.println("Sort order: " + String.join(", ", info.sortOrder()));
    }
    out.println("Version: " + info.currentVersion().map(String::valueOf).orElse("none (never written)") + " ("
        + info.snapshots().size() + (info.snapshots().size() == 1 ? " snapshot" : " snapshots") + ")");
    out.println("Format: Iceberg v" + info.formatVersion());
    out.println("Location: " + info.location());
    out.println();
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
