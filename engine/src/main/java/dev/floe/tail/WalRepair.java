package dev.floe.tail;

import dev.floe.FloeException;
import dev.floe.LogRepair;
import dev.floe.SqlState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * Reports where a log is damaged and, when an operator says so, gives up its records from the damage
 * on (docs/recovery.md), for a log that {@link Wal#open} refuses with XX001.
 *
 * <p>A repair keeps every file it changes or drops: the damaged segment is copied to
 * {@code <name>.damaged-<time>} and then cut at the damage (or deleted, if the damage is at its start),
 * later segments are renamed so, and a damaged mark file is copied so. The log then goes on past every
 * offset it ever acknowledged: from the mark's reservation (or, without one, {@value #UNKNOWN_WINDOW}
 * past every offset it can see), recorded as the mark's floor before any segment changes, so that a
 * repair cut short by a crash never lets an offset be used twice either.
 */
public final class WalRepair {
  /** Without a readable reservation, a repair goes on this far past every offset it can see. */
  static final long UNKNOWN_WINDOW = 1L << 32;
  private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss.SSS'Z'")
      .withZone(ZoneOffset.UTC);

  private WalRepair() {}

  /** What a look at the log found: its mark (null: none or unreadable), the scan, what dropping would drop. */
  private record Found(Path dir, WalMark.State mark, FloeException markDamage, Wal.Scan scan, long[] dropped,
      long next) {
    boolean damaged() {
      return scan.damage() != null || markDamage != null;
    }
  }

  /**
   * Reads the log in {@code dir} of table {@code table} (whose watermark is {@code floor}) and reports
   * its damage, and what dropping the records from there on would drop; changes nothing.
   */
  public static LogRepair inspect(String table, Path dir, long floor) {
    return report(table, look(dir, floor), List.of(), false);
  }

  /**
   * As {@link #inspect}, and if the log is damaged, drops the damaged record and everything after it:
   * the rest of its segment and the later segments, keeping the files aside. A sound log is left alone.
   */
  public static LogRepair repair(String table, Path dir, long floor, Instant now) {
    Found found = look(dir, floor);
    if (!found.damaged()) {
      return report(table, found, List.of(), false);
    }
    String suffix = ".damaged-" + STAMP.format(now);
    List<Path> aside = new ArrayList<>();
    try {
      Frames.Damage d = found.scan().damage();
      Long key = d == null ? null : keyOf(found.scan(), d.file());
      if (key != null) {
        aside.add(copyAside(d.file(), suffix));
      }
      if (found.markDamage() != null) {
        aside.add(copyAside(WalMark.file(dir), suffix));
      }
      Wal.syncDirectory(dir);
      // first the new start: whatever a crash leaves from here on, no offset below it is used again
      WalMark.create(dir, new WalMark.State(found.next() + WalMark.BLOCK, found.next(), -1, 0)).close();
      if (key != null) {
        for (Path later : found.scan().segments().tailMap(key, false).values()) {
          Path to = later.resolveSibling(later.getFileName() + suffix);
          Files.move(later, to);
          aside.add(to);
        }
        Wal.syncDirectory(dir);
        cut(d.file(), d.position());
      }
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot repair the log in " + dir + ": " + e.getMessage()
          + "; run the repair again", e);
    }
    return report(table, found, aside, true);
  }

  private static Found look(Path dir, long floor) {
    try {
      WalMark.State mark = null;
      FloeException markDamage = null;
      try {
        mark = WalMark.read(dir).orElse(null);
      } catch (FloeException e) {
        if (!SqlState.DATA_CORRUPTED.equals(e.sqlState())) {
          throw e;
        }
        markDamage = e;
      }
      Wal.Scan scan = Wal.scan(dir, floor, mark, r -> { });
      long[] dropped = dropped(scan);
      long next = Math.max(Math.max(floor, scan.end()), mark == null ? 0 : mark.floor());
      if (scan.damage() != null || markDamage != null) {
        // past every offset the log ever acknowledged
        long seen = Math.max(next, dropped[3]);
        if (!scan.segments().isEmpty()) {
          seen = Math.max(seen, scan.segments().lastKey());
        }
        next = mark != null ? Math.max(seen, mark.reserved()) : Math.addExact(seen, UNKNOWN_WINDOW);
      }
      return new Found(dir, mark, markDamage, scan, dropped, next);
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot read the log in " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * What dropping from the damage on drops: {records, rows of the whole ones, bytes, the offset after
   * the last whole one}.
   */
  private static long[] dropped(Wal.Scan scan) throws IOException {
    long[] totals = new long[4];
    Frames.Damage d = scan.damage();
    Long key = d == null ? null : keyOf(scan, d.file());
    if (key == null) {
      return totals;
    }
    ByteBuffer all = ByteBuffer.wrap(Files.readAllBytes(d.file())).order(ByteOrder.LITTLE_ENDIAN);
    int at = (int) d.position();
    if (at < all.limit() && Frames.problem(all, at, new CRC32C()) != null) {
      totals[0]++; // the damaged record itself
    }
    count(all, at, totals);
    totals[2] += all.limit() - at;
    for (Path later : scan.segments().tailMap(key, false).values()) {
      all = ByteBuffer.wrap(Files.readAllBytes(later)).order(ByteOrder.LITTLE_ENDIAN);
      count(all, 0, totals);
      totals[2] += all.limit();
    }
    return totals;
  }

  /** Adds the whole records of {@code all} from {@code from} on, skipping what is not one, to the totals. */
  private static void count(ByteBuffer all, int from, long[] totals) {
    CRC32C crc = new CRC32C();
    int q = from;
    while (q >= 0 && q <= all.limit() - Wal.HEADER) {
      if (Frames.problem(all, q, crc) == null) {
        totals[0]++;
        totals[1] += Math.max(0, all.getInt(q + 16));
        totals[3] = Math.max(totals[3], all.getLong(q + 8) + Math.max(0, all.getInt(q + 16)));
        q += Frames.size(all, q);
      } else {
        q = Frames.nextWhole(all, q + 1, Long.MIN_VALUE, Long.MAX_VALUE);
      }
    }
  }

  private static Long keyOf(Wal.Scan scan, Path file) {
    for (Map.Entry<Long, Path> e : scan.segments().entrySet()) {
      if (e.getValue().equals(file)) {
        return e.getKey();
      }
    }
    return null; // a missing segment
  }

  private static Path copyAside(Path file, String suffix) throws IOException {
    Path to = file.resolveSibling(file.getFileName() + suffix);
    Files.copy(file, to);
    try (FileChannel ch = FileChannel.open(to, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    return to;
  }

  /** Cuts the segment at {@code position}; one cut at its start goes. */
  private static void cut(Path segment, long position) throws IOException {
    if (position == 0) {
      Files.delete(segment);
    } else {
      try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
        ch.truncate(position);
        ch.force(true);
      }
    }
    Wal.syncDirectory(segment.getParent());
  }

  private static LogRepair report(String table, Found found, List<Path> aside, boolean repaired) {
    Frames.Damage d = found.scan().damage();
    Optional<LogRepair.Damage> damage = d != null
        ? Optional.of(new LogRepair.Damage(d.file(), d.position(), d.message()))
        : found.markDamage() == null ? Optional.empty()
            : Optional.of(new LogRepair.Damage(WalMark.file(found.dir()), 0, found.markDamage().getMessage()));
    long[] dropped = found.dropped();
    return new LogRepair(table, damage, d == null ? -1 : d.offset(), dropped[0], dropped[1], dropped[2],
        found.next(), List.copyOf(aside), repaired);
  }
}
