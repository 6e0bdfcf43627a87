-- Run by PsqlTest as psql -X -At -v ON_ERROR_STOP=0 -f - (this file on standard input): each error is
-- printed with its SQLSTATE, and the script goes on.
\set VERBOSITY verbose
CREATE TABLE errs (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO errs VALUES (1, 'one');
SELECT 1/0;
SELECT * FROM no_such_table;
SELECT no_such_column FROM errs;
SELEC 1;
INSERT INTO errs VALUES (1, 'again');
CREATE TABLE errs (id integer);
SELECT 2147483647 + 1;
SELECT no_such_function(1);
INSERT INTO errs VALUES (2, NULL);
SELECT 'abc'::integer;
SELECT DATE '2024-02-30';
DROP TABLE no_such_table;
SELECT count(*) FROM errs;
