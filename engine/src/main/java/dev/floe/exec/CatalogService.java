package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.Durable;
import dev.floe.catalog.Locations;
import dev.floe.catalog.FloeCatalog;
import dev.floe.commit.MetadataCommits;
import dev.floe.sql.Lexer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;

/**
 * The warehouse's catalog as other engines reach it (the Iceberg REST catalog front end): the
 * operations Floe's SQL also has (drop, rename, schemas) run as Floe's own statements, so what Floe keeps
 * beside a table (its tail, constraints, views) follows; commits of metadata another engine decided go
 * through {@link MetadataCommits} under the tables' commit locks. Nothing a client sends may reach outside
 * the warehouse: locations, registered metadata and every file a new snapshot names are checked to be in
 * the warehouse or an allowed storage root ({@link Locations}), or the request is refused (42501).
 */
public final class CatalogService {
  private final Engine engine;
  private final MetadataCommits commits;

  CatalogService(Engine engine) {
    this.engine = engine;
    this.commits = new MetadataCommits(catalog(), engine.committer());
  }

  /** The object store location the warehouse's tables may be under ({@code s3://bucket/prefix}), if any. */
  public java.util.Optional<String> objectStoreLocation() {
    return engine.locations().objects();
  }

  /**
   * What a client needs to reach the files of a table at {@code location} on object storage (endpoint,
   * path-style access, region), and with {@code vend} the credentials this process reaches it with (the AWS
   * default chain's, as resolved now); empty for a table on the local file system.
   */
  public Map<String, String> storageConfig(String location, boolean vend) {
    if (location == null || !dev.floe.catalog.S3.remote(location)) {
      return Map.of();
    }
    Map<String, String> out = new java.util.LinkedHashMap<>(catalog().io().properties());
    if (!out.containsKey("client.region")) {
      String region = System.getenv("AWS_REGION") != null ? System.getenv("AWS_REGION")
          : System.getProperty("aws.region", "us-east-1");
      out.put("client.region", region);
    }
    if (vend) {
      software.amazon.awssdk.auth.credentials.AwsCredentials c;
      try (var chain = software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider.builder().build()) {
        c = chain.resolveCredentials();
      } catch (RuntimeException e) {
        throw new FloeException(SqlState.INTERNAL_ERROR, "no credentials to vend for "
            + location + ": " + e.getMessage(), e);
      }
      out.put("s3.access-key-id", c.accessKeyId());
      out.put("s3.secret-access-key", c.secretAccessKey());
      if (c instanceof software.amazon.awssdk.auth.credentials.AwsSessionCredentials session) {
        out.put("s3.session-token", session.sessionToken());
      }
    }
    return out;
  }

  public FloeCatalog catalog() {
    return engine.tables().catalog();
  }

  /** Commits every change atomically (see {@link MetadataCommits#commit}); files named are checked first. */
  public List<TableMetadata> commit(List<MetadataCommits.Change> changes) {
    checkWritable();
    List<MetadataCommits.Change> checked = new ArrayList<>();
    for (MetadataCommits.Change c : changes) {
      checked.add(new MetadataCommits.Change(c.id(), base -> {
        if (base == null) { // a create: the names become directories, in a schema that exists
          Locations.checkName(c.id().name(), false, 0);
          if (!catalog().namespaceExists(c.id().namespace())) {
            throw new org.apache.iceberg.exceptions.NoSuchNamespaceException("Namespace does not exist: %s",
                c.id().namespace());
          }
          checkNameFree(c.id());
        }
        TableMetadata updated = c.apply().apply(base);
        if (base != null && updated != base && !engine.tails().foreign(base.properties())) {
          checkTail(c.id(), base, updated); // this Floe's tail: its log decides its properties and keyed rows
        }
        if (base != null && updated != base) {
          ChangeStateGuard.checkCommit(c.id(), base, updated);
        }
        return updated;
      }));
    }
    try (Durable.Scope ignored = Durable.scope()) {
      return commits.commit(checked, this::checkFiles);
    }
  }

  /**
   * Creates a table from another engine's definition (or, with {@code stage}, only returns the metadata it
   * would have, for a create that commits later with an assert-create requirement).
   */
  public TableMetadata createTable(TableIdentifier id, org.apache.iceberg.Schema schema,
      org.apache.iceberg.PartitionSpec spec, org.apache.iceberg.SortOrder order, String location,
      Map<String, String> properties, boolean stage) {
    checkWritable();
    Locations.checkName(id.name(), false, 0);
    if (!catalog().namespaceExists(id.namespace())) {
      throw new org.apache.iceberg.exceptions.NoSuchNamespaceException("Namespace does not exist: %s", id.namespace());
    }
    checkNameFree(id);
    String where = catalog().newTableLocation(id);
    if (location != null && !location.isBlank()) {
      // checked as CREATE TABLE ... WITH (location) is; kept as the client wrote it (engines compare it with what
      // they asked)
      engine.tables().checkedLocation(location, id);
      where = location.strip();
    }
    TableMetadata metadata = TableMetadata.newTableMetadata(schema,
        spec == null ? org.apache.iceberg.PartitionSpec.unpartitioned() : spec,
        order == null ? org.apache.iceberg.SortOrder.unsorted() : order, where, properties);
    checkLocations(metadata);
    if (stage) {
      return metadata;
    }
    return commit(List.of(new MetadataCommits.Change(id, base -> {
      if (base != null) {
        throw new org.apache.iceberg.exceptions.AlreadyExistsException("Table already exists: %s", id);
      }
      return metadata;
    }))).get(0);
  }

