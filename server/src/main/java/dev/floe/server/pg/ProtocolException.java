package dev.floe.server.pg;

/**
 * Bytes from a client that break the protocol (SQLSTATE 08P01, protocol_violation). A message read whole
 * but malformed (too short for its fields, bytes after them, a count that does not add up) is an ERROR and
 * the connection goes on, as in PostgreSQL; a stream no longer framed as messages (a bad length, an
 * unknown or out-of-place type, {@link #framing}) is FATAL and the connection is closed.
 */
final class ProtocolException extends RuntimeException {
  /** The stream is no longer framed as messages (a length or type that cannot be trusted): FATAL. */
  private final boolean framing;

  /** A message read whole, but malformed: an ERROR, and the connection goes on, as in PostgreSQL. */
  ProtocolException(String message) {
    this(message, false);
  }

  private ProtocolException(String message, boolean framing) {
    super(message);
    this.framing = framing;
  }

  /** The stream is broken: nothing after this can be read as messages. */
  static ProtocolException framing(String message) {
    return new ProtocolException(message, true);
  }

  boolean isFraming() {
    return framing;
  }
}
