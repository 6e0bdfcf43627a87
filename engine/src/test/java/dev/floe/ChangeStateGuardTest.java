package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A change stream's state (schema floe_cdc, docs/cdc.md) is read by anyone and changed by its stream alone:
 * what a statement could do to it by hand (delete its rows, alter it, drop it, unlink its table) would make
 * replays apply again or newer changes lose, silently. Dropping the stream's table drops its state.
 */
class ChangeStateGuardTest {
  @TempDir
  Path dir;

  private static final List<String> FIRST = List.of(
      "{\"op\":\"c\",\"after\":{\"id\":1,\"v\":\"a\"},\"source\":{\"lsn\":10}}",
      "{\"op\":\"c\",\"after\":{\"id\":2,\"v\":\"b\"},\"source\":{\"lsn\":20}}");
  private static final List<String> SECOND = List.of(
      "{\"op\":\"u\",\"after\":{\"id\":1,\"v\":\"a2\"},\"source\":{\"lsn\":30}}",
      "{\"op\":\"d\",\"before\":{\"id\":2},\"source\":{\"lsn\":40}}");

  private static FloeException refused(Session s, String sql) {
    return dev.floe.testing.Statements.error(s, sql);
  }

  @Test
  void aStreamsStateIsReadButNotChangedByHand() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.sql("CREATE TABLE t (id int PRIMARY KEY, v text)").close();
      Changes c = db.changes("t", Changes.Format.DEBEZIUM);
      c.apply(FIRST);
      c.apply(SECOND);
      String state = db.table("t").properties().get(FloeProperties.CDC_STATE);
      String q = state.replace("floe_cdc.", "floe_cdc.\"") + "\"";
      List<String> before = Rows.of(s, "SELECT * FROM " + q + " ORDER BY 1");
      assertThat(before).hasSize(2);
      for (String sql : List.of("DELETE FROM " + q, "INSERT INTO " + q + " DEFAULT VALUES",
          "UPDATE " + q + " SET deleted_at = NULL", "TRUNCATE " + q, "ALTER TABLE " + q + " ADD COLUMN z int",
          "ALTER TABLE " + q + " SET ('owner' = 'me')", "ALTER TABLE " + q + " RENAME TO mine",
          "ALTER TABLE " + q + " EXECUTE rollback_to_version(1)", "DROP TABLE " + q,
          "MERGE INTO " + q + " s USING (SELECT 1 AS k) n ON true WHEN MATCHED THEN DELETE",
          "CREATE INDEX ON " + q + " (deleted_at)")) {
        FloeException e = refused(s, sql);
        assertThat(e.sqlState()).as(sql).isEqualTo("42501");
        assertThat(e.getMessage()).as(sql).contains("is the state of a change stream");
        assertThat(e.hint().orElse("")).as(sql).contains("public.t");
      }
      // a schema path does not get around it, nor does COPY
      s.setCurrentSchema("floe_cdc");
      assertThat(refused(s, "DELETE FROM \"" + state.substring("floe_cdc.".length()) + "\"").sqlState())
          .isEqualTo("42501");
      s.setCurrentSchema("public");
      assertThat(catchFloe(() -> s.copyIn(q, List.of())).sqlState()).isEqualTo("42501");
      // nothing else goes into the schema, and it stays
      assertThat(refused(s, "CREATE TABLE floe_cdc.mine (a int)").sqlState()).isEqualTo("42501");
      assertThat(refused(s, "CREATE VIEW floe_cdc.v AS SELECT 1").sqlState()).isEqualTo("42501");
      assertThat(refused(s, "CREATE SEQUENCE floe_cdc.q").sqlState()).isEqualTo("42501");
      assertThat(refused(s, "CREATE SCHEMA floe_cdc").sqlState()).isEqualTo("42939");
      assertThat(refused(s, "DROP SCHEMA floe_cdc CASCADE").sqlState()).isEqualTo("42501");
      // nor is the state a stream's table
      assertThat(catchFloe(() -> db.changes(q, Changes.Format.DEBEZIUM)).sqlState()).isEqualTo("42501");
      // the stream's table keeps its link to the state (a rollback takes both back: ChangeRollbackTest)
      assertThat(refused(s, "ALTER TABLE t RESET ('floe.cdc.state')").sqlState()).isEqualTo("42501");
      assertThat(refused(s, "ALTER TABLE t SET ('floe.cdc.state' = 'floe_cdc.x')").sqlState()).isEqualTo("42501");
      // maintenance keeps every row: allowed
      s.sql("VACUUM FULL " + q).close();
      s.sql("ALTER TABLE " + q + " EXECUTE optimize").close();
      // the state is as the stream left it: a replay changes nothing
      assertThat(Rows.of(s, "SELECT * FROM " + q + " ORDER BY 1")).isEqualTo(before);
      assertThat(c.apply(FIRST).committed()).isFalse();
      assertThat(Rows.of(s, "SELECT id, v FROM t ORDER BY id")).containsExactly("1|a2");
      // the table's other changes are the user's, as before
      s.sql("UPDATE t SET v = 'mine' WHERE id = 1").close();
      s.sql("ALTER TABLE t SET ('owner' = 'me')").close();
    }
  }

  @Test
  void droppingTheTableDropsItsState() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.sql("CREATE TABLE t (id int PRIMARY KEY, v text)").close();
      db.changes("t", Changes.Format.DEBEZIUM).apply(FIRST);
      String state = db.table("t").properties().get(FloeProperties.CDC_STATE);
      Path stateDir = Path.of(db.table(state.replace("floe_cdc.", "floe_cdc.\"") + "\"").location());
      assertThat(Files.exists(stateDir.resolve("data"))).isTrue();
      s.sql("DROP TABLE t PURGE").close();
      assertThat(Rows.of(s, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'floe_cdc'"))
          .containsExactly("0");
      assertThat(Files.exists(stateDir.resolve("data"))).isFalse();
      // a table made again under the name has a stream of its own: the same changes apply to it
      s.sql("CREATE TABLE t (id int PRIMARY KEY, v text)").close();
      Changes again = db.changes("t", Changes.Format.DEBEZIUM);
      assertThat(again.position()).isEmpty();
      assertThat(again.apply(FIRST).committed()).isTrue();
      assertThat(Rows.of(s, "SELECT id, v FROM t ORDER BY id")).containsExactly("1|a", "2|b");
      // without PURGE the state's entry goes too, its files stay (as the table's do)
      String second = db.table("t").properties().get(FloeProperties.CDC_STATE);
      assertThat(second).isNotEqualTo(state);
      Path secondDir = Path.of(db.table(second.replace("floe_cdc.", "floe_cdc.\"") + "\"").location());
      s.sql("DROP TABLE t").close();
      assertThat(Rows.of(s, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'floe_cdc'"))
          .containsExactly("0");
      assertThat(Files.exists(secondDir.resolve("data"))).isTrue();
    }
  }

  private interface Call {
    void run() throws Exception;
  }

  private static FloeException catchFloe(Call call) {
    try {
      call.run();
    } catch (FloeException e) {
      return e;
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("no error");
  }
}
