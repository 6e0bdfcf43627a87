package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code floe inspect}: a version's snapshot, changes, files and health; two versions' difference. */
class InspectCommandTest {
  @TempDir
  Path dir;

  @Test
  void showsAVersionItsChangesFilesAndHealth() {
    String wh = dir.resolve("wh").toString();
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE t (id int PRIMARY KEY, v text) WITH (format_version = 3);"
        + "INSERT INTO t SELECT i, 'v' || i FROM range(0, 100) r(i); INSERT INTO t VALUES (1000, 'x');"
        + "DELETE FROM t WHERE id < 10").status()).isZero();

    Cli.Outcome current = Cli.run("inspect", "-w", wh, "t");
    assertThat(current.status()).as(current.err()).isZero();
    List<String> lines = current.out().lines().toList();
    assertThat(lines.get(0)).startsWith("table t, version 3 (snapshot ").contains(", delete, committed ");
    assertThat(lines.get(1)).startsWith("summary: {").contains("added-dvs=1");
    assertThat(lines.get(2)).startsWith("health: data files 2 (").contains("101 rows")
        .contains("delete files 1 (").contains("10 rows, ratio 0.099").contains("snapshots 3");
    assertThat(lines.get(3)).isEqualTo("since its parent: 1 file(s) added, 0 removed");
    assertThat(lines.get(4)).startsWith("  + ").endsWith(".puffin");
    assertThat(lines.get(5)).isEqualTo("files (3):");
    assertThat(current.out()).contains("  data  ").contains("100 rows").contains("\"lower_bound\":0,\"upper_bound\":99")
        .contains("  position-deletes  ");

    Cli.Outcome first = Cli.run("inspect", "-w", wh, "t", "--version", "1", "--json");
    assertThat(first.status()).as(first.err()).isZero();
    assertThat(first.out().strip()).startsWith("{\"table\":\"t\",\"version\":1,").endsWith("}")
        .contains("\"operation\":\"append\"").contains("\"parent_id\":null")
        .contains("\"health\":{\"data_files\":1,").contains("\"content\":\"data\"")
        .contains("\"added_since_parent\":[],\"removed_since_parent\":[]");

    Cli.Outcome diff = Cli.run("inspect", "-w", wh, "t", "--diff", "1", "3");
    assertThat(diff.status()).as(diff.err()).isZero();
    assertThat(diff.out().lines().toList().get(0)).isEqualTo("table t, version 1 -> 3: 2 file(s) added, 0 removed");
  }

  @Test
  void wrongTablesAndVersionsAreOneLineErrors() {
    String wh = dir.resolve("wh").toString();
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE t (id int); INSERT INTO t VALUES (1)").status()).isZero();
    Cli.Outcome none = Cli.run("inspect", "-w", wh, "nope");
    assertThat(none.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(none.err()).startsWith("ERROR 42P01: relation \"nope\" does not exist");
    Cli.Outcome version = Cli.run("inspect", "-w", wh, "t", "--version", "9");
    assertThat(version.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(version.err()).startsWith("ERROR 22023: table \"t\" has no version 9");
    Cli.Outcome both = Cli.run("inspect", "-w", wh, "t", "--version", "1", "--snapshot", "2");
    assertThat(both.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(both.err()).startsWith("ERROR 42601: give --version or --snapshot, not both");
    Cli.Outcome noWarehouse = Cli.run("inspect", "-w", dir.resolve("empty").toString(), "t");
    assertThat(noWarehouse.status()).isEqualTo(Main.EXIT_ERROR);
  }
}
