package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.IcebergClients;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A table with a keyed tail (a tail and a primary key): INSERT, UPDATE, DELETE and ON CONFLICT are
 * versions of keys in the log, every read sees the newest version of each key, and a seal folds them
 * into the table in one commit with position deletes, which Iceberg's own reader reads.
 */
class KeyedTailTest {
  @TempDir
  Path dir;

  private static List<String> rows(Database db, String sql) {
    return dev.floe.testing.Rows.of(db, sql);
  }

  private static List<String> rows(Session s, String sql) {
    return dev.floe.testing.Rows.of(s, sql);
  }

  private static String tag(Session s, String sql) {
    try (Result r = s.sql(sql)) {
      return r.commandTag();
    }
  }

  private static String tag(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      return r.commandTag();
    }
  }

  /** The table as Iceberg's generic reader reads it: "id|bal" sorted, and whether any delete is an equality delete. */
  private List<String> iceberg(String table) throws Exception {
    return iceberg(table, "bal");
  }

  /** "id|column" as Iceberg's generic reader reads the table (which has no equality delete). */
  private List<String> iceberg(String table, String column) throws Exception {
    return IcebergClients.idAnd(dir, table, column);
  }


  @Test
  void keyedChangesAreVersionsReadNewestAndFoldedBySeal() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE acc (id bigint PRIMARY KEY, bal bigint, note text) WITH (tail = true)").close();
      assertThat(tag(db, "INSERT INTO acc VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')")).isEqualTo("INSERT 0 3");
      assertThat(tag(db, "UPDATE acc SET bal = bal + 1 WHERE id = 2")).isEqualTo("UPDATE 1");
      assertThat(tag(db, "DELETE FROM acc WHERE id = 3")).isEqualTo("DELETE 1");
      assertThat(tag(db, "UPDATE acc SET bal = 0 WHERE id = 3")).isEqualTo("UPDATE 0");
      assertThat(rows(db, "SELECT id, bal, note FROM acc ORDER BY id")).containsExactly("1|10|a", "2|21|b");
      // nothing has been committed to the table: the statements are versions in the log
      assertThat(db.table("acc").snapshots()).isEmpty();

      Log log = db.openLog("acc");
      log.seal(true);
      assertThat(db.table("acc").snapshots()).hasSize(1);
      assertThat(rows(db, "SELECT id, bal, note FROM acc ORDER BY id")).containsExactly("1|10|a", "2|21|b");
      assertThat(iceberg("acc")).containsExactly("1|10", "2|21");

      // versions over sealed rows: the seal deletes the rows they replace by position
      db.sql("UPDATE acc SET bal = bal * 10 WHERE id = 1").close();
      db.sql("DELETE FROM acc WHERE id = 2").close();
      db.sql("INSERT INTO acc VALUES (3, 33, 'again'), (4, 40, 'd')").close();
      db.sql("INSERT INTO acc VALUES (4, 1, 'x'), (5, 50, 'e') ON CONFLICT (id) DO UPDATE SET bal = acc.bal + excluded.bal")
          .close();
      db.sql("INSERT INTO acc VALUES (1, 0, 'no') ON CONFLICT DO NOTHING").close();
      List<String> expected = List.of("1|100|a", "3|33|again", "4|41|d", "5|50|e");
      assertThat(rows(db, "SELECT id, bal, note FROM acc ORDER BY id")).isEqualTo(expected);
      assertThat(rows(db, "SELECT bal FROM acc WHERE id = 4")).containsExactly("41");
      assertThat(rows(db, "SELECT count(*), sum(bal) FROM acc")).containsExactly("4|224");
      log.seal(true);
      assertThat(db.table("acc").snapshots()).hasSize(2);
      assertThat(rows(db, "SELECT id, bal, note FROM acc ORDER BY id")).isEqualTo(expected);
      assertThat(iceberg("acc")).containsExactly("1|100", "3|33", "4|41", "5|50");
      // time travel reads a sealed version
      long first = db.table("acc").snapshots().get(0).snapshotId();
      assertThat(rows(db, "SELECT id, bal FROM acc FOR VERSION AS OF " + first + " ORDER BY id"))
          .containsExactly("1|10", "2|21");

      // unsealed versions survive a restart
      db.sql("UPDATE acc SET bal = -1 WHERE id = 5").close();
    }
    try (Database db = Floe.open(dir)) {
      assertThat(rows(db, "SELECT id, bal FROM acc ORDER BY id")).containsExactly("1|100", "3|33", "4|41", "5|-1");
    }
  }

  @Test
  void theKeyIsUniqueAcrossTheLogAndTheFiles() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE k (id int PRIMARY KEY, v text) WITH (tail = true)").close();
      db.sql("INSERT INTO k VALUES (1, 'sealed')").close();
      db.openLog("k").seal(true);
      db.sql("INSERT INTO k VALUES (2, 'unsealed')").close();
      for (String dup : List.of("INSERT INTO k VALUES (1, 'x')", "INSERT INTO k VALUES (2, 'x')",
          "INSERT INTO k VALUES (3, 'x'), (3, 'y')", "UPDATE k SET id = 2 WHERE id = 1")) {
        assertThatThrownBy(() -> db.sql(dup).close()).as(dup)
            .hasFieldOrPropertyWithValue("sqlState", SqlState.UNIQUE_VIOLATION);
      }
      assertThatThrownBy(() -> db.sql("INSERT INTO k VALUES (NULL, 'x')").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.NOT_NULL_VIOLATION);
      assertThatThrownBy(() -> db.sql("UPDATE k SET _offset = 5 WHERE id = 1").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.GENERATED_ALWAYS);
      // a key deleted (in the files or the log) can be inserted again; a key's change moves it
      db.sql("DELETE FROM k WHERE id IN (1, 2)").close();
      db.sql("INSERT INTO k VALUES (1, 'new'), (2, 'new')").close();
      db.sql("UPDATE k SET id = id + 10").close();
      assertThat(rows(db, "SELECT id, v FROM k ORDER BY id")).containsExactly("11|new", "12|new");
      db.openLog("k").seal(true);
      assertThat(rows(db, "SELECT id, v FROM k ORDER BY id")).containsExactly("11|new", "12|new");
      db.sql("TRUNCATE k").close();
      assertThat(rows(db, "SELECT count(*) FROM k")).containsExactly("0");
    }
  }

  /** One-key UPDATEs and DELETEs (decided in the JVM) end as the same statements on a table without a tail. */
  @Test
  void oneKeyChangesMatchAPlainTable() {
    try (Database db = Floe.open(dir)) {
      String columns = "(id int PRIMARY KEY, s smallint, n int, b bigint, v varchar(3), nn int NOT NULL)";
      db.sql("CREATE TABLE plain " + columns).close();
      db.sql("CREATE TABLE keyed " + columns + " WITH (tail = true)").close();
      for (String t : List.of("plain", "keyed")) {
        db.sql("INSERT INTO " + t + " VALUES (1, 32767, 2147483647, 9223372036854775807, 'a', 1), "
            + "(2, -32768, -2147483648, -9223372036854775808, NULL, 2), (3, 0, 0, 0, 'c', 3), (4, NULL, NULL, NULL, "
            + "'d', 4)").close();
      }
      db.openLog("keyed").seal(true);
      List<String> statements = List.of(
          "UPDATE %s SET s = s + 1 WHERE id = 1", "UPDATE %s SET n = n + 1 WHERE id = 1",
          "UPDATE %s SET b = b + 1 WHERE id = 1", "UPDATE %s SET s = s - 1 WHERE id = 2",
          "UPDATE %s SET b = b - 1 WHERE id = 2", "UPDATE %s SET v = 'abcd' WHERE id = 3",
          "UPDATE %s SET nn = NULL WHERE id = 3", "UPDATE %s SET n = n + 1 WHERE id = 4",
          "UPDATE %s SET s = s - 7, v = 'ab', nn = nn + 10 WHERE id = 3", "UPDATE %s SET n = '7' WHERE id = '3'",
          "UPDATE %s SET n = n + '5'::int4, b = 12 WHERE 3 = id", "UPDATE %s AS x SET b = x.b - 2 WHERE x.id = 3",
          "UPDATE %s SET n = n + 1 WHERE id = 99", "UPDATE %s SET id = 5 WHERE id = 4",
          "DELETE FROM %s WHERE id = 2", "DELETE FROM %s WHERE id = 2", "DELETE FROM %s WHERE id = 99",
          "UPDATE %s SET n = n + 1 WHERE id = 2",
          "INSERT INTO %s VALUES (10, 1, 2, 3, 'x', 5)", "INSERT INTO %s VALUES (10, 1, 2, 3, 'x', 5)",
          "INSERT INTO %s (id, nn) VALUES (11, 1)", "INSERT INTO %s (id) VALUES (12)",
          "INSERT INTO %s VALUES (13, 1, 2, 3, 'toolong', 5)", "INSERT INTO %s VALUES ('15', '1', '2', '3', 'w', '8')",
          "INSERT INTO %1$s VALUES (10, 1, 2, 3, 'y', 6) ON CONFLICT (id) DO UPDATE SET nn = %1$s.nn + excluded.nn, "
              + "v = excluded.v",
          "INSERT INTO %s VALUES (14, 1, 2, 3, 'z', 7) ON CONFLICT (id) DO UPDATE SET nn = excluded.nn",
          "INSERT INTO %s VALUES (10, 1, 2, 3, 'q', 6) ON CONFLICT DO NOTHING",
          "INSERT INTO %s AS x VALUES (10, 1, 2, 3, 'q', 6) ON CONFLICT (id) DO UPDATE SET b = x.b - 1",
          "INSERT INTO %1$s VALUES (10, 32767, 2, 3, 'q', 6) ON CONFLICT (id) DO UPDATE SET s = %1$s.s + excluded.s",
          "INSERT INTO %1$s VALUES (10, 7, 2, 3, 'q', 6) ON CONFLICT (id) DO UPDATE SET s = %1$s.s - 1, n = 4");
      for (String st : statements) {
        List<String> outcomes = new ArrayList<>();
        for (String t : List.of("plain", "keyed")) {
          try (Result r = db.sql(String.format(st, t))) {
            outcomes.add(r.commandTag());
          } catch (FloeException e) {
            // (the DETAIL's failing row differs: the keyed table has one more column, _offset)
            outcomes.add(e.sqlState() + " " + e.getMessage().replace(t, "T"));
          }
        }
        assertThat(outcomes.get(1)).as(st).isEqualTo(outcomes.get(0));
        assertThat(rows(db, "SELECT id, s, n, b, v, nn FROM keyed ORDER BY id")).as(st)
            .isEqualTo(rows(db, "SELECT id, s, n, b, v, nn FROM plain ORDER BY id"));
      }
    }
  }

  /** Seals add deletes to earlier files at every window; compaction merges them without their deleted rows. */
  @Test
  void compactionMergesSealedFilesWithTheirDeletes() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE acc (id bigint PRIMARY KEY, bal bigint) WITH (tail = true)").close();
      db.sql("INSERT INTO acc SELECT i, 0 FROM range(1, 201) t(i)").close();
      Log log = db.openLog("acc");
      log.seal(true);
      java.util.Random r = new java.util.Random(3);
      for (int window = 0; window < 6; window++) {
        for (int i = 0; i < 20; i++) {
          db.sql("UPDATE acc SET bal = bal + 1 WHERE id = " + (1 + r.nextInt(200))).close();
        }
        db.sql("DELETE FROM acc WHERE id = " + (1 + r.nextInt(200))).close();
        log.seal(true);
      }
      List<String> before = rows(db, "SELECT id, bal FROM acc ORDER BY id");
      List<String> beforeIceberg = iceberg("acc");
      assertThat(rows(db, "SELECT count(*) FROM \"acc$files\" WHERE content = 0")).containsExactly("7");
      assertThat(log.compact(true)).isEqualTo(7);
      assertThat(rows(db, "SELECT count(*) FROM \"acc$files\"")).containsExactly("1"); // no delete file left
      assertThat(rows(db, "SELECT id, bal FROM acc ORDER BY id")).isEqualTo(before);
      assertThat(iceberg("acc")).isEqualTo(beforeIceberg);
    }
  }

  /** RETURNING gives each new version's offset, the one the row then reads with. */
  @Test
  void returningGivesTheOffsetsOfTheNewVersions() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE acc (id bigint PRIMARY KEY, bal bigint NOT NULL) WITH (tail = true)").close();
      List<String> inserted = rows(db, "INSERT INTO acc VALUES (1, 10), (2, 20), (3, 30) RETURNING id, _offset");
      assertThat(inserted).hasSize(3).doesNotContainNull().allSatisfy(r -> assertThat(r).doesNotContain("null"));
      assertThat(inserted).containsExactlyInAnyOrderElementsOf(rows(db, "SELECT id, _offset FROM acc"));

      List<String> updated = rows(db, "UPDATE acc SET bal = bal + 1 WHERE id >= 2 RETURNING id, bal, _offset");
      assertThat(updated).hasSize(2).containsExactlyInAnyOrderElementsOf(
          rows(db, "SELECT id, bal, _offset FROM acc WHERE id >= 2"));
      // new versions, numbered after the inserts' offsets 0, 1 and 2
      assertThat(rows(db, "SELECT count(*) FROM acc WHERE id >= 2 AND _offset > 2")).containsExactly("2");

      List<String> upserted = rows(db, "INSERT INTO acc VALUES (3, 0), (4, 40) ON CONFLICT (id) DO UPDATE "
          + "SET bal = excluded.bal RETURNING id, bal, _offset");
      assertThat(upserted).hasSize(2).containsExactlyInAnyOrderElementsOf(
          rows(db, "SELECT id, bal, _offset FROM acc WHERE id >= 3"));
      // a statement whose RETURNING fails appends nothing
      long before = Long.parseLong(rows(db, "SELECT max(_offset) FROM acc").get(0));
      assertThatThrownBy(() -> db.sql("INSERT INTO acc VALUES (5, 1) RETURNING 1 / 0").close())
          .isInstanceOf(FloeException.class);
      assertThat(rows(db, "SELECT count(*) FROM acc WHERE id = 5")).containsExactly("0");
      assertThat(Long.parseLong(rows(db, "SELECT max(_offset) FROM acc").get(0))).isEqualTo(before);
    }
  }

  @Test
  void aBlockChangesKeysAsItsOwnVersionsAndAppendsThemAtCommit() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect(); Session other = db.connect()) {
      db.sql("CREATE TABLE k (id int PRIMARY KEY, v text, n int) WITH (tail = true)").close();
      db.sql("INSERT INTO k VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)").close();
      db.openLog("k").seal(true);
      db.sql("UPDATE k SET n = 21 WHERE id = 2").close(); // an unsealed version under the block's
      s.sql("BEGIN").close();
      assertThat(tag(s, "UPDATE k SET n = n + 1 WHERE id = 1")).isEqualTo("UPDATE 1");
      assertThat(tag(s, "UPDATE k SET n = n + 1 WHERE id = 2")).isEqualTo("UPDATE 1");
      assertThat(tag(s, "DELETE FROM k WHERE id = 3")).isEqualTo("DELETE 1");
      assertThat(tag(s, "INSERT INTO k VALUES (4, 'd', 40)")).isEqualTo("INSERT 0 1");
      assertThat(tag(s, "INSERT INTO k VALUES (5, 'e', 50), (6, 'f', 60)")).isEqualTo("INSERT 0 2");
      assertThat(tag(s, "INSERT INTO k VALUES (1, 'x', 0) ON CONFLICT (id) DO UPDATE SET n = k.n * 100"))
          .isEqualTo("INSERT 0 1");
      s.sql("SAVEPOINT a").close();
      assertThatThrownBy(() -> s.sql("INSERT INTO k VALUES (4, 'dup', 0)").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.UNIQUE_VIOLATION);
      s.sql("ROLLBACK TO SAVEPOINT a").close();
      s.sql("SAVEPOINT b").close();
      s.sql("UPDATE k SET v = 'gone' WHERE id >= 5").close();
      s.sql("DELETE FROM k WHERE id = 6").close();
      assertThat(rows(s, "SELECT id, v FROM k WHERE id >= 5 ORDER BY id")).containsExactly("5|gone");
      s.sql("ROLLBACK TO SAVEPOINT b").close();
      List<String> mine = List.of("1|a|1100", "2|b|22", "4|d|40", "5|e|50", "6|f|60");
      // the block reads its own versions, by SQL and by key; nobody else sees them
      assertThat(rows(s, "SELECT id, v, n FROM k ORDER BY id")).isEqualTo(mine);
      assertThat(rows(s, "SELECT n FROM k WHERE id = 1")).containsExactly("1100");
      assertThat(rows(s, "SELECT n FROM k WHERE id = 3")).isEmpty();
      assertThat(rows(s, "SELECT count(*), sum(n) FROM k")).containsExactly("5|1272");
      assertThat(rows(other, "SELECT id, v, n FROM k ORDER BY id")).containsExactly("1|a|10", "2|b|21", "3|c|30");
      assertThat(rows(other, "SELECT n FROM k WHERE id = 1")).containsExactly("10");
      // a seal meanwhile changes nothing for the block
      db.openLog("k").seal(true);
      assertThat(rows(s, "SELECT id, v, n FROM k ORDER BY id")).isEqualTo(mine);
      s.sql("COMMIT").close();
      assertThat(rows(db, "SELECT id, v, n FROM k ORDER BY id")).isEqualTo(mine);
      assertThat(rows(other, "SELECT n FROM k WHERE id = 3")).isEmpty();
      db.openLog("k").seal(true);
      assertThat(iceberg("k", "n")).containsExactly("1|1100", "2|22", "4|40", "5|50", "6|60");
      assertThat(rows(db, "SELECT id, v, n FROM k ORDER BY id")).isEqualTo(mine);
    }
    try (Database db = Floe.open(dir)) {
      assertThat(rows(db, "SELECT id, n FROM k ORDER BY id")).containsExactly("1|1100", "2|22", "4|40", "5|50", "6|60");
    }
  }

  @Test
  void aBlockThatChangedAKeyAnotherChangedSinceFailsAtCommit() {
    try (Database db = Floe.open(dir); Session s = db.connect(); Session t = db.connect()) {
      db.sql("CREATE TABLE k (id int PRIMARY KEY, n int) WITH (tail = true)").close();
      db.sql("INSERT INTO k VALUES (1, 0), (2, 0), (3, 0)").close();
      // different keys: both commit
      s.sql("BEGIN").close();
      t.sql("BEGIN").close();
      s.sql("UPDATE k SET n = n + 1 WHERE id = 1").close();
      t.sql("UPDATE k SET n = n + 1 WHERE id = 2").close();
      db.sql("UPDATE k SET n = n + 1 WHERE id = 3").close();
      s.sql("COMMIT").close();
      t.sql("COMMIT").close();
      assertThat(rows(db, "SELECT id, n FROM k ORDER BY id")).containsExactly("1|1", "2|1", "3|1");
      // the same key: the first to commit wins, the other fails and changes nothing
      s.sql("BEGIN").close();
      t.sql("BEGIN").close();
      s.sql("UPDATE k SET n = n + 10 WHERE id = 1").close();
      s.sql("UPDATE k SET n = n + 10 WHERE id = 2").close();
      t.sql("DELETE FROM k WHERE id = 1").close();
      t.sql("COMMIT").close();
      assertThatThrownBy(() -> s.sql("COMMIT").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.SERIALIZATION_FAILURE);
      assertThat(rows(db, "SELECT id, n FROM k ORDER BY id")).containsExactly("2|1", "3|1");
      // an autocommit change of the key, sealed before the COMMIT, counts as well
      s.sql("BEGIN").close();
      s.sql("INSERT INTO k VALUES (1, 5)").close();
      db.sql("INSERT INTO k VALUES (1, 7)").close();
      db.openLog("k").seal(true);
      assertThatThrownBy(() -> s.sql("COMMIT").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.SERIALIZATION_FAILURE);
      // and so does a TRUNCATE, which removed the rows the block changed
      s.sql("BEGIN").close();
      s.sql("UPDATE k SET n = 99 WHERE id = 2").close();
      db.sql("TRUNCATE k").close();
      assertThatThrownBy(() -> s.sql("COMMIT").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.SERIALIZATION_FAILURE);
      assertThat(rows(db, "SELECT count(*) FROM k")).containsExactly("0");
      // a block that changed nothing commits whatever happened
      s.sql("BEGIN").close();
      s.sql("UPDATE k SET n = 1 WHERE id = 42").close();
      db.sql("INSERT INTO k VALUES (42, 0)").close();
      s.sql("COMMIT").close();
      assertThat(rows(db, "SELECT n FROM k WHERE id = 42")).containsExactly("0");
    }
  }

  @Test
  void aBlockChangingAKeyedTableChangesNothingElse() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      db.sql("CREATE TABLE k (id int PRIMARY KEY, n int) WITH (tail = true)").close();
      db.sql("CREATE TABLE k2 (id int PRIMARY KEY, n int) WITH (tail = true)").close();
      db.sql("CREATE TABLE plain (id int, n int)").close();
      db.sql("CREATE TABLE events (id int) WITH (tail = true)").close();
      for (String second : List.of("INSERT INTO k2 VALUES (1, 1)", "INSERT INTO plain VALUES (1, 1)",
          "INSERT INTO events VALUES (1)")) {
        s.sql("BEGIN").close();
        s.sql("INSERT INTO k VALUES (1, 1)").close();
        assertThatThrownBy(() -> s.sql(second).close()).as(second)
            .hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);
        s.sql("ROLLBACK").close();
        s.sql("BEGIN").close();
        s.sql(second).close();
        assertThatThrownBy(() -> s.sql("INSERT INTO k VALUES (1, 1)").close()).as(second)
            .hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);
        s.sql("ROLLBACK").close();
      }
      s.sql("BEGIN READ ONLY").close();
      assertThatThrownBy(() -> s.sql("UPDATE k SET n = 2 WHERE id = 1").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.READ_ONLY_SQL_TRANSACTION);
      s.sql("ROLLBACK").close();
      // a block whose keyed change was rolled back to a savepoint may write elsewhere
      s.sql("BEGIN").close();
      s.sql("SAVEPOINT a").close();
      s.sql("INSERT INTO k VALUES (1, 1)").close();
      s.sql("ROLLBACK TO SAVEPOINT a").close();
      s.sql("INSERT INTO plain VALUES (2, 2)").close();
      s.sql("COMMIT").close();
      assertThat(rows(db, "SELECT count(*) FROM k")).containsExactly("0");
      assertThat(rows(db, "SELECT id FROM plain")).containsExactly("2");
      // a keyless tail's rows are still not changed in a block
      s.sql("BEGIN").close();
      assertThatThrownBy(() -> s.sql("DELETE FROM events").close())
          .hasFieldOrPropertyWithValue("sqlState", SqlState.FEATURE_NOT_SUPPORTED);
      s.sql("ROLLBACK").close();
    }
  }

  @Test
  void concurrentIncrementsOfOneKeyAreOrderedByTheLog() throws Exception {
    int threads = 8;
    int each = 50;
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE hot (id int PRIMARY KEY, n bigint) WITH (tail = true)").close();
      db.sql("INSERT INTO hot VALUES (1, 0), (2, 0)").close();
      ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          try (Session s = db.connect()) {
            for (int i = 0; i < each; i++) {
              s.sql("UPDATE hot SET n = n + 1 WHERE id = 1").close();
            }
          }
          return null;
        }));
      }
      done.add(pool.submit(() -> {
        Log log = db.openLog("hot");
        for (int i = 0; i < 20; i++) {
          log.seal(true);
          Thread.sleep(5);
        }
        return null;
      }));
      for (Future<?> f : done) {
        f.get();
      }
      pool.shutdown();
      assertThat(rows(db, "SELECT id, n FROM hot ORDER BY id")).containsExactly("1|" + threads * each, "2|0");
      db.openLog("hot").seal(true);
      assertThat(rows(db, "SELECT id, n FROM hot ORDER BY id")).containsExactly("1|" + threads * each, "2|0");
    }
  }
}
