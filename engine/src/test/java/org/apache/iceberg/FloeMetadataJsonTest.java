package org.apache.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Floe's metadata writer against Iceberg's: the same text for every kind of table metadata. */
class FloeMetadataJsonTest {
  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name \"quoted\" ünïcode", Types.StringType.get()),
      Types.NestedField.optional(3, "tags", Types.ListType.ofOptional(4, Types.StringType.get())));

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void writesWhatIcebergWrites(int formatVersion) {
    PartitionSpec spec = PartitionSpec.builderFor(SCHEMA).bucket("id", 8).build();
    SortOrder order = SortOrder.builderFor(SCHEMA).asc("id").build();
    TableMetadata metadata = TableMetadata.newTableMetadata(SCHEMA, spec, order, "/warehouse/db/t",
        Map.of("format-version", Integer.toString(formatVersion), "comment", "a \"table\"\n\ttab\\ \u0001\u001f\r\b\f/ é ✓"));
    FloeMetadataJson writer = new FloeMetadataJson();
    assertSame(writer, metadata);

    long sequence = metadata.nextSequenceNumber();
    for (int k = 0; k < 5; k++) {
      Long parent = metadata.currentSnapshot() == null ? null : metadata.currentSnapshot().snapshotId();
      long id = 1000 + k;
      Snapshot snapshot = new BaseSnapshot(formatVersion == 1 ? 0 : metadata.nextSequenceNumber(), id, parent,
          1_700_000_000_000L + k, k % 2 == 0 ? DataOperations.APPEND : DataOperations.OVERWRITE,
          Map.of("added-records", Long.toString(k), "note", "é \"x\""), metadata.currentSchemaId(),
          "/warehouse/db/t/metadata/snap-" + id + ".avro", formatVersion >= 3 ? metadata.nextRowId() : null,
          formatVersion >= 3 ? 10L : null, null);
      TableMetadata.Builder builder = TableMetadata.buildFrom(metadata).setBranchSnapshot(snapshot,
          SnapshotRef.MAIN_BRANCH);
      if (k == 2) {
        builder.setRef("audit", SnapshotRef.branchBuilder(id).maxRefAgeMs(86_400_000L).build());
        builder.setRef("v1.0", SnapshotRef.tagBuilder(id).build());
        builder.setStatistics(new GenericStatisticsFile(id, "/warehouse/db/t/metadata/stats.puffin", 100L, 10L,
            List.of(new GenericBlobMetadata("apache-datasketches-theta-v1", id, sequence, List.of(1),
                Map.of("ndv", "3")))));
        builder.setPartitionStatistics(ImmutableGenericPartitionStatisticsFile.builder().snapshotId(id)
            .path("/warehouse/db/t/metadata/partition-stats.parquet").fileSizeInBytes(42L).build());
      }
      metadata = builder.build();
      // as committed: the previous file goes into the metadata log
      metadata = TableMetadata.buildFrom(metadata).discardChanges()
          .withMetadataLocation("/warehouse/db/t/metadata/v" + (k + 2) + ".metadata.json").build();
      assertSame(writer, metadata);
    }
    // and once more with nothing new: every snapshot's JSON comes from the writer's memory
    assertSame(writer, metadata);
  }

  private static void assertSame(FloeMetadataJson writer, TableMetadata metadata) {
    assertThat(writer.toJson(metadata)).isEqualTo(TableMetadataParser.toJson(metadata));
  }
}
