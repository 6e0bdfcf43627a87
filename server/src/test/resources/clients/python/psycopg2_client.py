"""Run by PsycopgTest with /usr/bin/python3: psycopg2 (Debian's python3-psycopg2) against the server that
PGHOST/PGPORT/PGUSER/PGDATABASE name. `psycopg2_client.py SCENARIO` prints one line per checked value; the
Java test compares them with what psycopg2 prints against PostgreSQL."""
import datetime
import io
import sys
import uuid
from decimal import Decimal

import psycopg2
import psycopg2.errors
import psycopg2.extensions
import psycopg2.extras

psycopg2.extras.register_uuid()


def connect(**kw):
    return psycopg2.connect("", application_name="psycopg2-test", **kw)


def out(*values):
    print(*values, flush=True)


def plain(row):
    return tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)


def scenario_connect():
    conn = connect()
    out("server_version", conn.server_version >= 90000)
    out("server_encoding", conn.get_parameter_status("server_encoding"))
    out("client_encoding", conn.encoding)
    out("integer_datetimes", conn.get_parameter_status("integer_datetimes"))
    out("standard_conforming_strings", conn.get_parameter_status("standard_conforming_strings"))
    cur = conn.cursor()
    cur.execute("SELECT 1, 'x', NULL")
    out(cur.fetchone())
    out("status", conn.info.transaction_status == psycopg2.extensions.TRANSACTION_STATUS_INTRANS)
    conn.rollback()
    out("status", conn.info.transaction_status == psycopg2.extensions.TRANSACTION_STATUS_IDLE)
    conn.close()
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
    conn = connect()
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE TABLE p2 (id integer, big bigint, name text, born date, ts timestamp, price numeric(10,2), "
                "data bytea, u uuid, ok boolean, d double precision)")
    for r in ROWS:
        cur.execute("INSERT INTO p2 VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", r)
        out("inserted", cur.rowcount)
    cur.execute("SELECT * FROM p2 ORDER BY id")
    for row in cur.fetchall():
        out(plain(row))
    out([(d.name, d.type_code) for d in cur.description])
    cur.execute("SELECT id FROM p2 WHERE name = %s", (ROWS[0][2],))
    out(cur.fetchall())
    cur.execute("SELECT id FROM p2 WHERE born < %s AND price < %s ORDER BY id", (datetime.date(2000, 1, 1), Decimal("100")))
    out(cur.fetchall())
    cur.execute("SELECT %(a)s + %(b)s, %(s)s, %(n)s IS NULL", {"a": 1, "b": 2, "s": "x'y", "n": None})
    out(cur.fetchone())
    cur.execute("SELECT id FROM p2 WHERE id IN %s ORDER BY id", ((1, 3),))
    out(cur.fetchall())
    cur.execute("SELECT id FROM p2 WHERE u = %s", (uuid.UUID(int=0),))
    out(cur.fetchall())


def scenario_executemany():
    conn = connect()
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE TABLE em (id integer, name text)")
    cur.executemany("INSERT INTO em VALUES (%s, %s)", [(i, "n%d" % i) for i in range(50)])
    out("executemany", cur.rowcount)
    psycopg2.extras.execute_values(cur, "INSERT INTO em VALUES %s", [(i, "v%d" % i) for i in range(50, 150)],
                                   page_size=40)
    # several INSERTs in one simple query per page
    psycopg2.extras.execute_batch(cur, "INSERT INTO em VALUES (%s, %s)", [(i, None) for i in range(150, 200)],
                                  page_size=20)
    cur.execute("SELECT id, name FROM em ORDER BY id")
    out("rowcount", cur.rowcount)
    out(cur.fetchmany(3))
    out(len(cur.fetchmany(100)))
    out(cur.fetchone())
    out(len(cur.fetchall()))
    out(cur.fetchone())
    cur.arraysize = 7
    cur.execute("SELECT count(*), count(name), min(id), max(id) FROM em")
    out(cur.fetchmany())


def scenario_named_cursor():
    conn = connect()
    cur = conn.cursor(name="big")
    cur.itersize = 1000
    cur.execute("SELECT i, i * 2 FROM generate_series(1, 5000) AS g(i)")
    n = total = 0
    for row in cur:
        n += 1
        total += row[1]
    out("iterated", n, total)
    cur.close()
    cur = conn.cursor(name="some")
    cur.execute("SELECT i FROM generate_series(1, 10) AS g(i) ORDER BY i")
    out(cur.fetchmany(3))
    out(cur.fetchone())
    out(cur.fetchall())
    cur.close()
    conn.commit()
    held = conn.cursor(name="held", withhold=True)
    held.execute("SELECT i FROM generate_series(1, 3) AS g(i)")
    conn.commit()
    out("after commit", held.fetchall())
    held.close()
    conn.close()


