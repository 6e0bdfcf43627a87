package dev.floe.exec;

import dev.floe.FloeProperties;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Ast.PartitionField;
import dev.floe.sql.Ast.PropertyValue;
import dev.floe.sql.Ast.SortField;
import dev.floe.sql.Parser;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.NullOrder;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.types.Types;

/**
 * Table options from {@code WITH (...)}: Trino's names ({@code format_version}, {@code partitioning},
 * {@code sorted_by} (or {@code sort_by}), {@code location}, {@code format}) become Iceberg structures,
 * {@code tail} gives the table a durable tail (docs/tail.md); every other key is
 * stored as an Iceberg table property as written (e.g. {@code 'write.delete.mode' = 'copy-on-write'}).
 */
record TableOptions(Map<String, String> properties, List<PartitionField> partitioning, boolean partitioningGiven,
    Optional<List<SortField>> sortedBy, Optional<String> location) {

  static final int DEFAULT_FORMAT_VERSION = 2;
  static final int DEFAULT_PREVIOUS_VERSIONS = 3;

  /**
   * The properties a new table is created with: those given, the format version (2 unless given), and
   * for v2+ Floe's write modes stated explicitly ({@code write.delete.mode}, {@code write.update.mode},
   * {@code write.merge.mode} = merge-on-read unless given), so that every engine writing the table
   * (Spark defaults to copy-on-write when they are absent) uses the same strategy; and a metadata log of
   * {@value #DEFAULT_PREVIOUS_VERSIONS} files ({@code write.metadata.previous-versions-max}, Iceberg's 100),
   * which expiry keeps on disk besides the current one (docs/decisions/0008-history-defaults.md).
   */
  Map<String, String> tableProperties() {
    Map<String, String> props = new LinkedHashMap<>(properties);
    props.putIfAbsent(TableProperties.FORMAT_VERSION, Integer.toString(DEFAULT_FORMAT_VERSION));
    props.putIfAbsent(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, Integer.toString(DEFAULT_PREVIOUS_VERSIONS));
    if (!props.get(TableProperties.FORMAT_VERSION).equals("1")) {
      for (String mode : List.of(TableProperties.DELETE_MODE, TableProperties.UPDATE_MODE, TableProperties.MERGE_MODE)) {
        props.putIfAbsent(mode, "merge-on-read");
      }
    }
    return props;
  }

  static TableOptions parse(Map<String, PropertyValue> with, List<PartitionField> partitionedBy) {
    Map<String, String> props = new LinkedHashMap<>();
    List<PartitionField> partitioning = new ArrayList<>(partitionedBy);
    boolean partitioningGiven = !partitionedBy.isEmpty();
    Optional<List<SortField>> sortedBy = Optional.empty();
    Optional<String> location = Optional.empty();
    for (Map.Entry<String, PropertyValue> e : with.entrySet()) {
      String key = e.getKey();
      PropertyValue value = e.getValue();
      switch (key.toLowerCase(Locale.ROOT)) {
        case "format_version", "format-version" -> {
          String v = scalar(key, value);
          if (!v.matches("[123]")) {
            throw bad(value, "format_version must be 1, 2 or 3, not " + v);
          }
          props.put(TableProperties.FORMAT_VERSION, v);
        }
        case "partitioning", "partitioned_by" -> {
          if (!partitionedBy.isEmpty()) {
            throw bad(value, "partitioning is given twice (PARTITIONED BY and WITH)");
          }
          for (String field : list(value)) {
            partitioning.add(Parser.parsePartitionField(field, value.position()));
          }
          partitioningGiven = true;
        }
        case "sorted_by", "sort_order", "sort_by" -> {
          List<SortField> fields = new ArrayList<>();
          for (String field : list(value)) {
            fields.add(Parser.parseSortField(field, value.position()));
          }
          sortedBy = Optional.of(fields);
        }
        case "location" -> location = Optional.of(scalar(key, value));
        case "publish_to" -> props.put(FloeProperties.PUBLISH_TO, scalar(key, value));
        case "tail", FloeProperties.TAIL -> {
          String v = scalar(key, value).toLowerCase(Locale.ROOT);
          if (!v.equals("true") && !v.equals("false")) {
            throw bad(value, "tail must be true or false, not " + v);
          }
          props.put(FloeProperties.TAIL, v);
        }
        case "format", "write.format.default" -> {
          String v = scalar(key, value);
          if (!v.equalsIgnoreCase("parquet")) {
            throw bad(value, "Floe writes Parquet data files only, not " + v);
          }
          props.put(TableProperties.DEFAULT_FILE_FORMAT, "parquet");
        }
        case "write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path" ->
            throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "property \"" + key + "\" is not supported: a "
                + "table keeps its files under its location", null, "Set location instead.", value.position(), null);
        default -> props.put(key, scalar(key, value));
      }
    }
    return new TableOptions(props, partitioning, partitioningGiven, sortedBy, location);
  }

  private static String scalar(String key, PropertyValue value) {
    if (value.isArray()) {
      throw bad(value, "property \"" + key + "\" takes a single value, not an ARRAY");
    }
    return value.scalar().get();
  }

  private static List<String> list(PropertyValue value) {
    if (value.isArray()) {
      return value.array();
    }
    List<String> out = new ArrayList<>();
    // A single string may hold several fields: 'day(ts), bucket(16, id)'.
    int depth = 0;
    StringBuilder cur = new StringBuilder();
    for (char c : value.scalar().get().toCharArray()) {
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      }
      if (c == ',' && depth == 0) {
        out.add(cur.toString().strip());
        cur.setLength(0);
      } else {
        cur.append(c);
      }
    }
    if (!cur.toString().isBlank()) {
      out.add(cur.toString().strip());
    }
    return out;
  }

  private static FloeException bad(PropertyValue value, String message) {
    return new FloeException(SqlState.INVALID_PARAMETER_VALUE, message, value.position());
  }

  static PartitionSpec spec(Schema schema, List<PartitionField> fields) {
    if (fields.isEmpty()) {
      return PartitionSpec.unpartitioned();
    }
    PartitionSpec.Builder b = PartitionSpec.builderFor(schema);
    for (PartitionField f : fields) {
      Types.NestedField column = schema.caseInsensitiveFindField(f.column());
      if (column == null) {
        throw new FloeException(SqlState.UNDEFINED_COLUMN,
            "column \"" + f.column() + "\" named in partition key does not exist", f.position());
      }
      String name = column.name();
      try {
        switch (f.transform()) {
          case "identity" -> b.identity(name);
          case "year" -> b.year(name);
          case "month" -> b.month(name);
          case "day" -> b.day(name);
          case "hour" -> b.hour(name);
          case "bucket" -> b.bucket(name, f.argument().orElseThrow());
          case "truncate" -> b.truncate(name, f.argument().orElseThrow());
          case "void" -> b.alwaysNull(name);
          default -> throw new IllegalArgumentException("unknown transform " + f.transform());
        }
      } catch (IllegalArgumentException | org.apache.iceberg.exceptions.ValidationException e) {
        throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "invalid partition field " + f.transform() + "("
            + f.column() + "): " + e.getMessage(), f.position());
      }
    }
    PartitionSpec spec;
    try {
      spec = b.build();
    } catch (IllegalArgumentException | org.apache.iceberg.exceptions.ValidationException e) {
      throw new FloeException(SqlState.INVALID_TABLE_DEFINITION, "invalid partitioning: " + e.getMessage(), fields.get(0).position());
    }
    try {
      dev.floe.write.PartitionSql.checkWritable(spec);
    } catch (FloeException e) {
      throw e.withPosition(fields.get(0).position());
    }
    return spec;
  }

  static SortOrder sortOrder(Schema schema, List<SortField> fields) {
    if (fields.isEmpty()) {
      return SortOrder.unsorted();
    }
    SortOrder.Builder b = SortOrder.builderFor(schema);
    for (SortField f : fields) {
      Types.NestedField column = schema.caseInsensitiveFindField(f.column());
      if (column == null) {
        throw new FloeException(SqlState.UNDEFINED_COLUMN,
            "column \"" + f.column() + "\" named in sorted_by does not exist", f.position());
      }
      NullOrder nulls = f.nullsFirst() ? NullOrder.NULLS_FIRST : NullOrder.NULLS_LAST;
      if (f.descending()) {
        b.desc(column.name(), nulls);
      } else {
        b.asc(column.name(), nulls);
      }
    }
    return b.build();
  }

  /** The partition spec as SQL text, e.g. {@code day(ts)}, {@code bucket(16, id)}. */
  static List<String> describe(PartitionSpec spec, Schema schema) {
    List<String> out = new ArrayList<>();
    for (org.apache.iceberg.PartitionField f : spec.fields()) {
      Types.NestedField source = schema.findField(f.sourceId());
      String col = source == null ? "field " + f.sourceId() : source.name();
      String t = f.transform().toString();
      if (t.equals("identity")) {
        out.add(col);
      } else if (t.startsWith("bucket[") || t.startsWith("truncate[")) {
        String n = t.substring(t.indexOf('[') + 1, t.length() - 1);
        out.add(t.substring(0, t.indexOf('[')) + "(" + n + ", " + col + ")");
      } else {
        out.add(t + "(" + col + ")");
      }
    }
    return out;
  }

  static List<String> describe(SortOrder order, Schema schema) {
    List<String> out = new ArrayList<>();
    for (org.apache.iceberg.SortField f : order.fields()) {
      Types.NestedField source = schema.findField(f.sourceId());
      String col = source == null ? "field " + f.sourceId() : source.name();
      out.add(col + " " + f.direction() + " " + (f.nullOrder() == NullOrder.NULLS_FIRST ? "NULLS FIRST" : "NULLS LAST"));
    }
    return out;
  }
}
