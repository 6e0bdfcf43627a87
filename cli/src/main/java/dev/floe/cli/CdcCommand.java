package dev.floe.cli;

import dev.floe.Changes;
import dev.floe.Database;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code floe cdc apply}: folds a change stream into a table with a primary key (docs/cdc.md). */
@Command(name = "cdc", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = "Fold change streams (Debezium events, Cassandra-style LWW cells) into tables (docs/cdc.md).",
    synopsisSubcommandLabel = "COMMAND", subcommands = {CdcCommand.Apply.class, CdcFollowCommand.class})
final class CdcCommand implements Callable<Integer> {
  @ParentCommand
  Main main;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(), "missing a command: apply or follow");
  }

  /**
   * {@code floe cdc apply --table T --format lww|debezium [--batch N] [--follow [--window-ms MS]]
   * [FILE|DIR|-]}: envelopes one JSON value per line, committed in batches, each recording where in the
   * input it ended ({@code <file>:<line>}); run again on the same input it resumes after the last batch
   * committed.
   */
  @Command(name = "apply", mixinStandardHelpOptions = true, versionProvider = Version.class,
      description = {"Apply a change stream to a table with a primary key, one JSON envelope per line, in batches.",
          "Each batch is one commit recording where in the input it ended; run again on the same input, it "
              + "resumes after the last committed batch. Applying envelopes again changes nothing.",
          "Needs the warehouse to itself (stop the server first)."},
      footer = {"", "Exit status: 0 everything was applied, 1 an error (the batches before it stay committed), 2 a "
          + "wrong command line. See docs/cdc.md."})
  static final class Apply implements Callable<Integer> {
    @ParentCommand
    CdcCommand cdc;

    @Mixin
    WarehouseOption warehouse;

    @Mixin
    CatalogOption catalog;

    @Mixin
    MaintainOption maintain;

    @Option(names = "--table", required = true, paramLabel = "TABLE", description = "the table to apply changes to")
    String table;

    @Option(names = "--format", required = true, paramLabel = "FORMAT", description = "lww or debezium")
    String format;

    /**
     * A batch's envelopes are held in memory while it is folded: it also commits once their text reaches
     * this share of the heap (the default 1M Debezium events of ~180 bytes need about a sixteenth of 4 GB).
     */
    static final int HEAP_SHARE = 16;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "1000000",
        description = "envelopes per commit (default: ${DEFAULT-VALUE}; fewer when their text reaches a sixteenth "
            + "of the JVM's heap)")
    int batch;

    @Option(names = "--follow", description = "keep reading: new lines of the files (new files of a directory), "
        + "or standard input until it ends, committing at least every --window-ms")
    boolean follow;

    @Option(names = "--window-ms", paramLabel = "MS", defaultValue = "1000",
        description = "with --follow, the longest an envelope waits for its commit (default: ${DEFAULT-VALUE})")
    long windowMs;

    @Parameters(index = "0", arity = "0..1", paramLabel = "INPUT",
        description = "a file, a directory (its files in name order) or - for standard input (the default)")
    String input;

    @Override
    public Integer call() {
      if (batch < 1) {
        throw new ParameterException(cdc.spec.commandLine(), "--batch must be at least 1");
      }
      if (windowMs < 1) {
        throw new ParameterException(cdc.spec.commandLine(), "--window-ms must be at least 1");
      }

      Changes.Format f;
      try {
        f = Changes.Format.valueOf(format.trim().toUpperCase(java.util.Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new ParameterException(cdc.spec.commandLine(), "--format is lww or debezium, not \"" + format + "\"");
      }
      Environment environment = cdc.main.environment();
      Path source = input == null || input.equals("-") ? null : Path.of(input).toAbsolutePath().normalize();
      if (source != null && !Files.exists(source)) {
        environment.err().println(ErrorReport.oneLine(new dev.floe.FloeException(SqlCommand.UNDEFINED_FILE,
            "could not open file \"" + input + "\": No such file or directory")));
        return Main.EXIT_ERROR;
      }
      return warehouse.run(environment, false, catalog, (db, env) -> {
        try (MaintainOption.Running m = maintain.start(db, env)) {
          return run(db, env, f, source);
        }
      });
    }

    private int run(Database db, Environment env, Changes.Format f, Path source) {
      Changes changes = db.changes(table, f);
      Optional<String> resume = source == null ? Optional.empty() : changes.position();
      CdcInput reader = new CdcInput(source, env.in(), resume, follow, windowMs);
      Thread thread = new Thread(reader, "floe-cdc-reader");
      thread.setDaemon(true);
      thread.start();
      PrintStream out = env.out();
      reader.notice().ifPresent(out::println);
      // SIGINT, SIGTERM: what was read is committed (standard input cannot be read again)
      java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();
      try (CleanStop cleanStop = new CleanStop("floe-cdc-apply-shutdown", out, () -> stopping.set(true))) {
        long total = apply(changes, reader, out, stopping);
        out.println("applied " + total + " envelope(s) to " + table);
        cleanStop.ended();
        return Main.EXIT_OK;
      }
    }

    /** Applies the reader's lines in batches until the input ends, or a stop is asked for; how many. */
    private long apply(Changes changes, CdcInput reader, PrintStream out,
        java.util.concurrent.atomic.AtomicBoolean stopping) {
      List<String> lines = new ArrayList<>();
      long chars = 0; // the text of the batch's envelopes
      long maxChars = Runtime.getRuntime().maxMemory() / HEAP_SHARE;
      List<CdcInput.Line> where = new ArrayList<>();
      long total = 0;
      long deadline = Long.MAX_VALUE;
      try {
        while (true) {
          if (stopping.get()) { // what was read so far, then no more
            List<CdcInput.Line> rest = new ArrayList<>();
            reader.queue.drainTo(rest);
            for (CdcInput.Line l : rest) {
              if (l.end()) {
                break;
              }
              lines.add(l.text());
              where.add(l);
            }
            for (int from = 0; from < lines.size(); from += batch) {
              int to = (int) Math.min(lines.size(), (long) from + batch);
              total += commit(changes, lines.subList(from, to), where.subList(from, to), out);
            }
            return total;
          }
          long wait = deadline == Long.MAX_VALUE ? windowMs : Math.max(0, deadline - System.nanoTime() / 1_000_000);
          CdcInput.Line line = reader.queue.poll(Math.min(wait, STOP_POLL_MS), TimeUnit.MILLISECONDS);
          if (line == null && stopping.get()) {
            continue;
          }
          boolean end = line != null && line.end();
          if (line != null && line.error() != null) {
            throw line.error();
          }
          if (line != null && !end) {
            if (lines.isEmpty()) {
              deadline = System.nanoTime() / 1_000_000 + windowMs;
            }
            lines.add(line.text());
            chars += line.text().length();
            where.add(line);
          }
          boolean due = !lines.isEmpty() && (lines.size() >= batch || chars >= maxChars || end
              || follow && System.nanoTime() / 1_000_000 >= deadline);
          if (due) {
            total += commit(changes, lines, where, out);
            lines.clear();
            chars = 0;
            where.clear();
            deadline = Long.MAX_VALUE;
          }
          if (end) {
            return total;
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new FloeException(SqlState.QUERY_CANCELED, "canceling apply: interrupted");
      } catch (IOException e) {
        throw new FloeException(SqlState.IO_ERROR, "could not read " + (input == null || input.equals("-") ? "standard input" : input)
            + ": " + e.getMessage(), e);
      }
    }

    /** How often a wait for input looks whether a stop was asked for. */
    private static final long STOP_POLL_MS = 100;

    private static long commit(Changes changes, List<String> lines, List<CdcInput.Line> where, PrintStream out) {
      CdcInput.Line last = where.get(where.size() - 1);
      Changes.Applied a;
      try {
        a = changes.apply(lines, last.position());
      } catch (FloeException e) {
        String context = e.context().orElse("");
        if (context.startsWith("change envelope ")) {
          int n = Integer.parseInt(context.substring("change envelope ".length()));
          throw new FloeException(e.sqlState(), e.getMessage() + " (" + where.get(n - 1).where() + ")",
              e.detail().orElse(null), e.hint().orElse(null), 0, e);
        }
        if (e.sqlState().startsWith("23")) { // a row the batch folded to, of a key its detail names
          throw new FloeException(e.sqlState(), e.getMessage() + " (the batch of " + where.get(0).where() + " to "
              + last.where() + ")", e.detail().orElse(null), e.hint().orElse(null), 0, e);
        }
        throw e;
      }
      out.println(a.envelopes() + " envelope(s) through " + last.where() + ": " + a.keysChanged() + " key(s) changed, "
          + a.rowsWritten() + " row(s) written, " + a.rowsDeleted() + " deleted" + (a.committed() ? "" : " (nothing new)"));
      out.flush();
      return a.envelopes();
    }
  }
}
