package dev.floe.cli;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** {@code floe cdc follow} run in this JVM against a test's PostgreSQL, and waiting for its slot. */
final class FollowRuns {
  private FollowRuns() {}

  /** {@code floe cdc follow -w wh --postgres <postgres> --user floe --table table more...}, its output. */
  static Cli.Outcome follow(dev.floe.testing.ThrowawayPostgres postgres, String wh, String table, String... more) {
    List<String> args = new ArrayList<>(List.of("cdc", "follow", "-w", wh, "--postgres", postgres.url(), "--user",
        "floe", "--table", table));
    args.addAll(List.of(more));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Environment env = new Environment(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true,
        StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), false, false);
    int status = Main.run(env, args.toArray(String[]::new));
    return new Cli.Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Waits for the follower's slot to exist and be used: changes made after that are streamed, not snapshotted. */
  static void awaitSlot(Connection pg, String slot) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    try (PreparedStatement s = pg.prepareStatement("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? "
        + "AND confirmed_flush_lsn IS NOT NULL AND active")) {
      s.setString(1, slot);
      while (System.nanoTime() < deadline) {
        try (ResultSet r = s.executeQuery()) {
          r.next();
          if (r.getInt(1) == 1) {
            return;
          }
        }
        Thread.sleep(50);
      }
    }
    throw new AssertionError("replication slot " + slot + " was not made and used within 30 s");
  }
}
