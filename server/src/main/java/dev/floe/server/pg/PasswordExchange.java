package dev.floe.server.pg;

import dev.floe.SqlState;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;

/**
 * The password exchange of a start-up, against the warehouse's users file ({@code auth.Users}): SCRAM-SHA-256
 * ({@code auth.Scram}), md5 (SCRAM for a user whose password is stored as SCRAM only, as PostgreSQL does) or
 * cleartext. A failed one is FATAL 28P01, after a delay that grows with the address's recent failures
 * ({@link PgServer#failedLogin}).
 */
final class PasswordExchange {
  private final PgServer server;
  private final DataInputStream in;
  private final ClientWriter writer;

  PasswordExchange(PgServer server, DataInputStream in, ClientWriter writer) {
    this.server = server;
    this.in = in;
    this.writer = writer;
  }

  /**
   * Runs the password exchange of {@code method} for {@code user}, connecting from {@code address}. A wrong
   * password, or an unknown user (told apart from nothing, as PostgreSQL does), is FATAL 28P01, after a delay
   * that grows with an address's recent failures.
   */
  boolean check(AuthMethod method, String user, String address) throws IOException {
    dev.floe.server.auth.Users.User stored = server.users().find(user).orElse(null);
    if (method == AuthMethod.MD5 && stored != null && stored.md5Hash() == null) {
      // as PostgreSQL does for a password stored as SCRAM only: the exchange is SCRAM's
      method = AuthMethod.SCRAM_SHA_256;
    }
    boolean ok;
    synchronized (writer.lock()) {
      MessageWriter out = writer.out();
      switch (method) {
        case SCRAM_SHA_256 -> {
          out.begin('R').int32(10).cstring("SCRAM-SHA-256").int8(0).end();
          out.flush();
          MessageBuffer first = readPasswordMessage();
          String mechanism = first.cstring("SASL mechanism");
          if (!mechanism.equals("SCRAM-SHA-256")) {
            throw new ProtocolException("client selected an invalid SASL authentication mechanism");
          }
          int len = first.int32("SASL data length");
          String clientFirst = new String(first.bytes(len, "SASL data"), java.nio.charset.StandardCharsets.UTF_8);
          first.end();
          var exchange = new dev.floe.server.auth.Scram.Exchange(stored == null ? null : stored.scramVerifier());
          String serverFirst;
          try {
            serverFirst = exchange.first(clientFirst);
          } catch (IllegalArgumentException e) {
            throw new ProtocolException(e.getMessage());
          }
          out.begin('R').int32(11).bytes(serverFirst.getBytes(java.nio.charset.StandardCharsets.UTF_8)).end();
          out.flush();
          MessageBuffer last = readPasswordMessage();
          String clientFinal = new String(last.bytes(last.remaining(), "SASL data"),
              java.nio.charset.StandardCharsets.UTF_8);
          String serverFinal;
          try {
            serverFinal = exchange.last(clientFinal);
          } catch (IllegalArgumentException e) {
            throw new ProtocolException(e.getMessage());
          }
          ok = stored != null && serverFinal != null;
          if (ok) {
            out.begin('R').int32(12).bytes(serverFinal.getBytes(java.nio.charset.StandardCharsets.UTF_8)).end();
          }
        }
        case MD5 -> {
          byte[] salt = new byte[4];
          new java.security.SecureRandom().nextBytes(salt);
          out.begin('R').int32(5).bytes(salt).end();
          out.flush();
          MessageBuffer m = readPasswordMessage();
          String answer = m.cstring("password");
          m.end();
          ok = stored != null && java.security.MessageDigest.isEqual(answer.getBytes(java.nio.charset.StandardCharsets.UTF_8),
              md5Answer(stored.md5Hash(), salt).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        default -> {
          out.begin('R').int32(3).end();
          out.flush();
          MessageBuffer m = readPasswordMessage();
          String password = m.cstring("password");
          m.end();
          ok = stored != null && dev.floe.server.auth.Scram.matches(stored.scramVerifier(), password);
        }
      }
    }
    if (!ok) {
      long delay = server.failedLogin(address);
      if (delay > 0) {
        try {
          Thread.sleep(delay);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      writer.fatal(SqlState.INVALID_PASSWORD, "password authentication failed for user \"" + user + "\"");
      return false;
    }
    server.succeededLogin(address);
    return true;
  }

  /** md5's expected answer: "md5" + md5(hex(md5(password + user)) + salt). */
  private static String md5Answer(String storedHash, byte[] salt) {
    byte[] hex = storedHash.substring(3).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] data = new byte[hex.length + salt.length];
    System.arraycopy(hex, 0, data, 0, hex.length);
    System.arraycopy(salt, 0, data, hex.length, salt.length);
    try {
      return "md5" + java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("MD5").digest(data));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The client's next message during authentication, which must be a password message ('p'). */
  private MessageBuffer readPasswordMessage() throws IOException {
    int type = in.read();
    if (type < 0) {
      throw new EOFException("the client closed the connection during authentication");
    }
    if (type != 'p') {
      throw ProtocolException.framing("expected password response, got message type " + type);
    }
    int length = in.readInt();
    if (length < 4 || length > Startup.MAX_STARTUP) {
      throw ProtocolException.framing("invalid password message length " + length);
    }
    byte[] body = new byte[length - 4];
    in.readFully(body);
    return new MessageBuffer((byte) type, body);
  }
}
