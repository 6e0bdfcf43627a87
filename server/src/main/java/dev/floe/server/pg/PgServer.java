package dev.floe.server.pg;

import dev.floe.Database;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a {@link Database} over the PostgreSQL v3 wire protocol. Each connection has its own thread
 * and engine session; connections beyond {@link Config#maxConnections()} are refused with SQLSTATE
 * 53300 after their start-up packet, as PostgreSQL refuses them.
 */
public final class PgServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PgServer.class);

  /**
   * @param host the address to listen on ({@code 127.0.0.1} by default)
   * @param port the TCP port ({@code 5433} by default; 0 picks a free one)
   * @param maxConnections sessions served at once
   * @param maxMessageBytes the largest client message accepted (a longer one is a protocol violation)
   * @param databaseName the database name clients connect to, besides {@code floe}
   * @param auth how clients log in
   * @param tls the TLS identity offered to clients that ask for it, or null
   * @param startupTimeout how long a client may take from connecting to being logged in
   * @param maxStatementTime the longest any statement may run (zero: no limit); a client's
   *     {@code statement_timeout} can only shorten it
   * @param logMinDurationMs statements that run at least this long are logged with their duration
   *     (PostgreSQL's {@code log_min_duration_statement}); -1: none, 0: every statement
   */
  public record Config(String host, int port, int maxConnections, int maxMessageBytes, String databaseName,
      AuthMethod auth, javax.net.ssl.SSLContext tls, Duration startupTimeout, Duration maxStatementTime,
      long logMinDurationMs) {
    /** The default {@link #maxStatementTime}. */
    public static final Duration DEFAULT_MAX_STATEMENT_TIME = Duration.ofHours(1);

    public static final int DEFAULT_PORT = 5433;

    public Config {
      Objects.requireNonNull(host, "host");
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port must be between 0 and 65535: " + port);
      }
      if (maxConnections < 1) {
        throw new IllegalArgumentException("maxConnections must be positive: " + maxConnections);
      }
      if (maxMessageBytes < 1024) {
        throw new IllegalArgumentException("maxMessageBytes must be at least 1024: " + maxMessageBytes);
      }
      Objects.requireNonNull(auth, "auth");
      if (startupTimeout == null || startupTimeout.isNegative() || startupTimeout.isZero()) {
        throw new IllegalArgumentException("startupTimeout must be positive: " + startupTimeout);
      }
      if (maxStatementTime == null || maxStatementTime.isNegative()) {
        throw new IllegalArgumentException("maxStatementTime must be zero (none) or positive: " + maxStatementTime);
      }
      if (logMinDurationMs < -1) {
        throw new IllegalArgumentException("logMinDurationMs must be -1 (off), 0 (all) or positive: "
            + logMinDurationMs);
      }
    }

    public static Config defaults() {
      return new Config("127.0.0.1", DEFAULT_PORT, 100, 64 << 20, "floe", AuthMethod.TRUST, null,
          Duration.ofSeconds(60), DEFAULT_MAX_STATEMENT_TIME, -1);
    }

    public Config withPort(int newPort) {
      return new Config(host, newPort, maxConnections, maxMessageBytes, databaseName, auth,
          tls, startupTimeout, maxStatementTime, logMinDurationMs);
    }

    public Config withHost(String newHost) {
      return new Config(newHost, port, maxConnections, maxMessageBytes, databaseName, auth,
          tls, startupTimeout, maxStatementTime, logMinDurationMs);
    }

    public Config withMaxConnections(int n) {
      return new Config(host, port, n, maxMessageBytes, databaseName, auth,
          tls, startupTimeout, maxStatementTime, logMinDurationMs);
    }

    public Config withMaxMessageBytes(int n) {
      return new Config(host, port, maxConnections, n, databaseName, auth,
          tls, startupTimeout, maxStatementTime, logMinDurationMs);
    }

    public Config withDatabaseName(String name) {
      return new Config(host, port, maxConnections, maxMessageBytes, name, auth,
          tls, startupTimeout, maxStatementTime, logMinDurationMs);
    }

    /** TLS for clients that ask (SSLRequest); null: answered 'N', plain text only. */
    public Config withTls(javax.net.ssl.SSLContext context) {
      return new Config(host, port, maxConnections, maxMessageBytes, databaseName, auth,
          context, startupTimeout, maxStatementTime, logMinDurationMs);
    }

    /** How long a client may take to start up and log in before it is disconnected. */
    public Config withStartupTimeout(Duration timeout) {
      return new Config(host, port, maxConnections, maxMessageBytes, databaseName, auth,
          tls, timeout, maxStatementTime, logMinDurationMs);
    }

    /** The longest a statement may run, whatever the client sets (zero: no limit). */
    public Config withMaxStatementTime(Duration limit) {
      return new Config(host, port, maxConnections, maxMessageBytes, databaseName, auth,
          tls, startupTimeout, limit, logMinDurationMs);
    }

    /** Statements running at least this long are logged; -1: none, 0: all. */
    public Config withLogMinDurationMs(long ms) {
      return new Config(host, port, maxConnections, maxMessageBytes, databaseName, auth, tls, startupTimeout,
          maxStatementTime, ms);
    }

    public Config withAuth(AuthMethod method) {
      return new Config(host, port, maxConnections, maxMessageBytes, databaseName, method,
          tls, startupTimeout, maxStatementTime, logMinDurationMs);
    }
  }

  private final Database database;
  private final Config config;
  private final ServerSocket listener;
  private final Thread acceptor;
  private final ScheduledExecutorService timers;
  private final Map<Integer, PgConnection> connections = new ConcurrentHashMap<>();
  private final AtomicInteger active = new AtomicInteger();
  private final SecureRandom random = new SecureRandom();
  private Set<String> databaseNames;
  private volatile boolean shuttingDown;
  private final dev.floe.server.auth.Users users;
  /** Recent failed logins per client address: count and time of the last one. */
  private final Map<String, long[]> failures = new ConcurrentHashMap<>();

  private PgServer(Database database, Config config, ServerSocket listener) {
    this.database = database;
    this.config = config;
    this.listener = listener;
    this.databaseNames = new java.util.HashSet<>(java.util.List.of("floe"));
    if (config.databaseName() != null) {
      this.databaseNames.add(config.databaseName());
    }
    ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1,
        r -> {
          Thread t = new Thread(r, "floe-pg-timers");
          t.setDaemon(true);
          return t;
        });
    // an idle-in-transaction timer is cancelled by the client's next message: it leaves the queue at once
    pool.setRemoveOnCancelPolicy(true);
    this.timers = pool;
    // statement timeouts and client watches: one tick for all connections instead of a timer per statement
    pool.scheduleAtFixedRate(this::tick, TICK_MILLIS, TICK_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
    this.users = new dev.floe.server.auth.Users(database.warehouse());
    // the catalogs list the users this server signs in (floe user), as PostgreSQL lists its roles
    database.setRoles(() -> {
      try {
        return users.names();
      } catch (java.io.IOException e) {
        return java.util.List.of();
      }
    });
    this.acceptor = new Thread(this::acceptLoop, "floe-pg-accept");
    this.acceptor.setDaemon(true);
  }

  /** Starts listening; returns once the port is bound. */
  public static PgServer start(Database database, Config config) throws IOException {
    if (!database.fenced()) {
      throw new IllegalArgumentException("serving clients needs a fenced database, so that they reach its tables "
          + "and never this host: open it with FloeConfig.builder(dir).fenced(true) (docs/security.md)");
    }
    new dev.floe.server.auth.Users(database.warehouse()).checkPrivate();
    ServerSocket listener = new ServerSocket();
    listener.setReuseAddress(true);
    listener.bind(new InetSocketAddress(InetAddress.getByName(config.host()), config.port()), 128);
    PgServer server = new PgServer(database, config, listener);
    server.acceptor.start();
    ConnectionLog.listening(config.host(), server.port(), config);
    return server;
  }

  /** Threads that watch, while a statement runs, for its client disconnecting ({@link ClientInput#watch}). */
  private final java.util.concurrent.ExecutorService watchers = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "floe-pg-watch");
    t.setDaemon(true);
    return t;
  });

  java.util.concurrent.ExecutorService watchers() {
    return watchers;
  }

  /** The port actually bound. */
  public int port() {
    return listener.getLocalPort();
  }

  public String host() {
    return config.host();
  }

  /**
   * A connection URI for libpq clients, to the database {@code floe} (the name the docs give; the
   * warehouse directory's name is accepted too).
   */
  public String connectionUri() {
    String h = config.host().contains(":") ? "[" + config.host() + "]" : config.host();
    return "postgresql://" + h + ":" + port() + "/floe";
  }

  Config config() {
    return config;
  }

  Database database() {
    return database;
  }

  Set<String> databaseNames() {
    return databaseNames;
  }

  /**
   * How often running statements are checked against their deadline (statement_timeout, the server's
   * ceiling) and for how long they have run (a client watch starts after 100 ms): a timeout fires at most
   * this much late.
   */
  static final long TICK_MILLIS = 10;

  private void tick() {
    long now = System.nanoTime();
    for (PgConnection c : connections.values()) {
      try {
        c.tick(now);
      } catch (RuntimeException e) {
        LOG.warn("statement clock of connection {} failed", c.processId(), e);
      }
    }
  }

  ScheduledExecutorService timers() {
    return timers;
  }

  boolean isShuttingDown() {
    return shuttingDown;
  }

  dev.floe.server.auth.Users users() {
    return users;
  }

  /**
   * Records a failed login from an address and returns how long to wait before answering it: nothing
   * for the first three within a minute, then one more second per failure, up to ten.
   */
  long failedLogin(String address) {
    long now = System.currentTimeMillis();
    long[] f = failures.compute(address, (k, v) -> v == null || now - v[1] > 60_000 ? new long[] {1, now}
        : new long[] {v[0] + 1, now});
    return f[0] <= 3 ? 0 : Math.min(10_000, (f[0] - 3) * 1000);
  }

  void succeededLogin(String address) {
    failures.remove(address);
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      Socket socket;
      try {
        socket = listener.accept();
      } catch (SocketException e) {
        return; // closed
      } catch (IOException e) {
        LOG.warn("accept failed: {}", e.toString());
        continue;
      }
      int n = active.incrementAndGet();
      if (n > config.maxConnections() * 2 + 8) {
        // far over the cap: not even a thread for the refusal
        active.decrementAndGet();
        closeQuietly(socket);
        continue;
      }
      int pid = database.newBackendPid(); // the engine's: embedded sessions' pids never collide with it
      PgConnection c = new PgConnection(this, socket, pid, random.nextInt(), n > config.maxConnections());
      connections.put(pid, c);
      Thread t = new Thread(c, "floe-pg-" + pid);
      t.setDaemon(true);
      t.start();
    }
  }

  void cancel(int pid, int secretKey) {
    PgConnection c = connections.get(pid);
    if (c != null && c.secretKey() == secretKey) {
      c.cancel();
    }
  }

  void closed(PgConnection c) {
    if (connections.remove(c.processId()) != null) {
      active.decrementAndGet();
    }
  }

  /** Connections with a statement or message batch in progress. */
  public int busyConnectionCount() {
    return (int) connections.values().stream().filter(c -> !c.isIdle()).count();
  }

  /** Connections currently open. */
  public int connectionCount() {
    return connections.size();
  }

  /**
   * Stops accepting connections, tells idle sessions the server is going away, lets running
   * statements finish (up to {@code grace}), then closes what is left.
   */
  public void shutdown(Duration grace) {
    shuttingDown = true;
    closeQuietly(listener);
    for (PgConnection c : connections.values()) {
      c.shutdown();
    }
    long deadline = System.nanoTime() + grace.toNanos();
    while (!connections.isEmpty() && System.nanoTime() < deadline) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      for (PgConnection c : connections.values()) {
        if (c.isIdle()) {
          c.shutdown();
        }
      }
    }
    for (PgConnection c : connections.values()) {
      c.cancel();
      c.shutdown();
    }
    timers.shutdownNow();
    watchers.shutdownNow();
  }

  @Override
  public void close() {
    shutdown(Duration.ofSeconds(30));
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }
}
