-- Run by PgbenchTest with pgbench -n -f: read, change and re-read a random account in a transaction block.
\set aid random(1, 1000)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgb_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgb_accounts WHERE aid = :aid;
END;
