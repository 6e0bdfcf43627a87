-- Run by PsqlTest as psql -X -At -v ON_ERROR_STOP=0 -f -: \copy and COPY with the data inline.
\set VERBOSITY verbose
CREATE TABLE cp (id integer, name text, price numeric(6,2), born date);
\copy cp FROM stdin
1	one	1.50	2024-01-01
2	\N	\N	\N
3	tab\there	-2.00	1999-12-31
\.
COPY cp (id, name) FROM STDIN WITH (FORMAT csv, HEADER true);
id,name
4,"quoted, comma"
\.
SELECT count(*), sum(price) FROM cp;
\copy (SELECT * FROM cp ORDER BY id) TO stdout
\copy (SELECT id, name FROM cp WHERE id > 1 ORDER BY id) TO stdout WITH (FORMAT csv, HEADER)
COPY (SELECT id, born FROM cp WHERE id < 3 ORDER BY id) TO STDOUT WITH (FORMAT csv);
