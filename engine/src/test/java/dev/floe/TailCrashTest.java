package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.IcebergClients;
import dev.floe.testing.S3Server;
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
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child JVM appends to a log from several threads (in one variant while another thread seals, evicts,
 * advances and ingests Arrow batches in a loop; in a third, the log also publishes to a real S3 server
 * that the test starts) and is killed with SIGKILL at a random moment, again and again. Each child
 * first reads the log as the last one left it and reports what it found; the parent checks it against
 * the appends the previous children acknowledged: every acknowledged row is there exactly once with the
 * offset its acknowledgement named, no row appears twice, no offset is used twice, and of the rows never
 * acknowledged at most the one each writer had in flight appears. At the end Iceberg's generic reader
 * reads the sealed rows of the table (and, in the third variant, the published table from S3).
 */
class TailCrashTest {
  private static final int WRITERS = 4;
  /** The writer number of rows the sealing variant ingests from Arrow batches. */
  private static final int INGEST_WRITER = WRITERS;
  private static final String TABLE = "ev";

  @TempDir
  Path dir;

  /** Where the killed children unpack DuckDB's native library (see CrashTest). */
  @TempDir
  Path childTmp;

  private static long hash(long writer, long seq, long offset) {
    long h = writer * 0x9E3779B97F4A7C15L ^ seq * 0xC2B2AE3D27D4EB4FL ^ offset * 0x165667B19E3779F9L;
    return h ^ (h >>> 29);
  }

