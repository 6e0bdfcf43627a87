package dev.floe;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * How to open a warehouse.
 *
 * @param warehouse the warehouse directory (created if missing, unless read-only)
 * @param catalogName the Iceberg catalog name rows are keyed by; Spark and PyIceberg must use the same
 * @param readOnly open without the writer lock; every write fails with 25006
 * @param memoryLimit DuckDB's memory limit for query execution, e.g. {@code "4GB"}; empty for DuckDB's default
 * @param threads DuckDB worker threads; 0 for one per core
 * @param fenced DuckDB reaches only the warehouse (its files, no network, no extensions, settings locked),
 *     as it must in a process that runs SQL from network clients ({@link Database#connectClient()},
 *     docs/security.md); the embedded API then reads no file outside the warehouse either
 * @param storageRoots directories besides the warehouse where tables may be located ({@code WITH (location =
 *     ...)}); a fenced DuckDB reaches them too
 * @param beforeCommit run on the committing thread each time a change to a table, its files written, is
 *     about to take the table's commit lock: for tests that make two commits overlap deterministically;
 *     empty by default
 * @param remoteCatalog a remote Iceberg REST catalog that holds the tables, views and namespaces; empty to
 *     keep them in the warehouse's own {@code catalog.db} (the default)
 * @param objectStore where the tables' files go when not in the warehouse directory (S3); empty to keep
 *     them in the directory (the default). Tables a REST catalog places on S3 are reached through it too.
 */
public record FloeConfig(Path warehouse, String catalogName, boolean readOnly, Optional<String> memoryLimit,
    int threads, boolean fenced, java.util.List<Path> storageRoots, Optional<Runnable> beforeCommit,
    Optional<RemoteCatalog> remoteCatalog, Optional<ObjectStore> objectStore) {

  public static final String DEFAULT_CATALOG = "floe";

  public FloeConfig {
    Objects.requireNonNull(warehouse, "warehouse");
    Objects.requireNonNull(catalogName, "catalogName");
    Objects.requireNonNull(memoryLimit, "memoryLimit");
    Objects.requireNonNull(beforeCommit, "beforeCommit");
    Objects.requireNonNull(remoteCatalog, "remoteCatalog");
    Objects.requireNonNull(objectStore, "objectStore");
    storageRoots = java.util.List.copyOf(storageRoots);
    for (Path root : storageRoots) {
      if (!root.isAbsolute()) {
        throw new IllegalArgumentException("a storage root must be an absolute path, was " + root);
      }
    }
    if (catalogName.isBlank()) {
      throw new IllegalArgumentException("catalog name must not be blank");
    }
    if (threads < 0) {
      throw new IllegalArgumentException("threads must be >= 0, was " + threads);
    }
  }

  public static Builder builder(Path warehouse) {
    return new Builder(warehouse);
  }

  /** Builder with the embedded defaults: catalog {@code floe}, read-write, DuckDB's memory and threads. */
  public static final class Builder {
    private final Path warehouse;
    private String catalogName = DEFAULT_CATALOG;
    private boolean readOnly;
    private String memoryLimit;
    private int threads;
    private boolean fenced;
    private final java.util.List<Path> storageRoots = new java.util.ArrayList<>();
    private Runnable beforeCommit;
    private RemoteCatalog remoteCatalog;
    private ObjectStore objectStore;

    private Builder(Path warehouse) {
      this.warehouse = Objects.requireNonNull(warehouse, "warehouse");
    }

    public Builder catalogName(String name) {
      this.catalogName = Objects.requireNonNull(name, "name");
      return this;
    }

    public Builder readOnly(boolean value) {
      this.readOnly = value;
      return this;
    }

    public Builder memoryLimit(String limit) {
      this.memoryLimit = limit;
      return this;
    }

    public Builder threads(int count) {
      this.threads = count;
      return this;
    }

    /** See {@link FloeConfig#fenced()}: required to serve network clients. */
    public Builder fenced(boolean value) {
      this.fenced = value;
      return this;
    }

    /** Allows tables to be located under {@code root} too (see {@link FloeConfig#storageRoots()}). */
    public Builder storageRoot(Path root) {
      storageRoots.add(Objects.requireNonNull(root, "root"));
      return this;
    }

    /** See {@link FloeConfig#beforeCommit()}: a test's hook, run before each commit takes its lock. */
    public Builder beforeCommit(Runnable hook) {
      this.beforeCommit = Objects.requireNonNull(hook, "hook");
      return this;
    }

    /** Keeps the tables in a remote REST catalog (see {@link FloeConfig#remoteCatalog()}). */
    public Builder remoteCatalog(RemoteCatalog catalog) {
      this.remoteCatalog = Objects.requireNonNull(catalog, "catalog");
      return this;
    }

    /** Keeps the tables' files on object storage (see {@link FloeConfig#objectStore()}). */
    public Builder objectStore(ObjectStore store) {
      this.objectStore = Objects.requireNonNull(store, "store");
      return this;
    }

    public FloeConfig build() {
      return new FloeConfig(warehouse, catalogName, readOnly, Optional.ofNullable(memoryLimit), threads, fenced,
          storageRoots, Optional.ofNullable(beforeCommit), Optional.ofNullable(remoteCatalog),
          Optional.ofNullable(objectStore));
    }
  }
}
