package dev.floe.server.pg;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.time.DateTimeException;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A session's run-time parameters (PostgreSQL's GUCs) as SET, SHOW and RESET see them. Floe honours
 * the ones that change what it does (search_path, TimeZone, statement_timeout,
 * idle_in_transaction_session_timeout, application_name); the others are kept and shown so that
 * clients which set them at start-up work, and values Floe cannot honour (another client_encoding, a
 * DateStyle other than ISO) are refused.
 */
final class Settings {
  /** One parameter: its default, description, and whether a change is reported with ParameterStatus. */
  private record Definition(String name, String defaultValue, boolean reported, String description) {}

  static final String SERVER_VERSION = dev.floe.FloeInfo.PG_VERSION;
  private static final Map<String, Definition> DEFINITIONS = new LinkedHashMap<>();

  static {
    define("application_name", "", true, "Sets the application name to be reported in statistics and logs.");
    define("client_encoding", "UTF8", true, "Sets the client's character set encoding.");
    define("DateStyle", "ISO, MDY", true, "Sets the display format for date and time values.");
    define("default_transaction_isolation", "read committed", false,
        "Sets the transaction isolation level of each new transaction.");
    define("default_transaction_read_only", "off", true, "Sets the default read-only status of new transactions.");
    define("extra_float_digits", "1", false, "Sets the number of digits displayed for floating-point values.");
    define("idle_in_transaction_session_timeout", "0", false,
        "Sets the maximum allowed idle time between queries, when in a transaction.");
    define("in_hot_standby", "off", true, "Shows whether hot standby is currently active.");
    define("integer_datetimes", "on", true, "Shows whether datetimes are integer based.");
    define("IntervalStyle", "postgres", true, "Sets the display format for interval values.");
    define("is_superuser", "on", true, "Shows whether the current user is a superuser.");
    define("lock_timeout", "0", false, "Sets the maximum allowed duration of any wait for a lock.");
    define("max_identifier_length", "63", false, "Shows the maximum identifier length.");
    define("search_path", "\"$user\", public", false, "Sets the schema search order for names that are not schema-qualified.");
    define("server_encoding", "UTF8", true, "Shows the server (database) character set encoding.");
    define("server_version", SERVER_VERSION, true, "Shows the server version.");
    define("server_version_num", dev.floe.FloeInfo.PG_VERSION_NUM, false, "Shows the server version as an integer.");
    define("session_authorization", "floe", true, "Sets the session user name.");
    define("standard_conforming_strings", "on", true, "Causes '...' strings to treat backslashes literally.");
    define("statement_timeout", "0", false, "Sets the maximum allowed duration of any statement.");
    define("TimeZone", "UTC", true, "Sets the time zone for displaying and interpreting time stamps.");
    define("transaction_isolation", "read committed", false, "Sets the current transaction's isolation level.");
    define("transaction_read_only", "off", false, "Sets the current transaction's read-only status.");
    define("bytea_output", "hex", false, "Sets the output format for bytea.");
    define("client_min_messages", "notice", false, "Sets the message levels that are sent to the client.");
    define("work_mem", "4MB", false, "Sets the maximum memory to be used for query workspaces.");
    define("jit", "off", false, "Allow JIT compilation.");
    define("row_security", "on", false, "Enable row security.");
  }

  private static void define(String name, String value, boolean reported, String description) {
    DEFINITIONS.put(key(name), new Definition(name, value, reported, description));
  }

  private static String key(String name) {
    return name.toLowerCase(Locale.ROOT);
  }

  private final Map<String, String> values = new LinkedHashMap<>();
  private final List<String> changedReported = new ArrayList<>();
  private final java.util.Set<String> changed = new java.util.LinkedHashSet<>();

  /** The parameters every session reports at start-up (ParameterStatus), with their current values. */
  Map<String, String> reported() {
    Map<String, String> out = new LinkedHashMap<>();
    for (Definition d : DEFINITIONS.values()) {
      if (d.reported()) {
        out.put(d.name(), get(d.name()));
      }
    }
    return out;
  }

  /** Reported parameters changed since the last call, to be sent as ParameterStatus. */
  List<String> drainChanged() {
    List<String> out = new ArrayList<>(changedReported);
    changedReported.clear();
    return out;
  }

  String get(String name) {
    String k = key(name);
    String v = values.get(k);
    if (v != null) {
      return v;
    }
    Definition d = DEFINITIONS.get(k);
    if (d != null) {
      return d.defaultValue();
    }
    if (k.contains(".")) {
      return ""; // a custom (extension.name) parameter never set reads as empty, as in PostgreSQL
    }
    throw unknown(name);
  }

