package dev.floe.cli;

import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * SIGINT and SIGTERM for a command that finishes its work when asked to stop (floe cdc apply, floe cdc
 * follow): {@code stop} asks it to, the JVM's exit waits for the command to end (up to a minute), and a
 * stop that went well is a success, exit 0 rather than the JVM's 130 or 143, as for floe serve.
 */
final class CleanStop implements AutoCloseable {
  private final CountDownLatch done = new CountDownLatch(1);
  private final PrintStream out;
  private final Thread hook;
  private volatile boolean clean;

  CleanStop(String name, PrintStream out, Runnable stop) {
    this.out = out;
    this.hook = new Thread(() -> {
      stop.run();
      try {
        if (done.await(60, TimeUnit.SECONDS) && clean) {
          out.flush();
          Runtime.getRuntime().halt(Main.EXIT_OK);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, name);
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** The command ended well: a stop that asked for it exits 0. */
  void ended() {
    clean = true;
  }

  /** The command is over (well or not): a stop waiting for it goes on. */
  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // shutting down: the hook is running and waits for this
    }
    out.flush();
    done.countDown();
  }
}
