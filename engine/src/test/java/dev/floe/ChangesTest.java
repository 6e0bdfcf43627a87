package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.IcebergClients;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Change streams folded into a table (docs/cdc.md), as a user of the embedded API applies them: LWW
 * envelopes with Cassandra's rules, Debezium events, replays that change nothing, and what Iceberg's
 * own reader sees (never an equality delete).
 */
class ChangesTest {
  @TempDir
  Path dir;

  private static List<String> rows(Database db, String sql) {
    return dev.floe.testing.Rows.of(db, sql);
  }

  /** "id|column" as Iceberg's generic reader reads the table (which has no equality delete). */
  private List<String> iceberg(String table, String column) throws Exception {
    return IcebergClients.idAnd(dir, table, column);
  }


  @Test
  void lwwCellsReconcileByTimestampAndReplayChangesNothing() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE u (id bigint PRIMARY KEY, name text, score int)").close();
      Changes c = db.changes("u", Changes.Format.LWW);
      List<String> batch = List.of(
          "{\"key\": {\"id\": 1}, \"ts\": 10, \"insert\": true, \"cells\": {\"name\": \"ann\", \"score\": 5}}",
          "{\"key\": {\"id\": 1}, \"ts\": 30, \"cells\": {\"score\": 7}}",
          "{\"key\": {\"id\": 1}, \"ts\": 20, \"cells\": {\"score\": 6, \"name\": \"anne\"}}", // older score loses
          "{\"key\": {\"id\": 2}, \"ts\": 10, \"cells\": {\"name\": \"bob\"}}",
          "{\"key\": {\"id\": 3}, \"ts\": 10, \"cells\": {\"name\": \"cy\"}}",
          "{\"key\": {\"id\": 3}, \"ts\": 10, \"delete\": true}"); // a tie: the tombstone wins
      Changes.Applied a = c.apply(batch, "b1");
      assertThat(a.committed()).isTrue();
      assertThat(rows(db, "SELECT id, name, score FROM u ORDER BY id")).containsExactly("1|anne|7", "2|bob|null");
      assertThat(c.position()).contains("b1");
      long snapshots = db.table("u").snapshots().size();
      // the same envelopes again, in another order: nothing changes, nothing is committed
      List<String> reversed = new ArrayList<>(batch);
      java.util.Collections.reverse(reversed);
      assertThat(c.apply(reversed).committed()).isFalse();
      assertThat(db.table("u").snapshots()).hasSize((int) snapshots);
      // a late write older than the deletion stays dead; a newer one brings the row back
      c.apply(List.of("{\"key\": {\"id\": 3}, \"ts\": 9, \"cells\": {\"name\": \"late\"}}"));
      assertThat(rows(db, "SELECT count(*) FROM u WHERE id = 3")).containsExactly("0");
      c.apply(List.of("{\"key\": {\"id\": 3}, \"ts\": 11, \"cells\": {\"score\": 1}}"));
      assertThat(rows(db, "SELECT id, name, score FROM u WHERE id = 3")).containsExactly("3|null|1");
      // equal timestamps of two values: the greater wins (Cassandra compares the bytes)
      c.apply(List.of("{\"key\": {\"id\": 2}, \"ts\": 50, \"cells\": {\"name\": \"zed\"}}",
          "{\"key\": {\"id\": 2}, \"ts\": 50, \"cells\": {\"name\": \"abe\"}}"));
      assertThat(rows(db, "SELECT name FROM u WHERE id = 2")).containsExactly("zed");
      // a cell tombstone: the row lives on while another cell or its marker does
      c.apply(List.of("{\"key\": {\"id\": 2}, \"ts\": 60, \"cells\": {\"name\": null}}"));
      assertThat(rows(db, "SELECT count(*) FROM u WHERE id = 2")).containsExactly("0");
      c.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 60, \"cells\": {\"name\": null, \"score\": null}}"));
      assertThat(rows(db, "SELECT id, name, score FROM u WHERE id = 1")).containsExactly("1|null|null"); // marker
      assertThat(iceberg("u", "name")).containsExactly("1|null", "3|null");
    }
  }

  /**
   * Rows the table held before its stream wrote their keys (loaded by INSERT, or written by a statement) count
   * as written before every change: a change of some cells keeps the others, a deletion removes the row, and a
   * write after the deletion brings back only what it writes. The same in a batch folded in Java, in DuckDB
   * scanning, and in DuckDB with the index of keys.
   */
  @Test
  void rowsTheStreamDidNotWriteKeepTheCellsAChangeLeavesOut() {
    String[] paths = {"java", "scan", "index"};
    try (Database db = Floe.open(dir)) {
      for (String path : paths) {
        String t = "pre_" + path;
        db.sql("CREATE TABLE " + t + " (id bigint PRIMARY KEY, name text, score int, note text)").close();
        db.sql("INSERT INTO " + t + " SELECT i, 'n' || i, i, 'note' FROM range(0, 30000) AS r(i)").close();
        Changes lww = db.changes(t, Changes.Format.LWW);
        Changes debezium = db.changes(t, Changes.Format.DEBEZIUM);
        boolean bulk = !path.equals("java");
        try {
          System.setProperty("floe.cdc.bulk-min-events", bulk ? "1" : "1000000000");
          System.setProperty("floe.cdc.index", path.equals("index") ? "always" : "never");
          List<String> batch = new ArrayList<>();
          batch.add("{\"key\": {\"id\": 1}, \"ts\": 10, \"cells\": {\"score\": 100}}");
          batch.add("{\"key\": {\"id\": 2}, \"ts\": 10, \"delete\": true}");
          batch.add("{\"key\": {\"id\": 3}, \"ts\": 10, \"delete\": true}");
          batch.add("{\"key\": {\"id\": 3}, \"ts\": 11, \"cells\": {\"name\": \"back\"}}");
          batch.add("{\"key\": {\"id\": 4}, \"ts\": 10, \"cells\": {\"note\": null}}");
          for (int i = 10; i < 20_000; i++) { // enough keys for the DuckDB path
            batch.add("{\"key\": {\"id\": " + i + "}, \"ts\": 10, \"cells\": {\"score\": -" + i + "}}");
          }
          assertThat(lww.apply(batch).committed()).as(path).isTrue();
          assertThat(rows(db, "SELECT id, name, score, note FROM " + t + " WHERE id < 6 OR id IN (10, 19999, 20000) "
              + "ORDER BY id")).as(path).containsExactly("0|n0|0|note", "1|n1|100|note", "3|back|null|null",
                  "4|n4|4|null", "5|n5|5|note", "10|n10|-10|note", "19999|n19999|-19999|note", "20000|n20000|20000|note");
          // the table's values are older than any change, the stream's own are its state now
          assertThat(lww.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 5, \"cells\": {\"score\": 1, \"name\": "
              + "\"older\"}}", "{\"key\": {\"id\": 1}, \"ts\": 12, \"cells\": {\"note\": \"new\"}}")).committed())
              .as(path).isTrue();
          assertThat(rows(db, "SELECT id, name, score, note FROM " + t + " WHERE id = 1")).as(path)
              .containsExactly("1|older|100|new");
          // a row a statement wrote after the stream began, and a Debezium image with an unchanged TOAST value
          db.sql("INSERT INTO " + t + " VALUES (40000, 'late', 7, 'stmt')").close();
          assertThat(debezium.apply(List.of("{\"op\": \"u\", \"before\": null, \"after\": {\"id\": 40000, "
              + "\"name\": \"__debezium_unavailable_value\", \"score\": 8, \"note\": \"x\"}, \"source\": {\"lsn\": 100}}",
              "{\"op\": \"u\", \"before\": null, \"after\": {\"id\": 29999, \"name\": "
              + "\"__debezium_unavailable_value\", \"score\": 9, \"note\": \"y\"}, \"source\": {\"lsn\": 101}}"))
              .committed()).as(path).isTrue();
          assertThat(rows(db, "SELECT id, name, score, note FROM " + t + " WHERE id IN (29999, 40000) ORDER BY id"))
              .as(path).containsExactly("29999|n29999|9|y", "40000|late|8|x");
        } finally {
          System.clearProperty("floe.cdc.bulk-min-events");
          System.clearProperty("floe.cdc.index");
        }
      }
    }
  }

  @Test
  void rangeAndPartitionDeletionsCoverLateWrites() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE ev (p int, c int, v text, PRIMARY KEY (p, c))").close();
      Changes ch = db.changes("ev", Changes.Format.LWW);
      List<String> writes = new ArrayList<>();
      for (int p = 1; p <= 2; p++) {
        for (int c = 1; c <= 5; c++) {
          writes.add("{\"key\": {\"p\": " + p + ", \"c\": " + c + "}, \"ts\": 10, \"cells\": {\"v\": \"x" + c + "\"}}");
        }
      }
      ch.apply(writes);
      ch.apply(List.of("{\"key\": {\"p\": 1}, \"ts\": 20, \"delete\": {\"from\": {\"c\": 2}, \"to\": {\"c\": 4}, "
          + "\"to_inclusive\": false}}"));
      assertThat(rows(db, "SELECT p, c FROM ev ORDER BY p, c")).containsExactly("1|1", "1|4", "1|5", "2|1", "2|2",
          "2|3", "2|4", "2|5");
      // a late write inside the range and older than it stays dead; outside it, it lands
      ch.apply(List.of("{\"key\": {\"p\": 1, \"c\": 3}, \"ts\": 15, \"cells\": {\"v\": \"late\"}}",
          "{\"key\": {\"p\": 2, \"c\": 9}, \"ts\": 15, \"cells\": {\"v\": \"new\"}}"));
      assertThat(rows(db, "SELECT count(*) FROM ev WHERE p = 1 AND c = 3")).containsExactly("0");
      assertThat(rows(db, "SELECT v FROM ev WHERE p = 2 AND c = 9")).containsExactly("new");
      // a partition deletion
      ch.apply(List.of("{\"key\": {\"p\": 2}, \"ts\": 30, \"delete\": true}"));
      assertThat(rows(db, "SELECT p, c FROM ev ORDER BY p, c")).containsExactly("1|1", "1|4", "1|5");
      ch.apply(List.of("{\"key\": {\"p\": 2, \"c\": 1}, \"ts\": 31, \"cells\": {\"v\": \"back\"}}"));
      assertThat(rows(db, "SELECT p, c, v FROM ev WHERE p = 2")).containsExactly("2|1|back");
      // rows the table had before any stream are older than every write: a deletion covering them removes
      // them, and a stream row newer than the deletion stays
      db.sql("INSERT INTO ev VALUES (3, 1, 'sql'), (3, 2, 'sql'), (4, 1, 'sql')").close();
      ch.apply(List.of("{\"key\": {\"p\": 3, \"c\": 3}, \"ts\": 50, \"cells\": {\"v\": \"stream\"}}"));
      ch.apply(List.of("{\"key\": {\"p\": 3}, \"ts\": 40, \"delete\": true}"));
      assertThat(rows(db, "SELECT p, c, v FROM ev WHERE p >= 3 ORDER BY p, c")).containsExactly("3|3|stream", "4|1|sql");
    }
  }

  @Test
  void debeziumEventsInAnyOrderReachTheSourceState() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE customers (id int PRIMARY KEY, email varchar(40), balance numeric(10,2), born date, "
          + "seen timestamptz)").close();
      Changes c = db.changes("customers", Changes.Format.DEBEZIUM);
      List<String> events = List.of(
          event("r", 100, null, "{\"id\": 1, \"email\": \"a@x\", \"balance\": \"10.50\", \"born\": 7000, "
              + "\"seen\": \"2024-01-02T03:04:05.123456Z\"}"),
          event("c", 200, null, "{\"id\": 2, \"email\": \"b@x\", \"balance\": null, \"born\": null, \"seen\": null}"),
          event("u", 300, "{\"id\": 1}", "{\"id\": 1, \"email\": \"a2@x\", \"balance\": \"11.00\", \"born\": 7000, "
              + "\"seen\": null}"),
          event("u", 400, "{\"id\": 2}", "{\"id\": 3, \"email\": \"b@x\", \"balance\": \"1\", \"born\": null, "
              + "\"seen\": null}"), // a primary key change
          "null", // Kafka's tombstone after a delete
          event("d", 500, "{\"id\": 1}", null));
      List<String> shuffled = new ArrayList<>(events);
      java.util.Collections.shuffle(shuffled, new java.util.Random(7));
      c.apply(shuffled.subList(0, 3));
      c.apply(shuffled.subList(3, shuffled.size()));
      assertThat(rows(db, "SELECT id, email, balance, born, seen FROM customers ORDER BY id"))
          .containsExactly("3|b@x|1.00|null|null");
      c.apply(events); // replayed whole: nothing changes
      assertThat(rows(db, "SELECT id FROM customers ORDER BY id")).containsExactly("3");
      c.apply(List.of(event("c", 600, null, "{\"id\": 1, \"email\": \"again\", \"balance\": null, \"born\": 7000, "
          + "\"seen\": \"2024-01-02T03:04:05.123456Z\"}")));
      assertThat(rows(db, "SELECT id, email, born, seen FROM customers ORDER BY id")).containsExactly(
          "1|again|1989-03-02|2024-01-02T03:04:05.123456Z", "3|b@x|null|null");
      // a truncate deletes every row older than it
      c.apply(List.of("{\"op\": \"t\", \"source\": {\"lsn\": 700}}"));
      assertThat(rows(db, "SELECT count(*) FROM customers")).containsExactly("0");
      c.apply(List.of(event("c", 650, null, "{\"id\": 9, \"email\": \"late\"}")));
      assertThat(rows(db, "SELECT count(*) FROM customers")).containsExactly("0");
      assertThat(iceberg("customers", "email")).isEmpty();
    }
  }

  @Test
  void tombstonesAreForgottenAfterTheGracePeriod() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE g (id int PRIMARY KEY, v int)").close();
      Changes c = db.changes("g", Changes.Format.LWW);
      c.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 10, \"cells\": {\"v\": 1}}",
          "{\"key\": {\"id\": 1}, \"ts\": 20, \"delete\": true}"));
      String state = db.table("g").properties().get("floe.cdc.state");
      assertThat(rows(db, "SELECT count(*) FROM " + state.replace("floe_cdc.", "floe_cdc.\"") + "\""))
          .containsExactly("1"); // the tombstone is kept
      c.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 15, \"cells\": {\"v\": 9}}"));
      assertThat(rows(db, "SELECT count(*) FROM g")).containsExactly("0"); // older than the deletion: dead

      db.sql("ALTER TABLE g SET ('floe.cdc.gc-grace-seconds' = 'soon')").close();
      assertThatThrownBy(() -> db.changes("g", Changes.Format.LWW).apply(List.of(
          "{\"key\": {\"id\": 2}, \"ts\": 1, \"cells\": {\"v\": 1}}")))
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("22023"));
      // a grace of 0: the next batch that touches the key forgets the tombstone, as Cassandra's compaction
      // would, and a write older than the forgotten deletion lands
      db.sql("ALTER TABLE g SET ('floe.cdc.gc-grace-seconds' = '0')").close();
      Thread.sleep(1100);
      Changes again = db.changes("g", Changes.Format.LWW);
      again.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 5, \"delete\": true}"));
      again.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 15, \"cells\": {\"v\": 9}}"));
      assertThat(rows(db, "SELECT id, v FROM g")).containsExactly("1|9");
    }
  }

  @Test
  void aColumnAddedToTheTableJoinsItsStreamAndRenamesKeepTheState() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE a (id int PRIMARY KEY, v int)").close();
      Changes c = db.changes("a", Changes.Format.LWW);
      c.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 10, \"cells\": {\"v\": 1}}"));
      db.sql("ALTER TABLE a ADD COLUMN w text").close();
      assertThatThrownBy(() -> c.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 11, \"cells\": {\"v\": 2}}")))
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("55000"));
      Changes again = db.changes("a", Changes.Format.LWW);
      again.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 12, \"cells\": {\"w\": \"x\"}}",
          "{\"key\": {\"id\": 1}, \"ts\": 9, \"cells\": {\"v\": 0}}")); // older than v's write: loses
      assertThat(rows(db, "SELECT id, v, w FROM a")).containsExactly("1|1|x");
      db.sql("ALTER TABLE a RENAME COLUMN v TO value").close();
      db.changes("a", Changes.Format.LWW).apply(List.of(
          "{\"key\": {\"id\": 1}, \"ts\": 9, \"cells\": {\"value\": 0}}"));
      assertThat(rows(db, "SELECT id, value, w FROM a")).containsExactly("1|1|x"); // the state is by field id
    }
    try (Database ro = Floe.openReadOnly(dir)) {
      assertThatThrownBy(() -> ro.changes("a", Changes.Format.LWW).apply(List.of(
          "{\"key\": {\"id\": 2}, \"ts\": 1, \"cells\": {\"w\": \"y\"}}")))
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("25006"));
    }
  }

  @Test
  void snapshotReadsRankBelowStreamedChangesAndToastPlaceholdersKeepValues() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE s (id int PRIMARY KEY, v text, b bytea)").close();
      Changes c = db.changes("s", Changes.Format.DEBEZIUM);
      // a transaction changed row 1 at LSN 90, before the snapshot's point (100), and committed after it: the
      // snapshot read the old row, the stream brings the change with its smaller LSN, and the change wins
      c.apply(List.of(
          "{\"op\": \"r\", \"after\": {\"id\": 1, \"v\": \"old\", \"b\": \"AAE=\"}, \"source\": {\"lsn\": 100, "
              + "\"snapshot\": \"true\"}}",
          "{\"op\": \"u\", \"before\": {\"id\": 1}, \"after\": {\"id\": 1, \"v\": \"new\", \"b\": \"AAE=\"}, "
              + "\"source\": {\"lsn\": 90, \"snapshot\": \"false\"}}",
          // an incremental snapshot's read is placed in the stream at its own position
          "{\"op\": \"r\", \"after\": {\"id\": 2, \"v\": \"inc\", \"b\": null}, \"source\": {\"lsn\": 300, "
              + "\"snapshot\": \"incremental\"}}",
          "{\"op\": \"u\", \"before\": {\"id\": 2}, \"after\": {\"id\": 2, \"v\": \"older\", \"b\": null}, "
              + "\"source\": {\"lsn\": 250, \"snapshot\": \"false\"}}"));
      assertThat(rows(db, "SELECT id, v FROM s ORDER BY id")).containsExactly("1|new", "2|inc");
      // an unchanged TOAST value arrives as Debezium's placeholder, as text or (bytea) as its base64: kept
      String placeholder = java.util.Base64.getEncoder().encodeToString("__debezium_unavailable_value".getBytes(
          java.nio.charset.StandardCharsets.UTF_8));
      c.apply(List.of("{\"op\": \"u\", \"before\": null, \"after\": {\"id\": 1, \"v\": "
          + "\"__debezium_unavailable_value\", \"b\": \"" + placeholder + "\"}, \"source\": {\"lsn\": 400}}"));
      assertThat(rows(db, "SELECT id, v, octet_length(b) FROM s WHERE id = 1")).containsExactly("1|new|2");
    }
  }

  /**
   * An array column (a text column here: Debezium sends arrays as JSON arrays, kept as their text) whose
   * out-of-line value an update left alone arrives as the array Debezium's PostgreSQL connector makes of its
   * placeholder: the text as the one element (text[]), the uuid of its bytes (uuid[]), or its bytes as
   * numbers (int[], bigint[]). Each keeps the row's value; an array that merely holds such elements is data.
   */
  @Test
  void anUnchangedToastArrayKeepsItsValue() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE arr (id int PRIMARY KEY, tags text, nums text, ids text, n int)").close();
      Changes c = db.changes("arr", Changes.Format.DEBEZIUM);
      c.apply(List.of("{\"op\": \"c\", \"after\": {\"id\": 1, \"tags\": [\"a\", null], \"nums\": [1, 2], "
          + "\"ids\": [\"00000000-0000-0000-0000-000000000001\"], \"n\": 1}, \"source\": {\"lsn\": 10}}"));
      StringBuilder bytes = new StringBuilder();
      for (byte b : "__debezium_unavailable_value".getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
        bytes.append(bytes.length() == 0 ? "" : ", ").append(b);
      }
      String uuid = java.util.UUID.nameUUIDFromBytes("__debezium_unavailable_value".getBytes(
          java.nio.charset.StandardCharsets.UTF_8)).toString();
      c.apply(List.of("{\"op\": \"u\", \"after\": {\"id\": 1, \"tags\": [\"__debezium_unavailable_value\"], "
          + "\"nums\": [" + bytes + "], \"ids\": [\"" + uuid + "\"], \"n\": 2}, \"source\": {\"lsn\": 20}}"));
      assertThat(rows(db, "SELECT id, tags, nums, ids, n FROM arr")).containsExactly(
          "1|[\"a\",null]|[1,2]|[\"00000000-0000-0000-0000-000000000001\"]|2");
      // arrays that only hold such elements among others are values
      c.apply(List.of("{\"op\": \"u\", \"after\": {\"id\": 1, \"tags\": [\"__debezium_unavailable_value\", \"x\"], "
          + "\"nums\": [" + bytes + ", 0], \"ids\": [], \"n\": 3}, \"source\": {\"lsn\": 30}}"));
      assertThat(rows(db, "SELECT tags, nums, ids FROM arr")).containsExactly(
          "[\"__debezium_unavailable_value\",\"x\"]|[" + bytes.toString().replace(" ", "") + ",0]|[]");
    }
  }

  /**
   * PostgreSQL's infinite dates and timestamps, which Debezium sends as the text {@code infinity} or as the
   * largest counts, and any other date or timestamp a Floe table does not store (as an INSERT of one is),
   * fail the batch with 22008, nothing applied: by the tree decoder, and the columnar one leaves them to it.
   */
  @Test
  void anInfiniteOrOutOfRangeDateOrTimestampFailsTheBatch() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE inf (id int PRIMARY KEY, d date, t timestamp, z timestamptz)").close();
      Changes c = db.changes("inf", Changes.Format.DEBEZIUM);
      String[] bad = {"\"d\": 2147483647", "\"d\": -2147483648", "\"d\": \"infinity\"", "\"d\": 9999999999",
          "\"t\": 9223372036854775807", "\"t\": -9223372036854775808", "\"t\": -9223372036832400000",
          "\"t\": \"-infinity\"", "\"z\": \"infinity\"", "\"z\": \"-infinity\"", "\"t\": 92233720368547758070"};
      for (String min : new String[] {"1", "1000000"}) {
        System.setProperty("floe.cdc.bulk-min-events", min); // the columnar decoder first, then the tree decoder alone
        try {
          for (String v : bad) {
            List<String> batch = new ArrayList<>();
            for (int i = 1; i <= 3; i++) {
              batch.add("{\"op\": \"c\", \"after\": {\"id\": " + i + ", " + (i == 2 ? v : "\"d\": 1") + "}, "
                  + "\"source\": {\"lsn\": " + (10 + i) + "}}");
            }
            assertThatThrownBy(() -> c.apply(batch)).as(v).isInstanceOfSatisfying(FloeException.class, e -> {
              assertThat(e.sqlState()).isEqualTo("22008");
              assertThat(e.getMessage()).matches("(date|timestamp) out of range for column \"[dtz]\"");
              assertThat(e.detail().orElse("")).contains("and no infinity");
            });
            assertThat(rows(db, "SELECT count(*) FROM inf")).as(v).containsExactly("0");
          }
        } finally {
          System.clearProperty("floe.cdc.bulk-min-events");
        }
      }
      // the ends of the range are stored
      c.apply(List.of("{\"op\": \"c\", \"after\": {\"id\": 1, \"d\": -2440588, \"t\": -210866803200000000, \"z\": "
          + "9223372036854775806}, \"source\": {\"lsn\": 20}}"));
      assertThat(rows(db, "SELECT d, t, z FROM inf")).containsExactly(
          "-4713-11-24|-4713-11-24T00:00|+294247-01-10T04:00:54.775806Z"); // 4714 BC is -4713 proleptic
    }
  }

  /** A number that does not fit its column fails with 22003 naming the column in the message, not as a hint. */
  @Test
  void aNumberThatDoesNotFitNamesItsColumn() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE fit (id int PRIMARY KEY, i int, s smallint, b bigint, n numeric(4,2))").close();
      Changes c = db.changes("fit", Changes.Format.DEBEZIUM);
      String[][] cases = {{"\"i\": 3000000000", "integer out of range for column \"i\"", null},
          {"\"s\": 40000", "smallint out of range for column \"s\"", null},
          {"\"b\": 92233720368547758070", "bigint out of range for column \"b\"", null},
          {"\"n\": 123.45", "numeric field overflow in column \"n\"",
              "A field with precision 4, scale 2 must round to an absolute value less than 10^2."}};
      for (String[] k : cases) {
        assertThatThrownBy(() -> c.apply(List.of("{\"op\": \"c\", \"after\": {\"id\": 1, " + k[0] + "}, \"source\": "
            + "{\"lsn\": 10}}"))).as(k[0]).isInstanceOfSatisfying(FloeException.class, e -> {
              assertThat(e.sqlState()).isEqualTo("22003");
              assertThat(e.getMessage()).isEqualTo(k[1]);
              assertThat(e.detail().orElse(null)).isEqualTo(k[2]);
              assertThat(e.hint()).isEmpty();
            });
      }
    }
  }

  /**
   * Values PostgreSQL would not take are refused as it refuses them, on both decoders (the columnar one hands
   * what it does not take to the tree decoder, whose error it is), and numbers keep every digit.
   */
  @Test
  void whatPostgresRefusesIsRefusedAndNumbersKeepTheirDigits() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE v (id int PRIMARY KEY, tm time, r real, d double precision, n numeric(30,20), "
          + "m numeric(20,2), b bigint, u uuid)").close();
      Changes c = db.changes("v", Changes.Format.DEBEZIUM);
      String[][] bad = {{"\"tm\": 86400000000", "22008"}, {"\"tm\": -1", "22008"}, {"\"tm\": \"24:00:00\"", "22008"},
          {"\"r\": 3.5e38", "22003"}, {"\"r\": 1e-50", "22003"}, {"\"d\": 1e400", "22003"},
          {"\"b\": \"99999999999999999999\"", "22003"}, {"\"u\": \"1-2-3-4-5\"", "22P02"}};
      for (String min : new String[] {"1", "1000000"}) {
        System.setProperty("floe.cdc.bulk-min-events", min);
        try {
          for (String[] k : bad) {
            List<String> batch = new ArrayList<>();
            for (int i = 1; i <= 3; i++) {
              batch.add("{\"op\": \"c\", \"after\": {\"id\": " + i + (i == 2 ? ", " + k[0] : "") + "}, "
                  + "\"source\": {\"lsn\": " + (10 + i) + "}}");
            }
            assertThatThrownBy(() -> c.apply(batch)).as(k[0]).isInstanceOfSatisfying(FloeException.class,
                e -> assertThat(e.sqlState()).as(k[0] + ": " + e.getMessage()).isEqualTo(k[1]));
            assertThat(rows(db, "SELECT count(*) FROM v")).as(k[0]).containsExactly("0");
          }
          // a second JSON value on the line, or anything after the first, is not one envelope
          for (String line : List.of("{\"op\": \"c\", \"after\": {\"id\": 1}, \"source\": {\"lsn\": 1}} x",
              "{\"op\": \"c\", \"after\": {\"id\": 1}, \"source\": {\"lsn\": 1}}{\"op\": \"c\"}")) {
            assertThatThrownBy(() -> c.apply(List.of(line))).as(line).isInstanceOfSatisfying(FloeException.class, e -> {
              assertThat(e.sqlState()).isEqualTo("22P02");
              assertThat(e.detail().orElse("")).doesNotContain("Source");
            });
          }
          // exact digits, and a negative zero kept (PostgreSQL's float8 -0 comes as -0.0)
          String table = "v" + min;
          db.sql("CREATE TABLE " + table + " (id int PRIMARY KEY, n numeric(30,20), m numeric(20,2), d double "
              + "precision, r real, u uuid)").close();
          assertThat(db.changes(table, Changes.Format.DEBEZIUM).apply(List.of("{\"op\": \"c\", \"after\": {\"id\": 1, "
              + "\"n\": 0.12345678901234567890, \"m\": 12345678901234567.25, \"d\": -0.0, \"r\": 0.1, \"u\": "
              + "\"{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}\"}, \"source\": {\"lsn\": 1}}")).committed()).isTrue();
          assertThat(rows(db, "SELECT n, m, d::text, r, u FROM " + table)).containsExactly("0.12345678901234567890|"
              + "12345678901234567.25|-0.0|0.1|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        } finally {
          System.clearProperty("floe.cdc.bulk-min-events");
        }
      }
      // 0.0 stored, -0.0 at the same timestamp: equal values, and the greater bytes win (Cassandra's order), as
      // the Java fold and DuckDB's merge both have it
      db.sql("CREATE TABLE z (id int PRIMARY KEY, x double precision)").close();
      Changes z = db.changes("z", Changes.Format.LWW);
      z.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 10, \"cells\": {\"x\": 0.0}}",
          "{\"key\": {\"id\": 2}, \"ts\": 10, \"cells\": {\"x\": -0.0}}"));
      System.setProperty("floe.cdc.bulk-min-events", "1");
      try {
        assertThat(z.apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 10, \"cells\": {\"x\": -0.0}}",
            "{\"key\": {\"id\": 2}, \"ts\": 10, \"cells\": {\"x\": 0.0}}")).committed()).isTrue();
      } finally {
        System.clearProperty("floe.cdc.bulk-min-events");
      }
      assertThat(rows(db, "SELECT id, x::text FROM z ORDER BY id")).containsExactly("1|-0.0", "2|-0.0");
      // an LWW flag that is not a boolean
      db.sql("CREATE TABLE f (id int PRIMARY KEY, a int)").close();
      assertThatThrownBy(() -> db.changes("f", Changes.Format.LWW).apply(List.of("{\"key\": {\"id\": 1}, \"ts\": 1, "
          + "\"insert\": \"yes\"}"))).isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo("22023");
            assertThat(e.getMessage()).isEqualTo("invalid change envelope: \"insert\" must be true or false");
          });
      // a state table that does not exist is a table that does not exist
      assertThatThrownBy(() -> db.changes("floe_cdc.nosuch", Changes.Format.LWW)).isInstanceOfSatisfying(
          FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("42P01"));
    }
  }

  @Test
  void aSnapshotStartedOverLeavesNoRowItNoLongerReads() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE m (id int PRIMARY KEY, v text)").close();
      Changes c = db.changes("m", Changes.Format.DEBEZIUM);
      // a snapshot at LSN 100 cut short after two rows; row 2 is deleted before the next start
      c.apply(List.of(read(100, "first", 1, "a"), read(100, "true", 2, "b")));
      assertThat(rows(db, "SELECT id, v FROM m ORDER BY id")).containsExactly("1|a", "2|b");
      // the snapshot started over at LSN 200 reads what is there then, and the stream goes on from there
      c.apply(List.of(read(200, "first", 1, "a2"), read(200, "last", 3, "c"),
          "{\"op\": \"c\", \"before\": null, \"after\": {\"id\": 4, \"v\": \"d\"}, \"source\": {\"lsn\": 250}}"));
      assertThat(rows(db, "SELECT id, v FROM m ORDER BY id")).containsExactly("1|a2", "3|c", "4|d");
      // its events again, in any order: nothing changes
      assertThat(c.apply(List.of(read(200, "last", 3, "c"), read(200, "first", 1, "a2"))).committed()).isFalse();
      assertThat(rows(db, "SELECT id, v FROM m ORDER BY id")).containsExactly("1|a2", "3|c", "4|d");
    }
  }

  @Test
  void aKeyChangeCarriesTheUnchangedToastValuesOfTheOldKey() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE tv (id int PRIMARY KEY, v text, b bytea, n int)").close();
      Changes c = db.changes("tv", Changes.Format.DEBEZIUM);
      String p = "\"__debezium_unavailable_value\"";
      String pb = "\"" + java.util.Base64.getEncoder().encodeToString("__debezium_unavailable_value".getBytes(
          java.nio.charset.StandardCharsets.UTF_8)) + "\"";
      c.apply(List.of(event("c", 10, "null", "{\"id\": 1, \"v\": \"big\", \"b\": \"AAEC\", \"n\": 1}")));
      // the key changes and only n with it: PostgreSQL logs neither TOAST value, the default replica identity
      // gives the old key alone
      List<String> change = List.of(event("u", 20, "{\"id\": 1}", "{\"id\": 2, \"v\": " + p + ", \"b\": " + pb
          + ", \"n\": 2}"));
      c.apply(change);
      assertThat(rows(db, "SELECT id, v, octet_length(b), n FROM tv ORDER BY id")).containsExactly("2|big|3|2");
      assertThat(c.apply(change).committed()).as("a replay").isFalse();
      assertThat(rows(db, "SELECT id, v, octet_length(b), n FROM tv ORDER BY id")).containsExactly("2|big|3|2");
      // inserted and changed in one batch, in order: the batch's own insert is carried
      c.apply(List.of(event("c", 30, "null", "{\"id\": 3, \"v\": \"three\", \"b\": null, \"n\": 3}"),
          event("u", 31, "{\"id\": 3}", "{\"id\": 4, \"v\": " + p + ", \"b\": null, \"n\": 4}")));
      assertThat(rows(db, "SELECT id, v, n FROM tv WHERE id > 2 ORDER BY id")).containsExactly("4|three|4");
      // a value written to the new key after the change wins over the carried one
      c.apply(List.of(event("u", 40, "{\"id\": 2}", "{\"id\": 5, \"v\": " + p + ", \"b\": null, \"n\": 5}"),
          event("u", 41, "{\"id\": 5}", "{\"id\": 5, \"v\": \"newer\", \"b\": null, \"n\": 5}")));
      assertThat(rows(db, "SELECT id, v FROM tv WHERE id = 5")).containsExactly("5|newer");
      // a batch large enough to be decoded in parts: the insert in the first part, the change in the last
      List<String> large = new ArrayList<>();
      large.add(event("c", 100, "null", "{\"id\": 100, \"v\": \"first part\", \"b\": null, \"n\": 0}"));
      for (int i = 0; i < 44_998; i++) {
        large.add(event("c", 101 + i, "null", "{\"id\": " + (1000 + i) + ", \"v\": \"x\", \"b\": null, \"n\": 0}"));
      }
      large.add(event("u", 50_000, "{\"id\": 100}", "{\"id\": 101, \"v\": " + p + ", \"b\": null, \"n\": 1}"));
      c.apply(large);
      assertThat(rows(db, "SELECT id, v FROM tv WHERE id IN (100, 101)")).containsExactly("101|first part");
    }
  }

  private static String read(long lsn, String snapshot, int id, String v) {
    return "{\"op\": \"r\", \"before\": null, \"after\": {\"id\": " + id + ", \"v\": \"" + v + "\"}, "
        + "\"source\": {\"lsn\": " + lsn + ", \"snapshot\": \"" + snapshot + "\"}}";
  }

  static String event(String op, long lsn, String before, String after) {
    return "{\"op\": \"" + op + "\", \"before\": " + before + ", \"after\": " + after + ", \"source\": {\"lsn\": "
        + lsn + ", \"ts_ms\": 0}, \"ts_ms\": 0}";
  }

  @Test
  void mistakesFailTheWholeBatchWithPostgresErrors() {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE k (id int PRIMARY KEY, n smallint NOT NULL, s varchar(3))").close();
      db.sql("CREATE TABLE nokey (id int)").close();
      assertThatThrownBy(() -> db.changes("nokey", Changes.Format.LWW)).isInstanceOf(FloeException.class)
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("55000"));
      assertThatThrownBy(() -> db.changes("missing", Changes.Format.LWW))
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("42P01"));
      db.sql("CREATE VIEW kv AS SELECT * FROM k").close();
      assertThatThrownBy(() -> db.changes("kv", Changes.Format.LWW)).isInstanceOfSatisfying(FloeException.class, e -> {
        assertThat(e.sqlState()).isEqualTo("42809");
        assertThat(e.getMessage()).isEqualTo("\"kv\" is not a table");
      });
      Changes c = db.changes("k", Changes.Format.LWW);
      String ok = "{\"key\": {\"id\": 1}, \"ts\": 1, \"cells\": {\"n\": 1}}";
      record Case(String envelope, String state) {}
      for (Case bad : List.of(new Case("{not json", "22P02"),
          new Case("{\"key\": {\"id\": 2}, \"cells\": {\"n\": 1}}", "22023"),
          new Case("{\"key\": {\"id\": 2}, \"ts\": 1, \"cells\": {\"nope\": 1}}", "42703"),
          new Case("{\"key\": {\"id\": 2}, \"ts\": 1, \"cells\": {\"n\": 70000}}", "22003"),
          new Case("{\"key\": {\"id\": 2}, \"ts\": 1, \"cells\": {\"n\": 1, \"s\": \"long\"}}", "22001"),
          new Case("{\"key\": {\"id\": 2}, \"ts\": 1, \"cells\": {\"n\": \"x\"}}", "22P02"),
          new Case("{\"key\": {\"id\": 2}, \"ts\": 1, \"cells\": {\"s\": \"a\"}}", "23502"),
          new Case("{\"key\": {\"id\": 2}, \"ts\": 1, \"frobs\": 1}", "22023"))) {
        assertThatThrownBy(() -> c.apply(List.of(ok, bad.envelope())))
            .as(bad.envelope()).isInstanceOf(FloeException.class)
            .satisfies(e -> assertThat(((FloeException) e).sqlState()).as(bad.envelope() + ": " + e.getMessage())
                .isEqualTo(bad.state()));
        assertThat(rows(db, "SELECT count(*) FROM k")).containsExactly("0"); // the good one was not applied either
      }
      assertThatThrownBy(() -> db.changes("k", Changes.Format.DEBEZIUM).apply(List.of("{\"op\": \"c\", \"after\": "
          + "{\"id\": 1, \"n\": 1}, \"source\": {\"connector\": \"oracle\", \"scn\": \"5\"}}")))
          .satisfies(e -> assertThat(((FloeException) e).sqlState()).isEqualTo("0A000"));
    }
  }

  @Test
  void aHeartbeatRecordsThePositionAloneAndChangesNoTable() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE q (id bigint PRIMARY KEY, v text)").close();
      Changes c = db.changes("q", Changes.Format.DEBEZIUM);
      // before any batch: the state table is made, and holds the position
      assertThat(c.advance("lsn:1")).isTrue();
      assertThat(c.position()).contains("lsn:1");
      c.apply(List.of("{\"before\": null, \"after\": {\"id\": 1, \"v\": \"a\"}, \"source\": {\"lsn\": 5}, "
          + "\"op\": \"c\"}"), "lsn:5");
      int snapshots = db.table("q").snapshots().size();
      assertThat(c.advance("lsn:9")).isTrue();
      assertThat(c.advance("lsn:9")).as("the position recorded already").isFalse();
      assertThat(c.position()).contains("lsn:9");
      assertThat(db.table("q").snapshots()).as("the table is untouched").hasSize(snapshots);
      String state = db.table("q").properties().get("floe.cdc.state");
      SnapshotInfo mark = db.table(state.replace("floe_cdc.", "floe_cdc.\"") + "\"").snapshots().get(
          db.table(state.replace("floe_cdc.", "floe_cdc.\"") + "\"").snapshots().size() - 1);
      assertThat(mark.summary()).containsEntry("floe.cdc.position", "lsn:9").containsEntry("floe.cdc.changes", "0")
          .doesNotContainKey("added-data-files");
      assertThatThrownBy(() -> c.advance("")).isInstanceOfSatisfying(FloeException.class,
          e -> assertThat(e.sqlState()).isEqualTo("22023"));
    }
    try (Database db = Floe.open(dir)) { // read back after a restart; the rows are as the batch left them
      Changes c = db.changes("q", Changes.Format.DEBEZIUM);
      assertThat(c.position()).contains("lsn:9");
      assertThat(rows(db, "SELECT id, v FROM q")).containsExactly("1|a");
      assertThat(iceberg("q", "v")).containsExactly("1|a");
    }
  }
}
