package dev.floe.cli;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a command runs with: the standard streams, the environment variables, and whether a person sits at
 * a terminal. Commands take all of these from here, never from {@link System}, so that tests run the CLI
 * in-process with their own streams.
 *
 * @param in standard input
 * @param out standard output: results
 * @param err standard error: errors, notices, progress
 * @param variables environment variables ({@code FLOE_WAREHOUSE}, {@code FLOE_HISTORY}, {@code HOME})
 * @param interactive true when input and output are a terminal: {@code floe sql} then opens the shell
 *     instead of reading a script from standard input, and progress lines update in place
 * @param systemTerminal true to drive the process's own terminal (raw mode, signals); false to run the
 *     shell over {@link #in} and {@link #out} as a non-interactive (dumb) terminal
 */
public record Environment(InputStream in, PrintStream out, PrintStream err, Map<String, String> variables,
    boolean interactive, boolean systemTerminal) {

  public Environment {
    Objects.requireNonNull(in, "in");
    Objects.requireNonNull(out, "out");
    Objects.requireNonNull(err, "err");
    variables = Map.copyOf(variables);
  }

  /**
   * The process's own streams and environment. Output is UTF-8 whatever the platform default (Java 17 on a
   * POSIX locale would print {@code ?} for every non-ASCII character) and buffered: the CLI flushes it after
   * each statement, not after each line of a million-row export.
   */
  public static Environment system() {
    boolean terminal = System.console() != null;
    PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
        false, StandardCharsets.UTF_8);
    PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
    return new Environment(System.in, out, err, System.getenv(), terminal, terminal);
  }

  /** An environment variable, if set and not empty. */
  public Optional<String> variable(String name) {
    return Optional.ofNullable(variables.get(name)).filter(v -> !v.isEmpty());
  }
}
