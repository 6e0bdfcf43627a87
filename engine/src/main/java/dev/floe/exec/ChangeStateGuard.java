package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.FloeProperties;
import dev.floe.SqlState;
import dev.floe.sql.Ast;
import dev.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Keeps statements off the state of change streams, schema {@value ChangeState#NAMESPACE}: anyone may read a
 * state table, only its stream's batches change it. A state row deleted, inserted or altered by hand would
 * make a replay apply again, or a newer change lose, and nothing would say so (docs/cdc.md). As PostgreSQL
 * keeps its system catalogs, a statement that would change a state table, or make or drop anything in that
 * schema, is refused (42501; the schema's name is reserved, 42939). Compaction and snapshot expiry still
 * run on state tables: they keep every row. Dropping a stream's table drops its state too ({@link Ddl}); a
 * state table whose table is gone may be dropped by hand.
 *
 * <p>A stream's table refuses what would separate it from its state: changing the property that names its
 * state, and another engine's rollback of the table alone (the state would still hold the changes the
 * rollback undid, so applying them again would change nothing). Floe's own rollback takes both back
 * together ({@link ChangeRollback}).
 */
final class ChangeStateGuard {
  /** Procedures a state table takes: they keep its rows. */
  private static final List<String> MAINTENANCE = List.of("optimize", "expire_snapshots", "remove_orphan_files");

  private ChangeStateGuard() {}

  /** Whether {@code id} names a table in the schema of change streams' state. */
  static boolean isState(TableIdentifier id) {
    return id.namespace().levels().length == 1 && ChangeState.NAMESPACE.equals(id.namespace().level(0));
  }

  /**
   * Refuses {@code statement} when it would change a state table or make or drop something in the state's
   * schema; names it resolves against {@code currentSchema}.
   */
  static void check(Ast.Statement statement, SessionContext session, Tables tables) {
    String schema = session.currentSchema();
    statement.accept(new Ast.Visitor<Void>() {
      @Override
      public Void otherwise(Ast.Statement s) {
        return null;
      }

      @Override
      public Void insert(Ast.Insert s) {
        rows(s.table());
        return null;
      }

      @Override
      public Void delete(Ast.Delete s) {
        rows(s.table());
        return null;
      }

      @Override
      public Void update(Ast.Update s) {
        rows(s.table());
        return null;
      }

      @Override
      public Void merge(Ast.Merge s) {
        rows(s.table());
        return null;
      }

      @Override
      public Void truncate(Ast.Truncate s) {
        s.tables().forEach(this::rows);
        return null;
      }

      @Override
      public Void createTable(Ast.CreateTable s) {
        create(s.name());
        return null;
      }

      @Override
      public Void createView(Ast.CreateView s) {
        create(s.name());
        return null;
      }

      @Override
      public Void createSequence(Ast.CreateSequence s) {
        create(s.name());
        return null;
      }

      @Override
      public Void alterSequence(Ast.AlterSequence s) {
        create(s.name());
        return null;
      }

      @Override
      public Void dropSequence(Ast.DropSequence s) {
        s.names().forEach(this::create);
        return null;
      }

      @Override
      public Void dropView(Ast.DropView s) {
        s.names().forEach(this::create);
        return null;
      }

      @Override
      public Void createIndex(Ast.CreateIndex s) {
        rows(s.table());
        return null;
      }

      @Override
      public Void createSchema(Ast.CreateSchema s) {
        checkSchemaName(s.name().parts().get(s.name().parts().size() - 1), s.name().position());
        return null;
      }

      @Override
      public Void dropSchema(Ast.DropSchema s) {
        for (QualifiedName n : s.names()) {
          if (ChangeState.NAMESPACE.equals(n.parts().get(n.parts().size() - 1))) {
            throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: schema \""
                + ChangeState.NAMESPACE + "\" holds the state of change streams", null,
                "Dropping a stream's table drops its state.", n.position(), null);
          }
        }
        return null;
      }

      @Override
      public Void dropTable(Ast.DropTable s) {
        for (QualifiedName n : s.names()) {
          TableIdentifier id = tables.require(n, schema);
          if (isState(id)) {
            Optional<TableIdentifier> target = targetOf(tables, id);
            if (target.isPresent()) {
              throw denied(id, target, n.position());
            }
          }
        }
        return null;
      }

      @Override
      public Void alterTable(Ast.AlterTable s) {
        TableIdentifier id = tables.require(s.name(), schema);
        if (isState(id)) {
          boolean maintenance = s.actions().stream()
              .allMatch(a -> a instanceof Ast.Execute e && MAINTENANCE.contains(e.procedure()));
          if (!maintenance) {
            throw denied(id, targetOf(tables, id), s.name().position());
          }
          return null;
        }
        Optional<Table> table;
        try {
          table = tables.current(id);
        } catch (RuntimeException unreadable) {
          return null; // the statement reports it
        }
        if (table.isEmpty() || !table.get().properties().containsKey(FloeProperties.CDC_STATE)) {
          return null;
        }
        for (Ast.AlterAction a : s.actions()) {
          if (a instanceof Ast.SetProperties p && p.properties().containsKey(FloeProperties.CDC_STATE)
              || a instanceof Ast.UnsetProperties u && u.keys().contains(FloeProperties.CDC_STATE)) {
            throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: property \""
                + FloeProperties.CDC_STATE + "\" of table " + id + " names its change stream's state", null,
                null, s.name().position(), null);
          }
        }
        return null;
      }

      /** A statement that changes {@code name}'s rows or definition. */
      private void rows(QualifiedName name) {
        TableIdentifier id = tables.require(name, schema);
        if (isState(id)) {
          throw denied(id, targetOf(tables, id), name.position());
        }
      }

      /** A statement that makes, changes or drops an object named {@code name}. */
      private void create(QualifiedName name) {
        checkCreate(tables.require(name, schema), name.position());
      }
    });
  }

  /** Refuses a new schema named as the state's. */
  private static void checkSchemaName(String name, int position) {
    if (ChangeState.NAMESPACE.equals(name)) {
      throw new FloeException(SqlState.RESERVED_NAME, "unacceptable schema name \"" + name + "\"",
          "The schema \"" + name + "\" is reserved for the state of change streams.", null, position, null);
    }
  }

  /** Refuses an object made, changed or dropped in the state's schema (other than by a stream). */
  private static void checkCreate(TableIdentifier id, int position) {
    if (isState(id)) {
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied for schema "
          + ChangeState.NAMESPACE, null, "The schema holds the state of change streams, written by Floe "
          + "alone.", position, null);
    }
  }

  /**
   * Refuses another engine's commit (the REST catalog) that would separate a stream's table from its state:
   * its current snapshot moved back to one it already had (a rollback), or the property naming its state
   * changed. The state tables themselves take commits: another Floe applying a stream through this catalog
   * writes them.
   */
  static void checkCommit(TableIdentifier id, org.apache.iceberg.TableMetadata base,
      org.apache.iceberg.TableMetadata updated) {
    String state = base.properties().get(FloeProperties.CDC_STATE);
    if (state == null || isState(id)) {
      return;
    }
    if (!state.equals(updated.properties().get(FloeProperties.CDC_STATE))) {
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: property \""
          + FloeProperties.CDC_STATE + "\" of table " + id + " names its change stream's state");
    }
    org.apache.iceberg.Snapshot before = base.currentSnapshot();
    org.apache.iceberg.Snapshot after = updated.currentSnapshot();
    if (before != null && (after == null || after.snapshotId() != before.snapshotId()
        && !descends(updated, after, before.snapshotId()))) {
      // refused as the keyed tail's rows are (403 to a REST client, which it does not retry)
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "cannot roll back table " + id
          + ": a change stream writes it", null, "Its stream's state, " + state + ", holds the changes a "
          + "rollback would undo, so applying them again would change nothing. Floe's ALTER TABLE ... EXECUTE "
          + "rollback_to_snapshot takes both back together.", 0, null);
    }
  }

  /** Whether {@code s} has snapshot {@code ancestor} among its ancestors in {@code m}. */
  private static boolean descends(org.apache.iceberg.TableMetadata m, org.apache.iceberg.Snapshot s, long ancestor) {
    for (Long parent = s.parentId(); parent != null; ) {
      if (parent == ancestor) {
        return true;
      }
      org.apache.iceberg.Snapshot p = m.snapshot(parent);
      parent = p == null ? null : p.parentId();
    }
    return false;
  }

  /** Refuses a change to state table {@code id} of {@code target}'s stream (empty: its table is gone). */
  static FloeException denied(TableIdentifier id, Optional<TableIdentifier> target, int position) {
    return new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: table " + id
        + " is the state of a change stream", null, target.map(t -> "It changes with each batch of the stream of "
            + "table " + t + " (docs/cdc.md); dropping " + t + " drops it too.").orElse("Its table is gone: "
            + "DROP TABLE drops it."), position, null);
  }

  /** The table whose stream's state is {@code state}, if it still exists (the state is named by its uuid). */
  static Optional<TableIdentifier> targetOf(Tables tables, TableIdentifier state) {
    List<TableIdentifier> candidates = new ArrayList<>(tables.catalog().tableLocations().keySet());
    for (TableIdentifier id : candidates) {
      if (isState(id)) {
        continue;
      }
      try {
        Optional<Table> t = tables.current(id);
        if (t.isPresent() && t.get().uuid().toString().equals(state.name())) {
          return Optional.of(id);
        }
      } catch (RuntimeException unreadable) {
        // a table that cannot be read keeps no state that we could tell
      }
    }
    return Optional.empty();
  }
}
