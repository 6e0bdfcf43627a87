package dev.floe.trino;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * The module's one {@code floe serve} process and one Trino server on its REST catalog, shared by every test class
 * (Trino takes ~15 s to start); tests keep apart by using their own schemas. Both stop in a shutdown hook.
 *
 * <p>Without a Java 24+ JDK (Trino 476 needs one) every test is skipped with a message saying so.
 */
final class TrinoFloe {
  private static TrinoFloe instance;
  private static RuntimeException failed;
  private static boolean toldSkip;

  /** The name and password of the user Trino logs in as on {@link #floeAuth}. */
  static final String AUTH_USER = "trino";
  static final String AUTH_PASSWORD = "trino-s3cret";

  final Path warehouse;
  /** {@code floe serve} with {@code --auth trust}: Trino's catalog {@code floe}. */
  final FloeServerProcess floe;
  final Path authWarehouse;
  /** {@code floe serve --auth scram-sha-256} on another warehouse: Trino's catalog {@code floe_auth}. */
  final FloeServerProcess floeAuth;
  final TrinoServerProcess trino;

  private TrinoFloe(Path javaHome, Path trinoHome, Path root) throws IOException, InterruptedException {
    Path warehouses = Files.createDirectories(root.resolve("warehouses"));
    warehouse = Files.createTempDirectory(warehouses, "wh-");
    authWarehouse = Files.createTempDirectory(warehouses, "wh-auth-");
    FloeServerProcess.addUser(authWarehouse, AUTH_USER, AUTH_PASSWORD);
    floe = new FloeServerProcess(warehouse);
    FloeServerProcess a = null;
    TrinoServerProcess t;
    try {
      a = new FloeServerProcess(authWarehouse, List.of("--auth", "scram-sha-256"), AUTH_USER, AUTH_PASSWORD);
      t = new TrinoServerProcess(javaHome, trinoHome,
          Files.createTempDirectory(Files.createDirectories(root.resolve("runs")), "run-"),
          Map.of("floe", TrinoServerProcess.catalogProperties(floe.restUri),
              "floe_auth", TrinoServerProcess.catalogProperties(a.restUri, AUTH_USER, AUTH_PASSWORD)));
    } catch (IOException | InterruptedException | RuntimeException e) {
      floe.close();
      if (a != null) {
        a.close();
      }
      throw e;
    }
    floeAuth = a;
    trino = t;
    Runtime.getRuntime().addShutdownHook(new Thread(this::close, "trino-floe-shutdown"));
  }

  static synchronized TrinoFloe get() {
    Optional<Path> java = TrinoServerProcess.findJava();
    if (java.isEmpty()) {
      String why = "Trino " + version() + " needs Java 24 or newer and none was found (looked at -Dtrino.java.home, "
          + "TRINO_JAVA_HOME, /usr/lib/jvm/*, JAVA_HOME): the Trino tests are skipped";
      if (!toldSkip) {
        toldSkip = true;
        System.err.println("TrinoFloe: " + why);
      }
      Assumptions.abort(why);
    }
    if (failed != null) {
      throw failed;
    }
    if (instance == null) {
      try {
        Path root = Path.of(System.getProperty("trino.root", "target/trino")).toAbsolutePath();
        Path home = TrinoServerProcess.unpacked(Path.of(System.getProperty("trino.tarball", "missing")), root,
            version());
        // the warehouse and Trino's etc/data of the last run stay for a look after a failure; older ones go
        for (String dir : List.of("warehouses", "runs")) {
          if (Files.isDirectory(root.resolve(dir))) {
            try (Stream<Path> old = Files.list(root.resolve(dir))) {
              for (Path p : old.toList()) {
                TrinoServerProcess.deleteTree(p);
              }
            }
          }
        }
        instance = new TrinoFloe(java.get(), home, root);
      } catch (IOException e) {
        failed = new UncheckedIOException(e);
        throw failed;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failed = new IllegalStateException(e);
        throw failed;
      } catch (RuntimeException e) {
        failed = e;
        throw e;
      }
    }
    return instance;
  }

  static String version() {
    return System.getProperty("trino.version", "476");
  }

  /** Runs one statement in Trino; a query's rows as canonical values, an update's count as one row. */
  List<List<String>> trino(String sql) throws SQLException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try (Connection c = trino.connect(); Statement st = c.createStatement()) {
        if (st.execute(sql)) {
          try (ResultSet rs = st.getResultSet()) {
            return Rows.of(rs);
          }
        }
        return List.of(List.of("count:" + st.getLargeUpdateCount()));
      } catch (SQLException e) {
        // For a while after its node is active, Trino's scheduler may not see it yet: the statement failed before
        // it ran (nothing was read or committed), so it runs again (TrinoServerProcess.awaitScan).
        if (!String.valueOf(e.getMessage()).contains("No nodes available to run query") || System.nanoTime() > deadline) {
          throw e;
        }
        try {
          Thread.sleep(500);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  /** Every row of a query through Floe's PostgreSQL port. */
  List<List<String>> floe(String sql) throws SQLException {
    return floe.rows(sql);
  }

  /** Runs statements on Floe, each on its own connection (autocommit). */
  void floeExec(String... sql) throws SQLException {
    for (String s : sql) {
      floe.exec(s);
    }
  }

  /**
   * Creates a schema from Trino with a location in the warehouse. Trino's REST catalog takes a namespace's
   * {@code location} property as the base of its tables' locations; without one it creates the table eagerly and
   * then refuses its non-empty directory (docs/rest-catalog.md, Trino).
   */
  void trinoSchema(String schema) throws SQLException {
    trino("CREATE SCHEMA floe." + schema + " WITH (location = '" + warehouse.resolve(schema) + "')");
  }

  private void close() {
    trino.close();
    try {
      floe.close();
      floeAuth.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
