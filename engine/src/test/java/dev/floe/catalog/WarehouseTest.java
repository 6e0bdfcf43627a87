package dev.floe.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeException;
import dev.floe.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WarehouseTest {
  @TempDir
  Path dir;

  @Test
  void secondWriterIsRefusedAndReadersAreAllowed() {
    try (Database writer = Floe.open(dir)) {
      writer.sql("CREATE TABLE t (a int)").close();
      writer.sql("INSERT INTO t VALUES (1)").close();
      assertThatThrownBy(() -> Floe.open(dir))
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo("55006");
            assertThat(e.getMessage()).contains("already open for writing");
          });
      try (Database reader = Floe.openReadOnly(dir); Result r = reader.sql("SELECT count(*) FROM t")) {
        assertThat(r.toList().get(0).getLong(0)).isEqualTo(1);
      }
      try (Database reader = Floe.openReadOnly(dir)) {
        assertThatThrownBy(() -> reader.sql("INSERT INTO t VALUES (2)"))
            .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("25006"));
      }
    }
    try (Database again = Floe.open(dir)) {
      assertThat(again.table("t").columns()).hasSize(1);
    }
  }

  /**
   * A lost catalog.db (emptied, deleted, garbled, replaced by another warehouse's) is refused, never an
   * empty warehouse over the tables' files; floe catalog rebuild registers the tables again.
   */
  @Test
  void aLostCatalogIsRefusedAndRebuiltFromTheTablesFiles() throws Exception {
    Path other = dir.resolveSibling(dir.getFileName() + "-other");
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
      db.sql("INSERT INTO t VALUES (1), (2)").close();
      db.sql("CREATE SCHEMA s").close();
      db.sql("CREATE TABLE s.u AS SELECT 'x' AS v").close();
    }
    try (Database db = Floe.open(other)) {
      db.sql("CREATE TABLE elsewhere (a int)").close();
    }
    Path catalog = dir.resolve("catalog.db");
    byte[] good = Files.readAllBytes(catalog);
    java.util.Map<String, byte[]> damage = new java.util.LinkedHashMap<>();
    damage.put("emptied", new byte[0]);
    damage.put("garbled", "this is no sqlite database, just bytes where one was".repeat(100).getBytes());
    damage.put("replaced", Files.readAllBytes(other.resolve("catalog.db")));
    damage.put("deleted", null);
    for (var e : damage.entrySet()) {
      if (e.getValue() == null) {
        Files.delete(catalog);
      } else {
        Files.write(catalog, e.getValue());
      }
      for (boolean readOnly : List.of(false, true)) {
        assertThatThrownBy(() -> (readOnly ? Floe.openReadOnly(dir) : Floe.open(dir)).close()).as(e.getKey())
            .isInstanceOfSatisfying(FloeException.class, f -> {
              assertThat(f.sqlState()).isIn("XX001", "42704");
              assertThat(f.getMessage()).contains("catalog.db");
            });
      }
    }
    dev.floe.RebuiltCatalog rebuilt = Floe.rebuildCatalog(dir);
    assertThat(rebuilt.tables()).hasSize(2);
    try (Database db = Floe.open(dir)) {
      try (Result r = db.sql("SELECT sum(a) FROM t")) {
        assertThat(r.toList().get(0).getLong(0)).isEqualTo(3);
      }
      try (Result r = db.sql("SELECT v FROM s.u")) {
        assertThat(r.toList().get(0).getString(0)).isEqualTo("x");
      }
      db.sql("INSERT INTO t VALUES (3)").close();
    }
    assertThat(good).isNotEmpty();
    dev.floe.write.Scratch.deleteTree(other);
  }

  @Test
  void readOnlyOpenOfMissingWarehouseFailsClearly() {
    assertThatThrownBy(() -> Floe.openReadOnly(dir.resolve("nope")))
        .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.getMessage()).contains("catalog.db"));
  }

  @Test
  void everyCommitWritesVersionedMetadataAndTheVersionHint() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
      db.sql("INSERT INTO t VALUES (1)").close();
      db.sql("INSERT INTO t VALUES (2)").close();
      Path metadata = Path.of(db.table("t").location()).resolve("metadata");
      assertThat(Files.readString(metadata.resolve("version-hint.text"))).isEqualTo("3");
      assertThat(metadata.resolve("v1.metadata.json")).exists();
      assertThat(metadata.resolve("v3.metadata.json")).exists();
      assertThat(metadata.resolve("v4.metadata.json")).doesNotExist();
    }
  }

  @Test
  void aWriteThatFailsHalfwayLeavesNoDataFileBehind() throws Exception {
    try (Database db = Floe.open(dir)) {
      // Files roll over every MiB, so DuckDB has written several before the bad row at the end stops it.
      db.sql("CREATE TABLE t (a int NOT NULL, b varchar) WITH ('write.target-file-size-bytes' = '1048576')").close();
      db.sql("INSERT INTO t VALUES (1, 'kept')").close();
      Path data = Path.of(db.table("t").location()).resolve("data");
      List<Path> before;
      try (var files = Files.list(data)) {
        before = files.sorted().toList();
      }
      assertThatThrownBy(() -> db.sql("INSERT INTO t SELECT CASE WHEN i = 1999999 THEN NULL ELSE i END,"
          + " md5(i::varchar) FROM range(2000000) r(i)").close())
          .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("23502"));
      try (var files = Files.list(data)) {
        assertThat(files.sorted().toList()).isEqualTo(before);
      }
      try (Result r = db.sql("SELECT count(*), min(b) FROM t")) {
        var row = r.toList().get(0);
        assertThat(row.getLong(0)).isEqualTo(1);
        assertThat(row.getString(1)).isEqualTo("kept");
      }
    }
  }

  @Test
  void aDroppedTablesDirectoryIsNeverReused() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
      db.sql("INSERT INTO t VALUES (1)").close();
      String first = db.table("t").location();
      db.sql("DROP TABLE t").close();
      db.sql("CREATE TABLE t (a int)").close();
      assertThat(db.table("t").location()).isNotEqualTo(first);
      try (Result r = db.sql("SELECT count(*) FROM t")) {
        assertThat(r.toList().get(0).getLong(0)).isZero();
      }
    }
  }

  @Test
  void purgeDeletesTheFiles() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
      db.sql("INSERT INTO t VALUES (1)").close();
      Path location = Path.of(db.table("t").location());
      db.sql("DROP TABLE t PURGE").close();
      assertThat(location).doesNotExist();
    }
  }

  @Test
  void catalogRowsUseIcebergsJdbcSchema() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE SCHEMA s").close();
      db.sql("CREATE TABLE s.t (a int)").close();
    }
    try (var conn = java.sql.DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("catalog.db"));
        var st = conn.createStatement();
        var rs = st.executeQuery("SELECT catalog_name, table_namespace, table_name, iceberg_type FROM iceberg_tables")) {
      assertThat(rs.next()).isTrue();
      assertThat(List.of(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)))
          .containsExactly("floe", "s", "t", "TABLE");
    }
  }
}
