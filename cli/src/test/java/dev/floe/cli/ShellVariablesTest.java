package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** psql's interpolation: values, literals and identifiers, never inside quotes or comments. */
class ShellVariablesTest {
  private final ShellVariables v = new ShellVariables();

  @Test
  void interpolatesOutsideQuotesAndComments() {
    v.set("t", "trips");
    v.set("who", "O'Brien");
    v.set("col", "Mixed \"Case\"");
    assertThat(v.interpolate("SELECT * FROM :t WHERE name = :'who' AND :\"col\" > 1"))
        .isEqualTo("SELECT * FROM trips WHERE name = 'O''Brien' AND \"Mixed \"\"Case\"\"\" > 1");
    assertThat(v.interpolate("SELECT ':t', \":t\", $$ :t $$, $q$:t$q$, E'\\' :t', x::text -- :t\n/* :t /* :t */ */ :t"))
        .isEqualTo("SELECT ':t', \":t\", $$ :t $$, $q$:t$q$, E'\\' :t', x::text -- :t\n/* :t /* :t */ */ trips");
    assertThat(v.interpolate("SELECT :nosuch, :'nosuch', a[1:2], :{?t}, :{?nosuch}"))
        .isEqualTo("SELECT :nosuch, :'nosuch', a[1:2], TRUE, FALSE");
  }

  @Test
  void namesAreLettersDigitsAndUnderscores() {
    assertThatThrownBy(() -> v.set("a-b", "x")).isInstanceOf(IllegalArgumentException.class);
    v.set("a_1", "x");
    assertThat(v.interpolate(":a_1")).isEqualTo("x");
    v.unset("a_1");
    assertThat(v.interpolate(":a_1")).isEqualTo(":a_1");
  }
}
