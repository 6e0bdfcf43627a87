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
 * Floe's Iceberg catalog. Its tables, views and namespaces are kept by a {@link CatalogStore}: by default the
 * warehouse's SQLite database, in the very tables Iceberg's {@code JdbcCatalog} uses ({@code iceberg_tables},
 * {@code iceberg_namespace_properties}, schema version V1), so Spark's JdbcCatalog and PyIceberg's SqlCatalog
 * configured with the same catalog name see the same tables ({@link SqliteStore}); or a remote Iceberg REST
 * catalog ({@link RestStore}). What is Floe's alone (sequences, file digests, the warehouse identity) is always in
 * the local database.
 *
 * <p>In SQLite a table's current metadata is one row; a commit is a compare-and-swap of its
 * {@code metadata_location} in one SQLite transaction (synchronous=FULL, so the swap is durable when it
 * returns). SQLite runs in WAL mode so other processes can read while Floe writes. Over REST a commit sends the
 * change with the requirements that make it a compare-and-swap ({@link RestStore}).
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
 * (callers may hold {@code commit.Committer.lock} or a {@link FloeTableOperations} monitor). A check
 * here followed by a write (create a namespace that does not exist, rename to a free name) takes the
 * lock once per statement, not around the pair, as it always has; the rows' primary keys refuse the
 * loser of such a race. A commit passes {@link CommitGate} before it takes the lock.
 */
public final class FloeCatalog extends org.apache.iceberg.view.BaseMetastoreViewCatalog implements SupportsNamespaces {
  private final String name;
  private final String warehouse;
  private final FileIO io;
  private final boolean readOnly;
  private final CatalogDatabase db;
  private final CatalogStore store;
  private final SequenceStore sequences;
  private final DigestStore digestStore;
  private final FileDigests fileDigests;
  private final Landings landings = new Landings();