  /**
   * Before a REST client loads {@code id}: when the table has a tail, seals the rows acknowledged at least
   * {@code floe.tail.rest-freshness-ms} ago, so the client sees them (the seal's triggers alone may leave them
   * out of the table for seconds). Concurrent loads take turns on the tail's seal lock; the first seals for all.
   *
   * @return the rows sealed
   */
  public long freshen(TableIdentifier id) {
    if (engine.readOnly()) {
      return 0;
    }
    org.apache.iceberg.Table table;
    try {
      // the engine's cached table, read again only when its pointer moved: no second parse of the metadata
      table = engine.tables().current(id).orElse(null);
    } catch (RuntimeException e) {
      return 0; // the load that follows reports what is wrong
    }
    if (table == null || !dev.floe.tail.TailLog.hasTail(table) || engine.tails().foreign(table.properties())) {
      return 0; // no tail here to seal (another Floe's tail is sealed by its own triggers)
    }
    long bound = org.apache.iceberg.util.PropertyUtil.propertyAsLong(table.properties(),
        dev.floe.FloeProperties.TAIL_REST_FRESHNESS_MS, dev.floe.FloeProperties.DEFAULT_REST_FRESHNESS_MS);
    try (ReaderPins.Hold ignored = engine.tables().readerPins().hold("REST load")) {
      return engine.tails().of(id, table).map(log -> log.sealOlderThan(Math.max(0, bound))).orElse(0L);
    }
  }

