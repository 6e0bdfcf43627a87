package dev.floe.read;

import dev.floe.Column;
import dev.floe.types.TypeMapping;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;

/**
 * The files one table reference reads: Iceberg scan planning at a snapshot with the statement's
 * pushed-down predicate, which prunes manifests and data files by partition values and column bounds.
 * Each task carries the delete files (position, deletion vector, equality) that apply to its data file,
 * with Iceberg's sequence-number and partition scoping already applied.
 *
 * @param snapshot the snapshot read; empty for a table that has none (no rows)
 * @param schema the schema the rows are read with (the snapshot's schema)
 * @param columns the SQL columns of that schema
 */
public record ScanPlan(Table table, Optional<Snapshot> snapshot, Schema schema, List<Column> columns,
    List<FileScanTask> tasks) {

  /**
   * Plans a scan of {@code snapshot} (or the empty table) keeping only files that may match {@code filter}.
   *
   * @param timeTravel read with the schema the snapshot was written with, rather than the table's current
   *     schema (a current read sees columns added since the last snapshot)
   */
  public static ScanPlan plan(ScanPlanner planner, Table table, Optional<Snapshot> snapshot, Expression filter,
      boolean timeTravel) {
    Schema schema = timeTravel && snapshot.isPresent() ? schemaOf(table, snapshot.get()) : table.schema();
    List<Column> columns = TypeMapping.columns(schema, table.properties());
    if (snapshot.isEmpty()) {
      return new ScanPlan(table, snapshot, schema, columns, List.of());
    }
    return new ScanPlan(table, snapshot, schema, columns, planner.plan(table, snapshot.get(), schema, filter));
  }

  /**
   * Whether Iceberg's column bounds may prune by a predicate on a column of {@code type}. Not for uuid:
   * the bounds are in unsigned byte order (RFC 9562, Parquet's statistics, {@code t$files} shows them so),
   * while Iceberg's evaluators (1.12) compare uuids as Java does, as two signed longs, so a uuid with its
   * high bit set falls outside bounds that hold it and its file or row group is skipped
   * (apache/iceberg#14216). Every filter Floe gives Iceberg (a scan's, a conflict check's, a moved row's)
   * leaves such columns out.
   */
  public static boolean prunesBy(org.apache.iceberg.types.Type type) {
    return type.typeId() != org.apache.iceberg.types.Type.TypeID.UUID;
  }

  /** The schema a snapshot was written with, or the table's current schema if the snapshot records none. */
  public static Schema schemaOf(Table table, Snapshot snapshot) {
    Integer id = snapshot.schemaId();
    if (id != null && table.schemas().containsKey(id)) {
      return table.schemas().get(id);
    }
    return table.schema();
  }
}
