-- Run by PsqlTest with psql -X (aligned output): \x expanded records.
CREATE TABLE wide (id integer, name text, price numeric(6,2), note text);
INSERT INTO wide VALUES (1, 'first', 1.5, NULL), (2, 'second', 22.25, 'x');
\x
SELECT * FROM wide ORDER BY id;
\x off
SELECT * FROM wide ORDER BY id;
