package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.IcebergClients;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child JVM makes keyed changes to a keyed tail from several threads (upserts and deletes of keys each
 * writer owns, increments of one key they all share) while another thread seals in a loop, and is killed
 * with SIGKILL at a random moment, again and again. Each child first reports the table as the last one
 * left it; the parent checks every key against the changes the previous children acknowledged: each key
 * holds its newest acknowledged version (or, if its writer had a change of it in flight, that one), no
 * deleted key comes back, no key and no offset appears twice, and the shared counter holds every
 * acknowledged increment (and at most the ones in flight besides). At the end Iceberg's generic reader
 * reads the sealed table, which has no equality deletes.
 */
class KeyedTailCrashTest {
  private static final int WRITERS = 4;
  private static final int KEYS_PER_WRITER = 20;
  private static final int COUNTER = 999_999;

  @TempDir
  Path dir;

  /** Where the killed children unpack DuckDB's native library (see CrashTest). */
  @TempDir
  Path childTmp;

  /** The key writer {@code w}'s change number {@code s} changes. */
  static int key(int w, long s) {
    return w * 1000 + (int) (s * 7 % KEYS_PER_WRITER);
  }

  /** What change number {@code s} does: 0 upsert (setting seq = s), 1 delete, 2 increment the counter. */
  static int op(long s) {
    return s % 5 == 3 ? 1 : s % 5 == 4 ? 2 : 0;
  }

