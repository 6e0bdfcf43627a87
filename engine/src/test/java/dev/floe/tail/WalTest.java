package dev.floe.tail;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The write-ahead log alone: records, recovery of a torn end, segments, group commit (damage: WalDamageTest). */
class WalTest {
  @TempDir
  Path dir;

  private static final List<Types.NestedField> COLUMNS = List.of(
      Types.NestedField.optional(1, "b", Types.BooleanType.get()),
      Types.NestedField.optional(2, "i", Types.IntegerType.get()),
      Types.NestedField.optional(3, "l", Types.LongType.get()),
      Types.NestedField.optional(4, "f", Types.FloatType.get()),
      Types.NestedField.optional(5, "d", Types.DoubleType.get()),
      Types.NestedField.optional(6, "s", Types.StringType.get()),
      Types.NestedField.optional(7, "u", Types.UUIDType.get()),
      Types.NestedField.optional(8, "bin", Types.BinaryType.get()),
      Types.NestedField.optional(9, "dec", Types.DecimalType.of(20, 3)),
      Types.NestedField.optional(10, "dt", Types.DateType.get()),
      Types.NestedField.optional(11, "ts", Types.TimestampType.withZone()));

  private final List<Wal.Record> replayed = new ArrayList<>();
  private final List<Wal.Durable> durable = Collections.synchronizedList(new ArrayList<>());
  private final java.util.concurrent.atomic.AtomicInteger fsyncs = new java.util.concurrent.atomic.AtomicInteger();

  private Wal open(long segmentBytes) {
    replayed.clear();
    return Wal.open(dir, segmentBytes, 0, replayed::add, batch -> {
      fsyncs.incrementAndGet();
      durable.addAll(batch);
    });
  }

  private static long append(Wal wal, int count) {
    byte[] payload = new byte[count * 3];
    new Random(count).nextBytes(payload);
    return wal.append(payload, payload.length, count, 0, null);
  }

  @Test
  void rowsOfEveryTypeRoundTrip() {
    RowCodec codec = new RowCodec(COLUMNS);
    Object[] full = {true, -7, Long.MIN_VALUE, 1.5f, Double.NaN, "héllo ✓", UUID.randomUUID(),
        ByteBuffer.wrap(new byte[] {0, 1, (byte) 255}), new BigDecimal("-12345678901234567.891"), 20_000,
        1_700_000_000_000_000L};
    Object[] nulls = new Object[COLUMNS.size()];
    Object[] some = {null, 0, null, null, 0.0, "", null, ByteBuffer.wrap(new byte[0]), BigDecimal.ZERO.setScale(3),
        null, 0L};
    RowCodec.Buffer buffer = new RowCodec.Buffer(8);
    codec.encode(List.of(full, nulls, some), buffer);
    List<Object[]> back = codec.decode(ByteBuffer.wrap(buffer.array(), 0, buffer.position()).slice(), 3);
    assertThat(back.get(0)).containsExactly(full);
    assertThat(back.get(1)).containsExactly(nulls);
    assertThat(back.get(2)).containsExactly(some);
  }

  @Test
  void recordsReplayInOrderAndOffsetsContinue() {
    try (Wal wal = open(1 << 20)) {
      assertThat(append(wal, 3)).isZero();
      assertThat(append(wal, 1)).isEqualTo(3);
      assertThat(append(wal, 5)).isEqualTo(4);
    }
    try (Wal wal = open(1 << 20)) {
      assertThat(replayed).extracting(Wal.Record::first).containsExactly(0L, 3L, 4L);
      assertThat(replayed).extracting(Wal.Record::count).containsExactly(3, 1, 5);
      byte[] expected = new byte[15];
      new Random(5).nextBytes(expected);
      ByteBuffer p = replayed.get(2).payload();
      byte[] got = new byte[p.remaining()];
      p.get(got);
      assertThat(got).isEqualTo(expected);
      assertThat(wal.nextOffset()).isEqualTo(9);
      assertThat(append(wal, 2)).isEqualTo(9);
    }
  }

