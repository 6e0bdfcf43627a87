package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lock order of docs/ARCHITECTURE.md ("Concurrency"): a tail's seal lock before the table's commit
 * lock. ALTER TABLE on a table with a tail seals it; the tail's seals commit. When ALTER took the commit
 * lock first, the two deadlocked as soon as an ALTER came while a seal was writing its files.
 */
class TailLockOrderTest {
  @TempDir
  Path dir;

  @Test
  void alterTableBesideSealsNeverDeadlocks() throws Exception {
    Database db = Floe.open(dir);
    boolean deadlocked = false;
    try {
      Log log = db.newLog("t", "v int", null);
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong appended = new AtomicLong();
      AtomicLong seals = new AtomicLong();
      AtomicLong alters = new AtomicLong();
      ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
      List<Thread> threads = new ArrayList<>();
      threads.add(new Thread(() -> {
        List<Object[]> rows = Collections.nCopies(20, new Object[] {1});
        while (!stop.get()) {
          try {
            log.extend(rows);
            appended.addAndGet(rows.size());
            if (log.seal(true) > 0) {
              seals.incrementAndGet();
            }
          } catch (FloeException e) {
            // the ALTER closed the log under this append or seal (40001, 55000): the next use opens it again
            if (!SqlState.SERIALIZATION_FAILURE.equals(e.sqlState())
                && !SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE.equals(e.sqlState())) {
              errors.add(e);
            }
          } catch (Throwable e) {
            errors.add(e);
          }
        }
      }, "sealer"));
      threads.add(new Thread(() -> {
        try {
          for (int i = 0; !stop.get(); i++) {
            db.sql("ALTER TABLE t SET ('floe.tail.grace-ms' = '" + (600_000 + i) + "')").close();
            alters.incrementAndGet();
            Thread.sleep(ThreadLocalRandom.current().nextInt(10)); // rows gather for the sealer to seal
          }
        } catch (Throwable e) {
          errors.add(e);
        }
      }, "alter"));
      threads.forEach(t -> {
        t.setDaemon(true); // a deadlocked thread must not keep the test's JVM alive
        t.start();
      });
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      long deadline = System.nanoTime() + 6_000_000_000L;
      while (System.nanoTime() < deadline && errors.isEmpty()) {
        long[] stuck = mx.findMonitorDeadlockedThreads();
        if (stuck != null) {
          deadlocked = true;
          StringBuilder report = new StringBuilder();
          for (ThreadInfo info : mx.getThreadInfo(stuck, true, true)) {
            report.append(info);
          }
          fail("ALTER TABLE and a seal deadlocked after " + alters.get() + " alters and " + seals.get()
              + " seals:\n" + report);
        }
        Thread.sleep(20);
      }
      stop.set(true);
      for (Thread t : threads) {
        t.join(60_000);
        assertThat(t.isAlive()).as(t.getName() + " finished").isFalse();
      }
      assertThat(errors).isEmpty();
      assertThat(alters.get()).as("alters").isGreaterThan(5);
      assertThat(seals.get()).as("seals of the sealer's own").isPositive();
      log.seal(true);
      try (Result r = db.sql("SELECT count(*) FROM t")) {
        assertThat(r.toList().get(0).getLong(0)).as("every acknowledged row, once").isEqualTo(appended.get());
      }
    } finally {
      if (!deadlocked) {
        db.close(); // closing would wait for the deadlocked threads' locks
      }
    }
  }
}
