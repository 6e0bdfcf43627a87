package dev.floe.server.pg;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import dev.floe.OutBuffer;

/**
 * Builds backend messages in a buffer and writes them to the socket on {@link #flush()} (at
 * ReadyForQuery, Flush, or when the buffer grows past a batch), so a result of many small DataRows
 * costs few system calls.
 */
final class MessageWriter extends OutBuffer {
  /**
   * Bytes written to the socket at once (a result's DataRows, COPY's rows): large writes cost fewer system
   * calls and let the client read whole socket buffers.
   */
  private static final int FLUSH_AT = 256 * 1024;
  private static final int INITIAL = 16 * 1024;
  private final OutputStream out;
  private int start = -1;

  MessageWriter(OutputStream out) {
    super(INITIAL);
    this.out = out;
  }

  /** Starts a message of the given type; its length is filled in by {@link #end()}. */
  MessageWriter begin(char type) {
    if (start >= 0) {
      throw new IllegalStateException("message not ended");
    }
    ensure(5);
    buf[len++] = (byte) type;
    start = len;
    len += 4;
    return this;
  }

  MessageWriter int8(int v) {
    ensure(1);
    buf[len++] = (byte) v;
    return this;
  }

  MessageWriter int16(int v) {
    ensure(2);
    buf[len++] = (byte) (v >>> 8);
    buf[len++] = (byte) v;
    return this;
  }

  MessageWriter int32(int v) {
    ensure(4);
    buf[len++] = (byte) (v >>> 24);
    buf[len++] = (byte) (v >>> 16);
    buf[len++] = (byte) (v >>> 8);
    buf[len++] = (byte) v;
    return this;
  }

  MessageWriter int64(long v) {
    int32((int) (v >>> 32));
    return int32((int) v);
  }

  MessageWriter bytes(byte[] b) {
    ensure(b.length);
    System.arraycopy(b, 0, buf, len, b.length);
    len += b.length;
    return this;
  }

  MessageWriter cstring(String s) {
    bytes(s.getBytes(StandardCharsets.UTF_8));
    return int8(0);
  }

  /** A length-prefixed value (-1 for NULL), as in DataRow and Bind. */
  MessageWriter value(byte[] b) {
    if (b == null) {
      return int32(-1);
    }
    int32(b.length);
    return bytes(b);
  }

  MessageWriter end() throws IOException {
    int length = len - start;
    if (length > MAX_MESSAGE) {
      tooLong(); // written into room an earlier message grew
    }
    buf[start] = (byte) (length >>> 24);
    buf[start + 1] = (byte) (length >>> 16);
    buf[start + 2] = (byte) (length >>> 8);
    buf[start + 3] = (byte) length;
    start = -1;
    if (len >= FLUSH_AT) {
      flush();
    }
    return this;
  }

  /** A single byte with no message framing (the answer to SSLRequest and GSSENCRequest). */
  void raw(char b) throws IOException {
    ensure(1);
    buf[len++] = (byte) b;
    flush();
  }

  void flush() throws IOException {
    if (start >= 0) {
      throw new IllegalStateException("message not ended");
    }
    if (len > 0) {
      out.write(buf, 0, len);
      len = 0;
    }
    out.flush();
  }

  /**
   * Gives back the room a large result took, once it is sent (an idle connection keeps at most 64 kB, as
   * before writes grew to 256 kB; a connection answering medium results keeps its buffer).
   */
  void shrink() {
    if (len == 0 && start < 0 && buf.length > 4 * INITIAL) {
      buf = new byte[INITIAL];
    }
  }

  /** Drops a message begun but not ended (its content failed to encode). */
  void abandon() {
    if (start >= 0) {
      len = start - 1;
      start = -1;
    }
  }

  /** PostgreSQL's largest message (its allocation limit): a longer length would not fit the protocol's int32. */
  static final int MAX_MESSAGE = (1 << 30) - 1;

  private void tooLong() {
    abandon(); // the message is dropped whole: what was sent before it stays a valid stream
    throw new dev.floe.FloeException(dev.floe.SqlState.PROGRAM_LIMIT_EXCEEDED, "out of memory",
        "Cannot send a message of more than " + MAX_MESSAGE + " bytes.", null, 0, null);
  }

  /**
   * Grows the buffer, never past what the message being written may hold (so that every write past its
   * limit comes here, and fails).
   */
  @Override
  protected void grow(int n) {
    if (start >= 0 && (long) len - start + n > MAX_MESSAGE) {
      tooLong();
    }
    long size = Math.max((long) buf.length * 2, (long) len + n);
    if (start >= 0) {
      size = Math.min(size, (long) start + MAX_MESSAGE);
    }
    buf = Arrays.copyOf(buf, (int) Math.min(size, Integer.MAX_VALUE - 16));
  }
}
