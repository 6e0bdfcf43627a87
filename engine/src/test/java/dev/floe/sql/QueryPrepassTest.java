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
}
