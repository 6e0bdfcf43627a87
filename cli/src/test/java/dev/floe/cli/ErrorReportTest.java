package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.FloeException;
import org.junit.jupiter.api.Test;

class ErrorReportTest {
  private static FloeException error(int position) {
    return new FloeException("42601", "syntax error at or near \"x\"", null, null, position, null);
  }

  @Test
  void oneLineLocatesTheErrorInTheScript() {
    assertThat(ErrorReport.oneLine(error(8), "SELECT 1; SELECT x", 10, 2, 2))
        .isEqualTo("ERROR 42601: syntax error at or near \"x\" at position 18");
    assertThat(ErrorReport.oneLine(error(10), "SELECT 1;\nSELECT\n  x", 10, 2, 2))
        .isEqualTo("ERROR 42601: syntax error at or near \"x\" at line 3, column 3");
    assertThat(ErrorReport.oneLine(error(0), "SELECT 1;\nSELECT 1/0", 10, 2, 2))
        .isEqualTo("ERROR 42601: syntax error at or near \"x\" in the statement at line 2");
    assertThat(ErrorReport.oneLine(error(0), "SELECT 1/0", 0, 1, 1))
        .isEqualTo("ERROR 42601: syntax error at or near \"x\"");
  }

  @Test
  void oneLineKeepsDetailAndHintOnTheLine() {
    FloeException e = new FloeException("55006", "warehouse /w is in use", "held by pid 7\nsince noon",
        "Open it read-only.", 0, null);

    assertThat(ErrorReport.oneLine(e))
        .isEqualTo("ERROR 55006: warehouse /w is in use DETAIL: held by pid 7 since noon HINT: Open it read-only.");
  }

  @Test
  void verbosePointsACaretAtThePosition() {
    assertThat(ErrorReport.verbose(error(15), "SELECT a,\n  b x FROM t"))
        .containsExactly("ERROR 42601: syntax error at or near \"x\"", "LINE 2:   b x FROM t", "            ^");
  }

  @Test
  void verboseCutsLongLinesAroundThePosition() {
    String statement = "SELECT " + "a, ".repeat(40) + "x FROM t";
    int position = statement.indexOf('x') + 1;

    var lines = ErrorReport.verbose(error(position), statement);

    assertThat(lines.get(1)).startsWith("LINE 1: ...").contains("x FROM t");
    assertThat(lines.get(2).indexOf('^')).isEqualTo(lines.get(1).indexOf("x FROM"));
  }

  @Test
  void timingReadsLikePsql() {
    assertThat(StatementRunner.timing(12_345_678)).isEqualTo("Time: 12.346 ms");
    assertThat(StatementRunner.timing(83_012_345_678L)).isEqualTo("Time: 83012.346 ms (01:23.012)");
    assertThat(StatementRunner.timing(3_723_000_000_000L)).isEqualTo("Time: 3723000.000 ms (01:02:03.000)");
  }

  @Test
  void backslashArgumentsQuoteAsPsqlDoes() {
    assertThat(BackslashArguments.split("\\pset null '(none)'")).containsExactly("\\pset", "null", "(none)");
    assertThat(BackslashArguments.split("\\pset null ''")).containsExactly("\\pset", "null", "");
    assertThat(BackslashArguments.split("\\d \"My Table\"")).containsExactly("\\d", "\"My Table\"");
    assertThat(BackslashArguments.split("\\i 'it''s.sql'")).containsExactly("\\i", "it's.sql");
  }
}
