package dev.floe.trino;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Trino writes through Floe's REST catalog; Floe, through its PostgreSQL port, reads what Trino wrote. */
class TrinoWritesFloeReadsTest {
  private TrinoFloe tf;

  @BeforeEach
  void start() {
    tf = TrinoFloe.get(); // the first test starts both servers; each test is skipped if no Java 24+ exists
  }

  @Test
  void trinoCreatesAndInsertsFloeReadsTheSameRowsAndJoins() throws Exception {
    tf.trinoSchema("shop");
    tf.trino("CREATE TABLE floe.shop.customers (id bigint, name varchar, region varchar)");
    tf.trino("CREATE TABLE floe.shop.orders (id bigint, customer_id bigint, amount decimal(10,2), placed date)");
    tf.trino("INSERT INTO floe.shop.customers VALUES (1, 'Ada', 'north'), (2, 'Bo', 'south'), (3, 'Cy', 'north'), "
        + "(4, 'Di', 'east')");
    tf.trino("INSERT INTO floe.shop.orders VALUES (10, 1, 12.50, DATE '2024-01-03'), (11, 1, 7.25, DATE '2024-02-01'), "
        + "(12, 2, 100.00, DATE '2024-01-15'), (13, 3, 0.99, DATE '2024-03-09'), (14, 3, 20.01, DATE '2024-03-10'), "
        + "(15, 9, 5.00, DATE '2024-04-01')");

    for (String t : List.of("customers", "orders")) {
      List<List<String>> trinoRows = tf.trino("SELECT * FROM floe.shop." + t + " ORDER BY id");
      assertThat(tf.floe("SELECT * FROM shop." + t + " ORDER BY id")).as(t).isEqualTo(trinoRows);
    }
    assertThat(tf.floe("SELECT * FROM shop.customers ORDER BY id")).containsExactly(
        List.of("long:1", "text:Ada", "text:north"), List.of("long:2", "text:Bo", "text:south"),
        List.of("long:3", "text:Cy", "text:north"), List.of("long:4", "text:Di", "text:east"));

    // the same join and aggregate on both engines, over the files Trino wrote
    String join = "SELECT c.region, count(*) AS n, sum(o.amount) AS total, max(o.placed) AS last "
        + "FROM %1$s.customers c JOIN %1$s.orders o ON o.customer_id = c.id GROUP BY c.region ORDER BY c.region";
    List<List<String>> expected = List.of(
        List.of("text:north", "long:4", "decimal:40.75", "date:2024-03-10"),
        List.of("text:south", "long:1", "decimal:100.00", "date:2024-01-15"));
    assertThat(tf.trino(join.formatted("floe.shop"))).isEqualTo(expected);
    assertThat(tf.floe(join.formatted("shop"))).isEqualTo(expected);
  }

  @Test
  void trinoUpdateDeleteAndMergeFloeReadsTheResult() throws Exception {
    tf.trinoSchema("stock");
    tf.trino("CREATE TABLE floe.stock.items (id bigint, item varchar, qty integer)");
    tf.trino("INSERT INTO floe.stock.items VALUES (1, 'apple', 3), (2, 'pear', 5), (3, 'fig', 7), (4, 'kiwi', 1), "
        + "(5, 'plum', 2)");
    tf.trino("UPDATE floe.stock.items SET qty = qty * 10 WHERE id IN (1, 2)");
    tf.trino("DELETE FROM floe.stock.items WHERE id = 3");
    assertThat(tf.floe("SELECT id, item, qty FROM stock.items ORDER BY id")).containsExactly(
        List.of("long:1", "text:apple", "int:30"), List.of("long:2", "text:pear", "int:50"),
        List.of("long:4", "text:kiwi", "int:1"), List.of("long:5", "text:plum", "int:2"));

    // one MERGE that deletes, updates and inserts
    assertThat(tf.trino("MERGE INTO floe.stock.items t USING (VALUES (2, 'pear', 0), (4, 'kiwi', 6), (6, 'lime', 9)) "
        + "AS s(id, item, qty) ON t.id = s.id WHEN MATCHED AND s.qty = 0 THEN DELETE "
        + "WHEN MATCHED THEN UPDATE SET qty = t.qty + s.qty WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.item, s.qty)"))
        .containsExactly(List.of("count:3"));
    List<List<String>> expected = List.of(
        List.of("long:1", "text:apple", "int:30"), List.of("long:4", "text:kiwi", "int:7"),
        List.of("long:5", "text:plum", "int:2"), List.of("long:6", "text:lime", "int:9"));
    assertThat(tf.floe("SELECT id, item, qty FROM stock.items ORDER BY id")).isEqualTo(expected);
    assertThat(tf.trino("SELECT id, item, qty FROM floe.stock.items ORDER BY id")).isEqualTo(expected);
    // Trino's row-level changes are merge-on-read: Floe applied Trino's position delete files, not rewritten data
    assertThat(tf.trino("SELECT count(*) FROM floe.stock.\"items$files\" WHERE content = 1").get(0).get(0))
        .isNotEqualTo("long:0");
    assertThat(tf.floe("SELECT count(*), sum(qty) FROM stock.items WHERE qty > 5"))
        .containsExactly(List.of("long:3", "long:46"));
  }

  @Test
  void trinoCtasAndAddedColumnFloeReads() throws Exception {
    tf.trinoSchema("evolve");
    tf.trino("CREATE TABLE floe.evolve.base (k varchar, v bigint)");
    tf.trino("INSERT INTO floe.evolve.base VALUES ('a', 1), ('b', 2), ('a', 3)");
    tf.trino("CREATE TABLE floe.evolve.totals AS SELECT k, sum(v) AS total FROM floe.evolve.base GROUP BY k");
    assertThat(tf.floe("SELECT k, total FROM evolve.totals ORDER BY k")).containsExactly(
        List.of("text:a", "long:4"), List.of("text:b", "long:2"));

    tf.trino("ALTER TABLE floe.evolve.totals ADD COLUMN note varchar");
    tf.trino("INSERT INTO floe.evolve.totals VALUES ('c', 9, 'new')");
    assertThat(tf.floe("SELECT k, total, note FROM evolve.totals ORDER BY k")).containsExactly(
        List.of("text:a", "long:4", "NULL"), List.of("text:b", "long:2", "NULL"),
        List.of("text:c", "long:9", "text:new"));
    // Floe writes the new column too; Trino reads it
    tf.floeExec("INSERT INTO evolve.totals (k, total, note) VALUES ('d', 1, 'floe')");
    assertThat(tf.trino("SELECT k, total, note FROM floe.evolve.totals WHERE note IS NOT NULL ORDER BY k"))
        .containsExactly(List.of("text:c", "long:9", "text:new"), List.of("text:d", "long:1", "text:floe"));
  }
}
