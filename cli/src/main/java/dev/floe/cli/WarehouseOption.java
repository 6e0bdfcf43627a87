package dev.floe.cli;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The {@code --warehouse} option of every command that opens a warehouse. */
final class WarehouseOption {
  static final String VARIABLE = "FLOE_WAREHOUSE";
  static final String DEFAULT_DIRECTORY = "floe-data";

  @Option(names = {"-w", "--warehouse"}, paramLabel = "DIR",
      description = "Warehouse directory. Default: $" + VARIABLE + " if set, else " + DEFAULT_DIRECTORY
          + " in the current directory.")
  Path directory;

  /** The option if given, else {@code $FLOE_WAREHOUSE}, else {@code ./floe-data}; absolute. */
  Path resolve(Environment environment) {
    Path chosen = directory != null ? directory
        : environment.variable(VARIABLE).map(Path::of).orElse(Path.of(DEFAULT_DIRECTORY));
    return chosen.toAbsolutePath().normalize();
  }

  /** A maintenance command's work on an existing warehouse; its exit status. */
  interface Work {
    int run(Database db, Environment env);
  }

  /**
   * Opens the existing warehouse (read-only beside a server, or as its only writer) and runs {@code work}
   * on it; a Floe error is one line on standard error and exit status 1.
   */
  int run(Environment env, boolean readOnly, Work work) {
    return run(env, readOnly, null, work);
  }

  /** {@link #run(Environment, boolean, Work)} on the catalog {@code catalog} names (its own when null). */
  int run(Environment env, boolean readOnly, CatalogOption catalog, Work work) {
    Path dir = resolve(env);
    try {
      if (!Files.exists(dir.resolve("catalog.db"))) {
        throw new FloeException(SqlState.INVALID_CATALOG_NAME, "no warehouse in " + dir);
      }
      FloeConfig.Builder config = FloeConfig.builder(dir).readOnly(readOnly);
      if (catalog != null) {
        catalog.configure(env, name -> null, config);
      }
      try (Database db = Floe.open(config.build())) {
        int status = work.run(db, env);
        env.out().flush();
        return status;
      }
    } catch (FloeException e) {
      env.out().flush();
      env.err().println(ErrorReport.oneLine(e));
      return Main.EXIT_ERROR;
    }
  }
}
