package dev.floe.sql;

import java.util.Set;

/**
 * The PostgreSQL functions Floe answers itself (about its catalogs and session) rather than leaving to
 * DuckDB, whose functions of the same names describe DuckDB's own objects. They are macros in
 * {@link #DB}; the query prepass routes calls, qualified with {@code pg_catalog.} or not, to them.
 */
public final class SystemFunctions {
  /** The attached DuckDB database holding Floe's pg_catalog and information_schema. */
  public static final String DB = "__floe_pg";

  /** Functions called with parentheses. */
  public static final Set<String> CALLED = Set.of("version", "current_database", "current_schema",
      "current_schemas", "pg_table_is_visible", "pg_type_is_visible", "format_type", "pg_get_expr",
      "obj_description", "col_description", "shobj_description", "has_table_privilege", "has_schema_privilege",
      "has_database_privilege", "has_column_privilege", "has_any_column_privilege", "has_function_privilege",
      "has_sequence_privilege", "pg_has_role", "pg_encoding_to_char", "pg_get_userbyid", "pg_get_constraintdef",
      "pg_get_indexdef", "pg_relation_size", "pg_total_relation_size", "pg_table_size", "pg_indexes_size",
      "pg_size_pretty", "current_setting", "pg_backend_pid", "pg_cancel_backend", "pg_terminate_backend", "pg_is_in_recovery", "pg_relation_is_publishable", "array_upper", "array_lower", "pg_get_viewdef", "pg_partition_ancestors",
      "pg_get_partkeydef", "pg_get_triggerdef", "pg_get_functiondef", "pg_get_function_arguments",
      "pg_get_function_result", "pg_get_statisticsobjdef_columns", "quote_ident", "pg_postmaster_start_time",
      "_pg_expandarray", "floe_regclass", "floe_relname", "floe_nspname", "pg_get_serial_sequence",
      "pg_function_is_visible", "pg_collation_is_visible", "pg_get_ruledef", "inet_server_addr",
      "inet_server_port", "txid_current");

  /** SQL keywords that are function calls without parentheses: {@code SELECT current_user}. */
  public static final Set<String> KEYWORDS = Set.of("current_user", "session_user", "current_role",
      "current_catalog");

  private SystemFunctions() {}

  /** The qualified name of Floe's implementation of a function. */
  public static String qualified(String name) {
    return DB + ".pgcat." + name;
  }
}