  private FloeCatalog(String name, String warehouse, FileIO io, CatalogDatabase db, CatalogStore store) {
    this.name = name;
    this.warehouse = warehouse;
    this.io = io;
    this.readOnly = db.readOnly();
    this.db = db;
    this.store = store;
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
  public static FloeCatalog open(String name, Path warehouse, FileIO io, boolean readOnly) {
    return open(name, warehouse, io, readOnly, null);
  }

  /**
   * Opens the catalog database {@code catalog.db} in a warehouse directory, for what Floe keeps to itself,
   * with the tables, views and namespaces in the remote REST catalog {@code remote} (in the catalog database
   * when null).
   */
  public static FloeCatalog open(String name, Path warehouse, FileIO io, boolean readOnly,
      dev.floe.RemoteCatalog remote) {
    return open(name, warehouse, io, readOnly, remote, null);
  }

  /**
   * {@link #open(String, Path, FileIO, boolean, dev.floe.RemoteCatalog)} placing new tables under
   * {@code tables} (an object store location, {@code s3://bucket/prefix}) instead of the warehouse directory
   * when it is not null.
   */
  public static FloeCatalog open(String name, Path warehouse, FileIO io, boolean readOnly,
      dev.floe.RemoteCatalog remote, String tables) {
    Path db = warehouse.resolve("catalog.db");
    String root = tables != null ? tables : warehouse.toAbsolutePath().normalize().toString();
    CatalogDatabase database;
    try {
      database = CatalogDatabase.open(db, readOnly);
    } catch (SQLException e) {
      throw new CatalogException("Cannot open catalog database " + db + ": " + e.getMessage(), e);
    }
    try {
      checkCatalogKind(database, new SqliteStore(database, name, root), remote, warehouse);
      CatalogStore store = remote == null ? new SqliteStore(database, name, root) : RestStore.connect(remote);
      if (remote != null && !readOnly) {
        database.setMeta(REMOTE_CATALOG, remote.uri());
      }
      return new FloeCatalog(name, root, io, database, store);
    } catch (RuntimeException e) {
      database.close();
      throw e;
    }
  }

  /** The {@code floe_meta} key of the REST catalog that holds a warehouse's tables, once it was opened on one. */
  private static final String REMOTE_CATALOG = "remote-catalog";

  /**
   * A warehouse keeps its tables in one place: opened on a REST catalog once, it is not opened on its own
   * catalog.db (whose empty table list would hide them, and whose CREATE TABLE would split them), and one whose
   * catalog.db holds tables is not opened on a REST catalog.
   */
  private static void checkCatalogKind(CatalogDatabase database, SqliteStore local, dev.floe.RemoteCatalog remote,
      Path warehouse) {
    Optional<String> recorded = database.meta(REMOTE_CATALOG);
    if (remote == null && recorded.isPresent()) {
      throw new dev.floe.FloeException(dev.floe.SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "warehouse " + warehouse
          + " keeps its tables in the REST catalog at " + recorded.get(), null, "Open it on that catalog: "
          + "floe serve --catalog rest --catalog-uri " + recorded.get() + " (with its credentials).", 0, null);
    }
    if (remote != null && recorded.isEmpty() && !local.tableLocations().isEmpty()) {
      throw new dev.floe.FloeException(dev.floe.SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "warehouse " + warehouse
          + " keeps its tables in its own catalog.db: a REST catalog would hide them", null, "Open a new "
          + "directory on the REST catalog, or register this warehouse's tables in it first.", 0, null);
    }
  }

  /** Whether Floe writes the tables' metadata files (else the remote REST catalog holding them does). */
  public boolean writesMetadata() {
    return store.writesMetadata();
  }

  /** The metadata the catalog answered a load of {@code id} with, when it named {@code location}. */
  Optional<TableMetadata> loaded(TableIdentifier id, String location) {
    return store.loaded(id, location);
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
    return new FloeTableOperations(this, identifier, io);
  }

  /** New operations of one table, not yet read (for commits of metadata decided elsewhere). */
  public FloeTableOperations operations(TableIdentifier identifier) {
    return new FloeTableOperations(this, identifier, io);
  }

  /** Where a new table named {@code identifier} goes (a directory nothing else uses). */
  public String newTableLocation(TableIdentifier identifier) {
    return defaultWarehouseLocation(identifier);
  }

  @Override
  protected String defaultWarehouseLocation(TableIdentifier identifier) {
    return store.newTableLocation(identifier);
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
    return store.previousMetadataLocation(id);
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
    return store.metadataLocation(id);
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
    checkWritable();
    if (!(store instanceof SqliteStore sqlite)) {
      throw new dev.floe.FloeException(dev.floe.SqlState.FEATURE_NOT_SUPPORTED, "a REST catalog cannot point "
          + id + " at an older metadata file: it takes changes, not files", null,
          "Roll the table back with ALTER TABLE ... EXECUTE rollback_to_snapshot(id) instead.", 0, null);
    }
    return sqlite.swap(id, expected, newLocation);
  }

  /**
   * Moves the pointers of several tables at once, in one SQLite transaction: every table's pointer moves
   * from its {@link FloeTableOperations.Prepared#expected} file to its new one, or none does. Durable
   * when it returns true.
   *
   * @return false if any table moved since its expected file was read (another committer won)
   * @throws CommitStateUnknownException when SQLite's COMMIT failed and may have taken effect; any other
   *     error means no pointer moved ({@link PointerSwap})
   */
  public boolean swapAll(List<FloeTableOperations.Prepared> swaps, List<FileDigests.Digest> digests) {
    checkWritable();
    return store.swapAll(swaps, digests);
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
    return store.tableLocations();
  }

  @Override
  public List<TableIdentifier> listTables(Namespace namespace) {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", namespace);
    }
    return store.tables(namespace);
  }

