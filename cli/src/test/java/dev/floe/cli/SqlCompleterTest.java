package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jline.reader.Candidate;
import org.jline.reader.CompletingParsedLine;
import org.jline.reader.LineReader;
import org.jline.reader.Parser;
import org.jline.reader.impl.CompletionMatcherImpl;
import org.jline.reader.impl.DefaultParser;
import org.junit.jupiter.api.Test;

/** What Tab offers: statement keywords by prefix (never a typo's guess), tables after \d, columns. */
class SqlCompleterTest {
  private final SqlCompleter completer = new SqlCompleter(() -> List.of("trips", "zones"),
      () -> List.of("tip", "pickup_at"));

  /** The candidates the shell's reader would offer for {@code line}, as its matcher (typos off) filters them. */
  private List<String> offered(String line) {
    CompletingParsedLine parsed = (CompletingParsedLine) new DefaultParser().parse(line, line.length(),
        Parser.ParseContext.COMPLETE);
    List<Candidate> all = new ArrayList<>();
    completer.complete(null, parsed, all);
    CompletionMatcherImpl matcher = new CompletionMatcherImpl();
    matcher.compile(Map.of(LineReader.Option.COMPLETE_MATCHER_TYPO, false), false, parsed, false, 2, null);
    return matcher.matches(all).stream().map(Candidate::value).toList();
  }

  @Test
  void statementKeywordsCompleteByPrefixOnly() {
    assertThat(offered("MER")).containsExactly("MERGE");
    assertThat(offered("mer")).containsExactly("merge");
    assertThat(offered("TRUN")).containsExactly("TRUNCATE");
    assertThat(offered("SELECT * FROM trips WHERE ti")).contains("tip", "time").doesNotContain("trips");
  }

  @Test
  void backslashArgumentsAreTables() {
    assertThat(offered("\\d ")).containsExactlyInAnyOrder("trips", "zones");
    assertThat(offered("\\d t")).containsExactly("trips");
    assertThat(offered("\\ti")).containsExactly("\\timing");
  }
}
