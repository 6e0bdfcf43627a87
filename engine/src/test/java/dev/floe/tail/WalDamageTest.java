package dev.floe.tail;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.floe.FloeException;
import dev.floe.LogRepair;
import dev.floe.SqlState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damage to a log's files, byte by byte. A writer appends and is "killed": its files are copied as they
 * are while it runs (the page cache a killed process leaves). Then each byte of a segment in turn is
 * flipped, the file is cut there, or zeros are written from there, and the log is opened, followed
 * read-only, and repaired. Every time: damage to what the writer acknowledged fails with XX001 naming
 * the file and the byte where the damaged record starts, and changes no file; damage past it (the
 * zeroed space ahead of the writes, or a write cut short) is dropped, and every whole record before it
 * is read; and after a repair the records before the damage are there and the next offset is past every
 * offset the writer acknowledged.
 */
class WalDamageTest {
  /** Segments roll at this size: two segments of about ten records. */
  private static final long SEGMENT = 400;

  @TempDir
  Path tmp;

  /** Where logs are written: memory, when the machine has it (the test opens thousands of logs, each fsyncs). */
  private Path root;

  @BeforeEach
  void chooseRoot() throws IOException {
    Path shm = Path.of("/dev/shm");
    root = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "floe-wal-damage") : tmp;
  }

  @AfterEach
  void removeRoot() {
    if (!root.equals(tmp)) {
      dev.floe.write.Scratch.deleteTree(root);
    }
  }

  /** A record in a segment: where it starts and ends, and its offsets. */
  record Rec(String segment, int start, int end, long first, int count) {}

  /** A log's files (by name), its whole records in order, and the offset after the last one acknowledged. */
  record Image(Map<String, byte[]> files, List<Rec> records, long ackedEnd) {
    String last() {
      return segmentNames().get(segmentNames().size() - 1);
    }

    List<String> segmentNames() {
      return files.keySet().stream().filter(n -> n.endsWith(".wal")).sorted().toList();
    }

    /** Where the whole records of a segment end. */
    int end(String segment) {
      return records.stream().filter(r -> r.segment().equals(segment)).mapToInt(Rec::end).max().orElse(0);
    }

    /** The start of the record holding byte {@code at} of a segment (or starting there: a cut between records). */
    int recordAt(String segment, int at) {
      int start = 0;
      for (Rec r : records) {
        if (r.segment().equals(segment) && r.start() <= at) {
          start = r.start();
        }
      }
      return start;
    }
  }

  private int logs;

  /** Appends 18 records of 1-9 rows; returns the files as they are before a clean close (or after one). */
  private Image write(boolean closeFirst) throws IOException {
    Path source = root.resolve("source" + logs++);
    Wal wal = Wal.open(source, SEGMENT, 0, r -> { }, d -> { });
    Random random = new Random(42);
    long end = 0;
    for (int i = 0; i < 18; i++) {
      int count = 1 + random.nextInt(9);
      byte[] payload = new byte[count * (2 + random.nextInt(6))];
      random.nextBytes(payload);
      end = wal.append(payload, payload.length, count, 0, null) + count;
    }
    Map<String, byte[]> files = closeFirst ? null : read(source);
    wal.close();
    if (closeFirst) {
      files = read(source);
    }
    return new Image(files, records(files), end);
  }

  private static Map<String, byte[]> read(Path dir) throws IOException {
    Map<String, byte[]> files = new TreeMap<>();
    try (var list = Files.list(dir)) {
      for (Path p : list.toList()) {
        files.put(p.getFileName().toString(), Files.readAllBytes(p));
      }
    }
    return files;
  }

  private static List<Rec> records(Map<String, byte[]> files) {
    List<Rec> records = new ArrayList<>();
    CRC32C crc = new CRC32C();
    for (String name : files.keySet().stream().filter(n -> n.endsWith(".wal")).sorted().toList()) {
      ByteBuffer all = ByteBuffer.wrap(files.get(name)).order(ByteOrder.LITTLE_ENDIAN);
      int pos = 0;
      while (pos < all.limit() && Frames.problem(all, pos, crc) == null) {
        int end = pos + Frames.size(all, pos);
        records.add(new Rec(name, pos, end, all.getLong(pos + 8), all.getInt(pos + 16)));
        pos = end;
      }
    }
    return records;
  }

  /** The log directory a trial opens, with the image's files, {@code name} holding {@code bytes}. */
  private Path restore(Image image, String name, byte[] bytes) throws IOException {
    Path dir = root.resolve("trial");
    if (Files.exists(dir)) {
      dev.floe.write.Scratch.deleteTree(dir);
    }
    Files.createDirectories(dir);
    for (Map.Entry<String, byte[]> f : image.files().entrySet()) {
      Files.write(dir.resolve(f.getKey()), f.getKey().equals(name) ? bytes : f.getValue());
    }
    return dir;
  }

  private static final class Opened {
    final List<long[]> replayed = new ArrayList<>();
    Wal wal;
  }

  private static Opened open(Path dir) {
    Opened o = new Opened();
    o.wal = Wal.open(dir, SEGMENT, 0, r -> o.replayed.add(new long[] {r.first(), r.count()}), d -> { });
    return o;
  }

  private static List<long[]> offsets(List<Rec> records) {
    return records.stream().map(r -> new long[] {r.first(), r.count()}).toList();
  }

  /**
   * Opens the log with {@code name} replaced by {@code faulted} and checks the outcome: damage before
   * {@code acked} (the bytes of that segment the writer acknowledged) is refused and, after a repair,
   * gives the records before it and offsets past {@code image.ackedEnd()}; anything else is dropped.
   */
  private void check(Image image, String name, byte[] faulted, long acked, String what) throws IOException {
    byte[] original = image.files().get(name);
    int changed = firstDifference(original, faulted);
    Path dir = restore(image, name, faulted);
    Path file = dir.resolve(name);
    boolean damage = changed >= 0 && changed < acked;
    List<Wal.Record> followed = null;
    FloeException followError = null;
    try {
      followed = new WalTailer(dir).poll(() -> 0);
    } catch (FloeException e) {
      followError = e;
    }
    if (!damage) {
      assertThat(followError).as(what + ": followed read-only").isNull();
      assertThat(followed).as(what + ": followed read-only").extracting(Wal.Record::first)
          .containsExactlyElementsOf(image.records().stream().map(Rec::first).toList());
      Opened o = open(dir);
      try (Wal wal = o.wal) {
        assertThat(o.replayed).as(what).containsExactlyElementsOf(offsets(image.records()));
        assertThat(wal.nextOffset()).as(what).isEqualTo(image.ackedEnd());
      }
      return;
    }
    int at = image.recordAt(name, changed);
    assertThat(followError).as(what + ": followed read-only").isNotNull();
    assertThat(followError.sqlState()).isEqualTo(SqlState.DATA_CORRUPTED);
    assertThat(followError.getMessage()).as(what).contains(file + " is damaged at byte " + at + ":");
    try {
      open(dir).wal.close();
      fail(what + ": opened a damaged log");
    } catch (FloeException e) {
      assertThat(e.sqlState()).as(what + ": " + e.getMessage()).isEqualTo(SqlState.DATA_CORRUPTED);
      assertThat(e.getMessage()).as(what).contains(file + " is damaged at byte " + at + ":");
    }
    assertThat(read(dir)).as(what + ": files left as they were").containsOnlyKeys(image.files().keySet());
    assertThat(Files.readAllBytes(file)).as(what + ": the damaged file").isEqualTo(faulted);

    LogRepair report = WalRepair.repair("t", dir, 0, Instant.ofEpochMilli(0));
    assertThat(report.repaired()).isTrue();
    assertThat(report.damage().orElseThrow().file()).isEqualTo(file);
    assertThat(report.damage().orElseThrow().position()).isEqualTo(at);
    assertThat(report.nextOffset()).as(what).isGreaterThanOrEqualTo(image.ackedEnd());
    assertThat(Files.readAllBytes(dir.resolve(name + ".damaged-19700101T000000.000Z"))).isEqualTo(faulted);
    List<Rec> kept = image.records().stream()
        .filter(r -> r.segment().compareTo(name) < 0 || r.segment().equals(name) && r.start() < at).toList();
    Opened o = open(dir);
    try (Wal wal = o.wal) {
      assertThat(o.replayed).as(what + ": after the repair").containsExactlyElementsOf(offsets(kept));
      assertThat(wal.nextOffset()).isEqualTo(report.nextOffset());
      assertThat(wal.append(new byte[3], 3, 1, 0, null)).as(what + ": the next offset after the repair")
          .isGreaterThanOrEqualTo(image.ackedEnd());
    }
  }

  private static int firstDifference(byte[] a, byte[] b) {
    int n = Math.min(a.length, b.length);
    for (int i = 0; i < n; i++) {
      if (a[i] != b[i]) {
        return i;
      }
    }
    return a.length == b.length ? -1 : n;
  }

  private static byte[] flipped(byte[] bytes, int at) {
    byte[] b = bytes.clone();
    b[at] ^= 0x40;
    return b;
  }

  private static byte[] zeroed(byte[] bytes, int from, int to) {
    byte[] b = bytes.clone();
    Arrays.fill(b, from, to, (byte) 0);
    return b;
  }

  /** The last segment after a kill: every byte of its records, and a sample of the zeroed space after them. */
  @Test
  void damageToTheLastSegmentOfAKilledWriter() throws IOException {
    Image image = write(false);
    String last = image.last();
    byte[] bytes = image.files().get(last);
    int end = image.end(last);
    assertThat(image.segmentNames()).hasSizeGreaterThan(1);
    assertThat(bytes.length).as("the zeroed space ahead of the writes").isGreaterThan(end + 4096);
    List<Integer> positions = new ArrayList<>();
    for (int i = 0; i < end + 2 * Wal.HEADER; i++) {
      positions.add(i);
    }
    for (int i = end + 2 * Wal.HEADER; i < bytes.length; i += 4093) {
      positions.add(i);
    }
    positions.add(bytes.length - 1);
    for (int at : positions) {
      check(image, last, flipped(bytes, at), end, "byte " + at + " flipped");
      check(image, last, Arrays.copyOf(bytes, at), end, "cut at byte " + at);
      if (at < end) {
        check(image, last, zeroed(bytes, at, Math.min(at + 5, end)), end, "bytes " + at + "+5 zeroed");
        check(image, last, zeroed(bytes, at, end), end, "zeros from byte " + at);
      }
    }
  }

  /** An earlier segment: the writer went on after it, so any damage in it was acknowledged. */
  @Test
  void damageToAnEarlierSegment() throws IOException {
    Image image = write(false);
    String first = image.segmentNames().get(0);
    byte[] bytes = image.files().get(first);
    for (int at = 0; at < bytes.length; at++) {
      check(image, first, flipped(bytes, at), Long.MAX_VALUE, first + ": byte " + at + " flipped");
      check(image, first, Arrays.copyOf(bytes, at), Long.MAX_VALUE, first + ": cut at byte " + at);
    }
  }

  /** After a clean close there is no torn tail: any damage to the last segment is damage. */
  @Test
  void damageAfterACleanClose() throws IOException {
    Image image = write(true);
    String last = image.last();
    byte[] bytes = image.files().get(last);
    assertThat(bytes.length).isEqualTo(image.end(last));
    for (int at = 0; at < bytes.length; at++) {
      check(image, last, flipped(bytes, at), bytes.length, "byte " + at + " flipped");
      check(image, last, Arrays.copyOf(bytes, at), bytes.length, "cut at byte " + at);
    }
  }

  /**
   * A write cut short, at any byte: two records written in one batch after the last acknowledged one,
   * never acknowledged. The log reads the whole records before the cut and goes on after them.
   */
  @Test
  void aWriteCutShortAnywhereIsATornTail() throws IOException {
    Image image = write(false);
    String last = image.last();
    byte[] bytes = image.files().get(last);
    int end = image.end(last);
    long next = image.ackedEnd();
    byte[] a = WalTest.frame(next, 3, 0, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
    byte[] b = WalTest.frame(next + 3, 2, 0, new byte[] {9, 8, 7, 6, 5, 4, 3});
    byte[] written = bytes.clone();
    System.arraycopy(a, 0, written, end, a.length);
    System.arraycopy(b, 0, written, end + a.length, b.length);
    int batchEnd = end + a.length + b.length;
    for (int cut = end; cut <= batchEnd; cut++) {
      for (byte[] torn : List.of(zeroed(written, cut, batchEnd), Arrays.copyOf(written, cut))) {
        Path dir = restore(image, last, torn);
        List<Long> expected = new ArrayList<>(image.records().stream().map(Rec::first).toList());
        long expectedNext = next;
        if (cut >= end + a.length) {
          expected.add(next);
          expectedNext = next + 3;
        }
        if (cut == batchEnd) {
          expected.add(next + 3);
          expectedNext = next + 5;
        }
        assertThat(new WalTailer(dir).poll(() -> 0)).as("followed, cut at %d", cut).extracting(Wal.Record::first)
            .containsExactlyElementsOf(expected);
        Opened o = open(dir);
        try (Wal wal = o.wal) {
          assertThat(o.replayed).as("cut at %d", cut).extracting(r -> r[0]).containsExactlyElementsOf(expected);
          assertThat(wal.nextOffset()).isEqualTo(expectedNext);
        }
      }
    }
  }

  /** A follower that meets damage hands out nothing from that poll, and reads it all again once it is mended. */
  @Test
  void aFollowerThatMeetsDamageLosesNoRecordsBeforeIt() throws IOException {
    Path dir = root.resolve("followed");
    try (Wal wal = Wal.open(dir, 1 << 20, 0, r -> { }, d -> { })) {
      WalTailer follower = new WalTailer(dir);
      for (int i = 0; i < 3; i++) {
        wal.append(new byte[] {1, 2, 3, 4}, 4, 2, 0, null);
      }
      assertThat(follower.poll(() -> 0)).extracting(Wal.Record::first).containsExactly(0L, 2L, 4L);
      for (int i = 0; i < 3; i++) {
        wal.append(new byte[] {5, 6, 7, 8}, 4, 2, 0, null);
      }
      Path segment = dir.resolve(Wal.name(0));
      byte[] bytes = Files.readAllBytes(segment);
      int fifth = 4 * (Wal.HEADER + 4);
      Files.write(segment, flipped(bytes, fifth + Wal.HEADER + 1));
      assertThatThrownBy(() -> follower.poll(() -> 0)).hasFieldOrPropertyWithValue("sqlState", SqlState.DATA_CORRUPTED)
          .hasMessageContaining(segment + " is damaged at byte " + fifth + ": checksum mismatch in a record the log "
              + "had acknowledged");
      Files.write(segment, bytes);
      assertThat(follower.poll(() -> 0)).extracting(Wal.Record::first).containsExactly(6L, 8L, 10L);
    }
  }

  /** Damage to the first of the two records of a batch, with the second whole after it, is damage. */
  @Test
  void aBadRecordWithAWholeOneAfterItIsDamageEvenPastTheAcknowledgedEnd() throws IOException {
    Image image = write(false);
    String last = image.last();
    byte[] written = image.files().get(last).clone();
    int end = image.end(last);
    byte[] a = WalTest.frame(image.ackedEnd(), 3, 0, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
    byte[] b = WalTest.frame(image.ackedEnd() + 3, 2, 0, new byte[] {9, 8, 7, 6, 5, 4, 3});
    System.arraycopy(a, 0, written, end, a.length);
    System.arraycopy(b, 0, written, end + a.length, b.length);
    Path dir = restore(image, last, flipped(written, end + Wal.HEADER + 2));
    assertThatThrownBy(() -> open(dir)).isInstanceOf(FloeException.class)
        .hasMessageContaining(dir.resolve(last) + " is damaged at byte " + end + ": checksum mismatch, and a whole "
            + "record follows at byte " + (end + a.length));
  }

  /** The reservation in the mark is raised ahead of the appends, past every offset acknowledged. */
  @Test
  void offsetsAreReservedAheadOfTheAppends() throws IOException {
    Path dir = root.resolve("reserve");
    long before = -1;
    int raised = 0;
    try (Wal wal = Wal.open(dir, 1 << 20, 0, r -> { }, d -> { })) {
      for (int i = 0; i < 40; i++) {
        long first = wal.append(new byte[8], 8, 100_000, 0, null);
        long reserved = WalMark.read(dir).orElseThrow().reserved();
        assertThat(reserved).isGreaterThan(first + 100_000 - 1);
        raised += reserved != before ? 1 : 0;
        before = reserved;
      }
    }
    assertThat(raised).as("raised in blocks, not at every append").isBetween(5, 12);
  }

  /** A repair cut short after it wrote the new start: the log never hands out a lost offset again. */
  @Test
  void aRepairCutShortStillNeverReusesAnOffset() throws IOException {
    Image image = write(false);
    String last = image.last();
    Rec lastRecord = image.records().get(image.records().size() - 1);
    Path dir = restore(image, last, flipped(image.files().get(last), lastRecord.start() + Wal.HEADER));
    WalMark.State mark = WalMark.read(dir).orElseThrow();
    // the mark as the repair writes it first: the new start, nothing known to be acknowledged
    WalMark.create(dir, new WalMark.State(mark.reserved() + WalMark.BLOCK, mark.reserved(), -1, 0)).close();
    Opened o = open(dir);
    try (Wal wal = o.wal) {
      assertThat(wal.nextOffset()).isEqualTo(mark.reserved()).isGreaterThan(image.ackedEnd());
      assertThat(wal.append(new byte[2], 2, 1, 0, null)).isEqualTo(mark.reserved());
    }
    Opened again = open(dir); // the jump to the new start reads back
    try (Wal wal = again.wal) {
      assertThat(again.replayed.get(again.replayed.size() - 1)[0]).isEqualTo(mark.reserved());
      assertThat(wal.nextOffset()).isEqualTo(mark.reserved() + 1);
    }
  }

  /**
   * A log written before marks were kept: without an acknowledged position, a bad record is damage
   * when a whole record follows it, and otherwise taken for the torn tail; the first open writes a mark.
   */
  @Test
  void aLogWithoutAMark() throws IOException {
    Image image = write(false);
    String last = image.last();
    List<Rec> lastRecords = image.records().stream().filter(r -> r.segment().equals(last)).toList();
    Rec second = lastRecords.get(1);
    Rec final_ = lastRecords.get(lastRecords.size() - 1);
    byte[] bytes = image.files().get(last);

    Path dir = restore(image, last, flipped(bytes, second.start() + Wal.HEADER));
    Files.delete(dir.resolve(WalMark.FILE));
    assertThatThrownBy(() -> open(dir)).hasFieldOrPropertyWithValue("sqlState", SqlState.DATA_CORRUPTED)
        .hasMessageContaining(dir.resolve(last) + " is damaged at byte " + second.start() + ": checksum mismatch, "
            + "and a whole record follows at byte " + lastRecords.get(2).start());

    Path torn = restore(image, last, flipped(bytes, final_.start() + Wal.HEADER));
    Files.delete(torn.resolve(WalMark.FILE));
    Opened o = open(torn);
    try (Wal wal = o.wal) {
      assertThat(o.replayed).hasSize(image.records().size() - 1);
      assertThat(wal.nextOffset()).isEqualTo(final_.first());
    }
    assertThat(WalMark.read(torn)).isPresent();
  }

  /** One copy of the mark damaged is read from the other; both is damage, and a repair writes it anew. */
  @Test
  void aDamagedMark() throws IOException {
    Image image = write(false);
    byte[] mark = image.files().get(WalMark.FILE);
    Path dir = restore(image, WalMark.FILE, flipped(mark, 4096 + 10));
    open(dir).wal.close();
    byte[] both = flipped(flipped(mark, 10), 4096 + 10);
    Path damaged = restore(image, WalMark.FILE, both);
    assertThatThrownBy(() -> open(damaged)).hasFieldOrPropertyWithValue("sqlState", SqlState.DATA_CORRUPTED)
        .hasMessageContaining(damaged.resolve(WalMark.FILE) + " is damaged");
    assertThat(WalRepair.inspect("t", damaged, 0).damage()).isPresent();
    LogRepair report = WalRepair.repair("t", damaged, 0, Instant.ofEpochMilli(0));
    assertThat(report.droppedRecords()).isZero();
    assertThat(report.nextOffset()).isGreaterThanOrEqualTo(image.ackedEnd() + WalRepair.UNKNOWN_WINDOW);
    assertThat(Files.readAllBytes(damaged.resolve(WalMark.FILE + ".damaged-19700101T000000.000Z"))).isEqualTo(both);
    Opened o = open(damaged);
    try (Wal wal = o.wal) {
      assertThat(o.replayed).containsExactlyElementsOf(offsets(image.records()));
      assertThat(wal.nextOffset()).isEqualTo(report.nextOffset());
    }
  }

  /** Without the flag nothing changes; a sound log is left alone by a repair. */
  @Test
  void inspectReportsAndChangesNothing() throws IOException {
    Image image = write(false);
    String last = image.last();
    Rec second = image.records().stream().filter(r -> r.segment().equals(last)).skip(1).findFirst().orElseThrow();
    byte[] faulted = flipped(image.files().get(last), second.start() + Wal.HEADER + 1);
    Path dir = restore(image, last, faulted);
    LogRepair report = WalRepair.inspect("t", dir, 0);
    assertThat(report.repaired()).isFalse();
    assertThat(report.damage().orElseThrow().position()).isEqualTo(second.start());
    assertThat(report.firstLostOffset()).isEqualTo(second.first());
    long lost = image.records().stream().filter(r -> r.segment().equals(last) && r.start() >= second.start()).count();
    assertThat(report.droppedRecords()).isEqualTo(lost);
    assertThat(report.droppedRows()).isEqualTo(image.ackedEnd() - second.first() - second.count());
    assertThat(report.droppedBytes()).isEqualTo(faulted.length - second.start());
    assertThat(read(dir)).containsOnlyKeys(image.files().keySet());
    assertThat(Files.readAllBytes(dir.resolve(last))).isEqualTo(faulted);

    Path sound = restore(image, last, image.files().get(last));
    LogRepair none = WalRepair.repair("t", sound, 0, Instant.now());
    assertThat(none.damage()).isEmpty();
    assertThat(none.repaired()).isFalse();
    assertThat(none.nextOffset()).isEqualTo(image.ackedEnd());
    assertThat(read(sound)).containsOnlyKeys(image.files().keySet());
  }
}
