package dev.floe.trino;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** One table's history, written by both engines in turns: each engine reads every version the same way. */
class SnapshotsAcrossEnginesTest {
  private TrinoFloe tf;

  @BeforeEach
  void start() {
    tf = TrinoFloe.get(); // the first test starts both servers; each test is skipped if no Java 24+ exists
  }

  @Test
  void eachEngineReadsEveryVersionOfTheOther() throws Exception {
    tf.trinoSchema("history");
    tf.trino("CREATE TABLE floe.history.events (id bigint, kind varchar)");
    tf.trino("INSERT INTO floe.history.events VALUES (1, 'a'), (2, 'b')");
    tf.floeExec("INSERT INTO history.events VALUES (3, 'c')");
    tf.trino("DELETE FROM floe.history.events WHERE id = 1");
    tf.floeExec("UPDATE history.events SET kind = 'z' WHERE id = 2");

    List<List<String>> floeSnapshots = tf.floe("SELECT snapshot_id FROM history.\"events$snapshots\" "
        + "ORDER BY sequence_number");
    List<List<String>> trinoSnapshots = tf.trino("SELECT snapshot_id FROM floe.history.\"events$snapshots\" "
        + "ORDER BY committed_at, snapshot_id");
    assertThat(trinoSnapshots).containsExactlyInAnyOrderElementsOf(floeSnapshots);

    List<List<List<String>>> versions = new ArrayList<>();
    for (List<String> s : floeSnapshots) {
      String id = s.get(0).replaceFirst("^long:", "");
      List<List<String>> floe = tf.floe("SELECT id, kind FROM history.events FOR VERSION AS OF " + id + " ORDER BY id");
      assertThat(tf.trino("SELECT id, kind FROM floe.history.events FOR VERSION AS OF " + id + " ORDER BY id"))
          .as("version %s", id).isEqualTo(floe);
      versions.add(floe);
    }
    // the versions with rows, in order (Trino's CREATE TABLE adds an empty first snapshot)
    assertThat(versions.stream().filter(v -> !v.isEmpty()).toList()).containsExactly(
        List.of(List.of("long:1", "text:a"), List.of("long:2", "text:b")),
        List.of(List.of("long:1", "text:a"), List.of("long:2", "text:b"), List.of("long:3", "text:c")),
        List.of(List.of("long:2", "text:b"), List.of("long:3", "text:c")),
        List.of(List.of("long:2", "text:z"), List.of("long:3", "text:c")));
  }
}
