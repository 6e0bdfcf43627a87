package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
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
}
