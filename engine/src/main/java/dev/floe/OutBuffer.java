package dev.floe;

import java.util.Arrays;

/**
 * A growable byte buffer that values are encoded into in place ({@link ArrowText}, {@link CopyEncoder}): the
 * PostgreSQL server's message buffer and the CLI's output buffer are ones. The fields are open so that an
 * encoder writes a value's bytes with no call per byte; {@link #ensure} before writing.
 */
public class OutBuffer {
  /** The bytes; valid up to {@link #len}. */
  public byte[] buf;
  /** How many bytes are written. */
  public int len;

  public OutBuffer(int capacity) {
    buf = new byte[capacity];
  }

  /** Makes room for {@code n} more bytes. */
  public final void ensure(int n) {
    if (len + n > buf.length) {
      grow(n);
    }
  }

  /** Enlarges {@link #buf} to hold {@code n} more bytes than {@link #len}; a subclass may refuse. */
  protected void grow(int n) {
    buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
  }

  public final void put(byte b) {
    ensure(1);
    buf[len++] = b;
  }

  public final void put(byte[] b) {
    put(b, 0, b.length);
  }

  public final void put(byte[] b, int off, int n) {
    ensure(n);
    System.arraycopy(b, off, buf, len, n);
    len += n;
  }

  /** Characters below U+0080 (digits, signs, names): one byte each. */
  public final void putAscii(String s) {
    int n = s.length();
    ensure(n);
    for (int i = 0; i < n; i++) {
      buf[len++] = (byte) s.charAt(i);
    }
  }

  /** A big-endian int at {@code at}, written earlier (a length filled in once known). */
  public final void setInt(int at, int v) {
    buf[at] = (byte) (v >>> 24);
    buf[at + 1] = (byte) (v >>> 16);
    buf[at + 2] = (byte) (v >>> 8);
    buf[at + 3] = (byte) v;
  }

  public final void putInt(int v) {
    ensure(4);
    setInt(len, v);
    len += 4;
  }

  public final void putShort(int v) {
    ensure(2);
    buf[len++] = (byte) (v >>> 8);
    buf[len++] = (byte) v;
  }

  public final void putLong(long v) {
    ensure(8);
    setInt(len, (int) (v >>> 32));
    setInt(len + 4, (int) v);
    len += 8;
  }
}
