package dev.floe.catalog;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * A {@link FileIO} over object storage that keeps local copies: DuckDB reads only local files, and a
 * table's metadata is read far more often than it changes. Every file read is first copied whole into
 * the cache directory (files are immutable once written: Iceberg never rewrites a location); every file
 * written is written locally, then uploaded, and kept. Metadata (JSON, Avro) stays; data files are
 * trimmed least recently used first ({@link #trim}).
 *
 * <p>A local copy sits at {@code <dir>/<scheme>/<bucket>/<key>}.
 */
public final class CachedFileIO implements FileIO {
  private final FileIO remote;
  private final Path dir;

  public CachedFileIO(FileIO remote, Path dir) {
    this.remote = remote;
    this.dir = dir;
  }

  /** The object store underneath. */
  public FileIO remote() {
    return remote;
  }

  /** Where the local copies are. */
  public Path cache() {
    return dir;
  }

  /** Where the local copy of {@code location} is (whether or not it is there). */
  public Path copyPath(String location) {
    int scheme = location.indexOf("://");
    if (scheme < 0) {
      throw new IllegalArgumentException("not an object store location: " + location);
    }
    Path p = dir.resolve(location.substring(0, scheme));
    for (String part : location.substring(scheme + 3).split("/+")) {
      if (part.isEmpty() || part.equals(".") || part.equals("..")) {
        continue;
      }
      p = p.resolve(part);
    }
    return p;
  }

  /**
   * The local copy of {@code location}, fetched whole from the object store if it is not here yet.
   *
   * @throws FloeException 58030 if the object store cannot give it
   */
  public Path localCopy(String location) {
    Path local = copyPath(location);
    if (Files.exists(local)) {
      touch(local);
      return local;
    }
    Path tmp = temp(local);
    try (InputStream in = remote.newInputFile(location).newStream()) {
      Files.createDirectories(local.getParent());
      Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
      place(tmp, local);
      return local;
    } catch (IOException | RuntimeException e) {
      deleteQuietly(tmp);
      if (e instanceof org.apache.iceberg.exceptions.NotFoundException) {
        throw new FloeException(SqlState.UNDEFINED_FILE, "file " + location + " is not in object storage", e);
      }
      throw new FloeException(SqlState.IO_ERROR, "cannot read " + location + " from object storage: "
          + e.getMessage(), e);
    }
  }

  /**
   * Makes {@code file} (a local file just uploaded to {@code location}) the local copy of it: linked,
   * or copied where a link cannot be made.
   */
  public void adopt(Path file, String location) {
    Path local = copyPath(location);
    try {
      Files.createDirectories(local.getParent());
      try {
        Files.createLink(local, file);
      } catch (FileAlreadyExistsException e) {
        // kept already
      } catch (UnsupportedOperationException | IOException e) {
        Path tmp = temp(local);
        Files.copy(file, tmp, StandardCopyOption.REPLACE_EXISTING);
        place(tmp, local);
      }
    } catch (IOException e) {
      // only a copy: the next read fetches it
    }
  }

  /**
   * Deletes local copies of data files (not metadata) least recently used first until the copies take
   * at most {@code maxBytes}, sparing any used in the last {@code idleMillis} (a query may be reading
   * it).
   *
   * @return the number of files deleted
   */
  public int trim(long maxBytes, long idleMillis) {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    record Copy(Path path, long size, long used) {}
    List<Copy> data = new ArrayList<>();
    long total = 0;
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) walk.filter(Files::isRegularFile)::iterator) {
        try {
          long size = Files.size(p);
          total += size;
          if (p.getFileName().toString().endsWith(".parquet")) {
            data.add(new Copy(p, size, Files.getLastModifiedTime(p).toMillis()));
          }
        } catch (NoSuchFileException e) {
          // trimmed or replaced meanwhile
        }
      }
    } catch (IOException | UncheckedIOException e) {
      return 0;
    }
    data.sort(Comparator.comparingLong(Copy::used));
    long now = System.currentTimeMillis();
    int deleted = 0;
    for (Copy c : data) {
      if (total <= maxBytes || now - c.used() < idleMillis) {
        break;
      }
      deleteQuietly(c.path());
      total -= c.size();
      deleted++;
    }
    return deleted;
  }

  @Override
  public InputFile newInputFile(String location) {
    return new CopiedInput(location);
  }

  @Override
  public OutputFile newOutputFile(String location) {
    return new UploadedOutput(location);
  }

  @Override
  public void deleteFile(String location) {
    deleteQuietly(copyPath(location));
    remote.deleteFile(location);
  }

  @Override
  public Map<String, String> properties() {
    return remote.properties();
  }

  @Override
  public void close() {
    remote.close();
  }

  /** Marks a local copy used now ({@link #trim} spares it); false if there is no such copy. */
  static boolean touch(Path local) {
    try {
      Files.setLastModifiedTime(local, FileTime.fromMillis(System.currentTimeMillis()));
      return true;
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException e) {
      return Files.exists(local); // only the trim order suffers
    }
  }

  private static Path temp(Path local) {
    return local.resolveSibling("." + local.getFileName() + "." + UUID.randomUUID() + ".tmp");
  }

  private static void place(Path tmp, Path local) throws IOException {
    try {
      Files.move(tmp, local, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, local, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      // left for the next trim
    }
  }

  /** A file read from its local copy, named by its object store location. */
  private final class CopiedInput implements InputFile {
    private final String location;
    private Path local;

    CopiedInput(String location) {
      this.location = location;
    }

    private Path local() {
      if (local == null) {
        local = localCopy(location);
      }
      return local;
    }

    @Override
    public long getLength() {
      try {
        return Files.size(local());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public SeekableInputStream newStream() {
      return org.apache.iceberg.Files.localInput(local().toFile()).newStream();
    }

    @Override
    public String location() {
      return location;
    }

    @Override
    public boolean exists() {
      return Files.exists(copyPath(location)) || remote.newInputFile(location).exists();
    }
  }

  /** A file written locally and uploaded to its location when closed. */
  private final class UploadedOutput implements OutputFile {
    private final String location;

    UploadedOutput(String location) {
      this.location = location;
    }

    @Override
    public PositionOutputStream create() {
      // Object storage has no exclusive create: a check before the upload would cost a request per file and
      // still race. Every name Floe and Iceberg write is unique (a UUID in each data, delete, manifest and
      // manifest list name; FloeTableOperations gives metadata files on object storage one too), so none is
      // ever written twice.
      return createOrOverwrite();
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
      Path local = copyPath(location);
      Path tmp = temp(local);
      try {
        Files.createDirectories(local.getParent());
        OutputStream out = Files.newOutputStream(tmp);
        return new PositionOutputStream() {
          private long pos;
          private boolean closed;

          @Override
          public long getPos() {
            return pos;
          }

          @Override
          public void write(int b) throws IOException {
            out.write(b);
            pos++;
          }

          @Override
          public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            pos += len;
          }

          @Override
          public void close() throws IOException {
            if (closed) {
              return;
            }
            closed = true;
            out.close();
            try {
              upload(tmp, location);
              place(tmp, local);
            } finally {
              deleteQuietly(tmp);
            }
          }
        };
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write " + location + " locally", e);
      }
    }

    @Override
    public String location() {
      return location;
    }

    @Override
    public InputFile toInputFile() {
      return newInputFile(location);
    }
  }

  /** Uploads a local file to {@code location}. */
  public void upload(Path file, String location) throws IOException {
    try (InputStream in = Files.newInputStream(file);
        OutputStream out = remote.newOutputFile(location).createOrOverwrite()) {
      in.transferTo(out);
    }
  }
}
