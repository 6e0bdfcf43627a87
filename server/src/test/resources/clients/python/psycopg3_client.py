"""Run by PsycopgTest with /usr/bin/python3: psycopg 3 (Debian's python3-psycopg, over libpq) against the
server that PGHOST/PGPORT/PGUSER/PGDATABASE name. `psycopg3_client.py SCENARIO` prints one line per checked
value; the Java test compares them with what psycopg 3 prints against PostgreSQL."""
import datetime
import sys
import uuid
from decimal import Decimal

import psycopg
import psycopg.errors
from psycopg import pq
from psycopg.rows import dict_row


def connect(**kw):
    return psycopg.connect("application_name=psycopg3-test", **kw)


def out(*values):
    print(*values, flush=True)


def scenario_connect():
    with connect() as conn:
        out("server_version", conn.info.server_version >= 90000)
        out("server_version param", conn.info.parameter_status("server_version") is not None)
        out("encoding", conn.info.encoding)
        out("protocol", conn.info.pgconn.protocol_version)
        out(conn.execute("SELECT 1, 'x', NULL").fetchone())
        out("status", conn.info.transaction_status == pq.TransactionStatus.INTRANS)
        conn.rollback()
        out("status", conn.info.transaction_status == pq.TransactionStatus.IDLE)
    out("closed", conn.closed)


ROWS = [
    (1, 9000000000, "it's \"quoted\" -- ; $1 %s \\", datetime.date(2024, 2, 29),
     datetime.datetime(2024, 2, 29, 13, 14, 15, 500000), Decimal("12.50"), b"\x00\xff'\\",
     uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), True, 1.5),
    (2, None, None, None, None, None, None, None, None, None),
    (3, -1, "héllo ☃", datetime.date(1999, 12, 31), datetime.datetime(2000, 1, 1), Decimal("-0.01"), b"",
     uuid.UUID(int=0), False, -2.5e-3),
]


