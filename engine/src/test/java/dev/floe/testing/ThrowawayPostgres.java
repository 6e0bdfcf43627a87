package dev.floe.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * A throwaway PostgreSQL cluster of the Debian package (which .ci/install-clients installs), started by a
 * test to compare Floe with or to read changes from: a fresh initdb in a temporary directory, on a free
 * loopback port, run as the {@code postgres} user when the tests run as root (initdb and postgres refuse
 * root), role {@code floe} a superuser. {@link #startLogical} turns logical decoding on
 * ({@code wal_level=logical}) for Debezium. Closing it stops the server and deletes the cluster.
 */
public final class ThrowawayPostgres implements AutoCloseable {
  private final Path dir;
  private final int port;

  private ThrowawayPostgres(Path dir, int port) {
    this.dir = dir;
    this.port = port;
  }

  /** Creates and starts a cluster; fails the test with what to install if there is no server. */
  public static ThrowawayPostgres start() throws IOException, InterruptedException {
    return start("");
  }

  /** The same with logical decoding on, for a logical replication slot to read (pgoutput). */
  public static ThrowawayPostgres startLogical() throws IOException, InterruptedException {
    return start(" -c wal_level=logical -c max_replication_slots=16 -c max_wal_senders=16");
  }

  private static ThrowawayPostgres start(String settings) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("floe-pg-");
    if (root()) {
      run(List.of("chown", "postgres:postgres", dir.toString()), false);
    }
    Path data = dir.resolve("data");
    run(List.of(tool("initdb"), "-D", data.toString(), "-U", "floe", "--auth=trust", "-E", "UTF8", "--locale=C",
        "--no-sync"), true);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    run(List.of(tool("pg_ctl"), "-D", data.toString(), "-l", dir.resolve("server.log").toString(), "-w", "-t", "60",
        "-o", "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off" + settings, "start"), true);
    return new ThrowawayPostgres(dir, port);
  }

  /** The major version and more, as {@code postgres --version} prints it ({@code 15.14}). */
  public static String version() throws IOException, InterruptedException {
    return run(List.of(tool("postgres"), "--version"), false).replace("postgres (PostgreSQL) ", "").strip();
  }

  public int port() {
    return port;
  }

  /** The database as {@code floe cdc follow --postgres} takes it: {@code 127.0.0.1:<port>/postgres}. */
  public String url() {
    return "127.0.0.1:" + port + "/postgres";
  }

  public Connection connect() throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", "floe");
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres", p);
  }

  @Override
  public void close() {
    try {
      run(List.of(tool("pg_ctl"), "-D", dir.resolve("data").toString(), "-m", "immediate", "-w", "stop"), true);
    } catch (IOException | InterruptedException | RuntimeException e) {
      System.err.println("could not stop PostgreSQL: " + e.getMessage());
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temporary directory: the next boot's cleaning removes what is left
    }
  }

  private static boolean root() {
    return "root".equals(System.getProperty("user.name"));
  }

  private static String tool(String name) {
    Path base = Path.of("/usr/lib/postgresql");
    try (Stream<Path> versions = Files.isDirectory(base) ? Files.list(base) : Stream.empty()) {
      return versions.map(v -> v.resolve("bin").resolve(name)).filter(Files::isExecutable)
          .max(Comparator.comparing(Path::toString)).map(Path::toString)
          .orElseGet(() -> fail("no PostgreSQL server under " + base + ": run .ci/install-clients (as root), which "
              + "installs Debian's postgresql package"));
    } catch (IOException e) {
      return fail("cannot list " + base + ": " + e.getMessage());
    }
  }

  private static String run(List<String> cmd, boolean asPostgres) throws IOException, InterruptedException {
    List<String> full = new ArrayList<>();
    if (asPostgres && root()) {
      full.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    full.addAll(cmd);
    Process p = new ProcessBuilder(full).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IllegalStateException(String.join(" ", full) + " failed:\n" + output);
    }
    return output;
  }
}
