package dev.floe;

import java.util.Map;
import java.util.Objects;

/**
 * Where a warehouse keeps its tables' files when that is object storage rather than its directory
 * (docs/object-storage.md): every new table gets a location under {@code location}, and its data and
 * metadata files go there; the warehouse directory keeps only what is Floe's alone (the catalog, the
 * tails' logs, local copies of table files). Credentials come from the AWS default chain (environment,
 * system properties, profile, instance role), never from here.
 *
 * @param location {@code s3://bucket} or {@code s3://bucket/prefix}
 * @param properties Iceberg S3FileIO properties: {@code s3.endpoint}, {@code s3.path-style-access},
 *     {@code client.region}
 * @param cacheBytes how much local disk the copies of data files may take: the background maintainer deletes
 *     the least recently used beyond it (metadata copies stay)
 */
public record ObjectStore(String location, Map<String, String> properties, long cacheBytes) {
  /** The copies' default budget: 8 GiB. */
  public static final long DEFAULT_CACHE_BYTES = 8L << 30;

  /** A store whose local copies take at most {@link #DEFAULT_CACHE_BYTES}. */
  public ObjectStore(String location, Map<String, String> properties) {
    this(location, properties, DEFAULT_CACHE_BYTES);
  }

  public ObjectStore {
    if (cacheBytes < 0) {
      throw new IllegalArgumentException("the local copies' budget must be >= 0 bytes, was " + cacheBytes);
    }
    Objects.requireNonNull(location, "location");
    properties = Map.copyOf(properties);
    String l = location.strip();
    while (l.endsWith("/")) {
      l = l.substring(0, l.length() - 1);
    }
    if (!l.startsWith("s3://") || l.length() == "s3://".length() || l.substring(5).startsWith("/")
        || l.substring(5).contains("//")) {
      throw new IllegalArgumentException("an object store location is s3://bucket or s3://bucket/prefix, was \""
          + location + "\"");
    }
    location = l;
    dev.floe.catalog.S3.propertiesProblem(properties).ifPresent(p -> {
      throw new IllegalArgumentException(p);
    });
  }

  /** The store at {@code location} with S3FileIO's defaults (AWS, the region from the environment). */
  public static ObjectStore at(String location) {
    return new ObjectStore(location, Map.of());
  }
}
