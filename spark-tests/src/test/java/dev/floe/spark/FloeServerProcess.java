package dev.floe.spark;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code floe serve} as a user runs it, in its own JVM (the cli module's jar and its lib/ directory): the
 * PostgreSQL port for Floe's side and the Iceberg REST catalog for Spark's. Spark's Iceberg runtime carries
 * Iceberg with its Jackson relocated, so Floe's REST server cannot share Spark's JVM; a separate process is also
 * how they meet in production.
 */
final class FloeServerProcess implements AutoCloseable {
  final Process process;
  final String restUri;
  final int pgPort;
  private final StringBuilder output = new StringBuilder();

  FloeServerProcess(Path warehouse) throws IOException {
    this(warehouse, List.of(), java.util.Map.of());
  }

  /** {@code floe serve} with more options, and more environment variables (AWS credentials). */
  FloeServerProcess(Path warehouse, List<String> options, java.util.Map<String, String> environment)
      throws IOException {
    Path cli = Path.of("../cli/target").toAbsolutePath().normalize();
    Path jar;
    try (Stream<Path> files = Files.list(cli)) {
      jar = files.filter(p -> p.getFileName().toString().matches("floe-cli-.*\\.jar")
          && !p.getFileName().toString().contains("sources")).findFirst()
          .orElseThrow(() -> new IllegalStateException("no floe-cli jar in " + cli + ": build the cli module first"));
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    int rest;
    try (ServerSocket s = new ServerSocket(0)) {
      rest = s.getLocalPort();
    }
    List<String> command = new ArrayList<>(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx1g",
        "-cp", jar + ":" + cli.resolve("lib") + "/*", "dev.floe.cli.Main", "serve", "--warehouse",
        warehouse.toString(), "--pg-port", "0", "--rest-port", Integer.toString(rest), "--maintain-ms", "0"));
    command.addAll(options);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().putAll(environment);
    process = builder.start();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    int pg = -1;
    String uri = null;
    Pattern psql = Pattern.compile("psql postgresql://127\\.0\\.0\\.1:(\\d+)/");
    Pattern catalog = Pattern.compile("Iceberg REST catalog: (http://\\S+)");
    for (String line; (pg < 0 || uri == null) && (line = out.readLine()) != null; ) {
      output.append(line).append('\n');
      Matcher m = psql.matcher(line);
      if (m.find()) {
        pg = Integer.parseInt(m.group(1));
      }
      Matcher c = catalog.matcher(line);
      if (c.find()) {
        uri = c.group(1);
      }
    }
    if (pg < 0 || uri == null) {
      process.destroyForcibly();
      throw new IllegalStateException("floe serve did not start:\n" + output);
    }
    this.pgPort = pg;
    this.restUri = uri;
    Thread drain = new Thread(() -> {
      try {
        for (String line; (line = out.readLine()) != null; ) {
          synchronized (output) {
            output.append(line).append('\n');
          }
        }
      } catch (IOException ignored) {
        // the process ended
      }
    }, "floe-serve-output");
    drain.setDaemon(true);
    drain.start();
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pgPort + "/floe", "floe", "");
  }

  String output() {
    synchronized (output) {
      return output.toString();
    }
  }

  /** Every row of a query through pgjdbc, as canonical values. */
  List<List<String>> rows(String sql) throws SQLException {
    try (Connection c = connect(); var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      List<List<String>> out = new ArrayList<>();
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<String> row = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
          row.add(Canonical.value(rs.getObject(i)));
        }
        out.add(row);
      }
      return out;
    }
  }

  void exec(String sql) throws SQLException {
    try (Connection c = connect(); var st = c.createStatement()) {
      st.execute(sql);
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy(); // SIGTERM: a clean shutdown
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
