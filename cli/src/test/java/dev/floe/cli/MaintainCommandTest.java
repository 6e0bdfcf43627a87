package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code floe maintain}: a dry run changes nothing and says what each step would do; a run does it. */
class MaintainCommandTest {
  @TempDir
  Path dir;

  @Test
  void dryRunThenRun() {
    String wh = dir.resolve("wh").toString();
    StringBuilder sql = new StringBuilder("CREATE TABLE t (id int) WITH ('history.expire.max-snapshot-age-ms' = '0');");
    for (int i = 0; i < 6; i++) {
      sql.append("INSERT INTO t VALUES (").append(i).append(");");
    }
    assertThat(Cli.run("sql", "-w", wh, "-c", sql.toString()).status()).isZero();

    Cli.Outcome dry = Cli.run("maintain", "-w", wh, "--dry-run");
    assertThat(dry.status()).as(dry.err()).isZero();
    List<String> lines = dry.out().lines().toList();
    assertThat(lines.get(0)).startsWith("public.t: compact (by hand): 6 file(s), ")
        .contains("; dry run: would rewrite 6 file(s) in 1 commit(s) (");
    assertThat(lines.get(1)).startsWith("public.t: expire (by hand): 5 snapshot(s), 0 file(s) deleted; dry run: "
        + "would expire 5 snapshot(s)");
    assertThat(lines.get(lines.size() - 1)).startsWith("dry run: 3 step(s): 6 file(s) to remove, 0 written, "
        + "5 snapshot(s) to expire");

    Cli.Outcome run = Cli.run("maintain", "-w", wh, "t");
    assertThat(run.status()).as(run.err()).isZero();
    lines = run.out().lines().toList();
    assertThat(lines.get(0)).startsWith("public.t: compact (by hand): 6 file(s), ").contains(" -> 1 file(s), ")
        .contains("; done (");
    assertThat(lines.get(1)).startsWith("public.t: expire (by hand): 6 snapshot(s), ").contains("; done (");
    assertThat(Cli.run("sql", "-w", wh, "-c", "SELECT data_files, snapshots FROM \"t$health\"", "--format", "csv")
        .out()).contains("1,1");

    Cli.Outcome none = Cli.run("maintain", "-w", wh, "nope");
    assertThat(none.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(none.err()).startsWith("ERROR 42P01: relation \"nope\" does not exist");
  }
}
