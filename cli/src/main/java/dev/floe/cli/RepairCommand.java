package dev.floe.cli;

import dev.floe.TableRepair;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code floe repair TABLE [--to previous|FILE]}: a table whose current metadata file is damaged, pointed
 * back to an older one. Without {@code --to} it only reports, read-only, beside a server.
 */
@Command(name = "repair", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = {"Report on a table's metadata files, or point the table back to an older one.",
        "Without --to this lists the table's metadata files (newest first, whether each reads) and what is "
            + "wrong with the current one; it runs beside a server."},
    footer = {"", "Exit status: 0 the current metadata is sound or the table was repointed, 1 it is damaged (and "
        + "was not repointed) or an error. See docs/recovery.md."})
final class RepairCommand implements Callable<Integer> {
  @ParentCommand
  Main main;

  @Mixin
  WarehouseOption warehouse;

  @Parameters(index = "0", paramLabel = "TABLE", description = "the table ([schema.]name)")
  String table;

  @Option(names = "--to", paramLabel = "previous|FILE", description = "Point the table to this metadata file of "
      + "its own: 'previous' for the newest readable one before the current. The table then reads as of that "
      + "version, and commits made after it are no longer part of it. Needs the warehouse to itself: stop the "
      + "server first.")
  String to;

  @Override
  public Integer call() {
    return warehouse.run(main.environment(), to == null, (db, env) -> {
      TableRepair r = db.repairTable(table, Optional.ofNullable(to));
      env.out().println(r.table() + ": current metadata " + r.current() + (r.problem().isEmpty() ? ": ok"
          : ": " + r.problem().get()));
      env.out().println("metadata files, newest first:");
      for (TableRepair.Candidate c : r.candidates()) {
        env.out().println("  " + (c.readable() ? "ok       " : "DAMAGED  ") + c.location() + "  " + c.description());
      }
      r.pointedTo().ifPresent(p -> env.out().println("the table now points to " + p));
      return r.problem().isPresent() && r.pointedTo().isEmpty() ? Main.EXIT_ERROR : Main.EXIT_OK;
    });
  }
}
