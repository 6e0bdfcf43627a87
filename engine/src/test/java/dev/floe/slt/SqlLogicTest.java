package dev.floe.slt;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.Session;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the SQL test corpus in {@code src/test/resources/sql}: one dynamic test per {@code .slt} file,
 * each in a fresh warehouse. Files are grouped in folders by feature ({@code ddl/}, {@code writes/},
 * {@code queries/}, {@code types/}, {@code catalog/}, {@code transactions/}), and each starts with a
 * comment naming what it covers (checked here). See {@link SltScript} for the format.
 *
 * <p>Every record of a file runs, even after a failure, and the test reports all failing records of
 * the file (a failed statement may cause later records to fail too: read the first failure first). A
 * statement still running after {@value #STATEMENT_TIMEOUT_SECONDS} seconds is cancelled and reported.
 * {@code -Dslt=name} runs only the files whose name contains {@code name} (comma-separated
 * alternatives allowed), e.g. {@code ./mvnw -q -B -pl engine test -Dtest=SqlLogicTest -Dslt=insert}.
 * {@code ${warehouse}} in a statement or an expected value stands for the file's warehouse directory.
 * {@code -Dslt.timing=true} prints each file's run time and every record slower than
 * {@code -Dslt.slow=<ms>} (200 by default) to standard error.
 */
class SqlLogicTest {
  static final int STATEMENT_TIMEOUT_SECONDS = 30;
  private static final boolean TIMING = Boolean.getBoolean("slt.timing");
  private static final long SLOW_MILLIS = Long.getLong("slt.slow", 200);
  private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "slt-watchdog");
    t.setDaemon(true);
    return t;
  });

  @TempDir
  Path temp;

  @TestFactory
  Stream<DynamicTest> corpus() throws IOException, URISyntaxException {
    java.net.URI corpus = SqlLogicTest.class.getResource("/sql").toURI();
    if (corpus.getScheme().equals("jar")) { // run from the engine's test jar (another module's run of it)
      try {
        java.nio.file.FileSystems.newFileSystem(corpus, java.util.Map.of());
      } catch (java.nio.file.FileSystemAlreadyExistsException e) {
        // opened by an earlier run in this JVM
      }
    }
    Path dir = Path.of(corpus);
    List<Path> files;
    try (Stream<Path> s = Files.walk(dir)) {
      files = s.filter(p -> p.toString().endsWith(".slt")).filter(SqlLogicTest::selected).filter(this::runs).sorted()
          .toList();
    }
    return files.stream().map(f -> DynamicTest.dynamicTest(dir.relativize(f).toString(), () -> run(f)));
  }

  /** Opens (or opens again, after a restart record) the database a file runs in. */
  Database open(Path warehouse) {
    return Floe.open(warehouse);
  }

  /** Whether this run takes {@code file} (every file, unless a run says why not). */
  boolean runs(Path file) {
    return true;
  }

  /** Where the tables of the database opened on {@code warehouse} are: {@code ${warehouse}} in a file. */
  Path tablesDirectory(Path warehouse) {
    return warehouse;
  }

  private static boolean selected(Path file) {
    String filter = System.getProperty("slt", "").strip();
    if (filter.isEmpty()) {
      return true;
    }
    String name = file.getFileName().toString();
    for (String part : filter.split(",")) {
      if (!part.isBlank() && name.contains(part.strip())) {
        return true;
      }
    }
    return false;
  }

  private void run(Path file) throws IOException {
    Path warehouse = temp.resolve(file.getParent().getFileName() + "-"
        + file.getFileName().toString().replace(".slt", ""));
    long fileStarted = System.nanoTime();
    if (!Files.readAllLines(file).stream().findFirst().orElse("").startsWith("# ")) {
      throw new AssertionError(file.getFileName() + " does not start with a comment naming what it covers");
    }
    SltScript script = SltScript.parse(file);
    Database db = open(warehouse);
    Session session = db.connect();
    List<String> failures = new ArrayList<>();
    try {
      for (SltScript.Record r : script.records()) {
        if (r.kind() == SltScript.Kind.RESTART) {
          session.close();
          db.close();
          db = open(warehouse);
          session = db.connect();
          continue;
        }
        Session running = session;
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(running::cancel, STATEMENT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        String failure;
        long started = System.nanoTime();
        try {
          failure = execute(session, r.withWarehouse(tablesDirectory(warehouse).toAbsolutePath().toString()));
        } catch (RuntimeException e) {
          failure = "unexpected " + e + where(e);
        } finally {
          watchdog.cancel(false);
        }
        long millis = (System.nanoTime() - started) / 1_000_000;
        if (TIMING && millis >= SLOW_MILLIS) {
          System.err.println("slt: " + file.getFileName() + ":" + r.line() + " took " + millis + " ms");
        }
        if (failure != null) {
          failures.add(file.getFileName() + ":" + r.line() + ": " + failure + "\n    " + r.sql().replace("\n", "\n    "));
        }
      }
    } finally {
      session.close();
      db.close();
    }
    if (TIMING) {
      System.err.println("slt: " + file.getFileName() + " " + (System.nanoTime() - fileStarted) / 1_000_000 + " ms");
    }
    if (!failures.isEmpty()) {
      throw new AssertionError(failures.size() + " failure(s):\n" + String.join("\n", failures));
    }
  }

  /** The innermost Floe frames of an unexpected exception, to say where it came from. */
  private static String where(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    StringBuilder b = new StringBuilder();
    int shown = 0;
    for (StackTraceElement frame : root.getStackTrace()) {
      if (frame.getClassName().startsWith("dev.floe.") && !frame.getClassName().startsWith("dev.floe.slt.")
          && shown++ < 6) {
        b.append("\n      at ").append(frame);
      }
    }
    return root == e ? b.toString() : " caused by " + root + b;
  }

  private static String execute(Session session, SltScript.Record r) {
    switch (r.kind()) {
      case STATEMENT_OK -> {
        try (Result res = session.sql(r.sql())) {
          if (res.hasRows()) {
            res.toList();
          }
          if (r.expectedCount() != null && res.rowCount() != r.expectedCount()) {
            return "expected row count " + r.expectedCount() + ", got " + res.rowCount() + " (" + res.commandTag()
                + ")";
          }
          return null;
        } catch (FloeException e) {
          return "expected success, got " + e + " (position " + e.position() + ")";
        }
      }
      case STATEMENT_ERROR, QUERY_ERROR -> {
        try (Result res = session.sql(r.sql())) {
          if (res.hasRows()) {
            res.toList();
          }
          return "expected error " + r.expectedState() + ", but it succeeded";
        } catch (FloeException e) {
          if (!e.sqlState().equals(r.expectedState())) {
            return "expected error " + r.expectedState() + ", got " + e;
          }
          String message = r.expectedMessage();
          if (message != null && message.matches("@\\d+( .*)?")) {
            int space = message.indexOf(' ');
            int position = Integer.parseInt(message.substring(1, space < 0 ? message.length() : space));
            if (e.position() != position) {
              return "expected error position " + position + ", got " + e.position() + ": " + e;
            }
            message = space < 0 ? null : message.substring(space + 1);
          }
          if (message != null && !e.getMessage().contains(message)) {
            return "expected message containing \"" + message + "\", got " + e;
          }
          return null;
        }
      }
      case QUERY -> {
        List<String> actual = new ArrayList<>();
        try (Result res = session.sql(r.sql())) {
          if (res.columns().size() != r.columnCount()) {
            return "expected " + r.columnCount() + " columns, got " + res.columns().size() + " " + res.columns();
          }
          for (Row row : res) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
              if (i > 0) {
                b.append('\t');
              }
              b.append(SltScript.format(row.get(i)));
            }
            actual.add(b.toString());
          }
        } catch (FloeException e) {
          return "expected rows, got " + e + " (position " + e.position() + ")";
        }
        List<String> expected = new ArrayList<>(r.expectedRows());
        if (r.rowsort()) {
          actual.sort(null);
          expected.sort(null);
        }
        if (!actual.equals(expected)) {
          return "rows differ\n  expected:\n    " + String.join("\n    ", expected) + "\n  actual:\n    "
              + String.join("\n    ", actual);
        }
        return null;
      }
      default -> throw new IllegalStateException(r.kind().toString());
    }
  }
}
