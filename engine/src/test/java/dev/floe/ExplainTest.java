package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * EXPLAIN reads as PostgreSQL's: one {@code QUERY PLAN} column, a line a row, operators with their
 * estimated rows and inputs after {@code ->}; then how Floe reads each table (the files read of the
 * snapshot's, a point read by primary key). EXPLAIN ANALYZE adds actual rows and times, and never the
 * server's file paths.
 */
class ExplainTest {
  @TempDir
  Path dir;

  @Test
  void thePlanIsTextWithFloesReadsOfEachTable() {
    try (Database db = Floe.open(FloeConfig.builder(dir).fenced(true).build()); Session s = db.connectClient()) {
      s.sql("CREATE TABLE t (id int PRIMARY KEY, v text)").close();
      s.sql("INSERT INTO t SELECT i, 'x' FROM range(100000) r(i)").close();
      s.sql("INSERT INTO t SELECT i, 'y' FROM range(100000, 200000) r(i)").close();
      try (Result r = s.sql("EXPLAIN SELECT v, count(*) FROM t WHERE id > 150000 GROUP BY v")) {
        assertThat(r.columns()).extracting(Column::name).containsExactly("QUERY PLAN");
        assertThat(r.commandTag()).isEqualTo("EXPLAIN");
      }
      List<String> plan = Rows.of(s, "EXPLAIN SELECT v, count(*) FROM t WHERE id > 150000 GROUP BY v");
      assertThat(plan.get(0)).contains("Group By").contains("(rows=");
      assertThat(plan).anySatisfy(l -> assertThat(l).matches(" +->  .*"));
      assertThat(plan).anySatisfy(l -> assertThat(l).contains("Filters: ").contains("150000"));
      assertThat(plan).last().isEqualTo("Floe scan of public.t: 1 of 2 data files"); // bounds pruned one
      assertThat(plan).noneMatch(l -> l.contains("Projections") || l.contains("╭"));

      assertThat(Rows.of(s, "EXPLAIN SELECT * FROM t WHERE id = 7")).last()
          .isEqualTo("Floe point read of public.t by primary key, in Floe's reader: 1 of 2 data files");

      List<String> analyzed = Rows.of(s, "EXPLAIN ANALYZE SELECT count(*) FROM t");
      assertThat(analyzed.get(0)).contains("actual time=").contains("rows=1)");
      assertThat(String.join("\n", analyzed)).doesNotContain(dir.toString()).doesNotContain(".parquet");
    }
  }
}
