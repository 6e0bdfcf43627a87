package dev.floe.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The commit protocol: compare-and-swap of the catalog pointer, first committer wins. */
class CommitTest {
  @TempDir
  Path dir;

  @Test
  void secondCommitFromTheSameBaseLosesAndLeavesNoFile() throws Exception {
    FloeCatalog catalog = FloeCatalog.open("floe", dir, new LocalFileIO(), false);
    try {
      catalog.createNamespace(Namespace.of("public"), Map.of());
      TableIdentifier id = TableIdentifier.of("public", "t");
      catalog.createTable(id, new Schema(Types.NestedField.optional(1, "a", Types.IntegerType.get())));
      TableOperations first = catalog.newTableOps(id);
      TableOperations second = catalog.newTableOps(id);
      TableMetadata base1 = first.current();
      TableMetadata base2 = second.current();
      first.commit(base1, TableMetadata.buildFrom(base1).setProperties(Map.of("k", "1")).build());
      // second still holds the old base: its commit must fail and must not clobber version 2
      TableMetadata change = TableMetadata.buildFrom(base2).setProperties(Map.of("k", "2")).build();
      assertThatThrownBy(() -> second.commit(base2, change)).isInstanceOf(CommitFailedException.class);
      // and at the pointer itself: a swap from a stale location changes nothing
      assertThat(catalog.swap(id, base2.metadataFileLocation(), "/elsewhere/v9.metadata.json")).isFalse();
      Table t = catalog.loadTable(id);
      assertThat(t.properties()).containsEntry("k", "1");
      assertThat(catalog.metadataLocation(id).orElseThrow()).endsWith("/v2.metadata.json");
      assertThat(java.nio.file.Files.list(dir.resolve("public/t/metadata"))
          .filter(p -> p.getFileName().toString().endsWith(".metadata.json")).count()).isEqualTo(2);
    } finally {
      catalog.close();
    }
  }

  @Test
  void versionNumbersFollowForeignMetadataNames() {
    assertThat(VersionHint.versionOf("/w/t/metadata/v7.metadata.json")).hasValue(7);
    assertThat(VersionHint.versionOf("/w/t/metadata/00012-5d5b.metadata.json")).hasValue(12);
    assertThat(VersionHint.versionOf("/w/t/metadata/whatever.json")).isEmpty();
  }
}
