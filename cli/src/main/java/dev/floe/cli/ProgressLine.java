package dev.floe.cli;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

/**
 * The line on standard error that shows how far a long statement has got, as DuckDB's shell shows it: from
 * {@link #DELAY_MILLIS} after the statement starts, redrawn in place a few times a second
 * ({@code  42% ▕████████████▋                 ▏ 3.1 s}), and erased when its result starts to print or it ends.
 * Only the interactive shell on a terminal shows it.
 */
final class ProgressLine {
  static final long DELAY_MILLIS = 2000;
  private static final long EVERY_MILLIS = 250;
  private static final int BAR = 30;
  private static final String EIGHTHS = " ▏▎▍▌▋▊▉";

  private final PrintStream err;
  private final DoubleSupplier progress;
  private final long delayMillis;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "floe-progress");
    t.setDaemon(true);
    return t;
  });

  /**
   * @param progress the running statement's progress in percent, -1 if unknown ({@code Session::queryProgress},
   *     asked once here: that turns the estimate on)
   */
  ProgressLine(PrintStream err, DoubleSupplier progress, long delayMillis) {
    this.err = err;
    this.progress = progress;
    this.delayMillis = delayMillis;
    progress.getAsDouble();
  }

  /** One statement's line: shown after the delay until {@link Shown#stop}. */
  final class Shown {
    private final long started = System.nanoTime();
    private ScheduledFuture<?> task;
    private int length;
    private boolean stopped;

    private synchronized void draw() {
      if (stopped) {
        return;
      }
      String line = line(progress.getAsDouble(), (System.nanoTime() - started) / 1e9);
      err.print("\r" + line + " ".repeat(Math.max(0, length - line.length())));
      err.flush();
      length = line.length();
    }

    /** Erases the line, if it was drawn; it is not drawn again. */
    synchronized void stop() {
      if (stopped) {
        return;
      }
      stopped = true;
      task.cancel(false);
      if (length > 0) {
        err.print("\r" + " ".repeat(length) + "\r");
        err.flush();
      }
    }
  }

  /** Starts watching a statement that starts now. */
  Shown start() {
    Shown shown = new Shown();
    shown.task = timer.scheduleAtFixedRate(shown::draw, delayMillis, EVERY_MILLIS, TimeUnit.MILLISECONDS);
    return shown;
  }

  /** {@code  42% ▕████▌   ▏ 3.1 s}, or without an estimate {@code running… 3.1 s}. */
  static String line(double percent, double seconds) {
    String time = String.format(Locale.ROOT, "%.1f s", seconds);
    if (percent < 0) {
      return "running… " + time;
    }
    double p = Math.min(100, percent);
    int eighths = (int) Math.round(p / 100 * BAR * 8);
    StringBuilder bar = new StringBuilder("█".repeat(eighths / 8));
    if (eighths % 8 > 0) {
      bar.append(EIGHTHS.charAt(eighths % 8));
    }
    bar.append(" ".repeat(BAR - bar.length()));
    return String.format(Locale.ROOT, "%3d%% ▕%s▏ %s", (int) p, bar, time);
  }
}