  /** A record cut short as it was written (never acknowledged) ends the log; the file is cut back to it. */
  @Test
  void aTornLastRecordIsDroppedAndTheLogContinuesAfterTheRecordBefore() throws IOException {
    try (Wal wal = open(1 << 20)) {
      append(wal, 2);
      append(wal, 4);
    }
    Path segment = onlySegment();
    long size = Files.size(segment);
    byte[] payload = new byte[12];
    java.util.Arrays.fill(payload, (byte) 7);
    byte[] inFlight = frame(6, 4, 0, payload);
    for (int cut = 0; cut < inFlight.length; cut += 3) {
      // the write under way when the process stopped: a part of the record, then the zeroed space
      try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
        ch.write(ByteBuffer.wrap(inFlight, 0, cut), size);
        ch.write(ByteBuffer.allocate(64), size + cut);
      }
      try (Wal wal = open(1 << 20)) {
        assertThat(replayed).extracting(Wal.Record::first).containsExactly(0L, 2L);
        assertThat(wal.nextOffset()).isEqualTo(6);
      }
      assertThat(Files.size(segment)).isEqualTo(size); // cut back to the last whole record
    }
  }

  /**
   * A bad record the log acknowledged is damage wherever it is, in the last segment too: opening fails
   * with XX001 naming the file and byte, and changes nothing.
   */
  @Test
  void aDamagedAcknowledgedRecordIsAnErrorAndChangesNothing() throws IOException {
    try (Wal wal = open(64)) { // every record starts a new segment
      append(wal, 20);
      append(wal, 20);
      append(wal, 20);
    }
    List<Path> segments = segments();
    assertThat(segments).hasSize(3);
    flipByte(segments.get(2), Wal.HEADER + 5);
    byte[] damaged = Files.readAllBytes(segments.get(2));
    assertThatThrownBy(() -> open(64)).isInstanceOf(FloeException.class)
        .hasFieldOrPropertyWithValue("sqlState", SqlState.DATA_CORRUPTED)
        .hasMessageContaining(segments.get(2) + " is damaged at byte 0: checksum mismatch");
    assertThat(Files.readAllBytes(segments.get(2))).isEqualTo(damaged);
    flipByte(segments.get(2), Wal.HEADER + 5);
    flipByte(segments.get(0), Wal.HEADER + 5);
    assertThatThrownBy(() -> open(64)).isInstanceOf(FloeException.class)
        .hasFieldOrPropertyWithValue("sqlState", SqlState.DATA_CORRUPTED)
        .hasMessageContaining(segments.get(0) + " is damaged at byte 0");
  }

  /** After an ingest the log's offsets jump past the rows the table took directly; only so far. */
  @Test
  void offsetsMayJumpOnlyToOffsetsTheTableHolds() {
    try (Wal wal = open(1 << 20)) {
      append(wal, 3);
      wal.pause();
      wal.resume(10);
      assertThat(append(wal, 2)).isEqualTo(10);
    }
    try (Wal wal = Wal.open(dir, 1 << 20, 10, replayed::add, durable::addAll)) {
      assertThat(replayed).extracting(Wal.Record::first).containsExactly(0L, 10L);
      assertThat(wal.nextOffset()).isEqualTo(12);
    }
    assertThatThrownBy(() -> Wal.open(dir, 1 << 20, 9, r -> { }, d -> { }))
        .hasFieldOrPropertyWithValue("sqlState", SqlState.DATA_CORRUPTED);
  }

  @Test
  void evictionDeletesOnlyWholeSegmentsBelowTheWatermark() {
    try (Wal wal = open(32)) {
      for (int i = 0; i < 5; i++) {
        append(wal, 10); // segments start at 0, 10, 20, 30, 40
      }
      assertThat(wal.evictBelow(25)).isEqualTo(2);
      assertThat(wal.segmentCount()).isEqualTo(3);
      assertThat(wal.evictBelow(1000)).isEqualTo(2); // never the segment being written
    }
    try (Wal wal = Wal.open(dir, 32, 50, replayed::add, durable::addAll)) {
      assertThat(replayed).extracting(Wal.Record::first).containsExactly(40L);
      assertThat(wal.nextOffset()).isEqualTo(50);
    }
  }

  @Test
  void concurrentAppendersShareFsyncsAndEveryOffsetIsHandedOutOnce() throws Exception {
    int threads = 8;
    int perThread = 200;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Long> offsets = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch start = new CountDownLatch(1);
    try (Wal wal = open(1 << 20)) {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < perThread; i++) {
            offsets.add(append(wal, 1));
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
    assertThat(offsets).hasSize(threads * perThread).doesNotHaveDuplicates();
    // handed to the listener in offset order, fewer times than there were appends
    List<Long> order = durable.stream().map(Wal.Durable::first).toList();
    assertThat(order).isSorted().hasSize(threads * perThread);
    assertThat(fsyncs.get()).isLessThan(threads * perThread);
    try (Wal wal = open(1 << 20)) {
      assertThat(replayed).hasSize(threads * perThread);
      assertThat(wal.nextOffset()).isEqualTo(threads * perThread);
    }
  }

  private Path onlySegment() throws IOException {
    List<Path> s = segments();
    assertThat(s).hasSize(1);
    return s.get(0);
  }

  private List<Path> segments() throws IOException {
    try (var list = Files.list(dir)) {
      return list.filter(p -> p.toString().endsWith(".wal")).sorted().toList();
    }
  }

  /** A record's bytes, as the log writes them. */
  static byte[] frame(long first, int count, int schemaId, byte[] payload) {
    ByteBuffer b = ByteBuffer.allocate(Wal.HEADER + payload.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(payload.length).putInt(0).putLong(first).putInt(count).putInt(schemaId).put(payload);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 8, Wal.HEADER - 8 + payload.length);
    b.putInt(4, (int) crc.getValue());
    return b.array();
  }

  private static void flipByte(Path file, long at) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, at);
      b.put(0, (byte) (b.get(0) ^ 0x40));
      b.rewind();
      ch.write(b, at);
    }
  }
}
