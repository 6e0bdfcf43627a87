package dev.floe.cli;

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
}
