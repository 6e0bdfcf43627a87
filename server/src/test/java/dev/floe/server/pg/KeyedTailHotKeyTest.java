package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hot key over the wire: 8 pgjdbc clients increment one row of a keyed tail (prepared UPDATE by key,
 * autocommit) while others upsert and read it, and the server's advancer seals meanwhile. No statement
 * fails (keyed changes are ordered by the log, never 40001), and the row ends holding exactly the number
 * of increments acknowledged.
 */
class KeyedTailHotKeyTest {
  @TempDir
  Path dir;

  @Test
  void incrementsOfOneKeyAreNeverLost() throws Exception {
    int clients = 8;
    int each = 60;
    try (PgTestServer floe = new PgTestServer(dir.resolve("wh"));
        AutoCloseable advancer = floe.db.startTailAdvancer(java.time.Duration.ofMillis(50))) { // seals meanwhile
      try (Connection c = floe.connect(); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE hot (id bigint PRIMARY KEY, n bigint NOT NULL, note text) WITH (tail = true, "
            + "'floe.tail.seal-rows' = '100')");
        st.execute("INSERT INTO hot VALUES (1, 0, 'hot'), (2, 0, 'cold')");
      }
      AtomicLong acknowledged = new AtomicLong();
      List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
      ExecutorService pool = Executors.newFixedThreadPool(clients + 1);
      List<Future<?>> done = new ArrayList<>();
      for (int k = 0; k < clients; k++) {
        int client = k;
        done.add(pool.submit(() -> {
          try (Connection c = floe.connect();
              PreparedStatement inc = c.prepareStatement("UPDATE hot SET n = n + 1 WHERE id = ?");
              PreparedStatement upsert = c.prepareStatement("INSERT INTO hot VALUES (?, 1, 'u') ON CONFLICT (id) "
                  + "DO UPDATE SET n = hot.n + excluded.n");
              PreparedStatement read = c.prepareStatement("SELECT n FROM hot WHERE id = ?")) {
            for (int i = 0; i < each; i++) {
              if ((i + client) % 3 == 0) {
                upsert.setLong(1, 1);
                assertThat(upsert.executeUpdate()).isEqualTo(1);
              } else {
                inc.setLong(1, 1);
                assertThat(inc.executeUpdate()).isEqualTo(1);
              }
              acknowledged.incrementAndGet();
              read.setLong(1, 1);
              try (ResultSet rs = read.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1)).isPositive();
              }
            }
          } catch (Throwable e) {
            errors.add(e.toString());
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      pool.shutdown();
      assertThat(errors).isEmpty();
      try (Connection c = floe.connect(); Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT id, n, note FROM hot ORDER BY id")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getLong(2)).isEqualTo(acknowledged.get()).isEqualTo((long) clients * each);
        assertThat(rs.next()).isTrue();
        assertThat(rs.getLong(2)).isZero();
        assertThat(rs.next()).isFalse();
      }
    }
  }
}
