package dev.floe.exec;

import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import java.util.List;

/**
 * The DuckDB definitions behind {@link PgCatalog}: base tables Floe fills ({@code $DB.base}), the
 * PostgreSQL 15 shaped views over them ({@code $DB.pg_catalog}, {@code $DB.information_schema}), and the
 * functions clients call ({@code $DB.pg_catalog}). {@code $DB} is replaced by the database name.
 */
final class PgCatalogSql {
  private PgCatalogSql() {}

  static final List<String> TABLES = List.of(
      "CREATE TABLE $DB.base.namespace (oid INTEGER, nspname VARCHAR, nspowner INTEGER, oid_kind VARCHAR)",
      "CREATE TABLE $DB.base.class (oid INTEGER, relname VARCHAR, relnamespace INTEGER, relkind VARCHAR, "
          + "relnatts INTEGER, relhasindex BOOLEAN, reltuples DOUBLE, oid_kind VARCHAR, relbytes BIGINT)",
      "CREATE TABLE $DB.base.attribute (attrelid INTEGER, attname VARCHAR, atttypid INTEGER, attlen INTEGER, "
          + "attnum INTEGER, atttypmod INTEGER, attnotnull BOOLEAN, attndims INTEGER, oid_kind VARCHAR)",
      "CREATE TABLE $DB.base.\"index\" (indexrelid INTEGER, indrelid INTEGER, indnatts INTEGER, indisunique BOOLEAN, "
          + "indisprimary BOOLEAN, indkey VARCHAR, indexdef VARCHAR, oid_kind VARCHAR)",
      "CREATE TABLE $DB.base.\"constraint\" (oid INTEGER, conname VARCHAR, connamespace INTEGER, contype VARCHAR, "
          + "conrelid INTEGER, conindid INTEGER, conkey VARCHAR, condef VARCHAR, oid_kind VARCHAR, confrelid INTEGER, "
          + "confkey VARCHAR, confupdtype VARCHAR, confdeltype VARCHAR)",
      "CREATE TABLE $DB.base.viewdef (oid INTEGER, definition VARCHAR, oid_kind VARCHAR)",
      "CREATE TABLE $DB.base.role (oid INTEGER, rolname VARCHAR, oid_kind VARCHAR)",
      "INSERT INTO $DB.base.role VALUES (10, 'floe', 'static')",
      "CREATE TABLE $DB.base.attrdef (oid INTEGER, adrelid INTEGER, adnum INTEGER, adbin VARCHAR, oid_kind VARCHAR)",
      "CREATE TABLE $DB.base.description (objoid INTEGER, classoid INTEGER, objsubid INTEGER, description VARCHAR, "
          + "oid_kind VARCHAR)",
      "CREATE TABLE $DB.base.type (oid INTEGER, typname VARCHAR, typnamespace INTEGER, typlen INTEGER, "
          + "typbyval BOOLEAN, typtype VARCHAR, typcategory VARCHAR, typelem INTEGER, typarray INTEGER, "
          + "typinput VARCHAR, typoutput VARCHAR)");

  private static final String NO_ACL = "CAST(NULL AS VARCHAR[])";

  /** An empty relation with typed columns: {@code name TYPE, ...}. */
  private static String empty(String schema, String name, String columns) {
    String inDb = schema.equals("pg_catalog") ? "pgcat" : "infoschema";
    StringBuilder b = new StringBuilder("CREATE VIEW $DB." + inDb + "." + name + " AS SELECT ");
    String[] cols = columns.split(",\\s*");
    for (int i = 0; i < cols.length; i++) {
      String[] nt = cols[i].trim().split("\\s+", 2);
      b.append(i > 0 ? ", " : "").append("CAST(NULL AS ").append(nt[1]).append(") AS ").append(nt[0]);
    }
    return b.append(" WHERE false").toString();
  }

  /** The session's settings (set by its front end; null: none), a map of lower-case name to value. */
  private static final String SESSION_SETTINGS = "getvariable('floe_settings')";

  /** The run-time parameters Floe knows ({@link dev.floe.RunTimeParameters}) as rows of name, key, default, description, read-only. */
  private static final String PARAMETERS = parameters();

  /** The known parameters' defaults as a map literal of lower-case name to value. */
  private static final String DEFAULTS = defaults();

  private static String parameters() {
    StringBuilder sql = new StringBuilder("(VALUES ");
    String sep = "";
    for (dev.floe.RunTimeParameters.Parameter p : dev.floe.RunTimeParameters.all()) {
      sql.append(sep).append('(').append(Lexer.quoteString(p.name())).append(", ").append(Lexer.quoteString(p.key()))
          .append(", ").append(Lexer.quoteString(p.defaultValue())).append(", ").append(Lexer.quoteString(p.description()))
          .append(", ").append(p.readOnly()).append(')');
      sep = ", ";
    }
    return sql.append(") AS __p(name, k, boot, descr, ro)").toString();
  }

  private static String defaults() {
    StringBuilder sql = new StringBuilder("MAP {");
    String sep = "";
    for (dev.floe.RunTimeParameters.Parameter p : dev.floe.RunTimeParameters.all()) {
      sql.append(sep).append(Lexer.quoteString(p.key())).append(": ").append(Lexer.quoteString(p.defaultValue()));
      sep = ", ";
    }
    return sql.append('}').toString();
  }

  /** A setting's value: the session's, else the parameter's default, else NULL. */
  private static String setting(String name) {
    return "coalesce(" + SESSION_SETTINGS + "[lower(" + name + ")], " + DEFAULTS + "[lower(" + name + ")])";
  }

