package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.QualifiedName;
import dev.floe.tail.TailLog;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.util.PropertyUtil;

/**
 * {@code VACUUM [FULL] [VERBOSE] [table, ...]}, PostgreSQL's habit applied to Iceberg tables: for each
 * table (none named: every table), by its policies,
 * <ol>
 *   <li>compaction of small files ({@link Compaction}: giving way to a concurrent writer; FULL merges
 *       every run of two or more, and rewrites a small file with deletes attached) — except on a table
 *       with a tail, whose log compacts it by itself;</li>
 *   <li>expiry of versions older than {@code history.expire.max-snapshot-age-ms} (Iceberg's default, 5
 *       days), beyond {@code floe.history.max-snapshots} (500) or beyond the size bound
 *       ({@code floe.history.max-disk-ratio}, {@link MaintenancePolicy#keep}), keeping
 *       {@code history.expire.min-snapshots-to-keep} (default 1) and whatever a live reader holds, with
 *       exactly the files only they referenced, and the metadata files that left the metadata log
 *       ({@link TableMaintenance#expire});</li>
 *   <li>removal of orphan files older than {@code floe.orphan-retention-ms} (default 7 days) that no
 *       write in flight may have written ({@link Maintenance#orphans}); a table whose directories hold other files is skipped with
 *       a warning.</li>
 * </ol>
 * Like PostgreSQL's, it cannot run inside a transaction block (25001). VERBOSE reports each table.
 */
final class Vacuum {
  private Vacuum() {}

  static final String ORPHAN_RETENTION = "floe.orphan-retention-ms";

  static Result run(SessionContext session, Ast.Vacuum v) {
    if (session.inTransaction()) {
      throw new FloeException(SqlState.ACTIVE_SQL_TRANSACTION, "VACUUM cannot run inside a transaction block");
    }
    Engine engine = session.engine();
    Tables tables = engine.tables();
    List<TableIdentifier> ids = new ArrayList<>();
    if (v.tables().isEmpty()) {
      ids.addAll(tables.catalog().tableLocations().keySet());
      ids.sort(java.util.Comparator.comparing(TableIdentifier::toString));
    } else {
      for (QualifiedName name : v.tables()) {
        TableIdentifier id = tables.require(name, session.currentSchema());
        if (tables.current(id).isEmpty()) {
          throw FloeException.undefinedTable(name.last(), name.position());
        }
        ids.add(id);
      }
    }
    for (TableIdentifier id : ids) {
      vacuum(session, engine, id, v);
    }
    return new CommandResult("VACUUM", 0);
  }

  private static void vacuum(SessionContext session, Engine engine, TableIdentifier id, Ast.Vacuum v) {
    Table table = engine.tables().current(id).orElse(null);
    if (table == null) {
      return; // dropped meanwhile
    }
    Compaction.Result compacted = Compaction.Result.NONE;
    if (!TailLog.hasTail(table)) {
      compacted = Compaction.compact(engine, id, session.duck(), v.full());
    }
    MaintenancePolicy policy = MaintenancePolicy.of(table);
    Maintainer.Done expired = TableMaintenance.expire(engine, id, policy, session.statementHolds());
    if (expired == null) {
      return;
    }
    Maintenance.Orphans orphans = Maintenance.orphans(engine, id, policy.orphanRetentionMillis(),
        session.statementHolds());
    int removed = 0;
    if (orphans.refused().isPresent()) {
      session.notice(dev.floe.Notice.warning("01000", "skipping orphan files of \"" + id.name() + "\": "
          + orphans.refused().get()));
    } else {
      removed = Maintenance.deleteOrphans(engine, orphans.files()).size();
    }
    if (v.verbose()) {
      session.notice(new dev.floe.Notice("INFO", SqlState.SUCCESSFUL_COMPLETION, "vacuuming \"" + id + "\": "
          + compacted.filesRewritten() + " file(s) compacted into " + compacted.filesWritten()
          + (compacted.gaveWay() > 0 ? " (gave way to concurrent writers " + compacted.gaveWay() + " time(s))" : "")
          + ", "
          + expired.snapshotsExpired() + " snapshot(s) expired with " + expired.filesRemoved()
          + " file(s) only they referenced, " + removed + " orphan file(s) removed"));
    }
  }
}
