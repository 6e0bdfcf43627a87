package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.Ast.AddColumn;
import dev.floe.sql.Ast.AlterAction;
import dev.floe.sql.Ast.DropColumn;
import dev.floe.sql.Ast.RenameColumn;
import dev.floe.sql.Ast.RenameTable;
import dev.floe.sql.Ast.SetProperties;
import dev.floe.sql.Ast.UnsetProperties;
import dev.floe.tail.TailLog;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/** What an ALTER TABLE may not do to a table with a tail or a published log, checked before it runs. */
final class AlterChecks {
  private AlterChecks() {}

  static boolean renameOnly(Ast.AlterTable s) {
    return s.actions().stream().allMatch(a -> a instanceof RenameTable);
  }

  /** Refuses what the table of a published log, or a tail's offset column, cannot take. */
  static void checkAlter(Ast.AlterTable s, TableIdentifier id, Table table) {
    if (TailLog.hasTail(table) && s.actions().get(0) instanceof Ast.Execute e) {
      TableProcedures.checkTail(id, e);
    }
    if (dev.floe.tail.Published.location(table.properties()).isPresent()) {
      for (AlterAction action : s.actions()) {
        if (!(action instanceof RenameTable || action instanceof SetProperties || action instanceof UnsetProperties
            || action instanceof Ast.Execute x && x.procedure().equals("expire_snapshots"))) {
          // the published table on object storage has the schema the log was created with
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cannot change the columns or layout of table \""
              + id.name() + "\": its log publishes to " + dev.floe.tail.Published.location(table.properties()).get(),
              null, null, 0, null);
        }
      }
    }
    if (TailLog.hasTail(table) && !renameOnly(s)) {
      for (AlterAction action : s.actions()) {
        checkTailColumn(action, id);
      }
    }
  }

  /** The offset column of a table with a tail belongs to its log. */
  private static void checkTailColumn(AlterAction action, TableIdentifier id) {
    String column = null;
    int position = 0;
    if (action instanceof DropColumn d) {
      column = d.name();
      position = d.position();
    } else if (action instanceof RenameColumn r) {
      column = r.from();
      position = r.position();
    } else if (action instanceof Ast.AlterColumnType t) {
      column = t.name();
      position = t.position();
    } else if (action instanceof AddColumn a && !a.column().name().equalsIgnoreCase(TailLog.OFFSET_COLUMN)) {
      return;
    } else if (action instanceof AddColumn a) {
      column = a.column().name();
      position = a.column().position();
    }
    if (column != null && column.equalsIgnoreCase(TailLog.OFFSET_COLUMN)) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "column \"" + TailLog.OFFSET_COLUMN + "\" of table \""
          + id.name() + "\" holds its tail's offsets and cannot be changed", null, null, position, null);
    }
  }
}
