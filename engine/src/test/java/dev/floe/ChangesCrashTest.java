package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import dev.floe.testing.LwwModel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child JVM applies a change stream (LWW envelopes with duplicates, reordering, ties, TTLs and
 * deletions of rows, partitions and ranges) to a table with a tail, in batches each recording the
 * position it reached, resuming after the position the last committed batch recorded; it is killed with
 * SIGKILL at a random moment, again and again (at least 50 times). After every kill the next child
 * reports the table and the position: the table is exactly the model's fold of every envelope up to that
 * position, which is at least the last batch the killed child saw committed (a batch that changes nothing
 * commits nothing, so records no position: resuming applies it again, which changes nothing again). At the end the whole stream
 * has been applied exactly once, and applying all of it again commits nothing.
 */
class ChangesCrashTest {
  private static final int ENVELOPES = 6000;

  @TempDir
  Path dir;

  /** Where the killed children unpack DuckDB's native library (see CrashTest). */
  @TempDir
  Path childTmp;

  /** The stream: the envelopes, then duplicates of them inserted anywhere. */
  static List<String> stream(long now) {
    Random r = new Random(24);
    List<String> out = new ArrayList<>();
    envelopes(now).forEach(e -> out.add(e.json()));
    while (out.size() < ENVELOPES) {
      out.add(r.nextInt(out.size()), out.get(r.nextInt(out.size()))); // duplicates, anywhere
    }
    return out;
  }

  /** The envelopes {@link #stream} decodes from its JSON, for the model. */
  static List<LwwModel.Env> envelopes(long now) {
    Random r = new Random(23);
    List<LwwModel.Env> envelopes = new ArrayList<>();
    for (int i = 0; i < ENVELOPES * 4 / 5; i++) {
      envelopes.add(LwwModel.randomEnvelope(r, now));
    }
    return envelopes;
  }

