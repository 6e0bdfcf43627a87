package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.IcebergClients;
import dev.floe.testing.Rows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ALTER TABLE t EXECUTE rollback_to_snapshot(id)}: a table put back after a bad write, as every
 * reader sees it (Floe after a restart, Iceberg's own reader), and what it does to transaction blocks that
 * read the later version. (Versions and the errors: sql/ddl/rollback.slt.)
 */
class RollbackTest {
  @org.junit.jupiter.api.io.TempDir
  Path dir;

  private static void exec(Database db, String sql) {
    db.sql(sql).close();
  }

  private static long snapshotOfVersion(Database db, String table, int version) {
    return Long.parseLong(Rows.of(db, "SELECT snapshot_id FROM \"" + table + "$snapshots\" WHERE sequence_number = "
        + version).get(0));
  }

  private List<String> icebergRows(String table) throws Exception {
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      Table t = catalog.loadTable(TableIdentifier.of("public", table));
      List<String> rows = new ArrayList<>();
      try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
        it.forEach(r -> rows.add(r.getField("id") + "|" + r.getField("v")));
      }
      rows.sort(null);
      return rows;
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void aBadWriteIsUndoneForEveryReader(int formatVersion) throws Exception {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE t (id int PRIMARY KEY, v text) WITH (format_version = " + formatVersion + ")");
      exec(db, "INSERT INTO t SELECT i, 'v' || i FROM range(0, 100) r(i)");
      long good = snapshotOfVersion(db, "t", 1);
      exec(db, "UPDATE t SET v = 'oops'");
      exec(db, "DELETE FROM t WHERE id >= 50");
      assertThat(Rows.of(db, "SELECT count(*), count(*) FILTER (WHERE v = 'oops') FROM t")).containsExactly("50|50");
      exec(db, "ALTER TABLE t EXECUTE rollback_to_snapshot(" + good + ")");
      assertThat(Rows.of(db, "SELECT count(*), min(v), max(id) FROM t")).containsExactly("100|v0|99");
      assertThat(Rows.of(db, "SELECT count(*) FROM t AS OF VERSION 3")).containsExactly("50");
      assertThat(icebergRows("t")).hasSize(100).contains("0|v0", "99|v99");
      // point reads and the primary key follow the rolled-back version
      assertThat(Rows.of(db, "SELECT v FROM t WHERE id = 7")).containsExactly("v7");
      assertThatThrownBy(() -> exec(db, "INSERT INTO t VALUES (60, 'dup')"))
          .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo(SqlState.UNIQUE_VIOLATION));
    }
    try (Database db = Floe.open(dir)) {
      assertThat(Rows.of(db, "SELECT count(*), min(v) FROM t")).containsExactly("100|v0");
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aBlockThatReadTheLaterVersionCannotCommitOverIt(boolean writes) throws Exception {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE t (id int PRIMARY KEY, v text)");
      exec(db, "INSERT INTO t SELECT i, 'v' || i FROM range(0, 10) r(i)");
      long good = snapshotOfVersion(db, "t", 1);
      exec(db, "UPDATE t SET v = 'later' WHERE id = 1");
      try (Transaction tx = db.begin()) {
        assertThat(Rows.of(tx, "SELECT v FROM t WHERE id = 1")).containsExactly("later");
        exec(db, "ALTER TABLE t EXECUTE rollback_to_snapshot(" + good + ")");
        // the block still reads the version it started on (it is not expired)
        assertThat(Rows.of(tx, "SELECT v FROM t WHERE id = 1")).containsExactly("later");
        if (!writes) {
          tx.commit(); // a block that only read commits
          return;
        }
        tx.sql("UPDATE t SET v = 'block' WHERE id = 2").close();
        assertThatThrownBy(tx::commit).isInstanceOfSatisfying(FloeException.class,
            e -> assertThat(e.sqlState()).isEqualTo(SqlState.SERIALIZATION_FAILURE));
      }
      assertThat(Rows.of(db, "SELECT id, v FROM t WHERE id IN (1, 2) ORDER BY id")).containsExactly("1|v1", "2|v2");
    }
  }
}
