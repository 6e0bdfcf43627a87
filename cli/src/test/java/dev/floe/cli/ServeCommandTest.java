package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code floe serve} as a real process: it serves, and SIGTERM lets the running statement finish. */
class ServeCommandTest {
  @TempDir
  Path dir;

  @Test
  void sigtermFinishesTheRunningStatementThenExits() throws Exception {
    Path warehouse = dir.resolve("wh");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), Main.class.getName(), "serve", "--warehouse", warehouse.toString(),
        "--pg-port", "0")).redirectErrorStream(true).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      int port = -1;
      StringBuilder seen = new StringBuilder();
      for (String line; port < 0 && (line = out.readLine()) != null; ) {
        seen.append(line).append('\n');
        Matcher m = Pattern.compile("psql postgresql://127\\.0\\.0\\.1:(\\d+)/").matcher(line);
        if (m.find()) {
          port = Integer.parseInt(m.group(1));
        }
      }
      assertThat(port).as(seen.toString()).isPositive();
      String url = "jdbc:postgresql://127.0.0.1:" + port + "/floe";
      try (Connection c = DriverManager.getConnection(url, "me", ""); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE kept (x integer)");
        st.execute("INSERT INTO kept VALUES (1), (2)");
        // acknowledged by the tail's log; younger than its seal age, so still unsealed at SIGTERM
        st.execute("CREATE TABLE ticks (x integer) WITH (tail = true)");
        st.execute("INSERT INTO ticks VALUES (1), (2), (3)");
      }
      Connection busy = DriverManager.getConnection(url, "me", "");
      CompletableFuture<Long> running = CompletableFuture.supplyAsync(() -> {
        try (Statement st = busy.createStatement();
            ResultSet rs = st.executeQuery("SELECT count(*) FROM range(0, 2000000000) r(i) WHERE i % 7 = 3")) {
          rs.next();
          return rs.getLong(1);
        } catch (SQLException e) {
          throw new RuntimeException(e);
        }
      });
      Thread.sleep(1000); // the statement (several seconds of work) is running
      assertThat(running).isNotDone();
      p.destroy(); // SIGTERM
      assertThat(running.get(120, TimeUnit.SECONDS)).isEqualTo(285714286L);
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isZero();
      assertThatThrownBy(() -> DriverManager.getConnection(url, "me", "")).isInstanceOf(SQLException.class);
      busy.close();
    } finally {
      p.destroyForcibly();
    }
    // the warehouse was closed cleanly: its lock is free and the committed rows are there
    try (Database db = Floe.open(warehouse); var r = db.sql("SELECT count(*) FROM kept")) {
      assertThat(r.toList().get(0).getLong(0)).isEqualTo(2);
      // and a clean shutdown sealed the tail: the rows are in the table's files
      assertThat(db.table("ticks").properties()).containsEntry("floe.tail.through", "3");
      assertThat(db.openLog("ticks").bufferedRows()).isZero();
    }
  }

  /**
   * The operator's log on standard error: the start, each connection, failed logins, errors with their
   * statement, statements over --log-min-duration-ms, disconnections; one greppable line each.
   */
  @Test
  void serverLogsConnectionsErrorsAndSlowStatements() throws Exception {
    Path warehouse = dir.resolve("logged");
    assertThat(Cli.runWithInput("s3cret\n", "user", "add", "alice", "--warehouse", warehouse.toString()).status())
        .isZero();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), Main.class.getName(), "serve", "--warehouse", warehouse.toString(),
        "--pg-port", "0", "--auth", "scram-sha-256", "--log-min-duration-ms", "0")).redirectErrorStream(true).start();
    List<String> lines = Collections.synchronizedList(new ArrayList<>());
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      CompletableFuture<Integer> port = new CompletableFuture<>();
      Thread reader = new Thread(() -> {
        try {
          for (String line; (line = out.readLine()) != null; ) {
            lines.add(line);
            Matcher m = Pattern.compile("psql postgresql://127\\.0\\.0\\.1:(\\d+)/").matcher(line);
            if (m.find()) {
              port.complete(Integer.parseInt(m.group(1)));
            }
          }
        } catch (IOException e) {
          port.completeExceptionally(e);
        }
      });
      reader.setDaemon(true);
      reader.start();
      String url = "jdbc:postgresql://127.0.0.1:" + port.get(60, TimeUnit.SECONDS) + "/floe";
      assertThatThrownBy(() -> DriverManager.getConnection(url, "alice", "wrong")).isInstanceOf(SQLException.class);
      Properties props = new Properties();
      props.setProperty("user", "alice");
      props.setProperty("password", "s3cret");
      try (Connection c = DriverManager.getConnection(url, props); Statement st = c.createStatement()) {
        st.execute("SELECT 1 AS \"one\nline\"");
        assertThatThrownBy(() -> st.execute("SELECT * FROM nowhere")).isInstanceOf(SQLException.class);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (lines.stream().noneMatch(l -> l.contains("event=disconnection") && l.contains("user=alice"))
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    } finally {
      p.destroy();
      p.waitFor(60, TimeUnit.SECONDS);
      p.destroyForcibly();
    }
    String log = String.join("\n", lines);
    assertThat(log).contains("event=starting version=").contains("warehouse=" + warehouse)
        .containsPattern("event=listening host=127\\.0\\.0\\.1 port=\\d+ auth=scram-sha-256 tls=off")
        .containsPattern("event=connection_received pid=\\d+ client=127\\.0\\.0\\.1:\\d+")
        .containsPattern("event=authentication_failed pid=\\d+ client=\\S+ user=\\S* sqlstate=28P01 message=\"password "
            + "authentication failed for user \\\\\"alice\\\\\"\"")
        .containsPattern("event=connection_authorized pid=\\d+ client=\\S+ user=alice database=floe "
            + "application_name=\\S+ tls=off")
        .containsPattern("event=duration pid=\\d+ user=alice duration_ms=\\d+\\.\\d{3} statement=\"SELECT 1 AS "
            + "\\\\\"one\\\\nline\\\\\"\"")
        .containsPattern("event=error pid=\\d+ user=alice sqlstate=42P01 message=\"relation \\\\\"nowhere\\\\\" does "
            + "not exist\" statement=\"SELECT \\* FROM nowhere\"")
        .containsPattern("event=disconnection pid=\\d+ client=\\S+ user=alice session_time=\\d+\\.\\d{3}s");
    // one line per event: the statement's line break is escaped
    assertThat(lines.stream().filter(l -> l.contains("event=")).allMatch(l -> l.matches("\\d{4}-\\d\\d-\\d\\d .*")))
        .as(log).isTrue();
  }
}
