// Run by NodePostgresTest: node-postgres (pg 8.x, installed by .ci/install-clients into server/src/test/node,
// found through NODE_PATH) against the server that PGHOST/PGPORT/PGUSER/PGDATABASE name, with TZ=UTC.
// `node pg_client.js SCENARIO` prints one line per checked value; the Java test compares them with what
// the same scenario prints against PostgreSQL.
'use strict';
const { Client, Pool } = require('pg');

function out(...values) {
  console.log(values.map((v) => (typeof v === 'string' ? v : show(v))).join(' '));
}

function show(v) {
  return JSON.stringify(v, (k, x) => {
    if (x && x.type === 'Buffer' && Array.isArray(x.data)) return 'bytes:' + Buffer.from(x.data).toString('hex');
    return x;
  });
}

async function params() {
  const c = new Client();
  await c.connect();
  await c.query('CREATE TABLE np (id integer, big bigint, name text, price numeric(10,2), born date, ' +
    'ts timestamp, tz timestamptz, ok boolean, d double precision)');
  const rows = [
    [1, '9000000000', "it's \"quoted\" -- ; $2", '12.50', '2024-02-29', '2024-02-29 13:14:15.5',
      new Date(Date.UTC(2024, 1, 29, 11, 14, 15)), true, 1.5],
    [2, null, null, null, null, null, null, null, null],
    [3, -1, 'héllo ☃', -0.01, new Date(Date.UTC(1999, 11, 31)), new Date(Date.UTC(2000, 0, 1)),
      new Date(Date.UTC(2000, 0, 1)), false, -0.0025],
  ];
  for (const r of rows) {
    const res = await c.query('INSERT INTO np VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)', r);
    out(res.command, res.rowCount);
  }
  const all = await c.query('SELECT * FROM np ORDER BY id');
  for (const row of all.rows) out(row);
  out(all.fields.map((f) => [f.name, f.dataTypeID]));
  out((await c.query('SELECT id FROM np WHERE name = $1', [rows[0][2]])).rows);
  out((await c.query('SELECT id FROM np WHERE born < $1 AND price < $2 ORDER BY id', ['2000-01-01', 100])).rows);
  out((await c.query('SELECT $1::int + $2::int AS sum, $3::text AS s, $4::text IS NULL AS isnull',
    [1, 2, "x'y", null])).rows);
  out((await c.query({ text: 'SELECT id, name FROM np WHERE id > $1 ORDER BY id', values: [1], rowMode: 'array' })).rows);
  // a named statement is parsed once per connection and reused
  for (const id of [1, 3]) {
    out((await c.query({ name: 'by-id', text: 'SELECT name, ok FROM np WHERE id = $1', values: [id] })).rows);
  }
  await c.end();
}

// node-postgres sends a Buffer as a binary-format parameter of unspecified type (OID 0): the server
// takes its type from the context (here the bytea column), as it does for a text-format one.
async function bytea() {
  const c = new Client();
  await c.connect();
  await c.query('CREATE TABLE nb (id integer, data bytea)');
  const values = [Buffer.from([0, 255, 39, 92]), Buffer.alloc(0), null];
  for (let i = 0; i < values.length; i++) {
    out((await c.query('INSERT INTO nb VALUES ($1, $2)', [i, values[i]])).rowCount);
  }
  out((await c.query('SELECT id, data FROM nb ORDER BY id')).rows);
  out((await c.query('SELECT id FROM nb WHERE data = $1', [values[0]])).rows);
  await c.end();
}

async function pool() {
  const p = new Pool({ max: 4 });
  await p.query('CREATE TABLE npool (id integer, v text)');
  const inserts = [];
  for (let i = 0; i < 40; i++) inserts.push(p.query('INSERT INTO npool VALUES ($1, $2)', [i, 'v' + i]));
  const done = await Promise.all(inserts);
  out('inserted', done.reduce((n, r) => n + r.rowCount, 0));
  const queries = [];
  for (let i = 0; i < 40; i++) {
    queries.push(p.query('SELECT v, (SELECT count(*) FROM npool WHERE id <= $1) AS n FROM npool WHERE id = $1', [i]));
  }
  const results = await Promise.all(queries);
  out('answers', results.every((r, i) => r.rows.length === 1 && r.rows[0].v === 'v' + i && r.rows[0].n === String(i + 1)));
  out('connections', p.totalCount);
  const c = await p.connect();
  try {
    await c.query('BEGIN');
    await c.query('INSERT INTO npool VALUES ($1, $2)', [100, 'in a transaction']);
    await c.query('COMMIT');
  } finally {
    c.release();
  }
  out((await p.query('SELECT count(*)::int AS n FROM npool')).rows);
  await p.end();
}

