package dev.floe;

import static dev.floe.testing.Statements.error;
import static dev.floe.testing.Statements.exec;
import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.Rows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * UNIQUE, CHECK and FOREIGN KEY constraints, as an ORM's DDL declares them: enforced on every statement
 * that writes rows (INSERT, UPDATE, MERGE, ON CONFLICT, COPY, DELETE and TRUNCATE of a referenced table),
 * checked against the rows a table has when added, listed in the catalogs, and carried through DROP
 * COLUMN, RENAME COLUMN and DROP TABLE as PostgreSQL carries them. (The error corpus of the server's tests
 * compares the errors with a real PostgreSQL's, word for word.)
 */
class ConstraintsTest {
  @TempDir
  Path dir;



  @Test
  void uniqueConstraintsAreEnforcedOnEveryWriteAndNullsAreDistinct() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      exec(s, "CREATE TABLE users (id int PRIMARY KEY, email text UNIQUE, team int, handle text, "
          + "CONSTRAINT team_handle UNIQUE (team, handle))",
          "INSERT INTO users VALUES (1, 'a@x', 1, 'ann'), (2, 'b@x', 1, 'bob')");
      assertThat(error(s, "INSERT INTO users VALUES (3, 'a@x', 2, 'cy')").detail().orElse(null))
          .isEqualTo("Key (email)=(a@x) already exists.");
      assertThat(error(s, "INSERT INTO users VALUES (3, 'c@x', 2, 'x'), (4, 'c@x', 2, 'y')").getMessage())
          .isEqualTo("duplicate key value violates unique constraint \"users_email_key\"");
      assertThat(error(s, "UPDATE users SET handle = 'ann' WHERE id = 2").detail().orElse(null))
          .isEqualTo("Key (team, handle)=(1, ann) already exists.");
      assertThat(error(s, "MERGE INTO users u USING (SELECT 5 AS id) n ON u.id = n.id WHEN NOT MATCHED THEN "
          + "INSERT VALUES (n.id, 'b@x', 9, 'z')").sqlState()).isEqualTo("23505");
      assertThat(error(s, "INSERT INTO users VALUES (2, 'b@x', 1, 'bob') ON CONFLICT (id) DO UPDATE SET "
          + "email = 'a@x'").sqlState()).isEqualTo("23505");
      // NULLs are distinct; a key that moves to a free value, or swaps within one statement, is fine
      exec(s, "INSERT INTO users VALUES (3, NULL, NULL, NULL), (4, NULL, 1, NULL), (5, NULL, 1, NULL)",
          "UPDATE users SET email = CASE id WHEN 1 THEN 'b@x' ELSE 'a@x' END WHERE id IN (1, 2)",
          "INSERT INTO users VALUES (2, 'q@x', 1, 'bob') ON CONFLICT (id) DO UPDATE SET email = 'z@x'");
      assertThat(Rows.of(s, "SELECT id, email FROM users WHERE id <= 2 ORDER BY id")).containsExactly("1|b@x", "2|z@x");
      // COPY checks as INSERT does, and loads nothing of a file that breaks it
      try (CopyIn copy = s.copyIn("users", List.of())) {
        Files.writeString(copy.file(), "6,new@x,3,u\n7,new@x,3,v\n");
        assertThat(catchFloe(copy::load).sqlState()).isEqualTo("23505");
      }
      assertThat(Rows.of(s, "SELECT count(*) FROM users")).containsExactly("5");
      // a unique index is enforced as a constraint is; creating one over duplicates fails as PostgreSQL's
      assertThat(error(s, "CREATE UNIQUE INDEX ON users (team)").getMessage())
          .isEqualTo("could not create unique index \"users_team_idx\"");
      exec(s, "CREATE UNIQUE INDEX users_handle ON users (handle)");
      assertThat(error(s, "INSERT INTO users VALUES (9, NULL, NULL, 'ann')").getMessage())
          .isEqualTo("duplicate key value violates unique constraint \"users_handle\"");
      // dropped, the constraint no longer holds
      exec(s, "ALTER TABLE users DROP CONSTRAINT users_email_key", "INSERT INTO users VALUES (9, 'a@x', 7, 'k')");
      assertThat(error(s, "ALTER TABLE users DROP CONSTRAINT users_email_key").getMessage())
          .isEqualTo("constraint \"users_email_key\" of relation \"users\" does not exist");
      assertThat(error(s, "ALTER TABLE users ADD UNIQUE (team)").detail().orElse(null))
          .isEqualTo("Key (team)=(1) is duplicated.");
    }
  }

  @Test
  void concurrentInsertsOfOneUniqueValueCommitOnce() {
    try (Database db = Floe.open(dir); Session a = db.connect(); Session b = db.connect()) {
      exec(a, "CREATE TABLE u (id int, email text UNIQUE)");
      a.begin();
      exec(a, "INSERT INTO u VALUES (1, 'same')");
      exec(b, "INSERT INTO u VALUES (2, 'same')"); // commits first
      FloeException lost = catchFloe(() -> {
        a.commit();
        return null;
      });
      assertThat(lost.sqlState()).isEqualTo("40001");
      assertThat(Rows.of(b, "SELECT id FROM u")).containsExactly("2");
    }
  }

  /**
   * The same with a uuid key whose high bit is set, committed in a file whose other key does not have it:
   * Iceberg's bounds of the file (in unsigned order) do not prune the conflict check, which it would get
   * wrong (it compares uuids signed).
   */
  @Test
  void concurrentInsertsOfOneUuidKeyCommitOnce() {
    try (Database db = Floe.open(dir); Session a = db.connect(); Session b = db.connect()) {
      exec(a, "CREATE TABLE u (id uuid PRIMARY KEY, n int)");
      a.begin();
      exec(a, "INSERT INTO u VALUES ('f0000000-0000-0000-0000-000000000001', 1)");
      exec(b, "INSERT INTO u VALUES ('00000000-0000-0000-0000-000000000001', 2), "
          + "('f0000000-0000-0000-0000-000000000001', 2)"); // commits first
      FloeException lost = catchFloe(() -> {
        a.commit();
        return null;
      });
      assertThat(lost).as("the second insert of the key").isNotNull();
      assertThat(lost.sqlState()).isEqualTo("40001");
      assertThat(Rows.of(b, "SELECT count(*), sum(n) FROM u")).containsExactly("2|4");
    }
  }

  @Test
  void checkConstraintsHoldForNewRowsAndFollowTheirColumns() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      exec(s, "CREATE TABLE items (id int PRIMARY KEY, price numeric(8,2) CHECK (price > 0), qty int, "
          + "CHECK (qty BETWEEN 0 AND 100), CONSTRAINT cheap CHECK (price * qty < 1000))",
          "INSERT INTO items VALUES (1, 9.99, 10), (2, NULL, NULL)");
      FloeException e = error(s, "INSERT INTO items VALUES (3, -1, 1)");
      assertThat(e.sqlState()).isEqualTo("23514");
      assertThat(e.getMessage()).isEqualTo("new row for relation \"items\" violates check constraint \"items_price_check\"");
      assertThat(e.detail().orElse(null)).isEqualTo("Failing row contains (3, -1.00, 1).");
      // checked in the order of their names, as PostgreSQL checks them
      assertThat(error(s, "UPDATE items SET qty = 101 WHERE id = 1").getMessage()).contains("\"cheap\"");
      assertThat(error(s, "UPDATE items SET qty = 101, price = 1 WHERE id = 1").getMessage())
          .contains("\"items_qty_check\"");
      assertThat(error(s, "UPDATE items SET qty = 100, price = 20 WHERE id = 1").getMessage()).contains("\"cheap\"");
      assertThat(error(s, "MERGE INTO items t USING (SELECT 1 AS id) n ON t.id = n.id WHEN MATCHED THEN UPDATE "
          + "SET qty = -1").sqlState()).isEqualTo("23514");
      assertThat(Rows.of(s, "SELECT id, price, qty FROM items ORDER BY id")).containsExactly("1|9.99|10", "2|null|null");
      // added to a table with rows: checked against them (or not, NOT VALID)
      assertThat(error(s, "ALTER TABLE items ADD CONSTRAINT few CHECK (qty < 5)").getMessage())
          .isEqualTo("check constraint \"few\" of relation \"items\" is violated by some row");
      exec(s, "ALTER TABLE items ADD CONSTRAINT few CHECK (qty < 50) NOT VALID");
      assertThat(error(s, "INSERT INTO items VALUES (4, 1, 60)").getMessage()).contains("\"few\"");
      // a renamed column is renamed in the checks; a dropped one takes its checks with it
      exec(s, "ALTER TABLE items RENAME COLUMN qty TO quantity");
      assertThat(error(s, "INSERT INTO items VALUES (4, 1, 60)").getMessage()).contains("\"few\"");
      exec(s, "ALTER TABLE items DROP COLUMN quantity", "INSERT INTO items VALUES (4, 1)");
      assertThat(Rows.of(s, "SELECT conname FROM pg_constraint WHERE contype = 'c' ORDER BY 1"))
          .containsExactly("items_price_check");
    }
  }

  @Test
  void foreignKeysKeepReferencesWhole() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      List<Notice> notices = new ArrayList<>();
      s.onNotice(notices::add);
      exec(s, "CREATE TABLE authors (id int PRIMARY KEY, name text UNIQUE)",
          "CREATE TABLE books (id int PRIMARY KEY, author_id int REFERENCES authors, author_name text, "
              + "FOREIGN KEY (author_name) REFERENCES authors (name) ON DELETE RESTRICT)",
          "INSERT INTO authors VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')",
          "INSERT INTO books VALUES (10, 1, 'ann'), (11, NULL, NULL), (12, 2, NULL)");
      FloeException e = error(s, "INSERT INTO books VALUES (13, 9, NULL)");
      assertThat(e.sqlState()).isEqualTo("23503");
      assertThat(e.getMessage()).isEqualTo("insert or update on table \"books\" violates foreign key constraint "
          + "\"books_author_id_fkey\"");
      assertThat(e.detail().orElse(null)).isEqualTo("Key (author_id)=(9) is not present in table \"authors\".");
      assertThat(error(s, "UPDATE books SET author_name = 'zed'").detail().orElse(null))
          .isEqualTo("Key (author_name)=(zed) is not present in table \"authors\".");
      e = error(s, "DELETE FROM authors WHERE id = 1");
      assertThat(e.getMessage()).isEqualTo("update or delete on table \"authors\" violates foreign key constraint "
          + "\"books_author_id_fkey\" on table \"books\"");
      assertThat(e.detail().orElse(null)).isEqualTo("Key (id)=(1) is still referenced from table \"books\".");
      assertThat(error(s, "UPDATE authors SET id = 20 WHERE id = 2").sqlState()).isEqualTo("23503");
      assertThat(error(s, "MERGE INTO authors a USING (SELECT 2 AS id) d ON a.id = d.id WHEN MATCHED THEN DELETE")
          .sqlState()).isEqualTo("23503");
      // what no row references may go; a key that stays is no change
      exec(s, "DELETE FROM authors WHERE id = 3", "UPDATE authors SET name = name || '' WHERE id = 1",
          "UPDATE authors SET id = id WHERE id = 2", "DELETE FROM books WHERE id = 12", "DELETE FROM authors WHERE id = 2");
      assertThat(Rows.of(s, "SELECT id FROM authors")).containsExactly("1");

      assertThat(error(s, "TRUNCATE authors").getMessage())
          .isEqualTo("cannot truncate a table referenced in a foreign key constraint");
      assertThat(error(s, "DROP TABLE authors").detail().orElse(null))
          .isEqualTo("constraint books_author_id_fkey on table books depends on table authors");
      assertThat(error(s, "ALTER TABLE authors RENAME TO writers").sqlState()).isEqualTo("0A000");
      assertThat(error(s, "ALTER TABLE authors DROP COLUMN name").sqlState()).isEqualTo("2BP01");
      assertThat(Rows.of(s, "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' "
          + "ORDER BY 1")).containsExactly("books_author_id_fkey|FOREIGN KEY (author_id) REFERENCES authors(id)",
              "books_author_name_fkey|FOREIGN KEY (author_name) REFERENCES authors(name) ON DELETE RESTRICT");
      exec(s, "TRUNCATE authors CASCADE");
      assertThat(Rows.of(s, "SELECT count(*) FROM books")).containsExactly("0");
      exec(s, "DROP TABLE authors CASCADE", "INSERT INTO books VALUES (1, 99, 'nobody')");
      assertThat(notices.stream().map(Notice::message)).contains("truncate cascades to table \"books\"",
          "drop cascades to constraint books_author_id_fkey on table books");
      assertThat(Rows.of(s, "SELECT count(*) FROM pg_constraint WHERE contype = 'f'")).containsExactly("0");
    }
  }

  @Test
  void aTableMayReferenceItselfAndKeysAreCheckedWhenAdded() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      exec(s, "CREATE TABLE staff (id int PRIMARY KEY, boss int REFERENCES staff (id))",
          // a row may reference another row of the same statement, or itself
          "INSERT INTO staff VALUES (1, NULL), (2, 1), (3, 3), (4, 2)");
      assertThat(error(s, "DELETE FROM staff WHERE id = 2").detail().orElse(null))
          .isEqualTo("Key (id)=(2) is still referenced from table \"staff\".");
      exec(s, "DELETE FROM staff WHERE id IN (2, 4)", "DELETE FROM staff WHERE id = 3");
      assertThat(Rows.of(s, "SELECT id FROM staff")).containsExactly("1");

      exec(s, "CREATE TABLE orders (id int PRIMARY KEY, customer int)", "INSERT INTO orders VALUES (1, 7)",
          "CREATE TABLE customers (id int PRIMARY KEY, region text)");
      assertThat(error(s, "ALTER TABLE orders ADD FOREIGN KEY (customer) REFERENCES customers").detail().orElse(null))
          .isEqualTo("Key (customer)=(7) is not present in table \"customers\".");
      assertThat(error(s, "ALTER TABLE orders ADD FOREIGN KEY (customer) REFERENCES customers (region)").getMessage())
          .isEqualTo("there is no unique constraint matching given keys for referenced table \"customers\"");
      exec(s, "INSERT INTO customers VALUES (7, 'eu')",
          "ALTER TABLE orders ADD CONSTRAINT orders_customer FOREIGN KEY (customer) REFERENCES customers");
      assertThat(error(s, "DELETE FROM customers").sqlState()).isEqualTo("23503");
      // in a block, a parent and its child inserted together; the block sees its own rows
      s.begin();
      exec(s, "INSERT INTO customers VALUES (8, 'us')", "INSERT INTO orders VALUES (2, 8)");
      s.commit();
      assertThat(Rows.of(s, "SELECT count(*) FROM orders")).containsExactly("2");
      // a table with a tail acknowledges appends without reading the table: no constraints on it
      assertThat(error(s, "CREATE TABLE events (id int UNIQUE) WITH (tail = true)").sqlState()).isEqualTo("0A000");
      assertThat(error(s, "ALTER TABLE orders SET (tail = true)").sqlState()).isEqualTo("0A000");
    }
  }

  @Test
  void referentialActionsChangeTheReferencingRowsInOneTransaction() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      exec(s, "CREATE TABLE a (id int PRIMARY KEY, name text)",
          "CREATE TABLE b (id int PRIMARY KEY, a_id int REFERENCES a ON DELETE CASCADE ON UPDATE CASCADE)",
          "CREATE TABLE c (id int PRIMARY KEY, b_id int REFERENCES b ON DELETE SET NULL)",
          "CREATE TABLE d (id int PRIMARY KEY, a_id int DEFAULT 2 REFERENCES a ON DELETE SET DEFAULT)",
          "INSERT INTO a VALUES (1, 'x'), (2, 'y'), (3, 'z')", "INSERT INTO b VALUES (10, 1), (11, 1), (12, 2)",
          "INSERT INTO c VALUES (100, 10), (101, 12)", "INSERT INTO d VALUES (1000, 1), (1001, 3)",
          // a's row goes: b's rows go with it, c's lose their reference, d's take the default
          "DELETE FROM a WHERE id = 1");
      assertThat(Rows.of(s, "SELECT id, a_id FROM b ORDER BY id")).containsExactly("12|2");
      assertThat(Rows.of(s, "SELECT id, b_id FROM c ORDER BY id")).containsExactly("100|null", "101|12");
      assertThat(Rows.of(s, "SELECT id, a_id FROM d ORDER BY id")).containsExactly("1000|2", "1001|3");
      // d's key has no ON UPDATE action: the update fails, and so does the cascade it made (all or nothing)
      assertThat(error(s, "UPDATE a SET id = 20 WHERE id = 2").detail())
          .contains("Key (id)=(2) is still referenced from table \"d\".");
      assertThat(Rows.of(s, "SELECT a_id FROM b")).containsExactly("2");
      exec(s, "DELETE FROM d WHERE id = 1000", "UPDATE a SET id = 20 WHERE id = 2");
      assertThat(Rows.of(s, "SELECT id, a_id FROM b")).containsExactly("12|20");
      // SET DEFAULT to a key that is gone fails as PostgreSQL's does
      exec(s, "INSERT INTO d VALUES (1002, 3)");
      assertThat(error(s, "DELETE FROM a WHERE id = 3").detail())
          .contains("Key (a_id)=(2) is not present in table \"a\".");
      assertThat(Rows.of(s, "SELECT count(*) FROM a")).containsExactly("2");
      // in a block, the actions are the block's
      s.begin();
      exec(s, "DELETE FROM a WHERE id = 20");
      assertThat(Rows.of(s, "SELECT count(*) FROM b")).containsExactly("0");
      s.rollback();
      assertThat(Rows.of(s, "SELECT count(*) FROM b")).containsExactly("1");
      assertThat(error(s, "MERGE INTO a USING (SELECT 20 AS id) x ON a.id = x.id WHEN MATCHED THEN DELETE")
          .sqlState()).isEqualTo("0A000");
      assertThat(error(s, "CREATE TABLE e (id int PRIMARY KEY, p int REFERENCES e ON DELETE CASCADE)").sqlState())
          .isEqualTo("0A000");
    }
  }

  private static FloeException catchFloe(java.util.concurrent.Callable<?> action) {
    try {
      Object r = action.call();
      if (r instanceof AutoCloseable c) {
        c.close();
      }
    } catch (FloeException e) {
      return e;
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("no error");
  }
}
