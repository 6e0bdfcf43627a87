package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeException;
import dev.floe.Session;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Ctrl-C while a long result prints: printing stops at once, as psql's does, with 57014. */
class StatementRunnerTest {
  @TempDir
  Path dir;

  @Test
  void cancellingStopsTheRowsBeingPrinted() {
    try (Database db = Floe.open(dir); Session session = db.connect()) {
      ByteArrayOutputStream printed = new ByteArrayOutputStream();
      AtomicReference<StatementRunner> runner = new AtomicReference<>();
      // the terminal: after the first 64 kB shown, the user presses Ctrl-C (the shell calls cancel)
      OutputStream terminal = new OutputStream() {
        @Override
        public void write(int b) {
          printed.write(b);
          if (printed.size() == 64 * 1024) {
            runner.get().cancel();
          }
        }
      };
      runner.set(new StatementRunner(session, new PrintStream(terminal, true, StandardCharsets.UTF_8),
          new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
          new OutputSettings(OutputFormat.TABLE, "", false)));
      assertThatThrownBy(() -> runner.get().run("SELECT i, 'row ' || i AS label FROM range(0, 2000000) r(i)"))
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo("57014");
            assertThat(e.getMessage()).isEqualTo("canceling statement due to user request");
          });
      // 2,000,000 rows are ~40 MB of table: printing stopped right after the cancel
      assertThat(printed.size()).isLessThan(64 * 1024 + 200);

      // the next statement prints in full
      printed.reset();
      runner.get().run("SELECT 1 AS one");
      assertThat(printed.toString(StandardCharsets.UTF_8)).contains(" one \n-----\n   1\n(1 row)");
    }
  }

  @Test
  void aLongStatementShowsItsProgressUntilItsResultPrints() {
    try (Database db = Floe.open(dir); Session session = db.connect()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      StatementRunner runner = new StatementRunner(session, new PrintStream(out, true, StandardCharsets.UTF_8),
          new PrintStream(err, true, StandardCharsets.UTF_8), new OutputSettings(OutputFormat.TABLE, "", false));
      // shown from the start here (the shell waits 2 s), a few times a second
      runner.progress(new ProgressLine(new PrintStream(err, true, StandardCharsets.UTF_8), session::queryProgress, 0));
      runner.run("SELECT count(*) AS n FROM range(400000000) r(i) WHERE i % 7 = 3");
      String shown = err.toString(StandardCharsets.UTF_8);
      assertThat(shown).startsWith("\r").containsPattern("\\d+% ▕.*▏ \\d+\\.\\d s");
      // erased before the result: the last thing on the line is blanks, then back to its start
      assertThat(shown).matches("(?s).*\r +\r");
      assertThat(out.toString(StandardCharsets.UTF_8)).contains(" 57142857\n");
    }
  }

  @Test
  void progressLineText() {
    assertThat(ProgressLine.line(50, 3.14)).isEqualTo(" 50% ▕" + "█".repeat(15) + " ".repeat(15) + "▏ 3.1 s");
    assertThat(ProgressLine.line(-1, 2.0)).isEqualTo("running… 2.0 s");
  }
}
