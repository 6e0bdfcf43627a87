package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 17's report, with real processes: a child appends twelve acknowledged 300-row batches to a log
 * and is killed with SIGKILL; a byte at 1000 of the newest segment (inside an acknowledged record) is
 * flipped. The next process, writing or reading, gets XX001 naming the segment and byte instead of the
 * rows before the damage, and the file is left as it was. A repair with the explicit flag then keeps
 * the rows before the damage, and the next append gets an offset past every acknowledged one.
 */
class TailDamageTest {
  private static final int BATCHES = 12;
  private static final int ROWS = 300;

  @TempDir
  Path dir;

  /** Where the children unpack DuckDB's native library (see CrashTest). */
  @TempDir
  Path childTmp;

  /** The child. args: warehouse, then write | read | read-only | repair | append. */
  public static void main(String[] args) throws Exception {
    Path warehouse = Path.of(args[0]);
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
        StandardCharsets.UTF_8);
    try (Database db = args[1].equals("read-only") ? Floe.openReadOnly(warehouse) : Floe.open(warehouse)) {
      switch (args[1]) {
        case "write" -> {
          Log log = db.newLog("ev", "k bigint NOT NULL, v text", "k", new Log.Config(1_000_000, 600_000, 64 << 10));
          for (int b = 0; b < BATCHES; b++) {
            List<Object[]> rows = new ArrayList<>();
            for (int i = 0; i < ROWS; i++) {
              rows.add(new Object[] {(long) b * ROWS + i, "row " + b + "/" + i});
            }
            out.println("A " + log.extend(rows));
          }
          out.println("DONE");
          Thread.sleep(600_000); // killed here: nothing sealed, the log closed by nobody
        }
        case "read", "read-only" -> {
          try (Result r = db.sql("SELECT count(*), max(_offset), count(DISTINCT _offset) FROM ev")) {
            Row row = r.iterator().next();
            out.println("ROWS " + row.getLong(0) + " " + row.getLong(1) + " " + row.getLong(2));
          } catch (FloeException e) {
            out.println("ERROR " + e.sqlState() + " " + e.getMessage());
          }
        }
        case "repair" -> {
          LogRepair r = db.repairLog("ev", true);
          out.println("REPAIRED " + r.repaired() + " " + r.firstLostOffset() + " " + r.nextOffset() + " "
              + r.keptAside().size());
        }
        case "append" -> out.println("OFFSET " + db.openLog("ev").append(1_000_000L, "after the repair"));
        default -> throw new IllegalArgumentException(args[1]);
      }
    }
  }

  private List<String> child(String mode, boolean killAfterDone) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx256m",
        "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + childTmp, "-cp", System.getProperty("java.class.path"),
        TailDamageTest.class.getName(), dir.toString(), mode).redirectErrorStream(true).start();
    List<String> lines = new ArrayList<>();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        lines.add(line);
        if (killAfterDone && line.equals("DONE")) {
          p.toHandle().destroyForcibly(); // SIGKILL
        }
      }
    }
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return lines;
  }

  private static String line(List<String> lines, String prefix) {
    return lines.stream().filter(l -> l.startsWith(prefix)).findFirst()
        .orElseThrow(() -> new AssertionError("no " + prefix + " line in " + lines));
  }

  @Test
  void aFlippedByteInAnAcknowledgedRecordIsRefusedUntilRepaired() throws Exception {
    List<String> written = child("write", true);
    List<Long> acked = written.stream().filter(l -> l.startsWith("A ")).map(l -> Long.parseLong(l.substring(2)))
        .toList();
    assertThat(acked).hasSize(BATCHES);
    long ackedEnd = acked.get(BATCHES - 1) + ROWS;

    Path logDir;
    try (var tails = Files.list(dir.resolve(".floe").resolve("tail"))) {
      logDir = tails.findFirst().orElseThrow();
    }
    List<Path> segments;
    try (var files = Files.list(logDir)) {
      segments = files.filter(f -> f.toString().endsWith(".wal")).sorted().toList();
    }
    assertThat(segments).as("64 KB segments of 300-row records").hasSizeGreaterThan(1);
    Path newest = segments.get(segments.size() - 1);
    byte[] bytes = Files.readAllBytes(newest);
    long firstOfNewest = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong(8);
    assertThat(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(0)).as("a record longer than 1000 bytes")
        .isGreaterThan(1000);
    assertThat(acked).contains(firstOfNewest);
    bytes[1000] ^= 0x40;
    Files.write(newest, bytes);

    String refusal = "ERROR XX001 log segment " + newest + " is damaged at byte 0: checksum mismatch";
    assertThat(line(child("read", false), "ERROR")).startsWith(refusal);
    assertThat(line(child("read-only", false), "ERROR")).startsWith(refusal);
    assertThat(Files.readAllBytes(newest)).as("the damaged segment, left as it was").isEqualTo(bytes);

    String[] repaired = line(child("repair", false), "REPAIRED").split(" ");
    assertThat(repaired[1]).isEqualTo("true");
    assertThat(Long.parseLong(repaired[2])).isEqualTo(firstOfNewest);
    long next = Long.parseLong(repaired[3]);
    assertThat(next).isGreaterThanOrEqualTo(ackedEnd);
    try (var files = Files.list(logDir)) {
      assertThat(files.filter(f -> f.getFileName().toString().startsWith(newest.getFileName() + ".damaged-")))
          .singleElement().satisfies(f -> assertThat(Files.readAllBytes(f)).isEqualTo(bytes));
    }

    // the rows before the damage, each once, and an offset past every acknowledged one
    assertThat(line(child("read", false), "ROWS"))
        .isEqualTo("ROWS " + firstOfNewest + " " + (firstOfNewest - 1) + " " + firstOfNewest);
    assertThat(line(child("append", false), "OFFSET")).isEqualTo("OFFSET " + next);
    assertThat(line(child("read", false), "ROWS"))
        .isEqualTo("ROWS " + (firstOfNewest + 1) + " " + next + " " + (firstOfNewest + 1));
  }
}
