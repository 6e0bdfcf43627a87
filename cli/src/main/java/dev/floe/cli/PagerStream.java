package dev.floe.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * Output on its way to the terminal that goes through the pager once it is longer than the screen, as psql's
 * does: what is written is held (at most a screenful) while its lines are counted, a line wider than the screen
 * counting as the lines it wraps to; past the screen's height the pager starts and gets what was held and the
 * rest. Output that fits is written to the terminal when it ends ({@link #finish}). When the user quits the
 * pager before the end, the next write throws {@link PagerClosed}, which stops whatever prints.
 */
final class PagerStream extends OutputStream {
  /** Starts the pager: a stream to its input, and how to wait for it. */
  interface Launcher {
    Pager start() throws IOException;
  }

  /** A running pager. */
  interface Pager {
    OutputStream input();

    /** Waits until the user leaves it. */
    void waitFor();
  }

  /** The pager was quit before the output ended: printing stops, without an error. */
  static final class PagerClosed extends RuntimeException {
    PagerClosed() {
      super(null, null, false, false);
    }
  }

  private final OutputStream terminal;
  private final Launcher launcher;
  private final int height;
  private final int width;
  private final ByteArrayOutputStream held = new ByteArrayOutputStream();
  private int lines;
  private int column;
  private Pager pager;
  private boolean closed;
  /** Time spent waiting for the pager: the user reading. */
  private long waited;

  /**
   * @param height the screen's lines: more lines than this (less one for the prompt) start the pager; 0 starts
   *     it at the first byte ({@code \pset pager always})
   * @param width the screen's columns, 0 if unknown (lines are then not counted as wrapping)
   */
  PagerStream(OutputStream terminal, Launcher launcher, int height, int width) {
    this.terminal = terminal;
    this.launcher = launcher;
    this.height = height;
    this.width = width;
  }

  @Override
  public void write(int b) throws IOException {
    if (pager != null) {
      toPager(new byte[] {(byte) b}, 0, 1);
      return;
    }
    held.write(b);
    count(b);
    if (lines > height - 1) {
      startPager();
    }
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (pager != null) {
      toPager(b, off, len);
      return;
    }
    for (int i = 0; i < len; i++) {
      write(b[off + i]);
      if (pager != null) {
        toPager(b, off + i + 1, len - i - 1);
        return;
      }
    }
  }

  /** Whether the output went to the pager. */
  boolean paged() {
    return pager != null;
  }

  private void count(int b) {
    if (b == '\n') {
      lines++;
      column = 0;
    } else if ((b & 0xC0) != 0x80) { // a character's first byte
      column++;
      if (width > 0 && column > width) {
        lines++;
        column = 1;
      }
    }
  }

  private void startPager() throws IOException {
    terminal.flush();
    pager = launcher.start();
    byte[] first = held.toByteArray();
    held.reset();
    toPager(first, 0, first.length);
  }

  private void toPager(byte[] b, int off, int len) {
    if (closed || len == 0) {
      if (closed) {
        throw new PagerClosed();
      }
      return;
    }
    long start = System.nanoTime();
    try {
      pager.input().write(b, off, len);
    } catch (IOException e) {
      closed = true; // the user quit it: a broken pipe
      throw new PagerClosed();
    } finally {
      waited += System.nanoTime() - start;
    }
  }

  /** How long writes waited for the pager, and the end for the user to leave it: not the statement's time. */
  long waitedNanos() {
    return waited;
  }

  @Override
  public void flush() throws IOException {
    if (pager != null && !closed) {
      try {
        pager.input().flush();
      } catch (IOException e) {
        closed = true;
      }
    }
  }

  /** Ends the output: what fit the screen goes to the terminal, or the pager gets its end and is waited for. */
  void finish() {
    try {
      if (pager == null) {
        held.writeTo(terminal);
        held.reset();
        terminal.flush();
        return;
      }
      long start = System.nanoTime();
      try {
        pager.input().close();
      } catch (IOException e) {
        // quit early: nothing more to give it
      }
      pager.waitFor();
      waited += System.nanoTime() - start;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
