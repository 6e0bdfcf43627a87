package dev.floe.cli;

import dev.floe.Database;
import dev.floe.FloeException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * The shell's backslash commands ({@code \d}, {@code \pset}, {@code \i}, ...), in the shell and in scripts.
 * A command that fails reports on standard error and marks the shell's run as failed (a script ends there).
 */
final class BackslashCommands {
  private final Shell shell;
  private final Database db;
  private final StatementRunner runner;
  private final Environment env;
  private final PrintStream out;
  private final PrintStream err;
  private final Describe describe;

  BackslashCommands(Shell shell, Database db, StatementRunner runner, Environment env) {
    this.shell = shell;
    this.db = db;
    this.runner = runner;
    this.env = env;
    this.out = env.out();
    this.err = env.err();
    this.describe = new Describe(db, runner.session());
  }

  /**
   * Runs a backslash command line.
   *
   * @return false to leave the shell
   */
  boolean run(String typed) {
    String line = shell.variables().interpolateCommand(typed);
    List<String> words;
    try {
      words = BackslashArguments.split(line);
    } catch (IllegalArgumentException e) {
      shell.fail();
      err.println(line.split("\\s+", 2)[0] + ": " + e.getMessage());
      return true;
    }
    String command = words.get(0);
    List<String> args = words.subList(1, words.size());
    try {
      switch (command) {
        case "\\q" -> {
          return false;
        }
        case "\\?" -> runner.print(this::help);
        case "\\conninfo" -> out.println("You are connected to warehouse \"" + db.warehouse() + "\" ("
            + (db.readOnly() ? "read-only" : "read-write") + ").");
        case "\\d", "\\d+" -> runner.print(o -> {
          if (args.isEmpty()) {
            describe.listTables(o, null, command.endsWith("+"));
          } else {
            for (String table : args) {
              describe.describe(o, table, command.endsWith("+"));
            }
          }
        });
        case "\\dt", "\\dt+" -> runner.print(o -> describe.listTables(o, args.isEmpty() ? null : args.get(0),
            command.endsWith("+")));
        case "\\dn" -> runner.print(describe::listSchemas);
        case "\\l" -> runner.print(describe::listDatabases);
        case "\\du" -> runner.print(describe::listRoles);
        case "\\di" -> runner.print(describe::listIndexes);
        case "\\dv" -> runner.print(describe::listViews);
        case "\\x" -> {
          OutputSettings.Expanded now = runner.settings().expanded();
          expanded(args.isEmpty() ? (now == OutputSettings.Expanded.OFF ? "on" : "off") : args.get(0));
        }
        case "\\o", "\\out" -> {
          String rest = line.strip().substring(command.length()).strip();
          runner.output().redirect(args.isEmpty() ? null : rest.startsWith("|") ? rest : args.get(0));
        }
        case "\\echo" -> echo(args);
        case "\\h", "\\help" -> runner.print(o -> SqlHelp.print(o, args));
        case "\\e", "\\edit" -> shell.edit(args.isEmpty() ? null : args.get(0));
        case "\\copy" -> runner.copy(ClientCopy.parse(line.strip().substring(command.length())));
        case "\\set" -> set(args);
        case "\\unset" -> {
          if (args.size() != 1) {
            throw new IllegalArgumentException("missing required argument: the variable's name");
          }
          shell.variables().unset(args.get(0));
        }
        case "\\timing" -> {
          runner.settings().timing(args.isEmpty() ? !runner.settings().timing() : onOff(args.get(0)));
          out.println("Timing is " + (runner.settings().timing() ? "on." : "off."));
        }
        case "\\pset" -> pset(args);
        case "\\i" -> {
          if (args.size() != 1) {
            throw new IllegalArgumentException("missing required argument: the file to run");
          }
          shell.include(SqlCommand.read(args.get(0), env.in()));
        }
        default -> {
          shell.fail();
          err.println("invalid command " + command);
          err.println("Try \\? for help.");
        }
      }
    } catch (FloeException e) {
      shell.showError(e, "");
    } catch (IllegalArgumentException e) {
      shell.fail();
      err.println(command + ": " + e.getMessage());
    }
    return true;
  }

