package dev.floe.server.pg;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The body of one message from the client, read field by field. Every read checks that the field fits
 * in what is left, so a short or lying message is a {@link ProtocolException}, never an exception from
 * deeper down.
 */
final class MessageBuffer {
  private final byte type;
  private final byte[] data;
  private int pos;

  MessageBuffer(byte type, byte[] data) {
    this.type = type;
    this.data = data;
  }

  /** The message type byte ({@code 0} for the startup packet family, which has none). */
  byte type() {
    return type;
  }

  int remaining() {
    return data.length - pos;
  }

  private void need(int n, String field) {
    if (n < 0 || remaining() < n) {
      throw new ProtocolException("invalid message format: " + describe() + " is too short for its " + field);
    }
  }

  String describe() {
    return type == 0 ? "startup packet" : "message type \"" + (char) type + "\"";
  }

  int int32(String field) {
    need(4, field);
    int v = ((data[pos] & 0xff) << 24) | ((data[pos + 1] & 0xff) << 16) | ((data[pos + 2] & 0xff) << 8)
        | (data[pos + 3] & 0xff);
    pos += 4;
    return v;
  }

  int int16(String field) {
    need(2, field);
    int v = (short) (((data[pos] & 0xff) << 8) | (data[pos + 1] & 0xff));
    pos += 2;
    return v;
  }

  byte int8(String field) {
    need(1, field);
    return data[pos++];
  }

  byte[] bytes(int n, String field) {
    need(n, field);
    byte[] out = new byte[n];
    System.arraycopy(data, pos, out, 0, n);
    pos += n;
    return out;
  }

  /** A NUL-terminated string, which must be valid UTF-8. */
  String cstring(String field) {
    int end = pos;
    while (end < data.length && data[end] != 0) {
      end++;
    }
    if (end >= data.length) {
      throw new ProtocolException("invalid message format: " + describe() + " has an unterminated " + field);
    }
    String s = utf8(data, pos, end - pos, field);
    pos = end + 1;
    return s;
  }

  /** Fails unless every byte was read: trailing bytes mean the client and server disagree on the format. */
  void end() {
    if (remaining() != 0) {
      throw new ProtocolException("invalid message format: " + describe() + " has " + remaining()
          + " unexpected trailing bytes");
    }
  }

  static String utf8(byte[] bytes, int offset, int length, String field) {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
    try {
      CharBuffer chars = decoder.decode(ByteBuffer.wrap(bytes, offset, length));
      return chars.toString();
    } catch (CharacterCodingException e) {
      // PostgreSQL's words, naming the bytes: invalid byte sequence for encoding "UTF8": 0xff
      String message = "invalid byte sequence for encoding \"UTF8\"";
      try {
        dev.floe.PgValues.utf8(bytes, offset, length);
      } catch (dev.floe.FloeException invalid) {
        message = invalid.getMessage();
      }
      throw new InvalidText(message);
    }
  }

  /** Text that is not valid UTF-8 (SQLSTATE 22021, character_not_in_repertoire). */
  static final class InvalidText extends RuntimeException {
    InvalidText(String message) {
      super(message);
    }
  }
}
