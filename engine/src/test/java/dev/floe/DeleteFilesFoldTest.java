package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a format-version-2 data file's position-delete files fold together as changes delete from it: a
 * large change's new file takes in the older ones no bigger than itself, as a binary counter's digits
 * carry (the k-th of equal changes leaves as many files as k has one bits), so a position is copied about
 * log2 of the changes' count times; small changes merge at up to four times their size, so a row-at-a-time
 * writer keeps one or two small files.
 */
class DeleteFilesFoldTest {
  @TempDir
  Path dir;

  @Test
  void equalLargeChangesFoldAsABinaryCounter() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint PRIMARY KEY, v text) WITH (format_version = 2)").close();
      db.sql("INSERT INTO t SELECT i, 'x' FROM range(0, 200000) AS r(i)").close();
      List<Integer> files = new ArrayList<>();
      List<Integer> expected = new ArrayList<>();
      for (int k = 1; k <= 12; k++) {
        db.sql("DELETE FROM t WHERE id >= " + (k - 1) * 12_000 + " AND id < " + k * 12_000).close();
        files.add(Integer.parseInt(Rows.of(db, "SELECT count(*) FROM \"t$files\" WHERE content = 1").get(0)));
        expected.add(Integer.bitCount(k));
        assertThat(Rows.of(db, "SELECT sum(record_count) FROM \"t$files\" WHERE content = 1"))
            .containsExactly(Integer.toString(k * 12_000));
      }
      assertThat(files).as("delete files after each change").isEqualTo(expected);
      assertThat(Rows.of(db, "SELECT count(*), min(id) FROM t")).containsExactly("56000|144000");
    }
  }

  @Test
  void rowAtATimeChangesKeepAFewFiles() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE s (id bigint PRIMARY KEY, v text) WITH (format_version = 2)").close();
      db.sql("INSERT INTO s SELECT i, 'x' FROM range(0, 1000) AS r(i)").close();
      for (int k = 0; k < 40; k++) {
        db.sql("DELETE FROM s WHERE id = " + k * 7).close();
        assertThat(Integer.parseInt(Rows.of(db, "SELECT count(*) FROM \"s$files\" WHERE content = 1").get(0)))
            .as("after %d one-row deletes", k + 1).isBetween(1, 3);
      }
      assertThat(Rows.of(db, "SELECT count(*) FROM s")).containsExactly("960");
    }
  }
}
