package dev.floe.catalog;

import java.nio.file.Path;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.BaseMetastoreCatalog;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.io.FileIO;

/**
 * The embedded Iceberg catalog: a SQLite database in the very tables Iceberg's {@code JdbcCatalog} uses
 * ({@code iceberg_tables}, {@code iceberg_namespace_properties}, schema version V1), so Spark's
 * JdbcCatalog and PyIceberg's SqlCatalog configured with the same catalog name see the same tables.
 *
 * <p>A table's current metadata is one row; a commit is a compare-and-swap of its
 * {@code metadata_location} in one SQLite transaction (synchronous=FULL, so the swap is durable when it
 * returns). SQLite runs in WAL mode so other processes can read while Floe writes.
 *
 * <p>This class is the catalog's public face: Iceberg's {@code Catalog} and {@code SupportsNamespaces}
 * contract (what must exist, which exception says what, that a read-only catalog refuses every write)
 * and Floe's own entry points. The rows are read and written by package-private classes, as Iceberg's
 * JdbcCatalog keeps its SQL in JdbcUtil and its commits in JdbcTableOperations:
 * <ul>
 *   <li>{@link CatalogDatabase}: the connection, the schema, the catalog id, and the lock;
 *   <li>{@link TablePointers}: {@code iceberg_tables}, the pointer reads and swaps, list, rename, drop;
 *   <li>{@link NamespaceStore}: {@code iceberg_namespace_properties};
 *   <li>{@link SequenceStore}: {@code floe_sequences}, the counters of serial columns;
 *   <li>{@link DigestStore}: {@code floe_file_digests}, read by {@link FileDigests};
 *   <li>{@link TableDirectories}: where a new table's directory goes, what a purge leaves to delete.
 * </ul>
 *
 * <p><b>Concurrency.</b> This class holds no lock and no connection. The one lock is
 * {@link CatalogDatabase}'s monitor, which guards the SQLite connection for one statement or one
 * transaction at a time; nothing but SQLite runs while it is held, so it is always the innermost lock
 * (callers may hold {@code commit.Committer.lock} or a {@link SqliteTableOperations} monitor). A check
 * here followed by a write (create a namespace that does not exist, rename to a free name) takes the
 * lock once per statement, not around the pair, as it always has; the rows' primary keys refuse the
 * loser of such a race. A commit passes {@link CommitGate} before it takes the lock.
 */
public final class SqliteCatalog extends org.apache.iceberg.view.BaseMetastoreViewCatalog implements SupportsNamespaces {
  private final String name;
  private final String warehouse;
  private final FileIO io;
  private final boolean readOnly;
  private final CatalogDatabase db;
  private final TablePointers pointers;
  private final ViewPointers views;
  private final NamespaceStore namespaces;
  private final SequenceStore sequences;
  private final DigestStore digestStore;
  private final FileDigests fileDigests;
  private final Landings landings = new Landings();

  private SqliteCatalog(String name, String warehouse, FileIO io, CatalogDatabase db) {
    this.name = name;
    this.warehouse = warehouse;
    this.io = io;
    this.readOnly = db.readOnly();
    this.db = db;
    this.pointers = new TablePointers(db, name);
    this.views = new ViewPointers(db, name);
    this.namespaces = new NamespaceStore(db, name);
    this.sequences = new SequenceStore(db, name);
    this.digestStore = new DigestStore(db);
    this.fileDigests = new FileDigests(digestStore);
  }

  /**
   * Opens (creating if needed) the catalog database {@code catalog.db} in a warehouse directory.
   *
   * @param name the catalog name; part of every row's key, so every engine must use the same one
   * @param warehouse the warehouse directory, under which new tables are placed
   * @param readOnly when true nothing is ever written to the catalog database
   */
  public static SqliteCatalog open(String name, Path warehouse, FileIO io, boolean readOnly) {
    Path db = warehouse.resolve("catalog.db");
    try {
      return new SqliteCatalog(name, warehouse.toAbsolutePath().normalize().toString(), io,
          CatalogDatabase.open(db, readOnly));
    } catch (SQLException e) {
      throw new CatalogException("Cannot open catalog database " + db + ": " + e.getMessage(), e);
    }
  }

  @Override
  public String name() {
    return name;
  }

  public String warehouseLocation() {
    return warehouse;
  }

  public FileIO io() {
    return io;
  }

  public boolean readOnly() {
    return readOnly;
  }

  @Override
  protected TableOperations newTableOps(TableIdentifier identifier) {
    return new SqliteTableOperations(this, identifier, io);
  }

  /** New operations of one table, not yet read (for commits of metadata decided elsewhere). */
  public SqliteTableOperations operations(TableIdentifier identifier) {
    return new SqliteTableOperations(this, identifier, io);
  }

  /** Where a new table named {@code identifier} goes (a directory nothing else uses). */
  public String newTableLocation(TableIdentifier identifier) {
    return defaultWarehouseLocation(identifier);
  }

  @Override
  protected String defaultWarehouseLocation(TableIdentifier identifier) {
    return TableDirectories.newLocation(warehouse, identifier);
  }

