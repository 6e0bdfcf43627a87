package dev.floe.server.rest;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.IcebergCatalog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.CatalogTests;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * Iceberg's catalog conformance tests ({@link CatalogTests}, the tests Iceberg's REST compatibility kit runs)
 * through Iceberg's own {@link RESTCatalog} client against Floe's REST catalog: one server for the class, every
 * namespace but {@code public} dropped (tables purged) before each test, as the kit purges its namespaces.
 *
 * <p>The suite appends data files it never writes, named {@code /path/to/data-a.parquet}: Floe refuses every file
 * outside the warehouse and its storage roots, so {@code /path} is a storage root here (it does not exist, so the
 * database is not fenced: a fence names existing directories); the locations it asks tables to have are inside
 * the warehouse ({@link #baseTableLocation}). The tests disabled below are listed, with why, in
 * docs/rest-catalog.md.
 */
class RestCompatibilityTest extends CatalogTests<RESTCatalog> {
  private static final String SERVER_SIDE_DEFAULTS = "needs table-default.* / table-override.* properties set on "
      + "the server's catalog (the kit's reference server is configured with them); Floe has no such setting";
  private static Path dir;
  private static Database db;
  private static RestServer server;
  private RESTCatalog client;

  @BeforeAll
  static void startServer() throws IOException {
    dir = Files.createTempDirectory("floe-rck");
    db = Floe.open(FloeConfig.builder(dir.resolve("wh")).storageRoot(Path.of("/path")).build());
    server = RestServer.start(db, RestServer.Config.defaults().withPort(0));
  }

  @AfterAll
  static void stopServer() throws IOException {
    server.close();
    db.close();
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @BeforeEach
  void purge() {
    IcebergCatalog catalog = db.icebergCatalog();
    for (Namespace ns : catalog.namespaces().listNamespaces()) {
      for (TableIdentifier t : catalog.catalog().listTables(ns)) {
        catalog.dropTable(t, true);
      }
      if (!ns.equals(Namespace.of("public"))) {
        catalog.dropNamespace(ns);
      }
    }
    client = initCatalog("rck", Map.of());
  }

  @AfterEach
  void closeClient() throws IOException {
    client.close();
  }

  @Override
  protected RESTCatalog catalog() {
    return client;
  }

  @Override
  protected RESTCatalog initCatalog(String name, Map<String, String> extra) {
    RESTCatalog c = new RESTCatalog();
    Map<String, String> props = new HashMap<>(extra);
    props.put(CatalogProperties.URI, server.uri());
    props.put(CatalogProperties.FILE_IO_IMPL, "dev.floe.catalog.LocalFileIO");
    c.initialize(name, props);
    return c;
  }

  /** Where the suite asks tables to be (its default is under /tmp): inside the warehouse, beside the tables. */
  @Override
  protected String baseTableLocation(TableIdentifier identifier) {
    return dir.resolve("wh").resolve("elsewhere").resolve(String.join("/", identifier.namespace().levels()))
        .resolve(identifier.name()).toString();
  }

  /** A commit's requirements are checked again when another process moved the table: Iceberg retries here. */
  @Override
  protected boolean supportsServerSideRetry() {
    return true;
  }

  /** A namespace is a schema: it must exist before its tables. */
  @Override
  protected boolean requiresNamespaceCreate() {
    return true;
  }

  /** Schemas are one level. */
  @Override
  protected boolean supportsNestedNamespaces() {
    return false;
  }

  @Override
  protected boolean supportsEmptyNamespace() {
    return false;
  }

  /** A name becomes a directory name: "/" cannot be in one. */
  @Override
  protected boolean supportsNamesWithSlashes() {
    return false;
  }

  @Disabled(SERVER_SIDE_DEFAULTS)
  @Test
  @Override
  public void testDefaultTableProperties() {}

  @Disabled(SERVER_SIDE_DEFAULTS)
  @Test
  @Override
  public void testDefaultTablePropertiesCreateTransaction() {}

  @Disabled(SERVER_SIDE_DEFAULTS)
  @Test
  @Override
  public void testDefaultTablePropertiesReplaceTransaction() {}

  @Disabled(SERVER_SIDE_DEFAULTS)
  @Test
  @Override
  public void testOverrideTableProperties() {}

  @Disabled(SERVER_SIDE_DEFAULTS)
  @Test
  @Override
  public void testOverrideTablePropertiesCreateTransaction() {}

  @Disabled(SERVER_SIDE_DEFAULTS)
  @Test
  @Override
  public void testOverrideTablePropertiesReplaceTransaction() {}

  @Disabled("a namespace named \"new.db\": the catalog's rows (Iceberg's JDBC catalog schema, which Spark and "
      + "PyIceberg also read) join a namespace's levels with dots, so Floe refuses a dot in a namespace name (400); "
      + "table names with dots work")
  @Test
  @Override
  public void testNamespaceWithDot() {}

  @Disabled("appends a data file with a relative path (\"<uuid>.parquet\"): Floe refuses any data file that is not an "
      + "absolute path inside the warehouse (403)")
  @Test
  @Override
  public void testCatalogWithCustomMetricsReporter() {}
}