  static final List<String> VIEWS = List.of(
      "CREATE VIEW $DB.pgcat.pg_namespace AS SELECT oid, nspname, nspowner, " + NO_ACL + " AS nspacl "
          + "FROM $DB.base.namespace",
      "CREATE VIEW $DB.pgcat.pg_class AS SELECT oid, relname, relnamespace, 0 AS reltype, 0 AS reloftype, "
          + "10 AS relowner, CASE relkind WHEN 'i' THEN 403 ELSE 2 END AS relam, oid AS relfilenode, "
          + "0 AS reltablespace, CAST(ceil(coalesce(relbytes, 0) / 8192) AS INTEGER) AS relpages, CAST(reltuples AS REAL) AS reltuples, 0 AS relallvisible, "
          + "0 AS reltoastrelid, relhasindex, false AS relisshared, 'p' AS relpersistence, relkind, "
          + "CAST(relnatts AS SMALLINT) AS relnatts, CAST((SELECT count(*) FROM $DB.base.\"constraint\" __k WHERE "
          + "__k.conrelid = __c.oid AND __k.contype = 'c') AS SMALLINT) AS relchecks, false AS relhasrules, "
          // PostgreSQL's foreign keys are triggers on both tables: psql shows them (and Referenced by) if set
          + "EXISTS (SELECT 1 FROM $DB.base.\"constraint\" __k WHERE __k.contype = 'f' AND (__k.conrelid = __c.oid "
          + "OR __k.confrelid = __c.oid)) AS relhastriggers, false AS relhassubclass, false AS relrowsecurity, "
          + "false AS relforcerowsecurity, true AS relispopulated, 'd' AS relreplident, false AS relispartition, "
          + "0 AS relrewrite, 0 AS relfrozenxid, 0 AS relminmxid, " + NO_ACL + " AS relacl, "
          + NO_ACL + " AS reloptions, CAST(NULL AS VARCHAR) AS relpartbound FROM $DB.base.class __c",
      "CREATE VIEW $DB.pgcat.pg_attribute AS SELECT attrelid, attname, atttypid, -1 AS attstattarget, "
          + "CAST(attlen AS SMALLINT) AS attlen, CAST(attnum AS SMALLINT) AS attnum, attndims, -1 AS attcacheoff, "
          + "atttypmod, attlen > 0 AND attlen <= 8 AS attbyval, CASE WHEN attlen = 8 THEN 'd' WHEN attlen = 2 "
          + "THEN 's' WHEN attlen = 1 THEN 'c' ELSE 'i' END AS attalign, CASE WHEN attlen > 0 THEN 'p' ELSE 'x' "
          + "END AS attstorage, '' AS attcompression, attnotnull, EXISTS (SELECT 1 FROM $DB.base.attrdef __d WHERE __d.adrelid = attrelid "
          + "AND __d.adnum = attnum) AS atthasdef, false AS atthasmissing, "
          + "'' AS attidentity, '' AS attgenerated, false AS attisdropped, true AS attislocal, 0 AS attinhcount, "
          + "CASE WHEN atttypid IN (25, 1042, 1043) THEN 100 ELSE 0 END AS attcollation, " + NO_ACL
          + " AS attacl, " + NO_ACL + " AS attoptions, " + NO_ACL + " AS attfdwoptions, "
          + "CAST(NULL AS VARCHAR) AS attmissingval FROM $DB.base.attribute",
      "CREATE VIEW $DB.pgcat.pg_type AS SELECT oid, typname, typnamespace, 10 AS typowner, "
          + "CAST(typlen AS SMALLINT) AS typlen, typbyval, typtype, typcategory, "
          + "typname IN ('bool', 'float8', 'text', 'timestamptz', 'oid') AS typispreferred, true AS typisdefined, "
          + "',' AS typdelim, 0 AS typrelid, CASE WHEN typelem <> 0 THEN 'array_subscript_handler' ELSE '-' END "
          + "AS typsubscript, typelem, typarray, typinput, typoutput, replace(typinput, 'in', 'recv') AS typreceive, "
          + "replace(typoutput, 'out', 'send') AS typsend, '-' AS typmodin, '-' AS typmodout, '-' AS typanalyze, "
          + "CASE WHEN typlen = 8 THEN 'd' WHEN typlen = 2 THEN 's' WHEN typlen = 1 THEN 'c' ELSE 'i' END AS "
          + "typalign, CASE WHEN typlen > 0 THEN 'p' ELSE 'x' END AS typstorage, false AS typnotnull, "
          + "0 AS typbasetype, -1 AS typtypmod, 0 AS typndims, CASE WHEN typname IN ('text', 'varchar', 'bpchar', "
          + "'name') THEN 100 ELSE 0 END AS typcollation, CAST(NULL AS VARCHAR) AS typdefaultbin, "
          + "CAST(NULL AS VARCHAR) AS typdefault, " + NO_ACL + " AS typacl FROM $DB.base.type",
      "CREATE VIEW $DB.pgcat.pg_index AS SELECT indexrelid, indrelid, CAST(indnatts AS SMALLINT) AS indnatts, "
          + "CAST(indnatts AS SMALLINT) AS indnkeyatts, indisunique, false AS indnullsnotdistinct, indisprimary, "
          + "false AS indisexclusion, true AS indimmediate, false AS indisclustered, true AS indisvalid, "
          + "false AS indcheckxmin, true AS indisready, true AS indislive, false AS indisreplident, "
          + "CAST(indkey AS SMALLINT[]) AS indkey, CAST(NULL AS INTEGER[]) AS indcollation, "
          + "CAST(NULL AS INTEGER[]) AS indclass, CAST(NULL AS SMALLINT[]) AS indoption, "
          + "CAST(NULL AS VARCHAR) AS indexprs, CAST(NULL AS VARCHAR) AS indpred FROM $DB.base.\"index\"",
      "CREATE VIEW $DB.pgcat.pg_constraint AS SELECT oid, conname, connamespace, contype, "
          + "false AS condeferrable, false AS condeferred, true AS convalidated, conrelid, 0 AS contypid, "
          + "conindid, 0 AS conparentid, confrelid, confupdtype, confdeltype, "
          + "CASE WHEN contype = 'f' THEN 's' ELSE ' ' END AS confmatchtype, true AS conislocal, 0 AS coninhcount, "
          + "contype <> 'c' AS connoinherit, CAST(conkey AS SMALLINT[]) AS conkey, CAST(confkey AS SMALLINT[]) AS confkey, "
          + "CAST(NULL AS INTEGER[]) AS conpfeqop, CAST(NULL AS INTEGER[]) AS conppeqop, "
          + "CAST(NULL AS INTEGER[]) AS conffeqop, CAST(NULL AS SMALLINT[]) AS confdelsetcols, "
          + "CAST(NULL AS INTEGER[]) AS conexclop, CAST(NULL AS VARCHAR) AS conbin FROM $DB.base.\"constraint\"",
      "CREATE VIEW $DB.pgcat.pg_description AS SELECT objoid, classoid, objsubid, description "
          + "FROM $DB.base.description",
      "CREATE VIEW $DB.pgcat.pg_attrdef AS SELECT oid, adrelid, CAST(adnum AS SMALLINT) AS adnum, adbin "
          + "FROM $DB.base.attrdef",
      "CREATE VIEW $DB.pgcat.pg_database AS SELECT * FROM (VALUES (" + PgCatalog.DATABASE_OID + ", 'floe', "
          + "10, 6, 'c', false, true, -1, 0, 1, 1663, 'C', 'C', CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), "
          + NO_ACL + ")) AS d(oid, datname, datdba, encoding, datlocprovider, datistemplate, datallowconn, "
          + "datconnlimit, datfrozenxid, datminmxid, dattablespace, datcollate, datctype, daticulocale, "
          + "datcollversion, datacl)",
      // floe (the superuser), and the users a front end signs in (Database#setRoles): logins
      "CREATE VIEW $DB.pgcat.pg_roles AS SELECT rolname, oid = 10 AS rolsuper, true AS rolinherit, oid = 10 AS "
          + "rolcreaterole, oid = 10 AS rolcreatedb, true AS rolcanlogin, false AS rolreplication, -1 AS rolconnlimit, "
          + "'********' AS rolpassword, CAST(NULL AS TIMESTAMPTZ) AS rolvaliduntil, true AS rolbypassrls, " + NO_ACL
          + " AS rolconfig, oid FROM $DB.base.role",
      "CREATE VIEW $DB.pgcat.pg_user AS SELECT rolname AS usename, oid AS usesysid, oid = 10 AS usecreatedb, "
          + "oid = 10 AS usesuper, false AS userepl, oid = 10 AS usebypassrls, '********' AS passwd, "
          + "CAST(NULL AS TIMESTAMPTZ) AS valuntil, " + NO_ACL + " AS useconfig FROM $DB.base.role",
      "CREATE VIEW $DB.pgcat.pg_am AS SELECT * FROM (VALUES (2, 'heap', 'heap_tableam_handler', 't'), "
          + "(403, 'btree', 'bthandler', 'i')) AS a(oid, amname, amhandler, amtype)",
      "CREATE VIEW $DB.pgcat.pg_tablespace AS SELECT * FROM (VALUES (1663, 'pg_default', 10, " + NO_ACL
          + ", " + NO_ACL + ")) AS t(oid, spcname, spcowner, spcacl, spcoptions)",
      // Floe's roles are logins, members of none (floe user): psql's \\du joins this
      empty("pg_catalog", "pg_auth_members", "oid INTEGER, roleid INTEGER, member INTEGER, grantor INTEGER, "
          + "admin_option BOOLEAN"),
      empty("pg_catalog", "pg_inherits", "inhrelid INTEGER, inhparent INTEGER, inhseqno INTEGER, "
          + "inhdetachpending BOOLEAN"),
      "CREATE VIEW $DB.pgcat.pg_tables AS SELECT n.nspname AS schemaname, c.relname AS tablename, "
          + "'floe' AS tableowner, CAST(NULL AS VARCHAR) AS tablespace, c.relhasindex AS hasindexes, "
          + "false AS hasrules, false AS hastriggers, false AS rowsecurity FROM $DB.base.class c "
          + "JOIN $DB.base.namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r'",
      "CREATE VIEW $DB.pgcat.pg_views AS SELECT n.nspname AS schemaname, c.relname AS viewname, 'floe' AS viewowner, "
          + "d.definition FROM $DB.base.class c JOIN $DB.base.namespace n ON n.oid = c.relnamespace "
          + "JOIN $DB.base.viewdef d ON d.oid = c.oid WHERE c.relkind = 'v'",
      empty("pg_catalog", "pg_matviews", "schemaname VARCHAR, matviewname VARCHAR, matviewowner VARCHAR, "
          + "tablespace VARCHAR, hasindexes BOOLEAN, ispopulated BOOLEAN, definition VARCHAR"),
      "CREATE VIEW $DB.pgcat.pg_indexes AS SELECT n.nspname AS schemaname, t.relname AS tablename, "
          + "i.relname AS indexname, CAST(NULL AS VARCHAR) AS tablespace, x.indexdef FROM $DB.base.\"index\" x "
          + "JOIN $DB.base.class i ON i.oid = x.indexrelid JOIN $DB.base.class t ON t.oid = x.indrelid "
          + "JOIN $DB.base.namespace n ON n.oid = t.relnamespace",
      empty("pg_catalog", "pg_proc", "oid INTEGER, proname VARCHAR, pronamespace INTEGER, proowner INTEGER, "
          + "prolang INTEGER, procost REAL, prorows REAL, provariadic INTEGER, prosupport VARCHAR, prokind VARCHAR, "
          + "prosecdef BOOLEAN, proleakproof BOOLEAN, proisstrict BOOLEAN, proretset BOOLEAN, provolatile VARCHAR, "
          + "proparallel VARCHAR, pronargs SMALLINT, pronargdefaults SMALLINT, prorettype INTEGER, "
          + "proargtypes INTEGER[], proallargtypes INTEGER[], proargmodes VARCHAR[], proargnames VARCHAR[], "
          + "proargdefaults VARCHAR, protrftypes INTEGER[], prosrc VARCHAR, probin VARCHAR, prosqlbody VARCHAR, "
          + "proconfig VARCHAR[], proacl VARCHAR[]"),
      empty("pg_catalog", "pg_enum", "oid INTEGER, enumtypid INTEGER, enumsortorder REAL, enumlabel VARCHAR"),
      empty("pg_catalog", "pg_range", "rngtypid INTEGER, rngsubtype INTEGER, rngmultitypid INTEGER, "
          + "rngcollation INTEGER, rngsubopc INTEGER, rngcanonical VARCHAR, rngsubdiff VARCHAR"),
      empty("pg_catalog", "pg_extension", "oid INTEGER, extname VARCHAR, extowner INTEGER, extnamespace INTEGER, "
          + "extrelocatable BOOLEAN, extversion VARCHAR, extconfig INTEGER[], extcondition VARCHAR[]"),
      empty("pg_catalog", "pg_trigger", "oid INTEGER, tgrelid INTEGER, tgparentid INTEGER, tgname VARCHAR, "
          + "tgfoid INTEGER, tgtype SMALLINT, tgenabled VARCHAR, tgisinternal BOOLEAN, tgconstrrelid INTEGER, "
          + "tgconstrindid INTEGER, tgconstraint INTEGER, tgdeferrable BOOLEAN, tginitdeferred BOOLEAN, "
          + "tgnargs SMALLINT, tgattr SMALLINT[], tgargs BLOB, tgqual VARCHAR, tgoldtable VARCHAR, "
          + "tgnewtable VARCHAR"),
      empty("pg_catalog", "pg_rewrite", "oid INTEGER, rulename VARCHAR, ev_class INTEGER, ev_type VARCHAR, "
          + "ev_enabled VARCHAR, is_instead BOOLEAN, ev_qual VARCHAR, ev_action VARCHAR"),
      empty("pg_catalog", "pg_policy", "oid INTEGER, polname VARCHAR, polrelid INTEGER, polcmd VARCHAR, "
          + "polpermissive BOOLEAN, polroles INTEGER[], polqual VARCHAR, polwithcheck VARCHAR"),
      empty("pg_catalog", "pg_sequence", "seqrelid INTEGER, seqtypid INTEGER, seqstart BIGINT, "
          + "seqincrement BIGINT, seqmax BIGINT, seqmin BIGINT, seqcache BIGINT, seqcycle BOOLEAN"),
      empty("pg_catalog", "pg_depend", "classid INTEGER, objid INTEGER, objsubid INTEGER, refclassid INTEGER, "
          + "refobjid INTEGER, refobjsubid INTEGER, deptype VARCHAR"),
      "CREATE VIEW $DB.pgcat.pg_collation AS SELECT * FROM (VALUES (100, 'default', 11, 10, 'd', true, -1, "
          + "CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR)), "
          + "(950, 'C', 11, 10, 'c', true, -1, 'C', 'C', CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR))) AS "
          + "c(oid, collname, collnamespace, collowner, collprovider, collisdeterministic, collencoding, "
          + "collcollate, collctype, colliculocale, collversion)",
      empty("pg_catalog", "pg_foreign_table", "ftrelid INTEGER, ftserver INTEGER, ftoptions VARCHAR[]"),
      empty("pg_catalog", "pg_partitioned_table", "partrelid INTEGER, partstrat VARCHAR, partnatts SMALLINT, "
          + "partdefid INTEGER, partattrs SMALLINT[], partclass INTEGER[], partcollation INTEGER[], "
          + "partexprs VARCHAR"),
      empty("pg_catalog", "pg_statistic_ext", "oid INTEGER, stxrelid INTEGER, stxname VARCHAR, "
          + "stxnamespace INTEGER, stxowner INTEGER, stxstattarget INTEGER, stxkeys SMALLINT[], stxkind VARCHAR[], "
          + "stxexprs VARCHAR"),
      empty("pg_catalog", "pg_publication", "oid INTEGER, pubname VARCHAR, pubowner INTEGER, puballtables BOOLEAN, "
          + "pubinsert BOOLEAN, pubupdate BOOLEAN, pubdelete BOOLEAN, pubtruncate BOOLEAN, pubviaroot BOOLEAN"),
      empty("pg_catalog", "pg_publication_rel", "oid INTEGER, prpubid INTEGER, prrelid INTEGER, prqual VARCHAR, "
          + "prattrs SMALLINT[]"),
      empty("pg_catalog", "pg_publication_namespace", "oid INTEGER, pnpubid INTEGER, pnnspid INTEGER"),
      // the parameters Floe knows, then the custom ones the session set (extension.name), as PostgreSQL
      // lists them: sorted by name without regard to case
      "CREATE VIEW $DB.pgcat.pg_settings AS SELECT s.name, s.setting, CAST(NULL AS VARCHAR) AS unit, "
          + "'Floe' AS category, s.short_desc, CAST(NULL AS VARCHAR) AS extra_desc, "
          + "s.context, 'string' AS vartype, 'session' AS source, CAST(NULL AS VARCHAR) AS min_val, "
          + "CAST(NULL AS VARCHAR) AS max_val, CAST(NULL AS VARCHAR[]) AS enumvals, s.boot_val, s.boot_val AS reset_val, "
          + "CAST(NULL AS VARCHAR) AS sourcefile, CAST(NULL AS INTEGER) AS sourceline, false AS pending_restart FROM ("
          + "SELECT __p.name, coalesce(" + SESSION_SETTINGS + "[__p.k], __p.boot) AS setting, __p.descr AS short_desc, "
          + "CASE WHEN __p.ro THEN 'internal' ELSE 'user' END AS context, __p.boot AS boot_val FROM " + PARAMETERS
          + " UNION ALL SELECT __c.name, __c.setting, CAST(NULL AS VARCHAR), 'user', CAST(NULL AS VARCHAR) FROM (SELECT "
          + "unnest(map_keys(" + SESSION_SETTINGS + ")) AS name, unnest(map_values(" + SESSION_SETTINGS + ")) AS "
          + "setting) AS __c WHERE " + DEFAULTS + "[__c.name] IS NULL) AS s ORDER BY lower(s.name)",
      empty("pg_catalog", "pg_shdescription", "objoid INTEGER, classoid INTEGER, description VARCHAR"),
      // information_schema
      "CREATE VIEW $DB.infoschema.schemata AS SELECT 'floe' AS catalog_name, nspname AS schema_name, "
          + "'floe' AS schema_owner, CAST(NULL AS VARCHAR) AS default_character_set_catalog, "
          + "CAST(NULL AS VARCHAR) AS default_character_set_schema, CAST(NULL AS VARCHAR) AS "
          + "default_character_set_name, CAST(NULL AS VARCHAR) AS sql_path FROM $DB.base.namespace",
      "CREATE VIEW $DB.infoschema.tables AS SELECT 'floe' AS table_catalog, n.nspname AS table_schema, "
          + "c.relname AS table_name, CASE c.relkind WHEN 'v' THEN 'VIEW' ELSE 'BASE TABLE' END AS table_type, "
          + "CAST(NULL AS VARCHAR) AS "
          + "self_referencing_column_name, CAST(NULL AS VARCHAR) AS reference_generation, CAST(NULL AS VARCHAR) "
          + "AS user_defined_type_catalog, CAST(NULL AS VARCHAR) AS user_defined_type_schema, "
          + "CAST(NULL AS VARCHAR) AS user_defined_type_name, CASE c.relkind WHEN 'v' THEN 'NO' ELSE 'YES' END AS "
          + "is_insertable_into, 'NO' AS is_typed, CAST(NULL AS VARCHAR) AS commit_action FROM $DB.base.class c "
          + "JOIN $DB.base.namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'v')",
      "CREATE VIEW $DB.infoschema.columns AS SELECT 'floe' AS table_catalog, n.nspname AS table_schema, "
          + "c.relname AS table_name, a.attname AS column_name, a.attnum AS ordinal_position, "
          + "(SELECT __d.adbin FROM $DB.base.attrdef __d WHERE __d.adrelid = a.attrelid AND __d.adnum = a.attnum) "
          + "AS column_default, CASE WHEN a.attnotnull THEN 'NO' ELSE 'YES' END AS is_nullable, "
          + "CASE WHEN t.typelem <> 0 THEN 'ARRAY' ELSE " + dataType("a.atttypid") + " END AS data_type, "
          + "CASE WHEN a.atttypid IN (1042, 1043) AND a.atttypmod >= 4 THEN a.atttypmod - 4 END AS "
          + "character_maximum_length, CASE WHEN a.atttypid IN (1042, 1043) AND a.atttypmod >= 4 THEN "
          + "(a.atttypmod - 4) * 4 WHEN a.atttypid IN (25, 1042, 1043) THEN 1073741824 END AS character_octet_length, "
          + "CASE a.atttypid WHEN 21 THEN 16 WHEN 23 THEN 32 WHEN 20 THEN 64 WHEN 700 THEN 24 WHEN 701 THEN 53 "
          + "WHEN 1700 THEN CASE WHEN a.atttypmod >= 4 THEN ((a.atttypmod - 4) >> 16) & 65535 END END AS "
          + "numeric_precision, CASE WHEN a.atttypid IN (21, 23, 20, 700, 701) THEN 2 WHEN a.atttypid = 1700 "
          + "THEN 10 END AS numeric_precision_radix, CASE WHEN a.atttypid IN (21, 23, 20) THEN 0 WHEN "
          + "a.atttypid = 1700 AND a.atttypmod >= 4 THEN (a.atttypmod - 4) & 65535 END AS numeric_scale, "
          + "CASE WHEN a.atttypid = 1082 THEN 0 WHEN a.atttypid IN (1083, 1114, 1184, 1186) THEN 6 END AS "
          + "datetime_precision, CAST(NULL AS VARCHAR) AS interval_type, CAST(NULL AS INTEGER) AS "
          + "interval_precision, CAST(NULL AS VARCHAR) AS character_set_catalog, CAST(NULL AS VARCHAR) AS "
          + "character_set_schema, CAST(NULL AS VARCHAR) AS character_set_name, CAST(NULL AS VARCHAR) AS "
          + "collation_catalog, CAST(NULL AS VARCHAR) AS collation_schema, CAST(NULL AS VARCHAR) AS collation_name, "
          + "CAST(NULL AS VARCHAR) AS domain_catalog, CAST(NULL AS VARCHAR) AS domain_schema, "
          + "CAST(NULL AS VARCHAR) AS domain_name, 'floe' AS udt_catalog, 'pg_catalog' AS udt_schema, "
          + "t.typname AS udt_name, CAST(NULL AS VARCHAR) AS scope_catalog, CAST(NULL AS VARCHAR) AS scope_schema, "
          + "CAST(NULL AS VARCHAR) AS scope_name, CAST(NULL AS INTEGER) AS maximum_cardinality, "
          + "CAST(a.attnum AS VARCHAR) AS dtd_identifier, 'NO' AS is_self_referencing, 'NO' AS is_identity, "
          + "CAST(NULL AS VARCHAR) AS identity_generation, CAST(NULL AS VARCHAR) AS identity_start, "
          + "CAST(NULL AS VARCHAR) AS identity_increment, CAST(NULL AS VARCHAR) AS identity_maximum, "
          + "CAST(NULL AS VARCHAR) AS identity_minimum, CAST(NULL AS VARCHAR) AS identity_cycle, "
          + "'NEVER' AS is_generated, CAST(NULL AS VARCHAR) AS generation_expression, 'YES' AS is_updatable "
          + "FROM $DB.base.attribute a JOIN $DB.base.class c ON c.oid = a.attrelid AND c.relkind = 'r' "
          + "JOIN $DB.base.namespace n ON n.oid = c.relnamespace LEFT JOIN $DB.base.type t ON t.oid = a.atttypid",
      "CREATE VIEW $DB.infoschema.table_constraints AS SELECT 'floe' AS constraint_catalog, "
          + "n.nspname AS constraint_schema, k.conname AS constraint_name, 'floe' AS table_catalog, "
          + "n.nspname AS table_schema, c.relname AS table_name, CASE k.contype WHEN 'p' THEN 'PRIMARY KEY' "
          + "WHEN 'u' THEN 'UNIQUE' WHEN 'f' THEN 'FOREIGN KEY' ELSE 'CHECK' END AS constraint_type, "
          + "'NO' AS is_deferrable, 'NO' AS initially_deferred, 'YES' AS enforced, CAST(NULL AS VARCHAR) AS "
          + "nulls_distinct FROM $DB.base.\"constraint\" k JOIN $DB.base.class c ON c.oid = k.conrelid "
          + "JOIN $DB.base.namespace n ON n.oid = c.relnamespace",
      "CREATE VIEW $DB.infoschema.key_column_usage AS SELECT 'floe' AS constraint_catalog, "
          + "n.nspname AS constraint_schema, k.conname AS constraint_name, 'floe' AS table_catalog, "
          + "n.nspname AS table_schema, c.relname AS table_name, a.attname AS column_name, "
          + "CAST(p.pos AS INTEGER) AS ordinal_position, CAST(NULL AS INTEGER) AS position_in_unique_constraint "
          + "FROM (SELECT * FROM $DB.base.\"constraint\" WHERE contype <> 'c') k JOIN $DB.base.class c ON c.oid = k.conrelid "
          + "JOIN $DB.base.namespace n ON n.oid = c.relnamespace, "
          + "unnest(CAST(k.conkey AS INTEGER[])) WITH ORDINALITY AS p(attnum, pos) "
          + "JOIN $DB.base.attribute a ON a.attrelid = k.conrelid AND a.attnum = p.attnum",
      "CREATE VIEW $DB.infoschema.constraint_column_usage AS SELECT table_catalog, table_schema, table_name, "
          + "column_name, constraint_catalog, constraint_schema, constraint_name "
          + "FROM $DB.infoschema.key_column_usage",
      "CREATE VIEW $DB.infoschema.views AS SELECT 'floe' AS table_catalog, n.nspname AS table_schema, "
          + "c.relname AS table_name, d.definition AS view_definition, 'NONE' AS check_option, 'NO' AS is_updatable, "
          + "'NO' AS is_insertable_into, 'NO' AS is_trigger_updatable, 'NO' AS is_trigger_deletable, "
          + "'NO' AS is_trigger_insertable_into FROM $DB.base.class c JOIN $DB.base.namespace n ON n.oid = "
          + "c.relnamespace JOIN $DB.base.viewdef d ON d.oid = c.oid WHERE c.relkind = 'v'",
      "CREATE VIEW $DB.infoschema.referential_constraints AS SELECT 'floe' AS constraint_catalog, "
          + "n.nspname AS constraint_schema, k.conname AS constraint_name, 'floe' AS unique_constraint_catalog, "
          + "pn.nspname AS unique_constraint_schema, u.conname AS unique_constraint_name, 'NONE' AS match_option, "
          + "CASE k.confupdtype WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' "
          + "THEN 'SET DEFAULT' ELSE 'NO ACTION' END AS update_rule, "
          + "CASE k.confdeltype WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'd' "
          + "THEN 'SET DEFAULT' ELSE 'NO ACTION' END AS delete_rule "
          + "FROM $DB.base.\"constraint\" k JOIN $DB.base.namespace n ON n.oid = k.connamespace "
          + "JOIN $DB.base.class pc ON pc.oid = k.confrelid JOIN $DB.base.namespace pn ON pn.oid = pc.relnamespace "
          + "LEFT JOIN $DB.base.\"constraint\" u ON u.conrelid = k.confrelid AND u.contype IN ('p', 'u') "
          + "AND list_sort(CAST(u.conkey AS INTEGER[])) = list_sort(CAST(k.confkey AS INTEGER[])) "
          + "WHERE k.contype = 'f'",
      "CREATE VIEW $DB.infoschema.check_constraints AS SELECT 'floe' AS constraint_catalog, n.nspname AS "
          + "constraint_schema, k.conname AS constraint_name, substring(k.condef, 7) AS check_clause "
          + "FROM $DB.base.\"constraint\" k JOIN $DB.base.namespace n ON n.oid = k.connamespace WHERE k.contype = 'c'",
      "CREATE VIEW $DB.infoschema.sequences AS SELECT 'floe' AS sequence_catalog, n.nspname AS sequence_schema, "
          + "c.relname AS sequence_name, 'bigint' AS data_type, 64 AS numeric_precision, 2 AS numeric_precision_radix, "
          + "0 AS numeric_scale, '1' AS start_value, '1' AS minimum_value, '9223372036854775807' AS maximum_value, "
          + "'1' AS increment, 'NO' AS cycle_option FROM $DB.base.class c JOIN $DB.base.namespace n "
          + "ON n.oid = c.relnamespace WHERE c.relkind = 'S'",
      empty("information_schema", "routines", "specific_catalog VARCHAR, specific_schema VARCHAR, "
          + "specific_name VARCHAR, routine_catalog VARCHAR, routine_schema VARCHAR, routine_name VARCHAR, "
          + "routine_type VARCHAR, data_type VARCHAR"),
      empty("information_schema", "triggers", "trigger_catalog VARCHAR, trigger_schema VARCHAR, "
          + "trigger_name VARCHAR, event_manipulation VARCHAR, event_object_catalog VARCHAR, "
          + "event_object_schema VARCHAR, event_object_table VARCHAR, action_statement VARCHAR"));

