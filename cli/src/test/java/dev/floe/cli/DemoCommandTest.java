package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoCommandTest {
  static final long ROWS = 20_000;

  @TempDir
  Path dir;

  @Test
  void loadsTheTablesAndEveryTourQueryRuns() {
    String warehouse = dir.resolve("demo").toString();
    Cli.Outcome demo = Cli.run("demo", "--warehouse", warehouse, "--rows", Long.toString(ROWS));

    assertThat(demo.status()).as(demo.err()).isZero();
    assertThat(demo.out())
        .contains("Loaded 20,000 trips and 265 zones into " + warehouse)
        .contains("floe sql --warehouse " + warehouse)
        .contains("AS OF VERSION 1");

    List<DemoData.Batch> batches = DemoData.batches(ROWS);
    Cli.Outcome counts = Cli.run("sql", "-w", warehouse, "--format", "csv", "-c", """
        SELECT (SELECT count(*) FROM trips) AS trips, (SELECT count(DISTINCT trip_id) FROM trips) AS ids,
               (SELECT count(*) FROM zones) AS zones,
               (SELECT count(*) FROM trips AS OF VERSION 1) AS first_version,
               (SELECT count(*) FROM "trips$snapshots") AS commits,
               (SELECT count(*) FROM trips WHERE total <> fare + tip + tolls OR dropoff_at <= pickup_at) AS broken,
               (SELECT count(*) FROM trips t LEFT JOIN zones z ON z.zone_id = t.dropoff_zone_id
                WHERE z.zone_id IS NULL) AS orphans""");
    assertThat(counts.err()).isEmpty();
    assertThat(counts.out()).isEqualTo("trips,ids,zones,first_version,commits,broken,orphans\n"
        + ROWS + "," + ROWS + ",265," + batches.get(0).rows() + "," + batches.size() + ",0,0\n");

    for (String[] query : DemoCommand.TOUR) {
      Cli.Outcome r = Cli.run("sql", "-w", warehouse, "-c", query[1]);
      assertThat(r.err()).as(query[1]).isEmpty();
      assertThat(r.out()).as(query[1]).containsPattern("\\(\\d+ rows?\\)");
    }
  }

  @Test
  void refusesToOverwriteUnlessForced() {
    String warehouse = dir.resolve("again").toString();
    assertThat(Cli.run("demo", "-w", warehouse, "--rows", "100").status()).isZero();

    Cli.Outcome refused = Cli.run("demo", "-w", warehouse, "--rows", "200");
    Cli.Outcome forced = Cli.run("demo", "-w", warehouse, "--rows", "300", "--force");
    Cli.Outcome count = Cli.run("sql", "-w", warehouse, "--format", "csv", "-c", "SELECT count(*) AS n FROM trips");

    assertThat(refused.status()).isEqualTo(1);
    assertThat(refused.err()).startsWith("ERROR 42P07: ").contains("--force");
    assertThat(refused.err().lines()).hasSize(1);
    assertThat(forced.status()).isZero();
    assertThat(count.out()).isEqualTo("n\n300\n");
  }

  @Test
  void batchesCoverEveryTripOnceInMonthOrder() {
    for (long total : new long[] {1, 11, 12, 367, 20_000, 3_000_000, 25_000_000}) {
      List<DemoData.Batch> batches = DemoData.batches(total);
      long next = 0;
      for (DemoData.Batch b : batches) {
        assertThat(b.from()).isEqualTo(next);
        assertThat(b.rows()).isPositive().isLessThanOrEqualTo(DemoData.MAX_ROWS_PER_COMMIT);
        next = b.to();
      }
      assertThat(next).isEqualTo(total);
    }
    assertThat(DemoData.batches(3_000_000)).hasSize(12);
  }

  @Test
  void rowsMustBePositive() {
    Cli.Outcome r = Cli.run("demo", "-w", dir.resolve("x").toString(), "--rows", "0");

    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).startsWith("floe: --rows must be at least 1");
  }
}