  /**
   * The child. args: warehouse, mode (append | seal), then for each writer the first sequence number it
   * may use and the last one acknowledged before (-1: none).
   */
  public static void main(String[] args) throws Exception {
    Path warehouse = Path.of(args[0]);
    boolean publishing = args[1].equals("publish");
    boolean sealing = args[1].equals("seal") || publishing;
    long[] start = new long[WRITERS];
    long[] acked = new long[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
      start[w] = Long.parseLong(args[2 + 2 * w]);
      acked[w] = Long.parseLong(args[3 + 2 * w]);
    }
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
        StandardCharsets.UTF_8);
    try (Database db = Floe.open(warehouse)) {
      Log log;
      try {
        log = db.openLog(TABLE);
      } catch (FloeException e) {
        Log.Config config = new Log.Config(2_000, 50, 64 << 10);
        if (publishing) {
          config = config.withPublishTo(PUBLISHED, Map.of("s3.endpoint", System.getProperty("floe.test.s3"),
              "s3.path-style-access", "true"));
        }
        log = db.newLog(TABLE, "w int NOT NULL, s bigint NOT NULL, payload text", "w, s", config);
      }
      report(db, acked, out);
      out.println("READY");
      out.flush();
      Log l = log;
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        threads.add(new Thread(() -> {
          try {
            for (long s = start[writer]; ; s++) {
              long o = l.append(writer, s, "payload " + writer + "/" + s + " " + "x".repeat((int) (s % 40)));
              synchronized (out) {
                out.println("A " + writer + " " + s + " " + o);
                out.flush();
              }
            }
          } catch (Throwable e) {
            fail(out, e);
          }
        }));
      }
      if (sealing) {
        threads.add(new Thread(() -> {
          try {
            while (true) {
              switch (ThreadLocalRandom.current().nextInt(publishing ? 6 : 5)) {
                case 0 -> l.seal(true);
                case 5 -> l.publish();
                case 1 -> l.advance(false);
                case 2 -> l.evict();
                case 3 -> {
                  // a bulk load straight to Parquet: its offsets must never be handed out again
                  long base = ThreadLocalRandom.current().nextLong(1L << 40);
                  try (Result r = db.sql("SELECT " + INGEST_WRITER + " AS w, " + base + " + range AS s, 'payload "
                      + INGEST_WRITER + "/' || (" + base + " + range) || ' ingested' AS payload FROM range(200)");
                      org.apache.arrow.vector.ipc.ArrowReader batches = r.arrow()) {
                    l.ingest(batches);
                  }
                }
                default -> l.advance(true);
              }
              Thread.sleep(ThreadLocalRandom.current().nextInt(30));
            }
          } catch (Throwable e) {
            fail(out, e);
          }
        }));
      }
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join();
      }
    }
  }

  /** How a child reports its own failure (not a line a library logs, such as "ERROR ..."). */
  private static final String FAILED = "CHILD-FAILED ";

  private static void fail(PrintStream out, Throwable e) {
    synchronized (out) {
      // the failure and where it came from, on one line
      StringBuilder where = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
        where.append(where.length() > 0 ? " | caused by " : "").append(t);
        StackTraceElement[] frames = t.getStackTrace();
        for (int i = 0; i < Math.min(frames.length, 12); i++) {
          where.append(" at ").append(frames[i]);
        }
      }
      out.println(FAILED + where.toString().replace('\n', ' '));
      out.flush();
    }
  }

  /**
   * What the log holds, per writer: the count and hash sum of its rows up to its last acknowledged
   * sequence number, and each row after it; and whether any offset or (writer, seq) appears twice.
   */
  private static void report(Database db, long[] acked, PrintStream out) {
    long[] count = new long[WRITERS];
    long[] sum = new long[WRITERS];
    try (Result r = db.sql("SELECT w, s, _offset, payload FROM " + TABLE)) {
      for (Row row : r) {
        int w = (int) row.getLong(0);
        long s = row.getLong(1);
        long o = row.getLong(2);
        if (!row.getString(3).startsWith("payload " + w + "/" + s + " ")) {
          out.println("BAD payload of " + w + "/" + s);
        }
        if (w == INGEST_WRITER) {
          continue; // ingested rows: checked only by the offsets being unique
        }
        if (s <= acked[w]) {
          count[w]++;
          sum[w] += hash(w, s, o);
        } else {
          out.println("U " + w + " " + s + " " + o);
        }
      }
    }
    try (Result r = db.sql("SELECT (SELECT count(*) FROM (SELECT _offset FROM " + TABLE + " GROUP BY _offset "
        + "HAVING count(*) > 1)), (SELECT count(*) FROM (SELECT w, s FROM " + TABLE + " GROUP BY w, s "
        + "HAVING count(*) > 1))")) {
      Row row = r.iterator().next();
      out.println("DUPS " + row.getLong(0) + " " + row.getLong(1));
    }
    for (int w = 0; w < WRITERS; w++) {
      out.println("W " + w + " " + count[w] + " " + sum[w]);
    }
  }

  /** The parent's record of what was acknowledged. */
  private static final class Acked {
    final long[] last = new long[WRITERS];
    final long[] count = new long[WRITERS];
    final long[] sum = new long[WRITERS];
    /** The first sequence number the next child's writers use: past anything a killed one may have written. */
    final long[] next = new long[WRITERS];
    /** The row each writer may have had in flight when its child was killed (-1: none). */
    final long[] inFlight = new long[WRITERS];
    final Map<Long, String> offsets = new HashMap<>();

    Acked() {
      java.util.Arrays.fill(last, -1);
      java.util.Arrays.fill(inFlight, -1);
    }
  }

  private int killedRounds(String mode, int rounds, long seed) throws Exception {
    Random random = new Random(seed);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Acked acked = new Acked();
    int kills = 0;
    for (int round = 0; round <= rounds; round++) {
      List<String> command = new ArrayList<>(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED",
          "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + childTmp));
      if (s3 != null) {
        // credentials reach the child as the AWS default chain's system properties, nothing else
        command.addAll(List.of("-Dfloe.test.s3=" + s3.endpoint(), "-Daws.accessKeyId=" + S3Server.ACCESS_KEY,
            "-Daws.secretAccessKey=" + S3Server.SECRET_KEY));
      }
      command.addAll(List.of("-cp", System.getProperty("java.class.path"), TailCrashTest.class.getName(),
          dir.toString(), mode));
      for (int w = 0; w < WRITERS; w++) {
        command.add(Long.toString(acked.next[w]));
        command.add(Long.toString(acked.last[w]));
      }
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      long[] started = acked.next.clone();
      long deadline = 0;
      boolean last = round == rounds;
      boolean killed = false;
      boolean ready = false;
      Map<Integer, List<long[]>> unacked = new HashMap<>();
      List<String> report = new ArrayList<>();
      try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = out.readLine()) != null) {
          if (!ready) {
            if (line.equals("READY")) {
              ready = true;
              check(report, acked, round, mode);
              if (last) {
                p.destroyForcibly();
                break;
              }
              // a publishing child first starts its S3 client (a second or so): it lives longer
              deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(mode.equals("publish")
                  ? 300 + random.nextInt(2500) : 50 + random.nextInt(700));
            } else {
              report.add(line);
            }
            continue;
          }
          if (line.startsWith(FAILED)) {
            p.destroyForcibly();
            throw new AssertionError(mode + " round " + round + ": the child failed: " + line);
          }
          if (line.startsWith("A ")) {
            String[] f = line.split(" ");
            int w = Integer.parseInt(f[1]);
            long s = Long.parseLong(f[2]);
            long o = Long.parseLong(f[3]);
            String previous = acked.offsets.put(o, w + "/" + s);
            assertThat(previous).as("offset %d acknowledged twice (%s/%s and %s)", o, w, s, previous).isNull();
            assertThat(s).as("writer %d acknowledged in order", w).isGreaterThan(acked.last[w]);
            acked.last[w] = s;
            acked.count[w]++;
            acked.sum[w] += hash(w, s, o);
          }
          if (System.nanoTime() > deadline && !killed) {
            // SIGKILL, with appends in flight; what the child printed before it died is still read
            // (Process.destroyForcibly would close the pipe too)
            p.toHandle().destroyForcibly();
            killed = true;
            kills++;
          }
        }
      }
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(ready).as("child %d reached READY; its output: %s", round, report).isTrue();
      for (int w = 0; w < WRITERS; w++) {
        // the row the killed child's writer had in flight, if any, was the one after its last acknowledged
        acked.inFlight[w] = Math.max(acked.last[w] + 1, started[w]);
        acked.next[w] = acked.inFlight[w] + 1;
      }
    }
    if (mode.equals("publish")) {
      // the published table as any engine reads it from S3: each offset once, each row as acknowledged
      java.util.Set<Long> seen = new java.util.HashSet<>();
      for (Record r : s3.readPublished(PUBLISHED)) {
        long o = (Long) r.getField("_offset");
        assertThat(seen.add(o)).as("offset %d published once", o).isTrue();
        String who = acked.offsets.get(o);
        if (who != null) {
          assertThat(r.getField("w") + "/" + r.getField("s")).isEqualTo(who);
        }
      }
      assertThat(seen).as("the publishing variant published rows").isNotEmpty();
    }
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      Table t = catalog.loadTable(TableIdentifier.of("public", TABLE));
      long sealed = 0;
      long ingested = 0;
      java.util.Set<Long> seen = new java.util.HashSet<>();
      try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
        for (Record r : it) {
          long o = (Long) r.getField("_offset");
          assertThat(seen.add(o)).as("offset %d sealed once", o).isTrue();
          if ((Integer) r.getField("w") == INGEST_WRITER) {
            ingested++;
          }
          String who = acked.offsets.get(o);
          if (who != null) {
            assertThat(r.getField("w") + "/" + r.getField("s")).isEqualTo(who);
          }
          sealed++;
        }
      }
      if (mode.equals("seal")) { // (a publishing log's staging table lets published rows go)
        assertThat(sealed).as("the sealing variant sealed rows").isPositive();
        assertThat(ingested).as("the sealing variant ingested rows").isPositive();
      }
    }
    return kills;
  }

  /** Checks a child's report of the log against what earlier children acknowledged. */
  private static void check(List<String> report, Acked acked, int round, String mode) {
    String context = mode + " round " + round;
    long[] inFlight = new long[WRITERS];
    java.util.Arrays.fill(inFlight, -1);
    List<String[]> unacked = new ArrayList<>();
    for (String line : report) {
      String[] f = line.split(" ");
      switch (f[0]) {
        case "BAD" -> throw new AssertionError(context + ": " + line);
        case "DUPS" -> {
          assertThat(Long.parseLong(f[1])).as(context + ": offsets used twice").isZero();
          assertThat(Long.parseLong(f[2])).as(context + ": rows appearing twice").isZero();
        }
        case "W" -> {
          int w = Integer.parseInt(f[1]);
          assertThat(Long.parseLong(f[2])).as(context + ": acknowledged rows of writer " + w).isEqualTo(acked.count[w]);
          assertThat(Long.parseLong(f[3])).as(context + ": acknowledged rows of writer " + w + " and their offsets")
              .isEqualTo(acked.sum[w]);
        }
        case "U" -> unacked.add(f);
        default -> {
          // the child's log output
        }
      }
    }
    for (String[] f : unacked) {
      // a row never acknowledged: at most one per writer, the one in flight at the kill
      int w = Integer.parseInt(f[1]);
      long s = Long.parseLong(f[2]);
      long o = Long.parseLong(f[3]);
      assertThat(inFlight[w]).as(context + ": unacknowledged rows of writer " + w).isEqualTo(-1);
      assertThat(s).as(context + ": writer %d's unacknowledged row", w).isEqualTo(acked.inFlight[w]);
      assertThat(acked.offsets).as(context + ": offset of an unacknowledged row").doesNotContainKey(o);
      inFlight[w] = s;
      // it is durable now: from here on it counts as acknowledged
      acked.offsets.put(o, w + "/" + s);
      acked.last[w] = s;
      acked.count[w]++;
      acked.sum[w] += hash(w, s, o);
    }
  }

  @Test
  void appendsSurviveKills() throws Exception {
    int kills = killedRounds("append", ROUNDS, 7);
    assertThat(kills).isEqualTo(ROUNDS);
  }

  @Test
  void appendsSurviveKillsWhileTiersMove() throws Exception {
    int kills = killedRounds("seal", ROUNDS, 11);
    assertThat(kills).isEqualTo(ROUNDS);
  }

  @Test
  void appendsSurviveKillsWhilePublishingToS3(@org.junit.jupiter.api.io.TempDir Path s3dir) throws Exception {
    S3Server.useCredentials();
    try (S3Server server = S3Server.start(s3dir)) {
      s3 = server;
      int kills = killedRounds("publish", PUBLISH_ROUNDS, 13);
      assertThat(kills).isEqualTo(PUBLISH_ROUNDS);
    } finally {
      s3 = null;
    }
  }

  /** The S3 server of the publishing variant. */
  private S3Server s3;
  private static final String PUBLISHED = "s3://" + S3Server.BUCKET + "/crash/ev";
  private static final int PUBLISH_ROUNDS = Integer.getInteger("floe.tailCrashPublishRounds", 40);

  /** Kills per variant: two variants make the 200 the durability contract is checked with. */
  private static final int ROUNDS = Integer.getInteger("floe.tailCrashRounds", 100);
}
