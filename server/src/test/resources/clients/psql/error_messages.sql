-- Run by PsqlTest as psql -X -At -v ON_ERROR_STOP=0 -f -: errors whose SQLSTATE errors.sql checks,
-- here for the text PostgreSQL gives them.
\set VERBOSITY verbose
CREATE TABLE errmsg (id integer PRIMARY KEY, name text NOT NULL);
SELECT 2147483647 + 1;
SELECT no_such_function(1);
INSERT INTO errmsg VALUES (2, NULL);
SELECT 'abc'::integer;
SELECT DATE '2024-02-30';
