package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.FloeCatalog;
import dev.floe.sql.QualifiedName;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotFoundException;

/**
 * Finds tables by SQL name and keeps them loaded. Every lookup re-reads the table's catalog pointer
 * (one indexed SQLite read), so a commit by any process, Spark included, is seen by the next statement;
 * metadata is re-parsed only when the pointer moved.
 */
final class Tables {
  private final FloeCatalog catalog;
  private final dev.floe.catalog.Locations locations;
  private final Map<TableIdentifier, Table> loaded;
  private final dev.floe.commit.Committer committer;
  /** The transaction block these tables are seen from, or null (each statement commits). */
  private final Transaction transaction;
  /** What live readers hold: snapshot expiry keeps what they may read. */
  private final ReaderPins readerPins;
  /** What each table's size bound decided at its last expiry ({@link MaintenancePolicy#keep}). */
  private final Map<TableIdentifier, MaintenancePolicy.Bound> sizeBounds;
  /** Per table, what its history's readers and expirers take in turn ({@link #historyLock}). */
  private final Map<TableIdentifier, Object> historyLocks;

  Tables(FloeCatalog catalog, dev.floe.catalog.Locations locations, dev.floe.commit.Committer committer) {
    this(catalog, locations, new ConcurrentHashMap<>(), committer, null, new ReaderPins(catalog.landings()),
        new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
  }

  private Tables(FloeCatalog catalog, dev.floe.catalog.Locations locations, Map<TableIdentifier, Table> loaded,
      dev.floe.commit.Committer committer, Transaction transaction, ReaderPins readerPins,
      Map<TableIdentifier, MaintenancePolicy.Bound> sizeBounds, Map<TableIdentifier, Object> historyLocks) {
    this.catalog = catalog;
    this.locations = locations;
    this.loaded = loaded;
    this.committer = committer;
    this.transaction = transaction;
    this.readerPins = readerPins;
    this.sizeBounds = sizeBounds;
    this.historyLocks = historyLocks;
  }

  ReaderPins readerPins() {
    return readerPins;
  }

  Map<TableIdentifier, MaintenancePolicy.Bound> sizeBounds() {
    return sizeBounds;
  }

  /**
   * The lock of table {@code id}'s history: held by whatever reads every version's manifest lists and
   * manifests (an expiry, sizing the history first; an orphan scan) and by whatever deletes the files of
   * expired versions, so that one never reads a version another has just expired and deleted (two
   * {@code VACUUM}s, or one beside the background maintainer). Taken before the table's commit lock, never
   * after it; writers do not take it.
   */
  Object historyLock(TableIdentifier id) {
    return historyLocks.computeIfAbsent(id, k -> new Object());
  }

  /**
   * These tables as a transaction block sees them: reads at its snapshot, writes to its private state
   * ({@link Transaction}).
   */
  Tables in(Transaction t) {
    return new Tables(catalog, locations, loaded, committer, t, readerPins, sizeBounds, historyLocks);
  }

  /** The transaction block these tables are seen from, if any. */
  java.util.Optional<Transaction> transaction() {
    return java.util.Optional.ofNullable(transaction);
  }

  /** Whether these tables are seen from a transaction block. */
  boolean inTransaction() {
    return transaction != null;
  }

  FloeCatalog catalog() {
    return catalog;
  }

  /**
   * The identifier a name denotes: {@code t} in {@code defaultSchema}, {@code s.t}, or
   * {@code <catalog>.s.t}. Empty if the name belongs to another catalog.
   */
  Optional<TableIdentifier> identifier(List<String> parts, String defaultSchema) {
    return switch (parts.size()) {
      case 1 -> Optional.of(TableIdentifier.of(Namespace.of(defaultSchema), parts.get(0)));
      case 2 -> Optional.of(TableIdentifier.of(Namespace.of(parts.get(0)), parts.get(1)));
      case 3 -> parts.get(0).equalsIgnoreCase(catalog.name())
          ? Optional.of(TableIdentifier.of(Namespace.of(parts.get(1)), parts.get(2)))
          : Optional.empty();
      default -> Optional.empty();
    };
  }

  /**
   * The location {@code requested} for table {@code id}, checked ({@link dev.floe.catalog.Locations#requested}):
   * inside the warehouse or a storage root, and no other table's.
   */
  String checkedLocation(String requested, TableIdentifier id) {
    return locations.requested(requested, otherLocations(id));
  }

  /**
   * The location a new table gets: the one asked for (checked, {@link #checkedLocation}), or a directory
   * of its own in the warehouse.
   */
  String newLocation(Optional<String> requested, TableIdentifier id) {
    return requested.map(l -> checkedLocation(l, id)).orElseGet(() -> catalog.newTableLocation(id));
  }

  /**
   * Creates a table at {@code location}: if the creation fails (a full disk, a name taken meanwhile), the
   * directory it made goes with it, when it made it (nothing else can be in a directory that did not exist).
   */
  <T> T creating(String location, java.util.function.Supplier<T> create) {
    if (dev.floe.catalog.S3.remote(location)) {
      return create.get(); // object storage has no directories to take back
    }
    java.nio.file.Path dir = dev.floe.catalog.LocalFileIO.toPath(location);
    boolean existed = java.nio.file.Files.exists(dir);
    try {
      return create.get();
    } catch (RuntimeException e) {
      if (!existed) {
        dev.floe.write.Scratch.deleteTree(dir);
      }
      throw e;
    }
  }

  /** Where tables may be located. */
  dev.floe.catalog.Locations locations() {
    return locations;
  }

  /** Every table's location but {@code self}'s. */
  Map<TableIdentifier, String> otherLocations(TableIdentifier self) {
    Map<TableIdentifier, String> out = new java.util.LinkedHashMap<>();
    for (Map.Entry<TableIdentifier, String> e : catalog.tableLocations().entrySet()) {
      if (e.getKey().equals(self) || e.getValue() == null) {
        continue;
      }
      String file = e.getValue();
      String metadata = file.substring(0, Math.max(file.lastIndexOf('/'), 0));
      if (metadata.endsWith("/metadata")) {
        String dir = metadata.substring(0, metadata.length() - "/metadata".length());
        out.put(e.getKey(), dev.floe.catalog.S3.remote(dir) ? dir
            : dev.floe.catalog.LocalFileIO.toPath(dir).toString());
        continue;
      }
      try {
        current(e.getKey()).ifPresent(t -> out.put(e.getKey(), t.location()));
      } catch (RuntimeException unreadable) {
        // a table whose metadata cannot be read has no location to compare with
      }
    }
    return out;
  }

  TableIdentifier require(QualifiedName name, String defaultSchema) {
    return identifier(name.parts(), defaultSchema).orElseThrow(() -> new FloeException(
        SqlState.FEATURE_NOT_SUPPORTED, "cross-database references are not implemented: " + name, null, null,
        name.position(), null));
  }

  /**
   * The live table (for commits), refreshed to the catalog's current pointer; in a transaction block,
   * the block's own state of it.
   */
  Optional<Table> live(TableIdentifier id) {
    return transaction != null ? transaction.live(id) : current(id);
  }

  /** The table at the catalog's current pointer, transaction or not. */
  Optional<Table> current(TableIdentifier id) {
    Table cached = loaded.get(id);
    try {
      if (cached != null) {
        cached.refresh();
        return Optional.of(cached);
      }
      if (catalog.metadataLocation(id).isEmpty()) {
        return Optional.empty();
      }
      Table table = catalog.loadTable(id);
      loaded.put(id, table);
      return Optional.of(table);
    } catch (NoSuchTableException e) {
      loaded.remove(id);
      return Optional.empty();
    } catch (NotFoundException e) {
      throw new FloeException(SqlState.IO_ERROR, "metadata of table " + id + " is missing: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      if (e instanceof FloeException) {
        throw e;
      }
      throw new FloeException(SqlState.DATA_CORRUPTED,
          "cannot load metadata of table " + id + ": " + e.getMessage(), e);
    }
  }

  /**
   * An immutable view of the table as of now: planning and reading through it always see this one
   * metadata version, whatever commits happen meanwhile.
   */
  Optional<Table> snapshotOf(TableIdentifier id) {
    return transaction != null ? transaction.snapshotOf(id) : current(id).map(Tables::frozen);
  }

  static Table frozen(Table table) {
    TableMetadata meta = ((HasTableOperations) table).operations().current();
    return new BaseTable(new StaticTableOperations(meta, table.io()), table.name());
  }

  /** Where every change to these tables is committed ({@link dev.floe.commit.Committer}), and their locks. */
  dev.floe.commit.Committer committer() {
    return committer;
  }

  void forget(TableIdentifier id) {
    loaded.remove(id);
  }
}
