package dev.floe.server.pg.clients;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.server.pg.clients.ClientHarness.Result;
import dev.floe.server.pg.clients.ClientHarness.Server;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * SQLAlchemy (Debian's python3-sqlalchemy: 1.4 on Debian 12) over psycopg2, and pandas through it, against a
 * Floe server. Each test runs one scenario of src/test/resources/clients/python/sqlalchemy_client.py under
 * /usr/bin/python3 and compares what it prints with what the same scenario prints against PostgreSQL 15.
 *
 * <p>Every SQLAlchemy connection pool first sends, once: psycopg2's hstore look-up (SELECT t.oid, typarray FROM
 * pg_type t JOIN pg_namespace ns ...), {@code select pg_catalog.version()} (which must start "PostgreSQL N.N"),
 * {@code select current_schema()}, {@code show transaction isolation level} and
 * {@code show standard_conforming_strings}; create_all, has_table and pandas' to_sql look tables up in
 * pg_class/pg_namespace with pg_table_is_visible. Run a scenario with SQL_ECHO=1 to see every statement.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlAlchemyTest {
  @TempDir
  static Path dir;
  Server floe;

  @BeforeAll
  void start() throws Exception {
    ClientHarness.requirePythonModules("sqlalchemy", "psycopg2", "pandas");
    floe = new Server(dir.resolve("wh"));
  }

  @AfterAll
  void stop() {
    if (floe != null) {
      floe.close();
    }
  }

  private void scenario(String scenario, String expected) {
    Result r = ClientHarness.run(List.of(ClientHarness.PYTHON, ClientHarness.script("python/sqlalchemy_client.py")
        .toString(), scenario), floe.env(), null, Duration.ofSeconds(120));
    assertThat(r.lines()).as(r.describe()).containsExactlyElementsOf(expected.lines().toList());
    assertThat(r.exit()).as(r.describe()).isZero();
  }

  /**
   * Core: create_all (with an index=True column: CREATE INDEX, then listed in pg_indexes), insert
   * (one row, executemany), select, text(), update, delete, drop_all.
   */
  @Test
  void coreCreateInsertSelectUpdateDelete() {
    scenario("core", """
        indexes ['ix_sa_users_name', 'sa_users_pkey']
        reflected [('ix_sa_users_name', ['name'], False)]
        insert 1
        insert many 2
        (1, "it's ann", datetime.date(1990, 1, 2), Decimal('12.50'), True, datetime.datetime(2024, 2, 29, 13, 14, 15))
        (2, 'bob', None, Decimal('-1.00'), False, None)
        (3, 'cy', datetime.date(2000, 12, 31), None, None, datetime.datetime(2000, 1, 1, 0, 0))
        ["it's ann"]
        1
        cy
        update 1
        delete 1
        [(1, "it's ann", True), (2, 'bobby', True)]
        """);
  }

  /** ORM: declarative class, Session add_all/commit, select, get, change, delete, Query.filter_by. */
  @Test
  void ormSessionAddQueryUpdateDelete() {
    scenario("orm", """
        [Item(1, 'pen', Decimal('1.20'), datetime.date(2024, 1, 1)), Item(2, 'ink', Decimal('7.00'), None), Item(3, 'pad', None, datetime.date(2023, 6, 30))]
        get Item(2, 'ink', Decimal('7.00'), None)
        [Item(2, 'ink', Decimal('8.50'), None)]
        2
        Item(1, 'pen', Decimal('1.20'), datetime.date(2024, 1, 1))
        """);
  }

  /** The ORM's default integer primary key (SERIAL): ids come from the server's sequence. */
  @Test
  void ormAutoincrementPrimaryKey() {
    scenario("autoincrement", """
        [1, 2]
        [(1, 'first'), (2, 'second'), (3, 'third')]
        autoincrement True True
        """);
  }

  /** Inspector: has_table, get_schema_names, get_table_names, get_columns, get_pk_constraint, autoload. */
  @Test
  void inspectorReflectsTables() {
    scenario("inspector", """
        has_table True False
        schemas True
        tables ['sa_inspected']
        id INTEGER() False
        name VARCHAR(length=30) False
        amount NUMERIC(precision=12, scale=3) True
        at TIMESTAMP() True
        flag BOOLEAN() True
        big BIGINT() True
        pk ['id']
        reflected ['id']
        """);
  }

  /** pandas: DataFrame.to_sql (create, append, replace), read_sql of a query and of text(), read_sql_table. */
  @Test
  void pandasToSqlAndReadSql() {
    scenario("pandas", """
        to_sql 3
        ['id', 'name', 'value', 'day', 'ok']
        ['int64', 'object', 'float64', 'datetime64[ns]', 'bool']
        [{'id': 1, 'name': "a'b", 'value': 1.5, 'day': Timestamp('2024-02-29 00:00:00'), 'ok': True}, {'id': 2, 'name': None, 'value': nan, 'day': Timestamp('2000-01-01 00:00:00'), 'ok': False}, {'id': 3, 'name': 'héllo', 'value': -2.25, 'day': NaT, 'ok': True}]
        append 1
        [{'n': 3}]
        replace 2
        [{'id': 2, 'name': None, 'value': nan, 'day': Timestamp('2000-01-01 00:00:00'), 'ok': False}, {'id': 3, 'name': 'héllo', 'value': -2.25, 'day': NaT, 'ok': True}]
        """);
  }

  /** pandas read_sql of plain queries: the dtypes pandas picks from the values. */
  @Test
  void pandasReadSqlOfAQuery() {
    scenario("pandas_read", """
        ['int64', 'object', 'float64', 'object']
        [{'id': 1, 'name': 'x', 'value': 0.5, 'day': datetime.date(2024, 1, 2)}, {'id': 2, 'name': None, 'value': nan, 'day': None}]
        [{'id': 1}]
        """);
  }

  /**
   * The DDL of an ORM model with unique=True, index=True, ForeignKey, CheckConstraint, UniqueConstraint and
   * server defaults: create_all, the inspector's view of it, ORM CRUD, and each constraint's violation as the
   * app sees it (IntegrityError with PostgreSQL's SQLSTATE, constraint name and message), as PostgreSQL 15.
   */
  @Test
  void ormConstraintsAreCreatedReflectedAndEnforced() {
    scenario("constraints", """
        unique [('one_number_per_team', ['team_id', 'number'])]
        foreign [(['team_id'], 'sa_teams', ['id'])]
        checks ['age_not_negative']
        indexes ['ix_sa_players_team_id', 'one_number_per_team']
        [Player(1, 1, 9, 30, 'active'), Player(2, 2, 9, 22, 'active')]
        created set True
        IntegrityError 23505 sa_teams_name_key duplicate key value violates unique constraint "sa_teams_name_key"
        IntegrityError 23503 sa_players_team_id_fkey insert or update on table "sa_players" violates foreign key constraint "sa_players_team_id_fkey"
        IntegrityError 23505 one_number_per_team duplicate key value violates unique constraint "one_number_per_team"
        IntegrityError 23514 age_not_negative new row for relation "sa_players" violates check constraint "age_not_negative"
        committed Player(3, 1, None, None, 'active')
        IntegrityError 23503 sa_players_team_id_fkey Key (id)=(2) is still referenced from table "sa_players".
        [(1, 9, 'reds'), (3, 11, 'reds')]
        """);
  }

  /**
   * ForeignKey(ondelete="CASCADE", onupdate="CASCADE") and ondelete="SET NULL": the inspector reads the
   * actions back from the catalogs, and a delete and a key update carry them out, as PostgreSQL 15 does.
   */
  @Test
  void foreignKeyActionsAreCarriedOut() {
    scenario("cascade", """
        foreign [('sa_children', 'SET NULL', None), ('sa_parents', 'CASCADE', 'CASCADE')]
        deleted 1
        updated 1
        [(11, 20)]
        [(100, None), (101, 11)]
        """);
  }
}
