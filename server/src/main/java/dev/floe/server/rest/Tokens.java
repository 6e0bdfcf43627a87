package dev.floe.server.rest;

import dev.floe.server.auth.Scram;
import dev.floe.server.auth.Users;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who a REST request comes from: OAuth2's client-credentials grant ({@code POST /v1/oauth/tokens} with the
 * name and password of a {@code floe user}, as Iceberg's {@code credential=name:password} sends them)
 * and token exchange (a client renewing its token) give bearer tokens that expire; requests carry them in
 * {@code Authorization: Bearer}. Tokens live in this process only (a restart asks clients to log in again)
 * and are random 256-bit strings: nothing secret is written anywhere. With trust authentication (loopback
 * only, as the PostgreSQL port's) no token is needed, and the token endpoint issues one to any name.
 */
final class Tokens {
  static final String ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
  private static final String EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";

  /** A token's holder and its end. */
  record Grant(String user, long expiresAtMillis) {}

  /** A token just issued. */
  record Issued(String token, String user, long expiresInSeconds) {}

  /** A refused grant: OAuth2's error code and its description, sent with 400 or 401. */
  static final class Refused extends Exception {
    final String error;
    final int status;

    Refused(int status, String error, String description) {
      super(description);
      this.status = status;
      this.error = error;
    }
  }

  private final Users users;
  private final boolean trust;
  private final Duration lifetime;
  private final Clock clock;
  private final SecureRandom random = new SecureRandom();
  private final Map<String, Grant> grants = new ConcurrentHashMap<>();

  Tokens(Users users, boolean trust, Duration lifetime, Clock clock) {
    this.users = users;
    this.trust = trust;
    this.lifetime = lifetime;
    this.clock = clock;
  }

  /** Whether requests need a token at all. */
  boolean required() {
    return !trust;
  }

  /** A grant from the token endpoint's form fields (client id and secret from the form or HTTP Basic). */
  Issued grant(Map<String, String> form, Optional<String[]> basic) throws Refused {
    String type = form.getOrDefault("grant_type", "");
    if (type.equals("client_credentials")) {
      String id = basic.map(b -> b[0]).orElse(form.get("client_id"));
      String secret = basic.map(b -> b[1]).orElse(form.get("client_secret"));
      if (id == null || id.isEmpty()) {
        throw new Refused(400, "invalid_request", "client_id is missing");
      }
      if (!trust && !passwordMatches(id, secret)) {
        throw new Refused(401, "invalid_client", "password authentication failed for user \"" + id + "\"");
      }
      return issue(id);
    }
    if (type.equals(EXCHANGE)) {
      Optional<String> user = user(form.get("subject_token"));
      if (user.isEmpty()) {
        throw new Refused(401, "invalid_grant", "the subject token is not valid or has expired");
      }
      return issue(user.get());
    }
    throw new Refused(400, "unsupported_grant_type", "grant_type must be client_credentials or token exchange, "
        + "was \"" + type + "\"");
  }

  /** The user a bearer token stands for, if it is one this server issued and it has not expired. */
  Optional<String> user(String token) {
    if (token == null) {
      return Optional.empty();
    }
    Grant g = grants.get(token);
    if (g == null) {
      return Optional.empty();
    }
    if (clock.millis() >= g.expiresAtMillis()) {
      grants.remove(token);
      return Optional.empty();
    }
    return Optional.of(g.user());
  }

  private boolean passwordMatches(String name, String secret) {
    if (secret == null) {
      return false;
    }
    try {
      return users.find(name).map(u -> Scram.matches(u.scramVerifier(), secret)).orElse(false);
    } catch (IOException e) {
      return false;
    }
  }

  private Issued issue(String user) {
    long now = clock.millis();
    grants.values().removeIf(g -> now >= g.expiresAtMillis()); // expired ones go as new ones come
    byte[] bytes = new byte[32];
    random.nextBytes(bytes);
    String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    grants.put(token, new Grant(user, now + lifetime.toMillis()));
    return new Issued(token, user, lifetime.toSeconds());
  }
}
