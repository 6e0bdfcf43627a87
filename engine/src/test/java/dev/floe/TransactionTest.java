package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.IcebergClients;
import dev.floe.testing.Rows;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Transaction blocks of the embedded API: snapshot isolation, read-your-writes, atomic commit, rollback. */
class TransactionTest {
  @TempDir
  Path dir;

  private static void exec(Database db, String sql) {
    db.sql(sql).close();
  }

  private Set<String> files(String table) throws IOException {
    try (Stream<Path> walk = Files.walk(dir.resolve("public").resolve(table))) {
      return walk.filter(Files::isRegularFile).map(p -> dir.relativize(p).toString())
          .filter(p -> !p.contains("version-hint")).collect(Collectors.toCollection(TreeSet::new));
    }
  }

  private static String props(int version) {
    return " WITH (format_version = " + version + ")";
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void rollbackLeavesNothingBehind(int version) throws IOException {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE t (id int, v text)" + props(version));
      exec(db, "INSERT INTO t SELECT i, 'v' || i FROM range(0, 100) r(i)");
      Set<String> before = files("t");
      try (Transaction tx = db.begin()) {
        tx.sql("INSERT INTO t VALUES (1000, 'new')").close();
        tx.sql("UPDATE t SET v = 'changed' WHERE id < 10").close();
        tx.sql("DELETE FROM t WHERE id BETWEEN 50 AND 59").close();
        tx.sql("UPDATE t SET v = 'again' WHERE id = 3").close();
        assertThat(Rows.of(tx, "SELECT count(*), count(*) FILTER (WHERE v = 'changed') FROM t")).containsExactly("91|9");
        tx.rollback();
      }
      assertThat(Rows.of(db, "SELECT count(*), min(v), max(id) FROM t")).containsExactly("100|v0|99");
      assertThat(files("t")).isEqualTo(before);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void commitAppliesEveryStatementAsOneSnapshotPerTable(int version) throws IOException {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE a (id int, balance int)" + props(version));
      exec(db, "CREATE TABLE b (id int, balance int)" + props(version));
      exec(db, "INSERT INTO a SELECT i, 100 FROM range(0, 10) r(i)");
      exec(db, "INSERT INTO b SELECT i, 100 FROM range(0, 10) r(i)");
      long snapshotsA = Long.parseLong(Rows.of(db, "SELECT count(*) FROM \"a$snapshots\"").get(0));
      try (Transaction tx = db.begin()) {
        tx.sql("UPDATE a SET balance = balance - 30 WHERE id = 1").close();
        tx.sql("UPDATE b SET balance = balance + 30 WHERE id = 1").close();
        tx.sql("UPDATE a SET balance = balance - 5 WHERE id = 1").close();
        tx.sql("INSERT INTO b VALUES (10, 5)").close();
        tx.sql("DELETE FROM a WHERE id = 9").close();
        // read-your-writes inside, invisible outside
        assertThat(Rows.of(tx, "SELECT balance FROM a WHERE id = 1")).containsExactly("65");
        assertThat(Rows.of(db, "SELECT balance FROM a WHERE id = 1")).containsExactly("100");
        tx.commit();
      }
      assertThat(Rows.of(db, "SELECT (SELECT sum(balance) FROM a), (SELECT sum(balance) FROM b)"))
          .containsExactly("865|1035");
      assertThat(Rows.of(db, "SELECT count(*) FROM \"a$snapshots\"")).containsExactly(String.valueOf(snapshotsA + 1));
    }
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      for (String name : List.of("a", "b")) {
        Table table = catalog.loadTable(TableIdentifier.of("public", name));
        // Iceberg's own reader sees the same rows
        assertThat(sum(table)).isEqualTo(name.equals("a") ? 865 : 1035);
        // what the statements wrote for themselves (manifests, lists, the row updated twice) is gone:
        // every file left is one a committed snapshot names
        Set<String> named = new TreeSet<>();
        for (org.apache.iceberg.Snapshot snap : table.snapshots()) {
          named.add(snap.manifestListLocation());
          snap.allManifests(table.io()).forEach(m -> named.add(m.path()));
          snap.addedDataFiles(table.io()).forEach(f -> named.add(f.location()));
          snap.addedDeleteFiles(table.io()).forEach(f -> named.add(f.location()));
        }
        Set<String> left = new TreeSet<>();
        for (String f : files(name)) {
          String path = dir.resolve(f).toString();
          if (!path.endsWith(".metadata.json") && named.stream().noneMatch(n -> n.endsWith(path))) {
            left.add(f);
          }
        }
        assertThat(left).isEmpty();
      }
    }
  }