  /** The canonical spelling of a parameter name (as SHOW ALL lists it). */
  String canonicalName(String name) {
    Definition d = DEFINITIONS.get(key(name));
    return d == null ? name.toLowerCase(Locale.ROOT) : d.name();
  }

  /**
   * Sets a parameter (null value: back to its default), after checking that Floe can honour the value.
   */
  void set(String name, String value) {
    String k = key(name);
    Definition d = DEFINITIONS.get(k);
    if (d == null && !k.contains(".")) {
      throw unknown(name);
    }
    if (d != null && value != null) {
      value = validate(d.name(), value);
    }
    if (value == null) {
      values.remove(k);
    } else {
      values.put(k, value);
    }
    if (d != null && d.reported()) {
      changedReported.add(d.name());
    }
    changed.add(d != null ? d.name() : k);
  }

  /** Parameters set or reset since the last call (for the engine's current_setting). */
  List<String> drainSet() {
    List<String> out = new ArrayList<>(changed);
    changed.clear();
    return out;
  }

  /** Every known parameter's name. */
  List<String> names() {
    List<String> out = new ArrayList<>();
    for (Definition d : DEFINITIONS.values()) {
      out.add(d.name());
    }
    return out;
  }

  /** is_superuser for the logged-in user, as the engine decides it (no client can set it). */
  void superuser(boolean superuser) {
    values.put(key("is_superuser"), superuser ? "on" : "off");
  }

  /** Sets a parameter from the start-up packet; same rules as SET. */
  void setAtStartup(String name, String value) {
    set(name, value);
  }

