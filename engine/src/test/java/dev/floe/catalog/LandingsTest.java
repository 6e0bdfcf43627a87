package dev.floe.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/** What the landings of a table's commits say a reader registered at a moment may read. */
class LandingsTest {
  private static final TableIdentifier T = TableIdentifier.of("public", "t");

  @Test
  void aReaderMayReadTheVersionCurrentWhenItRegisteredAndLaterOnes() throws Exception {
    Landings landings = new Landings();
    long before = System.nanoTime();
    assertThat(landings.currentAt(T, before)).isEmpty();
    landings.landed(T, "file:/w/t/metadata/v1.metadata.json", 1L, java.util.List.of());
    landings.landed(T, "file:/w/t/metadata/v2.metadata.json", 2L, java.util.List.of());
    Thread.sleep(1);
    long reader = System.nanoTime();
    Thread.sleep(1);
    landings.landed(T, "file:/w/t/metadata/v3.metadata.json", 3L, java.util.List.of());

    assertThat(landings.currentAt(T, before)).as("nothing landed before it: no knowledge").isEmpty();
    assertThat(landings.currentAt(T, reader)).hasValueSatisfying(l -> assertThat(l.snapshotId()).isEqualTo(2L));
    assertThat(landings.replacedBefore(T, "v1.metadata.json", reader)).isTrue();
    assertThat(landings.replacedBefore(T, "v2.metadata.json", reader)).as("current when it registered").isFalse();
    assertThat(landings.replacedBefore(T, "v3.metadata.json", System.nanoTime())).as("current").isFalse();
    assertThat(landings.replacedBefore(T, "v0.metadata.json", reader)).as("not landed here").isFalse();
    assertThat(landings.landedSince(reader)).containsExactly(T);
    assertThat(landings.landedSince(System.nanoTime())).isEmpty();

    landings.forget(T);
    assertThat(landings.currentAt(T, System.nanoTime())).isEmpty();
    assertThat(landings.replacedBefore(T, "v1.metadata.json", System.nanoTime())).isFalse();
  }
}
