package dev.floe.read;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import dev.floe.types.SqlLiterals;
import dev.floe.types.TypeMapping;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
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
 * table: {@code $entries}, {@code $all_files}, ...), plus Trino's {@code $properties}. Rows come from
 * Iceberg's own metadata table implementations, rendered as a VALUES relation.
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
    if (kind.equalsIgnoreCase("properties")) {
      return true;
    }
    try {
      return MetadataTableType.from(kind) != null;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * A SELECT over metadata table {@code kind} of {@code table}.
   *
   * @param snapshot for time travel, the snapshot to describe (where Iceberg supports it)
   */
  public static String relation(Table table, String kind, Optional<Snapshot> snapshot) {
    if (kind.equalsIgnoreCase("properties")) {
      return properties(table);
    }
    MetadataTableType type = MetadataTableType.from(kind.toUpperCase(Locale.ROOT));
    Table meta = MetadataTableUtils.createMetadataTableInstance(table, type);
    Schema schema = meta.schema();
    // $snapshots also shows each snapshot's sequence number: the version `AS OF VERSION n` names.
    boolean withVersion = type == MetadataTableType.SNAPSHOTS;
    Schema shown = withVersion ? withSequenceNumber(schema) : schema;
    List<String> rows = new ArrayList<>();
    TableScan scan = meta.newScan();
    if (snapshot.isPresent()) {
      try {
        scan = scan.useSnapshot(snapshot.get().snapshotId());
      } catch (UnsupportedOperationException e) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
            "time travel is not supported for metadata table $" + kind);
      }
    }
    try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
      for (FileScanTask task : tasks) {
        if (!(task instanceof DataTask data)) {
          throw new IllegalStateException("unexpected metadata scan task " + task.getClass());
        }
        try (CloseableIterable<StructLike> structs = data.rows()) {
          for (StructLike row : structs) {
            String values = row(schema, row);
            if (withVersion) {
              Long id = row.get(schema.columns().indexOf(schema.findField("snapshot_id")), Long.class);
              Snapshot s = id == null ? null : table.snapshot(id);
              values = values.substring(0, values.length() - 1) + ", "
                  + SqlLiterals.of(Types.LongType.get(), s == null ? null : Versions.of(table, s).orElse(null)) + ")";
            }
            rows.add(values);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return values(shown, rows);
  }

  private static Schema withSequenceNumber(Schema schema) {
    java.util.List<Types.NestedField> fields = new java.util.ArrayList<>(schema.columns());
    int id = fields.stream().mapToInt(Types.NestedField::fieldId).max().orElse(0) + 1000;
    fields.add(Types.NestedField.optional(id, "sequence_number", Types.LongType.get()));
    return new Schema(fields);
  }

  private static String properties(Table table) {
    Schema schema = new Schema(
        Types.NestedField.required(1, "key", Types.StringType.get()),
        Types.NestedField.required(2, "value", Types.StringType.get()));
    List<String> rows = new ArrayList<>();
    for (Map.Entry<String, String> e : new java.util.TreeMap<>(table.properties()).entrySet()) {
      rows.add("(" + SqlLiterals.of(Types.StringType.get(), e.getKey()) + ", "
          + SqlLiterals.of(Types.StringType.get(), e.getValue()) + ")");
    }
    return values(schema, rows);
  }

  private static String row(Schema schema, StructLike row) {
    List<Types.NestedField> fields = schema.columns();
    StringBuilder b = new StringBuilder("(");
    for (int k = 0; k < fields.size(); k++) {
      if (k > 0) {
        b.append(", ");
      }
      b.append(SqlLiterals.of(fields.get(k).type(), row.get(k, Object.class)));
    }
    return b.append(')').toString();
  }

  private static String values(Schema schema, List<String> rows) {
    List<String> names = schema.columns().stream().map(f -> Lexer.quoteIdentifier(f.name()))
        .collect(Collectors.toList());
    if (rows.isEmpty()) {
      return "SELECT " + schema.columns().stream()
          .map(f -> "CAST(NULL AS " + TypeMapping.duckdbType(f.type()) + ") AS " + Lexer.quoteIdentifier(f.name()))
          .collect(Collectors.joining(", ")) + " WHERE false";
    }
    return "SELECT * FROM (VALUES " + String.join(", ", rows) + ") AS m(" + String.join(", ", names) + ")";
  }
}