  /** The start-up {@code options} parameter: {@code -c name=value} pairs (and {@code --name=value}). */
  void applyOptions(String options) {
    String[] words = options.trim().split("\\s+");
    for (int i = 0; i < words.length; i++) {
      String w = words[i];
      String assignment = null;
      if (w.equals("-c") && i + 1 < words.length) {
        assignment = words[++i];
      } else if (w.startsWith("-c")) {
        assignment = w.substring(2);
      } else if (w.startsWith("--")) {
        assignment = w.substring(2);
      } else if (!w.isEmpty()) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "unsupported start-up option \"" + w + "\"");
      }
      if (assignment != null) {
        int eq = assignment.indexOf('=');
        if (eq <= 0) {
          throw new FloeException(SqlState.SYNTAX_ERROR, "invalid start-up option \"" + assignment + "\"");
        }
        setAtStartup(assignment.substring(0, eq).replace('-', '_'), assignment.substring(eq + 1));
      }
    }
  }

  void resetAll() {
    for (String k : new ArrayList<>(values.keySet())) {
      Definition d = DEFINITIONS.get(k);
      if (d != null && (d.name().equals("server_version") || d.name().equals("session_authorization")
          || d.name().equals("is_superuser"))) {
        continue;
      }
      set(k, null);
    }
  }

  /** Every known parameter: name, setting, description (SHOW ALL). */
  List<String[]> all() {
    List<String[]> rows = new ArrayList<>();
    for (Definition d : DEFINITIONS.values()) {
      rows.add(new String[] {d.name(), get(d.name()), d.description()});
    }
    return rows;
  }

  ZoneId zone() {
    return zoneOf(get("TimeZone"));
  }

  /** statement_timeout in milliseconds (0: none). */
  long statementTimeoutMillis() {
    return millis("statement_timeout", get("statement_timeout"));
  }

  long idleInTransactionTimeoutMillis() {
    return millis("idle_in_transaction_session_timeout", get("idle_in_transaction_session_timeout"));
  }

  /** The first schema of search_path that is a real schema name ({@code public} when none is). */
  String firstSchema() {
    for (String part : get("search_path").split(",")) {
      String s = part.trim();
      if (s.startsWith("\"") && s.endsWith("\"") && s.length() >= 2) {
        s = s.substring(1, s.length() - 1).replace("\"\"", "\"");
      } else {
        s = s.toLowerCase(Locale.ROOT);
      }
      if (s.isEmpty() || s.equals("$user") || s.equals("pg_catalog") || s.equals("information_schema")) {
        continue;
      }
      return s;
    }
    return "public";
  }

  private static String validate(String name, String value) {
    switch (name) {
      case "client_encoding", "server_encoding" -> {
        String v = value.replace("-", "").replace("_", "").toUpperCase(Locale.ROOT);
        if (!v.equals("UTF8") && !v.equals("UNICODE")) {
          throw invalid(name, value, "Floe sends and receives UTF8 only.");
        }
        return "UTF8";
      }
      case "DateStyle" -> {
        String v = value.toUpperCase(Locale.ROOT);
        if (!v.contains("ISO")) {
          if (v.isBlank() || v.matches("[ ,]*(MDY|DMY|YMD|US|EURO|EUROPEAN|NONEURO|NONEUROPEAN)[ ,]*")) {
            return "ISO, " + (v.contains("DMY") || v.contains("EURO") && !v.contains("NONEURO") ? "DMY"
                : v.contains("YMD") ? "YMD" : "MDY");
          }
          throw invalid(name, value, "Floe prints dates in the ISO style only.");
        }
        return v.contains("DMY") ? "ISO, DMY" : v.contains("YMD") ? "ISO, YMD" : "ISO, MDY";
      }
      case "IntervalStyle" -> {
        if (!value.equalsIgnoreCase("postgres")) {
          throw invalid(name, value, "Floe prints intervals in the postgres style only.");
        }
        return "postgres";
      }
      case "TimeZone" -> {
        zoneOf(value);
        return value;
      }
      case "statement_timeout", "idle_in_transaction_session_timeout", "lock_timeout" -> {
        millis(name, value);
        return value;
      }
      case "standard_conforming_strings" -> {
        if (!isOn(value)) {
          throw invalid(name, value, "Floe treats backslashes in '...' strings literally, as the standard says.");
        }
        return "on";
      }
      case "extra_float_digits" -> {
        try {
          int n = Integer.parseInt(value.trim());
          if (n < -15 || n > 3) {
            throw invalid(name, value, "It must be between -15 and 3.");
          }
        } catch (NumberFormatException e) {
          throw invalid(name, value, "It must be an integer.");
        }
        return value.trim();
      }
      case "server_version", "server_version_num", "is_superuser", "integer_datetimes", "max_identifier_length",
          "in_hot_standby" -> throw new FloeException(SqlState.CANT_CHANGE_RUNTIME_PARAM,
              "parameter \"" + name + "\" cannot be changed");
      default -> {
        return value;
      }
    }
  }

  private static boolean isOn(String v) {
    return switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "on", "true", "yes", "1" -> true;
      default -> false;
    };
  }

  static ZoneId zoneOf(String value) {
    String v = value.trim();
    if (v.equalsIgnoreCase("UTC") || v.equalsIgnoreCase("GMT") || v.equalsIgnoreCase("Z")
        || v.equalsIgnoreCase("Etc/UTC") || v.equalsIgnoreCase("Zulu")) {
      return ZoneOffset.UTC;
    }
    try {
      return ZoneId.of(v);
    } catch (DateTimeException e) {
      throw invalid("TimeZone", value, null);
    }
  }

  /** A duration: a number with an optional unit. */
  private static final java.util.regex.Pattern DURATION =
      java.util.regex.Pattern.compile("(-?\\d+(?:\\.\\d+)?)\\s*(us|ms|s|min|h|d)?");

  /**
   * A duration setting: an integer in milliseconds, or a number with a unit (us, ms, s, min, h, d). Read
   * for every statement (statement_timeout, idle_in_transaction_session_timeout), so its pattern is
   * compiled once.
   */
  static long millis(String name, String value) {
    if (!value.isEmpty() && value.length() <= 9 && value.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return Long.parseLong(value); // plain milliseconds, as the defaults and most clients set them
    }
    String v = value.trim().toLowerCase(Locale.ROOT);
    java.util.regex.Matcher m = DURATION.matcher(v);
    if (!m.matches()) {
      // as PostgreSQL: the units hint only for a number with a unit it does not know
      throw invalid(name, value, v.matches("-?\\d.*") ? "Valid units for this parameter are \"us\", \"ms\", \"s\", "
          + "\"min\", \"h\", and \"d\"." : null);
    }
    double n = Double.parseDouble(m.group(1));
    String unit = m.group(2) == null ? "ms" : m.group(2);
    double ms = switch (unit) {
      case "us" -> n / 1000;
      case "s" -> n * 1000;
      case "min" -> n * 60_000;
      case "h" -> n * 3_600_000;
      case "d" -> n * 86_400_000;
      default -> n;
    };
    if (ms < 0 || ms > Integer.MAX_VALUE) {
      throw invalid(name, value, ms < 0 ? "It must not be negative." : "It is out of range.");
    }
    return (long) Math.ceil(ms);
  }

  private static FloeException invalid(String name, String value, String hint) {
    return new FloeException(SqlState.INVALID_PARAMETER_VALUE,
        "invalid value for parameter \"" + name + "\": \"" + value + "\"", null, hint, 0, null);
  }

  private static FloeException unknown(String name) {
    return new FloeException(SqlState.UNDEFINED_OBJECT,
        "unrecognized configuration parameter \"" + name + "\"");
  }
}
