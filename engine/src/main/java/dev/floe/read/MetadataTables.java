package dev.floe.read;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.DataTask;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataTableType;
import org.apache.iceberg.MetadataTableUtils;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

/**
 * Iceberg metadata tables, addressed as Trino names them: {@code "orders$snapshots"}, {@code $history},
 * {@code $files}, {@code $manifests}, {@code $partitions}, {@code $refs} (and every other Iceberg metadata
 * table: {@code $entries}, {@code $all_files}, ...), plus Trino's {@code $properties} and Floe's
 * {@code $health} ({@link TableHealth}). Rows come from
 * Iceberg's own metadata table implementations, handed to DuckDB through a {@link RowStage} (bound, not
 * written into SQL).
 */
public final class MetadataTables {
  private MetadataTables() {}

  /** Splits {@code orders$snapshots} into the table name and the metadata table name, if it is one. */
  public static Optional<String[]> split(String name) {
    int dollar = name.lastIndexOf('$');
    if (dollar <= 0 || dollar == name.length() - 1) {
      return Optional.empty();
    }
    return Optional.of(new String[] {name.substring(0, dollar), name.substring(dollar + 1)});
  }

  /** Whether {@code kind} names a metadata table. */
  public static boolean isKnown(String kind) {
    if (kind.equalsIgnoreCase("properties") || kind.equalsIgnoreCase(TableHealth.NAME)) {
      return true;
    }
    try {
      return MetadataTableType.from(kind) != null;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * A SELECT over metadata table {@code kind} of {@code table}, its rows staged through {@code stage}.
   *
   * @param snapshot for time travel, the snapshot to describe (where Iceberg supports it)
   */
  public static String relation(Table table, String kind, Optional<Snapshot> snapshot, RowStage stage) {
    if (kind.equalsIgnoreCase("properties")) {
      return properties(table, stage);
    }
    if (kind.equalsIgnoreCase(TableHealth.NAME)) {
      return TableHealth.relation(table, snapshot, stage);
    }
    MetadataTableType type = MetadataTableType.from(kind.toUpperCase(Locale.ROOT));
    Table meta = MetadataTableUtils.createMetadataTableInstance(table, type);
    Schema schema = meta.schema();
    // $snapshots also shows each snapshot's sequence number: the version `AS OF VERSION n` names.
    boolean withVersion = type == MetadataTableType.SNAPSHOTS;
    Schema shown = withVersion ? withSequenceNumber(schema) : schema;
    int snapshotId = withVersion ? schema.columns().indexOf(schema.findField("snapshot_id")) : -1;
    TableScan scan = meta.newScan();
    if (snapshot.isPresent()) {
      try {
        scan = scan.useSnapshot(snapshot.get().snapshotId());
      } catch (UnsupportedOperationException e) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
            "time travel is not supported for metadata table $" + kind);
      }
    }
    TableScan planned = scan;
    return stage.relation(shown, sink -> {
      try (CloseableIterable<FileScanTask> tasks = planned.planFiles()) {
        for (FileScanTask task : tasks) {
          if (!(task instanceof DataTask data)) {
            throw new IllegalStateException("unexpected metadata scan task " + task.getClass());
          }
          try (CloseableIterable<StructLike> structs = data.rows()) {
            for (StructLike row : structs) {
              Object[] values = new Object[shown.columns().size()];
              for (int k = 0; k < schema.columns().size(); k++) {
                values[k] = row.get(k, Object.class);
              }
              if (withVersion) {
                Long id = row.get(snapshotId, Long.class);
                Snapshot s = id == null ? null : table.snapshot(id);
                values[values.length - 1] = s == null ? null : Versions.of(table, s).orElse(null);
              }
              sink.row(values);
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
  }

  private static Schema withSequenceNumber(Schema schema) {
    java.util.List<Types.NestedField> fields = new java.util.ArrayList<>(schema.columns());
    int id = fields.stream().mapToInt(Types.NestedField::fieldId).max().orElse(0) + 1000;
    fields.add(Types.NestedField.optional(id, "sequence_number", Types.LongType.get()));
    return new Schema(fields);
  }

  private static String properties(Table table, RowStage stage) {
    Schema schema = new Schema(
        Types.NestedField.required(1, "key", Types.StringType.get()),
        Types.NestedField.required(2, "value", Types.StringType.get()));
    return stage.relation(schema, sink -> {
      for (Map.Entry<String, String> e : new java.util.TreeMap<>(table.properties()).entrySet()) {
        sink.row(new Object[] {e.getKey(), e.getValue()});
      }
    });
  }
}
