package dev.floe.cli;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.FloeException;
import dev.floe.Session;
import dev.floe.SqlState;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code floe sql}: the interactive shell, or the statements of {@code -c} and {@code -f}. */
@Command(name = "sql", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = {
        "Run SQL against a warehouse.",
        "With neither -c nor -f: an interactive shell when standard input is a terminal, "
            + "else the statements read from standard input."},
    footer = {"",
        "-c and -f may be repeated and mixed; they run in the order given, and the first error stops the run.",
        "Exit status: 0 success, 1 an error (one line on standard error: ERROR <SQLSTATE>: <message>), "
            + "2 a wrong command line."})
final class SqlCommand implements Callable<Integer> {
  /** PostgreSQL's undefined_file, for a script file that does not exist. */
  static final String UNDEFINED_FILE = "58P01";

  @ParentCommand
  Main main;

  @picocli.CommandLine.Spec
  picocli.CommandLine.Model.CommandSpec spec;

  @Mixin
  WarehouseOption warehouse;

  @Mixin
  CatalogOption catalog;

  /** One {@code -c} or {@code -f}, in command-line order. */
  static final class Input {
    @Option(names = {"-c", "--command"}, paramLabel = "SQL", required = true,
        description = "Run these ;-separated statements.")
    String command;

    @Option(names = {"-f", "--file"}, paramLabel = "FILE", required = true,
        description = "Run the statements of this file ('-' reads standard input).")
    String file;
  }

  @ArgGroup(exclusive = true, multiplicity = "0..*")
  List<Input> inputs = new ArrayList<>();

  @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
      description = "Output format: ${COMPLETION-CANDIDATES}. Default: ${DEFAULT-VALUE}.")
  OutputFormat format;

  @Option(names = "--null", paramLabel = "TEXT", defaultValue = "",
      description = "How the table format shows NULL. Default: empty, as in psql.")
  String nullDisplay;

  @Option(names = {"-v", "--set", "--variable"}, paramLabel = "NAME=VALUE",
      description = "Set a variable, as \\set does: :NAME in SQL is replaced by VALUE.")
  List<String> variables = new ArrayList<>();

  @Option(names = {"-x", "--expanded"}, description = "Show rows as records of name | value lines (psql's \\x).")
  boolean expanded;

  @Option(names = "--read-only", description = "Open the warehouse read-only, beside a process writing to it.")
  boolean readOnly;

  @Override
  public Integer call() {
    Environment env = main.environment();
    Path directory = warehouse.resolve(env);
    boolean created = !readOnly && !Files.exists(directory.resolve("catalog.db"));
    FloeConfig.Builder config = FloeConfig.builder(directory).readOnly(readOnly);
    catalog.configure(env, name -> null, config);
    // the shell's terminal before the engine opens: what the user types meanwhile is its first input
    Shell.EarlyTerminal terminal = inputs.isEmpty() && env.interactive() ? Shell.openTerminal(env) : null;
    try (Database db = Floe.open(config.build());
        Session session = db.connect()) {
      // \du lists the users the warehouse's server signs in, as the server's catalogs do
      dev.floe.server.auth.Users users = new dev.floe.server.auth.Users(directory);
      db.setRoles(() -> {
        try {
          return users.names();
        } catch (java.io.IOException e) {
          return java.util.List.of();
        }
      });
      session.onNotice(notice -> {
        env.out().flush();
        env.err().println(notice);
      });
      if (created) {
        env.err().println("NOTICE: created a new warehouse in " + directory);
      }
      boolean interactive = inputs.isEmpty() && env.interactive();
      OutputSettings settings = new OutputSettings(format, nullDisplay, interactive);
      if (expanded) {
        settings.expanded(OutputSettings.Expanded.ON);
      }
      QueryOutput output = new QueryOutput(env.out(), env, settings);
      StatementRunner runner = new StatementRunner(session, output, env.err(), settings);
      runner.processStdin(env.in());
      Shell shell = new Shell(db, runner, env);
      for (String v : variables) {
        int eq = v.indexOf('=');
        if (eq < 0) {
          throw new picocli.CommandLine.ParameterException(spec.commandLine(), "-v expects NAME=VALUE: " + v);
        }
        try {
          shell.variables().set(v.substring(0, eq), v.substring(eq + 1));
        } catch (IllegalArgumentException e) {
          throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
      }
      if (interactive) {
        Shell.EarlyTerminal t = terminal;
        terminal = null; // the shell closes it
        return shell.run(t);
      }
      // scripts run as psql runs them: SQL, and backslash commands on lines of their own
      Shell scripts = shell;
      if (inputs.isEmpty()) {
        return scripts.runScript(read("-", env.in())) ? Main.EXIT_OK : Main.EXIT_ERROR;
      }
      for (Input input : inputs) {
        String script = input.command != null ? input.command : read(input.file, env.in());
        if (!scripts.runScript(script)) {
          return Main.EXIT_ERROR;
        }
      }
      return Main.EXIT_OK;
    } catch (FloeException e) {
      env.out().flush();
      FloeException shown = e.sqlState().equals(SqlState.OBJECT_IN_USE) && !readOnly
          ? e.withHint("Query it beside the writer with floe sql --read-only, or stop the other Floe process.") : e;
      env.err().println(ErrorReport.oneLine(shown));
      return Main.EXIT_ERROR;
    } finally {
      if (terminal != null) {
        terminal.restore();
        terminal.close();
      }
    }
  }

  /** The text of a script file, or of standard input for {@code -}. */
  static String read(String file, InputStream stdin) {
    try {
      if (file.equals("-")) {
        return new String(stdin.readAllBytes(), StandardCharsets.UTF_8);
      }
      return Files.readString(Path.of(file), StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new FloeException(UNDEFINED_FILE, "could not open file \"" + file + "\": No such file");
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "could not read file \"" + file + "\": " + e.getMessage(), e);
    }
  }
}
