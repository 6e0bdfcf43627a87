package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code floe cdc follow} of PostgreSQL tables of other shapes. A partitioned table: the changes of its
 * partitions, a row moving from one to another among them, reach the Floe table (its publication publishes
 * them under the table's name), and an existing publication that would publish them under the partitions'
 * names, where the follower would never see them, is refused before anything is read. A table with a
 * generated column, which PostgreSQL does not publish: followed without it, and refused if the Floe table
 * has a column for it, which would only hold what the snapshot read.
 */
class CdcFollowSourceShapesTest {
  private static dev.floe.testing.ThrowawayPostgres postgres;

  @TempDir
  Path dir;

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = dev.floe.testing.ThrowawayPostgres.startLogical();
  }

  @AfterAll
  static void stopPostgres() {
    if (postgres != null) {
      postgres.close();
    }
  }

  @Test
  void thePartitionsChangesReachTheTable() throws Exception {
    String wh = dir.resolve("wh").toString();
    try (Connection pg = postgres.connect(); Statement s = pg.createStatement()) {
      s.execute("CREATE TABLE po (id int, region text, v text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)");
      s.execute("CREATE TABLE po_eu PARTITION OF po FOR VALUES IN ('eu')");
      s.execute("CREATE TABLE po_us PARTITION OF po FOR VALUES IN ('us')");
      s.execute("INSERT INTO po VALUES (1, 'eu', 'a'), (2, 'us', 'b'), (3, 'eu', 'c')");
      assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE po (id int, region text, v text, PRIMARY KEY (id, region))")
          .status()).isZero();
      Cli.Outcome snapshot = follow(wh, "po");
      assertThat(snapshot.status()).as(snapshot.err()).isZero();
      assertThat(rows(wh)).isEqualTo(source(pg));
      s.execute("INSERT INTO po VALUES (4, 'eu', 'd'), (5, 'us', 'e')");
      s.execute("UPDATE po SET v = 'z' WHERE id = 1");
      s.execute("DELETE FROM po WHERE id = 2");
      s.execute("UPDATE po SET region = 'us' WHERE id = 3"); // from one partition to the other
      Cli.Outcome streamed = follow(wh, "po");
      assertThat(streamed.status()).as(streamed.err()).isZero();
      assertThat(rows(wh)).isEqualTo(source(pg)).containsExactly("1|eu|z", "3|us|c", "4|eu|d", "5|us|e");
    }
  }

  @Test
  void aPublicationOfThePartitionsNamesIsRefused() throws Exception {
    String wh = dir.resolve("wh2").toString();
    try (Connection pg = postgres.connect(); Statement s = pg.createStatement()) {
      s.execute("CREATE TABLE pq (id int PRIMARY KEY, v text) PARTITION BY RANGE (id)");
      s.execute("CREATE TABLE pq_low PARTITION OF pq FOR VALUES FROM (0) TO (100)");
      s.execute("CREATE PUBLICATION floe_pq FOR TABLE pq"); // publish_via_partition_root = false
      assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE pq (id int PRIMARY KEY, v text)").status()).isZero();
      Cli.Outcome refused = follow(wh, "pq");
      assertThat(refused.status()).isEqualTo(Main.EXIT_ERROR);
      assertThat(refused.err()).isEqualTo("ERROR 55000: publication \"floe_pq\" publishes the changes of partitioned "
          + "table \"public.pq\" under its partitions' names, which the follower would not see HINT: ALTER "
          + "PUBLICATION floe_pq SET (publish_via_partition_root = true)\n");
      s.execute("ALTER PUBLICATION floe_pq SET (publish_via_partition_root = true)");
      s.execute("INSERT INTO pq VALUES (1, 'a')");
      Cli.Outcome o = follow(wh, "pq");
      assertThat(o.status()).as(o.err()).isZero();
      s.execute("INSERT INTO pq VALUES (2, 'b')");
      o = follow(wh, "pq");
      assertThat(o.status()).as(o.err()).isZero();
      try (Database db = Floe.open(Path.of(wh)); Result r = db.sql("SELECT count(*) FROM pq")) {
        assertThat(r.iterator().next().getString(0)).isEqualTo("2");
      }
    }
  }

  @Test
  void aGeneratedColumnIsLeftOutOrRefused() throws Exception {
    String wh = dir.resolve("wh3").toString();
    try (Connection pg = postgres.connect(); Statement s = pg.createStatement()) {
      s.execute("CREATE TABLE g (id int PRIMARY KEY, a int, doubled int GENERATED ALWAYS AS (a * 2) STORED)");
      s.execute("INSERT INTO g (id, a) VALUES (1, 10)");
      assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE g (id int PRIMARY KEY, a int, doubled int)").status())
          .isZero();
      Cli.Outcome refused = follow(wh, "g");
      assertThat(refused.status()).isEqualTo(Main.EXIT_ERROR);
      assertThat(refused.err()).isEqualTo("ERROR 0A000: column \"doubled\" of PostgreSQL table \"public.g\" is "
          + "generated, and PostgreSQL does not publish generated columns HINT: drop it from table \"g\" (a view can "
          + "compute it): ALTER TABLE g DROP COLUMN doubled\n");
      assertThat(Cli.run("sql", "-w", wh, "-c", "ALTER TABLE g DROP COLUMN doubled").status()).isZero();
      Cli.Outcome snapshot = follow(wh, "g");
      assertThat(snapshot.status()).as(snapshot.err()).isZero();
      s.execute("INSERT INTO g (id, a) VALUES (2, 20)");
      s.execute("UPDATE g SET a = 11 WHERE id = 1");
      Cli.Outcome streamed = follow(wh, "g");
      assertThat(streamed.status()).as(streamed.err()).isZero();
      try (Database db = Floe.open(Path.of(wh)); Result r = db.sql("SELECT id, a FROM g ORDER BY id")) {
        List<String> got = new ArrayList<>();
        r.forEach(row -> got.add(row.getString(0) + "|" + row.getString(1)));
        assertThat(got).containsExactly("1|11", "2|20");
      }
    }
  }

  private static List<String> source(Connection pg) throws Exception {
    List<String> out = new ArrayList<>();
    try (Statement s = pg.createStatement(); ResultSet r = s.executeQuery("SELECT id, region, v FROM po ORDER BY id")) {
      while (r.next()) {
        out.add(r.getString(1) + "|" + r.getString(2) + "|" + r.getString(3));
      }
    }
    return out;
  }

  private static List<String> rows(String wh) {
    List<String> out = new ArrayList<>();
    try (Database db = Floe.open(Path.of(wh)); Result r = db.sql("SELECT id, region, v FROM po ORDER BY id")) {
      for (Row row : r) {
        out.add(row.getString(0) + "|" + row.getString(1) + "|" + row.getString(2));
      }
    }
    return out;
  }

  private static Cli.Outcome follow(String wh, String table) {
    return FollowRuns.follow(postgres, wh, table, "--stop-after-idle-ms", "1000");
  }

}
