package org.apache.iceberg;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.exceptions.RuntimeIOException;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.util.JsonUtil;

/**
 * Writes a table's metadata files exactly as {@link TableMetadataParser} does, keeping each snapshot's
 * JSON from the commit that first wrote it.
 *
 * <p>Every commit rewrites the whole metadata file, which lists every snapshot the table keeps, so
 * serializing the snapshots (their summaries above all) grows with the table's history: about 2 µs a
 * snapshot, 20 ms a commit at 10,000 snapshots. A snapshot never changes, so its JSON is made once; the
 * rest of the file is written field by field with Iceberg's own parsers. With assertions on (the
 * tests), every file is compared with what {@link TableMetadataParser} writes. Metadata with encryption
 * keys is left to Iceberg's writer.
 */
public final class FloeMetadataJson {
  /** JSON of the snapshots of the last metadata written, by snapshot id and manifest list. */
  private Map<String, String> snapshots = new HashMap<>();

  /** Writes {@code metadata} to a new file (which must not exist). */
  public synchronized void write(TableMetadata metadata, OutputFile file) {
    if (metadata.encryptionKeys() != null && !metadata.encryptionKeys().isEmpty()
        || file.location().endsWith(".gz.metadata.json")) {
      TableMetadataParser.write(metadata, file);
      return;
    }
    String json = toJson(metadata);
    assert json.equals(TableMetadataParser.toJson(metadata))
        : "metadata JSON differs from Iceberg's:\n" + json + "\n" + TableMetadataParser.toJson(metadata);
    try (OutputStream out = file.create()) {
      out.write(json.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new RuntimeIOException(e, "Failed to write json to file: %s", file.location());
    }
  }

  String toJson(TableMetadata metadata) {
    Map<String, String> kept = new HashMap<>(metadata.snapshots().size() * 2);
    StringWriter writer = new StringWriter(4096 + 1024 * metadata.snapshots().size());
    try (JsonGenerator g = JsonUtil.factory().createGenerator(writer)) {
      g.writeStartObject();
      g.writeNumberField(TableMetadataParser.FORMAT_VERSION, metadata.formatVersion());
      g.writeStringField(TableMetadataParser.TABLE_UUID, metadata.uuid());
      if (metadata.location() != null) {
        g.writeStringField(TableMetadataParser.LOCATION, metadata.location());
      }
      if (metadata.formatVersion() > 1) {
        g.writeNumberField(TableMetadataParser.LAST_SEQUENCE_NUMBER, metadata.lastSequenceNumber());
      }
      g.writeNumberField(TableMetadataParser.LAST_UPDATED_MILLIS, metadata.lastUpdatedMillis());
      g.writeNumberField(TableMetadataParser.LAST_COLUMN_ID, metadata.lastColumnId());
      if (metadata.formatVersion() == 1) {
        g.writeFieldName(TableMetadataParser.SCHEMA);
        SchemaParser.toJson(metadata.schema(), g);
      }
      g.writeNumberField(TableMetadataParser.CURRENT_SCHEMA_ID, metadata.currentSchemaId());
      g.writeArrayFieldStart(TableMetadataParser.SCHEMAS);
      for (Schema schema : metadata.schemas()) {
        SchemaParser.toJson(schema, g);
      }
      g.writeEndArray();
      if (metadata.formatVersion() == 1) {
        g.writeFieldName(TableMetadataParser.PARTITION_SPEC);
        PartitionSpecParser.toJsonFields(metadata.spec(), g);
      }
      g.writeNumberField(TableMetadataParser.DEFAULT_SPEC_ID, metadata.defaultSpecId());
      g.writeArrayFieldStart(TableMetadataParser.PARTITION_SPECS);
      for (PartitionSpec spec : metadata.specs()) {
        PartitionSpecParser.toJson(spec, g);
      }
      g.writeEndArray();
      g.writeNumberField(TableMetadataParser.LAST_PARTITION_ID, metadata.lastAssignedPartitionId());
      g.writeNumberField(TableMetadataParser.DEFAULT_SORT_ORDER_ID, metadata.defaultSortOrderId());
      g.writeArrayFieldStart(TableMetadataParser.SORT_ORDERS);
      for (SortOrder order : metadata.sortOrders()) {
        SortOrderParser.toJson(order, g);
      }
      g.writeEndArray();
      JsonUtil.writeStringMap(TableMetadataParser.PROPERTIES, metadata.properties(), g);
      if (metadata.currentSnapshot() != null) {
        g.writeNumberField(TableMetadataParser.CURRENT_SNAPSHOT_ID, metadata.currentSnapshot().snapshotId());
      } else if (metadata.formatVersion() >= TableMetadataParser.MIN_NULL_CURRENT_SNAPSHOT_VERSION) {
        g.writeNullField(TableMetadataParser.CURRENT_SNAPSHOT_ID);
      } else {
        g.writeNumberField(TableMetadataParser.CURRENT_SNAPSHOT_ID, -1L);
      }
      if (metadata.formatVersion() >= 3) {
        g.writeNumberField(TableMetadataParser.NEXT_ROW_ID, metadata.nextRowId());
      }
      g.writeObjectFieldStart(TableMetadataParser.REFS);
      for (Map.Entry<String, SnapshotRef> ref : metadata.refs().entrySet()) {
        g.writeFieldName(ref.getKey());
        SnapshotRefParser.toJson(ref.getValue(), g);
      }
      g.writeEndObject();
      g.writeArrayFieldStart(TableMetadataParser.SNAPSHOTS);
      for (Snapshot snapshot : metadata.snapshots()) {
        String key = snapshot.snapshotId() + "|" + snapshot.manifestListLocation();
        String json = snapshots.get(key);
        if (json == null) {
          json = compact(snapshot);
        }
        kept.put(key, json);
        g.writeRawValue(json);
      }
      g.writeEndArray();
      g.writeArrayFieldStart(TableMetadataParser.STATISTICS);
      for (StatisticsFile statistics : metadata.statisticsFiles()) {
        StatisticsFileParser.toJson(statistics, g);
      }
      g.writeEndArray();
      g.writeArrayFieldStart(TableMetadataParser.PARTITION_STATISTICS);
      for (PartitionStatisticsFile statistics : metadata.partitionStatisticsFiles()) {
        PartitionStatisticsFileParser.toJson(statistics, g);
      }
      g.writeEndArray();
      g.writeArrayFieldStart(TableMetadataParser.SNAPSHOT_LOG);
      for (HistoryEntry entry : metadata.snapshotLog()) {
        g.writeStartObject();
        g.writeNumberField(TableMetadataParser.TIMESTAMP_MS, entry.timestampMillis());
        g.writeNumberField(TableMetadataParser.SNAPSHOT_ID, entry.snapshotId());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeArrayFieldStart(TableMetadataParser.METADATA_LOG);
      for (TableMetadata.MetadataLogEntry entry : metadata.previousFiles()) {
        g.writeStartObject();
        g.writeNumberField(TableMetadataParser.TIMESTAMP_MS, entry.timestampMillis());
        g.writeStringField(TableMetadataParser.METADATA_FILE, entry.file());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    } catch (IOException e) {
      throw new RuntimeIOException(e, "Failed to write json for: %s", metadata);
    }
    snapshots = kept;
    return writer.toString();
  }

  /** A snapshot's JSON as it appears in a metadata file (not pretty-printed). */
  private static String compact(Snapshot snapshot) throws IOException {
    StringWriter writer = new StringWriter(1024);
    try (JsonGenerator g = JsonUtil.factory().createGenerator(writer)) {
      SnapshotParser.toJson(snapshot, g);
    }
    return writer.toString();
  }
}
