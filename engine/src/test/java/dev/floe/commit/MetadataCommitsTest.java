package dev.floe.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.IcebergCatalog;
import dev.floe.testing.IcebergClients;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commits of metadata another engine decided ({@link MetadataCommits}, through the public {@link IcebergCatalog}):
 * when another process moves a table's pointer between the read and the swap, the change runs again on the new
 * state; several tables move together or not at all.
 */
class MetadataCommitsTest {
  @TempDir
  Path dir;

  @Test
  void aSwapLostToAnotherProcessRunsTheChangeAgainOnWhatItCommitted() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
      TableIdentifier id = TableIdentifier.of("public", "t");
      JdbcCatalog other = IcebergClients.jdbcCatalog(dir); // what Spark would open on catalog.db
      AtomicInteger calls = new AtomicInteger();
      List<TableMetadata> out = db.icebergCatalog().commit(List.of(new IcebergCatalog.TableCommit(id, base -> {
        if (calls.incrementAndGet() == 1) {
          other.loadTable(id).updateProperties().set("theirs", "1").commit(); // another process, mid-commit
        }
        return TableMetadata.buildFrom(base).setProperties(java.util.Map.of("ours", "1")).build();
      })));
      assertThat(calls.get()).isEqualTo(2);
      assertThat(out.get(0).properties()).containsEntry("ours", "1").containsEntry("theirs", "1");
      assertThat(other.loadTable(id).properties()).containsEntry("ours", "1").containsEntry("theirs", "1");
      other.close();
    }
  }

  @Test
  void aRefusedChangeLeavesEveryTableAsItWas() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE a (x int)").close();
      db.sql("CREATE TABLE b (x int)").close();
      IcebergCatalog catalog = db.icebergCatalog();
      TableIdentifier a = TableIdentifier.of("public", "a");
      TableIdentifier b = TableIdentifier.of("public", "b");
      String beforeA = catalog.catalog().loadTable(a).properties().toString();
      assertThatThrownBy(() -> catalog.commit(List.of(
          new IcebergCatalog.TableCommit(a, base -> TableMetadata.buildFrom(base)
              .setProperties(java.util.Map.of("k", "v")).build()),
          new IcebergCatalog.TableCommit(b, base -> {
            throw new CommitFailedException("Requirement failed: the test says no");
          })))).isInstanceOf(CommitFailedException.class);
      assertThat(catalog.catalog().loadTable(a).properties().toString()).isEqualTo(beforeA);
      // and together they move
      catalog.commit(List.of(
          new IcebergCatalog.TableCommit(a, base -> TableMetadata.buildFrom(base)
              .setProperties(java.util.Map.of("k", "a")).build()),
          new IcebergCatalog.TableCommit(b, base -> TableMetadata.buildFrom(base)
              .setProperties(java.util.Map.of("k", "b")).build())));
      assertThat(catalog.catalog().loadTable(a).properties()).containsEntry("k", "a");
      assertThat(catalog.catalog().loadTable(b).properties()).containsEntry("k", "b");
    }
  }
}
