package dev.floe.types;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.nio.charset.StandardCharsets;

/**
 * Text as PostgreSQL admits it into a UTF8 database: valid UTF-8 without NUL characters. What it
 * refuses is 22021 (character_not_in_repertoire) with PostgreSQL's words, naming the offending bytes:
 * {@code invalid byte sequence for encoding "UTF8": 0xc3 0x28}.
 */
public final class Utf8Text {
  private Utf8Text() {}

  /**
   * The text {@code length} bytes from {@code offset} encode.
   *
   * @throws FloeException 22021 at the first invalid sequence or NUL byte
   */
  public static String decode(byte[] bytes, int offset, int length) {
    int end = offset + length;
    for (int i = offset; i < end; ) {
      int n = validLength(bytes, i, end);
      if (n <= 0) {
        throw invalid(bytes, i, end);
      }
      i += n;
    }
    return new String(bytes, offset, length, StandardCharsets.UTF_8);
  }

  /**
   * Checks bytes {@code offset} to {@code end} of a longer text read in pieces: returns where an
   * unfinished sequence at the end starts, for the next piece to finish (or {@code end}).
   *
   * @throws FloeException 22021 at an invalid sequence or NUL byte
   */
  public static int checkPiece(byte[] bytes, int offset, int end) {
    int i = offset;
    while (i < end) {
      int n = validLength(bytes, i, end);
      if (n <= 0) {
        int announced = announced(bytes[i]);
        if (announced > 1 && i + announced > end && validLength(padded(bytes, i, end, announced), 0,
            announced) == announced) {
          return i; // the rest of the sequence is in the next piece
        }
        throw invalid(bytes, i, end);
      }
      i += n;
    }
    return end;
  }

  /** The bytes from {@code i} to {@code end}, followed by continuation bytes up to {@code length}. */
  private static byte[] padded(byte[] bytes, int i, int end, int length) {
    byte[] b = new byte[length];
    System.arraycopy(bytes, i, b, 0, end - i);
    for (int k = end - i; k < length; k++) {
      b[k] = (byte) 0xbf;
    }
    return b;
  }

  public static String decode(byte[] bytes) {
    return decode(bytes, 0, bytes.length);
  }

  /**
   * @throws FloeException 22021 if {@code s} holds a NUL character, which PostgreSQL's text cannot hold
   */
  public static String checkNoNul(String s) {
    if (s != null && s.indexOf('\0') >= 0) {
      throw nul();
    }
    return s;
  }

  /** PostgreSQL's error for a NUL character in text. */
  public static FloeException nul() {
    return new FloeException(SqlState.CHARACTER_NOT_IN_REPERTOIRE, NUL_MESSAGE);
  }

  /** The message of {@link #nul()}. */
  public static final String NUL_MESSAGE = "invalid byte sequence for encoding \"UTF8\": 0x00";

  /** PostgreSQL's error for the invalid sequence at {@code at}: the bytes its first byte announces. */
  public static FloeException invalid(byte[] bytes, int at, int end) {
    int announced = announced(bytes[at]);
    int shown = Math.min(Math.min(announced, end - at), 8);
    StringBuilder b = new StringBuilder("invalid byte sequence for encoding \"UTF8\":");
    for (int k = 0; k < shown; k++) {
      b.append(String.format(" 0x%02x", bytes[at + k] & 0xff));
    }
    return new FloeException(SqlState.CHARACTER_NOT_IN_REPERTOIRE, b.toString());
  }

  /** How many bytes a sequence starting with {@code b} has, as PostgreSQL's pg_utf_mblen counts. */
  private static int announced(byte b) {
    int c = b & 0xff;
    return c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
  }

  /** The length of the valid sequence at {@code i} (not NUL, not overlong, no surrogate), or 0. */
  private static int validLength(byte[] bytes, int i, int end) {
    int c = bytes[i] & 0xff;
    if (c < 0x80) {
      return c == 0 ? 0 : 1;
    }
    int n = announced(bytes[i]);
    if (n == 1 || i + n > end) {
      return 0;
    }
    int second = bytes[i + 1] & 0xff;
    int low = 0x80;
    int high = 0xbf;
    switch (c) {
      case 0xe0 -> low = 0xa0; // overlong
      case 0xed -> high = 0x9f; // surrogates
      case 0xf0 -> low = 0x90; // overlong
      case 0xf4 -> high = 0x8f; // past U+10FFFF
      default -> {
        if (c < 0xc2 || c > 0xf4) {
          return 0;
        }
      }
    }
    if (second < low || second > high) {
      return 0;
    }
    for (int k = 2; k < n; k++) {
      if ((bytes[i + k] & 0xc0) != 0x80) {
        return 0;
      }
    }
    return n;
  }
}
