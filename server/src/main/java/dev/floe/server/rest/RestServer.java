package dev.floe.server.rest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.floe.Database;
import dev.floe.server.auth.Users;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ErrorResponseParser;
import org.apache.iceberg.rest.responses.OAuthTokenResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Iceberg REST catalog over HTTP (docs/rest-catalog.md): the JDK's HTTP server, a small pool of
 * threads, JSON in Iceberg's own serialization, authentication ({@link Tokens}) and the spec's error
 * model. What each route does is {@link CatalogRoutes}; how a failure maps to an HTTP status is
 * {@link RestErrors}. One log line per refused or failed request ({@code event=rest_error}).
 */
public final class RestServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger("dev.floe.server.log");
  /** The largest request body read (a commit of many snapshots' metadata updates fits easily). */
  static final int MAX_BODY = 64 << 20;

  /** How the server listens and who it lets in. */
  public record Config(String host, int port, boolean trust, Duration tokenLifetime, int threads,
      javax.net.ssl.SSLContext tls, boolean vendCredentials) {
    public static final int DEFAULT_PORT = 8181;

    public static Config defaults() {
      return new Config("127.0.0.1", DEFAULT_PORT, true, Duration.ofHours(1), 8, null, false);
    }

    /**
     * Hands this process's S3 credentials to a client that asks for them ({@code X-Iceberg-Access-Delegation:
     * vended-credentials}) with a table on object storage: for clients trusted with the whole warehouse.
     */
    public Config withVendedCredentials(boolean v) {
      return new Config(host, port, trust, tokenLifetime, threads, tls, v);
    }

    public Config withHost(String h) {
      return new Config(h, port, trust, tokenLifetime, threads, tls, vendCredentials);
    }

    public Config withPort(int p) {
      return new Config(host, p, trust, tokenLifetime, threads, tls, vendCredentials);
    }

    /** Trust (no token needed: loopback only) or tokens for {@code floe user}'s users. */
    public Config withTrust(boolean t) {
      return new Config(host, port, t, tokenLifetime, threads, tls, vendCredentials);
    }

    public Config withTokenLifetime(Duration d) {
      return new Config(host, port, trust, d, threads, tls, vendCredentials);
    }

    public Config withTls(javax.net.ssl.SSLContext context) {
      return new Config(host, port, trust, tokenLifetime, threads, context, vendCredentials);
    }
  }

  private final HttpServer http;
  private final ExecutorService pool;
  private final Tokens tokens;
  private final CatalogRoutes routes;
  private final ObjectMapper json = RestJson.mapper();
  /** Recent failed token grants per client address: count and time of the last one (as the PostgreSQL port's). */
  private final Map<String, long[]> failures = new java.util.concurrent.ConcurrentHashMap<>();

  private RestServer(HttpServer http, ExecutorService pool, Tokens tokens, CatalogRoutes routes) {
    this.http = http;
    this.pool = pool;
    this.tokens = tokens;
    this.routes = routes;
  }

  /**
   * The JDK server reads a request's body and writes its answer on the handler's thread, with no time limit
   * unless these are set before its first use: a client that sends or reads a byte a minute would hold one of
   * the few threads forever. A minute for either (the largest commit or table metadata takes far less).
   * Answers go out without Nagle's delay: the JDK server writes an answer's headers and body separately, and the
   * body would otherwise wait for the client's delayed ACK of the headers (about 40 ms on Linux, every commit).
   */
  static {
    System.setProperty("sun.net.httpserver.nodelay", System.getProperty("sun.net.httpserver.nodelay", "true"));
    System.setProperty("sun.net.httpserver.maxReqTime", System.getProperty("sun.net.httpserver.maxReqTime", "60"));
    System.setProperty("sun.net.httpserver.maxRspTime", System.getProperty("sun.net.httpserver.maxRspTime", "60"));
  }

  /** Starts serving {@code database}'s catalog. */
  public static RestServer start(Database database, Config config) throws IOException {
    if (config.trust() && !loopback(config.host())) {
      throw new IllegalArgumentException("trust authentication is for loopback addresses only; the REST catalog "
          + "on " + config.host() + " needs --auth scram-sha-256 (users from floe user add)");
    }
    InetSocketAddress address = new InetSocketAddress(config.host(), config.port());
    HttpServer http;
    if (config.tls() != null) {
      HttpsServer https = HttpsServer.create(address, 64);
      https.setHttpsConfigurator(new HttpsConfigurator(config.tls()));
      http = https;
    } else {
      http = HttpServer.create(address, 64);
    }
    java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(config.threads(), r -> {
      Thread t = new Thread(r, "floe-rest-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    Tokens tokens = new Tokens(new Users(database.warehouse()), config.trust(), config.tokenLifetime(),
        Clock.systemUTC());
    RestServer server = new RestServer(http, pool, tokens, new CatalogRoutes(database.icebergCatalog(), database.warehouse(),
        config.vendCredentials()));
    http.createContext("/", server::handle);
    http.setExecutor(pool);
    http.start();
    LOG.info("event=rest_listening host={} port={} auth={} tls={}", config.host(), server.port(),
        config.trust() ? "trust" : "bearer", config.tls() == null ? "off" : "on");
    if (config.tls() == null && !loopback(config.host())) {
      LOG.warn("event=rest_insecure host={} message=\"the REST catalog listens beyond loopback without TLS: "
          + "passwords sent to /v1/oauth/tokens and bearer tokens cross the network in clear text (use --tls-cert "
          + "and --tls-key)\"", config.host());
    }
    return server;
  }

  /** The port it listens on (the one chosen when started with port 0). */
  public int port() {
    return http.getAddress().getPort();
  }

  /** The catalog's URI, as a client configures it ({@code uri} of Iceberg's RESTCatalog). */
  public String uri() {
    String host = http.getAddress().getHostString();
    return (http instanceof HttpsServer ? "https" : "http") + "://" + (host.contains(":") ? "[" + host + "]" : host)
        + ":" + port();
  }

  private void handle(HttpExchange exchange) {
    String method = exchange.getRequestMethod().toUpperCase(Locale.ROOT);
    String path = exchange.getRequestURI().getRawPath();
    String user = "";
    try (exchange) {
      try {
        if (path.equals("/v1/oauth/tokens") && method.equals("POST")) {
          token(exchange);
          return;
        }
        if (tokens.required()) {
          user = authenticate(exchange);
        }
        byte[] body = readBody(exchange);
        long start = System.nanoTime();
        CatalogRoutes.Reply reply = routes.route(method, path, query(exchange), body, header(exchange,
            "If-None-Match"), header(exchange, "X-Iceberg-Access-Delegation"));
        if (!method.equals("GET") && !method.equals("HEAD")) {
          // what other engines changed, one line each (reads are not logged)
          LOG.info("event=rest_change method={} path={} user={} status={} ms={}", method, path, user, reply.status(),
              (System.nanoTime() - start) / 1_000_000);
        }
        send(exchange, reply);
      } catch (RuntimeException e) {
        ErrorResponse error = RestErrors.map(e);
        LOG.info("event=rest_error method={} path={} user={} status={} type={} message=\"{}\"", method, path, user,
            error.code(), error.type(), String.valueOf(error.message()).replace('"', '\''));
        if (error.code() >= 500 || Boolean.getBoolean("floe.rest.debug")) {
          LOG.warn("REST request failed", e);
        }
        sendError(exchange, method, error);
      }
    } catch (IOException e) {
      LOG.info("event=rest_error method={} path={} message=\"{}\"", method, path, e.toString());
    }
  }

  private String authenticate(HttpExchange exchange) {
    String header = header(exchange, "Authorization");
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      throw new RestErrors.Status(401, "NotAuthorizedException", "authentication required: send a bearer token "
          + "from POST /v1/oauth/tokens (client credentials of a floe user)");
    }
    return tokens.user(header.substring(7).strip()).orElseThrow(() -> new RestErrors.Status(401,
        "NotAuthorizedException", "the bearer token is not valid or has expired"));
  }

  private void token(HttpExchange exchange) throws IOException {
    Map<String, String> form = form(new String(readBody(exchange), StandardCharsets.UTF_8));
    Optional<String[]> basic = Optional.ofNullable(header(exchange, "Authorization"))
        .filter(h -> h.regionMatches(true, 0, "Basic ", 0, 6))
        .map(h -> new String(Base64.getDecoder().decode(h.substring(6).strip()), StandardCharsets.UTF_8).split(":", 2))
        .filter(parts -> parts.length == 2);
    try {
      Tokens.Issued issued = tokens.grant(form, basic);
      failures.remove(exchange.getRemoteAddress().getAddress().getHostAddress());
      OAuthTokenResponse response = OAuthTokenResponse.builder().withToken(issued.token()).withTokenType("bearer")
          .withIssuedTokenType(Tokens.ACCESS_TOKEN_TYPE).setExpirationInSeconds((int) issued.expiresInSeconds())
          .build();
      send(exchange, CatalogRoutes.Reply.json(200, response));
    } catch (Tokens.Refused refused) {
      String address = exchange.getRemoteAddress().getAddress().getHostAddress();
      long delay = refused.status == 401 ? failedGrant(address) : 0;
      if (delay > 0) {
        try {
          Thread.sleep(delay);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      LOG.info("event=rest_auth_failed client={} error={} message=\"{}\"", exchange.getRemoteAddress(), refused.error,
          refused.getMessage());
      byte[] bytes = json.writeValueAsBytes(Map.of("error", refused.error, "error_description", refused.getMessage()));
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(refused.status, bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    } catch (IllegalArgumentException e) {
      throw new RestErrors.Status(400, "BadRequestException", "malformed token request: " + e.getMessage());
    }
  }

  /**
   * Records a failed grant from an address and returns how long to wait before answering it: nothing for the
   * first three within a minute, then one more second per failure, up to ten (guessing passwords is slow).
   */
  private long failedGrant(String address) {
    long now = System.currentTimeMillis();
    long[] f = failures.compute(address, (k, v) -> v == null || now - v[1] > 60_000 ? new long[] {1, now}
        : new long[] {v[0] + 1, now});
    failures.values().removeIf(v -> now - v[1] > 60_000 && v != f);
    return f[0] <= 3 ? 0 : Math.min(10_000, (f[0] - 3) * 1000);
  }

  private void send(HttpExchange exchange, CatalogRoutes.Reply reply) throws IOException {
    reply.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
    if (reply.body() == null) {
      exchange.sendResponseHeaders(reply.status(), -1);
      return;
    }
    byte[] bytes = json.writeValueAsBytes(reply.body());
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    if (exchange.getRequestMethod().equalsIgnoreCase("HEAD")) {
      exchange.sendResponseHeaders(reply.status(), -1);
      return;
    }
    exchange.sendResponseHeaders(reply.status(), bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static void sendError(HttpExchange exchange, String method, ErrorResponse error) throws IOException {
    if (method.equals("HEAD")) {
      exchange.sendResponseHeaders(error.code(), -1);
      return;
    }
    byte[] bytes = ErrorResponseParser.toJson(error).getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(error.code(), bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static byte[] readBody(HttpExchange exchange) throws IOException {
    try (InputStream in = exchange.getRequestBody()) {
      byte[] bytes = in.readNBytes(MAX_BODY + 1);
      if (bytes.length > MAX_BODY) {
        throw new RestErrors.Status(413, "BadRequestException", "request body larger than " + (MAX_BODY >> 20)
            + " MB");
      }
      return bytes;
    }
  }

  private static Map<String, String> query(HttpExchange exchange) {
    return form(exchange.getRequestURI().getRawQuery());
  }

  /** Form or query fields ({@code a=1&b=x%20y}); a field without {@code =} is empty, a repeated one the last. */
  static Map<String, String> form(String raw) {
    Map<String, String> out = new java.util.HashMap<>();
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    for (String pair : raw.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      try {
        out.put(java.net.URLDecoder.decode(key, StandardCharsets.UTF_8),
            java.net.URLDecoder.decode(value, StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        throw new RestErrors.Status(400, "BadRequestException", "malformed query or form field \"" + pair + "\"");
      }
    }
    return out;
  }

  private static String header(HttpExchange exchange, String name) {
    return exchange.getRequestHeaders().getFirst(name);
  }

  private static boolean loopback(String host) {
    try {
      return java.net.InetAddress.getByName(host).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  /** Stops taking requests; those running get {@code grace} to finish. */
  @Override
  public void close() {
    http.stop(1);
    pool.shutdown();
    try {
      pool.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
