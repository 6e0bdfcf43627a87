package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code floe serve --catalog rest}: a second server whose tables are a first server's, reached through the first
 * one's REST catalog; and the options' mistakes, each refused before anything starts.
 */
class ServeOnRestCatalogTest {
  @TempDir
  Path dir;

  private static Process serve(List<String> args) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), Main.class.getName(), "serve"));
    command.addAll(args);
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  /** The PostgreSQL port the server prints once it serves. */
  private static int pgPort(Process p) throws IOException {
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    StringBuilder seen = new StringBuilder();
    for (String line; (line = out.readLine()) != null; ) {
      seen.append(line).append('\n');
      Matcher m = Pattern.compile("psql postgresql://127\\.0\\.0\\.1:(\\d+)/").matcher(line);
      if (m.find()) {
        Thread drain = new Thread(() -> {
          try {
            while (out.readLine() != null) {
              // the server's log, not needed here
            }
          } catch (IOException ignored) {
            // the process ended
          }
        });
        drain.setDaemon(true);
        drain.start();
        return Integer.parseInt(m.group(1));
      }
    }
    throw new AssertionError("the server did not start:\n" + seen);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void aServerOnAnotherServersRestCatalog() throws Exception {
    Path first = dir.resolve("first");
    int rest = freePort();
    Process catalog = serve(List.of("--warehouse", first.toString(), "--pg-port", "0", "--rest-port",
        Integer.toString(rest)));
    Process client = null;
    try {
      int firstPg = pgPort(catalog);
      client = serve(List.of("--warehouse", dir.resolve("second").toString(), "--pg-port", "0", "--rest-port", "0",
          "--catalog", "rest", "--catalog-uri", "http://127.0.0.1:" + rest, "--warehouse-location", first.toString()));
      int secondPg = pgPort(client);
      try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + secondPg + "/floe", "me", "");
          Statement st = c.createStatement()) {
        st.execute("CREATE TABLE shared (id int PRIMARY KEY, v text)");
        st.execute("INSERT INTO shared VALUES (1, 'one'), (2, 'two')");
        st.execute("UPDATE shared SET v = 'TWO' WHERE id = 2");
      }
      try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + firstPg + "/floe", "me", "");
          Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT string_agg(v, ',' ORDER BY id) "
              + "FROM shared")) {
        rs.next();
        assertThat(rs.getString(1)).isEqualTo("one,TWO");
      }
      client.destroy();
      client.waitFor(60, TimeUnit.SECONDS);
      // floe sql on the same directory: on the REST catalog by its options or their environment variables ...
      String second = dir.resolve("second").toString();
      Cli.Outcome byOptions = Cli.run("sql", "-w", second, "--catalog", "rest", "--catalog-uri",
          "http://127.0.0.1:" + rest, "--warehouse-location", first.toString(), "--format", "csv", "-c",
          "SELECT count(*) FROM shared");
      assertThat(byOptions.status()).as(byOptions.err()).isZero();
      assertThat(byOptions.out()).contains("2");
      Cli.Outcome byEnvironment = Cli.run("", java.util.Map.of("FLOE_CATALOG", "rest", "FLOE_CATALOG_URI",
          "http://127.0.0.1:" + rest, "FLOE_WAREHOUSE_LOCATION", first.toString()), false, "sql", "-w", second,
          "--format", "csv", "-c", "INSERT INTO shared VALUES (3, 'three')", "-c", "SELECT count(*) FROM shared");
      assertThat(byEnvironment.status()).as(byEnvironment.err()).isZero();
      assertThat(byEnvironment.out()).contains("3");
      // ... and never on its own catalog.db, which holds none of its tables
      Cli.Outcome local = Cli.run("sql", "-w", second, "-c", "SELECT 1");
      assertThat(local.status()).isEqualTo(1);
      assertThat(local.err()).contains("55000").contains("keeps its tables in the REST catalog");
    } finally {
      if (client != null) {
        client.destroy();
        client.waitFor(60, TimeUnit.SECONDS);
      }
      catalog.destroy();
      catalog.waitFor(60, TimeUnit.SECONDS);
    }
  }

  /**
   * A server on a REST catalog killed (kill -9) while clients insert, five times: every row it acknowledged is in
   * the catalog's table once — those of a plain table at once (acknowledged after the catalog took the commit),
   * those of a table with a tail once the restarted server has replayed its log and sealed them.
   */
  @Test
  void aKilledServerOnARestCatalogLosesNoAcknowledgedRow() throws Exception {
    Path first = dir.resolve("first");
    int rest = freePort();
    Process catalog = serve(List.of("--warehouse", first.toString(), "--pg-port", "0", "--rest-port",
        Integer.toString(rest)));
    List<String> clientArgs = List.of("--warehouse", dir.resolve("second").toString(), "--pg-port", "0",
        "--rest-port", "0", "--catalog", "rest", "--catalog-uri", "http://127.0.0.1:" + rest,
        "--warehouse-location", first.toString(), "--tail-advance-ms", "0");
    java.util.Set<Integer> plain = java.util.concurrent.ConcurrentHashMap.newKeySet();
    java.util.Set<Integer> tailed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
    java.util.Random random = new java.util.Random(7);
    try {
      String firstUrl = "jdbc:postgresql://127.0.0.1:" + pgPort(catalog) + "/floe";
      for (int round = 0; round < 5; round++) {
        Process client = serve(clientArgs);
        String url = "jdbc:postgresql://127.0.0.1:" + pgPort(client) + "/floe";
        if (round == 0) {
          try (Connection c = DriverManager.getConnection(url, "me", ""); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE plain (id int)");
            st.execute("CREATE TABLE tailed (id int) WITH (tail = true)");
          }
        }
        List<Thread> writers = new ArrayList<>();
        for (String table : List.of("plain", "tailed")) {
          java.util.Set<Integer> acknowledged = table.equals("plain") ? plain : tailed;
          Thread w = new Thread(() -> {
            try (Connection c = DriverManager.getConnection(url, "me", "");
                Statement st = c.createStatement()) {
              while (true) {
                int id = next.incrementAndGet();
                st.execute("INSERT INTO " + table + " VALUES (" + id + ")");
                acknowledged.add(id);
              }
            } catch (java.sql.SQLException killed) {
              // the server was killed: what it acknowledged is recorded
            }
          });
          w.start();
          writers.add(w);
        }
        Thread.sleep(800 + random.nextInt(1200));
        client.destroyForcibly(); // kill -9
        client.waitFor(60, TimeUnit.SECONDS);
        for (Thread w : writers) {
          w.join(60_000);
        }
      }
      Process client = serve(clientArgs); // replays the tail's log
      String url = "jdbc:postgresql://127.0.0.1:" + pgPort(client) + "/floe";
      try (Connection c = DriverManager.getConnection(url, "me", ""); Statement st = c.createStatement()) {
        st.execute("ALTER TABLE tailed EXECUTE optimize"); // seals it into the catalog's table
      } finally {
        client.destroy();
        client.waitFor(60, TimeUnit.SECONDS);
      }
      assertThat(plain).isNotEmpty();
      assertThat(tailed).isNotEmpty();
      try (Connection c = DriverManager.getConnection(firstUrl, "me", ""); Statement st = c.createStatement()) {
        for (String table : List.of("plain", "tailed")) {
          java.util.Set<Integer> acknowledged = table.equals("plain") ? plain : tailed;
          java.util.Map<Integer, Integer> seen = new java.util.HashMap<>();
          try (ResultSet rs = st.executeQuery("SELECT id FROM " + table)) {
            while (rs.next()) {
              seen.merge(rs.getInt(1), 1, Integer::sum);
            }
          }
          assertThat(seen.keySet()).as(table).containsAll(acknowledged);
          assertThat(seen.values()).as(table + ": every row once").allMatch(n -> n == 1);
        }
      }
    } finally {
      catalog.destroy();
      catalog.waitFor(60, TimeUnit.SECONDS);
    }
  }

  @Test
  void mistakesInTheCatalogOptionsAreRefused() throws Exception {
    for (List<String> wrong : List.of(
        List.of("--catalog-uri", "http://127.0.0.1:1"),
        List.of("--catalog", "rest"),
        List.of("--catalog", "glue", "--catalog-uri", "http://127.0.0.1:1"),
        List.of("--catalog", "rest", "--catalog-uri", "ftp://example"),
        List.of("--catalog", "rest", "--catalog-uri", "http://127.0.0.1:1", "--catalog-token", "t",
            "--catalog-credential", "a:b"),
        List.of("--catalog", "rest", "--catalog-uri", "http://127.0.0.1:1", "--catalog-credential", "nocolon"),
        List.of("--catalog", "rest", "--catalog-uri", "http://127.0.0.1:1", "--catalog-scope", "s"))) {
      List<String> args = new ArrayList<>(List.of("--warehouse", dir.resolve("w").toString(), "--pg-port", "0",
          "--rest-port", "0"));
      args.addAll(wrong);
      Process p = serve(args);
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as(wrong + ": " + out).isEqualTo(2);
      assertThat(out).as(wrong.toString()).containsIgnoringCase("catalog");
    }
    // a catalog that cannot be reached: the server does not start, and says why
    Process p = serve(List.of("--warehouse", dir.resolve("w").toString(), "--pg-port", "0", "--rest-port", "0",
        "--catalog", "rest", "--catalog-uri", "http://127.0.0.1:" + freePort()));
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isNotZero();
    assertThat(out).contains("cannot reach the REST catalog");
  }
}
