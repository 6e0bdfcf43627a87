package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A session's run-time parameters as its DuckDB connection holds them: the settings current_setting()
 * reads (one DuckDB map variable), the TimeZone literals are read in, and the DuckDB variables the catalog
 * functions read (schema, user, backend pid).
 */
final class SessionSettings {
  private final Connection duck;

  SessionSettings(Connection duck) {
    this.duck = duck;
  }

  /** A setting's value, or null if it is not set. */
  String get(String name) {
    return settings.get(name);
  }

  private final java.util.Map<String, String> settings = new java.util.TreeMap<>();

  /**
   * Sets run-time parameters (null: reset) for current_setting(): one DuckDB map variable (a variable's name
   * must be constant); a changed TimeZone is applied to the connection too.
   */
  void set(java.util.Map<String, String> values) {
    values.forEach((k, v) -> {
      String key = k.toLowerCase(java.util.Locale.ROOT);
      if (v == null) {
        settings.remove(key);
      } else {
        settings.put(key, v);
      }
    });
    StringBuilder map = new StringBuilder("MAP {");
    boolean first = true;
    for (var e : settings.entrySet()) {
      map.append(first ? "" : ", ").append(Lexer.quoteString(e.getKey())).append(": ")
          .append(Lexer.quoteString(e.getValue()));
      first = false;
    }
    String sql = settings.isEmpty() ? "MAP {}::MAP(VARCHAR, VARCHAR)" : map.append('}').toString();
    try (Statement st = duck.createStatement()) {
      st.execute("SET VARIABLE floe_settings = " + sql);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot set session settings: " + e.getMessage(), e);
    }
    String zone = settings.getOrDefault("timezone", "UTC");
    if (!zone.equals(timeZoneName)) {
      setTimeZone(zone);
    }
  }

  /** The session's TimeZone as its DuckDB connection reads literals in it, and its name. */
  private java.time.ZoneId timeZone = java.time.ZoneOffset.UTC;
  private String timeZoneName = "UTC";

  java.time.ZoneId timeZone() {
    return timeZone;
  }

  /**
   * Reads timestamptz literals without an offset, casts to date and date arithmetic in {@code name}, as
   * PostgreSQL's TimeZone does: the session's DuckDB connection takes the zone (each connection has its
   * own), and pruning reads literals in it too. A zone DuckDB does not know leaves UTC.
   */
  private void setTimeZone(String name) {
    java.time.ZoneId zone;
    try {
      zone = name.equalsIgnoreCase("UTC") || name.equalsIgnoreCase("GMT") ? java.time.ZoneOffset.UTC
          : java.time.ZoneId.of(name);
    } catch (java.time.DateTimeException e) {
      return; // a front end that took it knows how it prints values; literals stay UTC
    }
    String duckName = zone instanceof java.time.ZoneOffset offset ? duckOffset(offset) : zone.getId();
    if (duckName == null) {
      return;
    }
    try (Statement st = duck.createStatement()) {
      st.execute("SET TimeZone = " + Lexer.quoteString(duckName));
      timeZone = zone;
      timeZoneName = name;
    } catch (SQLException e) {
      // DuckDB's ICU does not know this name: literals stay UTC
    }
  }

  /** A fixed offset as a zone DuckDB's ICU knows ({@code Etc/GMT-2} is +02:00), or null if it has none. */
  private static String duckOffset(java.time.ZoneOffset offset) {
    int seconds = offset.getTotalSeconds();
    if (seconds == 0) {
      return "UTC";
    }
    if (seconds % 3600 != 0) {
      return null;
    }
    int hours = seconds / 3600;
    return "Etc/GMT" + (hours > 0 ? "-" : "+") + Math.abs(hours); // POSIX: the sign is inverted
  }

  /**
   * Sets a DuckDB variable of this session's connection (the catalog functions read the session's
   * schema, user and settings from them).
   */
  void setVariable(String name, String value) {
    try (Statement st = duck.createStatement()) {
      st.execute("SET VARIABLE " + Lexer.quoteIdentifier(name) + " = " + (value == null ? "NULL"
          : Lexer.quoteString(value)));
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot set session variable " + name + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * Whether key lookups may read their rows in the JVM (docs/decisions/0005-point-reads.md): the
   * {@code floe.point_reads} setting, on unless set to {@code off} (as PostgreSQL's {@code enable_*} planner
   * settings switch a path off, to compare or to work around it).
   */
  boolean pointReads() {
    return !"off".equalsIgnoreCase(settings.get("floe.point_reads"));
  }
}
