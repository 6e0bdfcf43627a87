package dev.floe;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeyedTailScratchTest {
  @TempDir
  Path dir;

  @Test
  void timing() {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      db.sql("CREATE TABLE acc (id bigint PRIMARY KEY, bal bigint NOT NULL) WITH (tail = true)").close();
      db.sql("INSERT INTO acc SELECT i, 0 FROM range(1, 200001) t(i)").close();
      db.openLog("acc").seal(true);
      java.util.Random r = new java.util.Random(1);
      for (int round = 0; round < 3; round++) {
        long t0 = System.nanoTime();
        int n = 300;
        for (int i = 0; i < n; i++) {
          s.sql("UPDATE acc SET bal = bal + 1 WHERE id = " + (1 + r.nextInt(200000))).close();
        }
        long t1 = System.nanoTime();
        for (int i = 0; i < n; i++) {
          s.sql("SELECT bal FROM acc WHERE id = " + (1 + r.nextInt(200000))).close();
        }
        long t2 = System.nanoTime();
        System.out.printf("round %d: update %.2f ms, select %.2f ms%n", round, (t1 - t0) / 1e6 / n, (t2 - t1) / 1e6 / n);
      }
    }
  }
}
