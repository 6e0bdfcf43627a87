package dev.floe.trino;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Trino writes through Floe's REST catalog; Floe, through its PostgreSQL port, reads what Trino wrote. */
class TrinoWritesFloeReadsTest {
  private static TrinoFloe tf;

  @BeforeAll
  static void start() {
    tf = TrinoFloe.get();
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
}
