package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * {@code ALTER TABLE t EXECUTE procedure(...)}: what an operator does to a table's versions, named as
 * Trino's Iceberg connector names them. {@code rollback_to_snapshot(snapshot_id)} and Floe's
 * {@code rollback_to_version(version)} (the sequence number {@code AS OF VERSION} takes) make an earlier
 * version of the table current again, as one commit: the versions after it stay in the history (time
 * travel reads them) until they are expired. Only a version the current one descends from can be rolled
 * back to, so a rollback never resurrects a branch of history that was itself rolled back. A running
 * transaction block that read a later version fails its COMMIT with 40001 (its parent is no longer an
 * ancestor). Runs holding the table's commit lock ({@link Ddl}), but for {@link #withoutLock} procedures.
 */
final class TableProcedures {
  private TableProcedures() {}

  private static final String PROCEDURES = "Table procedures: rollback_to_snapshot(snapshot_id), "
      + "rollback_to_version(version), optimize(file_size_threshold), expire_snapshots(retention_threshold), "
      + "remove_orphan_files(retention_threshold, dry_run).";

  static Result run(SessionContext session, TableIdentifier id, Table table, Ast.Execute e) {
    String name = e.procedure();
    return switch (name) {
      case "rollback_to_snapshot", "rollback_to_version" -> rollback(session, id, table, e, rollbackTarget(table, id, e));
      case "expire_snapshots" -> expire(session, id, table, e);
      case "optimize" -> optimize(session, id, table, e);
      case "remove_orphan_files" -> removeOrphans(session, id, e);
      default -> throw new FloeException(SqlState.UNDEFINED_FUNCTION, "procedure " + name + " does not exist",
          null, PROCEDURES, e.position(), null);
    };
  }

  /**
   * Whether the procedure runs without the table's commit lock: a compaction commits through the
   * committer, and expiry takes the lock for its commit only (writers go on meanwhile while they read the
   * table's manifests); orphan removal commits nothing.
   */
  static boolean withoutLock(Ast.Execute e) {
    return e.procedure().equals("optimize") || e.procedure().equals("remove_orphan_files")
        || e.procedure().equals("expire_snapshots");
  }