  @Override
  protected boolean isValidIdentifier(TableIdentifier identifier) {
    return identifier.namespace().levels().length >= 1;
  }

  /** The warehouse identity this catalog database carries ({@link CatalogDatabase#catalogId}). */
  Optional<String> catalogId() {
    return db.catalogId();
  }

  void setCatalogId(String id) {
    db.setCatalogId(id);
  }

  // ---------------------------------------------------------------- table pointers

  /** The metadata file a table pointed to before its current one, as the catalog remembers it. */
  public Optional<String> previousMetadataLocation(TableIdentifier id) {
    return pointers.previousMetadataLocation(id);
  }

  /**
   * Points a table back to an older metadata file of its own (a repair, when its current one is damaged):
   * the same compare-and-swap as a commit.
   *
   * @return false if the table moved from {@code expected} meanwhile
   */
  public boolean repoint(TableIdentifier id, String expected, String older) {
    // an older version current again: the order of landings no longer tells what readers may hold
    landings.forget(id);
    boolean swapped = swap(id, expected, older);
    landings.forget(id);
    return swapped;
  }

  /** The current metadata file of a table, read from the catalog database (never cached). */
  public Optional<String> metadataLocation(TableIdentifier id) {
    return pointers.metadataLocation(id);
  }

  /**
   * Atomically moves a table's pointer from {@code expected} to {@code newLocation}; with
   * {@code expected == null} creates the table's row. Durable when it returns true.
   *
   * @return false if the table moved since {@code expected} was read (another committer won)
   * @throws AlreadyExistsException when creating a table that already exists
   * @throws CommitStateUnknownException when SQLite's COMMIT failed and may have taken effect; any other
   *     error means the pointer did not move ({@link PointerSwap})
   */
  boolean swap(TableIdentifier id, String expected, String newLocation) {
    return swap(id, expected, newLocation, List.of());
  }

  /**
   * {@link #swap(TableIdentifier, String, String)}, recording in the same SQLite transaction the digests
   * of the files the new metadata names ({@link FileDigests}).
   */
  boolean swap(TableIdentifier id, String expected, String newLocation, List<FileDigests.Digest> digests) {
    checkWritable();
    return pointers.swap(id, expected, newLocation, digests);
  }

  /**
   * Moves the pointers of several tables at once, in one SQLite transaction: every table's pointer moves
   * from its {@link SqliteTableOperations.Prepared#expected} file to its new one, or none does. Durable
   * when it returns true.
   *
   * @return false if any table moved since its expected file was read (another committer won)
   * @throws CommitStateUnknownException when SQLite's COMMIT failed and may have taken effect; any other
   *     error means no pointer moved ({@link PointerSwap})
   */
  public boolean swapAll(List<SqliteTableOperations.Prepared> swaps, List<FileDigests.Digest> digests) {
    checkWritable();
    return pointers.swapAll(swaps, digests);
  }

  /** The checksums of the files Floe wrote, recorded with the commits. */
  public FileDigests fileDigests() {
    return fileDigests;
  }

  /**
   * Every table of this catalog with its current metadata file, read in one query: a cheap fingerprint of
   * the catalog's state (any commit or DDL, by any process, changes it).
   */
  public Map<TableIdentifier, String> tableLocations() {
    return pointers.tableLocations();
  }