def error(cur, sql):
    try:
        cur.execute(sql)
        out("no error", sql)
    except psycopg2.Error as e:
        out(type(e).__name__, e.pgcode, repr(e.diag.message_primary), e.diag.statement_position)
        return e


def quiet_error(cur, sql):
    try:
        cur.execute(sql)
    except psycopg2.Error as e:
        return e


def scenario_errors():
    conn = connect()
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE TABLE er (id integer PRIMARY KEY, name text NOT NULL)")
    cur.execute("INSERT INTO er VALUES (1, 'one')")
    e = error(cur, "SELECT 1/0")
    out("DataError", isinstance(e, psycopg2.DataError))
    e = error(cur, "SELECT * FROM no_such_table")
    out("ProgrammingError", isinstance(e, psycopg2.ProgrammingError))
    error(cur, "SELECT no_such_column FROM er")
    error(cur, "SELEC 1")
    e = error(cur, "INSERT INTO er VALUES (1, 'again')")
    out("IntegrityError", isinstance(e, psycopg2.IntegrityError), repr(e.diag.message_detail))
    error(cur, "INSERT INTO er VALUES (2, NULL)")
    e = quiet_error(cur, "SELECT 'abc'::integer")
    out(type(e).__name__, e.pgcode)
    cur.execute("SELECT count(*) FROM er")
    out(cur.fetchone())
    # in a transaction, a failed statement aborts the rest until rollback
    conn.autocommit = False
    cur.execute("SELECT 1")
    error(cur, "SELECT 1/0")
    error(cur, "SELECT 2")
    conn.rollback()
    cur.execute("SELECT 3")
    out(cur.fetchone())
    conn.rollback()


def connection_pair():
    # a in psycopg2's default mode (the client commits), b in autocommit to look from outside
    a = connect()
    b = connect()
    b.autocommit = True
    return a, b, a.cursor(), b.cursor()


def scenario_transactions():
    a, b, ca, cb = connection_pair()
    ca.execute("CREATE TABLE tx (id integer)")
    a.commit()
    ca.execute("INSERT INTO tx VALUES (1)")
    out("in transaction", a.info.transaction_status == psycopg2.extensions.TRANSACTION_STATUS_INTRANS)
    a.commit()
    cb.execute("SELECT count(*) FROM tx")
    out("committed", cb.fetchone())
    with a:
        ca.execute("INSERT INTO tx VALUES (2)")
    cb.execute("SELECT count(*) FROM tx")
    out("with block", cb.fetchone())
    ca.execute("SELECT count(*) FROM tx")
    a.rollback()
    out("read-only rollback notices", a.notices)
    # the rollback undoes the INSERT, silently, as in PostgreSQL
    ca.execute("INSERT INTO tx VALUES (3)")
    a.rollback()
    out("rollback notices", [n.strip()[:48] for n in a.notices])
    cb.execute("SELECT count(*) FROM tx")
    out("after rollback", cb.fetchone())
    a.autocommit = True
    ca.execute("INSERT INTO tx VALUES (4)")
    out("autocommit", a.info.transaction_status == psycopg2.extensions.TRANSACTION_STATUS_IDLE)
    cb.execute("SELECT count(*) FROM tx")
    out("after autocommit insert", cb.fetchone())


def scenario_tail():
    # psycopg2's default: every statement runs in a transaction the client commits
    a, b, ca, cb = connection_pair()
    ca.execute("CREATE TABLE ev (ts timestamptz NOT NULL, kind text) WITH (tail = true, sort_by = 'ts')")
    a.commit()
    ca.executemany("INSERT INTO ev VALUES (%s, %s)",
                   [("2026-01-01 00:00:00+00", "a"), ("2026-01-01 00:00:01+00", "b")])
    ca.execute("INSERT INTO ev VALUES (now(), 'c') RETURNING kind, _offset")
    out("returning in a block", ca.fetchone())
    cb.execute("SELECT count(*) FROM ev")
    out("before commit", cb.fetchone())
    a.commit()
    cb.execute("SELECT kind, _offset FROM ev ORDER BY _offset")
    out("after commit", cb.fetchall())
    ca.execute("INSERT INTO ev VALUES (now(), 'd')")
    a.rollback()
    cb.execute("SELECT count(*) FROM ev")
    out("after rollback", cb.fetchone())
    ca.execute("INSERT INTO ev VALUES (now(), 'e') RETURNING _offset")
    a.commit()
    cb.execute("SELECT max(_offset) FROM ev")
    out("offsets go on", cb.fetchone())


