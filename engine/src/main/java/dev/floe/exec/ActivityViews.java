package dev.floe.exec;

import dev.floe.MaintenanceRun;
import dev.floe.read.RowStage;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The system views whose rows are the engine's live state, not the warehouse's catalog: produced when a
 * statement names one, from the registries, and staged for DuckDB as the statement's rows
 * ({@link StagedRows}: through the appender, so no value, a query's text included, is ever written into
 * SQL). They live in pg_catalog and are found unqualified, as PostgreSQL's are:
 *
 * <ul>
 *   <li>{@code pg_stat_activity}: one row per backend ({@link Backends}), PostgreSQL 15's columns, then
 *       {@code floe_pinned_since}, the oldest version the backend's reads keep ({@link ReaderPins});
 *   <li>{@code floe_reader_holds}: one row per live hold ({@link ReaderPins}): who holds it, its backend,
 *       its table (null: every table), since when, and how long ago that is;
 *   <li>{@code floe_maintenance_runs}: the background maintainer's recent steps ({@link Maintainer#runs}).
 * </ul>
 */
final class ActivityViews {
  static final String ACTIVITY = "pg_stat_activity";
  static final String HOLDS = "floe_reader_holds";
  static final String MAINTENANCE = "floe_maintenance_runs";
  static final Set<String> NAMES = Set.of(ACTIVITY, HOLDS, MAINTENANCE);

  private ActivityViews() {}

  /** SQL for the live view {@code name} ({@code pg_catalog.<name>}), its rows staged now; empty if it is none. */
  static Optional<String> relation(String name, Engine engine, RowStage stage) {
    return switch (name) {
      case "pg_catalog." + ACTIVITY -> Optional.of(activity(engine.backends(), stage));
      case "pg_catalog." + HOLDS -> Optional.of(holds(engine.tables().readerPins(), stage));
      case "pg_catalog." + MAINTENANCE -> Optional.of(maintenance(engine.maintenanceRuns(), stage));
      default -> Optional.empty();
    };
  }

  private static final Type TEXT = Types.StringType.get();
  private static final Type INT = Types.IntegerType.get();
  private static final Type BIGINT = Types.LongType.get();
  private static final Type TIMESTAMPTZ = Types.TimestampType.withZone();

  /** A schema of optional columns from {@code name, type} pairs. */
  private static Schema schema(Object... columns) {
    Types.NestedField[] fields = new Types.NestedField[columns.length / 2];
    for (int k = 0; k < fields.length; k++) {
      fields[k] = Types.NestedField.optional(k + 1, (String) columns[2 * k], (Type) columns[2 * k + 1]);
    }
    return new Schema(fields);
  }

  private static final Schema ACTIVITY_COLUMNS = schema("datid", INT, "datname", TEXT, "pid", INT, "leader_pid", INT,
      "usesysid", INT, "usename", TEXT, "application_name", TEXT, "client_addr", TEXT, "client_hostname", TEXT,
      "client_port", INT, "backend_start", TIMESTAMPTZ, "xact_start", TIMESTAMPTZ, "query_start", TIMESTAMPTZ,
      "state_change", TIMESTAMPTZ, "wait_event_type", TEXT, "wait_event", TEXT, "state", TEXT, "backend_xid", INT,
      "backend_xmin", INT, "query_id", BIGINT, "query", TEXT, "backend_type", TEXT, "floe_pinned_since", TIMESTAMPTZ);

  private static String activity(Backends backends, RowStage stage) {
    List<Backends.Row> rows = backends.rows();
    return stage.relation(ACTIVITY_COLUMNS, sink -> {
      for (Backends.Row r : rows) {
        boolean waiting = !r.state().equals(Backends.ACTIVE); // an idle backend waits for its client
        sink.row(new Object[] {PgCatalog.DATABASE_OID, r.database() == null ? "floe" : r.database(), r.pid(), null,
            Backends.superuser(r.user()) ? PgCatalog.OWNER_OID : null, r.user(), r.applicationName(),
            r.clientAddress(), null, r.clientPort(), micros(r.backendStart()), micros(r.xactStart()),
            micros(r.queryStart()), micros(r.stateChange()), waiting ? "Client" : null,
            waiting ? "ClientRead" : null, r.state(), null, null, null, r.query(), "client backend",
            r.pinnedSince() == null ? null : micros(r.pinnedSince())});
      }
    });
  }

  private static final Schema HOLD_COLUMNS = schema("holder", TEXT, "pid", INT, "table_name", TEXT, "since",
      TIMESTAMPTZ);

  private static String holds(ReaderPins pins, RowStage stage) {
    List<ReaderPins.Hold> holds = pins.holds();
    String staged = stage.relation(HOLD_COLUMNS, sink -> {
      for (ReaderPins.Hold h : holds) {
        sink.row(new Object[] {h.holder(), h.pid() == 0 ? null : h.pid(), h.table().map(Object::toString)
            .orElse(null), micros(h.sinceMillis())});
      }
    });
    return "SELECT holder, pid, table_name, since, CAST(current_timestamp - since AS INTERVAL) AS age FROM ("
        + staged + ")";
  }

  private static final Schema RUN_COLUMNS = schema("started_at", TIMESTAMPTZ, "table_name", TEXT, "action", TEXT,
      "trigger", TEXT, "files_removed", INT, "files_added", INT, "bytes_removed", BIGINT, "bytes_added", BIGINT,
      "snapshots_expired", INT, "millis", BIGINT, "outcome", TEXT);

  private static String maintenance(List<MaintenanceRun> runs, RowStage stage) {
    String staged = stage.relation(RUN_COLUMNS, sink -> {
      for (MaintenanceRun r : runs) {
        sink.row(new Object[] {r.startedAt().toEpochMilli() * 1000, r.table(), r.action(), r.trigger(),
            r.filesRemoved(), r.filesAdded(), r.bytesRemoved(), r.bytesAdded(), r.snapshotsExpired(), r.millis(),
            r.outcome()});
      }
    });
    return "SELECT started_at, table_name, action, \"trigger\", files_removed, files_added, bytes_removed, "
        + "bytes_added, snapshots_expired, to_milliseconds(millis) AS duration, outcome FROM (" + staged + ")";
  }

  /** Epoch milliseconds as the staged rows take timestamps (microseconds); 0 is no time (null). */
  private static Long micros(long millis) {
    return millis == 0 ? null : millis * 1000;
  }
}
