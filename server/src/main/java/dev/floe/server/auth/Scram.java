package dev.floe.server.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL speaks it, server side: the verifier a password is
 * stored as, and one exchange (client-first, server-first, client-final, server-final). No channel
 * binding is offered ({@code SCRAM-SHA-256} only, not {@code -PLUS}).
 */
public final class Scram {
  private Scram() {}

  /** {@code SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey}, as PostgreSQL stores it. */
  static String verifier(String password, byte[] salt, int iterations) {
    byte[] salted = saltedPassword(password, salt, iterations);
    byte[] storedKey = sha256(hmac(salted, "Client Key"));
    byte[] serverKey = hmac(salted, "Server Key");
    return "SCRAM-SHA-256$" + iterations + ":" + b64(salt) + "$" + b64(storedKey) + ":" + b64(serverKey);
  }

  /** Whether a password (sent in clear text) matches a verifier. */
  public static boolean matches(String verifier, String password) {
    Parsed v = parse(verifier);
    byte[] salted = saltedPassword(password, v.salt, v.iterations);
    return MessageDigest.isEqual(sha256(hmac(salted, "Client Key")), v.storedKey);
  }

  private record Parsed(int iterations, byte[] salt, byte[] storedKey, byte[] serverKey) {}

  private static Parsed parse(String verifier) {
    String[] parts = verifier.split("\\$");
    String[] iterSalt = parts[1].split(":");
    String[] keys = parts[2].split(":");
    Base64.Decoder d = Base64.getDecoder();
    return new Parsed(Integer.parseInt(iterSalt[0]), d.decode(iterSalt[1]), d.decode(keys[0]), d.decode(keys[1]));
  }

  /** One server-side exchange. */
  public static final class Exchange {
    private final Parsed verifier;
    private String clientFirstBare;
    private String serverFirst;
    private String nonce;
    private String gs2Header;

    /**
     * @param verifier the user's stored verifier, or null for an unknown user: the exchange then runs to
     *     the end with made-up values and fails, so a client cannot tell unknown users from bad passwords
     */
    public Exchange(String verifier) {
      this.verifier = verifier != null ? parse(verifier) : parse(Scram.verifier(randomNonce(), new byte[16], 4096));
    }

    /** The server-first message for the client-first message; throws on a malformed one. */
    public String first(String clientFirst) {
      // gs2-header: "n,," or "y,," (no channel binding), then client-first-bare "n=user,r=nonce[,...]"
      if (!(clientFirst.startsWith("n,") || clientFirst.startsWith("y,"))) {
        throw new IllegalArgumentException(clientFirst.startsWith("p=")
            ? "channel binding is not supported" : "malformed SCRAM client-first message");
      }
      int second = clientFirst.indexOf(',', 2);
      if (second < 0) {
        throw new IllegalArgumentException("malformed SCRAM client-first message");
      }
      gs2Header = clientFirst.substring(0, second + 1);
      clientFirstBare = clientFirst.substring(second + 1);
      String clientNonce = null;
      for (String attr : clientFirstBare.split(",")) {
        if (attr.startsWith("r=")) {
          clientNonce = attr.substring(2);
        }
      }
      if (clientNonce == null || clientNonce.isEmpty() || !clientFirstBare.startsWith("n=")) {
        throw new IllegalArgumentException("malformed SCRAM client-first message");
      }
      nonce = clientNonce + randomNonce();
      serverFirst = "r=" + nonce + ",s=" + b64(verifier.salt) + ",i=" + verifier.iterations;
      return serverFirst;
    }

    /**
     * Checks the client-final message's proof; returns the server-final message, or null when the proof
     * is wrong.
     */
    public String last(String clientFinal) {
      int proofAt = clientFinal.lastIndexOf(",p=");
      if (proofAt < 0) {
        throw new IllegalArgumentException("malformed SCRAM client-final message");
      }
      String withoutProof = clientFinal.substring(0, proofAt);
      String channel = null;
      String finalNonce = null;
      for (String attr : withoutProof.split(",")) {
        if (attr.startsWith("c=")) {
          channel = attr.substring(2);
        } else if (attr.startsWith("r=")) {
          finalNonce = attr.substring(2);
        }
      }
      if (channel == null || !channel.equals(b64(gs2Header.getBytes(StandardCharsets.UTF_8)))) {
        throw new IllegalArgumentException("unexpected SCRAM channel-binding data");
      }
      if (!nonce.equals(finalNonce)) {
        throw new IllegalArgumentException("SCRAM nonce does not match");
      }
      byte[] proof;
      try {
        proof = Base64.getDecoder().decode(clientFinal.substring(proofAt + 3));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("malformed SCRAM proof");
      }
      String authMessage = clientFirstBare + "," + serverFirst + "," + withoutProof;
      byte[] clientSignature = hmac(verifier.storedKey, authMessage);
      if (proof.length != clientSignature.length) {
        return null;
      }
      byte[] clientKey = new byte[proof.length];
      for (int i = 0; i < proof.length; i++) {
        clientKey[i] = (byte) (proof[i] ^ clientSignature[i]);
      }
      if (!MessageDigest.isEqual(sha256(clientKey), verifier.storedKey)) {
        return null;
      }
      return "v=" + b64(hmac(verifier.serverKey, authMessage));
    }
  }

  static byte[] saltedPassword(String password, byte[] salt, int iterations) {
    try {
      PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, 256);
      return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static byte[] hmac(byte[] key, String message) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static byte[] sha256(byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String randomNonce() {
    byte[] b = new byte[18];
    new SecureRandom().nextBytes(b);
    return b64(b);
  }

  private static String b64(byte[] b) {
    return Base64.getEncoder().encodeToString(b);
  }
}
