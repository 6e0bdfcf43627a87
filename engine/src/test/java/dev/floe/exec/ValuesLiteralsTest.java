package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The row count of a bare VALUES list bounds how many rows an INSERT writes (small ones: in the JVM). */
class ValuesLiteralsTest {
  @Test
  void countsTheRowsOfABareValuesList() {
    assertThat(ValuesLiterals.rows("VALUES (1)")).isEqualTo(1);
    assertThat(ValuesLiterals.rows("values (1, 'a'), (2, 'b') , (3, 'c');")).isEqualTo(3);
    assertThat(ValuesLiterals.rows("VALUES ((1 + 2), [3, 4], (SELECT 5)), (6, [], (7))")).isEqualTo(2);
    assertThat(ValuesLiterals.rows("VALUES ('(', ')'), (')', '(')")).isEqualTo(2);
  }

  @Test
  void anythingAfterTheRowsOrAnotherQueryIsUnknown() {
    assertThat(ValuesLiterals.rows("VALUES (1), (2) LIMIT 1")).isEqualTo(-1);
    assertThat(ValuesLiterals.rows("VALUES (1) UNION ALL SELECT 2")).isEqualTo(-1);
    assertThat(ValuesLiterals.rows("VALUES (1) ORDER BY 1")).isEqualTo(-1);
    assertThat(ValuesLiterals.rows("SELECT 1")).isEqualTo(-1);
    assertThat(ValuesLiterals.rows("(VALUES (1))")).isEqualTo(-1);
  }
}
