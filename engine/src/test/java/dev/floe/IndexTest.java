package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.Rows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CREATE INDEX gives an unsorted table its sort order on the index's columns (new files are written
 * clustered by them), lists the index in pg_indexes, and DROP INDEX takes both back; what an Iceberg table
 * cannot keep (expressions, partial, other access methods) is refused with 0A000.
 */
class IndexTest {
  @TempDir
  Path dir;

  private static FloeException error(Session s, String sql) {
    try {
      s.sql(sql).close();
    } catch (FloeException e) {
      return e;
    }
    throw new AssertionError("no error: " + sql);
  }

  @Test
  void anIndexSortsTheTableAndIsListedAsPostgreSqlLists() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      List<Notice> notices = new ArrayList<>();
      s.onNotice(notices::add);
      s.sql("CREATE TABLE t (id int PRIMARY KEY, email text, ts timestamptz)").close();
      s.sql("CREATE INDEX ix_t_email ON t USING btree (email)").close();
      assertThat(db.table("t").sortOrder()).containsExactly("email ASC NULLS LAST");
      // a second index is listed; the table keeps the first one's order
      s.sql("CREATE INDEX ON t (ts DESC)").close();
      s.sql("CREATE UNIQUE INDEX t_id_key ON t (id)").close();
      assertThat(db.table("t").sortOrder()).containsExactly("email ASC NULLS LAST");
      assertThat(Rows.of(db, "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 't' ORDER BY 1"))
          .containsExactly("ix_t_email|CREATE INDEX ix_t_email ON public.t USING btree (email)",
              "t_id_key|CREATE UNIQUE INDEX t_id_key ON public.t USING btree (id)",
              "t_pkey|CREATE UNIQUE INDEX t_pkey ON public.t USING btree (id)",
              "t_ts_idx|CREATE INDEX t_ts_idx ON public.t USING btree (ts)");
      // rows are written in the index's order
      s.sql("INSERT INTO t VALUES (1, 'c', NULL), (2, 'a', NULL), (3, 'b', NULL)").close();
      assertThat(Rows.of(db, "SELECT sort_order_id FROM \"t$files\"")).containsExactly("1");

      s.sql("CREATE INDEX IF NOT EXISTS ix_t_email ON t (ts)").close();
      assertThat(notices).last().satisfies(n -> assertThat(n.message())
          .isEqualTo("relation \"ix_t_email\" already exists, skipping"));
      assertThat(error(s, "CREATE INDEX ix_t_email ON t (ts)").sqlState()).isEqualTo("42P07");
      assertThat(error(s, "CREATE INDEX t ON t (ts)").getMessage()).isEqualTo("relation \"t\" already exists");
      assertThat(error(s, "CREATE INDEX x ON t (nosuch)").getMessage()).isEqualTo("column \"nosuch\" does not exist");
      assertThat(error(s, "CREATE INDEX x ON nosuch (a)").sqlState()).isEqualTo("42P01");
      for (String refused : List.of("CREATE INDEX x ON t (lower(email))",
          "CREATE INDEX x ON t USING gin (email)", "CREATE INDEX x ON t (email) WHERE id > 1")) {
        assertThat(error(s, refused).sqlState()).as(refused).isEqualTo("0A000");
      }

      FloeException pkey = error(s, "DROP INDEX t_pkey");
      assertThat(pkey.sqlState()).isEqualTo("2BP01");
      s.sql("DROP INDEX ix_t_email").close();
      assertThat(db.table("t").sortOrder()).isEmpty(); // the order it gave the table goes with it
      s.sql("DROP INDEX t_ts_idx, t_id_key").close();
      s.sql("DROP INDEX IF EXISTS ix_t_email").close();
      assertThat(notices).last().satisfies(n -> assertThat(n.message())
          .isEqualTo("index \"ix_t_email\" does not exist, skipping"));
      assertThat(error(s, "DROP INDEX ix_t_email").getMessage()).isEqualTo("index \"ix_t_email\" does not exist");
      assertThat(Rows.of(db, "SELECT indexname FROM pg_indexes WHERE tablename = 't'")).containsExactly("t_pkey");

      // a table with its own sort order keeps it: the index is listed only
      s.sql("CREATE TABLE sorted (id int, v text) WITH (sorted_by = ARRAY['id'])").close();
      s.sql("CREATE INDEX ON sorted (v)").close();
      assertThat(db.table("sorted").sortOrder()).containsExactly("id ASC NULLS FIRST");
      s.sql("DROP INDEX sorted_v_idx").close();
      assertThat(db.table("sorted").sortOrder()).containsExactly("id ASC NULLS FIRST");
    }
  }
}
