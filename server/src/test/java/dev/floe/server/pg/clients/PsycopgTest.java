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
 * psycopg2 and psycopg 3 (Debian's python3-psycopg2 and python3-psycopg, both over libpq 15) against a Floe
 * server. Each test runs one scenario of src/test/resources/clients/python/psycopg2_client.py or
 * psycopg3_client.py under /usr/bin/python3 and compares what it prints with what the same scenario prints
 * against PostgreSQL 15 (except where a comment says Floe differs on purpose).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PsycopgTest {
  @TempDir
  static Path dir;
  Server floe;

  @BeforeAll
  void start() throws Exception {
    ClientHarness.requirePythonModules("psycopg2", "psycopg");
    floe = new Server(dir.resolve("wh"));
  }

  @AfterAll
  void stop() {
    if (floe != null) {
      floe.close();
    }
  }

  private void scenario(String script, String scenario, String expected) {
    Result r = ClientHarness.run(List.of(ClientHarness.PYTHON, ClientHarness.script("python/" + script).toString(),
        scenario), floe.env(), null, Duration.ofSeconds(90));
    assertThat(r.lines()).as(r.describe()).containsExactlyElementsOf(expected.lines().toList());
    assertThat(r.exit()).as(r.describe()).isZero();
  }

  private void psycopg2(String scenario, String expected) {
    scenario("psycopg2_client.py", scenario, expected);
  }

  private void psycopg3(String scenario, String expected) {
    scenario("psycopg3_client.py", scenario, expected);
  }

  /** Start-up parameters libpq reports, a first query, transaction status. */
  @Test
  void psycopg2Connects() {
    psycopg2("connect", """
        server_version True
        server_encoding UTF8
        client_encoding UTF8
        integer_datetimes on
        standard_conforming_strings on
        (1, 'x', None)
        status True
        status True
        closed 1
        """);
  }

  /** psycopg2 interpolates parameters into the SQL text on the client: quoting must round-trip. */
  @Test
  void psycopg2BindsParametersOfEveryType() {
    psycopg2("params", """
        inserted 1
        inserted 1
        inserted 1
        (1, 9000000000, 'it\\'s "quoted" -- ; $1 %s \\\\', datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 13, 14, 15, 500000), Decimal('12.50'), b"\\x00\\xff'\\\\", UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), True, 1.5)
        (2, None, None, None, None, None, None, None, None, None)
        (3, -1, 'héllo ☃', datetime.date(1999, 12, 31), datetime.datetime(2000, 1, 1, 0, 0), Decimal('-0.01'), b'', UUID('00000000-0000-0000-0000-000000000000'), False, -0.0025)
        [('id', 23), ('big', 20), ('name', 25), ('born', 1082), ('ts', 1114), ('price', 1700), ('data', 17), ('u', 2950), ('ok', 16), ('d', 701)]
        [(1,)]
        [(3,)]
        (3, "x'y", True)
        [(1,), (3,)]
        [(3,)]
        """);
  }

  /** execute_batch sends several INSERTs in one simple Query message. */
  @Test
  void psycopg2ExecutemanyExecuteValuesExecuteBatchAndFetchmany() {
    psycopg2("executemany", """
        executemany 50
        rowcount 200
        [(0, 'n0'), (1, 'n1'), (2, 'n2')]
        100
        (103, 'v103')
        96
        None
        [(200, 150, 0, 199)]
        """);
  }

  /** Server-side cursors: DECLARE ... CURSOR [WITH HOLD] FOR, FETCH FORWARD n FROM, CLOSE. */
  @Test
  void psycopg2NamedCursors() {
    psycopg2("named_cursor", """
        iterated 5000 25005000
        [(1,), (2,), (3,)]
        (4,)
        [(5,), (6,), (7,), (8,), (9,), (10,)]
        after commit [(1,), (2,), (3,)]
        """);
  }

  @Test
  void psycopg2ErrorsMapToExceptionClassesAndSqlStates() {
    psycopg2("errors", """
        DivisionByZero 22012 'division by zero' None
        DataError True
        UndefinedTable 42P01 'relation "no_such_table" does not exist' 15
        ProgrammingError True
        UndefinedColumn 42703 'column "no_such_column" does not exist' 8
        SyntaxError 42601 'syntax error at or near "SELEC"' 1
        UniqueViolation 23505 'duplicate key value violates unique constraint "er_pkey"' None
        IntegrityError True 'Key (id)=(1) already exists.'
        NotNullViolation 23502 'null value in column "name" of relation "er" violates not-null constraint' None
        InvalidTextRepresentation 22P02
        (1,)
        DivisionByZero 22012 'division by zero' None
        InFailedSqlTransaction 25P02 'current transaction is aborted, commands ignored until end of transaction block' None
        (3,)
        """);
  }

  /** psycopg2 sends BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY, then BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE. */
  @Test
  void psycopg2IsolationLevelAndReadOnly() {
    psycopg2("isolation", """
        ('serializable',)
        ('on',)
        ReadOnlySqlTransaction 25006 'cannot execute CREATE TABLE in a read-only transaction' None
        ('read committed',)
        """);
  }

  /** copy_expert (COPY ... FROM STDIN / TO STDOUT WITH csv), copy_from and copy_to (text format). */
  @Test
  void psycopg2Copy() {
    psycopg2("copy", """
        copy_expert in 3
        copy_from 2
        'id,name,price\\n1,one,1.50\\n2,,\\n3,"a,b",-2.00\\n4,four,4.00\\n5,,\\n'
        ['1\\tone', '2\\t\\\\N', '3\\ta,b', '4\\tfour', '5\\t\\\\N']
        """);
  }

  @Test
  void psycopg3Connects() {
    psycopg3("connect", """
        server_version True
        server_version param True
        encoding utf-8
        protocol 3
        (1, 'x', None)
        status True
        status True
        closed True
        """);
  }

  /** psycopg 3 sends parameters with Parse/Bind, typed by their Python type; %b binds in binary. A list binds as an array. */
  @Test
  void psycopg3BindsParametersServerSideInTextAndBinary() {
    psycopg3("params", """
        inserted 1
        inserted 1
        inserted binary 1
        (1, 9000000000, 'it\\'s "quoted" -- ; $1 %s \\\\', datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 13, 14, 15, 500000), Decimal('12.50'), b"\\x00\\xff'\\\\", UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), True, 1.5)
        (2, None, None, None, None, None, None, None, None, None)
        (3, -1, 'héllo ☃', datetime.date(1999, 12, 31), datetime.datetime(2000, 1, 1, 0, 0), Decimal('-0.01'), b'', UUID('00000000-0000-0000-0000-000000000000'), False, -0.0025)
        [('id', 23), ('big', 20), ('name', 25), ('born', 1082), ('ts', 1114), ('price', 1700), ('data', 17), ('u', 2950), ('ok', 16), ('d', 701)]
        (1, 9000000000, 'it\\'s "quoted" -- ; $1 %s \\\\', datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 13, 14, 15, 500000), Decimal('12.50'), b"\\x00\\xff'\\\\", UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), True, 1.5)
        (2, None, None, None, None, None, None, None, None, None)
        (3, -1, 'héllo ☃', datetime.date(1999, 12, 31), datetime.datetime(2000, 1, 1, 0, 0), Decimal('-0.01'), b'', UUID('00000000-0000-0000-0000-000000000000'), False, -0.0025)
        [('id', 23), ('big', 20), ('name', 25), ('born', 1082), ('ts', 1114), ('price', 1700), ('data', 17), ('u', 2950), ('ok', 16), ('d', 701)]
        [(1,)]
        [(3,)]
        (3, "x'y", True)
        [(1,), (3,)]
        [(3,)]
        {'id': 3, 'name': 'héllo ☃'}
        """);
  }

  /** executemany and conn.pipeline() use libpq pipeline mode; the sixth run of a query is a named prepared statement. */
  @Test
  void psycopg3ExecutemanyPipelineAndPreparedStatements() {
    psycopg3("executemany", """
        executemany 100
        pipeline (101,) (99,)
        rowcount 101
        [(0, 'n0'), (1, 'n1'), (2, 'n2')]
        50
        (53, 'n53')
        47
        None
        0 ('n0',)
        1 ('n1',)
        2 ('n2',)
        3 ('n3',)
        4 ('n4',)
        5 ('n5',)
        6 ('n6',)
        7 ('n7',)
        prepared (10,)
        """);
  }

  /** Server-side cursors: DECLARE ... CURSOR FOR, FETCH FORWARD n FROM, CLOSE. */
  @Test
  void psycopg3NamedCursors() {
    psycopg3("named_cursor", """
        iterated 5000 25005000
        [(1,), (2,), (3,)]
        (4,)
        [(5,), (6,), (7,), (8,), (9,), (10,)]
        after commit [(1,), (2,), (3,)]
        """);
  }

  @Test
  void psycopg3ErrorsMapToExceptionClassesAndSqlStates() {
    psycopg3("errors", """
        DivisionByZero 22012 'division by zero' None
        DataError True
        UndefinedTable 42P01 'relation "no_such_table" does not exist' 15
        ProgrammingError True
        UndefinedColumn 42703 'column "no_such_column" does not exist' 8
        SyntaxError 42601 'syntax error at or near "SELEC"' 1
        UniqueViolation 23505 'duplicate key value violates unique constraint "er3_pkey"' None
        IntegrityError True 'Key (id)=(1) already exists.'
        NotNullViolation 23502 'null value in column "name" of relation "er3" violates not-null constraint' None
        InvalidTextRepresentation 22P02
        (1,)
        DivisionByZero 22012 'division by zero' None
        InFailedSqlTransaction 25P02 'current transaction is aborted, commands ignored until end of transaction block' None
        (3,)
        """);
  }

  /** cursor.copy(): write_row in text, csv write, rows() with set_types, csv out, binary in. */
  @Test
  void psycopg3Copy() {
    psycopg3("copy", """
        copy in 3
        copy csv in 2
        (1, 'one', Decimal('1.50'), datetime.date(2024, 1, 1))
        (2, None, None, None)
        (3, 'tab\\there', Decimal('-2.00'), datetime.date(1999, 12, 31))
        (4, 'quoted, comma', None, None)
        (5, None, None, None)
        b'4,"quoted, comma"\\n5,\\n'
        copy binary in 1
        (6, 4)
        """);
  }

  /**
   * commit, the connection as a context manager, rollback of a read-only transaction, and a rollback
   * that undoes an INSERT (as in PostgreSQL: the count stays 2, no notice).
   */
  @Test
  void psycopg2Transactions() {
    psycopg2("transactions", """
        in transaction True
        committed (1,)
        with block (2,)
        read-only rollback notices []
        rollback notices []
        after rollback (2,)
        autocommit True
        after autocommit insert (3,)
        """);
  }

  /**
   * A table with a durable tail from psycopg2 in its default mode (a transaction per unit of work): the
   * appends are made at commit, a rollback drops them.
   */
  @Test
  void psycopg2AppendsToATailInTransactions() {
    psycopg2("tail", """
        returning in a block ('c', None)
        before commit (0,)
        after commit [('a', 0), ('b', 1), ('c', 2)]
        after rollback (3,)
        offsets go on (3,)
        """);
  }

  /**
   * conn.transaction() blocks, a nested one as a savepoint rolled back by an exception, and a rollback
   * that undoes an INSERT (PostgreSQL's count 2, no notice).
   */
  @Test
  void psycopg3Transactions() {
    psycopg3("transactions", """
        committed (1,)
        savepoint rolled back
        still usable (2,)
        transaction block (2,)
        read-only rollback notices []
        rollback notices []
        after rollback (2,)
        """);
  }
}
