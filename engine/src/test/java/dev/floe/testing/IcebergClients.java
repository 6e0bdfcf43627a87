package dev.floe.testing;

import dev.floe.catalog.LocalFileIO;
import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.jdbc.JdbcCatalog;

/** Iceberg's own catalog client on a Floe warehouse: what Spark's or Flink's JdbcCatalog would open. */
public final class IcebergClients {
  public static final String CATALOG_NAME = "floe";

  private IcebergClients() {}

  /** A {@link JdbcCatalog} on {@code warehouse/catalog.db} (schema V1, catalog name {@code floe}). */
  public static JdbcCatalog jdbcCatalog(Path warehouse) {
    return jdbcCatalog(warehouse, warehouse.toAbsolutePath().normalize().toString());
  }

  /**
   * A {@link JdbcCatalog} on {@code warehouse/catalog.db} that places new tables under
   * {@code warehouseLocation}: the directory as a plain path, or as a {@code file:} URI as Spark writes it.
   */
  public static JdbcCatalog jdbcCatalog(Path warehouse, String warehouseLocation) {
    Path dir = warehouse.toAbsolutePath().normalize();
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.initialize(CATALOG_NAME, Map.of(
        CatalogProperties.URI, "jdbc:sqlite:" + dir.resolve("catalog.db"),
        CatalogProperties.WAREHOUSE_LOCATION, warehouseLocation,
        "jdbc.schema-version", "V1",
        CatalogProperties.FILE_IO_IMPL, LocalFileIO.class.getName()));
    return catalog;
  }
}
