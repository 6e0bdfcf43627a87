package dev.floe.testing;

import dev.floe.catalog.LocalFileIO;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
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

  /**
   * Table {@code public.<table>} as Iceberg's generic reader reads it: "id|column" per row, sorted; fails
   * if any of its deletes is an equality delete (Floe writes position deletes and deletion vectors only).
   */
  public static List<String> idAnd(Path warehouse, String table, String column) throws Exception {
    List<String> out = new ArrayList<>();
    try (JdbcCatalog catalog = jdbcCatalog(warehouse)) {
      Table t = catalog.loadTable(TableIdentifier.of("public", table));
      try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          task.deletes().forEach(d -> {
            if (d.content() == FileContent.EQUALITY_DELETES) {
              throw new AssertionError("an equality delete in " + table + ": " + d.location());
            }
          });
        }
      }
      try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
        it.forEach(r -> out.add(r.getField("id") + "|" + r.getField(column)));
      }
    }
    out.sort(null);
    return out;
  }
}
