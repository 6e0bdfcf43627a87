package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** When output goes through the pager: only once it is longer than the screen, wrapped lines counted. */
class PagerStreamTest {
  private final ByteArrayOutputStream terminal = new ByteArrayOutputStream();
  private final ByteArrayOutputStream paged = new ByteArrayOutputStream();
  private int started;

  private PagerStream stream(int height, int width) {
    return new PagerStream(terminal, () -> {
      started++;
      return new PagerStream.Pager() {
        @Override
        public OutputStream input() {
          return paged;
        }

        @Override
        public void waitFor() {}
      };
    }, height, width);
  }

  private static void print(PagerStream s, String text) {
    PrintStream p = new PrintStream(s, false, StandardCharsets.UTF_8);
    p.print(text);
    p.flush();
  }

  @Test
  void outputThatFitsTheScreenGoesToTheTerminalWhenItEnds() {
    PagerStream s = stream(5, 80);
    print(s, "1\n2\n3\n4\n");
    assertThat(terminal.size()).isZero(); // held until the end: it might still grow past the screen
    s.finish();
    assertThat(terminal.toString(StandardCharsets.UTF_8)).isEqualTo("1\n2\n3\n4\n");
    assertThat(started).isZero();
  }

  @Test
  void aLineMoreThanTheScreenStartsThePagerWithEverything() {
    PagerStream s = stream(5, 80);
    print(s, "1\n2\n3\n4\n5\n6\n7\n");
    s.finish();
    assertThat(started).isEqualTo(1);
    assertThat(terminal.size()).isZero();
    assertThat(paged.toString(StandardCharsets.UTF_8)).isEqualTo("1\n2\n3\n4\n5\n6\n7\n");
  }

  @Test
  void wideLinesCountAsTheLinesTheyWrapTo() {
    PagerStream s = stream(5, 10);
    print(s, "x".repeat(25) + "\n" + "é".repeat(15) + "\n"); // 3 + 2 screen lines; é is two bytes, one column
    assertThat(started).isEqualTo(1);
    PagerStream narrow = stream(5, 10);
    print(narrow, "é".repeat(10) + "\n" + "é".repeat(10) + "\n");
    assertThat(started).isEqualTo(1);
  }

  @Test
  void alwaysPagesFromTheFirstByte() {
    PagerStream s = stream(0, 0);
    print(s, "short\n");
    s.finish();
    assertThat(paged.toString(StandardCharsets.UTF_8)).isEqualTo("short\n");
  }

  @Test
  void aPagerQuitEarlyStopsThePrinting() {
    PagerStream s = new PagerStream(terminal, () -> new PagerStream.Pager() {
      @Override
      public OutputStream input() {
        return new OutputStream() {
          @Override
          public void write(int b) throws IOException {
            throw new IOException("Broken pipe");
          }
        };
      }

      @Override
      public void waitFor() {}
    }, 2, 80);
    assertThatThrownBy(() -> print(s, "1\n2\n3\n")).isInstanceOf(PagerStream.PagerClosed.class);
  }
}
