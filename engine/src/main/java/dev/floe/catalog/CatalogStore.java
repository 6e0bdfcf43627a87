package dev.floe.catalog;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.view.ViewMetadata;

/**
 * Where a {@link FloeCatalog} keeps its tables, views and namespaces: the warehouse's own {@code catalog.db}
 * ({@link SqliteStore}) or a remote Iceberg REST catalog ({@link RestStore}). What is Floe's alone (the
 * counters of sequences, the digests of the files it wrote, the warehouse's identity, the tails) stays in the
 * local {@code catalog.db} whichever store holds the tables.
 *
 * <p>The two differ in one way that shapes a commit: in SQLite Floe writes the new metadata file and the
 * store swaps the table's pointer to it ({@link #writesMetadata} true); a REST catalog is sent the change
 * itself (the metadata's updates, with the requirements that make it a compare-and-swap) and writes the
 * metadata file of its own. Either way a commit is {@link #swapAll}: every prepared table moves, or none does.
 */
interface CatalogStore extends AutoCloseable {
  /** Whether Floe writes a commit's metadata file (SQLite), or the catalog writes it from the change (REST). */
  boolean writesMetadata();

  // ------------------------------------------------------------------ tables

  /** The current metadata file of a table; empty if there is no such table. */
  Optional<String> metadataLocation(TableIdentifier id);

  /** The metadata file the table pointed to before its current one. */
  Optional<String> previousMetadataLocation(TableIdentifier id);

  /**
   * The metadata the store already holds for the metadata file it just named for {@code id} (a REST load
   * answers with the metadata itself), so it need not be read again; empty to read the file.
   */
  Optional<TableMetadata> loaded(TableIdentifier id, String location);

  /** Every table with its current metadata file, ordered by namespace and name. */
  Map<TableIdentifier, String> tableLocations();

  /** The tables of one namespace, by name. */
  List<TableIdentifier> tables(Namespace namespace);

  /**
   * Commits every prepared table, all or none (durable when it returns true); a created table has no
   * expected file. Each prepared table learns where its metadata landed ({@link FloeTableOperations.Prepared#landed}).
   *
   * @return false if another committer changed a table first
   * @throws org.apache.iceberg.exceptions.CommitStateUnknownException when whether it took effect is unknown;
   *     any other error means nothing moved
   */
  boolean swapAll(List<FloeTableOperations.Prepared> swaps, List<FileDigests.Digest> digests);

  /** Removes a table from the catalog (its files stay); false if there was none. */
  boolean dropTable(TableIdentifier id);

  void renameTable(TableIdentifier from, TableIdentifier to);

  /** Where a new table named {@code id} goes. */
  String newTableLocation(TableIdentifier id);

  // ------------------------------------------------------------------ views

  Optional<String> viewLocation(TableIdentifier id);

  List<TableIdentifier> views(Namespace namespace);

  Map<TableIdentifier, String> viewLocations();

  /**
   * Commits a view: creates it when {@code base} is null, else replaces {@code base}. When the store
   * {@link #writesMetadata}, {@code file} is the metadata file Floe wrote for it; else it is null.
   *
   * @return false if the view changed since {@code base} was read
   */
  boolean commitView(TableIdentifier id, ViewMetadata base, ViewMetadata metadata, String file);

  void renameView(TableIdentifier from, TableIdentifier to);

  boolean dropView(TableIdentifier id);

  // ------------------------------------------------------------------ namespaces

  List<Namespace> namespaces(Namespace parent);

  boolean namespaceExists(Namespace namespace);

  Map<String, String> namespaceProperties(Namespace namespace);

  void createNamespace(Namespace namespace, Map<String, String> properties);

  /** Drops an empty namespace (the catalog checked it is empty). */
  void dropNamespace(Namespace namespace);

  void setNamespaceProperties(Namespace namespace, Map<String, String> properties);

  void removeNamespaceProperties(Namespace namespace, Set<String> properties);

  @Override
  void close();
}