  /** The child. args: warehouse, then each writer's first change number. */
  public static void main(String[] args) throws Exception {
    Path warehouse = Path.of(args[0]);
    long[] start = new long[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
      start[w] = Long.parseLong(args[1 + w]);
    }
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
        StandardCharsets.UTF_8);
    try (Database db = Floe.open(warehouse)) {
      db.sql("CREATE TABLE IF NOT EXISTS acc (k int PRIMARY KEY, w int NOT NULL, seq bigint NOT NULL, n bigint) "
          + "WITH (tail = true, 'floe.tail.seal-rows' = '300', 'floe.tail.seal-age-ms' = '50', "
          + "'floe.tail.segment-bytes' = '65536')").close();
      db.sql("INSERT INTO acc VALUES (" + COUNTER + ", -1, 0, 0) ON CONFLICT DO NOTHING").close();
      try (Result r = db.sql("SELECT k, seq, n, _offset FROM acc")) {
        for (Row row : r) {
          out.println("R " + row.getLong(0) + " " + row.getLong(1) + " " + row.getLong(2) + " " + row.getLong(3));
        }
      }
      out.println("READY");
      out.flush();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        threads.add(new Thread(() -> {
          try (Session s = db.connect()) {
            for (long seq = start[writer]; ; seq++) {
              int k = key(writer, seq);
              s.sql(switch (op(seq)) {
                case 0 -> "INSERT INTO acc VALUES (" + k + ", " + writer + ", " + seq + ", 0) ON CONFLICT (k) DO UPDATE "
                    + "SET seq = excluded.seq, n = acc.n + 1";
                case 1 -> "DELETE FROM acc WHERE k = " + k;
                default -> "UPDATE acc SET n = n + 1 WHERE k = " + COUNTER;
              }).close();
              synchronized (out) {
                out.println("A " + writer + " " + seq);
                out.flush();
              }
            }
          } catch (Throwable e) {
            synchronized (out) {
              out.println("CHILD-FAILED " + e.toString().replace('\n', ' '));
              out.flush();
            }
          }
        }));
      }
      threads.add(new Thread(() -> {
        try {
          Log log = db.openLog("acc");
          while (true) {
            if (ThreadLocalRandom.current().nextBoolean()) {
              log.seal(true);
            } else {
              log.advance(false);
            }
            Thread.sleep(ThreadLocalRandom.current().nextInt(20));
          }
        } catch (Throwable e) {
          synchronized (out) {
            out.println("CHILD-FAILED " + e.toString().replace('\n', ' '));
            out.flush();
          }
        }
      }));
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join();
      }
    }
  }

  @Test
  void acknowledgedKeyedChangesSurviveKills() throws Exception {
    int rounds = Integer.getInteger("floe.keyedCrash.rounds", 100);
    Random random = new Random(42);
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // the parent's model: each key's seq (absent: no row), the counter's lowest possible value
    Map<Integer, Long> keys = new HashMap<>();
    long counter = 0;
    long[] next = new long[WRITERS];
    long[] inFlight = new long[WRITERS];
    java.util.Arrays.fill(inFlight, -1);
    int kills = 0;
    long acknowledged = 0;
    for (int round = 0; round <= rounds; round++) {
      List<String> command = new ArrayList<>(List.of(javaBin, "--add-opens=java.base/java.nio=ALL-UNNAMED",
          "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + childTmp, "-cp",
          System.getProperty("java.class.path"), KeyedTailCrashTest.class.getName(), dir.toString()));
      for (int w = 0; w < WRITERS; w++) {
        command.add(Long.toString(next[w]));
      }
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      boolean last = round == rounds;
      boolean ready = false;
      boolean killed = false;
      long deadline = 0;
      List<String> report = new ArrayList<>();
      long[] lastAcked = new long[WRITERS];
      java.util.Arrays.fill(lastAcked, -1);
      try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = out.readLine()) != null) {
          if (!ready) {
            if (line.equals("READY")) {
              ready = true;
              counter = check(report, keys, counter, inFlight, round);
              if (last) {
                p.destroyForcibly();
                break;
              }
              deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50 + random.nextInt(700));
            } else if (line.startsWith("R ")) {
              report.add(line);
            }
            continue;
          }
          if (line.startsWith("CHILD-FAILED")) {
            p.destroyForcibly();
            throw new AssertionError("round " + round + ": the child failed: " + line);
          }
          if (line.startsWith("A ")) {
            String[] f = line.split(" ");
            int w = Integer.parseInt(f[1]);
            long s = Long.parseLong(f[2]);
            assertThat(s).as("writer %d acknowledged in order", w).isGreaterThan(lastAcked[w]);
            lastAcked[w] = s;
            acknowledged++;
            switch (op(s)) {
              case 0 -> keys.put(key(w, s), s);
              case 1 -> keys.remove(key(w, s));
              default -> counter++;
            }
          }
          if (ready && !killed && System.nanoTime() > deadline) {
            p.toHandle().destroyForcibly(); // SIGKILL with changes in flight; what it printed is still read
            killed = true;
            kills++;
          }
        }
      }
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(ready).as("child %d reached READY; its output: %s", round, report).isTrue();
      for (int w = 0; w < WRITERS; w++) {
        // the change each writer had in flight when its child was killed: the one after its last acknowledged
        inFlight[w] = last ? -1 : lastAcked[w] >= 0 ? lastAcked[w] + 1 : next[w];
        next[w] = Math.max(next[w], inFlight[w] + 1);
      }
    }
    assertThat(kills).isEqualTo(rounds);
    assertThat(acknowledged).as("changes were acknowledged").isGreaterThan(rounds);
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      Table t = catalog.loadTable(TableIdentifier.of("public", "acc"));
      try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          task.deletes().forEach(d -> assertThat(d.content()).isNotEqualTo(FileContent.EQUALITY_DELETES));
        }
      }
      java.util.Set<Integer> seen = new java.util.HashSet<>();
      try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
        for (Record r : it) {
          assertThat(seen.add((Integer) r.getField("k"))).as("key %s sealed once", r.getField("k")).isTrue();
        }
      }
    }
  }

  /**
   * Checks a child's report of the table against the model, allowing each writer's in-flight change, and
   * takes what it found as the model's state from here.
   *
   * @return the counter's value as found
   */
  private static long check(List<String> report, Map<Integer, Long> keys, long counter, long[] inFlight, int round) {
    Map<Integer, Long> found = new HashMap<>();
    java.util.Set<Long> offsets = new java.util.HashSet<>();
    long foundCounter = -1;
    for (String line : report) {
      String[] f = line.split(" ");
      int k = Integer.parseInt(f[1]);
      long seq = Long.parseLong(f[2]);
      assertThat(offsets.add(Long.parseLong(f[4]))).as("round %d: offset %s appears twice", round, f[4]).isTrue();
      if (k == COUNTER) {
        foundCounter = Long.parseLong(f[3]);
        continue;
      }
      assertThat(found.put(k, seq)).as("round %d: key %d appears twice", round, k).isNull();
    }
    assertThat(foundCounter).as("round %d: the counter row", round).isGreaterThanOrEqualTo(0);
    long inFlightIncrements = 0;
    java.util.Set<Integer> inFlightKeys = new java.util.HashSet<>();
    for (int w = 0; w < WRITERS; w++) {
      if (inFlight[w] >= 0) {
        if (op(inFlight[w]) == 2) {
          inFlightIncrements++;
        } else {
          inFlightKeys.add(key(w, inFlight[w]));
        }
      }
    }
    assertThat(foundCounter).as("round %d: every acknowledged increment, and at most those in flight", round)
        .isBetween(counter, counter + inFlightIncrements);
    java.util.Set<Integer> all = new java.util.HashSet<>(keys.keySet());
    all.addAll(found.keySet());
    for (int k : all) {
      Long expected = keys.get(k);
      Long actual = found.get(k);
      if (java.util.Objects.equals(expected, actual)) {
        continue;
      }
      // only the key a writer's in-flight change touched may differ, and only as that change left it
      int w = k / 1000;
      assertThat(inFlightKeys).as("round %d: key %d holds %s, acknowledged %s", round, k, actual, expected)
          .contains(k);
      long s = inFlight[w];
      assertThat(op(s) == 0 ? (Long) s : null).as("round %d: key %d as its in-flight change %d left it", round, k, s)
          .isEqualTo(actual);
    }
    keys.clear();
    keys.putAll(found);
    return foundCounter;
  }
}
