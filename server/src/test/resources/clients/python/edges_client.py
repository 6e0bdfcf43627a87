"""Run by PsycopgTest with /usr/bin/python3: the edges of every type Floe stores, through psycopg2 (text
format; parameters interpolated on the client) and psycopg 3 (binary format both ways), against the server
PGHOST/PGPORT/PGUSER/PGDATABASE name. `edges_client.py SCENARIO` prints one line per checked value; the Java
test compares them with what the same scenario prints against PostgreSQL 15."""
import datetime
import io
import struct
import sys
import uuid
from decimal import Decimal

ALL_BYTES = bytes(range(256))
UTC = datetime.timezone.utc
COLUMNS = ("k int, b boolean, s smallint, i integer, l bigint, r real, d double precision, n numeric(38,9), t text, "
           "dt date, tm time, ts timestamp, tz timestamptz, u uuid, by bytea")
ROWS = [
    (1, True, -32768, -2147483648, -9223372036854775808, float("-inf"), float("-inf"),
     Decimal("-99999999999999999999999999999.999999999"), "", datetime.date(1, 1, 1), datetime.time(0, 0),
     datetime.datetime(1, 1, 1), datetime.datetime(1, 1, 1, tzinfo=UTC), uuid.UUID(int=0), b""),
    (2, False, 32767, 2147483647, 9223372036854775807, float("inf"), 1.7976931348623157e308,
     Decimal("99999999999999999999999999999.999999999"), "héllo ☃ 😀 e\u0301", datetime.date(9999, 12, 31),
     datetime.time(23, 59, 59, 999999), datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
     datetime.datetime(2024, 2, 29, 13, 14, 15, 123456, tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))),
     uuid.UUID(int=2 ** 128 - 1), ALL_BYTES),
    (3, None, 0, 0, 0, float("nan"), float("nan"), Decimal("0.000000001"), "it's \"quoted\" -- ; $1 %s \\ \t\n\r",
     None, None, None, None, None, b"\x00"),
    (4, True, -1, -1, -1, -0.0, 5e-324, Decimal("-0.000000001"), "ÿ", None, None, None, None, None, b"'\\"),
]
# what Python's datetime cannot hold, as PostgreSQL's text: BC, the first and last dates, years past 9999
TEXT_ROWS = [
    (5, "0044-03-15 BC", "0044-03-15 10:00 BC", "0044-03-15 10:00:00+02 BC"),
    (6, "4713-01-01 BC", "4713-01-01 00:00:00 BC", "4714-11-24 00:00:00+00 BC"),
    (7, "5874897-12-31", "294247-01-10 04:00:54.775806", "294247-01-10 04:00:54.775806+00"),
    (8, "10000-01-01", "10000-01-01 00:00:00.5", "0001-12-31 23:59:59.999999+00 BC"),
]
REFUSED = [
    ("dt", "infinity"), ("ts", "-infinity"), ("tz", "infinity"), ("dt", "0000-01-01"), ("dt", "4714-11-23 BC"),
    ("ts", "294276-12-31 23:59:59.999999"),
]


def out(*values):
    print(*values, flush=True)


def failure(e):
    return "refused %s %s" % (getattr(e, "pgcode", None) or getattr(e, "sqlstate", None), str(e).splitlines()[0])