  private void help(PrintStream out) {
    OutputSettings o = runner.settings();
    String[][] lines = {
        {"General", null},
        {"\\q", "quit (also quit, exit, Ctrl-D)"},
        {"\\?", "show this help"},
        {"\\h [COMMAND]", "syntax of the SQL statements Floe runs"},
        {"\\conninfo", "show the warehouse this shell works on"},
        {"Query buffer", null},
        {"\\e [FILE]", "edit the last statement (or FILE) in $EDITOR, then run it"},
        {"Informational (+ adds detail)", null},
        {"\\d[+] [NAME]", "describe a table: columns, indexes, partitioning, sort order, versions"},
        {"\\dt[+] [SCHEMA]", "list tables (+: size, access method)"},
        {"\\dn", "list schemas"},
        {"\\di", "list indexes"},
        {"\\dv", "list views"},
        {"\\l", "list databases"},
        {"\\du", "list roles"},
        {"Input and output", null},
        {"\\copy ...", "COPY to or from a file here (FROM 'file' | STDIN, TO 'file' | STDOUT, PROGRAM 'cmd')"},
        {"\\echo [-n] TEXT", "write TEXT to standard output"},
        {"\\i FILE", "run the statements of FILE"},
        {"\\o [FILE | |COMMAND]", "send query results to FILE or COMMAND; without one, to the terminal"},
        {"Formatting", null},
        {"\\x [on|off|auto]", "expanded display: rows as records (now " + o.expanded().name().toLowerCase(Locale.ROOT)
            + ")"},
        {"\\pset format FORMAT", "table, csv or json (now " + o.format() + ")"},
        {"\\pset null [TEXT]", "show NULL as TEXT in tables (now \"" + o.nullDisplay() + "\")"},
        {"\\pset pager [on|off|always]", "page output longer than the screen (now "
            + o.pager().name().toLowerCase(Locale.ROOT) + ")"},
        {"\\pset expanded [on|off|auto]", "the same as \\x"},
        {"\\timing [on|off]", "show how long each statement takes (now " + (o.timing() ? "on" : "off") + ")"},
        {"Variables", null},
        {"\\set [NAME [VALUE]]", "set a variable, or list them; :NAME, :'NAME', :\"NAME\" in SQL use it"},
        {"\\unset NAME", "unset a variable"},
    };
    for (String[] l : lines) {
      if (l[1] == null) {
        out.println(l[0]);
      } else {
        out.println(String.format(Locale.ROOT, "  %-28s %s", l[0], l[1]));
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
      case "expanded", "x" -> {
        OutputSettings.Expanded now = runner.settings().expanded();
        expanded(args.size() > 1 ? args.get(1) : now == OutputSettings.Expanded.OFF ? "on" : "off");
      }
      case "pager" -> {
        String value = args.size() > 1 ? args.get(1).toLowerCase(Locale.ROOT)
            : runner.settings().pager() == OutputSettings.Pager.OFF ? "on" : "off";
        runner.settings().pager(value.equals("always") ? OutputSettings.Pager.ALWAYS
            : onOff(value) ? OutputSettings.Pager.ON : OutputSettings.Pager.OFF);
        out.println(switch (runner.settings().pager()) {
          case OFF -> "Pager usage is off.";
          case ON -> "Pager is used for long output.";
          case ALWAYS -> "Pager is always used.";
        });
      }
      default -> throw new IllegalArgumentException("unknown option: " + args.get(0));
    }
  }

  /** {@code \x on|off|auto}, with psql's words. */
  private void expanded(String value) {
    String v = value.toLowerCase(Locale.ROOT);
    runner.settings().expanded(v.equals("auto") ? OutputSettings.Expanded.AUTO
        : onOff(v) ? OutputSettings.Expanded.ON : OutputSettings.Expanded.OFF);
    out.println(switch (runner.settings().expanded()) {
      case OFF -> "Expanded display is off.";
      case ON -> "Expanded display is on.";
      case AUTO -> "Expanded display is used automatically.";
    });
  }

  /** {@code \set}: lists the variables; {@code \set NAME [VALUE...]} sets one to its values run together. */
  private void set(List<String> args) {
    if (args.isEmpty()) {
      shell.variables().all().forEach((name, value) -> out.println(name + " = '" + value.replace("'", "''") + "'"));
      return;
    }
    shell.variables().set(args.get(0), String.join("", args.subList(1, args.size())));
  }

  /** {@code \echo [-n] TEXT...}: the words, separated by one blank, on standard output. */
  private void echo(List<String> args) {
    boolean newline = args.isEmpty() || !args.get(0).equals("-n");
    String text = String.join(" ", newline ? args : args.subList(1, args.size()));
    if (newline) {
      out.println(text);
    } else {
      out.print(text);
    }
  }

  static boolean onOff(String value) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "on", "true", "yes", "1" -> true;
      case "off", "false", "no", "0" -> false;
      default -> throw new IllegalArgumentException("unrecognized value \"" + value + "\": expected on or off");
    };
  }
}
