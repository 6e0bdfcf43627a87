package dev.floe.catalog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * Iceberg {@link FileIO} for local paths over java.nio, without Hadoop.
 *
 * <p>Durability contract: closing an {@link OutputFile}'s stream registers the file with {@link Durable},
 * and the commit that names it fsyncs it and its directory before the catalog swap. A file Iceberg has
 * finished writing is therefore on disk before any committed metadata names it. {@link OutputFile#create()} fails if the file exists, so two writers can never clobber one file.
 *
 * <p>Accepts plain absolute paths as well as {@code file:/...} and {@code file:///...} URIs, the forms
 * other engines (Spark's HadoopFileIO, PyIceberg) write into metadata.
 */
public final class LocalFileIO implements FileIO {
  private static final long serialVersionUID = 1L;

  @Override
  public void initialize(Map<String, String> properties) {}

  @Override
  public InputFile newInputFile(String location) {
    return new LocalInputFile(location, toPath(location), -1);
  }

  @Override
  public InputFile newInputFile(String location, long length) {
    return new LocalInputFile(location, toPath(location), length);
  }

  @Override
  public OutputFile newOutputFile(String location) {
    return new LocalOutputFile(location, toPath(location));
  }

  @Override
  public void deleteFile(String location) {
    try {
      Files.deleteIfExists(toPath(location));
    } catch (IOException e) {
      throw new UncheckedIOException("Failed to delete " + location, e);
    }
  }

  /** The local path of an Iceberg location string. */
  public static Path toPath(String location) {
    String p = location;
    if (p.startsWith("file://")) {
      p = p.substring("file://".length());
    } else if (p.startsWith("file:")) {
      p = p.substring("file:".length());
    }
    if (p.contains("://")) {
      throw new IllegalArgumentException("Not a local path: " + location);
    }
    return Path.of(p);
  }

  /** fsync a directory so that entries created or renamed in it survive a crash. */
  public static void syncDirectory(Path dir) {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      throw new UncheckedIOException("Failed to sync directory " + dir, e);
    }
  }

  /** fsync a file's contents. */
  public static void syncFile(Path file) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.force(true);
    } catch (IOException e) {
      throw new UncheckedIOException("Failed to sync " + file, e);
    }
  }

  private record LocalInputFile(String location, Path path, long knownLength) implements InputFile {
    @Override
    public long getLength() {
      if (knownLength >= 0) {
        return knownLength;
      }
      try {
        return Files.size(path);
      } catch (NoSuchFileException e) {
        throw new NotFoundException(e, "File does not exist: %s", location);
      } catch (IOException e) {
        throw new UncheckedIOException("Failed to get length of " + location, e);
      }
    }

    @Override
    public SeekableInputStream newStream() {
      try {
        return new ChannelInputStream(FileChannel.open(path, StandardOpenOption.READ));
      } catch (NoSuchFileException e) {
        // Iceberg's own file IO's words, which its clients (and the REST compatibility tests) match on
        throw new NotFoundException(e, "Failed to open input stream for file: %s", location);
      } catch (IOException e) {
        throw new UncheckedIOException("Failed to open " + location, e);
      }
    }

    @Override
    public boolean exists() {
      return Files.exists(path);
    }
  }

  private record LocalOutputFile(String location, Path path) implements OutputFile {
    @Override
    public PositionOutputStream create() {
      return open(StandardOpenOption.CREATE_NEW);
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
      return open(StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
    }

    private PositionOutputStream open(StandardOpenOption... mode) {
      try {
        Path parent = path.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
          Files.createDirectories(parent);
        }
        StandardOpenOption[] options = new StandardOpenOption[mode.length + 1];
        System.arraycopy(mode, 0, options, 0, mode.length);
        options[mode.length] = StandardOpenOption.WRITE;
        return new ChannelOutputStream(FileChannel.open(path, options), path);
      } catch (FileAlreadyExistsException e) {
        throw new AlreadyExistsException(e, "File already exists: %s", location);
      } catch (IOException e) {
        throw new UncheckedIOException("Failed to create " + location, e);
      }
    }

    @Override
    public InputFile toInputFile() {
      return new LocalInputFile(location, path, -1);
    }
  }

  private static final class ChannelInputStream extends SeekableInputStream {
    private final FileChannel channel;
    private final ByteBuffer one = ByteBuffer.allocate(1);

    ChannelInputStream(FileChannel channel) {
      this.channel = channel;
    }

    @Override
    public long getPos() throws IOException {
      return channel.position();
    }

    @Override
    public void seek(long newPos) throws IOException {
      channel.position(newPos);
    }

    @Override
    public int read() throws IOException {
      one.clear();
      int n = channel.read(one);
      return n <= 0 ? -1 : one.get(0) & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      return channel.read(ByteBuffer.wrap(b, off, len));
    }

    @Override
    public long skip(long n) throws IOException {
      long pos = channel.position();
      long target = Math.min(pos + Math.max(n, 0), channel.size());
      channel.position(target);
      return target - pos;
    }

    @Override
    public int available() throws IOException {
      return (int) Math.min(Integer.MAX_VALUE, channel.size() - channel.position());
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }

  private static final class ChannelOutputStream extends PositionOutputStream {
    private static final int BUFFER = 64 * 1024;
    private final FileChannel channel;
    private final Path path;
    private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
    private long pos;
    private boolean closed;

    ChannelOutputStream(FileChannel channel, Path path) {
      this.channel = channel;
      this.path = path;
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public void write(int b) throws IOException {
      if (!buffer.hasRemaining()) {
        drain();
      }
      buffer.put((byte) b);
      pos++;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      if (len > buffer.remaining()) {
        drain();
        if (len > buffer.capacity()) {
          ByteBuffer src = ByteBuffer.wrap(b, off, len);
          while (src.hasRemaining()) {
            channel.write(src);
          }
          pos += len;
          return;
        }
      }
      buffer.put(b, off, len);
      pos += len;
    }

    private void drain() throws IOException {
      buffer.flip();
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
      buffer.clear();
    }

    @Override
    public void flush() throws IOException {
      drain();
    }

    @Override
    public void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      try {
        drain();
      } finally {
        channel.close();
      }
      Durable.later(path);
    }
  }
}
