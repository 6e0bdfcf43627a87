-- Run by PsqlTest as psql -X -At -v ON_ERROR_STOP=0 -f -: what PostgreSQL's own functions and settings
-- answer in a session of user tester on database floe.
SELECT current_database(), current_user, session_user, current_schema();
SELECT version() LIKE 'PostgreSQL %';
SELECT current_setting('server_version_num')::int >= 90000;
SHOW search_path;
SELECT pg_backend_pid() > 0;
SELECT 7.0 / 2, 1::numeric / 3;