  /** information_schema's data_type for a type OID. */
  private static String dataType(String oid) {
    return "CASE " + oid + " WHEN 16 THEN 'boolean' WHEN 17 THEN 'bytea' WHEN 20 THEN 'bigint' WHEN 21 THEN "
        + "'smallint' WHEN 23 THEN 'integer' WHEN 25 THEN 'text' WHEN 114 THEN 'json' WHEN 700 THEN 'real' "
        + "WHEN 701 THEN 'double precision' WHEN 1042 THEN 'character' WHEN 1043 THEN 'character varying' "
        + "WHEN 1082 THEN 'date' WHEN 1083 THEN 'time without time zone' WHEN 1114 THEN "
        + "'timestamp without time zone' WHEN 1184 THEN 'timestamp with time zone' WHEN 1186 THEN 'interval' "
        + "WHEN 1700 THEN 'numeric' WHEN 2950 THEN 'uuid' WHEN 3802 THEN 'jsonb' ELSE 'USER-DEFINED' END";
  }

  /** format_type(oid, typmod) as PostgreSQL prints it. */
  private static final String FORMAT_TYPE = "CASE WHEN t IS NULL THEN NULL "
      + "WHEN t = 1043 THEN 'character varying' || CASE WHEN m >= 4 THEN '(' || (m - 4) || ')' ELSE '' END "
      + "WHEN t = 1042 THEN 'character' || CASE WHEN m >= 4 THEN '(' || (m - 4) || ')' ELSE '' END "
      + "WHEN t = 1700 THEN 'numeric' || CASE WHEN m >= 4 THEN '(' || (((m - 4) >> 16) & 65535) || ',' "
      + "|| ((m - 4) & 65535) || ')' ELSE '' END "
      + "WHEN t = 1015 THEN 'character varying' || CASE WHEN m >= 4 THEN '(' || (m - 4) || ')' ELSE '' END || '[]' "
      + "WHEN t = 1231 THEN 'numeric' || CASE WHEN m >= 4 THEN '(' || (((m - 4) >> 16) & 65535) || ',' "
      + "|| ((m - 4) & 65535) || ')' ELSE '' END || '[]' "
      + "ELSE coalesce((SELECT CASE WHEN __ty.typelem <> 0 THEN "
      + "(SELECT " + simpleName("__te.oid", "__te.typname") + " FROM $DB.base.type __te WHERE __te.oid = __ty.typelem) || '[]' "
      + "ELSE " + simpleName("__ty.oid", "__ty.typname") + " END FROM $DB.base.type __ty WHERE __ty.oid = t), '???') END";