def scenario_psycopg2():
    import psycopg2
    import psycopg2.extensions
    import psycopg2.extras
    psycopg2.extras.register_uuid()
    conn = psycopg2.connect("", application_name="edges-psycopg2")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET TimeZone = 'UTC'")
    cur.execute("CREATE TABLE edges2 (%s)" % COLUMNS)
    for row in ROWS:
        cur.execute("INSERT INTO edges2 VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", row)
    for row in TEXT_ROWS:
        cur.execute("INSERT INTO edges2 (k, dt, ts, tz) VALUES (%s, %s::date, %s::timestamp, %s::timestamptz)", row)
    cur.execute("SELECT * FROM edges2 WHERE k <= 4 ORDER BY k")
    for row in cur.fetchall():
        out(tuple(bytes(v) if isinstance(v, memoryview) else v for v in row))
    # dates Python cannot hold, read as the text the server sends
    raw = cur.connection.cursor()
    for oid, name in ((1082, "DATE"), (1114, "TIMESTAMP"), (1184, "TIMESTAMPTZ")):
        psycopg2.extensions.register_type(psycopg2.extensions.new_type((oid,), "RAW_" + name, lambda v, c: v), raw)
    raw.execute("SELECT k, dt, ts, tz FROM edges2 WHERE k > 4 ORDER BY k")
    for row in raw.fetchall():
        out(row)
    raw.execute("SET TimeZone = 'Europe/Paris'")
    raw.execute("SELECT tz FROM edges2 WHERE k IN (5, 6) ORDER BY k")
    out(raw.fetchall())
    raw.execute("SET TimeZone = 'UTC'")
    cur.execute("SELECT dt FROM edges2 WHERE k = 5")
    try:
        out(cur.fetchall())
    except ValueError as e:
        out("psycopg2 cannot hold it:", e)
    cur.execute("SELECT 'infinity'::date, '-infinity'::date, 'infinity'::timestamp, '-infinity'::timestamptz")
    out(cur.fetchone())
    for column, value in REFUSED:
        try:
            cur.execute("INSERT INTO edges2 (k, %s) VALUES (9, %%s)" % column, (value,))
            out("stored", column, value)
        except psycopg2.Error as e:
            out(failure(e))
    for sql in ["INSERT INTO edges2 (k, t) VALUES (9, E'\\xff')", "INSERT INTO edges2 (k, t) VALUES (9, E'\\xc3\\x28')",
                "INSERT INTO edges2 (k, t) VALUES (9, E'\\000')", "INSERT INTO edges2 (k, t) VALUES (9, chr(0))",
                "INSERT INTO edges2 (k, t) VALUES (9, E'\\xc3\\xa9')"]:
        try:
            cur.execute(sql)
            out("stored", sql)
        except psycopg2.Error as e:
            out(failure(e))
    cur.execute("SELECT t FROM edges2 WHERE k = 9 AND t IS NOT NULL")
    out(cur.fetchall())
    # COPY in PostgreSQL's text format: escapes are bytes, BC dates as PostgreSQL writes them
    cur.execute("CREATE TABLE copied2 (k int, t text, dt date, ts timestamp)")
    cur.copy_expert("COPY copied2 FROM STDIN", io.BytesIO(
        b"1\t\\xc3\\xa9 \\303\\251 tab\\tnl\\n\tinfinity\t\\N\n".replace(b"infinity", b"0044-03-15 BC")
        + b"2\t\xc3\xbf\t4713-01-01 BC\t0044-03-15 10:00:00.5 BC\n"))
    out("copy in", cur.rowcount)
    buf = io.StringIO()
    cur.copy_expert("COPY (SELECT * FROM copied2 ORDER BY k) TO STDOUT", buf)
    out(repr(buf.getvalue()))
    for data in [b"3\tx\tinfinity\t\\N\n", b"3\ta\\x00b\t\\N\t\\N\n", b"3\t\xff\t\\N\t\\N\n", b"3\tx\t0000-01-01\t\\N\n",
                 b"3,\"a\xc3\x28\",,\n"]:
        try:
            cur.copy_expert("COPY copied2 FROM STDIN" + (" (FORMAT csv)" if b"," in data else ""), io.BytesIO(data))
            out("copied", data)
        except psycopg2.Error as e:
            out(failure(e))
    conn.close()


def raw_loaders(cursor, binary):
    """Dates and timestamps as the bytes on the wire: hex for binary, text for text."""
    from psycopg.adapt import Loader
    from psycopg import pq

    class Raw(Loader):
        format = pq.Format.BINARY if binary else pq.Format.TEXT

        def load(self, data):
            return bytes(data).hex() if binary else bytes(data).decode()
    for name in ("date", "timestamp", "timestamptz"):
        cursor.adapters.register_loader(name, Raw)


def raw_params(cursor):
    """Makers of parameters the cursor sends as given bytes in binary format, with a type: PostgreSQL's binary
    values of what Python cannot hold."""
    from psycopg import pq
    from psycopg.adapt import Dumper
    makers = {}
    for name in ("date", "timestamp", "text"):
        kind = type("Raw_" + name, (bytes,), {})

        class Raw(Dumper):
            format = pq.Format.BINARY
            oid = cursor.adapters.types[name].oid

            def dump(self, obj):
                return bytes(obj)
        cursor.adapters.register_dumper(kind, Raw)
        makers[name] = kind
    return makers


