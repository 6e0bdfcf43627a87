package dev.floe.cli;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.Session;
import dev.floe.SqlState;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code floe demo}: loads the {@link DemoData} tables and shows what to try on them. */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = {
        "Load a generated demo dataset and print queries to try.",
        "'trips' holds taxi rides through 2024, partitioned by month and committed month by month; "
            + "'zones' the 265 taxi zones they start and end in. DuckDB generates the data in place: "
            + "nothing is downloaded, and the same --rows always gives the same rows."},
    footer = {"", "Refuses to touch existing trips or zones tables unless --force is given."})
final class DemoCommand implements Callable<Integer> {
  static final String DEFAULT_ROWS = "3000000";
  static final List<String> TABLES = List.of("trips", "zones");

  /** What the tour suggests, each with a comment saying what it shows; the tests run every one. */
  static final List<String[]> TOUR = List.of(
      new String[] {"trips and revenue per month",
          "SELECT date_trunc('month', pickup_at) AS month, count(*) AS trips, sum(total) AS revenue\n"
              + "FROM trips GROUP BY month ORDER BY month;"},
      new String[] {"where trips start: a join with the zones dimension",
          "SELECT z.borough, count(*) AS trips, round(avg(t.distance_miles), 1) AS avg_miles,\n"
              + "       round(avg(t.tip), 2) AS avg_tip\n"
              + "FROM trips t JOIN zones z ON z.zone_id = t.pickup_zone_id\n"
              + "GROUP BY z.borough ORDER BY trips DESC;"},
      new String[] {"the busiest routes",
          "SELECT p.zone_name AS pickup, d.zone_name AS dropoff, count(*) AS trips\n"
              + "FROM trips t JOIN zones p ON p.zone_id = t.pickup_zone_id\n"
              + "             JOIN zones d ON d.zone_id = t.dropoff_zone_id\n"
              + "GROUP BY 1, 2 ORDER BY trips DESC LIMIT 10;"},
      new String[] {"rush hours, with a window function",
          "SELECT extract(hour FROM pickup_at) AS hour, count(*) AS trips,\n"
              + "       round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS percent\n"
              + "FROM trips GROUP BY hour ORDER BY hour;"},
      new String[] {"time travel: the table as of its first commit",
          "SELECT count(*) AS trips, min(pickup_at), max(pickup_at) FROM trips AS OF VERSION 1;"},
      new String[] {"the table's commits (Iceberg snapshots)",
          "SELECT committed_at, snapshot_id, operation, summary['added-records'] AS added\n"
              + "FROM \"trips$snapshots\" ORDER BY committed_at;"});

  private static final Pattern PLAIN_PATH = Pattern.compile("[A-Za-z0-9_./+:,@%=-]+");

  @ParentCommand
  Main main;

  @Spec
  CommandSpec spec;

  @Mixin
  WarehouseOption warehouse;

  @Option(names = "--rows", paramLabel = "N", defaultValue = DEFAULT_ROWS,
      description = "How many trips to generate. Default: ${DEFAULT-VALUE}.")
  long rows;

  @Option(names = "--force", description = "Drop existing trips and zones tables and create them anew.")
  boolean force;

  @Override
  public Integer call() {
    if (rows < 1) {
      throw new ParameterException(spec.commandLine(), "--rows must be at least 1, was " + rows);
    }
    Environment env = main.environment();
    Path directory = warehouse.resolve(env);
    try (Database db = Floe.open(directory); Session session = db.connect()) {
      List<String> existing = existingDemoTables(session);
      if (!existing.isEmpty()) {
        if (!force) {
          env.err().println("ERROR " + SqlState.DUPLICATE_TABLE + ": the warehouse " + directory
              + " already has the demo tables " + String.join(", ", existing)
              + " HINT: Run floe demo --force to drop and re-create them.");
          return Main.EXIT_ERROR;
        }
        for (String table : existing) {
          execute(session, "DROP TABLE " + table + " PURGE");
        }
      }
      List<DemoData.Batch> batches = DemoData.batches(rows);
      Progress progress = new Progress(env.err(), env.interactive(), rows);
      execute(session, DemoData.CREATE_ZONES);
      execute(session, DemoData.insertZones());
      execute(session, DemoData.CREATE_TRIPS);
      long loaded = 0;
      for (DemoData.Batch batch : batches) {
        execute(session, DemoData.insertTrips(batch, rows));
        loaded += batch.rows();
        progress.update(loaded, "Loading trips of " + batch.month());
      }
      progress.finish();
      printTour(env.out(), directory, batches, progress.elapsedSeconds());
      return Main.EXIT_OK;
    } catch (FloeException e) {
      env.err().println(ErrorReport.oneLine(e));
      return Main.EXIT_ERROR;
    }
  }

  private static List<String> existingDemoTables(Session session) {
    List<String> existing = new ArrayList<>();
    try (Result r = session.sql("SHOW TABLES")) {
      for (Row row : r) {
        if (TABLES.contains(row.getString(0))) {
          existing.add(row.getString(0));
        }
      }
    }
    return existing;
  }

  private static void execute(Session session, String sql) {
    session.sql(sql).close();
  }

  private void printTour(PrintStream out, Path directory, List<DemoData.Batch> batches, double seconds) {
    DemoData.Batch first = batches.get(0);
    out.println(String.format(Locale.ROOT, "Loaded %,d trips and %d zones into %s in %.1f s (%,.0f rows/s).",
        rows, DemoData.ZONES, directory, seconds, rows / Math.max(seconds, 1e-9)));
    out.println("trips is partitioned by month(pickup_at), sorted by pickup_at, and has " + batches.size()
        + (batches.size() == 1 ? " version" : " versions") + ", one per commit; version 1 holds "
        + String.format(Locale.ROOT, "%,d", first.rows()) + " trips of " + first.month() + ".");
    out.println();
    out.println("Open the shell on it:");
    out.println();
    out.println("  " + launcher() + " sql --warehouse " + shellQuoted(directory.toString()));
    out.println();
    out.println("and try:");
    for (String[] query : TOUR) {
      out.println();
      out.println("  -- " + query[0]);
      out.println("  " + query[1].replace("\n", "\n  "));
    }
    out.println();
    out.println("  -- columns, partitioning, sort order and version of a table");
    out.println("  \\d trips");
    out.flush();
  }

  /** How the user started floe: bin/floe passes its own path, so the tour's command works as printed. */
  private static String launcher() {
    return System.getProperty("floe.launcher", "floe");
  }

  static String shellQuoted(String s) {
    return PLAIN_PATH.matcher(s).matches() ? s : "'" + s.replace("'", "'\\''") + "'";
  }
}
