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
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * The server Iceberg's conformance tests run against (RestCompatibilityTest, RestViewCompatibilityTest): one Floe
 * database and REST server per test class, every namespace but {@code public} dropped (tables and views purged)
 * before each test, as Iceberg's compatibility kit purges its namespaces. The suites append data files they never
 * write, named {@code /path/to/data-a.parquet}: Floe refuses every file outside the warehouse and its storage
 * roots, so {@code /path} is a storage root here (it does not exist, so the database is not fenced: a fence names
 * existing directories).
 */
final class RckServer implements AutoCloseable {
  final Path dir;
  final Database db;
  final RestServer server;

  RckServer() throws IOException {
    dir = Files.createTempDirectory("floe-rck");
    db = Floe.open(FloeConfig.builder(dir.resolve("wh")).storageRoot(Path.of("/path")).build());
    server = RestServer.start(db, RestServer.Config.defaults().withPort(0));
  }

  /** Drops every table and view, and every namespace but public. */
  void purge() {
    IcebergCatalog catalog = db.icebergCatalog();
    for (Namespace ns : catalog.namespaces().listNamespaces()) {
      for (TableIdentifier v : catalog.views().listViews(ns)) {
        catalog.views().dropView(v);
      }
      for (TableIdentifier t : catalog.catalog().listTables(ns)) {
        catalog.dropTable(t, true);
      }
      if (!ns.equals(Namespace.of("public"))) {
        catalog.dropNamespace(ns);
      }
    }
  }

  /** A client as an engine configures one; java.nio file IO (the build carries Hadoop's only in part). */
  RESTCatalog client(String name, Map<String, String> extra) {
    RESTCatalog c = new RESTCatalog();
    Map<String, String> props = new HashMap<>(extra);
    props.put(CatalogProperties.URI, server.uri());
    props.put(CatalogProperties.FILE_IO_IMPL, "dev.floe.catalog.LocalFileIO");
    c.initialize(name, props);
    return c;
  }

  /** Where the suites ask tables and views to be (their default is under /tmp): inside the warehouse. */
  String location(String... parts) {
    Path p = dir.resolve("wh").resolve("elsewhere");
    for (String part : parts) {
      p = p.resolve(part);
    }
    return p.toString();
  }

  @Override
  public void close() throws IOException {
    server.close();
    db.close();
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }
}
