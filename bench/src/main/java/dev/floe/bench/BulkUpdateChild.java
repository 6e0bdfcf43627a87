package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Child process for MutationBench's small-heap run: open the warehouse, run one statement, print
 * {@code RESULT <rows> <statement ms> <peak heap used bytes> <peak RSS kB>}, exit.
 */
public final class BulkUpdateChild {
  public static void main(String[] args) throws Exception {
    Path warehouse = Path.of(args[0]);
    String sql = args[1];
    long rows;
    long ms;
    try (Database db = Floe.open(warehouse)) {
      long t0 = System.nanoTime();
      try (Result r = db.sql(sql)) {
        rows = r.rowCount();
      }
      ms = (System.nanoTime() - t0) / 1_000_000;
    }
    long peakHeap = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP && pool.getPeakUsage() != null) {
        peakHeap += pool.getPeakUsage().getUsed();
      }
    }
    long rssKb = -1;
    for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (l.startsWith("VmHWM:")) {
        rssKb = Long.parseLong(l.replaceAll("[^0-9]", ""));
      }
    }
    System.out.println("RESULT " + rows + " " + ms + " " + peakHeap + " " + rssKb);
  }
}
