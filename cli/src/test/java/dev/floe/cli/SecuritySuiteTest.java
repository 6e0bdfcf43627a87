package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile client against a real {@code floe serve} (docs/security.md), through psql and psycopg2. What
 * can reach a file is not listed by hand: every DuckDB table function, scalar function and setting is
 * enumerated from a plain DuckDB in this JVM, called there with a canary file's path, and whatever reads the
 * canary there must fail through Floe. Nothing outside the warehouse may be created, read or deleted.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecuritySuiteTest {
  private static final String SECRET = "canary-7d1e-secret";
  private static final String ENV_SECRET = "canary-env-55aa";
  private static final String PASSWORD = "pw-for-tester";

  @TempDir
  static Path dir;

  private Path warehouse;
  private Path canaryDir;
  private Path canary;
  private Process server;
  private int port;
  private final StringBuilder serverOutput = new StringBuilder();
  private Map<String, String> canarySnapshot;

  @BeforeAll
  void start() throws Exception {
    warehouse = dir.resolve("wh");
    canaryDir = dir.resolve("canary");
    Files.createDirectories(canaryDir);
    canary = canaryDir.resolve("secret.csv");
    Files.writeString(canary, "a,b\n" + SECRET + ",1\n");
    Files.writeString(canaryDir.resolve("keep.txt"), SECRET);
    // a user added with the CLI, so the users file exists in the warehouse; the server logs in with SCRAM
    Run added = floe(PASSWORD + "\n", "user", "add", "tester", "--warehouse", warehouse.toString());
    assertThat(added.exit).as(added.out).isZero();
    Files.createDirectories(warehouse.resolve("public"));
    Files.createSymbolicLink(warehouse.resolve("public").resolve("link"), canaryDir);
    canarySnapshot = snapshot(canaryDir);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb = new ProcessBuilder(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), Main.class.getName(), "serve", "--warehouse", warehouse.toString(),
        "--pg-port", "0", "--auth", "scram-sha-256", "--tls-self-signed", "--max-statement-time", "3s"))
        .redirectErrorStream(true);
    pb.environment().put("FLOE_TEST_CANARY", ENV_SECRET);
    server = pb.start();
    BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
    port = -1;
    for (String line; port < 0 && (line = out.readLine()) != null; ) {
      serverOutput.append(line).append('\n');
      Matcher m = Pattern.compile("psql postgresql://127\\.0\\.0\\.1:(\\d+)/").matcher(line);
      if (m.find()) {
        port = Integer.parseInt(m.group(1));
      }
    }
    assertThat(port).as(serverOutput.toString()).isPositive();
    Thread drain = new Thread(() -> {
      try {
        for (String line; (line = out.readLine()) != null; ) {
          synchronized (serverOutput) {
            serverOutput.append(line).append('\n');
          }
        }
      } catch (IOException ignored) {
        // the server ended
      }
    });
    drain.setDaemon(true);
    drain.start();
    try (Connection c = jdbc(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE t (a text, b int)");
      st.execute("INSERT INTO t VALUES ('x', 1)");
    }
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.destroy();
      server.waitFor(60, TimeUnit.SECONDS);
      server.destroyForcibly();
    }
    // nothing outside the warehouse was created, changed or deleted, and no secret reached the log
    assertThat(snapshot(canaryDir)).isEqualTo(canarySnapshot);
    try (Stream<Path> s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString()).filter(n -> !n.equals("stmts.json") && !n.equals("oracle")).toList())
          .containsExactlyInAnyOrder("wh", "canary");
    }
    synchronized (serverOutput) {
      assertThat(serverOutput.toString()).doesNotContain(PASSWORD, SECRET, ENV_SECRET);
    }
  }

  @Test
  void whatReadsAFileInDuckDbFailsThroughFloe() throws Exception {
    // the oracle: a plain DuckDB in this JVM, told the canary's path; what returns its content reaches files
    List<String> probes = new ArrayList<>();
    Map<String, Boolean> reaches = new LinkedHashMap<>();
    Properties props = new Properties();
    props.setProperty("autoinstall_known_extensions", "false");
    props.setProperty("autoload_known_extensions", "false");
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:", props)) {
      List<String[]> functions = new ArrayList<>();
      try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery("SELECT DISTINCT function_name, "
          + "function_type IN ('table', 'table_macro') FROM duckdb_functions() WHERE function_type IN ('table', "
          + "'table_macro', 'scalar', 'macro') AND regexp_matches(function_name, '^[a-z][a-z0-9_]*$') ORDER BY 1")) {
        while (rs.next()) {
          functions.add(new String[] {rs.getString(1), rs.getString(2)});
        }
      }
      assertThat(functions).hasSizeGreaterThan(500);
      Path oracleCanary = dir.resolve("oracle").resolve("secret.csv");
      Files.createDirectories(oracleCanary.getParent());
      Files.copy(canary, oracleCanary, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      for (String[] f : functions) {
        boolean table = f[1].equals("true");
        String sql = table ? "SELECT * FROM " + f[0] + "('" + canary + "')" : "SELECT " + f[0] + "('" + canary + "')::text";
        boolean leaked = false;
        if (f[0].startsWith("enable_") || f[0].startsWith("disable_")) {
          // switches of the oracle's own session (profiling, logging): through Floe they are refused as any other
          reaches.put(sql, false);
          probes.add(sql);
          continue;
        }
        try (Statement st = duck.createStatement()) {
          st.setQueryTimeout(5);
          try (ResultSet rs = st.executeQuery(sql.replace(canary.toString(), oracleCanary.toString()))) {
            StringBuilder b = new StringBuilder();
            int n = rs.getMetaData().getColumnCount();
            for (int rows = 0; rows < 20 && rs.next(); rows++) {
              for (int k = 1; k <= n; k++) {
                b.append(rs.getString(k)).append('|');
              }
            }
            leaked = b.toString().contains(SECRET);
          }
        } catch (Exception e) {
          leaked = false;
        }
        reaches.put(sql, leaked);
        probes.add(sql);
        probes.add(sql.replace(canary.toString(), warehouse.resolve("floe-users").toString()));
      }
    }
    assertThat(reaches.values().stream().filter(b -> b).count()).as("the oracle finds DuckDB's file readers")
        .isGreaterThanOrEqualTo(5);
    List<JsonNode> results = psycopg(probes);
    for (int k = 0; k < probes.size(); k++) {
      String sql = probes.get(k);
      JsonNode r = results.get(k);
      assertThat(r.toString()).as(sql).doesNotContain(SECRET, "SCRAM-SHA-256$", ENV_SECRET);
      Boolean reads = reaches.get(sql);
      if (Boolean.TRUE.equals(reads)) {
        assertThat(r.path("ok").asBoolean()).as(sql + " reads files in DuckDB").isFalse();
        assertThat(r.path("sqlstate").asText()).as(sql).isEqualTo("42501");
      }
    }
  }

  @Test
  void settingsAreNeitherChangedNorRead() throws Exception {
    List<String> names = new ArrayList<>();
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement();
        ResultSet rs = st.executeQuery("SELECT name FROM duckdb_settings() ORDER BY 1")) {
      while (rs.next()) {
        names.add(rs.getString(1));
      }
    }
    assertThat(names).hasSizeGreaterThan(100);
    List<String> probes = new ArrayList<>();
    for (String name : names) {
      probes.add("SET \"" + name + "\" = '" + canaryDir + "'");
      probes.add("SHOW \"" + name + "\"");
      probes.add("SELECT current_setting('" + name + "')");
    }
    probes.add("SELECT * FROM read_text('" + canary + "')"); // still fenced after all the SETs
    List<JsonNode> results = psycopg(probes);
    for (int k = 0; k < probes.size(); k++) {
      assertThat(results.get(k).toString()).as(probes.get(k)).doesNotContain(warehouse.toString(), "/root",
          "/usr/lib/jvm", SECRET, ENV_SECRET);
    }
    assertThat(results.get(results.size() - 1).path("sqlstate").asText()).isEqualTo("42501");
  }

  @Test
  void statementsThatReachTheHostAreRefused() throws Exception {
    Map<String, String> expected = new TreeMap<>();
    expected.put("SELECT * FROM read_text('/etc/passwd')", "42501");
    expected.put("SELECT * FROM read_blob('/dev/zero')", "42501");
    expected.put("SELECT * FROM glob('/root/*')", "42501");
    expected.put("SELECT * FROM read_csv('" + canary + "')", "42501");
    expected.put("SELECT * FROM read_text('" + warehouse.resolve("floe-users") + "')", "42501");
    expected.put("SELECT * FROM read_blob('" + warehouse.resolve("tls") + "/*')", "42501");
    expected.put("SELECT * FROM '" + warehouse.resolve("floe-users") + "'", "42P01");
    expected.put("SELECT * FROM '" + canary + "'", "42P01");
    expected.put("SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')", "42501");
    expected.put("SELECT (SELECT content FROM read_text('" + canary + "'))", "42501");
    expected.put("INSERT INTO t SELECT content, 1 FROM read_text('" + canary + "')", "42501");
    expected.put("UPDATE t SET a = (SELECT content FROM read_text('" + canary + "'))", "42501");
    expected.put("CREATE TABLE esc1 (a int) WITH (location = '" + canaryDir.resolve("t") + "')", "42501");
    expected.put("CREATE TABLE esc2 (a int) WITH (location = '" + warehouse.resolve("public/link/t") + "')", "42501");
    expected.put("CREATE TABLE esc3 (a int) WITH (location = 'relative/t')", "42P17");
    expected.put("CREATE TABLE esc4 (a int) WITH (location = '" + warehouse + "/public/t')", "42P17");
    expected.put("CREATE TABLE esc5 (a int) WITH ('write.data.path' = '" + canaryDir + "')", "0A000");
    expected.put("CREATE TABLE \"../../esc6\" (a int)", "42602");
    expected.put("CREATE SCHEMA \"../esc7\"", "42602");
    expected.put("ALTER TABLE t SET (location = '" + canaryDir + "')", "42501");
    expected.put("ALTER TABLE t RENAME TO \"a/b\"", "42602");
    expected.put("CREATE TABLE esc8 (a int) WITH (tail = true, publish_to = 's3://b/p', "
        + "'floe.tail.publish.s3.endpoint' = 'http://169.254.169.254')", "42501");
    List<String> probes = new ArrayList<>(expected.keySet());
    List<JsonNode> results = psycopg(probes);
    Map<String, String> got = new TreeMap<>();
    for (int k = 0; k < probes.size(); k++) {
      got.put(probes.get(k), results.get(k).path("ok").asBoolean() ? "ok" : results.get(k).path("sqlstate").asText());
      assertThat(results.get(k).toString()).doesNotContain(SECRET);
    }
    assertThat(got).isEqualTo(expected);
    try (Stream<Path> s = Files.walk(warehouse)) {
      assertThat(s.filter(p -> p.toString().contains("esc")).toList()).isEmpty();
    }
  }

  @Test
  void psqlGetsClearErrorsForLimitsAndCopiesOnlyFromTheClient() throws Exception {
    StringBuilder cols = new StringBuilder("SELECT 1");
    for (int k = 1; k < 70_000; k++) {
      cols.append(",1");
    }
    Path wide = dir.resolve("stmts.json");
    Files.writeString(wide, cols + ";\n");
    Result r = psql("-f", wide.toString());
    assertThat(r.out).contains("54011").contains("target lists can have at most 1664 entries")
        .doesNotContain("protocol");
    Result slow = psql("-c", "SET statement_timeout = 0", "-c", "SELECT count(*) FROM range(100000000000) r(i) "
        + "WHERE i % 7 = 3");
    assertThat(slow.out).contains("57014").contains("canceling statement due to statement timeout");
    Path local = dir.resolve("stmts.json");
    Files.writeString(local, "y\t2\n");
    Result copy = psql("-c", "\\copy t FROM '" + local + "'", "-c", "COPY t FROM '" + canary + "'", "-c",
        "COPY t TO '" + canaryDir.resolve("out.csv") + "'", "-c", "SELECT count(*) FROM t WHERE a = 'y'");
    assertThat(copy.out).contains("COPY 1").doesNotContain(SECRET);
    assertThat(copy.out.lines().filter(l -> l.contains("42501")).count()).as(copy.out).isEqualTo(2);
  }

  @Test
  void userNamesThatCannotLogInAreRefusedByTheCli() throws Exception {
    Run r = floe("pw\n", "user", "add", "#comment", "--warehouse", warehouse.toString());
    assertThat(r.exit).isNotZero();
    assertThat(r.out).contains("invalid user name");
    assertThat(Files.readString(warehouse.resolve("floe-users"))).doesNotContain("#comment\t").containsPattern(
        "(?m)^tester\tSCRAM-SHA-256\\$\\S+\t-$");
  }

  // ---------------------------------------------------------------------------------------------- helpers

  private Connection jdbc() throws Exception {
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/floe", "tester", PASSWORD);
  }

  private Map<String, String> env() {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("PGHOST", "127.0.0.1");
    env.put("PGPORT", Integer.toString(port));
    env.put("PGUSER", "tester");
    env.put("PGPASSWORD", PASSWORD);
    env.put("PGDATABASE", "floe");
    env.put("PGCONNECT_TIMEOUT", "10");
    return env;
  }

  private List<JsonNode> psycopg(List<String> statements) throws Exception {
    Path file = Files.createTempFile("floe-probes-", ".json");
    try {
      new ObjectMapper().writeValue(file.toFile(), statements);
      Path script = Path.of(getClass().getResource("/security/run_statements.py").toURI());
      ProcessBuilder pb = new ProcessBuilder("/usr/bin/python3", script.toString(), file.toString());
      pb.environment().putAll(env());
      pb.redirectError(ProcessBuilder.Redirect.INHERIT);
      Process p = pb.start();
      List<JsonNode> out = new ArrayList<>();
      ObjectMapper json = new ObjectMapper();
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          out.add(json.readTree(line));
        }
      }
      assertThat(p.waitFor(600, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as("psycopg2 runner (run .ci/install-clients)").isZero();
      assertThat(out).hasSize(statements.size());
      return out;
    } finally {
      Files.deleteIfExists(file);
    }
  }

  private record Result(String out) {}

  private Result psql(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("psql", "-X", "-v", "VERBOSITY=verbose"));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env());
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    return new Result(out);
  }

  private record Run(int exit, String out) {}

  private static Run floe(String stdin, String... args) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
        Main.class.getName()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    return new Run(p.exitValue(), out);
  }

  private static Map<String, String> snapshot(Path root) throws IOException {
    Map<String, String> files = new TreeMap<>();
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.filter(Files::isRegularFile).toList()) {
        files.put(root.relativize(p).toString(), Files.readString(p));
      }
    }
    return files;
  }
}
