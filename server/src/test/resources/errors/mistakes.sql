-- Mistakes a PostgreSQL user makes, one statement per line, each run through Floe and through a real
-- PostgreSQL 15 (ErrorCorpusTest) comparing SQLSTATE, message and position. Every statement fails on
-- PostgreSQL, or is a feature Floe refuses on purpose. A line "-- why: ..." gives the reason for a
-- difference of the statement after it, shown in docs/sql.md's table of differences.

-- syntax
SELECT * FORM trips
SELEC * FROM trips
SELECT * FROM trips WHERE
-- why: DuckDB's parser accepts a trailing comma in a select list
SELECT id, FROM trips
SELECT (id FROM trips
SELECT 'unterminated
SELECT "unterminated
INSERT INTO trips VALUES (3, 'card'
SELECT * FROM trips ORDER id
SELECT * FROM trips LIMIT
UPDATE trips fare = 1
DELETE trips WHERE id = 1
CREATE TABLE t1 (a int,)
SELECT id FROM trips GROUP id
SELECT select FROM trips
SELECT 1 +
SELECT * FROM trips WHERE id = = 1
CREATE TABLE (a int)
SELECT * FROM trips JOIN zones
INSERT trips VALUES (1)
SELECT *
SELECT id FROM trips WHERE id = 1 AND
SELECT coalesce()
-- why: DuckDB, like PostgreSQL 16, accepts a subquery in FROM without an alias
SELECT * FROM (SELECT 1)

-- names that do not exist
SELECT * FROM trip
SELECT fare FROM trips t JOIN zonez z ON t.id = z.zone_id
SELECT fares FROM trips
SELECT tips FROM trips
SELECT fare
SELECT trips.fare
SELECT t.nope FROM trips t
SELECT x.id FROM trips t
SELECT id FROM trips t WHERE trips.id = 1
SELECT nosuchfunc(id) FROM trips
SELECT lenght(note) FROM trips
SELECT * FROM nosuchschema.trips
-- why: Floe's hint lists the types a table column can have
CREATE TABLE t2 (a nosuchtype)
SELECT 1::nosuchtype
INSERT INTO trips (id, nosuch) VALUES (3, 1)
UPDATE trips SET nosuch = 1
DELETE FROM nosuch
DROP TABLE nosuch
DROP TABLE trips, nosuch
ALTER TABLE trips DROP COLUMN nosuch
ALTER TABLE nosuch ADD COLUMN a int
ALTER TABLE trips RENAME COLUMN nosuch TO x
SELECT id FROM trips ORDER BY nosuch
SELECT count(*) FROM trips GROUP BY nosuch
SELECT * FROM trips WHERE nosuch = 1
TRUNCATE nosuch
SET nosuch_parameter = 1
SHOW nosuch_parameter
SELECT nextval('nosuch_seq')
DROP SCHEMA nosuch
DROP VIEW nosuch
DROP INDEX nosuch
WITH x AS (SELECT 1) SELECT * FROM y
-- why: prepared statements are the protocol's (Parse, Bind, Execute); SQL-level PREPARE and EXECUTE are not supported
EXECUTE nosuch
DEALLOCATE nosuch
FETCH 1 FROM nosuch
CLOSE nosuch
MERGE INTO trips t USING zones z ON t.id = z.zone_id WHEN MATCHED THEN UPDATE SET nosuch = 1

-- ambiguity
SELECT id FROM trips JOIN zones ON trips.id = zones.zone_id
SELECT * FROM trips t JOIN zones t ON true

-- types and operators
SELECT * FROM trips WHERE payment_type = 1
SELECT * FROM trips WHERE d = 5
SELECT * FROM trips WHERE d BETWEEN 1 AND 2
SELECT * FROM trips WHERE note LIKE 5
SELECT * FROM trips WHERE flag = 'maybe'
SELECT id + 'abc' FROM trips
SELECT note + 1 FROM trips
SELECT id FROM trips WHERE fare > 'expensive'
SELECT * FROM trips WHERE pickup_at > 'last tuesday'
SELECT * FROM trips WHERE note
SELECT * FROM trips WHERE id
-- why: DuckDB's max(x, n) is an aggregate of the n largest values (a list)
SELECT max(id, 2) FROM trips
SELECT NULL::int + 'a'
SELECT 'a' = 1
SELECT 1 IN ('a')
SELECT CASE WHEN true THEN 1 ELSE 'x' END
SELECT CASE WHEN true THEN 1 ELSE now() END
SELECT CASE WHEN true THEN 1 WHEN false THEN now() END
SELECT CASE WHEN true THEN now() WHEN false THEN now() ELSE 2 END
SELECT COALESCE(1, 'a')
SELECT true::date
SELECT now()::integer
SELECT upper()
SELECT left('abc')
SELECT round(1.5, 'a')
SELECT to_char(now(), 'YYYY', 'x')

-- values that are not of the type
SELECT 'abc'::integer
-- why: casts inside a query are DuckDB's ('3.7'::int is 4); a value written to an integer column follows PostgreSQL's rules (22P02)
SELECT '12.5'::integer
SELECT 'x'::numeric
SELECT 'yes please'::boolean
SELECT '2024-13-01'::date
SELECT '2024-02-30'::date
SELECT 'not a date'::date
SELECT 'nope'::timestamp
SELECT '25:00'::time
SELECT 'zz'::uuid
SELECT '1 fortnight'::interval
SELECT '{1,2'::int[]
SELECT to_timestamp('x')

-- out of range
SELECT '99999999999'::integer
SELECT 10000000000::int
SELECT 100000::smallint
SELECT -2147483648::int
SELECT 12345.678::numeric(5,2)
SELECT 2147483647 + 1
SELECT 9223372036854775807 + 1
SELECT 32767::smallint + 1::smallint
-- why: a literal with an exponent is a double precision value here, a numeric in PostgreSQL: the error is the one of a double precision value cast to real
SELECT 3.5e38::real
SELECT 1e300::float8::real
SELECT make_date(2024, 13, 1)

-- arithmetic and functions
SELECT 1 / 0
SELECT 1.0 / 0
SELECT 5 % 0
SELECT sqrt(-1)
SELECT ln(0)
SELECT log(-1)
SELECT power(0, -1)
SELECT substring('abc' from 1 for -1)
SELECT chr(-1)
SELECT 'abc' ~ '('
SELECT generate_series(1, 10, 0)
SELECT * FROM trips LIMIT -1
SELECT * FROM trips OFFSET -1
SELECT date_trunc('fortnight', now())
SELECT extract(fortnight FROM now())
SELECT 'abc' LIKE 'a' ESCAPE 'xx'
UPDATE trips SET fare = fare / 0
DELETE FROM trips WHERE id = 1 / 0

-- writes that break a rule of the table
INSERT INTO trips VALUES (1, 'card', 1, 1, now(), 'dup', true, current_date)
UPDATE trips SET id = 2 WHERE id = 1
INSERT INTO trips SELECT * FROM zones
INSERT INTO trips (id) VALUES (3)
INSERT INTO trips (id, payment_type) VALUES (NULL, 'card')
UPDATE trips SET payment_type = NULL WHERE id = 1
INSERT INTO small (v) VALUES ('toolong')
INSERT INTO small (n) VALUES (12345.6)
UPDATE small SET n = n * 10000
INSERT INTO small (s) VALUES (40000)
INSERT INTO trips (id, payment_type, fare) VALUES (3, 'card', 'free')
INSERT INTO trips (id, payment_type, d) VALUES (3, 'card', 'tomorrow-ish')
INSERT INTO trips (id, payment_type, pickup_at) VALUES (3, 'card', 'yesterday noon')
INSERT INTO trips (id, payment_type, flag) VALUES (3, 'card', 'perhaps')
INSERT INTO trips VALUES (3, 'card', 1, 2, now(), 'x', true, current_date, 'extra')
INSERT INTO trips (id, payment_type) VALUES (3)
INSERT INTO trips (id, id) VALUES (3, 4)
UPDATE trips SET fare = 'abc'
MERGE INTO trips t USING zones z ON t.id = z.zone_id WHEN MATCHED THEN UPDATE SET id = 5
MERGE INTO trips t USING (SELECT 1 AS k UNION ALL SELECT 1) s ON t.id = s.k WHEN MATCHED THEN DELETE

-- constraints: UNIQUE, CHECK, FOREIGN KEY
INSERT INTO owners VALUES (3, 'a@x', 1)
INSERT INTO owners VALUES (3, 'c@x', 1), (4, 'c@x', 2)
UPDATE owners SET email = 'a@x' WHERE id = 2
INSERT INTO owners VALUES (3, 'c@x', -1)
UPDATE owners SET age = -1 WHERE id = 1
INSERT INTO pets VALUES (2, 9, 'fido')
UPDATE pets SET owner_id = 9
INSERT INTO pets VALUES (2, NULL, 'averyveryverylongname')
DELETE FROM owners WHERE id = 1
UPDATE owners SET id = 10 WHERE id = 1
MERGE INTO owners o USING (SELECT 1 AS id) s ON o.id = s.id WHEN MATCHED THEN DELETE
TRUNCATE owners
DROP TABLE owners
ALTER TABLE owners ADD CONSTRAINT age_small CHECK (age < 35)
ALTER TABLE pets ADD FOREIGN KEY (name) REFERENCES owners (email)
ALTER TABLE pets ADD FOREIGN KEY (id) REFERENCES owners (age)
ALTER TABLE pets ADD FOREIGN KEY (name) REFERENCES owners
ALTER TABLE pets DROP CONSTRAINT nope
ALTER TABLE owners DROP COLUMN id
CREATE TABLE t8 (a int REFERENCES zones (name))
CREATE TABLE t9 (a int REFERENCES nowhere)
CREATE TABLE t10 (a int, CONSTRAINT c1 CHECK (a > 0), CONSTRAINT c1 CHECK (a < 9))

-- grouping, ordering, subqueries
SELECT payment_type, count(*) FROM trips
SELECT id, count(*) FROM trips GROUP BY payment_type
SELECT 1 FROM trips HAVING id > 1
SELECT * FROM trips WHERE count(*) > 1
SELECT sum(count(*)) FROM trips
SELECT id FROM trips ORDER BY 99
SELECT id FROM trips GROUP BY 5
SELECT sum(note) FROM trips
SELECT avg(flag) FROM trips
SELECT DISTINCT ON (note) id FROM trips ORDER BY id
SELECT row_number() FROM trips
SELECT * FROM trips WHERE row_number() OVER () > 1
SELECT (SELECT id FROM trips)
SELECT * FROM trips WHERE id = (SELECT id FROM trips)
SELECT id FROM trips UNION SELECT id, note FROM trips
SELECT id FROM trips UNION SELECT note FROM trips
SELECT * FROM trips WHERE id IN (SELECT id, note FROM trips)
WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT x.n FROM x, x y) SELECT 1
SELECT $1

-- DDL
CREATE TABLE trips (a int)
CREATE TABLE t3 (a int, a text)
ALTER TABLE trips ADD COLUMN fare int
CREATE TABLE t4 (a int PRIMARY KEY, b int PRIMARY KEY)
CREATE TABLE t5 (a int, PRIMARY KEY (b))
ALTER TABLE trips RENAME TO zones
-- why: Iceberg changes a column's type only where every value converts (int to bigint, float to double, a wider decimal); there is no USING
ALTER TABLE trips ALTER COLUMN note TYPE integer
CREATE TABLE t6 (a varchar(0))
-- why: an Iceberg decimal holds at most 38 digits
CREATE TABLE t7 (a numeric(1001))
-- why: Floe has no materialized views (an Iceberg table is the materialization; CREATE TABLE AS)
CREATE MATERIALIZED VIEW mv AS SELECT 1
-- why: functions are DuckDB's built-ins; user-defined functions are not stored
CREATE FUNCTION f() RETURNS int AS 'SELECT 1' LANGUAGE sql

-- sessions and transactions
SAVEPOINT a
ROLLBACK TO SAVEPOINT a
RELEASE SAVEPOINT a
SET TIME ZONE 'Mars/Olympus'
SET statement_timeout = 'soon'
SHOW no_such_setting
SHOW myext.never_set
SELECT current_setting('no_such_setting')
SELECT current_setting('myext.never_set')
SET server_version = '9.6'
RESET server_version_num
SET lc_collate = 'C'

-- views
CREATE VIEW trips AS SELECT 1
CREATE VIEW v1 AS SELECT nosuch FROM trips
CREATE VIEW v1 AS SELECT 1 AS a, 2 AS a
DROP VIEW trips
