package dev.floe.cli;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.jline.terminal.Terminal;

/**
 * Where query results and the listings of backslash commands go, as psql's query output: the terminal, through
 * the pager when they are longer than the screen (in the interactive shell only), or the file or command
 * {@code \o} named. Each result or listing is one {@link Destination}.
 */
final class QueryOutput {
  /** The pager when neither {@code FLOE_PAGER} nor {@code PAGER} is set: less, chopping long lines, left on screen. */
  static final String DEFAULT_PAGER = "less -SFX";

  private final PrintStream terminal;
  private final Environment env;
  private final OutputSettings settings;
  /** The shell's terminal, for its size and to hand it to the pager; null when not interactive. */
  private Terminal screen;
  /** {@code \o}'s target, or null for the terminal. */
  private OutputStream redirect;
  private Process redirectProcess;

  QueryOutput(PrintStream terminal, Environment env, OutputSettings settings) {
    this.terminal = terminal;
    this.env = env;
    this.settings = settings;
  }

  /** The interactive shell's terminal: from now on long output to it may go through the pager. */
  void screen(Terminal value) {
    this.screen = value;
  }

  /** The terminal's stream, for what goes there whatever {@code \o} says (timing, messages). */
  PrintStream terminal() {
    return terminal;
  }

  /** One result's or listing's way out. */
  interface Destination {
    OutputStream stream();

    /** The screen's width when the output goes to the terminal (for {@code \x auto}), else 0. */
    int screenWidth();

    /** Ends it: flushes, hands what fit the screen to the terminal, or waits until the user leaves the pager. */
    void close();

    /** How long it waited for the user reading the pager (after {@link #close}). */
    default long waitedNanos() {
      return 0;
    }
  }

  /** Where the next result or listing goes. */
  Destination open() {
    if (redirect != null) {
      OutputStream target = redirect;
      return new Destination() {
        @Override
        public OutputStream stream() {
          return target;
        }

        @Override
        public int screenWidth() {
          return 0;
        }

        @Override
        public void close() {
          try {
            target.flush();
          } catch (IOException e) {
            throw new FloeException(SqlState.IO_ERROR, "could not write the output: " + e.getMessage(), e);
          }
        }
      };
    }
    int width = screen == null ? 0 : Math.max(0, screen.getWidth());
    Optional<String> pager = screen == null || settings.pager() == OutputSettings.Pager.OFF ? Optional.empty()
        : pagerCommand();
    boolean page = screen != null && pager.isPresent() && switch (settings.pager()) {
      case OFF -> false;
      case ON -> screen.getHeight() > 0;
      case ALWAYS -> true;
    };
    if (!page) {
      return new Destination() {
        @Override
        public OutputStream stream() {
          return terminal;
        }

        @Override
        public int screenWidth() {
          return width;
        }

        @Override
        public void close() {
          terminal.flush();
        }
      };
    }
    int height = settings.pager() == OutputSettings.Pager.ALWAYS ? 0 : screen.getHeight();
    PagerStream paged = new PagerStream(terminal, () -> startPager(pager.get()), height, width);
    return new Destination() {
      @Override
      public OutputStream stream() {
        return paged;
      }

      @Override
      public int screenWidth() {
        return width;
      }

      @Override
      public void close() {
        paged.finish();
      }

      @Override
      public long waitedNanos() {
        return paged.waitedNanos();
      }
    };
  }

  /**
   * The pager to run: {@code $FLOE_PAGER}, else {@code $PAGER} (either set to an empty value: none, as psql), else
   * {@value #DEFAULT_PAGER} when {@code less} is on the {@code PATH}, else {@code more}.
   */
  Optional<String> pagerCommand() {
    for (String name : List.of("FLOE_PAGER", "PAGER")) {
      if (env.variables().containsKey(name)) {
        String command = env.variables().get(name);
        return command.isBlank() ? Optional.empty() : Optional.of(command);
      }
    }
    if (onPath("less")) {
      return Optional.of(DEFAULT_PAGER);
    }
    return onPath("more") ? Optional.of("more") : Optional.empty();
  }

  private boolean onPath(String program) {
    for (String dir : env.variable("PATH").orElse("/usr/bin:/bin").split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }

  private PagerStream.Pager startPager(String command) throws IOException {
    pause(screen); // the pager reads the keyboard now
    Process process = new ProcessBuilder("/bin/sh", "-c", command)
        .redirectOutput(ProcessBuilder.Redirect.INHERIT)
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    OutputStream input = new BufferedOutputStream(process.getOutputStream(), 1 << 16);
    return new PagerStream.Pager() {
      @Override
      public OutputStream input() {
        return input;
      }

      @Override
      public void waitFor() {
        try {
          process.waitFor();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } finally {
          screen.resume();
        }
      }
    };
  }

  /** Stops the terminal's own reading of the keyboard while a program (the pager, the editor) reads it. */
  static void pause(Terminal terminal) {
    try {
      terminal.pause(true);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * {@code \o}: results go to {@code target} from now on, a file (created or emptied) or, after {@code |}, a
   * shell command's input; null sends them back to the terminal.
   */
  void redirect(String target) {
    closeRedirect();
    if (target == null) {
      return;
    }
    try {
      if (target.startsWith("|")) {
        Process process = new ProcessBuilder("/bin/sh", "-c", target.substring(1).strip())
            .redirectOutput(ProcessBuilder.Redirect.INHERIT)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
        redirectProcess = process;
        redirect = new BufferedOutputStream(process.getOutputStream(), 1 << 16);
      } else {
        redirect = new BufferedOutputStream(Files.newOutputStream(Path.of(target)), 1 << 16);
      }
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "could not open file \"" + target + "\": " + e.getMessage(), e);
    }
  }

  /** Whether {@code \o} sends results away from the terminal. */
  boolean redirected() {
    return redirect != null;
  }

  /** Ends {@code \o}'s target: the file closed, or the command's input closed and the command waited for. */
  void closeRedirect() {
    if (redirect == null) {
      return;
    }
    try {
      redirect.close();
    } catch (IOException e) {
      // a command that ended early: nothing more to give it
    }
    redirect = null;
    if (redirectProcess != null) {
      try {
        redirectProcess.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      redirectProcess = null;
    }
  }
}
