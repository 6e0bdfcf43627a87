package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

/**
 * A write cancelled while it runs — by a CancelRequest, by statement_timeout, or by its client
 * disconnecting — commits nothing; one that reports success committed. Never both: "told it failed"
 * with its rows in the table.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CancelWritesTest {
  private static final int ROWS = 3_000_000;

  @TempDir
  static Path dir;

  private PgTestServer floe;

  @BeforeAll
  void start() throws Exception {
    floe = new PgTestServer(dir.resolve("wh"));
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE big (id bigint, v text)");
      st.execute("INSERT INTO big SELECT i, md5(i::text) FROM range(" + ROWS + ") r(i)");
      st.execute("CREATE TABLE dst (id bigint, v text)");
      st.execute("INSERT INTO dst SELECT id, v FROM big");
    }
  }

  @AfterAll
  void stop() {
    floe.close();
  }

  static List<Object[]> cases() {
    List<String> statements = List.of(
        "INSERT INTO dst SELECT id, md5(v) FROM big",
        "UPDATE dst SET v = md5(v)",
        // a delete writes only position deletes: the predicate's cost keeps it running for seconds
        "DELETE FROM dst WHERE id % 3 <> 0 AND md5(md5(v)) <> ''",
        "MERGE INTO dst USING big ON dst.id = big.id WHEN MATCHED THEN UPDATE SET v = md5(big.v)",
        "CREATE TABLE made AS SELECT id, md5(v) AS v FROM big",
        "COPY dst FROM STDIN (FORMAT csv)");
    List<Object[]> out = new java.util.ArrayList<>();
    for (String how : List.of("cancel request", "statement timeout", "client disconnect")) {
      for (String sql : statements) {
        out.add(new Object[] {how, sql});
      }
    }
    return out;
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("cases")
  void aCancelledWriteCommitsNothing(String how, String sql) throws Exception {
    String before = state();
    String outcome = switch (how) {
      case "cancel request" -> viaJdbc(sql, null);
      case "statement timeout" -> viaJdbc(sql, "400ms");
      default -> disconnecting(sql);
    };
    awaitIdle();
    String after = state();
    if (outcome.equals("ok")) {
      assertThat(after).as(how + " of " + sql + ": a write that reported success committed").isNotEqualTo(before);
    } else {
      assertThat(outcome).as(how + " of " + sql).isIn("57014", "gone");
      assertThat(after).as(how + " of " + sql + ": a cancelled write committed nothing").isEqualTo(before);
    }
    if (!how.equals("client disconnect")) {
      // these statements run for seconds: a cancel 400 ms in stops every one of them
      assertThat(outcome).as(how + " of " + sql).isEqualTo("57014");
    }
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS made");
    }
  }

  /** The target tables' versions: a commit changes them. */
  private String state() throws SQLException {
    try (Connection c = floe.connect(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT (SELECT count(*) FROM \"dst$snapshots\"), (SELECT count(*) FROM "
            + "pg_class WHERE relname = 'made')")) {
      rs.next();
      return rs.getLong(1) + "/" + rs.getLong(2);
    }
  }

  private void awaitIdle() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    int busy;
    while ((busy = floe.server.busyConnectionCount()) > 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(busy).as("connections still busy a minute on").isZero();
  }

  private String viaJdbc(String sql, String timeout) throws Exception {
    try (Connection c = floe.connect(); Statement st = c.createStatement()) {
      if (timeout != null) {
        st.execute("SET statement_timeout = '" + timeout + "'");
      }
      CompletableFuture<String> run = CompletableFuture.supplyAsync(() -> {
        try {
          if (sql.startsWith("COPY")) {
            new CopyManager(c.unwrap(org.postgresql.core.BaseConnection.class)).copyIn(sql, rows(() -> { }));
          } else {
            st.execute(sql);
          }
          return "ok";
        } catch (SQLException | IOException e) {
          return e instanceof SQLException s ? String.valueOf(s.getSQLState()) : e.toString();
        }
      });
      if (timeout == null) {
        // the statement is running when the server is busy with it (for COPY: loading what it received)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (floe.server.busyConnectionCount() == 0 && !run.isDone() && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
        Thread.sleep(400);
        c.unwrap(PGConnection.class).cancelQuery();
      }
      return run.get(120, TimeUnit.SECONDS);
    }
  }

  /**
   * Sends the statement over a socket of its own and stops sending 400 ms into the statement (the server
   * reads end of stream, as from a client that went away); "ok" when the server then reports it completed.
   */
  private String disconnecting(String sql) throws Exception {
    try (Socket s = new Socket("127.0.0.1", floe.server.port())) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      DataInputStream in = new DataInputStream(s.getInputStream());
      byte[] startup = bytes(0, 3, 0, 0, "user", "tester", "database", "floe", "");
      out.writeInt(startup.length + 4);
      out.write(startup);
      out.flush();
      skipUntil(in, 'Z');
      byte[] q = (sql + "\0").getBytes(StandardCharsets.UTF_8);
      out.writeByte('Q');
      out.writeInt(q.length + 4);
      out.write(q);
      out.flush();
      if (sql.startsWith("COPY")) {
        skipUntil(in, 'G');
        InputStream data = rows(() -> { });
        byte[] buf = new byte[64 * 1024];
        for (int n; (n = data.read(buf)) > 0; ) {
          out.writeByte('d');
          out.writeInt(n + 4);
          out.write(buf, 0, n);
        }
        out.writeByte('c');
        out.writeInt(4);
        out.flush();
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (floe.server.busyConnectionCount() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      Thread.sleep(400);
      // the client goes away: the server reads end of stream. Closing only our sending half lets us still
      // read what the server says of the statement, so a statement that reached its commit point before
      // the server noticed (a DELETE writes only deletes, and may be that quick) is told apart exactly.
      s.shutdownOutput();
      s.setSoTimeout(120_000);
      try {
        while (true) {
          byte t = in.readByte();
          in.readNBytes(in.readInt() - 4);
          if (t == 'C') {
            return "ok";
          }
          if (t == 'E') {
            return "gone";
          }
        }
      } catch (java.io.EOFException e) {
        return "gone";
      }
    }
  }

  private static void skipUntil(DataInputStream in, char type) throws IOException {
    while (true) {
      byte t = in.readByte();
      int len = in.readInt();
      in.readNBytes(len - 4);
      if (t == type) {
        return;
      }
    }
  }

  private static byte[] bytes(int a, int b, int c, int d, String... cstrings) {
    java.io.ByteArrayOutputStream o = new java.io.ByteArrayOutputStream();
    o.write(a);
    o.write(b);
    o.write(c);
    o.write(d);
    for (String x : cstrings) {
      o.writeBytes(x.getBytes(StandardCharsets.UTF_8));
      o.write(0);
    }
    return o.toByteArray();
  }

  /** ROWS lines of CSV, made as they are read. */
  private static InputStream rows(Runnable atEnd) {
    return new InputStream() {
      private long next;
      private byte[] line = new byte[0];
      private int pos;

      @Override
      public int read() {
        if (pos == line.length) {
          if (next == ROWS) {
            atEnd.run();
            return -1;
          }
          line = (next + "," + Long.toHexString(next * 2654435761L) + "\n").getBytes(StandardCharsets.UTF_8);
          next++;
          pos = 0;
        }
        return line[pos++];
      }
    };
  }
}
