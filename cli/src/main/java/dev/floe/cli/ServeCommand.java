package dev.floe.cli;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.server.pg.PgServer;
import dev.floe.server.rest.RestServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code floe serve}: opens a warehouse and serves it over the PostgreSQL wire protocol until
 * interrupted (SIGINT or SIGTERM end it gracefully: running statements finish, new connections are
 * refused). Every option also has an environment variable (docs/server.md).
 */
@Command(name = "serve", mixinStandardHelpOptions = true, versionProvider = Version.class,
    description = {"Serve a warehouse over the PostgreSQL wire protocol (psql, JDBC, psycopg, ...) and as an Iceberg "
        + "REST catalog (Spark, Trino, ...).",
        "Connect with: psql postgresql://127.0.0.1:5433/floe"})
final class ServeCommand implements Callable<Integer> {
  /** The settings a config file may hold. */
  static final java.util.List<String> KNOWN = java.util.List.of("warehouse", "pg-host", "pg-port", "max-connections",
      "memory-limit", "auth", "tls-cert", "tls-key", "tls-self-signed", "tail-advance-ms", "maintain-ms", "max-statement-time",
      "storage-root", "log-min-duration-ms", "rest-host", "rest-port", "catalog", "catalog-uri", "catalog-token",
      "catalog-credential", "catalog-oauth2-uri", "catalog-scope", "warehouse-location", "s3-endpoint", "s3-region",
      "s3-path-style", "s3-cache-size", "rest-vend-credentials");

  @ParentCommand
  Main main;

  @Spec
  CommandSpec spec;

  @Mixin
  WarehouseOption warehouse;

  @Mixin
  CatalogOption catalog;

  @Option(names = "--pg-host", paramLabel = "ADDRESS",
      description = "Address to listen on. Default: $FLOE_PG_HOST if set, else 127.0.0.1.")
  String host;

  @Option(names = "--pg-port", paramLabel = "PORT",
      description = "TCP port for PostgreSQL clients (0: any free port). Default: $FLOE_PG_PORT if set, else 5433.")
  Integer port;

  @Option(names = "--rest-port", paramLabel = "PORT",
      description = "TCP port of the Iceberg REST catalog (Spark, Trino, PyIceberg); 0 turns it off. Default: "
          + "$FLOE_REST_PORT if set, else 8181 (skipped with a warning when that port is taken).")
  Integer restPort;

  @Option(names = "--rest-vend-credentials", paramLabel = "BOOLEAN", arity = "0..1", fallbackValue = "true",
      description = "Hand this server's S3 credentials to REST clients that ask for them (X-Iceberg-Access-Delegation:"
          + " vended-credentials) with tables on S3: only where every client may reach the whole bucket. Default: "
          + "$FLOE_REST_VEND_CREDENTIALS, else false.")
  String restVendCredentials;

  @Option(names = "--rest-host", paramLabel = "ADDRESS",
      description = "Address the REST catalog listens on. Default: $FLOE_REST_HOST if set, else the --pg-host.")
  String restHost;

  @Option(names = "--max-connections", paramLabel = "N",
      description = "Sessions served at once; more are refused with SQLSTATE 53300. Default: "
          + "$FLOE_MAX_CONNECTIONS if set, else 100.")
  Integer maxConnections;

  @Option(names = "--auth", paramLabel = "METHOD",
      description = "How clients prove who they are: trust (any user name, loopback only), scram-sha-256, md5 or "
          + "password (users from floe user add). Default: $FLOE_AUTH if set, else trust.")
  String auth;

  @Option(names = "--tls-cert", paramLabel = "FILE",
      description = "PEM certificate (chain) for TLS; with --tls-key. Default: $FLOE_TLS_CERT.")
  Path tlsCert;

  @Option(names = "--tls-key", paramLabel = "FILE",
      description = "PEM private key (PKCS#8) for TLS. Default: $FLOE_TLS_KEY.")
  Path tlsKey;

  @Option(names = "--tls-self-signed",
      description = "Offer TLS with a self-signed certificate for localhost, made once into the warehouse's tls/ "
          + "directory (for development).")
  boolean tlsSelfSigned;

  @Option(names = "--memory-limit", paramLabel = "SIZE",
      description = "DuckDB's memory limit (e.g. 4GB); larger queries spill to the warehouse's scratch "
          + "directory. Default: $FLOE_MEMORY_LIMIT if set, else DuckDB's (80%% of RAM).")
  String memoryLimit;

