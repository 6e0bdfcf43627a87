package dev.floe.write;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.testing.IcebergClients;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots Floe commits itself ({@link org.apache.iceberg.FloeCommit}) read back through Iceberg's own
 * catalog client, manifests and generic reader, with no Floe cache in between: the rows, the manifests
 * (one live deletion vector per data file, emptied manifests dropped, manifests merged as they
 * accumulate), the summary totals, row lineage, and snapshot expiry, which finds the files a commit
 * removed through the DELETED entries it wrote.
 */
class FloeCommitTest {
  @TempDir
  Path dir;

  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void oneRowStatementsReadBackThroughIceberg(int formatVersion) throws Exception {
    Map<Long, Long> model = new TreeMap<>();
    Random random = new Random(formatVersion);
    try (Database db = Floe.open(dir)) {
      exec(db, "CREATE TABLE t (id bigint NOT NULL, v bigint) WITH (format_version = " + formatVersion + ")");
      exec(db, "INSERT INTO t SELECT i, 0 FROM range(0, 500) r(i)");
      for (long i = 0; i < 500; i++) {
        model.put(i, 0L);
      }
      // Enough one-row statements that manifests pile up past Iceberg's merge threshold (100).
      for (int n = 0; n < 260; n++) {
        int kind = random.nextInt(10);
        long id = random.nextInt(520);
        if (kind < 6) {
          exec(db, "UPDATE t SET v = v + 1 WHERE id = " + id);
          model.computeIfPresent(id, (k, v) -> v + 1);
        } else if (kind < 8) {
          exec(db, "DELETE FROM t WHERE id = " + id);
          model.remove(id);
        } else if (!model.containsKey(id)) {
          exec(db, "INSERT INTO t VALUES (" + id + ", 100)");
          model.put(id, 100L);
        }
      }
      assertThat(floeRows(db)).isEqualTo(model);
    }

    JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir);
    try {
      Table table = catalog.loadTable(TableIdentifier.of("public", "t"));
      assertThat(icebergRows(table)).isEqualTo(model);
      Snapshot current = table.currentSnapshot();
      List<ManifestFile> manifests = current.allManifests(table.io());
      assertThat(manifests.stream().filter(m -> m.content() == ManifestContent.DATA).count()).isLessThan(101);
      assertThat(manifests.stream().filter(m -> m.content() == ManifestContent.DELETES).count()).isLessThan(101);

      List<DataFile> data = new ArrayList<>();
      List<DeleteFile> deletes = new ArrayList<>();
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        Set<String> seenDeletes = new HashSet<>();
        for (FileScanTask task : tasks) {
          data.add(task.file());
          if (formatVersion >= 3) {
            assertThat(task.deletes()).as("deletion vectors of %s", task.file().location()).hasSizeLessThan(2);
          }
          for (DeleteFile d : task.deletes()) {
            if (seenDeletes.add(d.location() + "@" + d.contentOffset())) {
              deletes.add(d);
            }
          }
        }
      }
      Map<String, String> summary = current.summary();
      assertThat(summary.get(SnapshotSummary.TOTAL_DATA_FILES_PROP)).isEqualTo(Integer.toString(data.size()));
      assertThat(summary.get(SnapshotSummary.TOTAL_DELETE_FILES_PROP)).isEqualTo(Integer.toString(deletes.size()));
      assertThat(summary.get(SnapshotSummary.TOTAL_RECORDS_PROP))
          .isEqualTo(Long.toString(data.stream().mapToLong(DataFile::recordCount).sum()));
      assertThat(summary.get(SnapshotSummary.TOTAL_POS_DELETES_PROP))
          .isEqualTo(Long.toString(deletes.stream().mapToLong(DeleteFile::recordCount).sum()));
      assertThat(Long.parseLong(summary.get(SnapshotSummary.TOTAL_RECORDS_PROP))
          - Long.parseLong(summary.get(SnapshotSummary.TOTAL_POS_DELETES_PROP))).isEqualTo(model.size());

      if (formatVersion >= 3) {
        // Row lineage: every data file's rows have ids of their own, below the table's next row id.
        TableMetadata metadata = ((HasTableOperations) table).operations().current();
        List<long[]> ranges = new ArrayList<>();
        for (ManifestFile m : manifests) {
          if (m.content() != ManifestContent.DATA) {
            continue;
          }
          try (ManifestReader<DataFile> reader = ManifestFiles.read(m, table.io(), table.specs())) {
            for (DataFile f : reader) {
              assertThat(f.firstRowId()).as("first row id of %s", f.location()).isNotNull();
              ranges.add(new long[] {f.firstRowId(), f.firstRowId() + f.recordCount()});
            }
          }
        }
        ranges.sort((a, b) -> Long.compare(a[0], b[0]));
        for (int k = 1; k < ranges.size(); k++) {
          assertThat(ranges.get(k)[0]).isGreaterThanOrEqualTo(ranges.get(k - 1)[1]);
        }
        assertThat(metadata.nextRowId()).isGreaterThanOrEqualTo(ranges.get(ranges.size() - 1)[1]);
        assertThat(current.firstRowId() + current.addedRows()).isEqualTo(metadata.nextRowId());
      }

      // Expiring every older snapshot deletes the files only they referenced, and nothing still live:
      // Iceberg finds them through the DELETED entries of the commits that removed them.
      Set<String> live = new HashSet<>();
      data.forEach(f -> live.add(f.location()));
      deletes.forEach(f -> live.add(f.location()));
      table.expireSnapshots().expireOlderThan(System.currentTimeMillis() + 1).retainLast(1).commit();
      assertThat(icebergRows(catalog.loadTable(TableIdentifier.of("public", "t")))).isEqualTo(model);
      Set<String> onDisk = files(dir.resolve("public/t/data"));
      assertThat(onDisk).containsAll(live);
      onDisk.removeAll(live);
      // Iceberg leaves what the retained snapshot itself removed until that snapshot expires.
      current.removedDataFiles(table.io()).forEach(f -> onDisk.remove(f.location()));
      current.removedDeleteFiles(table.io()).forEach(f -> onDisk.remove(f.location()));
      assertThat(onDisk).as("files only expired snapshots referenced").isEmpty();
    } finally {
      catalog.close();
    }
    try (Database db = Floe.open(dir)) {
      assertThat(floeRows(db)).isEqualTo(model);
    }
  }

  private static Set<String> files(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      Set<String> out = new HashSet<>();
      s.filter(Files::isRegularFile).forEach(p -> out.add(p.toString()));
      return out;
    }
  }

  private static void exec(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      r.toList();
    }
  }

  private static Map<Long, Long> floeRows(Database db) {
    Map<Long, Long> rows = new TreeMap<>();
    try (Result r = db.sql("SELECT id, v FROM t")) {
      for (Row row : r) {
        assertThat(rows.put(row.getLong(0), row.getLong(1))).as("id %s twice", row.getLong(0)).isNull();
      }
    }
    return rows;
  }

  private static Map<Long, Long> icebergRows(Table table) throws IOException {
    Map<Long, Long> rows = new HashMap<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        assertThat(rows.put((Long) r.getField("id"), (Long) r.getField("v"))).isNull();
      }
    }
    return new TreeMap<>(rows);
  }
}
