package org.apache.iceberg;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.exceptions.RuntimeIOException;
import org.apache.iceberg.io.OutputFile;

/**
 * Writes a table's metadata files exactly as {@link TableMetadataParser} does, keeping each snapshot's
 * JSON from the commit that first wrote it.
 *
 * <p>Every commit rewrites the whole metadata file, which lists every snapshot the table keeps, so
 * serializing the snapshots (their summaries above all) grows with the table's history: about 2 µs a
 * snapshot, 20 ms a commit at 10,000 snapshots. A snapshot never changes, so its JSON is made once; the
 * rest of the file is assembled field by field from Iceberg's own parsers' output. Only strings cross
 * into Iceberg, no Jackson types: under Spark, Iceberg's runtime jar shades Jackson. With assertions on
 * (the tests), every file is compared with what {@link TableMetadataParser} writes. Metadata with
 * encryption keys is left to Iceberg's writer.
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
    StringBuilder b = new StringBuilder(4096 + 1024 * metadata.snapshots().size());
    b.append('{');
    number(b, TableMetadataParser.FORMAT_VERSION, metadata.formatVersion()).append(',');
    string(b, TableMetadataParser.TABLE_UUID, metadata.uuid()).append(',');
    if (metadata.location() != null) {
      string(b, TableMetadataParser.LOCATION, metadata.location()).append(',');
    }
    if (metadata.formatVersion() > 1) {
      number(b, TableMetadataParser.LAST_SEQUENCE_NUMBER, metadata.lastSequenceNumber()).append(',');
    }
    number(b, TableMetadataParser.LAST_UPDATED_MILLIS, metadata.lastUpdatedMillis()).append(',');
    number(b, TableMetadataParser.LAST_COLUMN_ID, metadata.lastColumnId()).append(',');
    if (metadata.formatVersion() == 1) {
      field(b, TableMetadataParser.SCHEMA).append(SchemaParser.toJson(metadata.schema(), false)).append(',');
    }
    number(b, TableMetadataParser.CURRENT_SCHEMA_ID, metadata.currentSchemaId()).append(',');
    array(b, TableMetadataParser.SCHEMAS, metadata.schemas(), x -> SchemaParser.toJson(x, false)).append(',');
    if (metadata.formatVersion() == 1) {
      field(b, TableMetadataParser.PARTITION_SPEC).append(PartitionSpecParser.toJsonFields(metadata.spec()))
          .append(',');
    }
    number(b, TableMetadataParser.DEFAULT_SPEC_ID, metadata.defaultSpecId()).append(',');
    array(b, TableMetadataParser.PARTITION_SPECS, metadata.specs(), x -> PartitionSpecParser.toJson(x, false))
        .append(',');
    number(b, TableMetadataParser.LAST_PARTITION_ID, metadata.lastAssignedPartitionId()).append(',');
    number(b, TableMetadataParser.DEFAULT_SORT_ORDER_ID, metadata.defaultSortOrderId()).append(',');
    array(b, TableMetadataParser.SORT_ORDERS, metadata.sortOrders(), x -> SortOrderParser.toJson(x, false))
        .append(',');
    field(b, TableMetadataParser.PROPERTIES).append('{');
    boolean first = true;
    for (Map.Entry<String, String> e : metadata.properties().entrySet()) {
      b.append(first ? "" : ",");
      string(b, e.getKey(), e.getValue());
      first = false;
    }
    b.append("},");
    if (metadata.currentSnapshot() != null) {
      number(b, TableMetadataParser.CURRENT_SNAPSHOT_ID, metadata.currentSnapshot().snapshotId());
    } else if (metadata.formatVersion() >= TableMetadataParser.MIN_NULL_CURRENT_SNAPSHOT_VERSION) {
      field(b, TableMetadataParser.CURRENT_SNAPSHOT_ID).append("null");
    } else {
      number(b, TableMetadataParser.CURRENT_SNAPSHOT_ID, -1L);
    }
    b.append(',');
    if (metadata.formatVersion() >= 3) {
      number(b, TableMetadataParser.NEXT_ROW_ID, metadata.nextRowId()).append(',');
    }
    field(b, TableMetadataParser.REFS).append('{');
    first = true;
    for (Map.Entry<String, SnapshotRef> ref : metadata.refs().entrySet()) {
      b.append(first ? "" : ",");
      field(b, ref.getKey()).append(SnapshotRefParser.toJson(ref.getValue(), false));
      first = false;
    }
    b.append("},");
    array(b, TableMetadataParser.SNAPSHOTS, metadata.snapshots(), snapshot -> {
      String key = snapshot.snapshotId() + "|" + snapshot.manifestListLocation();
      String json = snapshots.get(key);
      if (json == null) {
        json = SnapshotParser.toJson(snapshot, false);
      }
      kept.put(key, json);
      return json;
    }).append(',');
    array(b, TableMetadataParser.STATISTICS, metadata.statisticsFiles(), x -> StatisticsFileParser.toJson(x, false))
        .append(',');
    array(b, TableMetadataParser.PARTITION_STATISTICS, metadata.partitionStatisticsFiles(),
        x -> PartitionStatisticsFileParser.toJson(x, false)).append(',');
    array(b, TableMetadataParser.SNAPSHOT_LOG, metadata.snapshotLog(), entry -> {
      StringBuilder e = new StringBuilder("{");
      number(e, TableMetadataParser.TIMESTAMP_MS, entry.timestampMillis()).append(',');
      return number(e, TableMetadataParser.SNAPSHOT_ID, entry.snapshotId()).append('}').toString();
    }).append(',');
    array(b, TableMetadataParser.METADATA_LOG, metadata.previousFiles(), entry -> {
      StringBuilder e = new StringBuilder("{");
      number(e, TableMetadataParser.TIMESTAMP_MS, entry.timestampMillis()).append(',');
      return string(e, TableMetadataParser.METADATA_FILE, entry.file()).append('}').toString();
    });
    b.append('}');
    snapshots = kept;
    return b.toString();
  }

  private static <T> StringBuilder array(StringBuilder b, String name, Iterable<T> items,
      java.util.function.Function<T, String> json) {
    field(b, name).append('[');
    boolean first = true;
    for (T item : items) {
      b.append(first ? "" : ",").append(json.apply(item));
      first = false;
    }
    return b.append(']');
  }

  private static StringBuilder number(StringBuilder b, String name, long value) {
    return field(b, name).append(value);
  }

  private static StringBuilder string(StringBuilder b, String name, String value) {
    return quoted(field(b, name), value);
  }

  private static StringBuilder field(StringBuilder b, String name) {
    return quoted(b, name).append(':');
  }

  /** A JSON string as Iceberg's writer (Jackson, default settings) writes it. */
  private static StringBuilder quoted(StringBuilder b, String s) {
    return dev.floe.types.JsonText.appendString(b, s);
  }
}