async function manyRows() {
  const c = new Client();
  await c.connect();
  const t0 = Date.now();
  const r = await c.query("SELECT i, 'row ' || i AS s FROM generate_series(0, 99999) AS g(i)");
  let sum = 0;
  let texts = 0;
  for (const row of r.rows) {
    sum += Number(row.i);
    if (row.s === 'row ' + row.i) texts++;
  }
  out('rows', r.rowCount, r.rows.length, 'sum', sum, 'texts', texts);
  const a = await c.query({ text: 'SELECT i FROM generate_series(0, 99999) AS g(i) WHERE i % $1 = 0', values: [2], rowMode: 'array' });
  out('even', a.rows.length, Number(a.rows[49999][0]));
  console.error('many rows in ' + (Date.now() - t0) + ' ms');
  await c.end();
}

async function errors() {
  const c = new Client();
  await c.connect();
  await c.query('CREATE TABLE nerr (id integer PRIMARY KEY, name text NOT NULL)');
  await c.query("INSERT INTO nerr VALUES (1, 'one')");
  const cases = [
    ['SELECT 1/0'],
    ['SELECT * FROM no_such_table'],
    ['SELECT no_such_column FROM nerr'],
    ['SELEC 1'],
    ['INSERT INTO nerr VALUES ($1, $2)', [1, 'again']],
    ['INSERT INTO nerr VALUES ($1, $2)', [2, null]],
    ['SELECT $1::integer', ['abc']],
  ];
  for (const [sql, values] of cases) {
    try {
      await c.query(sql, values);
      out('no error', sql);
    } catch (e) {
      // PsqlTest checks the text of 22P02 (invalid input syntax); here its SQLSTATE is enough
      out(e.constructor.name, e.severity, e.code, e.code === '22P02' ? null : e.message,
        e.position === undefined ? null : e.position, e.code === '23505' ? e.detail : null);
    }
  }
  out((await c.query('SELECT count(*)::int AS n FROM nerr')).rows);
  await c.query('BEGIN');
  try {
    await c.query('SELECT 1/0');
  } catch (e) {
    out('in transaction', e.code);
  }
  try {
    await c.query('SELECT 1');
  } catch (e) {
    out('aborted', e.code);
  }
  await c.query('ROLLBACK');
  out((await c.query('SELECT 3 AS three')).rows);
  await c.end();
}

// The types PostgreSQL gives common expressions: clients pick their parsers by these OIDs.
async function resultTypes() {
  const c = new Client();
  await c.connect();
  const r = await c.query("SELECT 1 AS int4, 9000000000 AS int8, 1.5 AS numeric, 'x' AS text, true AS bool, " +
    "count(*) AS count, sum(g) AS sum_int4, avg(g) AS avg_int4, max(g) AS max_int4, length('abc') AS length, " +
    "now() AS now, CURRENT_DATE AS date, 2.5::float8 AS float8, 'a'::varchar(3) AS varchar " +
    'FROM generate_series(1, 3) AS s(g)');
  out(r.fields.map((f) => [f.name, f.dataTypeID]));
  const row = r.rows[0];
  out([row.int4, row.int8, row.numeric, row.text, row.bool, row.count, row.sum_int4, row.avg_int4, row.max_int4, row.length]);
  const g = await c.query('SELECT g FROM generate_series(1, 2) AS s(g)');
  out('generate_series', g.fields[0].dataTypeID, g.rows);
  await c.end();
}

const scenarios = { params, bytea, pool, manyRows, errors, resultTypes };
scenarios[process.argv[2]]().catch((e) => {
  console.error(e);
  process.exit(1);
});
