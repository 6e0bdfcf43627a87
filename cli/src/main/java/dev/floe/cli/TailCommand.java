package dev.floe.cli;

import dev.floe.LogRepair;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code floe tail repair}: what to do about a table's durable tail when its log is damaged. */
@Command(name = "tail", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = "Look after the durable tail of a table (docs/tail.md).",
    synopsisSubcommandLabel = "COMMAND", subcommands = {TailCommand.Repair.class})
final class TailCommand implements Callable<Integer> {
  @ParentCommand
  Main main;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(), "missing a command: repair");
  }

  /**
   * {@code floe tail repair TABLE [--drop-from-damage]}. Without the flag it opens the warehouse
   * read-only (so it runs beside a server) and only reports; with it, it needs the warehouse to itself.
   */
  @Command(name = "repair", mixinStandardHelpOptions = true, versionProvider = Version.class,
      description = {"Report damage in the log of a table's durable tail, or drop its records from the damage on.",
          "A damaged log makes every statement on the table fail with XX001. Without --drop-from-damage this "
              + "only reports what is damaged and what dropping would drop; it runs beside a server."},
      footer = {"", "Exit status: 0 the log is sound or was repaired, 1 it is damaged (and was not repaired) or "
          + "an error, 2 a wrong command line. See docs/recovery.md."})
  static final class Repair implements Callable<Integer> {
    @ParentCommand
    TailCommand tail;

    @Mixin
    WarehouseOption warehouse;

    @Parameters(index = "0", paramLabel = "TABLE", description = "the table whose log to look at")
    String table;

    @Option(names = "--drop-from-damage", description = "Give up the damaged record and everything after it in "
        + "the log (the damaged files are kept aside as <name>.damaged-<time>); the log goes on past every offset "
        + "it ever acknowledged. Needs the warehouse to itself: stop the server first.")
    boolean drop;

    @Override
    public Integer call() {
      return warehouse.run(tail.main.environment(), !drop, (db, env) -> {
        LogRepair report = db.repairLog(table, drop);
        print(report, env.out());
        return report.damage().isPresent() && !report.repaired() ? Main.EXIT_ERROR : Main.EXIT_OK;
      });
    }

    private static void print(LogRepair r, PrintStream out) {
      String log = "the log of table \"" + r.table() + "\"";
      if (r.damage().isEmpty()) {
        out.println(log + " is sound; the next row gets offset " + r.nextOffset());
        return;
      }
      out.println(log + (r.repaired() ? " was" : " is") + " damaged: " + r.damage().get().message());
      String dropped = r.firstLostOffset() < 0 ? "no records"
          : r.droppedRecords() + " records and " + r.droppedBytes() + " bytes, from offset " + r.firstLostOffset()
              + " on (" + r.droppedRows() + " rows in the records that could be read)";
      if (!r.repaired()) {
        out.println("--drop-from-damage would drop " + dropped + "; the next row would get offset " + r.nextOffset());
        return;
      }
      out.println("dropped " + dropped);
      for (Path p : r.keptAside()) {
        out.println("kept aside: " + p);
      }
      out.println("the next row gets offset " + r.nextOffset()
          + (r.firstLostOffset() < 0 ? "" : "; no offset from " + r.firstLostOffset() + " up to it is handed out again"));
    }
  }
}
