package dev.floe.cli;

import dev.floe.Floe;
import dev.floe.FloeException;
import dev.floe.RebuiltCatalog;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code floe catalog rebuild}: a new catalog.db from the tables' metadata files. */
@Command(name = "catalog", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = "Look after a warehouse's catalog database (catalog.db).",
    synopsisSubcommandLabel = "COMMAND", subcommands = {CatalogCommand.Rebuild.class})
final class CatalogCommand implements Callable<Integer> {
  @ParentCommand
  Main main;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(), "missing a command: rebuild");
  }

  @Command(name = "rebuild", mixinStandardHelpOptions = true, versionProvider = Version.class,
      description = {"Build a new catalog.db from the tables' metadata files, when catalog.db was lost.",
          "Every <schema>/<table>/metadata/ directory becomes a table, at the metadata file its version hint names. "
              + "The old catalog.db is kept aside. Serial counters and file checksums are not recovered; tables "
              + "located outside the warehouse must be registered again. Stop the server first."},
      footer = {"", "See docs/recovery.md."})
  static final class Rebuild implements Callable<Integer> {
    @ParentCommand
    CatalogCommand catalog;

    @Mixin
    WarehouseOption warehouse;

    @Override
    public Integer call() {
      Environment env = catalog.main.environment();
      Path directory = warehouse.resolve(env);
      try {
        RebuiltCatalog r = Floe.rebuildCatalog(directory);
        r.keptAside().ifPresent(p -> env.out().println("the old catalog.db is now " + p));
        for (String t : r.tables()) {
          env.out().println("registered " + t);
        }
        for (String s : r.skipped()) {
          env.out().println("skipped " + s);
        }
        env.out().println(r.tables().size() + " table(s) registered; serial counters restart (set them with setval)");
        env.out().flush();
        return Main.EXIT_OK;
      } catch (FloeException e) {
        env.out().flush();
        env.err().println(ErrorReport.oneLine(e));
        return Main.EXIT_ERROR;
      }
    }
  }
}
