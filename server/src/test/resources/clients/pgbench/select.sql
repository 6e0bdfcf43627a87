-- Run by PgbenchTest with pgbench -n -f: a point select on a random key of pgb_accounts (aid 1..1000).
\set aid random(1, 1000)
SELECT abalance, filler FROM pgb_accounts WHERE aid = :aid;
