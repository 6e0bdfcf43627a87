package dev.floe;

import dev.floe.commit.MetadataCommits;
import dev.floe.exec.CatalogService;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The warehouse's Iceberg catalog, for front ends that serve it to other engines (the REST catalog):
 * reads through Iceberg's {@link Catalog} interfaces; every change through the methods here, which keep
 * what Floe keeps beside its tables, commit under the engine's commit locks, and refuse any location or
 * file outside the warehouse (42501). Iceberg's exceptions ({@code NoSuchTableException},
 * {@code CommitFailedException}, ...) and {@link FloeException} carry the failures.
 */
public final class IcebergCatalog {
  /** One table's commit: its current metadata (null if it does not exist) to the metadata to commit. */
  public record TableCommit(TableIdentifier id, UnaryOperator<TableMetadata> apply) {}

  private final CatalogService service;

  IcebergCatalog(CatalogService service) {
    this.service = service;
  }

  /** Reads: tables, their metadata, listings. Do not commit through the tables it loads. */
  public Catalog catalog() {
    return service.catalog();
  }

  /** Reads of namespaces (list, load, exists); changes go through the methods below. */
  public SupportsNamespaces namespaces() {
    return service.catalog();
  }

  /** Views (Iceberg's view API): reads, and creates, replaces, renames and drops whose locations were checked. */
  public org.apache.iceberg.catalog.ViewCatalog views() {
    return service.catalog();
  }

  /**
   * Refuses (42501) a location a client asked a view or table to have, or to keep its metadata in, unless it is
   * inside the warehouse or a storage root.
   */
  public void checkLocation(String what, String location) {
    service.checkInside(location, what);
  }

  /** Where a schema's tables go by default: its directory in the warehouse. */
  public String namespaceLocation(Namespace namespace) {
    return service.catalog().warehouseLocation() + "/" + String.join("/", namespace.levels());
  }

  /** The object store location the tables may be under ({@code s3://bucket/prefix}), if the warehouse has one. */
  public java.util.Optional<String> objectStoreLocation() {
    return service.objectStoreLocation();
  }

  /**
   * The storage configuration a client needs for the files of a table at {@code location}: for one on object
   * storage its endpoint, path-style access and region, and with {@code vendCredentials} the credentials this
   * process uses (only for a server configured to vend them); empty for a table on the local file system.
   */
  public Map<String, String> storageConfig(String location, boolean vendCredentials) {
    return service.storageConfig(location, vendCredentials);
  }

  /** The catalog's name (the name engines use for it, and Iceberg's JdbcCatalog key). */
  public String name() {
    return service.catalog().name();
  }

  /**
   * The current metadata file of a table, read from the catalog without reading the file (the tag of a load:
   * an unchanged table is answered without loading it); empty if there is no such table or its file is gone
   * (a load then reports what is wrong).
   */
  public java.util.Optional<String> metadataLocation(TableIdentifier id) {
    org.apache.iceberg.io.FileIO io = service.catalog().io();
    return service.catalog().metadataLocation(id).filter(l -> io.newInputFile(l).exists());
  }

  /**
   * Makes a table's acknowledged rows visible to a reader outside Floe before it loads the table: a table with
   * a tail seals its rows older than {@code floe.tail.rest-freshness-ms} (default 1 s); other tables are left as
   * they are.
   */
  public void freshen(TableIdentifier id) {
    service.freshen(id);
  }

  public void createNamespace(Namespace namespace, Map<String, String> properties) {
    service.createNamespace(namespace, properties);
  }

  public void dropNamespace(Namespace namespace) {
    service.dropNamespace(namespace);
  }

  /** Sets and removes a namespace's properties; returns whether anything changed. */
  public boolean updateNamespace(Namespace namespace, Map<String, String> set, java.util.Set<String> remove) {
    boolean changed = false;
    if (!remove.isEmpty()) {
      changed |= service.catalog().removeProperties(namespace, remove);
    }
    if (!set.isEmpty()) {
      changed |= service.catalog().setProperties(namespace, set);
    }
    return changed;
  }

  /** Creates a table, or with {@code stage} only returns the metadata it would start with. */
  public TableMetadata createTable(TableIdentifier id, Schema schema, PartitionSpec spec, SortOrder order,
      String location, Map<String, String> properties, boolean stage) {
    return service.createTable(id, schema, spec, order, location, properties, stage);
  }

  public void dropTable(TableIdentifier id, boolean purge) {
    service.dropTable(id, purge);
  }

  public void renameTable(TableIdentifier from, TableIdentifier to) {
    service.renameTable(from, to);
  }

  public void registerTable(TableIdentifier id, String metadataLocation) {
    service.registerTable(id, metadataLocation);
  }

  /**
   * Commits every table's change at once (one SQLite transaction moves every pointer), under the
   * tables' commit locks; a change runs again if another process moved its table meanwhile.
   *
   * @return each table's metadata after the commit, in the order given
   */
  public List<TableMetadata> commit(List<TableCommit> commits) {
    return service.commit(commits.stream().map(c -> new MetadataCommits.Change(c.id(), c.apply())).toList());
  }
}
