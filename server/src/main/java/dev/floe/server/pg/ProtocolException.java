package dev.floe.server.pg;

/**
 * Bytes from a client that break the protocol: a message too short for its fields, a bad length, a
 * message type unknown or out of place, text that is not UTF-8. The connection answers with an
 * ErrorResponse (SQLSTATE 08P01, protocol_violation) and is closed.
 */
final class ProtocolException extends RuntimeException {
  ProtocolException(String message) {
    super(message);
  }
}
