package dev.floe.cli;

import dev.floe.Verification;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;

/**
 * {@code floe verify}: reads every file of every table again and compares it with the checksum recorded
 * when Floe wrote it. Opens the warehouse read-only, so it runs beside a server.
 */
@Command(name = "verify", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = {"Check every file of every table against the checksum recorded when it was written.",
        "Reads data and delete files, manifests, manifest lists and metadata files of every snapshot kept; "
            + "runs beside a server (read-only)."},
    footer = {"", "Exit status: 0 every file is as written, 1 a file is damaged or missing (or an error). "
        + "See docs/recovery.md."})
final class VerifyCommand implements Callable<Integer> {
  @ParentCommand
  Main main;

  @Mixin
  WarehouseOption warehouse;

  @Mixin
  CatalogOption catalog;

  @Override
  public Integer call() {
    return warehouse.run(main.environment(), true, catalog, (db, env) -> {
      List<Verification> results = db.verify();
      int damaged = 0;
      for (Verification v : results) {
        env.out().println(v.table() + ": " + v.files() + " files, " + (v.files() - v.withoutChecksum())
            + " with a checksum" + (v.ok() ? ", ok" : ", " + v.damaged().size() + " damaged"));
        for (Verification.Damage d : v.damaged()) {
          env.out().println("  " + d.file() + ": " + d.problem());
        }
        damaged += v.damaged().size();
      }
      env.out().println(damaged == 0 ? "every file is as written" : damaged + " damaged file(s)");
      return damaged == 0 ? Main.EXIT_OK : Main.EXIT_ERROR;
    });
  }
}