def scenario_keyed_tail():
    # a keyed tail (a primary key and a tail) from psycopg2's default mode: the UPDATEs and upserts are
    # the block's own versions until commit appends them; a block that changed a key another changed
    # since it read it fails at commit with 40001 and changes nothing
    a, b, ca, cb = connection_pair()
    ca.execute("CREATE TABLE acc (id integer PRIMARY KEY, bal integer NOT NULL) WITH (tail = true)")
    a.commit()
    ca.executemany("INSERT INTO acc VALUES (%s, %s)", [(1, 100), (2, 100), (3, 100)])
    a.commit()
    ca.execute("UPDATE acc SET bal = bal - 30 WHERE id = %s", (1,))
    ca.execute("UPDATE acc SET bal = bal + 30 WHERE id = %s", (2,))
    ca.execute("INSERT INTO acc VALUES (4, 5) ON CONFLICT (id) DO UPDATE SET bal = acc.bal + excluded.bal")
    ca.execute("SELECT id, bal FROM acc ORDER BY id")
    out("in the block", ca.fetchall())
    cb.execute("SELECT id, bal FROM acc ORDER BY id")
    out("others before commit", cb.fetchall())
    b.commit()
    a.commit()
    cb.execute("SELECT id, bal FROM acc ORDER BY id")
    out("others after commit", cb.fetchall())
    b.commit()
    ca.execute("UPDATE acc SET bal = 0 WHERE id = %s", (3,))
    cb.execute("UPDATE acc SET bal = 1 WHERE id = %s", (3,))
    b.commit()
    try:
        a.commit()
        out("no error at commit")
    except psycopg2.Error as e:
        out(type(e).__name__, e.pgcode, repr(e.diag.message_primary))
    cb.execute("SELECT bal FROM acc WHERE id = 3")
    out("the first committer's", cb.fetchone())
    b.commit()
    ca.execute("UPDATE acc SET bal = 7 WHERE id = 3")
    error(ca, "INSERT INTO acc2 VALUES (1)")
    a.rollback()
    ca.execute("CREATE TABLE other (id integer)")
    a.commit()
    ca.execute("UPDATE acc SET bal = 7 WHERE id = 3")
    error(ca, "INSERT INTO other VALUES (1)")
    a.rollback()
    cb.execute("SELECT bal FROM acc WHERE id = 3")
    out("after rollback", cb.fetchone())


def scenario_isolation():
    conn = connect()
    conn.set_session(isolation_level="SERIALIZABLE", readonly=True)
    cur = conn.cursor()
    cur.execute("SHOW transaction_isolation")
    out(cur.fetchone())
    cur.execute("SHOW transaction_read_only")
    out(cur.fetchone())
    error(cur, "CREATE TABLE ro (id integer)")
    conn.rollback()
    conn.set_session(isolation_level="READ COMMITTED", readonly=False)
    cur.execute("SHOW transaction_isolation")
    out(cur.fetchone())
    conn.rollback()


def scenario_copy():
    conn = connect()
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE TABLE cp2 (id integer, name text, price numeric(6,2))")
    cur.copy_expert("COPY cp2 FROM STDIN WITH (FORMAT csv, HEADER true)",
                    io.StringIO('id,name,price\n1,one,1.50\n2,,\n3,"a,b",-2\n'))
    out("copy_expert in", cur.rowcount)
    cur.copy_from(io.StringIO("4\tfour\t4.00\n5\t\\N\t\\N\n"), "cp2", columns=("id", "name", "price"))
    out("copy_from", cur.rowcount)
    buf = io.StringIO()
    cur.copy_expert("COPY (SELECT * FROM cp2 ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)", buf)
    out(repr(buf.getvalue()))
    buf = io.StringIO()
    cur.copy_to(buf, "cp2", columns=("id", "name"))
    out(sorted(buf.getvalue().splitlines()))


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[1]]()
