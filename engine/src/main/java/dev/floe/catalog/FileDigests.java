package dev.floe.catalog;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32C;

/**
 * Whole-file checksums of the table files Floe writes, so that a file damaged on disk is an error naming
 * it, never a wrong answer. DuckDB neither writes nor checks Parquet's page CRCs, so Floe takes each
 * file's CRC-32C when it is written (on the fsync thread, while the file is in the page cache,
 * {@link Durable}), records it in the catalog with the commit that names the file, and checks it the
 * first time this process reads the file ({@link #verify}); {@code floe verify} checks every file again.
 * Files other engines wrote have no digest and are read unchecked.
 */
public final class FileDigests {
  /** A file's length and CRC-32C as written. */
  public record Digest(String location, long length, int crc32c) {}

  /** A file whose bytes are not what was written, or that cannot be read. */
  public record Problem(String location, String what) {}

  private static final String MISSING = "it is missing";

  private final DigestStore store;
  /** Files this process has checked (files are immutable: a path is never rewritten). */
  private final Set<String> verified = ConcurrentHashMap.newKeySet();

  FileDigests(DigestStore store) {
    this.store = store;
  }

  /** Whether Floe records the digest of a file of this name: data and delete files, manifests, metadata. */
  static boolean recorded(Path file) {
    String name = file.getFileName().toString();
    return !name.startsWith(".") && (name.endsWith(".parquet") || name.endsWith(".puffin") || name.endsWith(".avro")
        || name.endsWith(".metadata.json"));
  }

  /** The digest of a file as it is now; null if it is gone. */
  static Digest compute(Path file) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      CRC32C crc = new CRC32C();
      ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
      long length = 0;
      while (ch.read(buf) >= 0) {
        buf.flip();
        length += buf.remaining();
        crc.update(buf);
        buf.clear();
      }
      return new Digest(file.toString(), length, (int) crc.getValue());
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      throw new UncheckedIOException("Failed to read " + file, e);
    }
  }

  /**
   * Checks, once per process, that each file whose digest was recorded still has it.
   *
   * @return those of {@code locations} seen for the first time that have no digest (another engine wrote
   *     them), for the caller to check as it can
   * @throws FloeException XX001 naming the first damaged file
   */
  public List<String> verify(Collection<String> locations) {
    List<String> unchecked = new ArrayList<>();
    for (String l : locations) {
      if (!verified.contains(l) && isLocal(l)) {
        unchecked.add(l); // files on object storage have their own checksums, checked by their store
      }
    }
    if (unchecked.isEmpty()) {
      return List.of();
    }
    Map<String, Digest> expected = store.digests(unchecked.stream().map(FileDigests::local).toList());
    List<Problem> problems = compare(expected.values());
    if (!problems.isEmpty()) {
      Problem p = problems.get(0);
      if (p.what().equals(MISSING)) {
        throw new FloeException(SqlState.IO_ERROR, "could not open file \"" + p.location()
            + "\": No such file or directory", null, "A file the table needs was deleted (docs/recovery.md).", 0, null);
      }
      throw damaged(p);
    }
    List<String> without = new ArrayList<>();
    for (String l : unchecked) {
      if (!expected.containsKey(local(l))) {
        without.add(l);
      }
    }
    verified.addAll(unchecked);
    return without;
  }

  private static boolean isLocal(String location) {
    int scheme = location.indexOf("://");
    return scheme < 0 || location.startsWith("file:");
  }

  /** The key a file's digest is recorded under: its absolute local path. */
  private static String local(String location) {
    return LocalFileIO.toPath(location).toAbsolutePath().normalize().toString();
  }

  /** XX001 for a damaged file, naming it. */
  public static FloeException damaged(Problem p) {
    return new FloeException(SqlState.DATA_CORRUPTED, "file \"" + p.location() + "\" is damaged: " + p.what(),
        null, "Restore the file from a copy, or roll the table back to a version that does not use it (docs/recovery.md).",
        0, null);
  }

  /** Reads every file with a recorded digest again, and says which do not match. */
  public List<Problem> check(Collection<String> locations) {
    return compare(store.digests(locations.stream().filter(FileDigests::isLocal).map(FileDigests::local).toList())
        .values());
  }

  private static List<Problem> compare(Collection<Digest> expected) {
    List<Problem> problems = new ArrayList<>();
    for (Digest want : expected) {
      Digest got;
      try {
        got = compute(LocalFileIO.toPath(want.location()));
      } catch (UncheckedIOException e) {
        problems.add(new Problem(want.location(), "it cannot be read: " + e.getCause().getMessage()));
        continue;
      }
      if (got == null) {
        problems.add(new Problem(want.location(), MISSING));
      } else if (got.length() != want.length()) {
        problems.add(new Problem(want.location(), "it has " + got.length() + " bytes, " + want.length()
            + " were written"));
      } else if (got.crc32c() != want.crc32c()) {
        problems.add(new Problem(want.location(), "its checksum does not match the one recorded when it was written"));
      }
    }
    return problems;
  }

  /** How many of {@code locations} have a recorded digest. */
  public int known(Collection<String> locations) {
    return store.digests(locations.stream().filter(FileDigests::isLocal).map(FileDigests::local).toList()).size();
  }

  /** Drops the digests of files that were deleted. */
  public void forget(Collection<String> locations) {
    List<String> keys = locations.stream().filter(FileDigests::isLocal).map(FileDigests::local).toList();
    verified.removeAll(locations);
    verified.removeAll(keys);
    store.forget(keys);
  }
}
