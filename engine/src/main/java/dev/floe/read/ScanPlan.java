package dev.floe.read;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.types.TypeMapping;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

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
  public static ScanPlan plan(Table table, Optional<Snapshot> snapshot, Expression filter, boolean timeTravel) {
    Schema schema = timeTravel && snapshot.isPresent() ? schemaOf(table, snapshot.get()) : table.schema();
    List<Column> columns = TypeMapping.columns(schema, table.properties());
    if (snapshot.isEmpty()) {
      return new ScanPlan(table, snapshot, schema, columns, List.of());
    }
    try {
      return new ScanPlan(table, snapshot, schema, columns, planFiles(table, snapshot.get(), filter));
    } catch (ValidationException e) {
      // The predicate names a column the snapshot's schema does not have (renamed since): no pruning.
      return new ScanPlan(table, snapshot, schema, columns, planFiles(table, snapshot.get(), null));
    }
  }

  private static List<FileScanTask> planFiles(Table table, Snapshot snapshot, Expression filter) {
    TableScan scan = table.newScan().useSnapshot(snapshot.snapshotId());
    if (filter != null && !filter.equals(Expressions.alwaysTrue())) {
      scan = scan.filter(filter);
    }
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> files = scan.planFiles()) {
      for (FileScanTask t : files) {
        tasks.add(t);
      }
    } catch (NotFoundException | UncheckedIOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot plan a scan of table " + table.name()
          + ": metadata file missing or unreadable: " + e.getMessage(), e);
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot plan a scan of table " + table.name() + ": "
          + e.getMessage(), e);
    } catch (RuntimeException e) {
      if (e instanceof ValidationException) {
        throw e;
      }
      if (e.getCause() instanceof IOException || e.getClass().getName().contains("Avro")) {
        throw new FloeException(SqlState.DATA_CORRUPTED, "cannot plan a scan of table " + table.name()
            + ": a manifest is corrupt or unreadable: " + e.getMessage(), e);
      }
      throw e;
    }
    return tasks;
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
