package dev.floe.cli;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code floe} command. Each subcommand is a class listed in {@link Command#subcommands}; a new one
 * (such as a server) needs only its class and an entry there.
 */
@Command(name = "floe", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = "Floe: a database whose tables are Apache Iceberg tables.",
    synopsisSubcommandLabel = "COMMAND",
    subcommands = {ServeCommand.class, UserCommand.class, SqlCommand.class, TailCommand.class, VerifyCommand.class,
        RepairCommand.class, CatalogCommand.class, InspectCommand.class, MaintainCommand.class, CdcCommand.class,
        DemoCommand.class,
        HelpCommand.class},
    footer = {"", "Run 'floe help COMMAND' for the options of a command."})
public final class Main implements Callable<Integer> {
  /** Every statement and command succeeded. */
  public static final int EXIT_OK = 0;
  /** An SQL error or another failure, reported on one line on standard error. */
  public static final int EXIT_ERROR = 1;
  /** The command line itself was wrong: an unknown option, a missing argument. */
  public static final int EXIT_USAGE = 2;

  private final Environment environment;

  @Spec
  CommandSpec spec;

  Main(Environment environment) {
    this.environment = environment;
  }

  public static void main(String[] args) {
    Environment environment = Environment.system();
    int status = run(environment, args);
    environment.out().flush();
    environment.err().flush();
    System.exit(status);
  }

  /** Runs {@code floe args...} in this process and returns its exit status. */
  public static int run(Environment environment, String... args) {
    CommandLine commandLine = new CommandLine(new Main(environment));
    commandLine.setOut(new PrintWriter(environment.out(), true));
    commandLine.setErr(new PrintWriter(environment.err(), true));
    commandLine.setCaseInsensitiveEnumValuesAllowed(true);
    commandLine.setParameterExceptionHandler((e, arguments) -> {
      PrintWriter err = e.getCommandLine().getErr();
      err.println("floe: " + e.getMessage());
      err.println("Try '" + e.getCommandLine().getCommandSpec().qualifiedName() + " --help' for more information.");
      return EXIT_USAGE;
    });
    commandLine.setExecutionExceptionHandler((e, failed, parseResult) -> {
      FloeException error = e instanceof FloeException f ? f
          : new FloeException(SqlState.INTERNAL_ERROR, "internal error: " + e, e);
      environment.out().flush();
      failed.getErr().println(ErrorReport.oneLine(error));
      return EXIT_ERROR;
    });
    return commandLine.execute(args);
  }

  Environment environment() {
    return environment;
  }

  /** {@code floe} without a command. */
  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(), "missing a command: serve, user, sql, tail, demo or help");
  }
}
