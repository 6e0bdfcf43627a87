package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import dev.floe.testing.Statements;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rolling back a change stream's table (docs/cdc.md, "Rolling back"): the table and its stream's state go back
 * together, so the changes the rollback undid apply again when they come again, exactly once, on each path a
 * batch takes (folded in Java, in DuckDB scanning, in DuckDB with the index of keys).
 */
class ChangeRollbackTest {
  @TempDir
  Path dir;

  private static String event(String op, long id, String v, long lsn) {
    return "{\"op\": \"" + op + "\", " + (op.equals("d") ? "\"before\": {\"id\": " + id + "}, \"after\": null"
        : "\"before\": null, \"after\": {\"id\": " + id + ", \"v\": " + (v == null ? "null" : "\"" + v + "\"") + "}")
        + ", \"source\": {\"lsn\": " + lsn + "}}";
  }

  /** The table's current snapshot, as its metadata table lists it (the newest by version). */
  private static long current(Database db, String table) {
    return Long.parseLong(Rows.of(db, "SELECT snapshot_id FROM \"" + table + "$snapshots\" ORDER BY sequence_number "
        + "DESC LIMIT 1").get(0));
  }

  @Test
  void theTableAndItsStateGoBackTogetherOnEveryPath() {
    for (String path : List.of("java", "scan", "index")) {
      try {
        System.setProperty("floe.cdc.bulk-min-events", path.equals("java") ? "1000000000" : "1");
        System.setProperty("floe.cdc.index", path.equals("index") ? "always" : "never");
        rollBackAndApplyAgain(path);
      } finally {
        System.clearProperty("floe.cdc.bulk-min-events");
        System.clearProperty("floe.cdc.index");
      }
    }
  }

  private void rollBackAndApplyAgain(String path) {
    try (Database db = Floe.open(dir.resolve(path)); Session s = db.connect()) {
      s.sql("CREATE TABLE t (id bigint PRIMARY KEY, v text)").close();
      s.sql("INSERT INTO t SELECT i, 'pre' FROM range(0, 3000) AS r(i)").close();
      long loaded = current(db, "t");
      Changes c = db.changes("t", Changes.Format.DEBEZIUM);
      List<String> first = new ArrayList<>();
      List<String> second = new ArrayList<>();
      List<String> third = new ArrayList<>();
      for (int i = 0; i < 3000; i++) {
        first.add(event("u", i, "a" + i, 10_000 + i));
        second.add(i % 3 == 0 ? event("d", i, null, 20_000 + i) : event("u", i, "b" + i, 20_000 + i));
        third.add(event("c", 5000 + i, "c" + i, 30_000 + i));
      }
      assertThat(c.apply(first).committed()).isTrue();
      long afterFirst = current(db, "t");
      s.sql("UPDATE t SET v = 'stmt' WHERE id = 1").close();
      long statement = current(db, "t");
      assertThat(c.apply(second).committed()).isTrue();
      assertThat(c.apply(third).committed()).isTrue();
      List<String> all = Rows.of(s, "SELECT id, v FROM t ORDER BY id");
      assertThat(all).hasSize(2000 + 3000);

      // back to a statement's version after the first batch: the state goes back to the first batch
      s.sql("ALTER TABLE t EXECUTE rollback_to_snapshot(" + statement + ")").close();
      assertThat(Rows.of(s, "SELECT count(*), count(*) FILTER (WHERE v LIKE 'a%'), min(id), max(id) FROM t"))
          .as(path).containsExactly("3000|2999|0|2999");
      assertThat(Rows.of(s, "SELECT v FROM t WHERE id = 1")).containsExactly("stmt");
      assertThat(c.position()).as(path).contains("12999");
      // the undone batches apply again, once; the first changes nothing
      assertThat(c.apply(first).committed()).as(path).isFalse();
      assertThat(c.apply(third).committed()).as(path).isTrue();
      assertThat(c.apply(second).committed()).as(path).isTrue();
      assertThat(Rows.of(s, "SELECT id, v FROM t ORDER BY id")).as(path).isEqualTo(all);
      assertThat(c.apply(second).committed()).as(path).isFalse();

      // back to before the first batch: the rows loaded by INSERT, no position, every batch applies again
      s.sql("ALTER TABLE t EXECUTE rollback_to_snapshot(" + loaded + ")").close();
      assertThat(Rows.of(s, "SELECT count(*) FILTER (WHERE v = 'pre'), count(*) FROM t")).containsExactly("3000|3000");
      assertThat(c.position()).as(path).isEmpty();
      for (List<String> batch : List.of(third, first, second)) {
        assertThat(c.apply(batch).committed()).as(path).isTrue();
      }
      assertThat(Rows.of(s, "SELECT id, v FROM t ORDER BY id")).as(path).isEqualTo(all);

      // a version the current one does not descend from (undone above) is refused, as for any table
      FloeException e = Statements.error(s, "ALTER TABLE t EXECUTE rollback_to_snapshot(" + afterFirst + ")");
      assertThat(e.sqlState()).isEqualTo("22023");
    }
  }

