-- Run by PsqlTest: several statements on one line.
CREATE TABLE multi (id integer, t text); INSERT INTO multi VALUES (1, 'a'), (2, 'b'); SELECT count(*) FROM multi;
SELECT 1 AS one; SELECT 'two' AS two; SELECT t FROM multi ORDER BY id;
