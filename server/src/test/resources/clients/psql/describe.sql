-- Run by PsqlTest: the table that \dt, \d and \d+ describe.
CREATE TABLE t (id integer PRIMARY KEY, name text, price numeric(10,2), born date, ts timestamp,
  tz timestamptz, ok boolean, d double precision, big bigint, u uuid, b bytea);