  @Option(names = "--max-statement-time", paramLabel = "DURATION",
      description = "The longest any client statement may run, e.g. 30s, 10min, 2h (0: no limit); a client's "
          + "statement_timeout can only shorten it. Default: $FLOE_MAX_STATEMENT_TIME if set, else 1h.")
  String maxStatementTime;

  @Option(names = "--storage-root", paramLabel = "DIR",
      description = "A directory besides the warehouse where CREATE TABLE ... WITH (location = ...) may put a "
          + "table (repeatable; a config file takes a comma-separated list). Default: $FLOE_STORAGE_ROOT, "
          + "else none.")
  java.util.List<Path> storageRoots;

  @Option(names = "--tail-advance-ms", paramLabel = "MS",
      description = "How often the background advancer seals tables' tails (by their size and age triggers) and "
          + "evicts sealed log segments; 0 turns it off. Default: $FLOE_TAIL_ADVANCE_MS if set, else 1000.")
  Integer tailAdvanceMs;

  @Option(names = "--maintain-ms", paramLabel = "MS",
      description = "How often the background maintainer looks at every table (compaction, snapshot expiry, manifest "
          + "rewrite, orphan removal, by each table's policy: docs/maintenance.md); 0 turns it off. Default: "
          + "$FLOE_MAINTAIN_MS if set, else 30000.")
  Integer maintainMs;

  @Option(names = "--log-min-duration-ms", paramLabel = "MS",
      description = "Log every statement that runs at least this long, with its duration (PostgreSQL's "
          + "log_min_duration_statement); 0 logs every statement, -1 none. Default: $FLOE_LOG_MIN_DURATION_MS if set, "
          + "else -1.")
  Integer logMinDurationMs;

  @Option(names = "--config", paramLabel = "FILE",
      description = "A file of settings, one 'name = value' per line, named as the options without their dashes "
          + "(pg-port = 6543). Options and environment variables override it. Default: $FLOE_CONFIG.")
  Path configFile;

  private java.util.Properties file = new java.util.Properties();

  /** A setting: the option if given, else its environment variable (FLOE_PG_PORT), else the config file. */
  private String setting(Object option, String name, String otherwise) {
    if (option != null) {
      return option.toString();
    }
    String variable = "FLOE_" + name.toUpperCase(java.util.Locale.ROOT).replace('-', '_');
    return main.environment().variable(variable).orElseGet(() -> {
      String v = file.getProperty(name);
      return v != null ? v.strip() : otherwise;
    });
  }

  private int intSetting(Integer option, String name, int otherwise) {
    String v = setting(option, name, Integer.toString(otherwise));
    try {
      return Integer.parseInt(v.strip());
    } catch (NumberFormatException e) {
      throw new ParameterException(spec.commandLine(), name + " must be an integer, was \"" + v + "\"");
    }
  }

