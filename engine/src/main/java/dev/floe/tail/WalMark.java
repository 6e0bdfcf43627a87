package dev.floe.tail;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The log's mark file ({@value #FILE}), beside its segments: what replay cannot learn from the segments
 * alone.
 *
 * <ul>
 *   <li><b>reserved</b>: no offset at or above it was ever acknowledged. The writer raises it, with an
 *       fsync of this file, {@value #BLOCK} offsets ahead of the appends, so one append in about half a
 *       million pays for it; a repair that drops damaged records goes on from here, and so never hands
 *       out an offset a lost record had.
 *   <li><b>floor</b>: the least next offset, set by a repair (see {@link WalRepair}); replay accepts a
 *       jump in the offsets up to it.
 *   <li><b>sound</b>: a segment and a byte position in it: every record before that position was
 *       fdatasync'ed before the writer acknowledged it. Written after every flush, without an fsync: a
 *       process that is killed leaves it in the page cache, so after a crash it names exactly what was
 *       acknowledged; after an operating-system crash it may lag, never lead.
 * </ul>
 *
 * <p>Each value is kept in two slots, in different pages, written in turn and checked by a CRC32C: a
 * write torn by a crash leaves the other slot, which held the previous value. A slot that is forced
 * to disk is not written again until the next one is forced.
 */
final class WalMark implements AutoCloseable {
  static final String FILE = "wal.mark";
  /** How far ahead of the appends the reservation is raised (offsets). */
  static final long BLOCK = 1 << 20;
  private static final int MAGIC = 0x464c4f45; // "FLOE"
  private static final int SLOT = 32;
  private static final int PAGE = 4096;
  /** Slots 0 and 1 hold reserved and floor; slots 2 and 3 the sound position. One page each. */
  private static final int SIZE = 4 * PAGE;

  /** What the mark says; a sound segment of -1 names none. */
  record State(long reserved, long floor, long segment, long position) {
    State withSound(long newSegment, long newPosition) {
      return new State(reserved, floor, newSegment, newPosition);
    }
  }

  private final Path file;
  private final FileChannel channel;
  private final ByteBuffer slot = ByteBuffer.allocateDirect(SLOT).order(ByteOrder.LITTLE_ENDIAN);
  private final CRC32C crc = new CRC32C();
  private long durableSeq;
  private long soundSeq;

  private WalMark(Path file, FileChannel channel, long durableSeq, long soundSeq) {
    this.file = file;
    this.channel = channel;
    this.durableSeq = durableSeq;
    this.soundSeq = soundSeq;
  }

  static Path file(Path dir) {
    return dir.resolve(FILE);
  }

  /**
   * The mark in {@code dir}; empty if there is none (a new log, or one written before marks were kept).
   *
   * @throws FloeException XX001 if the file is there but neither slot of a value can be read
   */
  static Optional<State> read(Path dir) throws IOException {
    Path file = file(dir);
    ByteBuffer[] slots = new ByteBuffer[4];
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      for (int i = 0; i < slots.length; i++) {
        slots[i] = ByteBuffer.allocate(SLOT).order(ByteOrder.LITTLE_ENDIAN);
        while (slots[i].hasRemaining() && ch.read(slots[i], (long) i * PAGE + slots[i].position()) >= 0) {
          // read the slot
        }
      }
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
    long[] durable = newest(slots, 0);
    long[] sound = newest(slots, 2);
    if (durable == null || sound == null) {
      throw new FloeException(SqlState.DATA_CORRUPTED, "log mark file " + file + " is damaged: no readable copy of "
          + (durable == null ? "the reserved offsets" : "the acknowledged position"), null,
          "Run floe tail repair TABLE --drop-from-damage to write it again (docs/recovery.md).", 0, null);
    }
    return Optional.of(new State(durable[1], durable[2], sound[1], sound[2]));
  }

  /** The valid one of slots {@code first} and {@code first + 1} with the higher sequence: {seq, a, b}. */
  private static long[] newest(ByteBuffer[] slots, int first) {
    long[] best = null;
    CRC32C crc = new CRC32C();
    for (int i = first; i < first + 2; i++) {
      ByteBuffer slot = slots[i];
      if (slot.hasRemaining() || slot.getInt(0) != MAGIC) {
        continue; // cut short, or never written
      }
      crc.reset();
      crc.update(slot.array(), 0, SLOT - 4);
      if ((int) crc.getValue() != slot.getInt(SLOT - 4)) {
        continue;
      }
      long seq = slot.getLong(4);
      if (best == null || seq > best[0]) {
        best = new long[] {seq, slot.getLong(12), slot.getLong(20)};
      }
    }
    return best;
  }

  /**
   * Writes a new mark file holding {@code state} (both slots of each value), durably: written aside,
   * fsynced, then moved over any old one.
   */
  static WalMark create(Path dir, State state) throws IOException {
    Path file = file(dir);
    Path tmp = dir.resolve(FILE + ".tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
        StandardOpenOption.WRITE)) {
      WalMark m = new WalMark(tmp, ch, 0, 0);
      ch.write(ByteBuffer.allocate(SIZE), 0);
      m.put(0, 0, state.reserved(), state.floor());
      m.put(1, 1, state.reserved(), state.floor());
      m.put(2, 0, state.segment(), state.position());
      m.put(3, 1, state.segment(), state.position());
      ch.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    Wal.syncDirectory(dir);
    return new WalMark(file, FileChannel.open(file, StandardOpenOption.WRITE), 1, 1);
  }

  /** Records durably that no offset at or above {@code reserved} is acknowledged, and the floor. */
  void reserve(long reserved, long floor) throws IOException {
    durableSeq++;
    put((int) (durableSeq & 1), durableSeq, reserved, floor);
    channel.force(false);
  }

  /**
   * Records that every record of segment {@code segment} before byte {@code position} is durable and
   * acknowledged; not forced (see the class comment).
   */
  void sound(long segment, long position) throws IOException {
    soundSeq++;
    put(2 + (int) (soundSeq & 1), soundSeq, segment, position);
  }

  void force() throws IOException {
    channel.force(false);
  }

  private void put(int index, long seq, long a, long b) throws IOException {
    slot.clear();
    slot.putInt(0, MAGIC).putLong(4, seq).putLong(12, a).putLong(20, b);
    crc.reset();
    slot.limit(SLOT - 4);
    crc.update(slot);
    slot.clear();
    slot.putInt(SLOT - 4, (int) crc.getValue());
    long at = (long) index * PAGE;
    while (slot.hasRemaining()) {
      channel.write(slot, at + slot.position());
    }
  }

  Path path() {
    return file;
  }

  boolean isOpen() {
    return channel.isOpen();
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
