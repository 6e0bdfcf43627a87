CREATE TABLE od (id integer PRIMARY KEY, name text, price numeric(10,2), born date, ts timestamp, ok boolean, d double precision, big bigint)
INSERT INTO od VALUES (1, 'it''s', 12.5, '2024-02-29', '2024-02-29 13:14:15', true, 1.5, 9000000000), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL), (3, 'héllo ☃', -0.01, '1999-12-31', '2000-01-01 00:00:00', false, -2.5e-3, -1)
SELECT * FROM od ORDER BY id
SELECT count(*) AS n, sum(price) AS total FROM od
SELECT 1/0
SELECT * FROM no_such_table
INSERT INTO od (id, name) VALUES (1, 'again')
UPDATE od SET name = 'x' WHERE id = 2
DELETE FROM od WHERE id = 1
SELECT id, name FROM od ORDER BY id