  /**
   * The server's log (standard error): Floe's own lines at INFO (connections, errors, slow statements,
   * maintenance), other libraries' at WARN, each line with its time. Set before any logger exists: the
   * simple logger reads its settings once.
   */
  private static void serverLogging() {
    System.setProperty("org.slf4j.simpleLogger.log.dev.floe", "info");
    System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
    System.setProperty("org.slf4j.simpleLogger.dateTimeFormat", "yyyy-MM-dd HH:mm:ss.SSS z");
    System.setProperty("org.slf4j.simpleLogger.showThreadName", "false");
    System.setProperty("org.slf4j.simpleLogger.showShortLogName", "true");
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    serverLogging();
    Environment env = main.environment();
    Path configPath = configFile != null ? configFile : env.variable("FLOE_CONFIG").map(Path::of).orElse(null);
    if (configPath != null) {
      if (!java.nio.file.Files.isRegularFile(configPath)) {
        throw new ParameterException(spec.commandLine(), "no config file " + configPath);
      }
      try (var reader = java.nio.file.Files.newBufferedReader(configPath)) {
        file.load(reader);
      }
      for (String key : file.stringPropertyNames()) {
        if (!KNOWN.contains(key)) {
          throw new ParameterException(spec.commandLine(), configPath + ": unknown setting \"" + key
              + "\" (known: " + String.join(", ", KNOWN) + ")");
        }
      }
    }
    Path directory = warehouse.directory == null && env.variable(WarehouseOption.VARIABLE).isEmpty()
        && file.getProperty("warehouse") != null
        ? Path.of(file.getProperty("warehouse").strip()).toAbsolutePath().normalize() : warehouse.resolve(env);
    PgServer.Config config = PgServer.Config.defaults()
        .withHost(setting(host, "pg-host", "127.0.0.1"))
        .withPort(intSetting(port, "pg-port", PgServer.Config.DEFAULT_PORT))
        .withMaxConnections(intSetting(maxConnections, "max-connections", 100))
        .withDatabaseName(directory.getFileName() == null ? "floe" : directory.getFileName().toString());
    try {
      config = config.withAuth(dev.floe.server.pg.AuthMethod.parse(setting(auth, "auth", "trust")));
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    if (config.port() < 0 || config.port() > 65535) {
      throw new ParameterException(spec.commandLine(), "--pg-port must be between 0 and 65535");
    }
    String certSetting = setting(tlsCert, "tls-cert", null);
    String keySetting = setting(tlsKey, "tls-key", null);
    Path cert = certSetting == null ? null : Path.of(certSetting);
    Path key = keySetting == null ? null : Path.of(keySetting);
    boolean selfSigned = tlsSelfSigned || Boolean.parseBoolean(setting(null, "tls-self-signed", "false"));
    if ((cert == null) != (key == null)) {
      throw new ParameterException(spec.commandLine(), "--tls-cert and --tls-key go together");
    }
    if (cert != null && selfSigned) {
      throw new ParameterException(spec.commandLine(), "--tls-self-signed and --tls-cert exclude each other");
    }
    if (cert != null) {
      config = config.withTls(dev.floe.server.auth.Tls.fromPem(cert, key));
    } else if (selfSigned) {
      config = config.withTls(dev.floe.server.auth.Tls.selfSigned(directory.resolve("tls")));
    }
    config = config.withMaxStatementTime(duration("max-statement-time", setting(maxStatementTime,
        "max-statement-time", "1h")));
    int logMin = intSetting(logMinDurationMs, "log-min-duration-ms", -1);
    if (logMin < -1) {
      throw new ParameterException(spec.commandLine(), "--log-min-duration-ms must be -1 (off), 0 (all) or positive");
    }
    config = config.withLogMinDurationMs(logMin);
    FloeConfig.Builder builder = FloeConfig.builder(directory).fenced(true);
    String roots = setting(storageRoots == null || storageRoots.isEmpty() ? null : String.join(",",
        storageRoots.stream().map(Path::toString).toList()), "storage-root", "");
    for (String root : roots.split(",")) {
      if (!root.isBlank()) {
        Path r = Path.of(root.strip()).toAbsolutePath().normalize();
        if (!java.nio.file.Files.isDirectory(r)) {
          throw new ParameterException(spec.commandLine(), "storage root " + r + " is not a directory");
        }
        builder.storageRoot(r);
      }
    }
    catalog.configure(env, name -> {
      String v = file.getProperty(name); // the config file, after the option and its environment variable
      return v != null ? v.strip() : null;
    }, builder);
    String limit = setting(memoryLimit, "memory-limit", null);
    if (limit != null) {
      builder.memoryLimit(limit);
    }
    int advanceMs = intSetting(tailAdvanceMs, "tail-advance-ms", 1000);
    if (advanceMs < 0) {
      throw new ParameterException(spec.commandLine(), "--tail-advance-ms must be 0 (off) or positive");
    }
    int maintain = intSetting(maintainMs, "maintain-ms", 30_000);
    if (maintain < 0) {
      throw new ParameterException(spec.commandLine(), "--maintain-ms must be 0 (off) or positive");
    }
    FloeConfig floeConfig = builder.build();
    org.slf4j.LoggerFactory.getLogger("dev.floe.server.log").info("event=starting version={} warehouse={} "
        + "catalog={} tables={} memory_limit={} maintain_ms={} tail_advance_ms={}", Version.floe(), directory,
        floeConfig.remoteCatalog().map(dev.floe.RemoteCatalog::uri).orElse("local"),
        floeConfig.objectStore().map(dev.floe.ObjectStore::location).orElse(directory.toString()),
        limit == null ? "default" : limit, maintain, advanceMs);
    Database db = Floe.open(floeConfig);
    AutoCloseable advancer = advanceMs > 0 ? db.startTailAdvancer(Duration.ofMillis(advanceMs)) : () -> { };
    AutoCloseable maintainer = maintain > 0 ? db.startMaintainer(Duration.ofMillis(maintain)) : () -> { };
    PgServer server;
    try {
      server = PgServer.start(db, config);
    } catch (IOException e) {
      closeQuietly(maintainer);
      closeQuietly(advancer);
      db.close();
      throw new dev.floe.FloeException(dev.floe.SqlState.IO_ERROR, "cannot listen on " + config.host() + ":"
          + config.port() + ": " + e.getMessage(), e);
    }
    RestServer rest = null;
    String restSetting = setting(restPort, "rest-port", null);
    int restPortValue = intSetting(restPort, "rest-port", RestServer.Config.DEFAULT_PORT);
    if (restPortValue < 0 || restPortValue > 65535) {
      server.shutdown(Duration.ZERO);
      closeQuietly(maintainer);
      closeQuietly(advancer);
      db.close();
      throw new ParameterException(spec.commandLine(), "--rest-port must be between 0 (off) and 65535");
    }
    String vend = setting(restVendCredentials, "rest-vend-credentials", "false").strip().toLowerCase(
        java.util.Locale.ROOT);
    if (!vend.equals("true") && !vend.equals("false")) {
      server.shutdown(Duration.ZERO);
      closeQuietly(maintainer);
      closeQuietly(advancer);
      db.close();
      throw new ParameterException(spec.commandLine(), "--rest-vend-credentials must be true or false, was \""
          + vend + "\"");
    }
    if (restPortValue > 0) {
      RestServer.Config restConfig = RestServer.Config.defaults().withVendedCredentials(vend.equals("true"))
          .withHost(setting(restHost, "rest-host", config.host())).withPort(restPortValue)
          .withTrust(config.auth() == dev.floe.server.pg.AuthMethod.TRUST).withTls(config.tls());
      try {
        rest = RestServer.start(db, restConfig);
      } catch (IOException | IllegalArgumentException e) {
        if (restSetting != null) {
          server.shutdown(Duration.ZERO);
          closeQuietly(maintainer);
          closeQuietly(advancer);
          db.close();
          throw new dev.floe.FloeException(dev.floe.SqlState.IO_ERROR, "cannot serve the REST catalog on "
              + restConfig.host() + ":" + restConfig.port() + ": " + e.getMessage(), e);
        }
        env.err().println("floe: the Iceberg REST catalog is not served: " + restConfig.host() + ":"
            + restConfig.port() + ": " + e.getMessage() + " (set --rest-port, or 0 to turn it off)");
      }
    }
    RestServer restServer = rest;
    CountDownLatch stopped = new CountDownLatch(1);
    Thread hook = new Thread(() -> {
      server.shutdown(Duration.ofSeconds(30));
      if (restServer != null) {
        restServer.close();
      }
      closeQuietly(maintainer);
      try {
        advancer.close(); // seals every tail: a clean shutdown leaves the rows in the tables
      } catch (Exception | Error e) {
        env.err().println("floe: sealing the tails at shutdown failed: " + e.getMessage());
      }
      db.close();
      stopped.countDown();
      env.err().println("floe: shut down cleanly");
      env.err().flush();
      // A requested, completed shutdown is a success: exit 0 rather than the JVM's 143 for SIGTERM.
      Runtime.getRuntime().halt(Main.EXIT_OK);
    }, "floe-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    env.out().println("Floe is serving " + directory + " over the PostgreSQL protocol");
    env.out().println("  psql " + server.connectionUri());
    env.out().println("  jdbc:" + server.connectionUri());
    if (restServer != null) {
      env.out().println("and as an Iceberg REST catalog: " + restServer.uri());
    }
    env.out().flush();
    stopped.await();
    return Main.EXIT_OK;
  }

  /** A duration as 30s, 10min, 2h, 1d, 500ms, or 0 for none. */
  private Duration duration(String name, String value) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)\\s*(ms|s|min|h|d)?").matcher(value.strip());
    if (!m.matches() || m.group(2) == null && !m.group(1).equals("0")) {
      throw new ParameterException(spec.commandLine(), name + " must be a duration such as 30s, 10min or 2h (0: no "
          + "limit), was \"" + value + "\"");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2) == null ? "s" : m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "min" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      case "d" -> Duration.ofDays(n);
      default -> Duration.ofSeconds(n);
    };
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // failing to start anyway
    }
  }


}
