-- Run on both Floe and PostgreSQL 15 before the mistakes; one statement per line.
CREATE TABLE trips (id integer PRIMARY KEY, payment_type varchar(10) NOT NULL, fare numeric(6,2), tip double precision, pickup_at timestamptz, note text, flag boolean, d date)
INSERT INTO trips VALUES (1, 'card', 12.50, 2.0, '2024-01-01 10:00:00+00', 'first', true, '2024-01-01'), (2, 'cash', 7.25, 0, '2024-01-02 11:00:00+00', NULL, false, '2024-01-02')
CREATE TABLE zones (zone_id integer PRIMARY KEY, name text, id integer)
INSERT INTO zones VALUES (1, 'a', 1), (2, 'b', 2)
CREATE TABLE small (s smallint, n numeric(4,1), v varchar(3))
INSERT INTO small VALUES (1, 1.5, 'ab')
