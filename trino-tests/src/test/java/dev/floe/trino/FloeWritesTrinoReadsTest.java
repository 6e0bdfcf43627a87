package dev.floe.trino;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Floe writes, through its PostgreSQL port, tables Trino created and tables of its own; Trino reads them through
 * the REST catalog at its next query, and changes them again.
 */
class FloeWritesTrinoReadsTest {
  private TrinoFloe tf;

  @BeforeEach
  void start() {
    tf = TrinoFloe.get(); // the first test starts both servers; each test is skipped if no Java 24+ exists
  }

  @Test
  void floeInsertUpdateDeleteOnATrinoTableTrinoReadsEachChange() throws Exception {
    tf.trinoSchema("ledger");
    tf.trino("CREATE TABLE floe.ledger.accounts (id bigint, owner varchar, balance decimal(12,2))");
    tf.trino("INSERT INTO floe.ledger.accounts VALUES (1, 'ann', 100.00), (2, 'ben', 250.50), (3, 'cat', 0.00)");
    String trinoAll = "SELECT id, owner, balance FROM floe.ledger.accounts ORDER BY id";
    String floeAll = "SELECT id, owner, balance FROM ledger.accounts ORDER BY id";

    tf.floeExec("INSERT INTO ledger.accounts VALUES (4, 'dan', 75.25), (5, 'eve', 10.00)");
    assertThat(tf.trino(trinoAll)).isEqualTo(tf.floe(floeAll)).hasSize(5);
    tf.floeExec("UPDATE ledger.accounts SET balance = balance + 1000 WHERE owner IN ('ann', 'dan')");
    assertThat(tf.trino(trinoAll)).isEqualTo(tf.floe(floeAll));
    tf.floeExec("DELETE FROM ledger.accounts WHERE balance = 0");
    List<List<String>> expected = List.of(
        List.of("long:1", "text:ann", "decimal:1100.00"), List.of("long:2", "text:ben", "decimal:250.50"),
        List.of("long:4", "text:dan", "decimal:1075.25"), List.of("long:5", "text:eve", "decimal:10.00"));
    assertThat(tf.trino(trinoAll)).isEqualTo(expected);
    assertThat(tf.floe(floeAll)).isEqualTo(expected);

    // Trino changes the rows Floe wrote (over whatever deletes Floe left), and Floe reads Trino's result
    tf.trino("UPDATE floe.ledger.accounts SET balance = balance - 50 WHERE id IN (4, 5)");
    tf.trino("DELETE FROM floe.ledger.accounts WHERE owner = 'ben'");
    tf.trino("MERGE INTO floe.ledger.accounts t USING (VALUES (1, 'ann', 1.00), (6, 'fay', 6.00)) AS s(id, owner, amt) "
        + "ON t.id = s.id WHEN MATCHED THEN UPDATE SET balance = t.balance + s.amt "
        + "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.owner, s.amt)");
    expected = List.of(
        List.of("long:1", "text:ann", "decimal:1101.00"), List.of("long:4", "text:dan", "decimal:1025.25"),
        List.of("long:5", "text:eve", "decimal:-40.00"), List.of("long:6", "text:fay", "decimal:6.00"));
    assertThat(tf.floe(floeAll)).isEqualTo(expected);
    assertThat(tf.trino(trinoAll)).isEqualTo(expected);
  }

  @Test
  void trinoReadsAFloeTableAndJoinsItWithATrinoTable() throws Exception {
    tf.floeExec("CREATE SCHEMA catalog_f",
        "CREATE TABLE catalog_f.prices (item text, price numeric(8,2), updated date)",
        "INSERT INTO catalog_f.prices VALUES ('apple', 0.50, '2024-01-01'), ('pear', 0.75, '2024-01-01'), "
            + "('fig', 2.00, '2024-01-01'), ('kiwi', 0.30, '2024-01-01')",
        "UPDATE catalog_f.prices SET price = 0.80, updated = '2024-02-01' WHERE item = 'pear'",
        "DELETE FROM catalog_f.prices WHERE item = 'kiwi'");
    assertThat(tf.trino("SELECT item, price, updated FROM floe.catalog_f.prices ORDER BY item"))
        .isEqualTo(tf.floe("SELECT item, price, updated FROM catalog_f.prices ORDER BY item"))
        .containsExactly(List.of("text:apple", "decimal:0.50", "date:2024-01-01"),
            List.of("text:fig", "decimal:2.00", "date:2024-01-01"),
            List.of("text:pear", "decimal:0.80", "date:2024-02-01"));

    tf.trinoSchema("catalog_t");
    tf.trino("CREATE TABLE floe.catalog_t.sales (item varchar, qty bigint)");
    tf.trino("INSERT INTO floe.catalog_t.sales VALUES ('apple', 4), ('pear', 10), ('apple', 6), ('kiwi', 3)");
    // sum(bigint) is bigint in Trino and numeric in PostgreSQL (and Floe): the cast makes both bigint
    String join = "SELECT s.item, CAST(sum(s.qty) AS bigint) AS qty, sum(s.qty * p.price) AS revenue "
        + "FROM %1$s.catalog_t.sales s JOIN %1$s.catalog_f.prices p ON p.item = s.item GROUP BY s.item ORDER BY s.item";
    List<List<String>> expected = List.of(List.of("text:apple", "long:10", "decimal:5.00"),
        List.of("text:pear", "long:10", "decimal:8.00"));
    assertThat(tf.trino(join.formatted("floe"))).isEqualTo(expected);
    assertThat(tf.floe(join.replace("%1$s.", ""))).isEqualTo(expected);
  }
}
