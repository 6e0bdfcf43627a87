package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ShellParserTest {

  @Test
  void aStatementIsCompleteAtATopLevelSemicolon() {
    assertThat(ShellParser.isComplete("SELECT 1;")).isTrue();
    assertThat(ShellParser.isComplete("SELECT 1 ;  \n")).isTrue();
    assertThat(ShellParser.isComplete("SELECT 1\n  FROM t\n;")).isTrue();
    assertThat(ShellParser.isComplete("SELECT 1; SELECT 2;")).isTrue();
    assertThat(ShellParser.isComplete("SELECT 1 -- trailing comment\n;")).isTrue();
    assertThat(ShellParser.isComplete("SELECT 1; -- done")).isTrue();
  }

  @Test
  void inputContinuesUntilThen() {
    assertThat(ShellParser.isComplete("SELECT 1")).isFalse();
    assertThat(ShellParser.isComplete("SELECT 1; SELECT 2")).isFalse();
    assertThat(ShellParser.isComplete("SELECT 'a;")).isFalse();
    assertThat(ShellParser.isComplete("SELECT 'a;'")).isFalse();
    assertThat(ShellParser.isComplete("SELECT $$ ; $$")).isFalse();
    assertThat(ShellParser.isComplete("SELECT $$ ; ")).isFalse();
    assertThat(ShellParser.isComplete("SELECT 1 /* ; ")).isFalse();
    assertThat(ShellParser.isComplete("SELECT 1 -- ;")).isFalse();
    assertThat(ShellParser.isComplete("SELECT \"a;")).isFalse();
  }

  @Test
  void commandsBlankInputAndQuitWordsAreCompleteAtOnce() {
    assertThat(ShellParser.isComplete("\\d trips")).isTrue();
    assertThat(ShellParser.isComplete("  \\q")).isTrue();
    assertThat(ShellParser.isComplete("")).isTrue();
    assertThat(ShellParser.isComplete("-- only a comment")).isTrue();
    assertThat(ShellParser.isComplete("quit")).isTrue();
    assertThat(ShellParser.isComplete("EXIT")).isTrue();
    assertThat(ShellParser.isComplete("help")).isTrue();
  }
}
