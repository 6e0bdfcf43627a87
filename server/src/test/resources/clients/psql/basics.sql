-- Run by PsqlTest with psql -X -At -v ON_ERROR_STOP=1 -f: tables, rows of several types, changes.
SET TIME ZONE 'UTC';
CREATE TABLE items (id integer PRIMARY KEY, name text, price numeric(10,2), born date, ts timestamp,
  tz timestamptz, ok boolean, d double precision, r real, big bigint, u uuid, b bytea);
INSERT INTO items VALUES
  (1, 'a''b "c"', 12.5, '2024-02-29', '2024-02-29 13:14:15.5', '2024-02-29 13:14:15+02', true, 1.5, 0.25,
   9000000000, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x00ff'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, 'héllo ☃', -0.01, '1999-12-31', '2000-01-01 00:00:00', '2000-01-01 00:00:00+00', false, -2.5e-3, 3,
   -1, '00000000-0000-0000-0000-000000000000', '');
SELECT * FROM items ORDER BY id;
SELECT id, name FROM items WHERE price > 0 OR name LIKE 'h%' ORDER BY id DESC;
UPDATE items SET name = 'z' WHERE id = 3;
DELETE FROM items WHERE id = 2;
SELECT count(*), sum(price), min(born), max(ts), string_agg(name, ',' ORDER BY id) FROM items;
SELECT NULL::int IS NULL, 7/2, 7 % 3, 'x' || 'y', length('héllo'), DATE '2024-03-01' - DATE '2024-02-28';
SELECT i, i * i AS sq FROM generate_series(1, 3) AS g(i);
