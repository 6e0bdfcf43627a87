package dev.floe.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeException;
import dev.floe.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The writer lock across real processes: a second writer is refused, a reader works beside it. */
class SecondProcessTest {
  @TempDir
  Path dir;

  /** Entry point of the child process: open the warehouse as asked and report what happened. */
  public static void main(String[] args) {
    boolean readOnly = args[1].equals("read");
    try (Database db = readOnly ? Floe.openReadOnly(Path.of(args[0])) : Floe.open(Path.of(args[0]));
        Result r = db.sql("SELECT count(*) FROM t")) {
      System.out.println("OK " + r.toList().get(0).getLong(0));
    } catch (FloeException e) {
      System.out.println("ERROR " + e.sqlState() + " " + e.getMessage());
    }
  }

  private String child(String mode) throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), SecondProcessTest.class.getName(), dir.toString(), mode))
        .redirectErrorStream(true).start();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return out.lines().filter(l -> l.startsWith("OK") || l.startsWith("ERROR")).findFirst().orElse(out);
  }

  @Test
  void secondWriterProcessIsRefusedWhileReadersRead() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
      db.sql("INSERT INTO t VALUES (1), (2)").close();
      assertThat(child("write")).startsWith("ERROR 55006").contains("already open for writing");
      assertThat(child("read")).isEqualTo("OK 2");
    }
    assertThat(child("write")).isEqualTo("OK 2"); // the lock went away with the writer
  }
}
