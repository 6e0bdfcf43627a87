package dev.floe.catalog;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.view.ViewMetadata;

/**
 * The tables, views and namespaces in the warehouse's {@code catalog.db}, in the rows Iceberg's JdbcCatalog
 * reads ({@link TablePointers}, {@link ViewPointers}, {@link NamespaceStore}): Floe writes each commit's
 * metadata file and swaps the pointer to it.
 */
final class SqliteStore implements CatalogStore {
  private final String warehouse;
  private final TablePointers pointers;
  private final ViewPointers views;
  private final NamespaceStore namespaces;

  SqliteStore(CatalogDatabase db, String catalogName, String warehouse) {
    this.warehouse = warehouse;
    this.pointers = new TablePointers(db, catalogName);
    this.views = new ViewPointers(db, catalogName);
    this.namespaces = new NamespaceStore(db, catalogName);
  }

  @Override
  public boolean writesMetadata() {
    return true;
  }

  @Override
  public Optional<String> metadataLocation(TableIdentifier id) {
    return pointers.metadataLocation(id);
  }

  @Override
  public Optional<String> previousMetadataLocation(TableIdentifier id) {
    return pointers.previousMetadataLocation(id);
  }

  @Override
  public Optional<TableMetadata> loaded(TableIdentifier id, String location) {
    return Optional.empty();
  }

  @Override
  public Map<TableIdentifier, String> tableLocations() {
    return pointers.tableLocations();
  }

  @Override
  public List<TableIdentifier> tables(Namespace namespace) {
    return pointers.tables(namespace);
  }

  @Override
  public boolean swapAll(List<FloeTableOperations.Prepared> swaps, List<FileDigests.Digest> digests) {
    return pointers.swapAll(swaps, digests);
  }

  /** Moves one table's pointer from {@code expected} to {@code newLocation} (a repair's repoint). */
  boolean swap(TableIdentifier id, String expected, String newLocation) {
    return pointers.swap(id, expected, newLocation, List.of());
  }

  @Override
  public boolean dropTable(TableIdentifier id) {
    return pointers.delete(id);
  }

  @Override
  public void renameTable(TableIdentifier from, TableIdentifier to) {
    pointers.rename(from, to);
  }

  @Override
  public String newTableLocation(TableIdentifier id) {
    return TableDirectories.newLocation(warehouse, id);
  }

  @Override
  public Optional<String> viewLocation(TableIdentifier id) {
    return views.location(id);
  }

  @Override
  public List<TableIdentifier> views(Namespace namespace) {
    return views.views(namespace);
  }

  @Override
  public Map<TableIdentifier, String> viewLocations() {
    return views.locations();
  }

  @Override
  public boolean commitView(TableIdentifier id, ViewMetadata base, ViewMetadata metadata, String file) {
    return views.swap(id, base == null ? null : base.metadataFileLocation(), file);
  }

  @Override
  public void renameView(TableIdentifier from, TableIdentifier to) {
    views.rename(from, to);
  }

  @Override
  public boolean dropView(TableIdentifier id) {
    return views.delete(id);
  }

  @Override
  public List<Namespace> namespaces(Namespace parent) {
    return namespaces.children(parent);
  }

  @Override
  public boolean namespaceExists(Namespace namespace) {
    return namespaces.exists(namespace);
  }

  @Override
  public Map<String, String> namespaceProperties(Namespace namespace) {
    return namespaces.properties(namespace);
  }

  @Override
  public void createNamespace(Namespace namespace, Map<String, String> properties) {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("exists", "true"); // JdbcCatalog's marker of a namespace with no other property
    props.putAll(properties);
    namespaces.insertProperties(namespace, props);
  }

  @Override
  public void dropNamespace(Namespace namespace) {
    namespaces.delete(namespace);
  }

  @Override
  public void setNamespaceProperties(Namespace namespace, Map<String, String> properties) {
    namespaces.removeProperties(namespace, properties.keySet());
    namespaces.insertProperties(namespace, properties);
  }

  @Override
  public void removeNamespaceProperties(Namespace namespace, Set<String> properties) {
    namespaces.removeProperties(namespace, properties);
  }

  /** The database is the catalog's ({@link FloeCatalog#close} closes it). */
  @Override
  public void close() {}
}
