"""Runs SQL statements against a Floe server with psycopg2, one result line (JSON) per statement.

Usage: run_statements.py STATEMENTS_JSON  (libpq environment: PGHOST, PGPORT, PGUSER, PGDATABASE)
Each statement runs in autocommit mode. A result line is {"ok": true, "rows": [[...]]} or
{"ok": false, "sqlstate": "42501", "message": "..."}; values are their text.
"""
import json
import sys

import psycopg2

with open(sys.argv[1], encoding="utf-8") as f:
    statements = json.load(f)

conn = psycopg2.connect("")
conn.autocommit = True
for sql in statements:
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            rows = []
            if cur.description is not None:
                rows = [[None if v is None else str(v) for v in row] for row in cur.fetchmany(50)]
        print(json.dumps({"ok": True, "rows": rows}), flush=True)
    except psycopg2.Error as e:
        print(json.dumps({"ok": False, "sqlstate": e.pgcode, "message": str(e).strip()}), flush=True)
        if conn.closed:
            conn = psycopg2.connect("")
            conn.autocommit = True
conn.close()
