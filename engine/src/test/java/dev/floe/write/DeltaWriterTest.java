package dev.floe.write;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class DeltaWriterTest {
  @Test
  void unionOfSortedPositionListsIsSortedAndDistinct() {
    assertThat(DeltaWriter.union(new long[] {}, new long[] {})).isEmpty();
    assertThat(DeltaWriter.union(new long[] {1, 5}, new long[] {})).containsExactly(1, 5);
    assertThat(DeltaWriter.union(new long[] {1, 3, 5}, new long[] {2, 3, 6})).containsExactly(1, 2, 3, 5, 6);
    Random random = new Random(7);
    for (int round = 0; round < 200; round++) {
      TreeSet<Long> a = new TreeSet<>();
      TreeSet<Long> b = new TreeSet<>();
      for (int k = random.nextInt(30); k > 0; k--) {
        a.add((long) random.nextInt(50));
      }
      for (int k = random.nextInt(30); k > 0; k--) {
        b.add((long) random.nextInt(50));
      }
      TreeSet<Long> both = new TreeSet<>(a);
      both.addAll(b);
      assertThat(DeltaWriter.union(a.stream().mapToLong(Long::longValue).toArray(),
          b.stream().mapToLong(Long::longValue).toArray()))
          .containsExactly(both.stream().mapToLong(Long::longValue).toArray());
    }
  }
}
