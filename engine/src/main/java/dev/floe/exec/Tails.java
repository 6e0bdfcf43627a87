package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.tail.TailLog;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.duckdb.DuckDBConnection;

/**
 * The open tails of the warehouse's tables, by table UUID (a rename keeps the log): opened the first
 * time a statement or the API touches a table with a tail, replaying what its log holds. Logs live in
 * {@code .floe/tail/<table uuid>/} in the warehouse.
 */
final class Tails implements AutoCloseable {
  private final Engine engine;
  private final Map<String, TailLog> open = new ConcurrentHashMap<>();
  private final Map<String, TableIdentifier> names = new ConcurrentHashMap<>();

  Tails(Engine engine) {
    this.engine = engine;
  }

  /** The tail of {@code table} (named {@code id}), opened if need be; empty if it has none. */
  Optional<TailLog> of(TableIdentifier id, Table table) {
    if (!TailLog.hasTail(table)) {
      return Optional.empty();
    }
    String uuid = table.uuid().toString();
    names.put(uuid, id);
    TailLog log = open.get(uuid);
    if (log != null && log.isOpen()) {
      return Optional.of(log);
    }
    synchronized (this) {
      open.computeIfPresent(uuid, (u, l) -> l.isOpen() ? l : null); // a log that failed is opened again
      // a read-only process follows the log the writing process appends to
      return Optional.of(open.computeIfAbsent(uuid, u -> engine.readOnly()
          ? TailLog.openReadOnly(host(u), directory(u)) : TailLog.open(host(u), directory(u))));
    }
  }

  /** Seals every unsealed row of the table, if it has a tail (before a statement that rewrites rows). */
  void flush(TableIdentifier id, Table table) {
    of(id, table).ifPresent(log -> log.seal(true));
  }

  /**
   * Retires the table's log (see {@link TailLog#retire}): the table keeps its rows and becomes a plain
   * table, marked with the offset the log ended at; the log's files go.
   */
  long retire(TableIdentifier id, Table table) {
    TailLog log = of(id, table).orElseThrow(() -> new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE,
        "table \"" + id.name() + "\" has no tail"));
    long end = log.retire();
    synchronized (engine.tables().commitLock(id)) {
      Table live = engine.tables().current(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
      live.updateProperties().set(TailLog.TAIL_PROPERTY, "false").set(TailLog.RETIRED_PROPERTY, Long.toString(end))
          .commit();
    }
    dropped(table.uuid().toString());
    return end;
  }

  /** The table was renamed: its log stays, under its new name. */
  void renamed(Table table, TableIdentifier to) {
    names.computeIfPresent(table.uuid().toString(), (k, v) -> to);
  }

  /** Closes the table's log, if open: the next use opens it again (on the table's new schema). */
  void reopen(String uuid) {
    TailLog log = open.remove(uuid);
    if (log != null) {
      log.close();
    }
  }

  /** The table was dropped: its log goes with it. */
  void dropped(String uuid) {
    TailLog log = open.remove(uuid);
    names.remove(uuid);
    if (log != null) {
      log.close();
    }
    dev.floe.write.Scratch.deleteTree(directory(uuid));
  }

  private Path directory(String uuid) {
    return engine.warehouse().resolve(".floe").resolve("tail").resolve(uuid);
  }

  private TailLog.Host host(String uuid) {
    return new TailLog.Host() {
      @Override
      public Table table() {
        TableIdentifier id = names.get(uuid);
        Table t = id == null ? null : engine.tables().current(id).orElse(null);
        if (t == null || !t.uuid().toString().equals(uuid)) {
          throw new FloeException(SqlState.UNDEFINED_TABLE, "the table of tail " + uuid + " no longer exists");
        }
        return t;
      }

      @Override
      public Object commitLock() {
        return engine.tables().commitLock(names.get(uuid));
      }

      @Override
      public Path scratch() {
        return engine.scratch();
      }

      @Override
      public DuckDBConnection connect() {
        return engine.connect();
      }

      @Override
      public int compact(DuckDBConnection duck, boolean all) {
        return Compaction.compact(engine, names.get(uuid), duck, all).filesRewritten();
      }
    };
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Tails.class);

  /**
   * Runs every open log's tiers: seal (by its triggers, or everything with {@code flush}), compact, evict. A
   * log that fails is reported and the others still run.
   */
  void advanceAll(boolean flush) {
    for (TailLog log : open.values()) {
      try {
        log.seal(flush);
        log.compact(flush);
        log.evict();
      } catch (RuntimeException e) {
        if (log.isOpen()) {
          LOG.warn("advancing a tail failed: {}", e.getMessage(), e);
        }
      }
    }
  }

  @Override
  public void close() {
    for (TailLog log : open.values()) {
      log.close();
    }
    open.clear();
  }
}
