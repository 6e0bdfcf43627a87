package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A table's size where PostgreSQL's tools look for it ({@code pg_total_relation_size}, {@code
 * pg_relation_size}, {@code pg_table_size}, {@code pg_class.relpages}, psql's {@code \dt+}): the bytes of
 * the data and delete files of its current snapshot, as its {@code $files} table lists them.
 */
class CatalogSizesTest {
  @TempDir
  Path dir;

  @Test
  void aTableIsAsLargeAsItsCurrentFiles() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.sql("CREATE TABLE t (id int, note text)").close();
      assertThat(Rows.of(s, "SELECT pg_total_relation_size('t')")).containsExactly("0");
      s.sql("INSERT INTO t SELECT i, repeat('x', 100) FROM range(20000) r(i)").close();
      s.sql("DELETE FROM t WHERE id < 10").close(); // a delete file counts too
      String files = Rows.of(s, "SELECT sum(file_size_in_bytes) FROM \"t$files\"").get(0);
      assertThat(Long.parseLong(files)).isGreaterThan(1000);
      assertThat(Rows.of(s, "SELECT pg_total_relation_size('t'), pg_relation_size('t'), pg_table_size('public.t'), "
          + "pg_relation_size('t', 'fsm'), pg_indexes_size('t')")).containsExactly(files + "|" + files + "|" + files
              + "|0|0");
      assertThat(Rows.of(s, "SELECT pg_total_relation_size(oid) = " + files + ", relpages = ceil(" + files
          + " / 8192) FROM pg_class WHERE relname = 't'")).containsExactly("true|true");
      assertThat(Rows.of(s, "SELECT pg_size_pretty(pg_total_relation_size('t')) LIKE '% kB'"))
          .containsExactly("true");
    }
  }
}
