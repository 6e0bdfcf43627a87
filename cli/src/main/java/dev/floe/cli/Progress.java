package dev.floe.cli;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A progress report on standard error: one line rewritten in place on a terminal, one line per step
 * otherwise (a log file should not fill with carriage returns).
 */
final class Progress {
  private final PrintStream err;
  private final boolean inPlace;
  private final long total;
  private final long started = System.nanoTime();
  private int lastLength;

  Progress(PrintStream err, boolean inPlace, long total) {
    this.err = err;
    this.inPlace = inPlace;
    this.total = total;
  }

  /** Reports {@code done} of the total rows, with what is being loaded now. */
  void update(long done, String what) {
    double seconds = Math.max(1e-9, (System.nanoTime() - started) / 1e9);
    String line = String.format(Locale.ROOT, "%s: %,d of %,d rows (%d%%), %,.0f rows/s", what, done, total,
        total == 0 ? 100 : done * 100 / total, done / seconds);
    if (inPlace) {
      // Blank out the rest of a longer previous line.
      err.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
      lastLength = line.length();
    } else {
      err.println(line);
    }
    err.flush();
  }

  /** Ends the in-place line. */
  void finish() {
    if (inPlace && lastLength > 0) {
      err.println();
    }
  }

  double elapsedSeconds() {
    return (System.nanoTime() - started) / 1e9;
  }
}
