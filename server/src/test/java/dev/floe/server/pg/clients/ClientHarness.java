package dev.floe.server.pg.clients;

import static org.assertj.core.api.Assertions.fail;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.server.pg.PgServer;
import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the client tests share: a Floe server on a free loopback port over a fresh warehouse, and a way to
 * run a real client program (psql, python3, node, isql, pgbench) against it as a subprocess.
 *
 * <p>A client that is missing is a failure that says to run {@code .ci/install-clients}, never a skip.
 */
final class ClientHarness {
  static final String INSTALL_HINT = "run .ci/install-clients (as root) to install the PostgreSQL clients";
  /** Debian's python3-* modules import only under this interpreter, not under a python3 first on PATH. */
  static final String PYTHON = "/usr/bin/python3";

  private ClientHarness() {}

  /** A Floe server for one test class. */
  static final class Server implements AutoCloseable {
    final Database db;
    final PgServer pg;

    Server(Path warehouse) throws IOException {
      db = Floe.open(dev.floe.FloeConfig.builder(warehouse).fenced(true).build());
      pg = PgServer.start(db, PgServer.Config.defaults().withPort(0));
    }

    int port() {
      return pg.port();
    }

    /** pgjdbc, to set up tables and check what a client left behind. */
    Connection jdbc() throws SQLException {
      return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port() + "/floe", "tester", "");
    }

    void execute(String... sql) throws SQLException {
      try (Connection c = jdbc(); Statement st = c.createStatement()) {
        for (String s : sql) {
          st.execute(s);
        }
      }
    }

    /** The libpq environment of a client of this server. */
    Map<String, String> env() {
      Map<String, String> env = new HashMap<>();
      env.put("PGHOST", "127.0.0.1");
      env.put("PGPORT", Integer.toString(port()));
      env.put("PGUSER", "tester");
      env.put("PGDATABASE", "floe");
      env.put("PGCONNECT_TIMEOUT", "10");
      return env;
    }

    @Override
    public void close() {
      pg.shutdown(Duration.ofSeconds(5));
      db.close();
    }
  }

  /** What a client process did. */
  record Result(List<String> command, int exit, String out, String err) {
    List<String> lines() {
      return split(out);
    }

    List<String> errLines() {
      return split(err);
    }

    private static List<String> split(String s) {
      if (s.isEmpty()) {
        return List.of();
      }
      String t = s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
      return List.of(t.split("\r?\n", -1));
    }

    /** For assertion messages: the command, its exit code, and everything it printed. */
    String describe() {
      return String.join(" ", command) + "\nexit " + exit + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
    }

    Result assertSuccess() {
      if (exit != 0) {
        fail("client failed:\n" + describe());
      }
      return this;
    }
  }

  /**
   * The absolute path of a program on PATH (or an absolute path) that answers {@code --version}; fails with the
   * install hint when it is absent or broken (Debian's /usr/bin/pgbench is a wrapper that fails when the
   * PostgreSQL package holding the real pgbench is missing).
   */
  static String requireTool(String name) {
    String path = null;
    if (name.startsWith("/")) {
      path = Files.isExecutable(Path.of(name)) ? name : null;
    } else {
      for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
        Path p = Path.of(dir.isEmpty() ? "." : dir, name);
        if (Files.isExecutable(p) && !Files.isDirectory(p)) {
          path = p.toString();
          break;
        }
      }
    }
    if (path == null) {
      return fail(name + " is not installed: " + INSTALL_HINT);
    }
    Result version = run(List.of(path, "--version"), Map.of(), null, Duration.ofSeconds(30));
    if (version.exit() != 0) {
      return fail(name + " does not run (" + path + " --version: " + version.err().strip() + "): " + INSTALL_HINT);
    }
    return path;
  }

  /** Fails with the install hint unless /usr/bin/python3 imports every module. */
  static void requirePythonModules(String... modules) {
    requireTool(PYTHON);
    for (String m : modules) {
      Result r = run(List.of(PYTHON, "-c", "import " + m), Map.of(), null, Duration.ofSeconds(60));
      if (r.exit() != 0) {
        fail("the Python module " + m + " does not import under " + PYTHON + ": " + INSTALL_HINT + "\n" + r.err());
      }
    }
  }

  /** The node_modules directory that .ci/install-clients fills (server/src/test/node/node_modules). */
  static Path requireNodeModules(String... packages) {
    requireTool("node");
    Path dir = serverModuleDir().resolve("src/test/node/node_modules");
    for (String p : packages) {
      if (!Files.isRegularFile(dir.resolve(p).resolve("package.json"))) {
        fail("the npm package " + p + " is not in " + dir + ": " + INSTALL_HINT);
      }
    }
    return dir;
  }

  /** The server module's directory: Maven runs tests there; an IDE may run them from the repository root. */
  static Path serverModuleDir() {
    Path cwd = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
    if (Files.isDirectory(cwd.resolve("src/test/java/dev/floe/server"))) {
      return cwd;
    }
    return cwd.resolve("server");
  }

  /** A file under src/test/resources/clients, as a path on disk. */
  static Path script(String relative) {
    URL url = ClientHarness.class.getResource("/clients/" + relative);
    if (url == null) {
      return fail("no test resource clients/" + relative);
    }
    try {
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Runs a command to its end (or kills it after the timeout, which fails the test). Inherited PG* variables
   * are dropped so that only {@code env} says where the server is.
   */
  static Result run(List<String> command, Map<String, String> env, String stdin, Duration timeout) {
    Path tmp = null;
    try {
      tmp = Files.createTempDirectory("floe-client");
      Path out = tmp.resolve("out");
      Path err = tmp.resolve("err");
      ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
      pb.environment().keySet().removeIf(k -> k.startsWith("PG") || k.startsWith("ODBC") || k.startsWith("PYTHON"));
      pb.environment().put("LC_ALL", "C.UTF-8");
      pb.environment().put("LANG", "C.UTF-8");
      pb.environment().put("TZ", "UTC");
      pb.environment().put("PYTHONIOENCODING", "utf-8");
      pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
      pb.environment().putAll(env);
      if (stdin == null) {
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      } else {
        Path in = tmp.resolve("in");
        Files.writeString(in, stdin);
        pb.redirectInput(in.toFile());
      }
      Process p = pb.start();
      boolean done = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (!done) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
      Result r = new Result(command, done ? p.exitValue() : -1, Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
      if (!done) {
        fail("client timed out after " + timeout + ":\n" + r.describe());
      }
      return r;
    } catch (IOException e) {
      return fail("could not run " + command + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return fail("interrupted", e);
    } finally {
      if (tmp != null) {
        try (var files = Files.list(tmp)) {
          for (Path f : files.toList()) {
            Files.deleteIfExists(f);
          }
          Files.deleteIfExists(tmp);
        } catch (IOException ignored) {
          // a temp directory left behind
        }
      }
    }
  }

  static List<String> args(String... parts) {
    return new ArrayList<>(List.of(parts));
  }
}
