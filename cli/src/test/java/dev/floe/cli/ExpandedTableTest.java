package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** psql's expanded display, byte for byte. */
class ExpandedTableTest {
  private static String print(List<String> headers, String[]... rows) {
    ExpandedTable t = new ExpandedTable(headers);
    for (String[] r : rows) {
      t.fit(r);
    }
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(b, true, StandardCharsets.UTF_8);
    for (int i = 0; i < rows.length; i++) {
      t.printRecord(out, i + 1, rows[i]);
    }
    return b.toString(StandardCharsets.UTF_8);
  }

  @Test
  void recordsAsPsqlPrintsThem() {
    // psql's documentation of \x: the rule is as wide as the records
    assertThat(print(List.of("first", "second"), new String[] {"1", "one"}, new String[] {"3", "three"}))
        .isEqualTo("""
            -[ RECORD 1 ]-
            first  | 1
            second | one
            -[ RECORD 2 ]-
            first  | 3
            second | three
            """);
  }

  @Test
  void theRuleMarksTheColumnsBeyondTheLabel() {
    assertThat(print(List.of("a_rather_long_column_name", "b"), new String[] {"value", ""}))
        .isEqualTo("""
            -[ RECORD 1 ]-------------+------
            a_rather_long_column_name | value
            b                         |\s
            """);
    assertThat(new ExpandedTable(List.of("a")).rule(12)).isEqualTo("-[ RECORD 12 ]");
  }

  @Test
  void multiLineValuesContinueWithAPlus() {
    assertThat(print(List.of("id", "text"), new String[] {"1", "two\nlines"}))
        .isEqualTo("""
            -[ RECORD 1 ]
            id   | 1
            text | two  +
                 | lines
            """);
  }
}
