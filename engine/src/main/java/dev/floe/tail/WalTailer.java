package dev.floe.tail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;

/**
 * Follows a log another process writes, read-only: each {@link #poll} returns the records completed
 * since the last one. It never changes a file. A record still being written (incomplete, or failing
 * its checksum, or the zeroed space ahead of the writer) ends a poll, and the next poll reads it again
 * from there. A bad record the writer had acknowledged, or finished (it went on in a later segment, or
 * wrote a whole record after it), is damage: the poll fails with XX001, as the writer's open would,
 * rather than show the rows before it alone. Segments the writer evicted are skipped: their rows are in
 * the table.
 */
final class WalTailer {
  private final Path dir;
  /** The segment being read (its first offset), or -1 before the first poll. */
  private long segment = -1;
  private long position;
  /** The offset the next record read starts at; -1 until known. */
  private long next = -1;

  WalTailer(Path dir) {
    this.dir = dir;
  }

  /** The offset after the last record read. */
  long next() {
    return next;
  }

  /**
   * The records written since the last poll, in order. {@code floor} gives the table's watermark, asked
   * only when the offsets jump: they may jump to it (rows an ingest wrote to the table, or segments
   * evicted), or to a repair's new start, and nowhere else.
   *
   * @throws dev.floe.FloeException XX001 if the log is damaged; the next poll reads again from where
   *     this one started (the records before the damage were not handed out)
   */
  List<Wal.Record> poll(LongSupplier floor) throws IOException {
    long[] from = {segment, position, next};
    try {
      return pollFrom(floor);
    } catch (dev.floe.FloeException e) {
      segment = from[0];
      position = from[1];
      next = from[2];
      throw e;
    }
  }

  private List<Wal.Record> pollFrom(LongSupplier floor) throws IOException {
    List<Wal.Record> out = new ArrayList<>();
    // what the writer acknowledged, read before the segments: every record below it was whole by then
    WalMark.State mark = Files.isDirectory(dir) ? WalMark.read(dir).orElse(null) : null;
    LongPredicate mayJumpTo = to -> to <= (mark == null ? 0 : mark.floor()) || to <= floor.getAsLong();
    while (true) {
      TreeMap<Long, Path> segments = Wal.segments(dir);
      if (segments.isEmpty()) {
        return out;
      }
      if (segment < 0 || !segments.containsKey(segment)) {
        // the first poll, or the writer evicted the segment being read: go on from the oldest still
        // there that holds the next offset, or the oldest one
        Long at = next < 0 ? segments.firstKey() : segments.floorKey(next);
        segment = at == null ? segments.firstKey() : at;
        position = 0;
        if (next < 0) {
          next = segment; // its first record starts there
        }
      }
      Long later = segments.higherKey(segment);
      Path file = segments.get(segment);
      boolean whole = readFrom(file, later != null, mark, mayJumpTo, out);
      if (!whole || later == null) {
        return out;
      }
      if (later != next && !(later > next && mayJumpTo.test(later))) {
        throw new Frames.Damage(file, position, next, "its records end at offset " + next
            + ", but the next segment starts at offset " + later).error();
      }
      segment = later; // a finished segment (the writer cut it at its last record before starting the next)
      position = 0;
    }
  }

  /**
   * Reads records from the current position; true if it reached the file's end cleanly. {@code finished}:
   * the writer went on in a later segment.
   */
  private boolean readFrom(Path file, boolean finished, WalMark.State mark, LongPredicate mayJumpTo,
      List<Wal.Record> out) throws IOException {
    ByteBuffer all;
    long size;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      size = ch.size();
      all = ByteBuffer.allocate((int) Math.max(0, size - position)).order(ByteOrder.LITTLE_ENDIAN);
      while (all.hasRemaining() && ch.read(all, position + all.position()) >= 0) {
        // read it all
      }
      all.flip();
    } catch (NoSuchFileException e) {
      return false; // evicted meanwhile: the next poll moves on
    }
    // bytes of this segment the writer recorded as acknowledged
    long acked = finished || mark != null && mark.segment() > segment ? Long.MAX_VALUE
        : mark != null && mark.segment() == segment ? mark.position() : 0;
    int pos = 0;
    CRC32C crc = new CRC32C();
    while (pos < all.limit()) {
      String bad = Frames.problem(all, pos, crc);
      if (bad != null) {
        long at = position;
        long due = next;
        if (at < acked) {
          throw new Frames.Damage(file, at, due, bad + " in a record the log had acknowledged").error();
        }
        int later = Frames.zeroHeader(all, pos) ? -1 : Frames.nextWhole(all, pos + 1, due,
            mark == null ? Long.MAX_VALUE : mark.reserved());
        if (later >= 0) {
          throw new Frames.Damage(file, at, due, bad + ", and a whole record follows at byte "
              + (at + later - pos)).error();
        }
        return false; // still being written
      }
      long first = all.getLong(pos + 8);
      int count = all.getInt(pos + 16);
      int schemaId = all.getInt(pos + 20);
      int length = all.getInt(pos);
      if (first > next && !mayJumpTo.test(first) || count <= 0) {
        throw new Frames.Damage(file, position, next, "record of offsets " + first + "+" + count + " where offset "
            + next + " was next").error();
      }
      if (first >= next) {
        byte[] payload = new byte[length];
        System.arraycopy(all.array(), pos + Wal.HEADER, payload, 0, length);
        out.add(new Wal.Record(first, count, schemaId, ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN)));
        next = first + count;
      }
      pos += Wal.HEADER + length;
      position += Wal.HEADER + length;
    }
    if (position < acked && acked != Long.MAX_VALUE) {
      throw new Frames.Damage(file, position, next, "its records end at byte " + position
          + ", but the log had acknowledged records up to byte " + acked).error();
    }
    return true;
  }
}