  private static long sum(Table table) throws IOException {
    long sum = 0;
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        sum += (Integer) r.getField("balance");
      }
    }
    return sum;
  }

  @Test
  void theSnapshotIsTakenAtTheFirstStatement() {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE t (id int)");
      exec(db, "CREATE TABLE u (id int)");
      exec(db, "INSERT INTO t VALUES (1)");
      try (Transaction tx = db.begin()) {
        exec(db, "INSERT INTO t VALUES (2)"); // before the first statement: seen
        assertThat(Rows.of(tx, "SELECT count(*) FROM t")).containsExactly("2");
        exec(db, "INSERT INTO t VALUES (3)");
        exec(db, "INSERT INTO u VALUES (3)"); // another table, never read yet: still the snapshot's
        assertThat(Rows.of(tx, "SELECT count(*) FROM t")).containsExactly("2");
        assertThat(Rows.of(tx, "SELECT count(*) FROM u")).containsExactly("0");
        tx.commit(); // read-only: nothing to apply
      }
      assertThat(Rows.of(db, "SELECT count(*) FROM t")).containsExactly("3");
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void aLostUpdateFailsWith40001(int version) {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE c (id int, n int)" + props(version));
      exec(db, "INSERT INTO c VALUES (1, 0), (2, 0)");
      Transaction first = db.begin();
      Transaction second = db.begin();
      assertThat(Rows.of(first, "SELECT n FROM c WHERE id = 1")).containsExactly("0");
      assertThat(Rows.of(second, "SELECT n FROM c WHERE id = 1")).containsExactly("0");
      first.sql("UPDATE c SET n = n + 1 WHERE id = 1").close();
      second.sql("UPDATE c SET n = n + 1 WHERE id = 1").close();
      first.commit();
      assertThatThrownBy(second::commit).isInstanceOf(FloeException.class)
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo(SqlState.SERIALIZATION_FAILURE));
      assertThat(Rows.of(db, "SELECT id, n FROM c ORDER BY id")).containsExactly("1|1", "2|0");
    }
  }

  /** A statement that empties a file drops it; the commit removes it, validated like any other change. */
  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void aBlockThatReplacesWholeFilesCommits(int version) {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE w (id int, v int)" + props(version));
      exec(db, "INSERT INTO w VALUES (1, 1)");
      exec(db, "INSERT INTO w VALUES (2, 2)");
      try (Transaction tx = db.begin()) {
        tx.sql("UPDATE w SET v = v + 10 WHERE id = 1").close();
        tx.sql("UPDATE w SET v = v + 10").close();
        tx.sql("DELETE FROM w WHERE id = 2").close();
        tx.commit();
      }
      assertThat(Rows.of(db, "SELECT id, v FROM w")).containsExactly("1|21");
    }
  }

  /** With a primary key: a key the block added that another commit added first conflicts (40001). */
  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void keysAddedConcurrentlyConflict(int version) {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE k (id int PRIMARY KEY, v text)" + props(version));
      exec(db, "INSERT INTO k VALUES (1, 'a')");
      try (Transaction tx = db.begin()) {
        tx.sql("INSERT INTO k VALUES (2, 'block')").close();
        // its own key: 23505 at once, which fails the block
        assertThat(state(() -> tx.sql("INSERT INTO k VALUES (2, 'again')").close()))
            .isEqualTo(SqlState.UNIQUE_VIOLATION);
        tx.rollback();
      }
      try (Transaction tx = db.begin()) {
        tx.sql("INSERT INTO k VALUES (2, 'block')").close();
        exec(db, "INSERT INTO k VALUES (2, 'outside')"); // committed first
        assertThatThrownBy(tx::commit).isInstanceOf(FloeException.class)
            .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo(SqlState.SERIALIZATION_FAILURE));
      }
      try (Transaction tx = db.begin()) { // another key: no conflict
        tx.sql("INSERT INTO k VALUES (3, 'block')").close();
        exec(db, "INSERT INTO k VALUES (4, 'outside')");
        tx.commit();
      }
      assertThat(Rows.of(db, "SELECT id, v FROM k ORDER BY id")).containsExactly("1|a", "2|outside", "3|block",
          "4|outside");
    }
  }

  /** TRUNCATE, MERGE and INSERT ... ON CONFLICT inside one block, folded into one commit. */
  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void truncateMergeAndUpsertInOneBlock(int version) {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE m (id int PRIMARY KEY, v int)" + props(version));
      exec(db, "CREATE TABLE src (id int, v int)");
      exec(db, "INSERT INTO m SELECT i, i FROM range(0, 20) r(i)");
      exec(db, "INSERT INTO src VALUES (1, 100), (50, 500)");
      try (Transaction tx = db.begin()) {
        tx.sql("TRUNCATE m").close();
        tx.sql("INSERT INTO m VALUES (1, 1), (2, 2)").close();
        tx.sql("MERGE INTO m USING src ON m.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v "
            + "WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.v)").close();
        tx.sql("INSERT INTO m VALUES (2, 20), (3, 3) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v").close();
        assertThat(Rows.of(tx, "SELECT id, v FROM m ORDER BY id")).containsExactly("1|100", "2|20", "3|3", "50|500");
        assertThat(Rows.of(db, "SELECT count(*) FROM m")).containsExactly("20");
        tx.commit();
      }
      assertThat(Rows.of(db, "SELECT id, v FROM m ORDER BY id")).containsExactly("1|100", "2|20", "3|3", "50|500");
      assertThat(Rows.of(db, "SELECT count(*) FROM \"m$snapshots\"")).containsExactly("2");
    }
  }

  @Test
  void concurrentAppendsDoNotConflict() {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE e (id int)");
      try (Transaction tx = db.begin()) {
        tx.sql("INSERT INTO e VALUES (1)").close();
        exec(db, "INSERT INTO e VALUES (2)");
        tx.sql("INSERT INTO e VALUES (3)").close();
        tx.commit();
      }
      try (Transaction tx = db.begin()) { // one statement, and a commit since: folded onto it
        tx.sql("INSERT INTO e VALUES (4)").close();
        exec(db, "INSERT INTO e VALUES (5)");
        tx.commit();
      }
      try (Transaction tx = db.begin()) { // one statement, nothing since: its own snapshot is committed
        tx.sql("INSERT INTO e VALUES (6)").close();
        tx.commit();
      }
      assertThat(Rows.of(db, "SELECT id FROM e ORDER BY id")).containsExactly("1", "2", "3", "4", "5", "6");
    }
  }

  @Test
  void savepointsUndoPartOfABlock() {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE s (id int) WITH (format_version = 3)");
      exec(db, "INSERT INTO s VALUES (0)");
      try (Transaction tx = db.begin()) {
        tx.sql("INSERT INTO s VALUES (1)").close();
        tx.savepoint("a");
        tx.sql("INSERT INTO s VALUES (2)").close();
        tx.sql("DELETE FROM s WHERE id = 0").close();
        tx.savepoint("b");
        tx.sql("INSERT INTO s VALUES (4)").close();
        tx.rollbackToSavepoint("a");
        assertThat(Rows.of(tx, "SELECT id FROM s ORDER BY id")).containsExactly("0", "1");
        tx.sql("INSERT INTO s VALUES (3)").close();
        assertThatThrownBy(() -> tx.rollbackToSavepoint("b")).isInstanceOf(FloeException.class)
            .hasMessageContaining("savepoint \"b\" does not exist");
        tx.commit();
      }
      assertThat(Rows.of(db, "SELECT id FROM s ORDER BY id")).containsExactly("0", "1", "3");
    }
  }

  private static String tag(Session s, String sql) {
    try (Result r = s.sql(sql)) {
      return r.commandTag();
    }
  }

  private static String state(Runnable r) {
    try {
      r.run();
      return "ok";
    } catch (FloeException e) {
      return e.sqlState();
    }
  }

  /** The statements as SQL, and PostgreSQL's failed-block state: 25P02 until ROLLBACK (TO SAVEPOINT). */
  @Test
  void transactionStatementsAsSqlAndTheFailedBlock() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      exec(db, "CREATE TABLE q (id int)");
      assertThat(tag(s, "BEGIN")).isEqualTo("BEGIN");
      s.sql("INSERT INTO q VALUES (1)").close();
      assertThat(tag(s, "SAVEPOINT a")).isEqualTo("SAVEPOINT");
      s.sql("INSERT INTO q VALUES (2)").close();
      assertThat(state(() -> s.sql("SELECT 1/0").close())).isEqualTo("22012");
      assertThat(state(() -> s.sql("SELECT 1").close())).isEqualTo(SqlState.IN_FAILED_SQL_TRANSACTION);
      assertThat(tag(s, "ROLLBACK TO SAVEPOINT a")).isEqualTo("ROLLBACK");
      s.sql("INSERT INTO q VALUES (3)").close();
      assertThat(Rows.of(db, "SELECT count(*) FROM q")).containsExactly("0");
      assertThat(tag(s, "COMMIT")).isEqualTo("COMMIT");
      assertThat(Rows.of(db, "SELECT id FROM q ORDER BY id")).containsExactly("1", "3");

      s.sql("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").close();
      assertThat(state(() -> s.sql("INSERT INTO q VALUES (4)").close())).isEqualTo(SqlState.READ_ONLY_SQL_TRANSACTION);
      assertThat(tag(s, "ROLLBACK")).isEqualTo("ROLLBACK");

      s.sql("BEGIN WORK").close();
      s.sql("INSERT INTO q VALUES (5)").close();
      assertThat(state(() -> s.sql("SELECT nope FROM q").close())).isEqualTo("42703");
      assertThat(tag(s, "END")).isEqualTo("ROLLBACK"); // a failed block's COMMIT rolls it back
      assertThat(Rows.of(db, "SELECT count(*) FROM q")).containsExactly("2");

      assertThat(tag(s, "COMMIT")).isEqualTo("COMMIT"); // outside a block: a notice, nothing else
      // Database.sql runs each statement on a session of its own: a block cannot start there
      assertThat(state(() -> db.sql("BEGIN").close())).isEqualTo(SqlState.FEATURE_NOT_SUPPORTED);
      assertThat(Rows.of(db, "SELECT count(*) FROM q")).containsExactly("2");
      assertThat(state(() -> s.sql("SAVEPOINT x").close())).isEqualTo(SqlState.NO_ACTIVE_SQL_TRANSACTION);
      assertThat(state(() -> s.sql("BEGIN ISOLATION LEVEL SOMETIMES").close())).isEqualTo("42601");
    }
  }

  @Test
  void ddlAfterWritesAndWritesInAReadOnlyBlockAreRefused() {
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE d (id int)");
      try (Transaction tx = db.begin()) {
        tx.sql("CREATE TABLE d2 (id int)").close(); // runs at once; the block sees it
        tx.sql("INSERT INTO d2 VALUES (1)").close();
        tx.sql("CREATE TABLE d3 (id int)").close(); // a table the block has not written: at once too
        tx.sql("INSERT INTO d3 VALUES (3)").close();
        assertThat(Rows.of(db, "SELECT count(*) FROM d3")).containsExactly("0");
        tx.commit();
      }
      assertThat(Rows.of(db, "SELECT (SELECT id FROM d2), (SELECT id FROM d3)")).containsExactly("1|3");
      try (Transaction tx = db.begin()) {
        tx.sql("INSERT INTO d2 VALUES (2)").close();
        // DDL on a table the block changed would commit beside changes it may roll back
        assertThatThrownBy(() -> tx.sql("ALTER TABLE d2 ADD COLUMN x int")).isInstanceOf(FloeException.class)
            .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo(SqlState.FEATURE_NOT_SUPPORTED));
        // the error failed the block, as any error does: its COMMIT rolls it back
        assertThatThrownBy(tx::commit).isInstanceOf(FloeException.class)
            .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo(SqlState.IN_FAILED_SQL_TRANSACTION));
      }
      assertThat(Rows.of(db, "SELECT count(*) FROM d2")).containsExactly("1");
      try (Transaction tx = db.begin()) {
        tx.sql("INSERT INTO d VALUES (5)").close();
        tx.sql("ALTER TABLE d2 ADD COLUMN x int").close(); // not written by this block: at once
        tx.sql("INSERT INTO d2 VALUES (7, 8)").close(); // the block sees the new column
        tx.commit();
      }
      assertThat(Rows.of(db, "SELECT count(*), max(x) FROM d2")).containsExactly("2|8");
      try (Transaction tx = db.beginReadOnly()) {
        assertThatThrownBy(() -> tx.sql("INSERT INTO d VALUES (1)")).isInstanceOf(FloeException.class)
            .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo(SqlState.READ_ONLY_SQL_TRANSACTION));
      }
      assertThat(Rows.of(db, "SELECT count(*) FROM d")).containsExactly("1"); // the 5 from the block above
    }
  }
}