  /** Refuses a procedure a table with a tail cannot take (called before its log is sealed). */
  static void checkTail(TableIdentifier id, Ast.Execute e) {
    if (e.procedure().startsWith("rollback_to_")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot roll back table \"" + id.name()
          + "\": it has a tail", null, "Its log holds acknowledged rows that an earlier version does not have; "
          + "retire the log first (docs/tail.md), or read the earlier version with AS OF VERSION.", e.position(), null);
    }
  }

  /**
   * {@code expire_snapshots(retention_threshold => '7d')}: the versions that stopped being current more
   * than the retention ago go, and the files only they referenced; a version a live reader holds stays
   * (docs/maintenance.md). Any retention is honoured, zero included: holds protect live readers, and a
   * commit in flight has written no file any version names.
   */
  private static Result expire(SessionContext session, TableIdentifier id, Table table, Ast.Execute e) {
    List<Ast.ProcedureArgument> args = e.arguments();
    if (args.size() != 1 || args.get(0).name() != null && !args.get(0).name().equals("retention_threshold")
        || !args.get(0).string()) {
      throw new FloeException(SqlState.UNDEFINED_FUNCTION, "procedure " + e.procedure() + "(" + signature(args)
          + ") does not exist", null, e.procedure() + " takes one argument, retention_threshold (a duration such as "
          + "'7d', '12h', '30m', '0s').", e.position(), null);
    }
    long retention = duration(args.get(0));
    Maintenance.Expired done = Maintenance.expireBesideWriters(session.engine(), id, retention, 1,
        session.statementHolds());
    session.notice("expired " + done.snapshots() + " snapshot(s) of table \"" + id.name() + "\" and deleted "
        + done.files().size() + " file(s) only they referenced");
    return new CommandResult("ALTER TABLE", 0);
  }

  /**
   * {@code remove_orphan_files(retention_threshold => '7d', dry_run => true)}: files in the table's
   * directories that no version references and older than the retention (default 7 days; any retention,
   * zero included: a file that a statement, block or background writer of this process still running
   * may have written is never a candidate). A dry run (the default) says what it would delete;
   * {@code dry_run => false} deletes. Fail-closed: if the directories hold files no Iceberg table writes,
   * or a listing or metadata read fails, nothing is deleted.
   */
  private static Result removeOrphans(SessionContext session, TableIdentifier id, Ast.Execute e) {
    long retention = 7L * 86_400_000;
    boolean dryRun = true;
    for (int k = 0; k < e.arguments().size(); k++) {
      Ast.ProcedureArgument a = e.arguments().get(k);
      String name = a.name() != null ? a.name() : k == 0 ? "retention_threshold" : k == 1 ? "dry_run" : "?";
      if (name.equals("retention_threshold") && a.string()) {
        retention = duration(a);
      } else if (name.equals("dry_run") && a.string() && (a.value().equalsIgnoreCase("true")
          || a.value().equalsIgnoreCase("false"))) {
        dryRun = a.value().equalsIgnoreCase("true");
      } else {
        throw new FloeException(SqlState.UNDEFINED_FUNCTION, "procedure " + e.procedure() + "("
            + signature(e.arguments()) + ") does not exist", null, e.procedure() + " takes retention_threshold (a "
            + "duration such as '7d') and dry_run ('true' or 'false'), both optional.", e.position(), null);
      }
    }
    Maintenance.Orphans found = Maintenance.orphans(session.engine(), id, retention, session.statementHolds());
    if (found.refused().isPresent()) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "cannot remove orphan files of table \""
          + id.name() + "\": " + found.refused().get(), e.position());
    }
    long bytes = found.bytes();
    if (dryRun) {
      StringBuilder b = new StringBuilder("dry run: would delete " + found.files().size() + " orphan file(s) of "
          + "table \"" + id.name() + "\" (" + bytes + " bytes)");
      found.files().stream().limit(20).forEach(p -> b.append("\n  ").append(p));
      if (found.files().size() > 20) {
        b.append("\n  ...");
      }
      session.notice(b.append(found.files().isEmpty() ? "" : "\nRun with dry_run => 'false' to delete them.")
          .toString());
    } else {
      List<String> deleted = Maintenance.deleteOrphans(session.engine(), found.files());
      session.notice("deleted " + deleted.size() + " orphan file(s) of table \"" + id.name() + "\" (" + bytes
          + " bytes)");
    }
    return new CommandResult("ALTER TABLE", 0);
  }

  /**
   * {@code optimize(file_size_threshold => '100MB')}, Trino's: every data file smaller than the threshold
   * (default 100 MB) and every file whose deletes hide {@code floe.compaction.delete-ratio} of its rows is
   * rewritten, per partition, into files of the table's target size, without their deleted rows. It gives
   * way to writers as every compaction does.
   */
  private static Result optimize(SessionContext session, TableIdentifier id, Table table, Ast.Execute e) {
    long threshold = 100L << 20;
    List<Ast.ProcedureArgument> args = e.arguments();
    if (args.size() > 1 || args.size() == 1 && (args.get(0).name() != null
        && !args.get(0).name().equals("file_size_threshold") || !args.get(0).string())) {
      throw new FloeException(SqlState.UNDEFINED_FUNCTION, "procedure " + e.procedure() + "(" + signature(args)
          + ") does not exist", null, e.procedure() + " takes one optional argument, file_size_threshold (a size "
          + "such as '100MB').", e.position(), null);
    }
    if (args.size() == 1) {
      threshold = size(args.get(0));
    }
    if (dev.floe.tail.TailLog.hasTail(table)) {
      // its log compacts the files it seals: it seals what it holds and merges every run now
      dev.floe.tail.TailLog log = session.engine().tails().of(id, table).orElseThrow(() -> FloeException
          .undefinedTable(id.name()));
      log.seal(true);
      int merged = log.compact(true);
      session.notice("optimized table \"" + id.name() + "\": its log sealed every row it held and merged "
          + merged + " file(s)");
      return new CommandResult("ALTER TABLE", 0);
    }
    Compaction.Plan plan = Compaction.plan(session.engine(), id, true, Long.MIN_VALUE, threshold);
    Compaction.Result done = Compaction.compact(session.engine(), plan, id, session.duck(), () -> { });
    session.notice("optimized table \"" + id.name() + "\": " + done.filesRewritten() + " file(s) ("
        + done.bytesRewritten() + " bytes) rewritten into " + done.filesWritten() + " (" + done.bytesWritten()
        + " bytes)" + (done.gaveWay() > 0 ? "; gave way to concurrent writers " + done.gaveWay() + " time(s)" : ""));
    return new CommandResult("ALTER TABLE", 0);
  }

  private static final java.util.regex.Pattern SIZE =
      java.util.regex.Pattern.compile("\\s*(\\d+(?:\\.\\d+)?)\\s*(B|kB|MB|GB|TB|PB)?\\s*", java.util.regex.Pattern.CASE_INSENSITIVE);

  /** A data size as Trino writes them ({@code 100MB}, {@code 1.5GB}, {@code 512kB}), in bytes. */
  private static long size(Ast.ProcedureArgument arg) {
    java.util.regex.Matcher m = SIZE.matcher(arg.value());
    if (!m.matches()) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid data size: \"" + arg.value() + "\"", null,
          "A number and a unit: B, kB, MB, GB, TB or PB ('100MB').", arg.position(), null);
    }
    String unit = m.group(2) == null ? "B" : m.group(2).toUpperCase(java.util.Locale.ROOT);
    int shift = switch (unit) {
      case "KB" -> 10;
      case "MB" -> 20;
      case "GB" -> 30;
      case "TB" -> 40;
      case "PB" -> 50;
      default -> 0;
    };
    double bytes = Double.parseDouble(m.group(1)) * (1L << shift);
    if (bytes > Long.MAX_VALUE / 2) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "data size out of range: \"" + arg.value() + "\"",
          arg.position());
    }
    return (long) bytes;
  }

  private static final java.util.regex.Pattern DURATION =
      java.util.regex.Pattern.compile("\\s*(\\d+(?:\\.\\d+)?)\\s*(ns|us|ms|s|m|h|d)\\s*");

  /** A duration as Trino writes them ({@code 7d}, {@code 1.5h}, {@code 0s}), in milliseconds. */
  private static long duration(Ast.ProcedureArgument arg) {
    java.util.regex.Matcher m = DURATION.matcher(arg.value());
    if (!m.matches()) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid duration: \"" + arg.value() + "\"", null,
          "A number and a unit: ns, us, ms, s, m, h or d ('7d', '30m', '0s').", arg.position(), null);
    }
    double n = Double.parseDouble(m.group(1));
    double millis = switch (m.group(2)) {
      case "ns" -> n / 1e6;
      case "us" -> n / 1e3;
      case "ms" -> n;
      case "s" -> n * 1e3;
      case "m" -> n * 60e3;
      case "h" -> n * 3600e3;
      default -> n * 86400e3;
    };
    if (millis > Long.MAX_VALUE / 2) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "duration out of range: \"" + arg.value() + "\"",
          arg.position());
    }
    return (long) millis;
  }

  /** The procedure's one argument, a bigint, positional or named {@code name}. */
  private static Ast.ProcedureArgument argument(Ast.Execute e, String name) {
    List<Ast.ProcedureArgument> args = e.arguments();
    if (args.size() != 1 || args.get(0).name() != null && !args.get(0).name().equals(name)
        || args.get(0).string()) {
      throw new FloeException(SqlState.UNDEFINED_FUNCTION, "procedure " + e.procedure() + "(" + signature(args)
          + ") does not exist", null, e.procedure() + " takes one argument, " + name + " (bigint).", e.position(),
          null);
    }
    return args.get(0);
  }

  private static String signature(List<Ast.ProcedureArgument> args) {
    StringBuilder b = new StringBuilder();
    for (Ast.ProcedureArgument a : args) {
      if (b.length() > 0) {
        b.append(", ");
      }
      if (a.name() != null) {
        b.append(a.name()).append(" => ");
      }
      b.append(a.string() ? "unknown" : a.value().contains(".") ? "numeric" : "bigint");
    }
    return b.toString();
  }

  /** The snapshot an argument names: by id, or by version (sequence number). */
  private static Snapshot snapshot(Table table, TableIdentifier id, Ast.ProcedureArgument arg, boolean version) {
    long value;
    try {
      value = Long.parseLong(arg.value());
    } catch (NumberFormatException ex) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid " + (version ? "version" : "snapshot id")
          + ": " + arg.value(), null, null, arg.position(), null);
    }
    Optional<Snapshot> found = Optional.empty();
    for (Snapshot s : table.snapshots()) {
      if (version ? s.sequenceNumber() == value : s.snapshotId() == value) {
        found = Optional.of(s);
      }
    }
    return found.orElseThrow(() -> new FloeException(SqlState.INVALID_PARAMETER_VALUE, "table \"" + id.name()
        + "\" has no " + (version ? "version " : "snapshot ") + value, null, "\"" + id.name() + "$snapshots\" lists "
        + "its snapshots and their versions (sequence numbers); expired ones are gone.", arg.position(), null));
  }

  /** The snapshot a {@code rollback_to_snapshot} or {@code rollback_to_version} names. */
  static Snapshot rollbackTarget(Table table, TableIdentifier id, Ast.Execute e) {
    boolean version = e.procedure().equals("rollback_to_version");
    return snapshot(table, id, argument(e, version ? "version" : "snapshot_id"), version);
  }

  /**
   * Whether the table is at {@code target} already (a notice says so); refuses a target the current
   * snapshot does not descend from.
   */
  static boolean atAlready(SessionContext session, TableIdentifier id, Table table, Ast.Execute e, Snapshot target) {
    Snapshot current = table.currentSnapshot();
    if (current != null && current.snapshotId() == target.snapshotId()) {
      session.notice("table \"" + id.name() + "\" is at snapshot " + target.snapshotId() + " (version "
          + target.sequenceNumber() + ") already");
      return true;
    }
    if (current == null || !SnapshotUtil.isAncestorOf(table, current.snapshotId(), target.snapshotId())) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "snapshot " + target.snapshotId() + " (version "
          + target.sequenceNumber() + ") is not in the current history of table \"" + id.name() + "\"", null,
          "Only a version the current one descends from can be rolled back to.", e.position(), null);
    }
    return false;
  }

  private static Result rollback(SessionContext session, TableIdentifier id, Table table, Ast.Execute e,
      Snapshot target) {
    if (atAlready(session, id, table, e, target)) {
      return new CommandResult("ALTER TABLE", 0);
    }
    Transaction txn = table.newTransaction();
    txn.manageSnapshots().rollbackTo(target.snapshotId()).commit();
    try {
      txn.commitTransaction();
    } catch (CommitFailedException ex) {
      throw new FloeException(SqlState.SERIALIZATION_FAILURE, "could not alter table \"" + id.name()
          + "\": it was changed concurrently", ex);
    }
    session.notice("table \"" + id.name() + "\" rolled back to snapshot " + target.snapshotId() + " (version "
        + target.sequenceNumber() + ")");
    return new CommandResult("ALTER TABLE", 0);
  }
}
