package dev.floe;

import dev.floe.exec.Engine;
import java.nio.file.Path;

/**
 * Opens Floe warehouses.
 *
 * <pre>{@code
 * try (Database db = Floe.open(Path.of("warehouse"))) {
 *   db.sql("CREATE TABLE trips (id bigint NOT NULL, fare numeric(8,2))").close();
 *   db.sql("INSERT INTO trips VALUES (1, 12.50)").close();
 *   try (Result r = db.sql("SELECT count(*) FROM trips")) {
 *     for (Row row : r) { ... }
 *   }
 * }
 * }</pre>
 */
public final class Floe {
  private Floe() {}

  /**
   * Opens (creating if needed) the warehouse in {@code directory} for reading and writing, with the
   * embedded defaults: catalog {@code floe} in {@code catalog.db}, tables under the directory.
   *
   * @throws FloeException 55006 if another process has the warehouse open for writing
   */
  public static Database open(Path directory) {
    return open(FloeConfig.builder(directory).build());
  }

  /** Opens a warehouse as configured. */
  public static Database open(FloeConfig config) {
    return new Database(Engine.open(config));
  }

  /**
   * Builds a new catalog database for a warehouse whose catalog.db was lost (emptied, deleted, damaged),
   * from its tables' metadata files (docs/recovery.md). The old catalog.db, if any, is kept aside. Needs
   * the warehouse to itself.
   */
  public static RebuiltCatalog rebuildCatalog(Path directory) {
    return dev.floe.catalog.CatalogRebuild.rebuild(directory, FloeConfig.DEFAULT_CATALOG);
  }

  /** Opens an existing warehouse read-only, beside a process that may be writing to it. */
  public static Database openReadOnly(Path directory) {
    return open(FloeConfig.builder(directory).readOnly(true).build());
  }
}
