package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Expiry reads what the table's versions name, then commits and deletes what the versions it took named.
 * Versions that land in between (tens a second on a busy table) are not among those it read: it must not
 * take them, or their files would stay on disk, named by nothing, until orphan removal days later.
 */
class ExpiryRaceTest {
  @TempDir
  Path dir;

  @Test
  void anExpiryNeverTakesAVersionThatLandedAfterItReadTheFiles() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id int)").close();
      for (int i = 0; i < 3; i++) {
        db.sql("INSERT INTO t VALUES (" + i + ")").close();
      }
      java.lang.reflect.Field f = Database.class.getDeclaredField("engine");
      f.setAccessible(true);
      Engine engine = (Engine) f.get(db);
      TableIdentifier id = TableIdentifier.of("public", "t");
      Set<String> read = HistorySize.of(engine.tables().current(id).orElseThrow()).named();
      db.sql("INSERT INTO t VALUES (3)").close(); // lands after the files were read
      db.sql("INSERT INTO t VALUES (4)").close();
      Thread.sleep(5);

      Maintenance.Expired expired = Maintenance.expireBesideWriters(engine, id, 0, 1, Set.of(), read);

      Table table = engine.tables().current(id).orElseThrow();
      assertThat(expired.snapshots()).as("the three inserts read").isEqualTo(3);
      assertThat(table.snapshots()).hasSize(2);
      Set<String> named = Maintenance.referenced(table, false);
      List<Path> lists;
      try (var files = Files.list(dir.resolve("public").resolve("t").resolve("metadata"))) {
        lists = files.filter(p -> p.getFileName().toString().startsWith("snap-")).toList();
      }
      assertThat(lists).as("every manifest list on disk is a kept version's").hasSize(2)
          .allSatisfy(p -> assertThat(named).anyMatch(n -> n.endsWith(p.getFileName().toString())));
      assertThat(db.sql("SELECT count(*) FROM t").iterator().next().getLong(0)).isEqualTo(5);
    }
  }
}
