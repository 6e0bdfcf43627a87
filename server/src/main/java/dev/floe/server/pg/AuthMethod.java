package dev.floe.server.pg;

import java.util.Locale;

/** How the server checks who connects (PostgreSQL's pg_hba.conf methods Floe offers). */
public enum AuthMethod {
  /** Anyone, under any user name, from loopback only; other addresses are refused. */
  TRUST,
  /** A password sent in clear text (use with TLS), checked against the users file. */
  PASSWORD,
  /** PostgreSQL's md5 challenge. */
  MD5,
  /** SCRAM-SHA-256, PostgreSQL's default: the password never crosses the wire. */
  SCRAM_SHA_256;

  /** Parses {@code trust}, {@code password}, {@code md5}, {@code scram-sha-256}. */
  public static AuthMethod parse(String s) {
    return switch (s.trim().toLowerCase(Locale.ROOT)) {
      case "trust" -> TRUST;
      case "password" -> PASSWORD;
      case "md5" -> MD5;
      case "scram-sha-256", "scram" -> SCRAM_SHA_256;
      default -> throw new IllegalArgumentException("unknown authentication method \"" + s
          + "\": use trust, password, md5 or scram-sha-256");
    };
  }
}
