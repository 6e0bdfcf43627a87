package dev.floe.cli;

import dev.floe.Changes;
import dev.floe.Database;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
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
      Reader reader = new Reader(source, env.in(), resume, follow, windowMs);
      Thread thread = new Thread(reader, "floe-cdc-reader");
      thread.setDaemon(true);
      thread.start();
      PrintStream out = env.out();
      reader.skipped().ifPresent(p -> out.println("resuming after " + p));
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
    private long apply(Changes changes, Reader reader, PrintStream out, java.util.concurrent.atomic.AtomicBoolean stopping) {
      List<String> lines = new ArrayList<>();
      long chars = 0; // the text of the batch's envelopes
      long maxChars = Runtime.getRuntime().maxMemory() / HEAP_SHARE;
      List<String> where = new ArrayList<>();
      long total = 0;
      long deadline = Long.MAX_VALUE;
      try {
        while (true) {
          if (stopping.get()) { // what was read so far, then no more
            List<Line> rest = new ArrayList<>();
            reader.queue.drainTo(rest);
            for (Line l : rest) {
              if (l.end) {
                break;
              }
              lines.add(l.text);
              where.add(l.position);
            }
            for (int from = 0; from < lines.size(); from += batch) {
              int to = (int) Math.min(lines.size(), (long) from + batch);
              total += commit(changes, lines.subList(from, to), where.subList(from, to), out);
            }
            return total;
          }
          long wait = deadline == Long.MAX_VALUE ? windowMs : Math.max(0, deadline - System.nanoTime() / 1_000_000);
          Line line = reader.queue.poll(Math.min(wait, STOP_POLL_MS), TimeUnit.MILLISECONDS);
          if (line == null && stopping.get()) {
            continue;
          }
          boolean end = line != null && line.end;
          if (line != null && line.error != null) {
            throw line.error;
          }
          if (line != null && !end) {
            if (lines.isEmpty()) {
              deadline = System.nanoTime() / 1_000_000 + windowMs;
            }
            lines.add(line.text);
            chars += line.text.length();
            where.add(line.position);
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

    private static long commit(Changes changes, List<String> lines, List<String> where, PrintStream out) {
      String last = where.get(where.size() - 1);
      Changes.Applied a;
      try {
        a = changes.apply(lines, last);
      } catch (FloeException e) {
        String context = e.context().orElse("");
        if (context.startsWith("change envelope ")) {
          int n = Integer.parseInt(context.substring("change envelope ".length()));
          throw new FloeException(e.sqlState(), e.getMessage() + " (" + where.get(n - 1) + ")",
              e.detail().orElse(null), e.hint().orElse(null), 0, e);
        }
        throw e;
      }
      out.println(a.envelopes() + " envelope(s) through " + last + ": " + a.keysChanged() + " key(s) changed, "
          + a.rowsWritten() + " row(s) written, " + a.rowsDeleted() + " deleted" + (a.committed() ? "" : " (nothing new)"));
      out.flush();
      return a.envelopes();
    }
  }

  /** A line of input, where it is ({@code <file>:<line>}), the end, or a read error. */
  private record Line(String text, String position, boolean end, IOException error) {}

  /**
   * Reads the input's lines into a queue, skipping what a committed batch already holds: the files before
   * the one the position names, and its lines up to the position's. With {@code follow}, waits for more.
   */
  private static final class Reader implements Runnable {
    final BlockingQueue<Line> queue = new ArrayBlockingQueue<>(100_000);
    private final Path source;
    private final InputStream stdin;
    private final boolean follow;
    private final long pollMs;
    private String resumeFile;
    private long resumeLine;

    Reader(Path source, InputStream stdin, Optional<String> resume, boolean follow, long pollMs) {
      this.source = source;
      this.stdin = stdin;
      this.follow = follow;
      this.pollMs = Math.max(10, Math.min(pollMs, 500));
      resume.ifPresent(p -> {
        int colon = p.lastIndexOf(':');
        if (colon > 0) {
          try {
            resumeLine = Long.parseLong(p.substring(colon + 1));
            resumeFile = p.substring(0, colon);
          } catch (NumberFormatException e) {
            // another source's position: read everything (applying it again changes nothing)
          }
        }
      });
    }

    /** The position resumed after, when the input holds it. */
    Optional<String> skipped() {
      return resumeFile != null && files().stream().anyMatch(f -> name(f).equals(resumeFile))
          ? Optional.of(resumeFile + ":" + resumeLine) : Optional.empty();
    }

    private List<Path> files() {
      if (source == null) {
        return List.of();
      }
      if (!Files.isDirectory(source)) {
        return List.of(source);
      }
      try (var s = Files.list(source)) {
        return s.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().startsWith("."))
            .sorted().toList();
      } catch (IOException e) {
        return List.of();
      }
    }

    private String name(Path file) {
      return Files.isDirectory(source) ? source.relativize(file).toString() : file.getFileName().toString();
    }

    @Override
    public void run() {
      try {
        if (source == null) {
          readStream(stdin, "-", 0);
        } else {
          readFiles();
        }
        queue.put(new Line(null, null, true, null));
      } catch (IOException e) {
        put(new Line(null, null, true, e));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private void put(Line l) {
      try {
        queue.put(l);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private void readStream(InputStream in, String name, long skip) throws IOException, InterruptedException {
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
      long n = 0;
      for (String s = r.readLine(); s != null; s = r.readLine()) {
        n++;
        if (n > skip && !s.isBlank()) {
          queue.put(new Line(s, name + ":" + n, false, null));
        }
      }
    }

    private void readFiles() throws IOException, InterruptedException {
      java.util.Set<String> done = new java.util.HashSet<>();
      boolean skipping = resumeFile != null && files().stream().anyMatch(f -> name(f).equals(resumeFile));
      while (true) {
        List<Path> files = files();
        boolean progressed = false;
        for (int i = 0; i < files.size(); i++) {
          Path f = files.get(i);
          String name = name(f);
          if (done.contains(name)) {
            continue;
          }
          long skip = 0;
          if (skipping) {
            if (!name.equals(resumeFile)) {
              done.add(name); // before the position: committed already
              continue;
            }
            skipping = false;
            skip = resumeLine;
          }
          boolean last = i == files.size() - 1;
          if (follow && last) {
            tail(f, name, skip); // returns only when a newer file appears
          } else {
            try (InputStream in = Files.newInputStream(f)) {
              readStream(in, name, skip);
            }
          }
          done.add(name);
          progressed = true;
        }
        if (!follow) {
          return;
        }
        if (!progressed) {
          Thread.sleep(pollMs);
        }
      }
    }

    /** Follows the last file: its lines as they are completed, until a file after it appears. */
    private void tail(Path f, String name, long skip) throws IOException, InterruptedException {
      try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "r")) {
        long n = 0;
        java.io.ByteArrayOutputStream pending = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[1 << 16];
        while (true) {
          int read = raf.read(buf);
          if (read > 0) {
            for (int k = 0; k < read; k++) {
              if (buf[k] == '\n') {
                n++;
                String s = pending.toString(StandardCharsets.UTF_8);
                pending.reset();
                if (n > skip && !s.isBlank()) {
                  queue.put(new Line(s, name + ":" + n, false, null));
                }
              } else {
                pending.write(buf[k]);
              }
            }
            continue;
          }
          List<Path> files = files();
          if (!files.isEmpty() && !files.get(files.size() - 1).equals(f)) {
            if (pending.size() > 0) { // a last line without its newline: the file is complete
              n++;
              if (n > skip) {
                queue.put(new Line(pending.toString(StandardCharsets.UTF_8), name + ":" + n, false, null));
              }
            }
            return;
          }
          Thread.sleep(pollMs);
        }
      }
    }
  }
}
