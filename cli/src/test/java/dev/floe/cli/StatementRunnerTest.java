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
}
