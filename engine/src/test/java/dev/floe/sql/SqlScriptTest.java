package dev.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.FloeException;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SqlScriptTest {
  /** splitOne skips tokenizing only where it gives exactly what split gives. */
  @Test
  void splitOneAgreesWithSplit() {
    List<String> texts = List.of("", "   ", "\n\t", "SELECT 1", "  SELECT 1  ", "\nSELECT 1 -- done", "-- only a comment",
        "/* c */ SELECT 1", "SELECT 1; SELECT 2", "SELECT ';'", "SELECT 1;", " ; ", "SELECT 'a' \n 'b'",
        "select bal from acc where id =  42 ", "SELECT $$x$$", "SELECT 1 /* trailing */", "\u00a0SELECT 1");
    for (String t : texts) {
      assertThat(SqlScript.splitOne(t)).as(t).isEqualTo(SqlScript.split(t));
    }
    Random random = new Random(7);
    String alphabet = " \n\t;'\"-/*$xS1";
    for (int i = 0; i < 20_000; i++) {
      StringBuilder b = new StringBuilder();
      for (int n = random.nextInt(12); n > 0; n--) {
        b.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      String t = b.toString();
      List<SqlScript.Part> expected;
      try {
        expected = SqlScript.split(t);
      } catch (FloeException e) {
        // the fast path leaves a text the lexer rejects to the parser, which rejects it alike
        continue;
      }
      assertThat(SqlScript.splitOne(t)).as(t).isEqualTo(expected);
    }
  }

  @Test
  void anUnterminatedCommentIsStillAnError() {
    assertThatThrownBy(() -> SqlScript.splitOne("/* open")).isInstanceOf(FloeException.class);
  }
}
