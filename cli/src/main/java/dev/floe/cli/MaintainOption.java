package dev.floe.cli;

import dev.floe.Database;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * {@code --maintain-ms} of the commands that keep the warehouse to themselves for long ({@code floe cdc
 * follow}, {@code floe cdc apply --follow}): they run the background maintainer as {@code floe serve} does
 * (docs/maintenance.md), so that the tables they write keep their files few and their deletes merged. A
 * compaction gives way to their batches.
 */
final class MaintainOption {
  @Option(names = "--maintain-ms", paramLabel = "MS", defaultValue = "30000",
      description = "how often the background maintainer looks at the tables: compaction, snapshot expiry, "
          + "manifest rewrite (default: ${DEFAULT-VALUE}; 0: none, as for floe serve)")
  long maintainMs;

  /** Starts the maintainer, unless --maintain-ms is 0; the handle stops it. */
  AutoCloseable start(Database db) {
    return maintainMs > 0 ? db.startMaintainer(Duration.ofMillis(maintainMs)) : () -> { };
  }

  /** The option's error, if it has one. */
  String problem() {
    return maintainMs < 0 ? "--maintain-ms must be 0 (off) or positive" : null;
  }

  static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      // stopping anyway
    }
  }
}
