package dev.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class QueryPrepassTest {
  @Test
  void rewritesEachFormIntoAMarkerAndRemembersTheTarget() {
    var r = QueryPrepass.rewrite(
        "SELECT * FROM s.t AS OF VERSION 3 x JOIN u FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01' ON true");
    assertThat(r.text()).isEqualTo("SELECT * FROM s.\"__floe_tt_0\" x JOIN \"__floe_tt_1\" ON true");
    assertThat(r.clauses()).extracting(TimeTravel::kind)
        .containsExactly(TimeTravel.Kind.VERSION, TimeTravel.Kind.TIMESTAMP);
    assertThat(r.clauses()).extracting(TimeTravel::valueSql).containsExactly("3", "TIMESTAMP '2024-01-01'");
    assertThat(r.tableNames()).containsExactly("t", "u");
    // positions in the rewritten text map back into the original
    int inRewritten = r.text().indexOf("JOIN");
    assertThat(r.edits().toOriginal(inRewritten)).isEqualTo(
        "SELECT * FROM s.t AS OF VERSION 3 x JOIN u FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01' ON true".indexOf("JOIN"));
  }

  @Test
  void snapshotIdsRefsAndExpressions() {
    var r = QueryPrepass.rewrite("SELECT 1 FROM t FOR VERSION AS OF 'tag' , u VERSION AS OF (SELECT 1)");
    assertThat(r.clauses()).extracting(TimeTravel::kind)
        .containsExactly(TimeTravel.Kind.SNAPSHOT, TimeTravel.Kind.SNAPSHOT);
    assertThat(r.clauses()).extracting(TimeTravel::valueSql).containsExactly("'tag'", "(SELECT 1)");
  }

  @Test
  void leavesOrdinaryTextAlone() {
    String sql = "SELECT a AS of_x, 'AS OF VERSION 3' FROM t -- t AS OF VERSION 3";
    assertThat(QueryPrepass.rewrite(sql).text()).isEqualTo(sql);
  }

  @Test
  void quotesNamesDuckDbReservesWherePostgresReadsANameOnly() {
    assertThat(QueryPrepass.rewrite("SELECT at, t.semi, -qualify FROM at WHERE at = 1 ORDER BY pivot DESC").text())
        .isEqualTo("SELECT \"at\", t.\"semi\", -\"qualify\" FROM \"at\" WHERE \"at\" = 1 ORDER BY \"pivot\" DESC");
    assertThat(QueryPrepass.rewrite("UPDATE t SET at = show + 1 RETURNING lambda").text())
        .isEqualTo("UPDATE t SET \"at\" = \"show\" + 1 RETURNING \"lambda\"");
    assertThat(QueryPrepass.rewrite("SELECT count(at), (show), (show, 1) FROM t").text())
        .isEqualTo("SELECT count(\"at\"), (\"show\"), (\"show\", 1) FROM t");
    assertThat(QueryPrepass.rewrite("SELECT 1 at, 2 AS pivot FROM t GROUP BY by ORDER BY by").text())
        .isEqualTo("SELECT 1 \"at\", 2 AS \"pivot\" FROM t GROUP BY \"by\" ORDER BY \"by\"");
  }

  @Test
  void leavesDuckDbSyntaxWithThoseWordsAlone() {
    for (String sql : new String[] {"SELECT ts AT TIME ZONE 'UTC' FROM t", "SELECT now() AT TIME ZONE 'UTC'",
        "SELECT * FROM t AT (VERSION => 1)", "SELECT * FROM a SEMI JOIN b ON a.x = b.x",
        "SELECT * FROM a ASOF JOIN b ON a.t >= b.t", "SELECT 'a' GLOB 'b'", "SELECT list_transform(l, lambda x: x + 1)",
        "SELECT * FROM (DESCRIBE t)", "SELECT x FROM t QUALIFY row_number() OVER () = 1", "SHOW search_path",
        "SELECT unpack(x) FROM t", "SELECT a FROM t ORDER BY a"}) {
      assertThat(QueryPrepass.rewrite(sql).text()).as(sql).isEqualTo(sql);
    }
  }
}
