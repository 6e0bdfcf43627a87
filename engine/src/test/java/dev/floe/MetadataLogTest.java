package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.IcebergClients;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A table's metadata log keeps its newest metadata files ({@code write.metadata.previous-versions-max}, 3
 * by default), and VACUUM's expiry deletes those that left it. A writer commits while it runs: the files
 * the log of the table's current version names must all still be there, whatever landed while VACUUM
 * looked. (The race is narrow: with a 30 ms pause between reading the log and listing the directory, this
 * failed within a second before that was done under the table's commit lock.)
 */
class MetadataLogTest {
  /**
   * One writer: each of its statements starts after the one before landed, so no reader holds the versions
   * it replaces, and expiry may delete them as soon as they leave the log.
   */
  private static final int WRITERS = 1;

  @TempDir
  Path dir;

  @Test
  void vacuumBesideAWriterKeepsEveryMetadataFileTheLogNames() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint, v bigint) WITH ('history.expire.max-snapshot-age-ms' = '0')").close();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failed = new AtomicReference<>();
      List<Thread> writers = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        Thread t = new Thread(() -> {
          try {
            for (long i = 0; !stop.get(); i++) {
              db.sql("INSERT INTO t VALUES (" + (i * 2 + writer) + ", 0)").close();
            }
          } catch (Throwable e) {
            failed.compareAndSet(null, e);
          }
        });
        t.start();
        writers.add(t);
      }
      long end = System.nanoTime() + 4_000_000_000L;
      int expiries = 0;
      try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
        var ops = ((HasTableOperations) catalog.loadTable(TableIdentifier.of("public", "t"))).operations();
        while (System.nanoTime() < end && failed.get() == null) {
          db.sql("VACUUM t").close();
          expiries++;
          TableMetadata current = ops.refresh();
          List<String> missing = missing(current);
          // a file may leave the log and go with a commit landing meanwhile: only a log still current counts
          if (!missing.isEmpty() && ops.refresh().metadataFileLocation().equals(current.metadataFileLocation())) {
            assertThat(missing).as("metadata files the log of %s names, after expiry %d",
                current.metadataFileLocation(), expiries).isEmpty();
          }
        }
      }
      stop.set(true);
      for (Thread t : writers) {
        t.join();
      }
      assertThat(failed.get()).as("a writer").isNull();
      assertThat(expiries).isGreaterThan(10);
    }
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      TableMetadata current = ((HasTableOperations) catalog.loadTable(TableIdentifier.of("public", "t")))
          .operations().current();
      assertThat(current.previousFiles()).isNotEmpty();
      assertThat(missing(current)).as("metadata files the log names").isEmpty();
    }
  }

  private static List<String> missing(TableMetadata metadata) {
    List<String> missing = new ArrayList<>();
    for (TableMetadata.MetadataLogEntry e : metadata.previousFiles()) {
      if (!Files.exists(Path.of(e.file().replaceFirst("^file:", "")))) {
        missing.add(e.file());
      }
    }
    return missing;
  }
}
