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
 * <p>Opening replays every record in order. In the last segment the first record that is incomplete
 * or fails its checksum ends the log: it was being written when the process died, so it was never
 * acknowledged, and the file is cut there. Anywhere else such a record is corruption of acknowledged
 * rows, and opening fails rather than skip them.
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
  private long currentSize;
  /** The segment's length including the zeroed space after its last record. */
  private long allocatedEnd;
  static final long PREALLOCATE = 1 << 20;

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
   * Opens (creating) the log in {@code dir}, replaying its records to {@code replay} in order.
   *
   * @param floor the least next offset (offsets below it were handed out before: by a log whose
   *     segments were evicted, or reserved by a restore)
   */
  static Wal open(Path dir, long segmentBytes, long floor, Consumer<Record> replay, Consumer<List<Durable>> onDurable) {
    try {
      Files.createDirectories(dir);
      Wal wal = new Wal(dir, segmentBytes, floor, onDurable);
      List<Path> files = new ArrayList<>();
      try (var list = Files.list(dir)) {
        list.filter(p -> p.getFileName().toString().endsWith(".wal")).forEach(files::add);
      }
      for (Path p : files) {
        String name = p.getFileName().toString();
        try {
          wal.segments.put(Long.parseLong(name.substring(0, name.length() - 4)), p);
        } catch (NumberFormatException e) {
          throw corrupt(p, 0, "not a log segment name");
        }
      }
      long expected = -1;
      for (Map.Entry<Long, Path> e : wal.segments.entrySet()) {
        boolean last = e.getKey().equals(wal.segments.lastKey());
        expected = wal.replaySegment(e.getValue(), e.getKey(), expected, last, floor, replay);
      }
      if (expected >= 0) {
        wal.next = Math.max(wal.next, expected);
      }
      return wal;
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot open the log in " + dir + ": " + e.getMessage(), e);
    }
  }

  private static FloeException corrupt(Path file, long position, String what) {
    return new FloeException(SqlState.DATA_CORRUPTED, "log segment " + file + " is damaged at byte " + position
        + ": " + what, null, "The rows from there on were acknowledged; restore the segment from a backup, "
        + "or move it aside to give them up.", 0, null);
  }

  /**
   * Replays one segment; returns the offset after its last record. Offsets continue from record to
   * record, except that they may jump forward to at most {@code floor}: offsets the table holds that
   * never went through the log (an ingest).
   */
  private long replaySegment(Path file, long named, long expected, boolean last, long floor, Consumer<Record> replay)
      throws IOException {
    ByteBuffer all = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
    long end = expected < 0 ? named : expected;
    if (expected >= 0 && named != expected && !(named > expected && named <= floor)) {
      throw corrupt(file, 0, "it starts at offset " + named + " but the previous segment ends at " + expected);
    }
    int pos = 0;
    CRC32C crc = new CRC32C();
    while (pos < all.limit()) {
      String bad = null;
      int length = 0;
      if (all.limit() - pos < HEADER) {
        bad = "incomplete record header";
      } else {
        length = all.getInt(pos);
        if (length < 0 || length > MAX_PAYLOAD || length > all.limit() - pos - HEADER) {
          bad = "incomplete record";
        } else {
          crc.reset();
          crc.update(all.array(), pos + 8, HEADER - 8 + length);
          if ((int) crc.getValue() != all.getInt(pos + 4)) {
            bad = "checksum mismatch";
          }
        }
      }
      if (bad != null) {
        if (!last) {
          throw corrupt(file, pos, bad);
        }
        // the record being written when the process stopped: never acknowledged
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
          ch.truncate(pos);
          ch.force(true);
        }
        break;
      }
      long first = all.getLong(pos + 8);
      int count = all.getInt(pos + 16);
      int schemaId = all.getInt(pos + 20);
      if (first != end && !(first > end && first <= floor) || count <= 0) {
        throw corrupt(file, pos, "record of offsets " + first + "+" + count + " where offset " + end + " was next");
      }
      ByteBuffer payload = all.slice(pos + HEADER, length).order(ByteOrder.LITTLE_ENDIAN);
      replay.accept(new Record(first, count, schemaId, payload));
      end = first + count;
      pos += HEADER + length;
    }
    if (last) {
      current = FileChannel.open(file, StandardOpenOption.WRITE);
      currentSize = current.size();
      allocatedEnd = currentSize;
    }
    return end;
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
    if (length > MAX_PAYLOAD) {
      throw new FloeException(SqlState.PROGRAM_LIMIT_EXCEEDED, "a batch of " + length
          + " bytes is larger than a log record may be (" + MAX_PAYLOAD + " bytes); append it in parts");
    }
    byte[] record = new byte[HEADER + length];
    ByteBuffer b = ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
    long first;
    long seq;
    List<Queued> batch;
    long upTo;
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
    Path file = dir.resolve(String.format("%020d.wal", first));
    FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    syncDirectory(dir);
    if (current != null) {
      current.close();
    }
    current = ch;
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
      if (current != null) {
        current.truncate(currentSize);
        current.close();
      }
    } catch (IOException ignored) {
      // everything acknowledged was forced already
    } finally {
      lock.unlock();
    }
  }
}