  /** The child. args: warehouse, now. Prints the table and the position, READY, then C n per batch, DONE. */
  public static void main(String[] args) throws Exception {
    Path warehouse = Path.of(args[0]);
    long now = Long.parseLong(args[1]);
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
        StandardCharsets.UTF_8);
    List<String> stream = stream(now);
    try (Database db = Floe.open(warehouse)) {
      db.sql("CREATE TABLE IF NOT EXISTS t (p int, c int, a text, b bigint, PRIMARY KEY (p, c)) WITH (tail = true)")
          .close();
      Changes changes = db.changes("t", Changes.Format.LWW);
      int from = changes.position().map(Integer::parseInt).orElse(-1) + 1;
      try (Result r = db.sql("SELECT p, c, a, b FROM t ORDER BY p, c")) {
        for (Row row : r) {
          out.println("R " + row.getLong(0) + "|" + row.getLong(1) + "|" + row.getString(2) + "|"
              + (row.isNull(3) ? "null" : row.getLong(3)));
        }
      }
      out.println("P " + (from - 1));
      out.println("READY");
      out.flush();
      Random sizes = new Random(from);
      while (from < stream.size()) {
        int n = Math.min(stream.size() - from, 10 + sizes.nextInt(60));
        boolean committed = changes.apply(stream.subList(from, from + n), Integer.toString(from + n - 1)).committed();
        from += n;
        out.println("C " + (from - 1) + " " + committed);
        out.flush();
      }
      out.println("DONE " + changes.apply(stream).committed());
      out.flush();
    } catch (Throwable e) {
      out.println("CHILD-FAILED " + e.toString().replace('\n', ' '));
      out.flush();
    }
  }

  @Test
  void everyCommittedBatchSurvivesKillsAndResumingAppliesTheRestOnce() throws Exception {
    int minKills = Integer.getInteger("floe.cdcCrash.kills", 50);
    long now = System.currentTimeMillis() / 1000;
    List<LwwModel.Env> envelopes = envelopes(now);
    List<String> stream = stream(now);
    Random random = new Random(42);
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    int kills = 0;
    long lastSeen = -1;
    boolean done = false;
    for (int round = 0; !done; round++) {
      List<String> command = List.of(javaBin, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx256m",
          "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + childTmp, "-cp", System.getProperty("java.class.path"),
          ChangesCrashTest.class.getName(), dir.toString(), Long.toString(now));
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      boolean killing = kills < minKills;
      // killed a random time (up to 400 ms) after READY or after one of the next two batches committed:
      // mid-batch, wherever that is (reading, writing files, committing)
      int afterBatches = random.nextInt(3);
      long delay = TimeUnit.MILLISECONDS.toNanos(random.nextInt(400));
      java.util.concurrent.atomic.AtomicLong killAt = new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);
      java.util.concurrent.atomic.AtomicBoolean killed = new java.util.concurrent.atomic.AtomicBoolean();
      Thread killer = new Thread(() -> {
        while (p.isAlive() && !killed.get()) {
          if (System.nanoTime() > killAt.get()) {
            p.toHandle().destroyForcibly(); // SIGKILL; what it printed is still read
            killed.set(true);
            return;
          }
          try {
            Thread.sleep(2);
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      if (killing) {
        killer.start();
      }
      List<String> table = new ArrayList<>();
      int batches = 0;
      try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = out.readLine()) != null) {
          if (line.startsWith("R ")) {
            table.add(line.substring(2));
          } else if (line.startsWith("P ")) {
            long position = Long.parseLong(line.substring(2));
            assertThat(position).as("round %d: the position a restart finds", round).isGreaterThanOrEqualTo(lastSeen);
            lastSeen = position;
            // the table is the fold of exactly the envelopes up to the committed position
            assertThat(table).as("round %d, position %d", round, position)
                .containsExactlyElementsOf(model(stream, envelopes, (int) position, now));
          } else if (line.equals("READY")) {
            if (afterBatches == 0) {
              killAt.set(System.nanoTime() + delay);
            }
          } else if (line.startsWith("C ")) {
            String[] f = line.split(" ");
            if (Boolean.parseBoolean(f[2])) { // a batch that changed nothing commits nothing, and records no position
              lastSeen = Long.parseLong(f[1]);
            }
            if (++batches == afterBatches) {
              killAt.set(System.nanoTime() + delay);
            }
          } else if (line.startsWith("DONE")) {
            assertThat(line).as("applying the whole stream again commits nothing").isEqualTo("DONE false");
            done = true;
          } else if (line.startsWith("CHILD-FAILED")) {
            p.destroyForcibly();
            throw new AssertionError("round " + round + ": " + line);
          }
        }
      }
      killer.interrupt();
      killer.join();
      if (killed.get()) {
        kills++;
      }
      p.waitFor(60, TimeUnit.SECONDS);
      if (!done && !killed.get()) {
        throw new AssertionError("round " + round + ": the child ended without finishing");
      }
    }
    assertThat(kills).as("kills before the stream was applied (make it longer)").isGreaterThanOrEqualTo(minKills);
    try (Database db = Floe.open(dir)) {
      assertThat(dev.floe.testing.Rows.of(db, "SELECT p, c, a, b FROM t ORDER BY p, c"))
          .containsExactlyElementsOf(model(stream, envelopes, stream.size() - 1, now));
    }
  }

  /** The model's rows after the envelopes of the stream up to {@code position}. */
  private static List<String> model(List<String> stream, List<LwwModel.Env> envelopes, int position,
      long now) {
    java.util.Map<String, LwwModel.Env> byJson = new java.util.HashMap<>();
    envelopes.forEach(e -> byJson.put(e.json(), e));
    List<LwwModel.Env> prefix = new ArrayList<>();
    for (int i = 0; i <= position; i++) {
      prefix.add(byJson.get(stream.get(i)));
    }
    return LwwModel.rows(prefix, now);
  }
}