def scenario_psycopg3():
    import psycopg
    with psycopg.connect("application_name=edges-psycopg3", autocommit=True) as conn:
        cur = conn.cursor(binary=True)
        cur.execute("SET TimeZone = 'UTC'")
        cur.execute("CREATE TABLE edges3 (%s)" % COLUMNS)
        for row in ROWS:
            cur.execute("INSERT INTO edges3 VALUES (%b, %b, %b, %b, %b, %b, %b, %b, %b, %b, %b, %b, %b, %b, %b)", row)
        for row in TEXT_ROWS:
            cur.execute("INSERT INTO edges3 (k, dt, ts, tz) VALUES (%s, %s::date, %s::timestamp, %s::timestamptz)",
                        row, binary=False)
        cur.execute("SELECT * FROM edges3 WHERE k <= 4 ORDER BY k")
        for row in cur.fetchall():
            out(row)
        raw = conn.cursor(binary=True)
        raw_loaders(raw, True)
        raw.execute("SELECT k, dt, ts, tz FROM edges3 WHERE k > 4 ORDER BY k")
        for row in raw.fetchall():
            out(row)
        raw.execute("SELECT 'infinity'::date, '-infinity'::date, 'infinity'::timestamp, '-infinity'::timestamptz")
        out(raw.fetchone())
        # binary parameters of what Python cannot hold: the bytes PostgreSQL's binary format has
        sender = conn.cursor(binary=True)
        raw_param = raw_params(sender)
        # (the last timestamp Floe stores, and the one after it, which PostgreSQL stores)
        for k, days, micros in [(10, -746117, -64464271200000000), (11, 2147483647, 9223372036854775807),
                                (12, -2147483648, -9223372036854775808), (13, 2145031948, 9222425352054775806),
                                (14, 0, 9222425352054775807)]:
            try:
                sender.execute("INSERT INTO edges3 (k, dt, ts) VALUES (%b, %b, %b)",
                            (k, raw_param["date"](struct.pack(">i", days)), raw_param["timestamp"](struct.pack(">q", micros))))
                out("stored", k)
            except psycopg.Error as e:
                out(failure(e))
        raw.execute("SELECT k, dt, ts FROM edges3 WHERE k >= 10 ORDER BY k")
        out(raw.fetchall())
        text = conn.cursor(binary=False)
        raw_loaders(text, False)
        text.execute("SELECT k, dt, ts FROM edges3 WHERE k >= 10 ORDER BY k")
        out(text.fetchall())
        for column, value in REFUSED:
            try:
                cur.execute("INSERT INTO edges3 (k, %s) VALUES (9, %%t)" % column, (value,))
                out("stored", column, value)
            except psycopg.Error as e:
                out(failure(e))
        for value in ["a\x00b", raw_param["text"](b"\xff"), raw_param["text"](b"a\x00"), raw_param["text"](b"\xc3\xa9")]:
            try:
                sender.execute("INSERT INTO edges3 (k, t) VALUES (9, %b)", (value,))
                out("stored", bytes(value) if isinstance(value, bytes) else value)
            except (psycopg.Error, ValueError) as e:
                out(failure(e) if isinstance(e, psycopg.Error) else "client refused: " + type(e).__name__)
        # binary COPY: BC dates and the last timestamp as PostgreSQL's binary values
        cur.execute("CREATE TABLE copied3 (k int, dt date, ts timestamp)")
        with cur.copy("COPY copied3 FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["int4", "date", "timestamp"])
            copy.write_row((1, datetime.date(1, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)))
        header = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
        row = struct.pack(">hii", 3, 4, 2) + struct.pack(">ii", 4, -746117) + struct.pack(">iq", 8, 9222425352054775806)
        with cur.copy("COPY copied3 FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(header + row + struct.pack(">h", -1))
        try:
            with cur.copy("COPY copied3 FROM STDIN (FORMAT BINARY)") as copy:
                copy.write(header + struct.pack(">hii", 3, 4, 3) + struct.pack(">ii", 4, 2147483647)
                           + struct.pack(">i", -1) + struct.pack(">h", -1))
            out("copied infinity")
        except psycopg.Error as e:
            out(failure(e))
        raw.execute("SELECT k, dt, ts FROM copied3 ORDER BY k")
        out(raw.fetchall())
        text.execute("SELECT k, dt, ts FROM copied3 ORDER BY k")
        out(text.fetchall())


if __name__ == "__main__":
    globals()["scenario_" + sys.argv[1]]()
