-- Run by PsqlTest with psql -X -At: functions that every PostgreSQL client relies on.
SELECT current_database(), current_user, session_user, current_schema();
SELECT version() LIKE 'PostgreSQL %';
SELECT current_setting('server_version_num')::int >= 90000;
SHOW search_path;
SELECT pg_backend_pid() > 0;
