package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.util.PSQLException;

/**
 * The schema script Hibernate 6 generates for two entities (pooled sequence ids with allocationSize 50, a
 * unique and a foreign key added by ALTER TABLE IF EXISTS, a check from a Bean Validation constraint),
 * run through pgjdbc as Hibernate runs it, then the statements its session sends: prepared inserts with
 * ids from the pooled sequence, a join, an update and deletes, and the violations an application catches.
 */
class HibernateStyleDdlTest {
  @TempDir
  Path dir;

  private static final String[] SCHEMA = {
      "create sequence author_seq start with 1 increment by 50",
      "create sequence book_seq start with 1 increment by 50",
      "create table author (id bigint not null, name varchar(255) not null, primary key (id))",
      "create table book (pages integer check (pages>=1), author_id bigint, id bigint not null, "
          + "isbn varchar(255), title varchar(255), primary key (id))",
      "alter table if exists book drop constraint if exists UK_book_isbn",
      "alter table if exists book add constraint UK_book_isbn unique (isbn)",
      "alter table if exists book add constraint FK_book_author foreign key (author_id) references author",
  };

  @Test
  void hibernatesSchemaAndSessionWork() throws Exception {
    try (PgTestServer floe = new PgTestServer(dir.resolve("wh")); Connection c = floe.connect()) {
      try (Statement st = c.createStatement()) {
        for (String ddl : SCHEMA) {
          st.execute(ddl);
        }
      }
      c.setAutoCommit(false);
      // the pooled optimizer: one nextval per 50 ids, the ids below it its own
      long authorBlock = nextval(c, "author_seq");
      long bookBlock = nextval(c, "book_seq");
      assertThat(List.of(authorBlock, nextval(c, "author_seq"))).containsExactly(1L, 51L);
      try (PreparedStatement author = c.prepareStatement("insert into author (name,id) values (?,?)");
          PreparedStatement book = c.prepareStatement(
              "insert into book (author_id,isbn,pages,title,id) values (?,?,?,?,?)")) {
        author.setString(1, "Ann");
        author.setLong(2, authorBlock);
        author.executeUpdate();
        for (int k = 0; k < 3; k++) {
          book.setLong(1, authorBlock);
          book.setString(2, "isbn-" + k);
          book.setInt(3, 100 + k);
          book.setString(4, "Book " + k);
          book.setLong(5, bookBlock + k);
          book.addBatch();
        }
        assertThat(book.executeBatch()).containsExactly(1, 1, 1);
      }
      c.commit();
      List<String> rows = new ArrayList<>();
      try (PreparedStatement q = c.prepareStatement("select b1_0.id,b1_0.title,a1_0.name from book b1_0 join author "
          + "a1_0 on a1_0.id=b1_0.author_id where a1_0.name=? order by b1_0.id")) {
        q.setString(1, "Ann");
        try (ResultSet rs = q.executeQuery()) {
          while (rs.next()) {
            rows.add(rs.getLong(1) + "|" + rs.getString(2) + "|" + rs.getString(3));
          }
        }
      }
      assertThat(rows).containsExactly("1|Book 0|Ann", "2|Book 1|Ann", "3|Book 2|Ann");
      c.commit();

      // what the application catches: PostgreSQL's SQLSTATE and constraint name
      assertViolation(c, "insert into book (author_id,isbn,pages,title,id) values (1,'isbn-0',5,'Dup',10)", "23505",
          "uk_book_isbn");
      assertViolation(c, "insert into book (author_id,isbn,pages,title,id) values (99,'isbn-9',5,'Orphan',10)",
          "23503", "fk_book_author");
      assertViolation(c, "update book set pages=0 where id=1", "23514", "book_pages_check");
      assertViolation(c, "delete from author where id=1", "23503", "fk_book_author");

      try (Statement st = c.createStatement()) {
        assertThat(st.executeUpdate("update book set title='Renamed' where id=2")).isEqualTo(1);
        assertThat(st.executeUpdate("delete from book where author_id=1")).isEqualTo(3);
        assertThat(st.executeUpdate("delete from author where id=1")).isEqualTo(1);
      }
      c.commit();
      try (Statement st = c.createStatement()) {
        st.execute("drop table if exists book cascade");
        st.execute("drop table if exists author cascade");
        st.execute("drop sequence if exists author_seq");
        st.execute("drop sequence if exists book_seq");
      }
      c.commit();
    }
  }

  private static long nextval(Connection c, String sequence) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("select nextval('" + sequence + "')")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void assertViolation(Connection c, String sql, String sqlState, String constraint) throws Exception {
    try (Statement st = c.createStatement()) {
      assertThatThrownBy(() -> st.executeUpdate(sql)).isInstanceOfSatisfying(PSQLException.class, e -> {
        assertThat(e.getSQLState()).isEqualTo(sqlState);
        assertThat(e.getServerErrorMessage().getConstraint()).isEqualTo(constraint);
      });
    }
    c.rollback(); // the failed statement aborted the transaction, as Hibernate then rolls back
  }
}
