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

  /** E'' escapes are bytes, as in PostgreSQL: the string they make must be valid UTF-8 without NUL. */
  @Test
  void escapeStringsAreBytesThatMustBeUtf8() {
    assertThat(values("E'\\xc3\\xa9' E'\\303\\251' E'\\u00e9' E'\\U0001F600' E'\\uD83D\\uDE00' E'a\\qb' E'\\x'"))
        .containsExactly("é", "é", "é", "😀", "😀", "aqb", "x");
    for (String[] bad : new String[][] {{"E'\\xff'", "0xff"}, {"E'\\xc3\\x28'", "0xc3 0x28"}, {"E'\\000'", "0x00"},
        {"E'a\\x00'", "0x00"}, {"E'\\xe2\\x82'", "0xe2 0x82"}, {"E'\\xed\\xa0\\x80'", "0xed 0xa0 0x80"}}) {
      assertThatThrownBy(() -> Lexer.tokenize("SELECT " + bad[0])).as(bad[0])
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo("22021");
            assertThat(e.getMessage()).isEqualTo("invalid byte sequence for encoding \"UTF8\": " + bad[1]);
          });
    }
    for (String bad : new String[] {"E'\\u0000'", "E'\\uD83D'", "E'\\uDE00'", "E'\\U00110000'"}) {
      assertThatThrownBy(() -> Lexer.tokenize("SELECT " + bad)).as(bad)
          .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("42601"));
    }
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