  private static String simpleName(String oid, String typname) {
    return "CASE " + oid + " WHEN 16 THEN 'boolean' WHEN 20 THEN 'bigint' WHEN 21 THEN 'smallint' WHEN 23 THEN "
        + "'integer' WHEN 700 THEN 'real' WHEN 701 THEN 'double precision' WHEN 1042 THEN 'character' WHEN 1043 "
        + "THEN 'character varying' WHEN 1083 THEN 'time without time zone' WHEN 1114 THEN "
        + "'timestamp without time zone' WHEN 1184 THEN 'timestamp with time zone' ELSE " + typname + " END";
  }

  /** The calling session's backend pid. */
  private static final String CALLER = "CAST(coalesce(getvariable('floe_backend_pid'), '0') AS INTEGER)";

  private static final String UNRECOGNIZED = "error('" + DuckErrors.PREFIX + SqlState.UNDEFINED_OBJECT
      + ":unrecognized configuration parameter \"' || n || '\"')";

  private static final String TRUE2 = "(a, b) AS true, (a, b, c) AS true";

  static final List<String> MACROS = List.of(
      "CREATE MACRO $DB.pgcat.version() AS 'PostgreSQL " + dev.floe.FloeInfo.PG_VERSION + " (Floe "
          + dev.floe.FloeInfo.VERSION + ") on x86_64-pc-linux-gnu, compiled by javac 17, 64-bit'",
      "CREATE MACRO $DB.pgcat.current_database() AS coalesce(getvariable('floe_database'), 'floe')",
      "CREATE MACRO $DB.pgcat.current_schema() AS getvariable('floe_current_schema')",
      "CREATE MACRO $DB.pgcat.current_schemas(implicit) AS CASE WHEN implicit THEN "
          + "['pg_catalog', getvariable('floe_current_schema')] ELSE [getvariable('floe_current_schema')] END",
      "CREATE MACRO $DB.pgcat.current_user() AS coalesce(getvariable('floe_user'), 'floe')",
      "CREATE MACRO $DB.pgcat.current_catalog() AS 'floe'",
      "CREATE MACRO $DB.pgcat.pg_table_is_visible(rel) AS coalesce((SELECT __n.nspname IN ('pg_catalog', "
          + "getvariable('floe_current_schema')) FROM $DB.base.class __c JOIN $DB.base.namespace __n ON "
          + "__n.oid = __c.relnamespace WHERE __c.oid = rel), false)",
      "CREATE MACRO $DB.pgcat.pg_type_is_visible(t) AS true",
      "CREATE MACRO $DB.pgcat.pg_function_is_visible(f) AS true",
      "CREATE MACRO $DB.pgcat.pg_collation_is_visible(c) AS true",
      "CREATE MACRO $DB.pgcat.format_type(t, m) AS " + FORMAT_TYPE,
      "CREATE MACRO $DB.pgcat.pg_get_expr(e, r) AS CAST(e AS VARCHAR), (e, r, p) AS CAST(e AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.obj_description(o) AS (SELECT __d.description FROM $DB.base.description __d "
          + "WHERE __d.objoid = o AND __d.objsubid = 0 LIMIT 1), (o, cat) AS (SELECT __d.description FROM "
          + "$DB.base.description __d WHERE __d.objoid = o AND __d.objsubid = 0 LIMIT 1)",
      "CREATE MACRO $DB.pgcat.col_description(o, n) AS (SELECT __d.description FROM "
          + "$DB.base.description __d WHERE __d.objoid = o AND __d.objsubid = n LIMIT 1)",
      "CREATE MACRO $DB.pgcat.shobj_description(o, cat) AS CAST(NULL AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.has_table_privilege(a) AS true, " + TRUE2,
      "CREATE MACRO $DB.pgcat.has_schema_privilege(a) AS true, " + TRUE2,
      "CREATE MACRO $DB.pgcat.has_database_privilege(a) AS true, " + TRUE2,
      "CREATE MACRO $DB.pgcat.has_column_privilege(a, b) AS true, (a, b, c) AS true, (a, b, c, d) AS true",
      "CREATE MACRO $DB.pgcat.has_any_column_privilege(a, b) AS true, (a, b, c) AS true",
      "CREATE MACRO $DB.pgcat.has_function_privilege(a, b) AS true, (a, b, c) AS true",
      "CREATE MACRO $DB.pgcat.has_sequence_privilege(a, b) AS true, (a, b, c) AS true",
      "CREATE MACRO $DB.pgcat.pg_has_role(a, b) AS true, (a, b, c) AS true",
      "CREATE MACRO $DB.pgcat.pg_encoding_to_char(e) AS CASE WHEN e = 6 THEN 'UTF8' WHEN e = 0 THEN "
          + "'SQL_ASCII' ELSE '' END",
      "CREATE MACRO $DB.pgcat.pg_get_userbyid(r) AS coalesce((SELECT __r.rolname FROM $DB.base.role __r WHERE "
          + "__r.oid = r LIMIT 1), 'unknown (OID=' || r || ')')",
      // pretty: a check's condition without its outer parentheses, as PostgreSQL's pretty form
      "CREATE MACRO $DB.pgcat.pg_get_constraintdef(o) AS (SELECT __k.condef FROM $DB.base.\"constraint\" __k "
          + "WHERE __k.oid = o LIMIT 1), (o, pretty) AS (SELECT CASE WHEN pretty AND starts_with(__k.condef, "
          + "'CHECK ((') THEN 'CHECK (' || substring(__k.condef, 9, length(__k.condef) - 10) || ')' ELSE __k.condef "
          + "END FROM $DB.base.\"constraint\" __k WHERE __k.oid = o LIMIT 1)",
      "CREATE MACRO $DB.pgcat.pg_get_indexdef(o) AS (SELECT __x.indexdef FROM $DB.base.\"index\" __x "
          + "WHERE __x.indexrelid = o LIMIT 1), (o, col, pretty) AS CASE WHEN col = 0 THEN (SELECT __x.indexdef "
          + "FROM $DB.base.\"index\" __x WHERE __x.indexrelid = o LIMIT 1) ELSE (SELECT __a.attname FROM "
          + "$DB.base.\"index\" __x JOIN $DB.base.attribute __a ON __a.attrelid = __x.indrelid AND __a.attnum = "
          + "CAST(__x.indkey AS INTEGER[])[col] WHERE __x.indexrelid = o LIMIT 1) END",
      "CREATE MACRO $DB.pgcat.pg_indexes_size(o) AS CAST(0 AS BIGINT)",
      "CREATE MACRO $DB.pgcat.pg_size_pretty(b) AS CASE WHEN abs(b) < 10240 THEN b || ' bytes' "
          + "WHEN abs(b) < 10485760 THEN round(b / 1024) || ' kB' WHEN abs(b) < 10737418240 THEN "
          + "round(b / 1048576) || ' MB' WHEN abs(b) < 10995116277760 THEN round(b / 1073741824) || ' GB' "
          + "ELSE round(b / 1099511627776) || ' TB' END",
      // a parameter neither known nor set in the session is PostgreSQL's 42704, unless missing_ok
      "CREATE MACRO $DB.pgcat.current_setting(n) AS CASE WHEN n IS NULL THEN NULL ELSE coalesce(" + setting("n")
          + ", " + UNRECOGNIZED + ") END, (n, missing_ok) AS CASE WHEN n IS NULL THEN NULL WHEN missing_ok THEN "
          + setting("n") + " ELSE coalesce(" + setting("n") + ", " + UNRECOGNIZED + ") END",
      "CREATE MACRO $DB.pgcat.pg_backend_pid() AS CAST(coalesce(getvariable('floe_backend_pid'), '0') AS INTEGER)",
      "CREATE MACRO $DB.pgcat.pg_is_in_recovery() AS false",
      // Backends.signal, as the calling backend (its role decides whom it may signal)
      "CREATE MACRO $DB.pgcat.pg_cancel_backend(p) AS floe_signal_backend(CAST(p AS INTEGER), false, " + CALLER + ")",
      "CREATE MACRO $DB.pgcat.pg_terminate_backend(p) AS floe_signal_backend(CAST(p AS INTEGER), true, " + CALLER
          + "), (p, timeout) AS floe_signal_backend(CAST(p AS INTEGER), true, " + CALLER + ")",
      "CREATE MACRO $DB.pgcat.pg_relation_is_publishable(o) AS false",
      "CREATE MACRO $DB.pgcat.array_upper(a, d) AS CASE WHEN d = 1 AND len(a) > 0 THEN len(a) END",
      "CREATE MACRO $DB.pgcat.array_lower(a, d) AS CASE WHEN d = 1 AND len(a) > 0 THEN 1 END",
      "CREATE MACRO $DB.pgcat.pg_postmaster_start_time() AS CAST(getvariable('floe_start_time') AS TIMESTAMPTZ)",
      "CREATE MACRO $DB.pgcat.pg_get_partkeydef(o) AS CAST(NULL AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.pg_get_triggerdef(o) AS CAST(NULL AS VARCHAR), (o, p) AS CAST(NULL AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.pg_get_ruledef(o) AS CAST(NULL AS VARCHAR), (o, p) AS CAST(NULL AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.pg_get_functiondef(o) AS CAST(NULL AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.pg_get_function_arguments(o) AS CAST(NULL AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.pg_get_function_result(o) AS CAST(NULL AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.pg_get_statisticsobjdef_columns(o) AS CAST(NULL AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.inet_server_addr() AS CAST(NULL AS VARCHAR)",
      "CREATE MACRO $DB.pgcat.inet_server_port() AS CAST(NULL AS INTEGER)",
      "CREATE MACRO $DB.pgcat.txid_current() AS CAST(0 AS BIGINT)",
      "CREATE MACRO $DB.pgcat.quote_ident(s) AS CASE WHEN regexp_full_match(s, '[a-z_][a-z0-9_$]*') THEN s "
          + "ELSE '\"' || replace(s, '\"', '\"\"') || '\"' END",
      "CREATE MACRO $DB.pgcat._pg_expandarray(arr) AS unnest(list_transform(range(1, len(arr) + 1), "
          + "lambda i: {'x': arr[i], 'n': i}))",
      // 'name'::regclass and oid::regclass
      "CREATE MACRO $DB.pgcat.floe_regclass(name) AS CASE replace(replace(name, 'pg_catalog.', ''), '\"', '') "
          + "WHEN 'pg_class' THEN 1259 WHEN 'pg_type' THEN 1247 WHEN 'pg_attribute' THEN 1249 WHEN 'pg_proc' "
          + "THEN 1255 WHEN 'pg_namespace' THEN 2615 WHEN 'pg_constraint' THEN 2606 WHEN 'pg_database' THEN 1262 "
          + "WHEN 'pg_index' THEN 2610 WHEN 'pg_description' THEN 2609 ELSE (SELECT __c.oid FROM "
          + "$DB.base.class __c JOIN $DB.base.namespace __n ON __n.oid = __c.relnamespace WHERE CASE WHEN "
          + "contains(name, '.') THEN __n.nspname || '.' || __c.relname = replace(name, '\"', '') ELSE "
          + "__c.relname = replace(name, '\"', '') AND __n.nspname IN ('pg_catalog', "
          + "getvariable('floe_current_schema')) END LIMIT 1) END",
      // a table's size is the bytes of its current snapshot's data and delete files; an index has none
      "CREATE MACRO $DB.pgcat.floe_relbytes(o) AS coalesce((SELECT __c.relbytes FROM $DB.base.class __c WHERE "
          + "__c.oid = coalesce(TRY_CAST(CAST(o AS VARCHAR) AS INTEGER), $DB.pgcat.floe_regclass(CAST(o AS VARCHAR))) "
          + "LIMIT 1), CAST(0 AS BIGINT))",
      "CREATE MACRO $DB.pgcat.pg_relation_size(o) AS $DB.pgcat.floe_relbytes(o), (o, fork) AS CASE WHEN fork = "
          + "'main' THEN $DB.pgcat.floe_relbytes(o) ELSE CAST(0 AS BIGINT) END",
      "CREATE MACRO $DB.pgcat.pg_total_relation_size(o) AS $DB.pgcat.floe_relbytes(o)",
      "CREATE MACRO $DB.pgcat.pg_table_size(o) AS $DB.pgcat.floe_relbytes(o)",
      "CREATE MACRO $DB.pgcat.pg_get_viewdef(v) AS (SELECT __d.definition FROM $DB.base.viewdef __d WHERE __d.oid = "
          + "coalesce(TRY_CAST(CAST(v AS VARCHAR) AS INTEGER), $DB.pgcat.floe_regclass(CAST(v AS VARCHAR))) LIMIT 1), "
          + "(v, p) AS (SELECT __d.definition FROM $DB.base.viewdef __d WHERE __d.oid = coalesce(TRY_CAST(CAST(v AS "
          + "VARCHAR) AS INTEGER), $DB.pgcat.floe_regclass(CAST(v AS VARCHAR))) LIMIT 1)",
      // a Floe table is no partition: its only "ancestor" is itself (psql's \\d asks, for Referenced by)
      "CREATE MACRO $DB.pgcat.pg_partition_ancestors(r) AS coalesce(TRY_CAST(CAST(r AS VARCHAR) AS INTEGER), "
          + "$DB.pgcat.floe_regclass(CAST(r AS VARCHAR)))",
      "CREATE MACRO $DB.pgcat.floe_relname(o) AS coalesce((SELECT __c.relname FROM $DB.base.class __c "
          + "WHERE __c.oid = o LIMIT 1), CAST(o AS VARCHAR))",
      "CREATE MACRO $DB.pgcat.floe_nspname(o) AS coalesce((SELECT __n.nspname FROM "
          + "$DB.base.namespace __n WHERE __n.oid = o LIMIT 1), CAST(o AS VARCHAR))",
      // the sequence a serial or identity column's default draws from (schema-qualified), else NULL; a
      // missing table is 42P01, as in PostgreSQL
      "CREATE MACRO $DB.pgcat.pg_get_serial_sequence(t, c) AS CASE WHEN t IS NULL OR c IS NULL THEN NULL "
          + "WHEN $DB.pgcat.floe_regclass(t) IS NULL THEN error('" + DuckErrors.PREFIX + SqlState.UNDEFINED_TABLE
          + ":relation \"' || t || '\" does not exist') ELSE (SELECT regexp_extract(__d.adbin, "
          + "'^nextval\\(''(.+)''::regclass\\)$', 1) FROM $DB.base.attrdef __d JOIN $DB.base.attribute __a ON "
          + "__a.attrelid = __d.adrelid AND __a.attnum = __d.adnum WHERE __d.adrelid = $DB.pgcat.floe_regclass(t) "
          + "AND __a.attname = c AND __d.adbin LIKE 'nextval(%' LIMIT 1) END");
}
