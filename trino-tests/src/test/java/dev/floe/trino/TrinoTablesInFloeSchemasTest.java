package dev.floe.trino;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Trino's DDL in a schema Floe made (Floe's schemas carry no {@code location} property): create, rename and drop a
 * table, drop the schema; Floe sees each change.
 */
class TrinoTablesInFloeSchemasTest {
  private TrinoFloe tf;

  @BeforeEach
  void start() {
    tf = TrinoFloe.get(); // the first test starts both servers; each test is skipped if no Java 24+ exists
  }

  @Test
  void trinoCreatesRenamesAndDropsATableInAFloeSchema() throws Exception {
    tf.floeExec("CREATE SCHEMA floe_made");
    assertThat(tf.trino("SHOW SCHEMAS FROM floe LIKE 'floe_made'")).containsExactly(List.of("text:floe_made"));
    tf.trino("CREATE TABLE floe.floe_made.located (id bigint, v varchar) WITH (location = '"
        + tf.warehouse.resolve("floe_made").resolve("located") + "')");
    tf.trino("INSERT INTO floe.floe_made.located VALUES (1, 'x'), (2, 'y')");
    assertThat(tf.floe("SELECT id, v FROM floe_made.located ORDER BY id"))
        .containsExactly(List.of("long:1", "text:x"), List.of("long:2", "text:y"));

    tf.trino("ALTER TABLE floe.floe_made.located RENAME TO floe.floe_made.moved");
    assertThat(tf.trino("SHOW TABLES FROM floe.floe_made")).containsExactly(List.of("text:moved"));
    assertThat(tf.floe("SELECT id, v FROM floe_made.moved ORDER BY id"))
        .containsExactly(List.of("long:1", "text:x"), List.of("long:2", "text:y"));

    tf.trino("DROP TABLE floe.floe_made.moved");
    assertThat(tf.floe("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'floe_made'"))
        .containsExactly(List.of("long:0"));
    tf.trino("DROP SCHEMA floe.floe_made");
    assertThat(tf.floe("SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'floe_made'"))
        .containsExactly(List.of("long:0"));
  }

  /**
   * Without a location, Trino 476's REST catalog places the table under its schema's {@code location} property and
   * stages the create there; Floe's REST catalog gives every schema one (its directory in the warehouse). Without it
   * Trino created the table at once and then refused the directory Floe's create had filled ("Cannot create a table
   * on a non-empty location"), leaving the table created.
   */
  @Test
  void trinoCreatesATableWithoutALocationInAFloeSchema() throws Exception {
    tf.floeExec("CREATE SCHEMA floe_plain");
    tf.trino("CREATE TABLE floe.floe_plain.t (id bigint)");
    tf.trino("INSERT INTO floe.floe_plain.t VALUES 1, 2");
    assertThat(tf.floe("SELECT id FROM floe_plain.t ORDER BY id"))
        .containsExactly(List.of("long:1"), List.of("long:2"));
  }
}
