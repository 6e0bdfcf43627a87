package dev.floe;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The PostgreSQL run-time parameters (GUCs) Floe knows, with their defaults: what {@code SHOW},
 * {@code current_setting()} and {@code pg_settings} report for a parameter a session has not set. Floe
 * honours the ones that change what it does (search_path, TimeZone, statement_timeout,
 * idle_in_transaction_session_timeout, application_name); the others are kept and shown so that clients
 * which set them at start-up, or read them, work. Names are matched without regard to case.
 */
public final class RunTimeParameters {
  /**
   * One parameter.
   *
   * @param name its canonical spelling (as {@code SHOW ALL} lists it)
   * @param defaultValue its value where a session has not set it
   * @param reported whether a change is reported to a PostgreSQL client (ParameterStatus)
   * @param readOnly whether no one can change it (PostgreSQL's 55P02)
   * @param description what {@code SHOW ALL} and {@code pg_settings.short_desc} say of it
   */
  public record Parameter(String name, String defaultValue, boolean reported, boolean readOnly, String description) {
    /** The name as settings are keyed by: lower case. */
    public String key() {
      return RunTimeParameters.key(name);
    }
  }

  private static final Map<String, Parameter> BY_KEY = new LinkedHashMap<>();

  static {
    define("application_name", "", true, false, "Sets the application name to be reported in statistics and logs.");
    define("client_encoding", "UTF8", true, false, "Sets the client's character set encoding.");
    define("DateStyle", "ISO, MDY", true, false, "Sets the display format for date and time values.");
    define("default_transaction_isolation", "read committed", false, false,
        "Sets the transaction isolation level of each new transaction.");
    define("default_transaction_read_only", "off", true, false,
        "Sets the default read-only status of new transactions.");
    define("extra_float_digits", "1", false, false, "Sets the number of digits displayed for floating-point values.");
    define("idle_in_transaction_session_timeout", "0", false, false,
        "Sets the maximum allowed idle time between queries, when in a transaction.");
    define("in_hot_standby", "off", true, true, "Shows whether hot standby is currently active.");
    define("integer_datetimes", "on", true, true, "Shows whether datetimes are integer based.");
    define("IntervalStyle", "postgres", true, false, "Sets the display format for interval values.");
    define("is_superuser", "on", true, true, "Shows whether the current user is a superuser.");
    // the locale Floe compares and formats text in: the C locale, as pg_database's datcollate says
    define("lc_collate", "C", false, true, "Shows the collation order locale.");
    define("lc_ctype", "C", false, true, "Shows the character classification and case conversion locale.");
    define("lc_messages", "C", false, false, "Sets the language in which messages are displayed.");
    define("lc_monetary", "C", false, false, "Sets the locale for formatting monetary amounts.");
    define("lc_numeric", "C", false, false, "Sets the locale for formatting numbers.");
    define("lc_time", "C", false, false, "Sets the locale for formatting date and time values.");
    define("lock_timeout", "0", false, false, "Sets the maximum allowed duration of any wait for a lock.");
    define("max_identifier_length", "63", false, true, "Shows the maximum identifier length.");
    define("search_path", "\"$user\", public", false, false,
        "Sets the schema search order for names that are not schema-qualified.");
    define("server_encoding", "UTF8", true, false, "Shows the server (database) character set encoding.");
    define("server_version", FloeInfo.PG_VERSION, true, true, "Shows the server version.");
    define("server_version_num", FloeInfo.PG_VERSION_NUM, false, true, "Shows the server version as an integer.");
    define("session_authorization", "floe", true, false, "Sets the session user name.");
    define("standard_conforming_strings", "on", true, false, "Causes '...' strings to treat backslashes literally.");
    define("statement_timeout", "0", false, false, "Sets the maximum allowed duration of any statement.");
    define("TimeZone", "UTC", true, false, "Sets the time zone for displaying and interpreting time stamps.");
    define("transaction_isolation", "read committed", false, false, "Sets the current transaction's isolation level.");
    define("transaction_read_only", "off", false, false, "Sets the current transaction's read-only status.");
    define("bytea_output", "hex", false, false, "Sets the output format for bytea.");
    define("client_min_messages", "notice", false, false, "Sets the message levels that are sent to the client.");
    define("work_mem", "4MB", false, false, "Sets the maximum memory to be used for query workspaces.");
    define("jit", "off", false, false, "Allow JIT compilation.");
    define("row_security", "on", false, false, "Enable row security.");
    // Floe's own: off reads key lookups through DuckDB's scan rather than Floe's point reader
    define("floe.point_reads", "on", false, false, "Enables Floe's point reader for key lookups.");
  }

  private static void define(String name, String value, boolean reported, boolean readOnly, String description) {
    BY_KEY.put(key(name), new Parameter(name, value, reported, readOnly, description));
  }

  private RunTimeParameters() {}

  /** A name as settings are keyed by: lower case. */
  public static String key(String name) {
    return name.toLowerCase(Locale.ROOT);
  }

  /** The parameter of that name (any case), if Floe knows it. */
  public static Optional<Parameter> find(String name) {
    return Optional.ofNullable(BY_KEY.get(key(name)));
  }

  /** Every parameter Floe knows, in a fixed order. */
  public static Collection<Parameter> all() {
    return Collections.unmodifiableCollection(BY_KEY.values());
  }

  /**
   * Whether a name is a custom parameter's ({@code extension.name}): any session may set one, and it
   * exists from then on, as in PostgreSQL.
   */
  public static boolean isCustom(String name) {
    return name.indexOf('.') > 0 && !name.endsWith(".");
  }
}
