package dev.floe;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A table as of the moment it was looked up.
 *
 * @param schema the schema name (Iceberg namespace)
 * @param name the table name
 * @param columns the current columns
 * @param currentVersion the sequence number of the current snapshot; empty for a table never written
 * @param snapshots the snapshots still in the table's metadata, oldest first
 * @param partitioning the partition fields, e.g. {@code day(ts)}, {@code bucket(16, id)}
 * @param sortOrder the sort order fields, e.g. {@code ts ASC NULLS FIRST}
 * @param properties the Iceberg table properties
 * @param location the table's root location
 * @param formatVersion the Iceberg format version (1, 2 or 3)
 */
public record TableInfo(String schema, String name, List<Column> columns, Optional<Long> currentVersion,
    List<SnapshotInfo> snapshots, List<String> partitioning, List<String> sortOrder, Map<String, String> properties,
    String location, int formatVersion) {}
