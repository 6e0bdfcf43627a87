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
import java.util.zip.CRC32C;

/**
 * Follows a log another process writes, read-only: each {@link #poll} returns the records completed
 * since the last one. It never changes a file. A record still being written (incomplete, or failing
 * its checksum, or the zeroed space ahead of the writer) ends a poll, and the next poll reads it again
 * from there. Segments the writer evicted are skipped: their rows are in the table.
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

  /** The records written since the last poll, in order. */
  List<Wal.Record> poll() throws IOException {
    List<Wal.Record> out = new ArrayList<>();
    while (true) {
      TreeMap<Long, Path> segments = segments();
      if (segments.isEmpty()) {
        return out;
      }
      if (segment < 0 || !segments.containsKey(segment)) {
        // the first poll, or the writer evicted the segment being read: go on from the oldest still
        // there that holds the next offset, or the oldest one
        Long at = next < 0 ? segments.firstKey() : segments.floorKey(next);
        segment = at == null ? segments.firstKey() : at;
        position = 0;
      }
      boolean whole = readFrom(segments.get(segment), out);
      Long later = segments.higherKey(segment);
      if (!whole || later == null) {
        return out;
      }
      segment = later; // a finished segment (the writer cut it at its last record before starting the next)
      position = 0;
    }
  }

  /** Reads records from the current position; true if it reached the file's end cleanly. */
  private boolean readFrom(Path file, List<Wal.Record> out) throws IOException {
    ByteBuffer all;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size <= position) {
        return size == position;
      }
      all = ByteBuffer.allocate((int) (size - position)).order(ByteOrder.LITTLE_ENDIAN);
      while (all.hasRemaining() && ch.read(all, position + all.position()) >= 0) {
        // read it all
      }
      all.flip();
    } catch (NoSuchFileException e) {
      return false; // evicted meanwhile: the next poll moves on
    }
    int pos = 0;
    CRC32C crc = new CRC32C();
    while (pos < all.limit()) {
      if (all.limit() - pos < Wal.HEADER) {
        return false;
      }
      int length = all.getInt(pos);
      if (length < 0 || length > Wal.MAX_PAYLOAD || length > all.limit() - pos - Wal.HEADER) {
        return false;
      }
      crc.reset();
      crc.update(all.array(), pos + 8, Wal.HEADER - 8 + length);
      if ((int) crc.getValue() != all.getInt(pos + 4)) {
        return false;
      }
      long first = all.getLong(pos + 8);
      int count = all.getInt(pos + 16);
      int schemaId = all.getInt(pos + 20);
      if (next < 0 || first >= next) {
        byte[] payload = new byte[length];
        System.arraycopy(all.array(), pos + Wal.HEADER, payload, 0, length);
        out.add(new Wal.Record(first, count, schemaId, ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN)));
        next = first + count;
      }
      pos += Wal.HEADER + length;
      position += Wal.HEADER + length;
    }
    return true;
  }

  private TreeMap<Long, Path> segments() throws IOException {
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
          } catch (NumberFormatException ignored) {
            // not a segment
          }
        }
      }
    }
    return segments;
  }
}