  @Test
  void lwwCellsTheRollbackUndidComeBackInAnyOrder() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.sql("CREATE TABLE u (id bigint PRIMARY KEY, a int, b int)").close();
      Changes c = db.changes("u", Changes.Format.LWW);
      c.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 10, \"insert\": true, \"cells\": {\"a\": 1, \"b\": 1}}"), "p1");
      long first = current(db, "u");
      List<String> later = List.of(
          "{\"key\": {\"id\": 1}, \"ts\": 30, \"cells\": {\"a\": 3}}",
          "{\"key\": {\"id\": 1}, \"ts\": 20, \"cells\": {\"a\": 2, \"b\": 2}}",
          "{\"key\": {\"id\": 2}, \"ts\": 20, \"cells\": {\"a\": 9}}",
          "{\"key\": {\"id\": 2}, \"ts\": 25, \"delete\": true}");
      c.apply(later.subList(0, 2), "p2");
      c.apply(later.subList(2, 4), "p3");
      assertThat(Rows.of(s, "SELECT id, a, b FROM u ORDER BY id")).containsExactly("1|3|2");
      s.sql("ALTER TABLE u EXECUTE rollback_to_snapshot(" + first + ")").close();
      assertThat(Rows.of(s, "SELECT id, a, b FROM u ORDER BY id")).containsExactly("1|1|1");
      assertThat(c.position()).contains("p1");
      List<String> reversed = new ArrayList<>(later);
      java.util.Collections.reverse(reversed);
      assertThat(c.apply(reversed, "p3").committed()).isTrue();
      assertThat(Rows.of(s, "SELECT id, a, b FROM u ORDER BY id")).containsExactly("1|3|2");
      // the deletion at 25 is in the state again: an older write of key 2 stays dead
      assertThat(c.apply(List.of("{\"key\": {\"id\": 2}, \"ts\": 24, \"cells\": {\"b\": 5}}")).committed()).isFalse();
      assertThat(Rows.of(s, "SELECT count(*) FROM u WHERE id = 2")).containsExactly("0");
    }
  }

  @Test
  void whatCannotBeUndoneIsRefusedAndChangesNothing() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.sql("CREATE TABLE t (id bigint PRIMARY KEY, v text)").close();
      // the state's old versions expired: the first batch's state is gone
      Changes c = db.changes("t", Changes.Format.DEBEZIUM);
      c.apply(List.of(event("c", 1, "a", 10)));
      long first = current(db, "t");
      c.apply(List.of(event("u", 1, "b", 20)));
      String state = db.table("t").properties().get(FloeProperties.CDC_STATE);
      String q = state.replace("floe_cdc.", "floe_cdc.\"") + "\"";
      s.sql("ALTER TABLE " + q + " EXECUTE expire_snapshots(retention_threshold => '0s')").close();
      long stateSnapshots = db.table(q).snapshots().size();
      FloeException e = Statements.error(s, "ALTER TABLE t EXECUTE rollback_to_snapshot(" + first + ")");
      assertThat(e.sqlState()).isEqualTo("55000");
      assertThat(e.getMessage()).isEqualTo("cannot roll back table \"t\" to snapshot " + first
          + ": its change stream's state no longer has the version of the batch that wrote it");
      assertThat(Rows.of(s, "SELECT id, v FROM t")).containsExactly("1|b");
      assertThat(db.table(q).snapshots()).hasSize((int) stateSnapshots);

      // a table fed from PostgreSQL: its slot would not send the undone batches again
      s.sql("CREATE TABLE f (id bigint PRIMARY KEY, v text)").close();
      Changes f = db.changes("f", Changes.Format.DEBEZIUM);
      f.apply(List.of(event("c", 1, "a", 10)), "lsn:0/10 {\"lsn\": 16}");
      long followed = current(db, "f");
      // undoing heartbeats alone is allowed: they carried no change
      assertThat(f.advance("lsn:0/FF {\"lsn\": 255}")).isTrue();
      s.sql("UPDATE f SET v = 'stmt'").close();
      s.sql("ALTER TABLE f EXECUTE rollback_to_snapshot(" + followed + ")").close();
      assertThat(f.position()).contains("lsn:0/10 {\"lsn\": 16}");
      f.apply(List.of(event("u", 1, "b", 20)), "lsn:0/20 {\"lsn\": 32}");
      e = Statements.error(s, "ALTER TABLE f EXECUTE rollback_to_snapshot(" + followed + ")");
      assertThat(e.sqlState()).isEqualTo("0A000");
      assertThat(e.getMessage()).isEqualTo("cannot roll back table \"f\": it follows PostgreSQL, whose replication "
          + "slot will not send again the changes the rollback would undo");
      assertThat(Rows.of(s, "SELECT id, v FROM f")).containsExactly("1|b");
      assertThat(f.position()).contains("lsn:0/20 {\"lsn\": 32}");
    }
  }
}
