package dev.floe.trino;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Trino server (the {@code io.trino:trino-server} tarball, started with its own {@code bin/launcher run})
 * whose catalogs are the Iceberg connector on Floe's REST catalog ({@link #catalogProperties}).
 *
 * <p>The tarball (821 MB) is unpacked once into {@code target/trino/trino-server-<version>} and reused by later
 * runs; a marker file says the unpack finished. Trino loads every plugin of its plugin directory at start, ~50 s on 2
 * cores for the whole distribution; this server's {@code plugin.dir} holds a link to the Iceberg plugin only, and
 * starts in ~15 s.
 *
 * <p>Trino needs Java 24 or newer: {@link #findJava()} looks for one. Used by the trino-tests module and by
 * {@code bench/run rest}.
 */
public final class TrinoServerProcess implements AutoCloseable {
  public final Process process;
  public final int port;
  public final Path log;

  /**
   * Starts Trino with a catalog file {@code etc/catalog/NAME.properties} for each of {@code catalogs}, and waits
   * until it runs queries.
   */
  public TrinoServerProcess(Path javaHome, Path home, Path runDir, Map<String, List<String>> catalogs)
      throws IOException, InterruptedException {
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    runDir = runDir.toAbsolutePath(); // Trino runs in another directory: its configuration names absolute paths
    home = home.toAbsolutePath();
    Path etc = Files.createDirectories(runDir.resolve("etc"));
    Path data = Files.createDirectories(runDir.resolve("data"));
    Path plugins = Files.createDirectories(runDir.resolve("plugin"));
    Files.createSymbolicLink(plugins.resolve("iceberg"), home.resolve("plugin").resolve("iceberg"));
    write(etc.resolve("node.properties"), "node.environment=floe_tests", "node.id=" + UUID.randomUUID(),
        "node.data-dir=" + data, "node.internal-address=127.0.0.1");
    write(etc.resolve("jvm.config"), "-server", "-Xmx2G", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError",
        "-Djdk.attach.allowAttachSelf=true", "-Dfile.encoding=UTF-8");
    write(etc.resolve("config.properties"), "coordinator=true", "node-scheduler.include-coordinator=true",
        "http-server.http.port=" + port, "discovery.uri=http://127.0.0.1:" + port, "plugin.dir=" + plugins,
        "query.max-memory=1GB", "query.max-memory-per-node=512MB");
    write(etc.resolve("log.properties"), "io.trino=INFO");
    Files.createDirectories(etc.resolve("catalog"));
    for (Map.Entry<String, List<String>> c : catalogs.entrySet()) {
      write(etc.resolve("catalog").resolve(c.getKey() + ".properties"), c.getValue().toArray(String[]::new));
    }
    log = runDir.resolve("server.log");
    ProcessBuilder pb = new ProcessBuilder(home.resolve("bin").resolve("launcher").toString(), "run",
        "--etc-dir", etc.toString(), "--data-dir", data.toString())
        .redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("JAVA_HOME", javaHome.toString());
    pb.environment().put("PATH", javaHome.resolve("bin") + ":"
        + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
    long start = System.nanoTime();
    process = pb.start();
    awaitQueries(start);
    System.out.printf("TrinoServerProcess: Trino on port %d ready %.1f s after start (Java %s)%n", port,
        (System.nanoTime() - start) / 1e9, javaHome);
  }

  /**
   * The catalog a user writes to put Trino on Floe: the Iceberg connector with the REST catalog, and Trino's Hadoop
   * file system for the warehouse's local files. Floe names its files by plain absolute paths ({@code /wh/s/t/data/..}
   * with no scheme); Trino's native local file system ({@code fs.native-local.enabled}) only takes {@code file://} and
   * {@code local://} locations and fails on those with "No factory for location", while the Hadoop file system reads
   * a path without a scheme as a local file.
   */
  public static List<String> catalogProperties(String restUri) {
    return List.of("connector.name=iceberg", "iceberg.catalog.type=rest", "iceberg.rest-catalog.uri=" + restUri,
        "fs.hadoop.enabled=true");
  }

  /**
   * The catalog for a {@code floe serve --auth scram-sha-256}: Trino gets its token with OAuth2's client-credentials
   * grant from Floe's token endpoint, as a {@code floe user}.
   */
  public static List<String> catalogProperties(String restUri, String user, String password) {
    List<String> p = new ArrayList<>(catalogProperties(restUri));
    p.addAll(List.of("iceberg.rest-catalog.security=OAUTH2", "iceberg.rest-catalog.oauth2.credential=" + user + ":"
        + password, "iceberg.rest-catalog.oauth2.server-uri=" + restUri + "/v1/oauth/tokens"));
    return p;
  }

  /**
   * Runs {@code sql} (a scan of a connector's table) until Trino schedules it: for some seconds after the node is
   * active, its scheduler's view of the nodes may still be empty ("No nodes available to run query").
   */
  public static void awaitScan(Statement st, String sql) throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try (ResultSet rs = st.executeQuery(sql)) {
        while (rs.next()) {
          rs.getObject(1);
        }
        return;
      } catch (SQLException e) {
        if (!String.valueOf(e.getMessage()).contains("No nodes available") || System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(500);
      }
    }
  }

  private void awaitQueries(long start) throws InterruptedException, IOException {
    SQLException last = null;
    while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(240)) {
      if (!process.isAlive()) {
        throw new IllegalStateException("Trino exited with " + process.exitValue() + ":\n" + tail());
      }
      // "SELECT 1" answers before the node has announced itself to discovery; until it has, a query that scans a
      // table fails with "No nodes available to run query"
      try (Connection c = connect(); Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*) FROM system.runtime.nodes WHERE state = 'active'")) {
        if (rs.next() && rs.getLong(1) > 0) {
          return;
        }
      } catch (SQLException e) {
        last = e; // not listening yet
      }
      Thread.sleep(500);
    }
    close();
    throw new IllegalStateException("Trino did not run a query within 240 s (last: " + last + "):\n" + tail());
  }

  public Connection connect() throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", "floe-tests");
    return DriverManager.getConnection("jdbc:trino://127.0.0.1:" + port + "/floe", p);
  }

  /** The last lines of the server's log. */
  public String tail() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  @Override
  public void close() {
    process.destroy(); // SIGTERM: the launcher exec'd the JVM, which shuts down cleanly
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  private static void write(Path file, String... lines) throws IOException {
    Files.writeString(file, String.join("\n", lines) + "\n");
  }

  /**
   * The unpacked server under {@code root}: unpacked from the tarball by {@code tar} on the first run (~6 s), found
   * there on later ones.
   */
  public static Path unpacked(Path tarball, Path root, String version) throws IOException, InterruptedException {
    Path home = root.resolve("trino-server-" + version);
    Path done = root.resolve("trino-server-" + version + ".unpacked");
    if (Files.exists(done) && Files.isDirectory(home.resolve("plugin").resolve("iceberg"))) {
      return home;
    }
    if (!Files.isRegularFile(tarball)) {
      throw new IllegalStateException("no Trino tarball at " + tarball + " (Maven resolves io.trino:trino-server:"
          + version + ":tar.gz; run the module through Maven)");
    }
    Files.createDirectories(root);
    deleteTree(home);
    Path tmp = Files.createTempDirectory(root, ".unpacking-");
    // GNU tar: the tarball's plugins share jars through hard links, which tar restores as links.
    Process tar = new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", tmp.toString())
        .redirectErrorStream(true).start();
    String out = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (tar.waitFor() != 0) {
      deleteTree(tmp);
      throw new IllegalStateException("tar -xzf " + tarball + " failed:\n" + out);
    }
    Files.move(tmp.resolve("trino-server-" + version), home);
    deleteTree(tmp);
    Files.writeString(done, tarball + "\n");
    return home;
  }

  /**
   * A JDK of Java 24 or newer: {@code -Dtrino.java.home} or {@code TRINO_JAVA_HOME} if set, then Temurin 25 where
   * this project's machines have it, then any JDK under /usr/lib/jvm, then {@code JAVA_HOME}.
   */
  public static Optional<Path> findJava() {
    List<Path> candidates = new ArrayList<>();
    Optional.ofNullable(System.getProperty("trino.java.home")).ifPresent(p -> candidates.add(Path.of(p)));
    Optional.ofNullable(System.getenv("TRINO_JAVA_HOME")).ifPresent(p -> candidates.add(Path.of(p)));
    candidates.add(Path.of("/usr/lib/jvm/temurin-25-jdk-amd64"));
    try (Stream<Path> jvms = Files.list(Path.of("/usr/lib/jvm"))) {
      jvms.sorted(Comparator.reverseOrder()).forEach(candidates::add);
    } catch (IOException e) {
      // no /usr/lib/jvm
    }
    Optional.ofNullable(System.getenv("JAVA_HOME")).ifPresent(p -> candidates.add(Path.of(p)));
    return candidates.stream().filter(h -> javaMajor(h) >= 24).findFirst();
  }

  /** The feature version a JDK's {@code release} file names, or 0. */
  public static int javaMajor(Path home) {
    if (!Files.isExecutable(home.resolve("bin").resolve("java"))) {
      return 0;
    }
    try {
      for (String line : Files.readAllLines(home.resolve("release"), StandardCharsets.UTF_8)) {
        if (line.startsWith("JAVA_VERSION=")) {
          String v = line.substring("JAVA_VERSION=".length()).replace("\"", "");
          return Integer.parseInt(v.split("[.+-]")[0]);
        }
      }
    } catch (IOException | NumberFormatException e) {
      return 0;
    }
    return 0;
  }

  public static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) { // walk does not follow the plugin link
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
