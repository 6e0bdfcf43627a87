package dev.floe.tail;

import dev.floe.FloeProperties;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.CachedFileIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.LocationProviders;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.aws.s3.S3FileIO;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;
import org.apache.iceberg.util.PropertyUtil;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * A log's published table on object storage (docs/tail.md, "Object storage"): an Iceberg table at an
 * {@code s3://} location that needs no catalog. Its current metadata file is named by the object
 * {@code metadata/current} under the table location, replaced only by a conditional PUT (If-Match the
 * version read, If-None-Match for the first): of two writers, one commits and the other gets a commit
 * conflict. Any engine can read the table from the metadata file that object names.
 *
 * <p>Files are read and written through a {@link CachedFileIO}: the metadata and manifests this
 * process wrote or read stay on local disk, so planning a scan of the published table does not need
 * the network, and only the data files a query cannot skip are fetched.
 */
public final class Published implements AutoCloseable {
  /** The object naming the current metadata file, under the table location. */
  public static final String POINTER = "metadata/current";

  private final String location;
  private final String bucket;
  private final String key;
  private final S3FileIO s3;
  private final CachedFileIO io;
  private final Ops ops;
  private final Map<String, Table> versions = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Table> eldest) {
      return size() > 8;
    }
  };

  private Published(String location, Map<String, String> storage, Path cache) {
    this.location = stripSlash(location);
    String rest = this.location.substring("s3://".length());
    int slash = rest.indexOf('/');
    this.bucket = rest.substring(0, slash);
    this.key = rest.substring(slash + 1);
    this.s3 = dev.floe.catalog.S3.fileIO(storage);
    this.io = new CachedFileIO(s3, cache);
    this.ops = new Ops();
  }

  /**
   * The published table at {@code location} ({@code s3://bucket/path}); {@code storage} are S3FileIO
   * properties (endpoint, region, path-style access). Nothing is read until it is used.
   */
  public static Published open(String location, Map<String, String> storage, Path cache) {
    check(location, storage);
    return new Published(location, storage, cache);
  }

  /**
   * Checks a publish location and its storage properties.
   *
   * @throws FloeException 22023 for a location that is not {@code s3://bucket/path}, or credentials
   *     among the properties (they come from the AWS default chain and are never written down)
   */
  public static void check(String location, Map<String, String> storage) {
    String l = location == null ? "" : stripSlash(location.strip());
    int slash = l.startsWith("s3://") ? l.indexOf('/', 5) : -1;
    if (slash <= 5 || slash == l.length() - 1) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid publish location \"" + location
          + "\": a published table lives at s3://bucket/path");
    }
    dev.floe.catalog.S3.checkProperties(storage);
  }

  /** The storage properties among a staging table's properties (prefix removed). */
  public static Map<String, String> storage(Map<String, String> tableProperties) {
    Map<String, String> storage = new HashMap<>();
    tableProperties.forEach((k, v) -> {
      if (k.startsWith(FloeProperties.PUBLISH_STORAGE_PREFIX)) {
        storage.put(k.substring(FloeProperties.PUBLISH_STORAGE_PREFIX.length()), v);
      }
    });
    return storage;
  }

  public static Optional<String> location(Map<String, String> tableProperties) {
    return Optional.ofNullable(tableProperties.get(FloeProperties.PUBLISH_TO)).filter(s -> !s.isBlank());
  }

  private static String stripSlash(String l) {
    return l.endsWith("/") ? l.substring(0, l.length() - 1) : l;
  }

  public String location() {
    return location;
  }

  public CachedFileIO io() {
    return io;
  }

  /**
   * The published table as it is now in object storage (reads {@code metadata/current}).
   *
   * @return empty if nothing was published there yet
   * @throws FloeException 58030 if object storage cannot be reached
   */
  public synchronized Optional<Table> current() {
    ops.refresh();
    return ops.current == null ? Optional.empty() : Optional.of(new BaseTable(ops, location));
  }

  /** The published table as of metadata file {@code metadataLocation} (read once, then from memory). */
  public synchronized Table at(String metadataLocation) {
    return versions.computeIfAbsent(metadataLocation,
        l -> new BaseTable(new StaticTableOperations(l, io), location));
  }

  /**
   * Creates the published table, keeping {@code schema}'s field ids (the staged files carry them) and
   * the staging table's partitioning and sort order.
   *
   * @throws FloeException 42P07 if a table is published there already
   */
  public synchronized Table create(Schema schema, PartitionSpec spec, SortOrder order, int formatVersion,
      Map<String, String> properties, String stagingUuid) {
    Map<String, String> props = new HashMap<>(properties);
    props.put(FloeProperties.PUBLISHED_LOG, stagingUuid);
    props.put(FloeProperties.TAIL_THROUGH, "0");
    // a conflict means another writer: it must be seen, not retried over
    props.put(TableProperties.COMMIT_NUM_RETRIES, "0");
    props.put(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true");
    props.put(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "100");
    TableMetadata metadata = TableMetadata.buildFromEmpty(formatVersion).assignUUID().setLocation(location)
        .setCurrentSchema(schema, schema.highestFieldId()).setDefaultPartitionSpec(spec)
        .setDefaultSortOrder(order).setProperties(props).build();
    ops.refresh();
    if (ops.current != null) {
      throw new FloeException(SqlState.DUPLICATE_TABLE, "a table is published at " + location + " already");
    }
    try {
      ops.commit(null, metadata);
    } catch (CommitFailedException e) {
      throw new FloeException(SqlState.DUPLICATE_TABLE, "a table is published at " + location + " already", e);
    }
    return new BaseTable(ops, location);
  }

  /** The published table's watermark: every row with a lower offset is in it. */
  public static long through(Table table) {
    return PropertyUtil.propertyAsLong(table.properties(), FloeProperties.TAIL_THROUGH, 0);
  }

  /**
   * Uploads staged files and commits them to the published table, moving its watermark from
   * {@code from} to {@code to}.
   *
   * @param files the staged files with every row in [from, to), and where each is on local disk
   * @return the metadata file of the new version
   * @throws FloeException 55000 if the published table's watermark is not {@code from} (another
   *     writer publishes to it: the log was restored elsewhere), 58030 if object storage fails
   */
  public synchronized String publish(dev.floe.commit.Committer committer, Table table, Map<DataFile, Path> files,
      long from, long to) {
    long at = through(table);
    if (at != from) {
      throw moved(at, from);
    }
    List<DataFile> uploaded = new ArrayList<>();
    for (Map.Entry<DataFile, Path> e : files.entrySet()) {
      DataFile staged = e.getKey();
      String name = staged.location().substring(staged.location().lastIndexOf('/') + 1);
      String remote = location + "/data/" + name;
      try {
        io.upload(e.getValue(), remote); // a name already uploaded by a publish that failed is overwritten
      } catch (IOException | RuntimeException x) {
        throw unreachable("upload " + name, x);
      }
      io.adopt(e.getValue(), remote);
      uploaded.add(DataFiles.builder(table.specs().get(staged.specId())).copy(staged).withPath(remote).build());
    }
    // No lock: this publish, synchronized on the published table, is its one writer here. The uploads
    // stay if the commit fails: the next publish uploads the same names again.
    Map<String, String> through = Map.of(FloeProperties.TAIL_THROUGH, Long.toString(to));
    try {
      committer.commit(null, table, dev.floe.commit.TableChange.append(uploaded).withWritten(List.of())
          .withSummary(through).withProperties(through, Set.of()));
    } catch (FloeException e) {
      if (!SqlState.SERIALIZATION_FAILURE.equals(e.sqlState())) {
        throw e;
      }
      ops.refresh(); // another writer committed first
      long now = ops.current == null ? -1 : through(new BaseTable(ops, location));
      throw moved(now, from);
    } catch (RuntimeException e) {
      throw unreachable("commit", e);
    }
    return ops.current.metadataFileLocation();
  }

  private FloeException moved(long at, long expected) {
    return new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "the published table " + location
        + " holds offsets below " + at + " but this log expected " + expected
        + ": another process publishes to it (was the log restored elsewhere?)");
  }

  private FloeException unreachable(String what, Exception e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return new FloeException(SqlState.IO_ERROR, "cannot publish to " + location + " (" + what + "): "
        + root.getMessage(), e);
  }

  /**
   * Expires published snapshots older than {@code graceMillis} (the newest stays). The table is only
   * appended to, so no data file goes; old manifest lists do.
   *
   * @return the number of snapshots expired
   */
  public synchronized int reclaim(long graceMillis) {
    Optional<Table> t = current();
    if (t.isEmpty() || t.get().currentSnapshot() == null) {
      return 0;
    }
    int before = size(t.get().snapshots());
    t.get().expireSnapshots().expireOlderThan(System.currentTimeMillis() - graceMillis).retainLast(1).commit();
    return before - size(new BaseTable(ops, location).snapshots());
  }

  private static int size(Iterable<?> it) {
    int n = 0;
    for (Object ignored : it) {
      n++;
    }
    return n;
  }

  @Override
  public void close() {
    io.close();
  }

  /** The table's operations: the current metadata named by {@code metadata/current}. */
  private final class Ops implements TableOperations {
    private final String pointer = key + "/" + POINTER;
    private TableMetadata current;
    private String etag;

    @Override
    public TableMetadata current() {
      return current;
    }

    @Override
    public TableMetadata refresh() {
      String named;
      String tag;
      try {
        var r = s3.client().getObjectAsBytes(GetObjectRequest.builder().bucket(bucket).key(pointer).build());
        tag = r.response().eTag();
        named = r.asUtf8String().strip();
      } catch (NoSuchKeyException e) {
        current = null;
        etag = null;
        return null;
      } catch (RuntimeException e) {
        throw unreachableRead(e);
      }
      if (!tag.equals(etag) || current == null) {
        try {
          current = TableMetadataParser.read(io, named);
        } catch (RuntimeException e) {
          throw unreachableRead(e);
        }
        etag = tag;
      }
      return current;
    }

    private FloeException unreachableRead(RuntimeException e) {
      if (e instanceof FloeException f) {
        return f;
      }
      return new FloeException(SqlState.IO_ERROR, "cannot read the published table " + location + ": "
          + e.getMessage(), e);
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      if (base != current) {
        throw new CommitFailedException("the published table %s changed since it was read", location);
      }
      if (base == metadata) {
        return; // nothing changed (an expiry that found nothing to expire): no new version
      }
      int version = base == null ? 0 : parseVersion(base.metadataFileLocation()) + 1;
      String file = metadataFileLocation(String.format(Locale.ROOT, "%05d-%s.metadata.json", version,
          UUID.randomUUID()));
      TableMetadataParser.overwrite(metadata, io.newOutputFile(file));
      PutObjectRequest.Builder put = PutObjectRequest.builder().bucket(bucket).key(pointer);
      put = etag == null ? put.ifNoneMatch("*") : put.ifMatch(etag);
      String tag;
      try {
        tag = s3.client().putObject(put.build(), RequestBody.fromString(file)).eTag();
      } catch (S3Exception e) {
        if (e.statusCode() != 412 && e.statusCode() != 409) {
          throw e;
        }
        // A retried request whose first attempt went through fails its own precondition: the
        // pointer then names this commit's file, and the commit happened.
        tag = null;
        try {
          var r = s3.client().getObjectAsBytes(GetObjectRequest.builder().bucket(bucket).key(pointer).build());
          if (r.asUtf8String().strip().equals(file)) {
            tag = r.response().eTag();
          }
        } catch (RuntimeException ignored) {
          // unknown: treated as the conflict it most likely is
        }
        if (tag == null) {
          io.deleteFile(file);
          throw new CommitFailedException(e, "another writer committed to %s", location);
        }
      }
      etag = tag;
      current = TableMetadataParser.read(io, file);
      if (base != null && PropertyUtil.propertyAsBoolean(metadata.properties(),
          TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, false)) {
        deleteRemovedMetadata(base, current);
      }
    }

    private void deleteRemovedMetadata(TableMetadata base, TableMetadata now) {
      Set<String> kept = new java.util.HashSet<>();
      now.previousFiles().forEach(e -> kept.add(e.file()));
      for (TableMetadata.MetadataLogEntry e : base.previousFiles()) {
        if (!kept.contains(e.file())) {
          try {
            io.deleteFile(e.file());
          } catch (RuntimeException ignored) {
            // an old version left behind costs only its bytes
          }
        }
      }
    }

    private int parseVersion(String metadataLocation) {
      String name = metadataLocation.substring(metadataLocation.lastIndexOf('/') + 1);
      int dash = name.indexOf('-');
      try {
        return dash > 0 ? Integer.parseInt(name.substring(0, dash)) : 0;
      } catch (NumberFormatException e) {
        return 0;
      }
    }

    @Override
    public FileIO io() {
      return io;
    }

    @Override
    public String metadataFileLocation(String fileName) {
      return location + "/metadata/" + fileName;
    }

    @Override
    public LocationProvider locationProvider() {
      return LocationProviders.locationsFor(location, current == null ? Map.of() : current.properties());
    }
  }
}
