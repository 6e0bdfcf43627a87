package dev.floe;

import dev.floe.exec.CopyFormats;
import dev.floe.exec.CopyFrom;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code COPY table [(columns)] FROM STDIN} as a front end runs it: the target's columns (to tell the
 * client what to send), a stream for the client's bytes in the COPY's format (text, CSV or binary, as
 * PostgreSQL defines them), then {@link #load} parses them and inserts the rows in one statement of the
 * session. Close it to delete what was staged. The engine stages the bytes in its own scratch directory
 * and reads them itself, so a client never names a file of the server.
 */
public final class CopyIn implements AutoCloseable {
  private final CopyFrom target;
  private final Copy copy;
  /** Where the client's bytes go: the CSV the INSERT reads, or for text and binary, a file converted to it. */
  private final Path raw;

  CopyIn(CopyFrom target, Copy copy) {
    this.target = target;
    this.copy = copy;
    this.raw = copy.format() == Copy.Format.CSV ? target.file()
        : target.file().resolveSibling(target.file().getFileName() + ".in");
  }

  /**
   * The columns the rows give, in order: those named, or every column the table takes input for (a
   * table with a tail numbers its rows itself, so its offset column is left out, as PostgreSQL leaves out
   * generated columns).
   */
  public List<Column> columns() {
    return target.columns();
  }

  /** Whether the client sends PostgreSQL's binary COPY format. */
  public boolean binary() {
    return copy.format() == Copy.Format.BINARY;
  }

  /** Where the client's bytes are staged, inside the engine's scratch directory. */
  public Path file() {
    return raw;
  }

  /** A stream for the client's bytes, as they arrive (close it before {@link #load}). */
  public OutputStream data() throws IOException {
    return new BufferedOutputStream(Files.newOutputStream(raw));
  }

  /**
   * Parses the staged bytes in the COPY's format and inserts the rows into the table as one INSERT of the
   * session (in its transaction block, if one is open). A value that does not convert fails it with
   * PostgreSQL's error naming the line and column; bytes that are not UTF-8 fail it with 22021.
   *
   * @return the INSERT's result; its row count is the COPY's
   */
  public Result load() {
    try {
      switch (copy.format()) {
        case CSV -> {
          CopyFormats.dropEndMarker(raw); // "\." ends the data in CSV too (old clients send it)
          CopyFormats.checkUtf8(raw);
        }
        case TEXT -> CopyFormats.textToCsv(raw, target.file(), copy, target.columns().size());
        case BINARY -> CopyFormats.binaryToCsv(raw, target.file(),
            target.columns().stream().map(c -> PgType.of(c.type())).toList());
      }
    } catch (CharacterCodingException e) {
      throw new FloeException(SqlState.CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\"");
    } catch (IOException e) {
      throw DiskFull.of(e).orElseGet(() -> new FloeException(SqlState.IO_ERROR,
          "could not read the rows of COPY FROM STDIN: " + e.getMessage(), e));
    }
    boolean csv = copy.format() == Copy.Format.CSV;
    return target.load(csv && copy.header(), csv ? copy.delimiter() : ',', csv ? copy.quote() : '"',
        csv ? copy.escape() : '"', csv ? copy.nullString() : "");
  }

  @Override
  public void close() {
    try {
      if (!raw.equals(target.file())) {
        Files.deleteIfExists(raw);
      }
    } catch (IOException e) {
      // the scratch directory is emptied when the engine starts
    } finally {
      target.close();
    }
  }
}
