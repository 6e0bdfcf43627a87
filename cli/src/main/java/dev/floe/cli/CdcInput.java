package dev.floe.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * The input of {@code floe cdc apply} (docs/cdc.md): a file, a directory's files in name order, or standard
 * input, read on its own thread into a queue of lines. Each line knows where it is ({@code <file>:<line>})
 * and the CRC-32C of the input's lines up to it, so a batch records a position that says which input it was
 * read from ({@code 0002.json:3 crc32c=5f1d0a2c}).
 *
 * <p>Run again, the input resumes after the table's position only if it holds that position with the same
 * lines before it; otherwise it is read from its start (a directory of another day with the same file names,
 * a file rewritten under its name), and every envelope applied before changes nothing again. Skipping by
 * name alone would skip envelopes never applied.
 */
final class CdcInput implements Runnable {
  /** A line of input, where it is, the CRC-32C of the input's lines through it; or the end, or a read error. */
  record Line(String text, String file, long number, long crc, boolean end, IOException error) {
    /** {@code <file>:<line>}. */
    String where() {
      return file + ":" + number;
    }

    /** The position a batch ending at this line records. */
    String position() {
      return where() + " crc32c=" + String.format("%08x", crc);
    }
  }

  private static final Pattern POSITION = Pattern.compile("(.+):(\\d+) crc32c=([0-9a-f]{8})");

  final BlockingQueue<Line> queue = new ArrayBlockingQueue<>(100_000);
  private final Path source;
  private final InputStream stdin;
  private final boolean follow;
  private final long pollMs;
  /** The CRC-32C of the lines read so far, each but the last followed by a newline. */
  private CRC32C crc = new CRC32C();
  private boolean anyLine;
  /** Where reading resumes: the lines of this file up to {@link #resumeLine} are committed already (null: none). */
  private String resumeFile;
  private long resumeLine;
  /** What the input said about the position it was given, for the user (null: nothing to say). */
  private String notice;

  /**
   * An input of {@code source} (null: standard input, {@code stdin}), resuming after {@code resume} (the table's
   * position) when the input holds it.
   */
  CdcInput(Path source, InputStream stdin, Optional<String> resume, boolean follow, long pollMs) {
    this.source = source;
    this.stdin = stdin;
    this.follow = follow;
    this.pollMs = Math.max(10, Math.min(pollMs, 500));
    if (source != null) {
      resume.ifPresent(this::resume);
    }
  }

  /** What to tell the user about where reading starts ("resuming after ..."), if anything. */
  Optional<String> notice() {
    return Optional.ofNullable(notice);
  }

  /** Resumes after {@code position} if this input holds it, with the same lines before it. */
  private void resume(String position) {
    Matcher m = POSITION.matcher(position);
    String replay = ": reading all of it (envelopes applied before change nothing)";
    if (!m.matches()) {
      notice = "the table's position, " + position + ", is not a place in this input" + replay;
      return;
    }
    String file = m.group(1);
    long line = Long.parseLong(m.group(2));
    long expected = Long.parseUnsignedLong(m.group(3), 16);
    CRC32C at = null;
    try {
      at = crcThrough(file, line);
    } catch (IOException e) {
      // unreadable now: read from the start, where the error will be reported
    }
    if (at == null || at.getValue() != expected) {
      notice = "the input is not the one the table's position " + file + ":" + line + " was read from" + replay;
      return;
    }
    crc = at;
    anyLine = true;
    resumeFile = file;
    resumeLine = line;
    notice = "resuming after " + file + ":" + line;
  }

  /** The CRC-32C of the input's lines through line {@code line} of {@code file}; null if the input has no such line. */
  private CRC32C crcThrough(String file, long line) throws IOException {
    CRC32C sum = new CRC32C();
    boolean[] any = {false};
    for (Path f : files()) {
      boolean target = name(f).equals(file);
      long[] n = {0};
      try (InputStream in = Files.newInputStream(f)) {
        boolean stopped = split(in, (b, off, len) -> {
          if (any[0]) {
            sum.update('\n');
          }
          any[0] = true;
          sum.update(b, off, len);
          return !(target && ++n[0] == line);
        });
        if (target) {
          return stopped ? sum : null;
        }
      }
    }
    return null;
  }