  /** Creates a schema (namespace) of one level, with properties, as CREATE SCHEMA does. */
  public void createNamespace(Namespace namespace, Map<String, String> properties) {
    checkWritable();
    if (namespace.levels().length != 1) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "nested namespaces are not supported: \""
          + namespace + "\" has " + namespace.levels().length + " levels; a namespace is one schema");
    }
    Locations.checkName(namespace.level(0), true, 0);
    if (namespace.level(0).contains(".")) {
      // the catalog's rows (Iceberg's JDBC catalog schema) join levels with dots: "a.b" would read back as a/b
      throw new FloeException(SqlState.INVALID_NAME, "invalid namespace name \"" + namespace.level(0)
          + "\": a namespace name cannot contain \".\"");
    }
    catalog().createNamespace(namespace, properties);
  }

  /** DROP SCHEMA of an empty schema. */
  public void dropNamespace(Namespace namespace) {
    run("DROP SCHEMA " + quoted(namespace));
  }

  /** DROP TABLE, with PURGE when asked (the table's files are deleted too). */
  public void dropTable(TableIdentifier id, boolean purge) {
    run("DROP TABLE " + quoted(id) + (purge ? " PURGE" : ""));
  }

  /** ALTER TABLE ... RENAME TO, within a schema or into another. */
  public void renameTable(TableIdentifier from, TableIdentifier to) {
    if (catalog().viewLocation(to).isPresent()) {
      throw new org.apache.iceberg.exceptions.AlreadyExistsException("Cannot rename %s to %s. View already exists",
          from, to);
    }
    if (!from.namespace().equals(to.namespace())) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "moving a table to another namespace is not "
          + "supported: rename " + from + " within " + from.namespace());
    }
    run("ALTER TABLE " + quoted(from) + " RENAME TO " + Lexer.quoteIdentifier(to.name()));
  }

  /**
   * What another engine may not change of a table with a tail: the tail's own properties (its watermark says
   * which of the log's rows are in the table: moved, rows would be lost or doubled), and, when the tail is keyed,
   * the rows (the log holds newer versions of keys than the table; their seal would undo or collide with the
   * other engine's change). Floe's own statements change those.
   */
  private static void checkTail(TableIdentifier id, TableMetadata base, TableMetadata updated) {
    java.util.Set<String> keys = new java.util.HashSet<>(base.properties().keySet());
    keys.addAll(updated.properties().keySet());
    for (String k : keys) {
      if ((k.equals(dev.floe.FloeProperties.TAIL) || k.startsWith(dev.floe.FloeProperties.TAIL_PREFIX))
          && !java.util.Objects.equals(base.properties().get(k), updated.properties().get(k))
          && !k.equals(dev.floe.FloeProperties.TAIL_REST_FRESHNESS_MS)) {
        throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: property \"" + k + "\" of table "
            + id + " belongs to its tail: change it with ALTER TABLE in Floe");
      }
    }
    boolean addsSnapshot = updated.changes().stream()
        .anyMatch(u -> u instanceof org.apache.iceberg.MetadataUpdate.AddSnapshot);
    if (addsSnapshot && dev.floe.tail.TailLog.hasTail(base.properties())
        && dev.floe.tail.TailLog.keyed(base.schema())) {
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: table " + id + " has a keyed tail: "
          + "its rows change through Floe only (INSERT, UPDATE, DELETE, MERGE over the PostgreSQL protocol)");
    }
  }

  /** Iceberg's words when a new table's name is taken (its clients and conformance tests match on them). */
  private void checkNameFree(TableIdentifier id) {
    if (catalog().viewLocation(id).isPresent()) {
      throw new org.apache.iceberg.exceptions.AlreadyExistsException("View with same name already exists: %s", id);
    }
    if (catalog().tableExists(id)) {
      throw new org.apache.iceberg.exceptions.AlreadyExistsException("Table already exists: %s", id);
    }
  }

  /** Registers an existing table's metadata file under a new name; the file must be in the warehouse. */
  public void registerTable(TableIdentifier id, String metadataLocation) {
    checkWritable();
    checkNameFree(id);
    checkInside(metadataLocation, "metadata file");
    TableMetadata metadata = org.apache.iceberg.TableMetadataParser.read(catalog().io(), metadataLocation);
    checkLocations(metadata);
    FileIO io = catalog().io();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (Snapshot s : metadata.snapshots()) {
      checkInside(s.manifestListLocation(), "manifest list");
      for (ManifestFile m : s.allManifests(io)) {
        if (seen.add(m.path())) {
          checkInside(m.path(), "manifest");
          checkManifest(m, io, metadata.specsById());
        }
      }
    }
    catalog().registerTable(id, metadataLocation);
  }

  /** The table's and its files' locations in a table's metadata, each inside the warehouse. */
  public void checkLocations(TableMetadata metadata) {
    checkInside(metadata.location(), "table location");
    for (String key : List.of(TableProperties.WRITE_DATA_LOCATION, TableProperties.WRITE_METADATA_LOCATION,
        TableProperties.OBJECT_STORE_PATH, TableProperties.WRITE_FOLDER_STORAGE_LOCATION)) {
      String value = metadata.properties().get(key);
      if (value != null && !value.isEmpty()) {
        checkInside(value, "\"" + key + "\"");
      }
    }
  }

  /**
   * What a commit names: locations, and every file of the snapshots it adds (manifest lists, manifests,
   * data and delete files, statistics), inside the warehouse: a client that could name any file would
   * have Floe read the server's files for it.
   */
  private void checkFiles(TableMetadata updated) {
    checkLocations(updated);
    java.util.Set<Long> known = new java.util.HashSet<>();
    FileIO io = catalog().io();
    for (org.apache.iceberg.MetadataUpdate u : updated.changes()) {
      if (u instanceof org.apache.iceberg.MetadataUpdate.AddSnapshot add) {
        Snapshot s = add.snapshot();
        if (!known.add(s.snapshotId())) {
          continue;
        }
        checkInside(s.manifestListLocation(), "manifest list");
        for (ManifestFile m : s.allManifests(io)) {
          if (m.snapshotId() == null || m.snapshotId() != s.snapshotId()) {
            continue; // carried over from a snapshot already checked (or Floe's own)
          }
          checkInside(m.path(), "manifest");
          checkManifest(m, io, updated.specsById());
        }
      } else if (u instanceof org.apache.iceberg.MetadataUpdate.SetStatistics stats) {
        checkInside(stats.statisticsFile().path(), "statistics file");
      } else if (u instanceof org.apache.iceberg.MetadataUpdate.SetPartitionStatistics stats) {
        checkInside(stats.partitionStatisticsFile().path(), "partition statistics file");
      }
    }
  }

  private void checkManifest(ManifestFile m, FileIO io, Map<Integer, org.apache.iceberg.PartitionSpec> specs) {
    try {
      if (m.content() == org.apache.iceberg.ManifestContent.DATA) {
        try (CloseableIterable<DataFile> files = ManifestFiles.read(m, io, specs).select(List.of("file_path"))) {
          for (DataFile f : files) {
            checkInside(f.location(), "data file");
          }
        }
      } else {
        try (CloseableIterable<DeleteFile> files = ManifestFiles.readDeleteManifest(m, io, specs)) {
          for (DeleteFile f : files) {
            checkInside(f.location(), "delete file");
          }
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Refuses (42501) a location or file outside the warehouse and its storage roots. */
  public void checkInside(String location, String what) {
    engine.locations().inside(location).ifPresent(problem -> {
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: " + what + " \"" + location
          + "\" " + problem);
    });
  }

  private void checkWritable() {
    if (engine.readOnly()) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION, "cannot change the catalog of a read-only "
          + "warehouse");
    }
  }

  private void run(String sql) {
    SessionContext session = engine.newSession();
    try {
      session.execute(sql).close();
    } finally {
      session.close();
    }
  }

  private static String quoted(Namespace namespace) {
    List<String> parts = new ArrayList<>();
    for (String level : namespace.levels()) {
      parts.add(Lexer.quoteIdentifier(level));
    }
    return String.join(".", parts);
  }

  private static String quoted(TableIdentifier id) {
    return quoted(id.namespace()) + "." + Lexer.quoteIdentifier(id.name());
  }
}
