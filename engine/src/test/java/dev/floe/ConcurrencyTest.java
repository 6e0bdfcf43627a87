package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Readers run beside writers and each sees a whole snapshot: never a partial commit. */
class ConcurrencyTest {
  @TempDir
  Path dir;

  @Test
  void readersSeeWholeCommitsWhileWritersAppend() throws Exception {
    int batch = 100;
    int writes = 20;
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint NOT NULL, w int)").close();
      ExecutorService pool = Executors.newFixedThreadPool(5);
      AtomicBoolean writing = new AtomicBoolean(true);
      ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
      List<Future<?>> futures = new ArrayList<>();
      for (int writer = 0; writer < 2; writer++) {
        int w = writer;
        futures.add(pool.submit(() -> {
          for (int i = 0; i < writes / 2; i++) {
            db.sql("INSERT INTO t SELECT r, " + w + " FROM range(" + batch + ") x(r)").close();
          }
          return null;
        }));
      }
      for (int reader = 0; reader < 3; reader++) {
        futures.add(pool.submit(() -> {
          long last = 0;
          while (writing.get()) {
            try (Result r = db.sql("SELECT count(*), count(DISTINCT id), (SELECT count(*) FROM t) FROM t")) {
              Row row = r.toList().get(0);
              long n = row.getLong(0);
              if (n % batch != 0) {
                problems.add("saw a partial commit: " + n + " rows");
              }
              if (n != row.getLong(2)) {
                problems.add("two references to one table read different snapshots: " + row);
              }
              if (n < last) {
                problems.add("went back in time: " + last + " then " + n);
              }
              last = n;
            }
          }
          return null;
        }));
      }
      for (int k = 0; k < 2; k++) {
        futures.get(k).get(120, TimeUnit.SECONDS);
      }
      writing.set(false);
      for (Future<?> f : futures) {
        f.get(60, TimeUnit.SECONDS);
      }
      pool.shutdown();
      assertThat(problems).isEmpty();
      try (Result r = db.sql("SELECT count(*) FROM t")) {
        assertThat(r.toList().get(0).getLong(0)).isEqualTo((long) batch * writes);
      }
      // concurrent appends that meet at the commit lock share a snapshot (group commit)
      assertThat(db.table("t").snapshots()).isNotEmpty().hasSizeLessThanOrEqualTo(writes);
    }
  }
}