  @Override
  public List<TableIdentifier> listTables(Namespace namespace) {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", namespace);
    }
    return pointers.tables(namespace);
  }

  @Override
  public boolean dropTable(TableIdentifier id, boolean purge) {
    checkWritable();
    Optional<String> location = metadataLocation(id);
    if (location.isEmpty()) {
      return false;
    }
    TableMetadata last = purge ? TableMetadataParser.read(io, location.get()) : null;
    if (!pointers.delete(id)) {
      return false;
    }
    landings.forget(id);
    if (last != null) {
      CatalogUtil.dropTableData(io, last);
      Path directory = Path.of(TableDirectories.stripScheme(last.location()));
      TableDirectories.deleteLeftovers(directory);
      digestStore.forgetUnder(directory.toAbsolutePath().normalize().toString());
    }
    return true;
  }

  @Override
  public void renameTable(TableIdentifier from, TableIdentifier to) {
    checkWritable();
    if (!namespaceExists(to.namespace())) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", to.namespace());
    }
    if (metadataLocation(to).isPresent()) {
      throw new AlreadyExistsException("Table already exists: %s", to);
    }
    pointers.rename(from, to);
    landings.forget(from);
    landings.forget(to);
  }

  /** The metadata file of the view {@code id}; empty if there is no such view. */
  public Optional<String> viewLocation(TableIdentifier id) {
    return views.location(id);
  }

  /** Every view's metadata file, by view. */
  public Map<TableIdentifier, String> viewLocations() {
    return views.locations();
  }

  /** The views of a namespace, by name. */
  @Override
  public List<TableIdentifier> listViews(Namespace namespace) {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", namespace);
    }
    return views.views(namespace);
  }

  /**
   * Points view {@code id} at {@code newLocation}: creates it when {@code expected} is null (an
   * {@link AlreadyExistsException} if a table or view has the name), else replaces the version it had.
   *
   * @return false if the view changed since {@code expected} was read
   */
  public boolean commitView(TableIdentifier id, String expected, String newLocation) {
    checkWritable();
    if (expected == null && !namespaceExists(id.namespace())) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", id.namespace());
    }
    return views.swap(id, expected, newLocation);
  }

  /** Operations of one view (Iceberg's view API: load, create, replace), committed by {@link #commitView}. */
  @Override
  protected org.apache.iceberg.view.ViewOperations newViewOps(TableIdentifier identifier) {
    return new SqliteViewOperations(this, identifier, io);
  }

  @Override
  public void renameView(TableIdentifier from, TableIdentifier to) {
    checkWritable();
    if (!namespaceExists(to.namespace())) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", to.namespace());
    }
    if (viewLocation(to).isPresent()) {
      throw new AlreadyExistsException("Cannot rename %s to %s. View already exists", from, to);
    }
    if (metadataLocation(to).isPresent()) {
      throw new AlreadyExistsException("Cannot rename %s to %s. Table already exists", from, to);
    }
    views.rename(from, to);
  }

  /** Drops a view's catalog row (its metadata files stay, as a dropped table's do without PURGE). */
  @Override
  public boolean dropView(TableIdentifier id) {
    checkWritable();
    return views.delete(id);
  }

  /** When this process's commits landed ({@link Landings}). */
  public Landings landings() {
    return landings;
  }

  // ---------------------------------------------------------------- sequences (serial columns)

  /** Creates (or restarts at 1) a sequence; durable when it returns. */
  public void createSequence(String sequence) {
    createSequence(sequence, 1, 1);
  }

  /** Creates (or restarts at {@code start}) a sequence advancing by {@code increment}; durable when it returns. */
  public void createSequence(String sequence, long start, long increment) {
    checkWritable();
    sequences.create(sequence, start, increment);
  }

  /** Makes the sequence hand out {@code value} next, or the value after it ({@code called}): setval. */
  public void restartSequence(String sequence, long value, boolean called) {
    checkWritable();
    sequences.restart(sequence, value, called);
  }

  /** Every sequence of this catalog ({@code schema.name}). */
  public List<String> sequenceNames() {
    return sequences.names();
  }

  /** Whether a sequence exists. */
  public boolean sequenceExists(String sequence) {
    return sequences.exists(sequence);
  }

  /** Drops a sequence; false if there was none. */
  public boolean dropSequence(String sequence) {
    checkWritable();
    return sequences.drop(sequence);
  }

  /**
   * Reserves the next {@code count} values of a sequence, durably (a crash loses at most the unused rest
   * of a block, as PostgreSQL's sequence cache does); returns the first and the sequence's increment.
   */
  public long[] reserve(String sequence, int count) {
    checkWritable();
    return sequences.reserve(sequence, count);
  }

  // ---------------------------------------------------------------- namespaces

  @Override
  public void createNamespace(Namespace namespace, Map<String, String> metadata) {
    checkWritable();
    if (namespace.isEmpty()) {
      throw new IllegalArgumentException("Cannot create the empty namespace");
    }
    if (namespaceExists(namespace)) {
      throw new AlreadyExistsException("Namespace already exists: %s", namespace);
    }
    Map<String, String> props = new LinkedHashMap<>();
    props.put("exists", "true");
    props.putAll(metadata);
    namespaces.insertProperties(namespace, props);
  }

  @Override
  public List<Namespace> listNamespaces(Namespace parent) {
    return namespaces.children(parent);
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(Namespace namespace) {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", namespace);
    }
    return namespaces.properties(namespace);
  }

  @Override
  public boolean dropNamespace(Namespace namespace) {
    checkWritable();
    if (!namespaceExists(namespace)) {
      return false;
    }
    if (!listTables(namespace).isEmpty() || !views.views(namespace).isEmpty()) {
      throw new NamespaceNotEmptyException("Namespace %s is not empty", namespace);
    }
    namespaces.delete(namespace);
    return true;
  }

  @Override
  public boolean setProperties(Namespace namespace, Map<String, String> properties) {
    checkWritable();
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", namespace);
    }
    removeProperties(namespace, properties.keySet());
    namespaces.insertProperties(namespace, properties);
    return true;
  }

  @Override
  public boolean removeProperties(Namespace namespace, Set<String> properties) {
    checkWritable();
    namespaces.removeProperties(namespace, properties);
    return true;
  }

  @Override
  public boolean namespaceExists(Namespace namespace) {
    return namespaces.exists(namespace);
  }

  private void checkWritable() {
    if (readOnly) {
      throw new ReadOnlyException("the warehouse is open read-only");
    }
  }

  @Override
  public void close() {
    db.close();
  }

  /** A catalog database failure (I/O, corruption, lock timeout). */
  public static final class CatalogException extends RuntimeException {
    CatalogException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** A write was attempted through a read-only catalog. */
  public static final class ReadOnlyException extends RuntimeException {
    ReadOnlyException(String message) {
      super(message);
    }
  }
}
