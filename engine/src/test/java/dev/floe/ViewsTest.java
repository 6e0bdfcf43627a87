package dev.floe;

import static dev.floe.testing.Statements.error;
import static dev.floe.testing.Statements.exec;
import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.IcebergClients;
import dev.floe.testing.Rows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.view.View;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CREATE [OR REPLACE] VIEW and DROP VIEW: views are kept as Iceberg views in the warehouse's catalog
 * (Iceberg's JdbcCatalog loads them), survive a restart, read their tables as the statement that names
 * them does, and are listed where PostgreSQL lists views.
 */
class ViewsTest {
  @TempDir
  Path dir;



  @Test
  void aViewIsItsQueryReadAtEachStatement() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      exec(s, "CREATE TABLE orders (id int PRIMARY KEY, customer text, amount numeric(10,2))",
          "INSERT INTO orders VALUES (1, 'ann', 10), (2, 'bob', 20), (3, 'ann', 5)",
          "CREATE VIEW totals AS SELECT customer, sum(amount) AS total, count(*) FROM orders GROUP BY customer",
          "CREATE VIEW big (who, spent) AS SELECT customer, total FROM totals WHERE total > 12");
      assertThat(Rows.of(s, "SELECT * FROM totals ORDER BY customer")).containsExactly("ann|15.00|2", "bob|20.00|1");
      assertThat(Rows.of(s, "SELECT b.who FROM big b JOIN totals t ON t.customer = b.who ORDER BY 1"))
          .containsExactly("ann", "bob");
      exec(s, "INSERT INTO orders VALUES (4, 'cy', 100)");
      assertThat(Rows.of(s, "SELECT who, spent FROM big ORDER BY who")).containsExactly("ann|15.00", "bob|20.00",
          "cy|100.00");
      // OR REPLACE keeps the columns it had, by name and type; it may add columns after them
      assertThat(error(s, "CREATE OR REPLACE VIEW totals AS SELECT customer FROM orders").getMessage())
          .isEqualTo("cannot drop columns from view");
      assertThat(error(s, "CREATE OR REPLACE VIEW totals AS SELECT customer AS c, sum(amount) AS total, count(*) "
          + "FROM orders GROUP BY customer").sqlState()).isEqualTo("42P16");
      exec(s, "CREATE OR REPLACE VIEW totals AS SELECT customer, sum(amount) AS total, count(*), max(id) AS last "
          + "FROM orders GROUP BY customer");
      assertThat(Rows.of(s, "SELECT last FROM totals WHERE customer = 'ann'")).containsExactly("3");

      assertThat(error(s, "CREATE VIEW totals AS SELECT 1").getMessage()).isEqualTo("relation \"totals\" already exists");
      assertThat(error(s, "CREATE VIEW orders AS SELECT 1").sqlState()).isEqualTo("42P07");
      assertThat(error(s, "CREATE TABLE totals (a int)").sqlState()).isEqualTo("42P07");
      assertThat(error(s, "CREATE VIEW v AS SELECT 1 AS a, 2 AS a").sqlState()).isEqualTo("42701");
      assertThat(error(s, "CREATE VIEW v AS SELECT nosuch FROM orders").sqlState()).isEqualTo("42703");
      assertThat(error(s, "CREATE VIEW v AS SELECT 1 WITH CHECK OPTION").sqlState()).isEqualTo("0A000");
      assertThat(error(s, "DROP TABLE totals").hint()).contains("Use DROP VIEW to remove a view.");
      assertThat(error(s, "DROP VIEW orders").getMessage()).isEqualTo("\"orders\" is not a view");
      assertThat(error(s, "DROP VIEW nosuch").getMessage()).isEqualTo("view \"nosuch\" does not exist");

      assertThat(Rows.of(s, "SELECT viewname FROM pg_views ORDER BY 1")).containsExactly("big", "totals");
      assertThat(Rows.of(s, "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = "
          + "'public' ORDER BY 1")).containsExactly("big|VIEW", "orders|BASE TABLE", "totals|VIEW");
      assertThat(Rows.of(s, "SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE "
          + "c.relname = 'big' AND c.relkind = 'v' ORDER BY a.attnum")).containsExactly("who", "spent");

      List<Notice> notices = new ArrayList<>();
      s.onNotice(notices::add);
      exec(s, "DROP VIEW big, totals", "DROP VIEW IF EXISTS big");
      assertThat(notices).extracting(Notice::message).containsExactly("view \"big\" does not exist, skipping");
      assertThat(error(s, "SELECT * FROM totals").sqlState()).isEqualTo("42P01");
    }
  }

  @Test
  void viewsAreIcebergViewsOfTheCatalogAndOutliveTheProcess() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      exec(s, "CREATE SCHEMA sales", "CREATE TABLE sales.t (id int, v text)", "INSERT INTO sales.t VALUES (1, 'x')",
          "CREATE TABLE t (id int)"); // public.t: the view's t is its own schema's
      s.setCurrentSchema("sales");
      exec(s, "CREATE VIEW recent AS SELECT id, upper(v) AS v FROM t");
    }
    JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir);
    try {
      assertThat(catalog.listViews(Namespace.of("sales"))).containsExactly(TableIdentifier.of("sales", "recent"));
      View view = catalog.loadView(TableIdentifier.of("sales", "recent"));
      assertThat(view.sqlFor("postgresql").sql()).isEqualTo("SELECT id, upper(v) AS v FROM t");
      assertThat(view.currentVersion().defaultNamespace()).isEqualTo(Namespace.of("sales"));
      assertThat(view.schema().columns()).extracting(f -> f.name() + " " + f.type()).containsExactly("id int",
          "v string");
    } finally {
      catalog.close();
    }
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      assertThat(Rows.of(s, "SELECT * FROM sales.recent")).containsExactly("1|X");
      assertThat(error(s, "DROP SCHEMA sales").sqlState()).isEqualTo("2BP01");
    }
  }
}
