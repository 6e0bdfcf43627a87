package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The expected texts are psql 15's output for the same values. */
class AlignedTableTest {

  private static String render(List<String> headers, boolean[] right, String[]... rows) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    AlignedTable table = new AlignedTable(headers, right);
    for (String[] row : rows) {
      table.fit(row);
    }
    table.printHeader(out);
    for (String[] row : rows) {
      table.printRow(out, row);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void multiLineValuesCarryAPlusAtTheirRightEdge() {
    String text = render(List.of("x", "multi", "txt", "num"), new boolean[] {false, false, false, true},
        new String[] {"a", "line1\nline2\nl3", "longer value here", "12345"},
        new String[] {"bbbbbbbbbb", "x", "y", "1"});

    assertThat(text).isEqualTo("""
             x      | multi |        txt        |  num \s
        ------------+-------+-------------------+-------
         a          | line1+| longer value here | 12345
                    | line2+|                   | \n\
                    | l3    |                   | \n\
         bbbbbbbbbb | x     | y                 |     1
        """);
  }

  @Test
  void lastColumnContinuationAndMultiLineHeaders() {
    assertThat(render(List.of("n", "last"), new boolean[] {true, false}, new String[] {"1", "a\nbb"}))
        .isEqualTo(" n | last \n---+------\n 1 | a   +\n   | bb\n");
    assertThat(render(List.of("multi\nhead", "n"), new boolean[] {false, true}, new String[] {"x", "2"}))
        .isEqualTo(" multi+| n \n head  |   \n-------+---\n x     | 2\n");
  }

  @Test
  void wideCharactersTakeTwoColumnsAndControlsAreEscaped() {
    assertThat(render(List.of("a", "city", "n"), new boolean[] {false, false, true},
        new String[] {"x", "Zürich 日本", "3"}))
        .isEqualTo(" a |    city     | n \n---+-------------+---\n x | Zürich 日本 | 3\n");
    assertThat(render(List.of("x", "y", "t"), new boolean[3], new String[] {"a\rb", "c\u0001d", "\tz"}))
        .isEqualTo("  x   |   y    |     t     \n------+--------+-----------\n a\\rb | c\\x01d |         z\n");
  }

  @Test
  void footerCountsRows() {
    assertThat(AlignedTable.footer(0)).isEqualTo("(0 rows)");
    assertThat(AlignedTable.footer(1)).isEqualTo("(1 row)");
    assertThat(AlignedTable.footer(25)).isEqualTo("(25 rows)");
  }
}
