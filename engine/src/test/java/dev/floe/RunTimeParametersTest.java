package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.Rows;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code current_setting()} and {@code pg_settings} as PostgreSQL has them, in an embedded session (no
 * front end has set anything: every known parameter reads as its default) and with settings a front end
 * handed over ({@link Session#setSettings}).
 */
class RunTimeParametersTest {
  @TempDir
  Path dir;

  @Test
  void anEmbeddedSessionReadsTheDefaults() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      assertThat(Rows.of(s, "SELECT current_setting('TimeZone') || ' ' || current_setting('SERVER_VERSION_NUM') "
          + "|| ' ' || current_setting('lc_collate') || ' [' || current_setting('application_name') || ']'"))
          .containsExactly("UTC " + FloeInfo.PG_VERSION_NUM + " C []");
      assertThat(Rows.of(s, "SELECT count(*) FROM pg_settings")).containsExactly(
          String.valueOf(RunTimeParameters.all().size()));
      assertThat(Rows.of(s, "SELECT name || '=' || setting || ' ' || context || ' ' || boot_val FROM pg_settings "
          + "WHERE name IN ('DateStyle', 'server_version')"))
          .containsExactly("DateStyle=ISO, MDY user ISO, MDY", "server_version=" + FloeInfo.PG_VERSION + " internal "
              + FloeInfo.PG_VERSION);
    }
  }

  @Test
  void anUnknownParameterIsAnError() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      for (String name : List.of("no_such_setting", "myext.flag")) {
        assertThatThrownBy(() -> Rows.of(s, "SELECT current_setting('" + name + "')"))
            .isInstanceOfSatisfying(FloeException.class, e -> {
              assertThat(e.sqlState()).isEqualTo(SqlState.UNDEFINED_OBJECT);
              assertThat(e.getMessage()).isEqualTo("unrecognized configuration parameter \"" + name + "\"");
            });
        assertThat(Rows.of(s, "SELECT current_setting('" + name + "', true) IS NULL")).containsExactly("true");
      }
      assertThat(Rows.of(s, "SELECT current_setting(NULL) IS NULL")).containsExactly("true");
      // a row's name: the error only for the row that names nothing
      assertThat(Rows.of(s, "SELECT current_setting(n, true) FROM (VALUES ('work_mem'), ('nope')) t(n) ORDER BY 1"))
          .containsExactly("4MB", "null");
    }
  }

  @Test
  void aSessionsSettingsAreWhatItReads() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.setSettings(Map.of("timezone", "Europe/Berlin", "myext.flag", "on"));
      assertThat(Rows.of(s, "SELECT current_setting('TimeZone') || ' ' || current_setting('myext.flag')"))
          .containsExactly("Europe/Berlin on");
      assertThat(Rows.of(s, "SELECT setting FROM pg_settings WHERE name IN ('TimeZone', 'myext.flag') ORDER BY 1"))
          .containsExactly("Europe/Berlin", "on");
      java.util.Map<String, String> reset = new java.util.HashMap<>();
      reset.put("timezone", null);
      s.setSettings(reset);
      assertThat(Rows.of(s, "SELECT current_setting('TimeZone')")).containsExactly("UTC");
    }
  }
}