  @Override
  public boolean dropTable(TableIdentifier id, boolean purge) {
    checkWritable();
    Optional<String> location = metadataLocation(id);
    if (location.isEmpty()) {
      return false;
    }
    TableMetadata last = purge ? TableMetadataParser.read(io, location.get()) : null;
    if (!store.dropTable(id)) {
      return false;
    }
    landings.forget(id);
    if (last != null) {
      CatalogUtil.dropTableData(io, last);
      if (!S3.remote(last.location())) {
        Path directory = Path.of(TableDirectories.stripScheme(last.location()));
        TableDirectories.deleteLeftovers(directory);
        digestStore.forgetUnder(directory.toAbsolutePath().normalize().toString());
      }
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
    store.renameTable(from, to);
    landings.forget(from);
    landings.forget(to);
  }

  /** The metadata file of the view {@code id}; empty if there is no such view. */
  public Optional<String> viewLocation(TableIdentifier id) {
    return store.viewLocation(id);
  }

  /** Every view's metadata file, by view. */
  public Map<TableIdentifier, String> viewLocations() {
    return store.viewLocations();
  }

  /** The views of a namespace, by name. */
  @Override
  public List<TableIdentifier> listViews(Namespace namespace) {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", namespace);
    }
    return store.views(namespace);
  }

  /**
   * Commits view {@code id}: creates it when {@code base} is null (an {@link AlreadyExistsException} if a
   * table or view has the name), else replaces {@code base}. Where Floe writes metadata files, the new one is
   * written here, and deleted again if the commit does not happen.
   *
   * @return false if the view changed since {@code base} was read
   */
  public boolean commitView(TableIdentifier id, org.apache.iceberg.view.ViewMetadata base,
      org.apache.iceberg.view.ViewMetadata metadata) {
    checkWritable();
    if (base == null && !namespaceExists(id.namespace())) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", id.namespace());
    }
    String file = null;
    if (store.writesMetadata()) {
      String configured = metadata.properties().get(org.apache.iceberg.view.ViewProperties.WRITE_METADATA_LOCATION);
      String directory = configured != null && !configured.isBlank() ? configured.replaceAll("/+$", "")
          : metadata.location().replaceAll("/+$", "") + "/metadata";
      file = directory + "/" + String.format("%05d", metadata.currentVersionId()) + "-" + java.util.UUID.randomUUID()
          + ".metadata.json";
      org.apache.iceberg.view.ViewMetadataParser.write(metadata, io.newOutputFile(file));
    }
    boolean committed = false;
    try {
      committed = store.commitView(id, base, metadata, file);
      return committed;
    } finally {
      if (!committed && file != null) {
        io.deleteFile(file);
      }
    }
  }

  /** Operations of one view (Iceberg's view API: load, create, replace), committed by {@link #commitView}. */
  @Override
  protected org.apache.iceberg.view.ViewOperations newViewOps(TableIdentifier identifier) {
    return new FloeViewOperations(this, identifier, io);
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
    store.renameView(from, to);
  }

  /** Drops a view's catalog row (its metadata files stay, as a dropped table's do without PURGE). */
  @Override
  public boolean dropView(TableIdentifier id) {
    checkWritable();
    return store.dropView(id);
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
    store.createNamespace(namespace, metadata);
  }

  @Override
  public List<Namespace> listNamespaces(Namespace parent) {
    return store.namespaces(parent);
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(Namespace namespace) {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", namespace);
    }
    return store.namespaceProperties(namespace);
  }

  @Override
  public boolean dropNamespace(Namespace namespace) {
    checkWritable();
    if (!namespaceExists(namespace)) {
      return false;
    }
    if (!listTables(namespace).isEmpty() || !store.views(namespace).isEmpty()) {
      throw new NamespaceNotEmptyException("Namespace %s is not empty", namespace);
    }
    store.dropNamespace(namespace);
    return true;
  }

  @Override
  public boolean setProperties(Namespace namespace, Map<String, String> properties) {
    checkWritable();
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException("Namespace does not exist: %s", namespace);
    }
    store.setNamespaceProperties(namespace, properties);
    return true;
  }

  @Override
  public boolean removeProperties(Namespace namespace, Set<String> properties) {
    checkWritable();
    store.removeNamespaceProperties(namespace, properties);
    return true;
  }

  @Override
  public boolean namespaceExists(Namespace namespace) {
    return store.namespaceExists(namespace);
  }

  private void checkWritable() {
    if (readOnly) {
      throw new ReadOnlyException("the warehouse is open read-only");
    }
  }

  @Override
  public void close() {
    try {
      store.close();
    } finally {
      db.close();
    }
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
