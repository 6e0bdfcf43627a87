package dev.floe.tail;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Reading the frames of log records in a segment's bytes (see {@link Wal} for the layout), and telling
 * a torn tail from damage: shared by replay, the read-only {@link WalTailer} and {@link WalRepair}.
 */
final class Frames {
  private Frames() {}

  /** Where a log stops making sense, and why; {@code offset} is the offset the record there should start at. */
  record Damage(Path file, long position, long offset, String problem) {
    String message() {
      return "log segment " + file + " is damaged at byte " + position + ": " + problem;
    }

    FloeException error() {
      return new FloeException(SqlState.DATA_CORRUPTED, message(), "Rows from offset " + offset + " on are not "
          + "readable.",
          "Restore the file from a backup, or give up the rows from the damage on with floe tail repair TABLE "
              + "--drop-from-damage (docs/recovery.md).", 0, null);
    }
  }

  /** What is wrong with the record at {@code pos} of {@code all} (its limit: the bytes there are); null if nothing. */
  static String problem(ByteBuffer all, int pos, CRC32C crc) {
    if (all.limit() - pos < Wal.HEADER) {
      return "incomplete record header";
    }
    int length = all.getInt(pos);
    if (length < 0 || length > Wal.MAX_PAYLOAD) {
      return "record length " + length + " is out of range";
    }
    if (length > all.limit() - pos - Wal.HEADER) {
      return "incomplete record";
    }
    crc.reset();
    crc.update(all.array(), all.arrayOffset() + pos + 8, Wal.HEADER - 8 + length);
    if ((int) crc.getValue() != all.getInt(pos + 4)) {
      return "checksum mismatch";
    }
    return null;
  }

  /** The bytes of the record at {@code pos}, header included (its frame must be whole). */
  static int size(ByteBuffer all, int pos) {
    return Wal.HEADER + all.getInt(pos);
  }

  /** Whether the (at most {@link Wal#HEADER}) bytes at {@code pos} are zeros: the space ahead of the writes. */
  static boolean zeroHeader(ByteBuffer all, int pos) {
    for (int i = pos; i < Math.min(all.limit(), pos + Wal.HEADER); i++) {
      if (all.get(i) != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * The position of the first whole record after {@code from} that could have been written after a
   * record starting at offset {@code minFirst}: rows from {@code minFirst} on (below {@code below}, when
   * the reservation is known) and a matching checksum; -1 if there is none. Appends are written in
   * order, each batch only after the one before was fsynced, so such a record proves that whatever
   * lies before it was acknowledged, not torn.
   */
  static int nextWhole(ByteBuffer all, int from, long minFirst, long below) {
    CRC32C crc = new CRC32C();
    for (int q = from; q <= all.limit() - Wal.HEADER; q++) {
      int length = all.getInt(q);
      if (length < 0 || length > all.limit() - q - Wal.HEADER) {
        continue;
      }
      long first = all.getLong(q + 8);
      int count = all.getInt(q + 16);
      if (count <= 0 || first < minFirst || first >= below) {
        continue;
      }
      if (problem(all, q, crc) == null) {
        return q;
      }
    }
    return -1;
  }
}
