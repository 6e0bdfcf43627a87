package dev.floe.tail;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * A write-ahead log of row batches, in segment files named by their first offset.
 *
 * <p>A record is a 24-byte header (payload length, CRC32C of everything after the CRC, first offset,
 * row count, schema id) and its payload; a batch of rows is one record. {@link #append} returns once
 * the record is on disk (fdatasync). Concurrent appenders share fsyncs (group commit): when no flush
 * is running, an appender takes every record queued so far and writes them with one write and one
 * fsync; appenders arriving meanwhile queue theirs for the next flush and wait.
 *
 * <p>Opening replays every record in order, and tells a torn tail from damage. A record that is
 * incomplete, fails its checksum or has a malformed header is the <b>torn tail</b> (the write under way
 * when the process stopped, never acknowledged) only if all of these hold:
 *
 * <ol>
 *   <li>it is in the last segment: the writer cut each earlier one at its last record before it started
 *       the next;
 *   <li>it starts at or past the position the mark file recorded as acknowledged ({@link WalMark}:
 *       recorded after every flush, so after a killed process it is exact; after an operating-system
 *       crash it may lag);
 *   <li>no whole record (a matching checksum, offsets from the ones due there on) starts anywhere after
 *       it in the segment: a batch is written only once the one before it was fsynced, so a record after
 *       it means it had been acknowledged.
 * </ol>
 *
 * <p>The torn tail and the zeroed space after it are cut off. Anything else is damage: opening fails
 * with XX001 naming the file and byte, and changes nothing, so that an operator decides
 * ({@link WalRepair}: restore the file, or drop the records from the damage on). Offsets are never
 * handed out twice, even then: the mark reserves them durably in blocks before they are acknowledged,
 * and a repair goes on past the reservation.
 */
final class Wal implements AutoCloseable {
  static final int HEADER = 24;
  /** Larger records are refused; a header claiming more is damage. */
  static final int MAX_PAYLOAD = 256 << 20;

  /** A replayed record. */
  record Record(long first, int count, int schemaId, ByteBuffer payload) {
    long end() {
      return first + count;
    }
  }

  /** A record made durable, handed to the listener in offset order with what its appender attached. */
  record Durable(long first, int count, Object attachment) {}

  private final Path dir;
  private final long segmentBytes;
  private final Consumer<List<Durable>> onDurable;
  private final TreeMap<Long, Path> segments = new TreeMap<>();
  private FileChannel current;
  /** The first offset of the segment being written (its name), or -1 before the first. */
  private long currentFirst = -1;
  private long currentSize;
  /** The segment's length including the zeroed space after its last record. */
  private long allocatedEnd;
  static final long PREALLOCATE = 1 << 20;
  /** The mark file (see {@link WalMark}); written by the appender that flushes. */
  private WalMark mark;
  /** No offset at or above it is acknowledged: raised in the mark, durably, ahead of the appends. */
  private long reserved;
  /** The mark's floor: a repair's new start. */
  private long floorMark;

  // guarded by lock
  private long next;
  private long enqueued;
  private List<Queued> queue = new ArrayList<>();
  private IOException failure;
  private boolean closed;
  /** Whether an appender is writing and fsyncing a batch; the others wait. */
  private boolean flushing;
  private volatile long durableSeq;
  /** Appenders parked until a flush covers their records. */
  private List<Thread> waiters = new ArrayList<>();
  /** Records the last flush wrote; the next waits (briefly) for as many. */
  private int lastBatch = 1;
  private int gatherTarget = Integer.MAX_VALUE;
  static final long GATHER_NANOS = 100_000;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition flushed = lock.newCondition();
  private final Condition arrived = lock.newCondition();
  private final Condition resumed = lock.newCondition();
  /** While paused, appenders wait before taking offsets (an ingest is using the next ones). */
  private boolean paused;

  private record Queued(long first, int count, byte[] bytes, Object attachment) {}

  private Wal(Path dir, long segmentBytes, long next, Consumer<List<Durable>> onDurable) {
    this.dir = dir;
    this.segmentBytes = segmentBytes;
    this.next = next;
    this.onDurable = onDurable;
  }

  /**
   * Opens (creating) the log in {@code dir}, replaying its records to {@code replay} in order. A torn
   * tail is cut off (see the class comment); damage changes nothing and fails.
   *
   * @param floor the least next offset (offsets below it were handed out before: by a log whose
   *     segments were evicted, or reserved by a restore)
   * @throws FloeException XX001 if the log is damaged, naming the file and byte
   */
  static Wal open(Path dir, long segmentBytes, long floor, Consumer<Record> replay, Consumer<List<Durable>> onDurable) {
    try {
      Files.createDirectories(dir);
      WalMark.State mark = WalMark.read(dir).orElse(null);
      Scan scan = scan(dir, floor, mark, replay);
      if (scan.damage() != null) {
        throw scan.damage().error();
      }
      long repaired = mark == null ? 0 : mark.floor();
      Wal wal = new Wal(dir, segmentBytes, Math.max(Math.max(floor, scan.end()), repaired), onDurable);
      wal.segments.putAll(scan.segments());
      wal.floorMark = repaired;
      wal.reserved = Math.max(mark == null ? 0 : mark.reserved(), wal.next + WalMark.BLOCK);
      try {
        if (!scan.segments().isEmpty()) {
          wal.reopen(scan.segments().lastKey(), scan.segments().lastEntry().getValue(), scan.whole());
        }
        wal.mark = WalMark.create(dir, new WalMark.State(wal.reserved, repaired, wal.currentFirst, wal.currentSize));
      } catch (IOException e) {
        if (wal.current != null) {
          wal.current.close();
        }
        throw e;
      }
      return wal;
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot open the log in " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * Goes on writing the last segment after its last whole record: what lies beyond is the torn tail
   * (the write under way when the process stopped, never acknowledged, or the zeroed space ahead of
   * it), and goes. The records replayed are acknowledged from now on, so they are forced first.
   */
  private void reopen(long first, Path file, long whole) throws IOException {
    current = FileChannel.open(file, StandardOpenOption.WRITE);
    if (current.size() > whole) {
      current.truncate(whole);
    }
    current.force(true);
    currentFirst = first;
    currentSize = whole;
    allocatedEnd = whole;
  }

  /**
   * What reading a log found: its segments, the offset after its last record, the bytes of whole
   * records in its last segment, and the first damage (null if none).
   */
  record Scan(TreeMap<Long, Path> segments, long end, long whole, Frames.Damage damage) {}

  /**
   * Reads the log in {@code dir} without changing it, handing each record before the first damage to
   * {@code replay}. {@code mark} (null: none) says what was acknowledged, up to which offset the
   * records may jump (with {@code floor}), and below which offset every record lies.
   */
  static Scan scan(Path dir, long floor, WalMark.State mark, Consumer<Record> replay) throws IOException {
    TreeMap<Long, Path> segments = segments(dir);
    long jumpTo = Math.max(floor, mark == null ? 0 : mark.floor());
    long expected = -1;
    long whole = 0;
    for (Map.Entry<Long, Path> e : segments.entrySet()) {
      Long following = segments.higherKey(e.getKey());
      Scan s = scanSegment(e.getValue(), e.getKey(), expected, following, jumpTo, mark, replay);
      if (s.damage() != null) {
        return new Scan(segments, s.end(), s.whole(), s.damage());
      }
      expected = s.end();
      whole = s.whole();
    }
    long end = expected >= 0 ? expected : floor;
    if (mark != null && mark.position() > 0 && (segments.isEmpty() || mark.segment() > segments.lastKey())) {
      return new Scan(segments, end, whole, new Frames.Damage(dir.resolve(name(mark.segment())), 0, end,
          "the segment is missing, but the log recorded its records up to byte " + mark.position()
              + " as acknowledged"));
    }
    return new Scan(segments, end, whole, null);
  }

  /** The segment files in {@code dir}, by their first offset. */
  static TreeMap<Long, Path> segments(Path dir) throws IOException {
    TreeMap<Long, Path> segments = new TreeMap<>();
    if (!Files.isDirectory(dir)) {
      return segments;
    }
    try (var list = Files.list(dir)) {
      for (Path p : list.toList()) {
        String name = p.getFileName().toString();
        if (name.endsWith(".wal")) {
          try {
            segments.put(Long.parseLong(name.substring(0, name.length() - 4)), p);
          } catch (NumberFormatException e) {
            throw new Frames.Damage(p, 0, 0, "not a log segment name").error();
          }
        }
      }
    }
    return segments;
  }

  /** The file name of the segment whose first record has offset {@code first}. */
  static String name(long first) {
    return String.format("%020d.wal", first);
  }

  /**
   * Reads one segment; its {@link Scan#end} is the offset after its last record. Offsets continue from
   * record to record and on into the {@code following} segment (null: this is the last), except that
   * they may jump forward to at most {@code jumpTo}: offsets the table holds that never went through
   * the log (an ingest), or a repair's new start. A record that fails its checks ends the log only in
   * the last segment, only at or past what the mark recorded as acknowledged, and only if no whole
   * record follows it: a torn tail. Anything else is damage.
   */
  private static Scan scanSegment(Path file, long named, long expected, Long following, long jumpTo,
      WalMark.State mark, Consumer<Record> replay) throws IOException {
    boolean last = following == null;
    ByteBuffer all = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
    long end = expected < 0 ? named : expected; // (the segment before checked that this one's name follows it)
    // bytes of this segment the writer recorded as acknowledged (all of it if it recorded a later one)
    long acked = mark == null || mark.segment() < named ? 0 : mark.segment() > named ? Long.MAX_VALUE : mark.position();
    int pos = 0;
    CRC32C crc = new CRC32C();
    while (pos < all.limit()) {
      String bad = Frames.problem(all, pos, crc);
      if (bad == null) {
        long first = all.getLong(pos + 8);
        int count = all.getInt(pos + 16);
        if (first != end && !(first > end && first <= jumpTo) || count <= 0) {
          return damaged(file, pos, end, "record of offsets " + first + "+" + count + " where offset " + end
              + " was next");
        }
        replay.accept(new Record(first, count, all.getInt(pos + 20),
            all.slice(pos + HEADER, all.getInt(pos)).order(ByteOrder.LITTLE_ENDIAN)));
        end = first + count;
        pos += Frames.size(all, pos);
        continue;
      }
      if (!last) {
        return damaged(file, pos, end, bad);
      }
      if (pos < acked) {
        return damaged(file, pos, end, bad + " in a record the log had acknowledged ("
            + (acked == Long.MAX_VALUE ? "it went on in a later segment" : "up to byte " + acked) + ")");
      }
      int later = Frames.nextWhole(all, pos + 1, end, mark == null ? Long.MAX_VALUE : mark.reserved());
      if (later >= 0) {
        return damaged(file, pos, end, bad + ", and a whole record follows at byte " + later);
      }
      break; // the torn tail
    }
    if (pos < acked && acked != Long.MAX_VALUE) {
      return damaged(file, pos, end, "its records end at byte " + pos + ", but the log had acknowledged records up to "
          + "byte " + acked);
    }
    if (!last && following != end && !(following > end && following <= jumpTo)) {
      return damaged(file, pos, end, "its records end at offset " + end + ", but the next segment starts at offset "
          + following);
    }
    return new Scan(null, end, pos, null);
  }

  private static Scan damaged(Path file, long position, long offset, String problem) {
    return new Scan(null, offset, position, new Frames.Damage(file, position, offset, problem));
  }

  /**
   * Writes a record of {@code count} rows (its payload: {@code bytes[0, length)}) and waits until it is
   * durable.
   *
   * @return the first offset of its rows
   * @throws FloeException 58030 if the log cannot be written (the record was not acknowledged, and the
   *     log accepts nothing more until it is reopened)
   */
  long append(byte[] bytes, int length, int count, int schemaId, Object attachment) {
    return await(enqueue(bytes, length, count, schemaId, attachment));
  }

  /** A queued record: its first offset, and its place in the queue ({@link #await} waits for it). */
  record Ticket(long first, long seq) {}

  /**
   * Queues a record of {@code count} rows (its payload: {@code bytes[0, length)}), taking its offsets,
   * without waiting for it to be durable: records are written in the order they are queued, so one
   * that is durable implies every record queued before it is.
   *
   * @throws FloeException 58030 if the log cannot be written; 55000 when it is closed
   */
  Ticket enqueue(byte[] bytes, int length, int count, int schemaId, Object attachment) {
    if (length > MAX_PAYLOAD) {
      throw new FloeException(SqlState.PROGRAM_LIMIT_EXCEEDED, "a batch of " + length
          + " bytes is larger than a log record may be (" + MAX_PAYLOAD + " bytes); append it in parts");
    }
    byte[] record = new byte[HEADER + length];
    ByteBuffer b = ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
    long first;
    long seq;
    lock.lock();
    try {
      while (paused && !closed) {
        resumed.awaitUninterruptibly();
      }
      checkUsable();
      first = next;
      next += count;
      b.putInt(0, length).putLong(8, first).putInt(16, count).putInt(20, schemaId);
      System.arraycopy(bytes, 0, record, HEADER, length);
      CRC32C crc = new CRC32C();
      crc.update(record, 8, HEADER - 8 + length);
      b.putInt(4, (int) crc.getValue());
      queue.add(new Queued(first, count, record, attachment));
      seq = ++enqueued;
      if (queue.size() >= gatherTarget) {
        arrived.signal();
      }
    } finally {
      lock.unlock();
    }
    return new Ticket(first, seq);
  }

  /**
   * Waits until a queued record is durable.
   *
   * @return the first offset of its rows
   * @throws FloeException 58030 if the log cannot be written (the record was not acknowledged, and the
   *     log accepts nothing more until it is reopened)
   */
  long await(Ticket ticket) {
    long first = ticket.first();
    long seq = ticket.seq();
    List<Queued> batch;
    long upTo;
    // Wait until a flush covers this record, or become the one who flushes everything queued. Waiters
    // park outside the lock and are unparked by the flush that covers them, so a flush releases its
    // appenders at once rather than one lock hand-off after another.
    while (true) {
      if (durableSeq >= seq) {
        return first;
      }
      lock.lock();
      try {
        if (durableSeq >= seq) {
          return first;
        }
        checkUsable();
        if (!flushing) {
          flushing = true;
          gather();
          batch = queue;
          queue = new ArrayList<>();
          upTo = enqueued;
          break;
        }
        waiters.add(Thread.currentThread());
      } finally {
        lock.unlock();
      }
      LockSupport.park(this);
    }
    IOException failed = null;
    List<Thread> released = List.of();
    try {
      write(batch);
      List<Durable> done = new ArrayList<>(batch.size());
      for (Queued q : batch) {
        done.add(new Durable(q.first(), q.count(), q.attachment()));
      }
      onDurable.accept(done);
    } catch (IOException e) {
      failed = e;
    } finally {
      lock.lock();
      try {
        flushing = false;
        lastBatch = batch.size();
        if (failed != null) {
          failure = failed;
        } else {
          durableSeq = upTo;
        }
        released = waiters;
        waiters = new ArrayList<>();
        flushed.signalAll();
      } finally {
        lock.unlock();
      }
      for (Thread t : released) {
        LockSupport.unpark(t);
      }
    }
    if (failed != null) {
      throw failed(failed);
    }
    return first;
  }

  /**
   * The appenders the last flush released come back with their next records within microseconds; a
   * flush that left at once would take only the first of them, and the rest would wait for the one
   * after. So a new flush waits, briefly ({@value #GATHER_NANOS} ns at most), until as many records are
   * queued as the last flush wrote. One appender never waits. Holding the lock.
   */
  private void gather() {
    long nanos = GATHER_NANOS;
    gatherTarget = lastBatch;
    try {
      while (queue.size() < gatherTarget && nanos > 0) {
        nanos = arrived.awaitNanos(nanos);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      gatherTarget = Integer.MAX_VALUE;
    }
  }

  private void checkUsable() {
    if (closed) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "the log is closed");
    }
    if (failure != null) {
      throw failed(failure);
    }
  }

  private FloeException failed(IOException e) {
    return new FloeException(SqlState.IO_ERROR, "cannot write the log in " + dir + ": " + e.getMessage()
        + "; rows not acknowledged were not appended", null, "Reopen the log once the disk is writable again.", 0, e);
  }

  private void write(List<Queued> batch) throws IOException {
    if (current == null || currentSize >= segmentBytes) {
      roll(batch.get(0).first());
    }
    Queued last = batch.get(batch.size() - 1);
    long end = last.first() + last.count();
    if (end > reserved - WalMark.BLOCK / 2) {
      // before any of these offsets is acknowledged, and far ahead, so that it seldom costs an fsync
      reserved = end + WalMark.BLOCK;
      mark.reserve(reserved, floorMark);
    }
    ByteBuffer[] buffers = new ByteBuffer[batch.size()];
    long total = 0;
    for (int i = 0; i < buffers.length; i++) {
      buffers[i] = ByteBuffer.wrap(batch.get(i).bytes());
      total += buffers[i].remaining();
    }
    if (currentSize + total > allocatedEnd) {
      preallocate(currentSize + total + PREALLOCATE);
    }
    current.position(currentSize);
    long written = 0;
    while (written < total) {
      written += current.write(buffers);
    }
    current.force(false);
    currentSize += total;
    mark.sound(currentFirst, currentSize); // before the appenders learn their records are durable
  }

  /**
   * Zeroes the segment ahead of the records, in steps of {@value #PREALLOCATE} bytes: a record written
   * over allocated blocks changes no file metadata, so its fdatasync flushes only data (a quarter
   * faster here than appending to the file's end). Replay reads the zeros as the end of the log.
   */
  private void preallocate(long end) throws IOException {
    ByteBuffer zeros = ByteBuffer.allocate(64 << 10);
    long at = Math.max(allocatedEnd, currentSize);
    while (at < end) {
      zeros.clear();
      zeros.limit((int) Math.min(zeros.capacity(), end - at));
      at += current.write(zeros, at);
    }
    allocatedEnd = end;
  }

  /** Starts a new segment whose first record has offset {@code first}; its name is durable before use. */
  private void roll(long first) throws IOException {
    if (current != null) {
      // the finished segment ends at its last record: only the last segment may end in zeros
      current.truncate(currentSize);
      current.force(true);
    }
    Path file = dir.resolve(name(first));
    FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    syncDirectory(dir);
    if (current != null) {
      current.close();
    }
    current = ch;
    currentFirst = first;
    currentSize = ch.size();
    allocatedEnd = currentSize;
    synchronized (segments) {
      segments.put(first, file);
    }
  }

  static void syncDirectory(Path dir) throws IOException {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }

  /**
   * Holds new appends back and waits until every record already queued is durable: afterwards no
   * append is in flight, and none takes an offset until {@link #resume}.
   */
  void pause() {
    lock.lock();
    try {
      paused = true;
      while ((flushing || !queue.isEmpty()) && failure == null && !closed) {
        flushed.awaitUninterruptibly();
      }
      checkUsable();
    } finally {
      lock.unlock();
    }
  }

  /** Lets appends go on, from offset {@code next} at least (offsets below it were used meanwhile). */
  void resume(long next) {
    lock.lock();
    try {
      paused = false;
      this.next = Math.max(this.next, next);
      resumed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** The offset the next appended row gets. */
  long nextOffset() {
    lock.lock();
    try {
      return next;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Deletes the segments all of whose rows have offsets below {@code through} (the table holds them);
   * the segment being written is kept.
   *
   * @return the number of segments deleted
   */
  int evictBelow(long through) {
    List<Path> doomed = new ArrayList<>();
    synchronized (segments) {
      Long[] firsts = segments.keySet().toArray(new Long[0]);
      for (int i = 0; i + 1 < firsts.length; i++) {
        if (firsts[i + 1] <= through) {
          doomed.add(segments.remove(firsts[i]));
        }
      }
    }
    for (Path p : doomed) {
      try {
        Files.delete(p);
      } catch (NoSuchFileException ignored) {
        // already gone
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return doomed.size();
  }

  /** The number of segment files. */
  int segmentCount() {
    synchronized (segments) {
      return segments.size();
    }
  }

  @Override
  public void close() {
    lock.lock();
    try {
      closed = true;
      resumed.signalAll();
      while (flushing) {
        flushed.awaitUninterruptibly();
      }
      for (Thread t : waiters) {
        LockSupport.unpark(t); // they find the log closed
      }
      waiters.clear();
      if (mark.isOpen()) {
        closeFiles();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Cuts the zeroed space off the segment and records its end as acknowledged: a clean end. */
  private void closeFiles() {
    try (WalMark m = mark; FileChannel c = current) {
      if (c != null) {
        c.truncate(currentSize);
        // from here on, a bad record anywhere in the segment is damage, not a torn tail
        m.sound(currentFirst, currentSize);
        m.force();
      }
    } catch (IOException ignored) {
      // everything acknowledged was forced already
    }
  }
}
