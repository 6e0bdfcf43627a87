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
   * A keyed tail from psycopg2's default mode (every statement in a block the client commits): the
   * block reads its own changes, others see them at commit, a block that lost a key to another fails
   * with 40001, and a block that changed a keyed table writes no other.
   */
  @Test
  void psycopg2ChangesAKeyedTailInTransactions() {
    psycopg2("keyed_tail", """
        in the block [(1, 70), (2, 130), (3, 100), (4, 5)]
        others before commit [(1, 100), (2, 100), (3, 100)]
        others after commit [(1, 70), (2, 130), (3, 100), (4, 5)]
        SerializationFailure 40001 'could not serialize access due to concurrent update'
        the first committer's (1,)
        UndefinedTable 42P01 'relation "acc2" does not exist' 13
        FeatureNotSupported 0A000 'a transaction block cannot both change rows of a table with a keyed tail (table "acc") and write other tables' None
        after rollback (1,)
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

  private void edges(String scenario, String expected) {
    scenario("edges_client.py", scenario, expected);
  }

  /**
   * The edges of every type through psycopg2 (text format; parameters interpolated on the client): integer
   * limits, infinite, NaN and negative zero floats, numeric(38,9) extremes, empty and awkward text, all 256
   * byte values, uuids, the first and last dates and timestamps, BC ones and years past 9999 (read as
   * the text PostgreSQL sends, which psycopg2's datetime cannot hold), in UTC and in Europe/Paris (local
   * mean time, +00:09:21, before 1911); E'' escapes, NUL and invalid UTF-8; COPY text in and out.
   * PostgreSQL 15 prints the same except, on purpose (docs/sql.md): it stores infinity (here the three
   * "stored dt infinity" lines and the copied infinity row), and timestamps up to 294276-12-31.
   */
  @Test
  void psycopg2ValueEdges() {
    edges("psycopg2", """
        (1, True, -32768, -2147483648, -9223372036854775808, -inf, -inf, Decimal('-99999999999999999999999999999.999999999'), '', datetime.date(1, 1, 1), datetime.time(0, 0), datetime.datetime(1, 1, 1, 0, 0), datetime.datetime(1, 1, 1, 0, 0, tzinfo=datetime.timezone.utc), UUID('00000000-0000-0000-0000-000000000000'), b'')
        (2, False, 32767, 2147483647, 9223372036854775807, inf, 1.7976931348623157e+308, Decimal('99999999999999999999999999999.999999999'), 'héllo ☃ 😀 é', datetime.date(9999, 12, 31), datetime.time(23, 59, 59, 999999), datetime.datetime(9999, 12, 31, 23, 59, 59, 999999), datetime.datetime(2024, 2, 29, 7, 44, 15, 123456, tzinfo=datetime.timezone.utc), UUID('ffffffff-ffff-ffff-ffff-ffffffffffff'), b'\\x00\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\t\\n\\x0b\\x0c\\r\\x0e\\x0f\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e\\x1f !"#$%&\\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\\x7f\\x80\\x81\\x82\\x83\\x84\\x85\\x86\\x87\\x88\\x89\\x8a\\x8b\\x8c\\x8d\\x8e\\x8f\\x90\\x91\\x92\\x93\\x94\\x95\\x96\\x97\\x98\\x99\\x9a\\x9b\\x9c\\x9d\\x9e\\x9f\\xa0\\xa1\\xa2\\xa3\\xa4\\xa5\\xa6\\xa7\\xa8\\xa9\\xaa\\xab\\xac\\xad\\xae\\xaf\\xb0\\xb1\\xb2\\xb3\\xb4\\xb5\\xb6\\xb7\\xb8\\xb9\\xba\\xbb\\xbc\\xbd\\xbe\\xbf\\xc0\\xc1\\xc2\\xc3\\xc4\\xc5\\xc6\\xc7\\xc8\\xc9\\xca\\xcb\\xcc\\xcd\\xce\\xcf\\xd0\\xd1\\xd2\\xd3\\xd4\\xd5\\xd6\\xd7\\xd8\\xd9\\xda\\xdb\\xdc\\xdd\\xde\\xdf\\xe0\\xe1\\xe2\\xe3\\xe4\\xe5\\xe6\\xe7\\xe8\\xe9\\xea\\xeb\\xec\\xed\\xee\\xef\\xf0\\xf1\\xf2\\xf3\\xf4\\xf5\\xf6\\xf7\\xf8\\xf9\\xfa\\xfb\\xfc\\xfd\\xfe\\xff')
        (3, None, 0, 0, 0, nan, nan, Decimal('1E-9'), 'it\\'s "quoted" -- ; $1 %s \\\\ \\t\\n\\r', None, None, None, None, None, b'\\x00')
        (4, True, -1, -1, -1, 0.0, 5e-324, Decimal('-1E-9'), 'ÿ', None, None, None, None, None, b"'\\\\")
        (5, '0044-03-15 BC', '0044-03-15 10:00:00 BC', '0044-03-15 08:00:00+00 BC')
        (6, '4713-01-01 BC', '4713-01-01 00:00:00 BC', '4714-11-24 00:00:00+00 BC')
        (7, '5874897-12-31', '294247-01-10 04:00:54.775806', '294247-01-10 04:00:54.775806+00')
        (8, '10000-01-01', '10000-01-01 00:00:00.5', '0001-12-31 23:59:59.999999+00 BC')
        [('0044-03-15 08:09:21+00:09:21 BC',), ('4714-11-24 00:09:21+00:09:21 BC',)]
        psycopg2 cannot hold it: year -44 is out of range
        (datetime.date(9999, 12, 31), datetime.date(1, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59, 999999), datetime.datetime(1, 1, 1, 0, 0, tzinfo=datetime.timezone.utc))
        refused 22008 date out of range for column "dt"
        refused 22008 timestamp out of range for column "ts"
        refused 22008 timestamp out of range for column "tz"
        refused 22008 date/time field value out of range: "0000-01-01"
        refused 22008 date out of range: "4714-11-23 BC"
        refused 22008 timestamp out of range: "294276-12-31 23:59:59.999999"
        refused 22021 invalid byte sequence for encoding "UTF8": 0xff
        refused 22021 invalid byte sequence for encoding "UTF8": 0xc3 0x28
        refused 22021 invalid byte sequence for encoding "UTF8": 0x00
        refused 54000 null character not permitted
        stored INSERT INTO edges2 (k, t) VALUES (9, E'\\xc3\\xa9')
        [('é',)]
        copy in 2
        '1\\té é tab\\\\tnl\\\\n\\t0044-03-15 BC\\t\\\\N\\n2\\tÿ\\t4713-01-01 BC\\t0044-03-15 10:00:00.5 BC\\n'
        refused 22008 date out of range for column "dt"
        refused 22021 invalid byte sequence for encoding "UTF8": 0x00
        refused 22021 invalid byte sequence for encoding "UTF8": 0xff
        refused 22008 date/time field value out of range: "0000-01-01"
        refused 22021 invalid byte sequence for encoding "UTF8": 0xc3 0x28
        """);
  }

  /**
   * The same edges through psycopg 3 in binary format both ways: parameters and results, dates and
   * timestamps Python cannot hold sent and read as PostgreSQL's binary values (hex), NUL and invalid
   * UTF-8 in binary text parameters, and binary COPY. PostgreSQL 15 prints the same except, on purpose:
   * it stores the binary infinities (rows 11 and 12, and COPY's third row), the timestamp after
   * 294247-01-10 04:00:54.775806 (row 14), infinity in text, and 294276-12-31.
   */
  @Test
  void psycopg3ValueEdgesInBinary() {
    edges("psycopg3", """
        (1, True, -32768, -2147483648, -9223372036854775808, -inf, -inf, Decimal('-99999999999999999999999999999.999999999'), '', datetime.date(1, 1, 1), datetime.time(0, 0), datetime.datetime(1, 1, 1, 0, 0), datetime.datetime(1, 1, 1, 0, 0, tzinfo=datetime.timezone.utc), UUID('00000000-0000-0000-0000-000000000000'), b'')
        (2, False, 32767, 2147483647, 9223372036854775807, inf, 1.7976931348623157e+308, Decimal('99999999999999999999999999999.999999999'), 'héllo ☃ 😀 é', datetime.date(9999, 12, 31), datetime.time(23, 59, 59, 999999), datetime.datetime(9999, 12, 31, 23, 59, 59, 999999), datetime.datetime(2024, 2, 29, 7, 44, 15, 123456, tzinfo=datetime.timezone.utc), UUID('ffffffff-ffff-ffff-ffff-ffffffffffff'), b'\\x00\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\t\\n\\x0b\\x0c\\r\\x0e\\x0f\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e\\x1f !"#$%&\\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\\x7f\\x80\\x81\\x82\\x83\\x84\\x85\\x86\\x87\\x88\\x89\\x8a\\x8b\\x8c\\x8d\\x8e\\x8f\\x90\\x91\\x92\\x93\\x94\\x95\\x96\\x97\\x98\\x99\\x9a\\x9b\\x9c\\x9d\\x9e\\x9f\\xa0\\xa1\\xa2\\xa3\\xa4\\xa5\\xa6\\xa7\\xa8\\xa9\\xaa\\xab\\xac\\xad\\xae\\xaf\\xb0\\xb1\\xb2\\xb3\\xb4\\xb5\\xb6\\xb7\\xb8\\xb9\\xba\\xbb\\xbc\\xbd\\xbe\\xbf\\xc0\\xc1\\xc2\\xc3\\xc4\\xc5\\xc6\\xc7\\xc8\\xc9\\xca\\xcb\\xcc\\xcd\\xce\\xcf\\xd0\\xd1\\xd2\\xd3\\xd4\\xd5\\xd6\\xd7\\xd8\\xd9\\xda\\xdb\\xdc\\xdd\\xde\\xdf\\xe0\\xe1\\xe2\\xe3\\xe4\\xe5\\xe6\\xe7\\xe8\\xe9\\xea\\xeb\\xec\\xed\\xee\\xef\\xf0\\xf1\\xf2\\xf3\\xf4\\xf5\\xf6\\xf7\\xf8\\xf9\\xfa\\xfb\\xfc\\xfd\\xfe\\xff')
        (3, None, 0, 0, 0, nan, nan, Decimal('1E-9'), 'it\\'s "quoted" -- ; $1 %s \\\\ \\t\\n\\r', None, None, None, None, None, b'\\x00')
        (4, True, -1, -1, -1, -0.0, 5e-324, Decimal('-1E-9'), 'ÿ', None, None, None, None, None, b"'\\\\")
        (5, 'fff49d7b', 'ff1af9e74e1f8800', 'ff1af9e5a0f84000')
        (6, 'ffda97cd', 'fd0f7fbdaf17e000', 'fd0f7cc1411fa000')
        (7, '7fda970c', '7ffca2fec4c81ffe', '7ffca2fec4c81ffe')
        (8, '002c95d4', '0380e70b91432120', 'ff1fe2ffc59c5fff')
        ('7fffffff', '80000000', '7fffffffffffffff', '8000000000000000')
        stored 10
        refused 22008 date out of range for column "dt"
        refused 22008 date out of range for column "dt"
        stored 13
        refused 22008 timestamp out of range
        [(10, 'fff49d7b', 'ff1afa163e6b6800'), (13, '7fda970c', '7ffca2fec4c81ffe')]
        [(10, '0044-03-15 BC', '0044-03-17 18:00:00 BC'), (13, '5874897-12-31', '294247-01-10 04:00:54.775806')]
        refused 22008 date out of range for column "dt"
        refused 22008 timestamp out of range for column "ts"
        refused 22008 timestamp out of range for column "tz"
        refused 22008 date/time field value out of range: "0000-01-01"
        refused 22008 date out of range: "4714-11-23 BC"
        refused 22008 timestamp out of range: "294276-12-31 23:59:59.999999"
        refused 22021 invalid byte sequence for encoding "UTF8": 0x00
        refused 22021 invalid byte sequence for encoding "UTF8": 0xff
        refused 22021 invalid byte sequence for encoding "UTF8": 0x00
        stored b'\\xc3\\xa9'
        refused 22008 date out of range for column "dt"
        [(1, 'fff4dbf9', '0380e70b913b7fff'), (2, 'fff49d7b', '7ffca2fec4c81ffe')]
        [(1, '0001-01-01', '9999-12-31 23:59:59.999999'), (2, '0044-03-15 BC', '294247-01-10 04:00:54.775806')]
        """);
  }
}
