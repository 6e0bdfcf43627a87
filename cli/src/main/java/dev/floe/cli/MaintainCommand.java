package dev.floe.cli;

import dev.floe.MaintenanceRun;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code floe maintain [TABLE...] [--dry-run]}: the background maintainer's steps, now, by each table's
 * policy — compaction, expiry, manifest rewrite, orphan removal — one line per step as it ends. A dry run
 * opens the warehouse read-only (so it runs beside a server) and changes nothing.
 */
@Command(name = "maintain", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = {"Compact, expire, rewrite manifests and remove orphans now, by each table's policy.",
        "Needs the warehouse to itself (stop the server, or use VACUUM through it); --dry-run does not.",
        "See docs/maintenance.md."})
final class MaintainCommand implements Callable<Integer> {
  @ParentCommand
  Main main;

  @Mixin
  WarehouseOption warehouse;

  @Mixin
  CatalogOption catalog;

  @Parameters(paramLabel = "TABLE", arity = "0..*", description = "Tables (schema.table or table). Default: every table.")
  List<String> tables = new ArrayList<>();

  @Option(names = "--dry-run", description = "Say what each step would do; change nothing.")
  boolean dryRun;

  @Override
  public Integer call() {
    return warehouse.run(main.environment(), dryRun, catalog, (db, env) -> {
      PrintStream out = env.out();
      List<MaintenanceRun> runs = new ArrayList<>();
      db.maintain(tables, dryRun, run -> {
        runs.add(run);
        out.println(line(run));
        out.flush();
      });
      int failed = 0;
      long removed = 0;
      long added = 0;
      long expired = 0;
      for (MaintenanceRun r : runs) {
        failed += r.outcome().startsWith("failed") ? 1 : 0;
        removed += r.filesRemoved();
        added += r.filesAdded();
        expired += r.snapshotsExpired();
      }
      out.println((dryRun ? "dry run: " : "") + runs.size() + " step(s): " + removed + " file(s) "
          + (dryRun ? "to remove" : "removed") + ", " + added + " written, " + expired + " snapshot(s) "
          + (dryRun ? "to expire" : "expired") + (failed > 0 ? ", " + failed + " failed" : ""));
      return failed > 0 ? 1 : 0;
    });
  }

  static String line(MaintenanceRun r) {
    StringBuilder b = new StringBuilder(r.table()).append(": ").append(r.action()).append(" (").append(r.trigger())
        .append("): ");
    switch (r.action()) {
      case "compact" -> b.append(r.filesRemoved()).append(" file(s), ").append(bytes(r.bytesRemoved()))
          .append(" -> ").append(r.filesAdded()).append(" file(s), ").append(bytes(r.bytesAdded()));
      case "expire" -> b.append(r.snapshotsExpired()).append(" snapshot(s), ").append(r.filesRemoved())
          .append(" file(s) deleted");
      case "rewrite_manifests" -> b.append(r.filesRemoved()).append(" manifest(s) -> ").append(r.filesAdded());
      default -> b.append(r.filesRemoved()).append(" file(s), ").append(bytes(r.bytesRemoved()));
    }
    return b.append("; ").append(r.outcome()).append(" (").append(r.millis()).append(" ms)").toString();
  }

  private static String bytes(long n) {
    if (n < 1024) {
      return n + " B";
    }
    if (n < 1024 * 1024) {
      return String.format(Locale.ROOT, "%.1f kB", n / 1024.0);
    }
    return String.format(Locale.ROOT, "%.1f MB", n / 1048576.0);
  }
}