  private List<Path> files() {
    if (source == null) {
      return List.of();
    }
    if (!Files.isDirectory(source)) {
      return List.of(source);
    }
    try (var s = Files.list(source)) {
      return s.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().startsWith("."))
          .sorted().toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  private String name(Path file) {
    return Files.isDirectory(source) ? source.relativize(file).toString() : file.getFileName().toString();
  }

  @Override
  public void run() {
    try {
      if (source == null) {
        read(stdin, "-", 0);
      } else {
        readFiles();
      }
      queue.put(new Line(null, null, 0, 0, true, null));
    } catch (IOException e) {
      put(new Line(null, null, 0, 0, true, e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void put(Line l) {
    try {
      queue.put(l);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void readFiles() throws IOException, InterruptedException {
    Set<String> done = new HashSet<>();
    boolean skipping = resumeFile != null;
    while (true) {
      List<Path> files = files();
      boolean progressed = false;
      for (int i = 0; i < files.size(); i++) {
        Path f = files.get(i);
        String name = name(f);
        if (done.contains(name)) {
          continue;
        }
        long skip = 0;
        if (skipping) {
          if (!name.equals(resumeFile)) {
            done.add(name); // before the position: committed already (the CRC says these are its lines)
            continue;
          }
          skipping = false;
          skip = resumeLine;
        }
        if (follow && i == files.size() - 1) {
          tail(f, name, skip); // returns only when a newer file appears
        } else {
          try (InputStream in = Files.newInputStream(f)) {
            read(in, name, skip);
          }
        }
        done.add(name);
        progressed = true;
      }
      if (!follow) {
        return;
      }
      if (!progressed) {
        Thread.sleep(pollMs);
      }
    }
  }

  /** Queues the lines of {@code in} after its first {@code skip} (blank ones counted, not queued). */
  private void read(InputStream in, String name, long skip) throws IOException, InterruptedException {
    Lines lines = new Lines(name, skip);
    try {
      split(in, lines);
    } catch (Interrupted e) {
      throw e.cause;
    }
  }

  /** Follows the last file: its lines as they are completed, until a file after it appears. */
  private void tail(Path f, String name, long skip) throws IOException, InterruptedException {
    Lines lines = new Lines(name, skip);
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "r")) {
      Splitter splitter = new Splitter(lines);
      byte[] buf = new byte[1 << 16];
      while (true) {
        int read = raf.read(buf);
        if (read > 0) {
          splitter.bytes(buf, read);
          continue;
        }
        List<Path> files = files();
        if (!files.isEmpty() && !files.get(files.size() - 1).equals(f)) {
          splitter.end(); // a last line without its newline: the file is complete
          return;
        }
        Thread.sleep(pollMs);
      }
    } catch (Interrupted e) {
      throw e.cause;
    }
  }

  /** Takes a line's bytes ({@code b[off..off+len)}, without its newline); false stops the reading. */
  private interface LineSink {
    boolean line(byte[] b, int off, int len);
  }

  /** Splits {@code in} into lines for {@code sink}; whether the sink stopped it. */
  private static boolean split(InputStream in, LineSink sink) throws IOException {
    Splitter s = new Splitter(sink);
    byte[] buf = new byte[1 << 16];
    for (int read = in.read(buf); read >= 0; read = in.read(buf)) {
      if (!s.bytes(buf, read)) {
        return true;
      }
    }
    return !s.end();
  }

  /** Lines of bytes as they come, a line that spans two reads held until its newline. */
  private static final class Splitter {
    private final LineSink sink;
    private byte[] pending = new byte[1024];
    private int pendingLength;

    Splitter(LineSink sink) {
      this.sink = sink;
    }

    /** The next {@code length} bytes of {@code buf}; false once the sink stopped. */
    boolean bytes(byte[] buf, int length) {
      int start = 0;
      for (int k = 0; k < length; k++) {
        if (buf[k] == '\n') {
          boolean more;
          if (pendingLength > 0) {
            append(buf, start, k - start);
            more = sink.line(pending, 0, pendingLength);
            pendingLength = 0;
          } else {
            more = sink.line(buf, start, k - start);
          }
          if (!more) {
            return false;
          }
          start = k + 1;
        }
      }
      append(buf, start, length - start);
      return true;
    }

    /** The end of the input: a last line without its newline; false if the sink stopped at it. */
    boolean end() {
      if (pendingLength == 0) {
        return true;
      }
      boolean more = sink.line(pending, 0, pendingLength);
      pendingLength = 0;
      return more;
    }

    private void append(byte[] b, int off, int len) {
      if (pendingLength + len > pending.length) {
        pending = java.util.Arrays.copyOf(pending, Math.max(pending.length * 2, pendingLength + len));
      }
      System.arraycopy(b, off, pending, pendingLength, len);
      pendingLength += len;
    }
  }

  /** An interruption while a line waited for room in the queue, carried out of a {@link LineSink}. */
  private static final class Interrupted extends RuntimeException {
    final InterruptedException cause;

    Interrupted(InterruptedException cause) {
      super(null, cause, false, false);
      this.cause = cause;
    }
  }

  /** The lines of one file (or standard input), after its first {@code skip}, into the queue with their CRC. */
  private final class Lines implements LineSink {
    private final String name;
    private final long skip;
    private long n;

    Lines(String name, long skip) {
      this.name = name;
      this.skip = skip;
    }

    @Override
    public boolean line(byte[] b, int off, int len) {
      if (++n <= skip) {
        return true; // committed already; the CRC of the lines through it was checked and is kept
      }
      if (anyLine) {
        crc.update('\n');
      }
      anyLine = true;
      crc.update(b, off, len);
      String text = new String(b, off, len, StandardCharsets.UTF_8);
      if (!text.isBlank()) {
        try {
          queue.put(new Line(text, name, n, crc.getValue(), false, null));
        } catch (InterruptedException e) {
          throw new Interrupted(e);
        }
      }
      return true;
    }
  }
}