def scenario_params():
    """Server-side parameters (Parse/Bind), in text and in binary."""
    with connect(autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE p3 (id integer, big bigint, name text, born date, ts timestamp, "
                    "price numeric(10,2), data bytea, u uuid, ok boolean, d double precision)")
        for r in ROWS[:2]:
            cur.execute("INSERT INTO p3 VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", r)
            out("inserted", cur.rowcount)
        cur.execute("INSERT INTO p3 VALUES (%b, %b, %b, %b, %b, %b, %b, %b, %b, %b)", ROWS[2])
        out("inserted binary", cur.rowcount)
        for binary in (False, True):
            cur.execute("SELECT * FROM p3 ORDER BY id", binary=binary)
            for row in cur.fetchall():
                out(row)
            out([(d.name, d.type_code) for d in cur.description])
        cur.execute("SELECT id FROM p3 WHERE name = %s", (ROWS[0][2],))
        out(cur.fetchall())
        cur.execute("SELECT id FROM p3 WHERE born < %s AND price < %s ORDER BY id",
                    (datetime.date(2000, 1, 1), Decimal("100")))
        out(cur.fetchall())
        cur.execute("SELECT %(a)s + %(b)s, %(s)s, %(n)s::text IS NULL", {"a": 1, "b": 2, "s": "x'y", "n": None})
        out(cur.fetchone())
        cur.execute("SELECT id FROM p3 WHERE id = ANY(%s) ORDER BY id", ([1, 3],))
        out(cur.fetchall())
        cur.execute("SELECT id FROM p3 WHERE u = %s", (uuid.UUID(int=0),))
        out(cur.fetchall())
        cur = conn.cursor(row_factory=dict_row)
        cur.execute("SELECT id, name FROM p3 WHERE id = %s", (3,))
        out(cur.fetchone())


def scenario_executemany():
    """executemany runs in pipeline mode over libpq 14+; fetchmany; explicit pipelines; prepared statements."""
    with connect(autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE em3 (id integer, name text)")
        cur.executemany("INSERT INTO em3 VALUES (%s, %s)", [(i, "n%d" % i) for i in range(100)])
        out("executemany", cur.rowcount)
        with conn.pipeline():
            conn.execute("INSERT INTO em3 VALUES (%s, %s)", (100, None))
            c2 = conn.execute("SELECT count(*) FROM em3")
            c3 = conn.execute("SELECT max(id) FROM em3 WHERE name IS NOT NULL")
        out("pipeline", c2.fetchone(), c3.fetchone())
        cur.execute("SELECT id, name FROM em3 ORDER BY id")
        out("rowcount", cur.rowcount)
        out(cur.fetchmany(3))
        out(len(cur.fetchmany(50)))
        out(cur.fetchone())
        out(len(cur.fetchall()))
        out(cur.fetchone())
        # the sixth execution of a query runs a statement prepared on the server (prepare_threshold 5)
        for i in range(8):
            cur.execute("SELECT name FROM em3 WHERE id = %s", (i,))
            out(i, cur.fetchone())
        cur.execute("SELECT count(*) FROM em3 WHERE id < %s", (10,), prepare=True)
        out("prepared", cur.fetchone())


def scenario_named_cursor():
    with connect() as conn:
        with conn.cursor(name="big") as cur:
            cur.itersize = 1000
            cur.execute("SELECT i, i * 2 FROM generate_series(1, 5000) AS g(i)")
            n = total = 0
            for row in cur:
                n += 1
                total += row[1]
            out("iterated", n, total)
        with conn.cursor(name="some") as cur:
            cur.execute("SELECT i FROM generate_series(1, 10) AS g(i) ORDER BY i")
            out(cur.fetchmany(3))
            out(cur.fetchone())
            out(cur.fetchall())
        conn.commit()
        with conn.cursor(name="held", withhold=True) as cur:
            cur.execute("SELECT i FROM generate_series(1, 3) AS g(i)")
            conn.commit()
            out("after commit", cur.fetchall())


def error(conn, sql, params=None):
    try:
        conn.execute(sql, params)
        out("no error", sql)
    except psycopg.Error as e:
        out(type(e).__name__, e.sqlstate, repr(e.diag.message_primary), e.diag.statement_position)
        return e


def scenario_errors():
    with connect(autocommit=True) as conn:
        conn.execute("CREATE TABLE er3 (id integer PRIMARY KEY, name text NOT NULL)")
        conn.execute("INSERT INTO er3 VALUES (1, 'one')")
        e = error(conn, "SELECT 1/0")
        out("DataError", isinstance(e, psycopg.DataError))
        e = error(conn, "SELECT * FROM no_such_table")
        out("ProgrammingError", isinstance(e, psycopg.ProgrammingError))
        error(conn, "SELECT no_such_column FROM er3")
        error(conn, "SELEC 1")
        e = error(conn, "INSERT INTO er3 VALUES (%s, %s)", (1, "again"))
        out("IntegrityError", isinstance(e, psycopg.IntegrityError), repr(e.diag.message_detail))
        error(conn, "INSERT INTO er3 VALUES (%s, %s)", (2, None))
        try:
            conn.execute("SELECT %s::integer", ("abc",))
        except psycopg.Error as e:
            out(type(e).__name__, e.sqlstate)
        out(conn.execute("SELECT count(*) FROM er3").fetchone())
    with connect() as conn:
        conn.execute("SELECT 1")
        error(conn, "SELECT 1/0")
        error(conn, "SELECT 2")
        conn.rollback()
        out(conn.execute("SELECT 3").fetchone())


def scenario_transactions():
    with connect() as a, connect(autocommit=True) as b:
        notices = []
        a.add_notice_handler(lambda d: notices.append((d.severity, d.sqlstate, d.message_primary)))
        a.execute("CREATE TABLE tx3 (id integer)")
        a.commit()
        a.execute("INSERT INTO tx3 VALUES (1)")
        a.commit()
        out("committed", b.execute("SELECT count(*) FROM tx3").fetchone())
        with a.transaction():
            a.execute("INSERT INTO tx3 VALUES (2)")
            # a nested block is a savepoint; leaving it by an exception rolls back to the savepoint
            try:
                with a.transaction():
                    a.execute("SELECT 1/0")
            except psycopg.errors.DivisionByZero:
                out("savepoint rolled back")
            out("still usable", a.execute("SELECT count(*) FROM tx3").fetchone())
        out("transaction block", b.execute("SELECT count(*) FROM tx3").fetchone())
        a.execute("SELECT count(*) FROM tx3")
        a.rollback()
        out("read-only rollback notices", notices)
        # the rollback undoes the INSERT, silently, as in PostgreSQL
        a.execute("INSERT INTO tx3 VALUES (3)")
        a.rollback()
        out("rollback notices", [(s, c, m[:30]) for s, c, m in notices])
        out("after rollback", b.execute("SELECT count(*) FROM tx3").fetchone())


def scenario_copy():
    with connect(autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE cp3 (id integer, name text, price numeric(6,2), born date)")
        with cur.copy("COPY cp3 (id, name, price, born) FROM STDIN") as copy:
            copy.write_row((1, "one", Decimal("1.50"), datetime.date(2024, 1, 1)))
            copy.write_row((2, None, None, None))
            copy.write_row((3, "tab\there", Decimal("-2"), datetime.date(1999, 12, 31)))
        out("copy in", cur.rowcount)
        with cur.copy("COPY cp3 (id, name) FROM STDIN WITH (FORMAT csv)") as copy:
            copy.write('4,"quoted, comma"\n5,\n')
        out("copy csv in", cur.rowcount)
        with cur.copy("COPY (SELECT id, name, price, born FROM cp3 ORDER BY id) TO STDOUT") as copy:
            copy.set_types(["int4", "text", "numeric", "date"])
            for row in copy.rows():
                out(row)
        with cur.copy("COPY (SELECT id, name FROM cp3 WHERE id > 3 ORDER BY id) TO STDOUT WITH (FORMAT csv)") as copy:
            out(repr(b"".join(bytes(b) for b in copy)))
        with cur.copy("COPY cp3 (id, name) FROM STDIN WITH (FORMAT binary)") as copy:
            copy.set_types(["int4", "text"])
            copy.write_row((6, "binary"))
        out("copy binary in", cur.rowcount)
        out(cur.execute("SELECT count(*), count(name) FROM cp3").fetchone())


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[1]]()
