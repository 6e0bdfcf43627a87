package dev.floe.cli;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Runs {@code floe} in this JVM with captured standard streams, as a test's stand-in for a terminal. */
final class Cli {
  private Cli() {}

  /** What a run left behind: its exit status and everything it printed. */
  record Outcome(int status, String out, String err) {}

  /** {@code floe args...} with empty standard input, not at a terminal. */
  static Outcome run(String... args) {
    return run("", Map.of(), false, args);
  }

  /** {@code floe args...} reading {@code stdin}, not at a terminal. */
  static Outcome runWithInput(String stdin, String... args) {
    return run(stdin, Map.of(), false, args);
  }

  /**
   * @param interactive true to run as if at a terminal: {@code floe sql} then opens the shell, over a
   *     non-interactive (dumb) JLine terminal reading {@code stdin}
   */
  static Outcome run(String stdin, Map<String, String> variables, boolean interactive, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Environment env = new Environment(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
        variables, interactive, false);
    int status = Main.run(env, args);
    return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
