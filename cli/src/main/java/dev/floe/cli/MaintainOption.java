package dev.floe.cli;

import dev.floe.Database;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code --maintain-ms}: the background maintainer (docs/maintenance.md) beside a command that writes for
 * a long time and needs the warehouse to itself ({@code floe cdc apply}, {@code floe cdc follow}), as
 * {@code floe serve} runs it: a stream that commits every second would otherwise leave a file and a
 * version per commit in its table and in its state table until someone stopped it to run
 * {@code floe maintain}.
 */
final class MaintainOption {
  static final String VARIABLE = "FLOE_MAINTAIN_MS";
  /** As {@code floe serve}'s. */
  static final int DEFAULT_MS = 30_000;

  @Spec(Spec.Target.MIXEE)
  CommandSpec spec;

  @Option(names = "--maintain-ms", paramLabel = "MS",
      description = "How often the background maintainer looks at every table (compaction, snapshot expiry, manifest "
          + "rewrite, orphan removal, by each table's policy: docs/maintenance.md); the tables written are looked "
          + "at every second. Default: $" + VARIABLE + " if set, else " + DEFAULT_MS + "; 0 turns it off (then "
          + "run floe maintain while the command is stopped).")
  Integer maintainMs;

  /** A started maintainer (or none); closing it stops it. */
  interface Running extends AutoCloseable {
    @Override
    void close();
  }

  /** Starts the maintainer on {@code db} unless the setting is 0. */
  Running start(Database db, Environment env) {
    int ms = maintainMs != null ? maintainMs : env.variable(VARIABLE).map(v -> parse(v.strip())).orElse(DEFAULT_MS);
    if (ms < 0) {
      throw new ParameterException(spec.commandLine(), "--maintain-ms must be 0 or more, was " + ms);
    }
    if (ms == 0) {
      return () -> { };
    }
    AutoCloseable m = db.startMaintainer(Duration.ofMillis(ms));
    return () -> {
      try {
        m.close();
      } catch (Exception e) {
        env.err().println("WARNING:  stopping the maintainer: " + e.getMessage());
      }
    };
  }

  private int parse(String v) {
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new ParameterException(spec.commandLine(), "$" + VARIABLE + " must be an integer, was \"" + v + "\"");
    }
  }
}
