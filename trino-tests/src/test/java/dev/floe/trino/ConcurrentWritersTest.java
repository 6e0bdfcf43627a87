package dev.floe.trino;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Trino and Floe update the same row at the same time, round after round. Each side retries what the other's commit
 * made fail (Trino: Iceberg's conflict validation after the REST catalog's 409; Floe: SQLSTATE 40001), so every
 * increment must land exactly once, as in some serial order.
 */
class ConcurrentWritersTest {
  private TrinoFloe tf;

  @BeforeEach
  void start() {
    tf = TrinoFloe.get(); // the first test starts both servers; each test is skipped if no Java 24+ exists
  }

  @Test
  void concurrentConflictingUpdatesEndAsASerialOrder() throws Exception {
    tf.trinoSchema("race");
    tf.trino("CREATE TABLE floe.race.counter (id bigint, n bigint)");
    tf.trino("INSERT INTO floe.race.counter VALUES (1, 0), (2, 0)");
    int rounds = 5;
    int[] retries = new int[2];
    Set<String> trinoErrors = ConcurrentHashMap.newKeySet();
    for (int round = 0; round < rounds; round++) {
      CompletableFuture<Void> trinoSide = CompletableFuture.runAsync(() -> {
        while (true) {
          try {
            tf.trino("UPDATE floe.race.counter SET n = n + 1 WHERE id = 1");
            return;
          } catch (SQLException e) {
            // Floe committed between Trino's read and its commit, and Iceberg's validation of Trino's row delta
            // failed: "Found conflicting files ...", or "missing data files" when Floe's UPDATE replaced the data
            // file that Trino's position deletes point at. Run the UPDATE again; any other error fails the test.
            String m = String.valueOf(e.getMessage()).replaceFirst("^Query failed \\([^)]*\\): ", "");
            if (!m.matches("(?s)Failed to commit.*(Found conflicting files|missing data files).*")
                || ++retries[0] >= 50) {
              throw new CompletionException(e);
            }
            trinoErrors.add(m.replaceAll(": \\[.*", ""));
          }
        }
      });
      try (Connection c = tf.floe.connect(); Statement st = c.createStatement()) {
        while (true) {
          try {
            st.execute("UPDATE race.counter SET n = n + 100 WHERE id = 1");
            break;
          } catch (SQLException e) {
            assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("40001");
            retries[1]++;
            assertThat(retries[1]).as("floe retries").isLessThan(50);
          }
        }
      }
      trinoSide.join();
    }
    System.out.printf("ConcurrentWritersTest: %d rounds, Trino retried %d times, Floe %d; Trino's errors: %s%n", rounds,
        retries[0], retries[1], trinoErrors);
    List<List<String>> expected = List.of(List.of("long:1", "long:" + 101L * rounds), List.of("long:2", "long:0"));
    assertThat(tf.floe("SELECT id, n FROM race.counter ORDER BY id")).isEqualTo(expected);
    assertThat(tf.trino("SELECT id, n FROM floe.race.counter ORDER BY id")).isEqualTo(expected);
  }
}
