package dev.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.FloeException;
import java.util.List;
import org.junit.jupiter.api.Test;

class LexerTest {
  private static List<String> values(String sql) {
    return Lexer.tokenize(sql).stream().filter(t -> t.type() != Token.Type.EOF).map(Token::value).toList();
  }

  @Test
  void foldsUnquotedIdentifiersOnly() {
    assertThat(values("SELECT Foo, \"Bar\" FROM \"a\"\"b\"")).containsExactly("select", "foo", ",", "Bar", "from", "a\"b");
  }

  @Test
  void stringsCommentsAndDollarQuotes() {
    assertThat(values("'it''s' E'a\\nb' $$x;y$$ $t$z$t$ -- c;\n /* a /* nested */ ; */ 1.5e3"))
        .containsExactly("it's", "a\nb", "x;y", "z", "1.5e3");
  }

  @Test
  void operatorsAndParameters() {
    assertThat(values("a::int <= $1 || ? <> b")).containsExactly("a", "::", "int", "<=", "$1", "||", "?", "<>", "b");
  }

  @Test
  void unterminatedInputIsASyntaxErrorWithPosition() {
    assertThatThrownBy(() -> Lexer.tokenize("SELECT 'abc"))
        .isInstanceOfSatisfying(FloeException.class, e -> {
          assertThat(e.sqlState()).isEqualTo("42601");
          assertThat(e.position()).isEqualTo(8);
        });
  }

  @Test
  void scriptsSplitAtTopLevelSemicolonsOnly() {
    List<SqlScript.Part> parts = SqlScript.split("select ';'; -- x;\nselect $$;$$;\n\n;select 3");
    assertThat(parts).extracting(SqlScript.Part::text).containsExactly("select ';'", "select $$;$$", "select 3");
    assertThat(parts.get(2).offset()).isEqualTo("select ';'; -- x;\nselect $$;$$;\n\n;".length());
  }
}
