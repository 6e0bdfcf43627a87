package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.testing.IcebergClients;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What expiry keeps for the holds there are (ReaderPins.keepFrom). */
class ReaderPinsUnitTest {
  @TempDir
  Path dir;

  @Test
  void expiryKeepsFromTheVersionCurrentWhenTheOldestHoldBegan() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id int)").close();
      for (int i = 0; i < 3; i++) {
        db.sql("INSERT INTO t VALUES (" + i + ")").close();
      }
    }
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      TableIdentifier id = TableIdentifier.of("public", "t");
      Table table = catalog.loadTable(id);
      List<Snapshot> snapshots = new java.util.ArrayList<>();
      table.snapshots().forEach(snapshots::add);
      assertThat(snapshots).hasSize(3);
      Snapshot oldest = snapshots.stream().min(Comparator.comparingLong(Snapshot::timestampMillis)).orElseThrow();
      ReaderPins pins = new ReaderPins(null);
      assertThat(pins.keepFrom(id, table)).as("no hold: nothing kept for readers").isEqualTo(Long.MAX_VALUE);

      ReaderPins.Hold statement = pins.hold("statement");
      // every snapshot is younger than the clock margin: all of them are kept
      assertThat(pins.keepFrom(id, table)).isEqualTo(Long.MIN_VALUE);
      statement.close();
      statement.close(); // twice is harmless
      assertThat(pins.count()).isZero();

      ReaderPins.Hold other = pins.hold(TableIdentifier.of("public", "other"), oldest, "time-travel read");
      assertThat(pins.keepFrom(id, table)).as("a hold on another table").isEqualTo(Long.MAX_VALUE);
      ReaderPins.Hold travel = pins.hold(id, oldest, "time-travel read");
      assertThat(pins.keepFrom(id, table)).isLessThanOrEqualTo(oldest.timestampMillis());
      assertThat(pins.oldest()).isPresent();
      travel.close();
      other.close();
      assertThat(pins.oldest()).isEmpty();
      assertThat(pins.keepFrom(id, table)).isEqualTo(Long.MAX_VALUE);
    }
  }
}
