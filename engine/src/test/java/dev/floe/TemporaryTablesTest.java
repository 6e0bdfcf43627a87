package dev.floe;

import static dev.floe.testing.Statements.error;
import static dev.floe.testing.Statements.exec;
import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CREATE TEMP TABLE: a session's own table, which no other session sees and which goes with the session;
 * first in the search path as PostgreSQL's pg_temp; read beside Floe's tables, changed by INSERT, UPDATE,
 * DELETE and TRUNCATE with their expressions bound (and fenced) as any query's; ON COMMIT DROP / DELETE ROWS
 * at the end of a block.
 */
class TemporaryTablesTest {
  @TempDir
  Path dir;



  @Test
  void aTemporaryTableIsTheSessionsOwn() {
    try (Database db = Floe.open(FloeConfig.builder(dir).fenced(true).build()); Session s = db.connectClient();
        Session other = db.connectClient()) {
      exec(s, "CREATE TABLE t (id int PRIMARY KEY, v text)", "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
          "CREATE TEMP TABLE picked (id int PRIMARY KEY, n int DEFAULT 7, note text NOT NULL)",
          "INSERT INTO picked (id, note) SELECT id, v FROM t WHERE id < 3", "INSERT INTO picked VALUES (5, 1, 'e')",
          "UPDATE picked SET n = n + 1, note = upper(note) WHERE id IN (SELECT id FROM t)",
          "DELETE FROM picked p WHERE p.note = 'A'");
      assertThat(Rows.of(s, "SELECT t.v, p.n, p.note FROM t JOIN picked p USING (id)")).containsExactly("b|8|B");
      assertThat(Rows.of(s, "SELECT id FROM pg_temp.picked ORDER BY id")).containsExactly("2", "5");
      assertThat(error(other, "SELECT * FROM picked").sqlState()).isEqualTo("42P01");
      FloeException dup = error(s, "INSERT INTO picked VALUES (2, 1, 'x')");
      assertThat(dup.getMessage()).isEqualTo("duplicate key value violates unique constraint \"picked_pkey\"");
      assertThat(dup.detail()).contains("Key (id)=(2) already exists.");
      assertThat(error(s, "INSERT INTO picked (id) VALUES (9)").getMessage())
          .isEqualTo("null value in column \"note\" of relation \"picked\" violates not-null constraint");
      // the client fence holds in a temporary table's statements too
      assertThat(error(s, "DELETE FROM picked WHERE id IN (SELECT 1 FROM read_text('/etc/hostname'))").sqlState())
          .isEqualTo("42501");
      assertThat(error(s, "CREATE TEMP TABLE leak AS SELECT * FROM read_text('/etc/hostname')").sqlState())
          .isEqualTo("42501");

      // it comes first in the search path, as pg_temp does, and hides a table of its name
      exec(s, "CREATE TEMP TABLE t AS SELECT 42 AS shadow");
      assertThat(Rows.of(s, "SELECT * FROM t")).containsExactly("42");
      assertThat(Rows.of(s, "SELECT count(*) FROM public.t")).containsExactly("3");
      exec(s, "DROP TABLE t");
      assertThat(Rows.of(s, "SELECT count(*) FROM t")).containsExactly("3");
      assertThat(error(s, "CREATE TEMP TABLE x (a int) WITH (tail = true)").sqlState()).isEqualTo("0A000");
      assertThat(error(s, "CREATE TEMP TABLE public.x (a int)").sqlState()).isEqualTo("42P16");
      exec(s, "TRUNCATE picked");
      assertThat(Rows.of(s, "SELECT count(*) FROM picked")).containsExactly("0");
    }
    try (Database db = Floe.open(FloeConfig.builder(dir).fenced(true).build()); Session s = db.connectClient()) {
      assertThat(error(s, "SELECT * FROM picked").sqlState()).isEqualTo("42P01"); // gone with its session
    }
  }

  @Test
  void onCommitDropsOrEmptiesAtTheEndOfABlock() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.begin();
      exec(s, "CREATE TEMP TABLE scratch (a int) ON COMMIT DROP", "CREATE TEMP TABLE batch (a int) ON COMMIT DELETE ROWS",
          "CREATE TEMP TABLE kept (a int) ON COMMIT PRESERVE ROWS",
          "INSERT INTO scratch VALUES (1)", "INSERT INTO batch VALUES (1)", "INSERT INTO kept VALUES (1)");
      assertThat(Rows.of(s, "SELECT count(*) FROM scratch")).containsExactly("1");
      s.commit();
      assertThat(error(s, "SELECT * FROM scratch").sqlState()).isEqualTo("42P01");
      assertThat(Rows.of(s, "SELECT (SELECT count(*) FROM batch), (SELECT count(*) FROM kept)")).containsExactly("0|1");
      // outside a block, the statement is its transaction: ON COMMIT DROP leaves nothing
      exec(s, "CREATE TEMP TABLE gone (a int) ON COMMIT DROP");
      assertThat(error(s, "SELECT * FROM gone").sqlState()).isEqualTo("42P01");
    }
  }
}
