package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SmokeTest {
  @Test
  void sparkSeesFloeTable() {
    SparkFloe sf = SparkFloe.get();
    sf.floeExec("CREATE TABLE smoke (id bigint, t text)");
    sf.floeExec("INSERT INTO smoke VALUES (1, 'a'), (2, 'b')");
    assertThat(sf.sparkRows("SELECT * FROM floe.public.smoke ORDER BY id")).isEqualTo(sf.floeRows("SELECT * FROM smoke ORDER BY id"));
  }
}
