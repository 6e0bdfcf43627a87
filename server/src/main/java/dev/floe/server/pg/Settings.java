package dev.floe.server.pg;

import dev.floe.FloeException;
import dev.floe.RunTimeParameters;
import dev.floe.RunTimeParameters.Parameter;
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
 * A session's run-time parameters (PostgreSQL's GUCs, {@link RunTimeParameters}) as SET, SHOW and RESET
 * see them: values Floe cannot honour (another client_encoding, a DateStyle other than ISO) are refused,
 * read-only parameters cannot be changed, and a custom one ({@code extension.name}) exists once set.
 */
final class Settings {
  static final String SERVER_VERSION = dev.floe.FloeInfo.PG_VERSION;

  private static String key(String name) {
    return RunTimeParameters.key(name);
  }

  private static Parameter definition(String key) {
    return RunTimeParameters.find(key).orElse(null);
  }

  private final Map<String, String> values = new LinkedHashMap<>();
  private final List<String> changedReported = new ArrayList<>();
  private final java.util.Set<String> changed = new java.util.LinkedHashSet<>();
  /** The custom parameters ({@code extension.name}) set in this session: they exist from then on. */
  private final java.util.Set<String> placeholders = new java.util.HashSet<>();

  /** The parameters every session reports at start-up (ParameterStatus), with their current values. */
  Map<String, String> reported() {
    Map<String, String> out = new LinkedHashMap<>();
    for (Parameter d : RunTimeParameters.all()) {
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
    Parameter d = definition(k);
    if (d != null) {
      return d.defaultValue();
    }
    if (placeholders.contains(k)) {
      return ""; // a custom (extension.name) parameter set and then reset reads as empty, as in PostgreSQL
    }
    throw unknown(name);
  }

  /** The canonical spelling of a parameter name (as SHOW ALL lists it). */
  String canonicalName(String name) {
    Parameter d = definition(key(name));
    return d == null ? name.toLowerCase(Locale.ROOT) : d.name();
  }

  /**
   * Sets a parameter (null value: back to its default), after checking that Floe can honour the value.
   */
  void set(String name, String value) {
    String k = key(name);
    Parameter d = definition(k);
    if (d == null && !RunTimeParameters.isCustom(k)) {
      throw unknown(name);
    }
    if (d != null && d.readOnly()) {
      throw new FloeException(SqlState.CANT_CHANGE_RUNTIME_PARAM, "parameter \"" + d.name() + "\" cannot be changed");
    }
    if (d != null && value != null) {
      value = validate(d.name(), value);
    }
    if (d == null) {
      placeholders.add(k);
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
    for (Parameter d : RunTimeParameters.all()) {
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
      Parameter d = definition(k);
      if (d != null && (d.readOnly() || d.name().equals("session_authorization"))) {
        continue;
      }
      set(k, null);
    }
  }

  /** Every known parameter: name, setting, description (SHOW ALL). */
  List<String[]> all() {
    List<String[]> rows = new ArrayList<>();
    for (Parameter d : RunTimeParameters.all()) {
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
      case "floe.point_reads" -> {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (List.of("on", "true", "yes", "1", "off", "false", "no", "0").contains(v)) {
          return isOn(v) ? "on" : "off";
        }
        throw invalid(name, value, "It takes a Boolean value: on or off.");
      }
      case "lc_messages", "lc_monetary", "lc_numeric", "lc_time" -> {
        String v = value.trim();
        if (!v.isEmpty() && !v.equals("C") && !v.equals("POSIX")) {
          throw invalid(name, value, "Floe formats and speaks in the C locale only.");
        }
        return v.isEmpty() ? "C" : v;
      }
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
