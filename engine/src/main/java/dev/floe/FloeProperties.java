package dev.floe;

/**
 * The table properties Floe reads and writes, in one place (Iceberg's own are in
 * {@code org.apache.iceberg.TableProperties}). They are stored in the table's Iceberg metadata, so
 * every engine sees them; only Floe acts on them. The ones a user sets are described in docs/tail.md
 * and docs/sql.md.
 */
public final class FloeProperties {
  private FloeProperties() {}

  // ------------------------------------------------------------------ columns

  /**
   * A column's DEFAULT expression when it is not an Iceberg default (not a constant, such as
   * {@code now()} or {@code gen_random_uuid()}, or the table is format version 1 or 2):
   * {@value}{@code <field id>}. Floe evaluates it for each row it writes; other engines do not know it.
   */
  public static final String COLUMN_DEFAULT = "floe.column-default.";

  /**
   * An index ({@code CREATE INDEX}): {@value}{@code <index name>} = {@code [unique ][sorted ]<field id>[,...]}
   * (sorted: the index gave the table its sort order, which DROP INDEX takes back).
   */
  public static final String INDEX_PREFIX = "floe.index.";

  /** A CHECK constraint: {@value}{@code <constraint name>} = its expression, as written. */
  public static final String CHECK_PREFIX = "floe.check.";

  /**
   * A FOREIGN KEY: {@value}{@code <constraint name>} = {@code <field id>[,...] <schema> <table> <field id>[,...]
   * <on delete><on update>} (names URL-encoded; actions as pg_constraint's letters).
   */
  public static final String FOREIGN_KEY_PREFIX = "floe.foreign-key.";

  /**
   * On a table that foreign keys reference: {@value}{@code <schema>.<table>} (URL-encoded) names a table
   * whose foreign keys may reference it, which a DELETE or UPDATE of its rows checks. Written before the
   * foreign key, so a key is never without it; one left after its key went is ignored.
   */
  public static final String REFERENCED_BY_PREFIX = "floe.referenced-by.";

  /** A column's identity kind ({@code always} or {@code by default}): {@value}{@code <field id>}. */
  public static final String COLUMN_IDENTITY = "floe.column-identity.";

  /** Prefix of the properties that keep a column's declared SQL type ({@link #columnSqlType}). */
  public static final String COLUMN_PREFIX = "floe.column.";

  /** The property keeping the declared SQL type of field {@code fieldId} (varchar(10), smallint, ...). */
  public static String columnSqlType(int fieldId) {
    return COLUMN_PREFIX + fieldId + ".sql-type";
  }

  // ------------------------------------------------------------------ writing

  /**
   * Rows per Parquet row group of the data files Floe writes (Iceberg bounds row groups by bytes
   * only); small groups keep point reads short.
   */
  public static final String ROW_GROUP_ROWS = "write.parquet.row-group-size-rows";

  // ------------------------------------------------------------------ change streams

  /** A change stream's target (docs/cdc.md): its state table, {@code floe_cdc."<target uuid>"}. */
  public static final String CDC_STATE = "floe.cdc.state";

  /**
   * A change stream's target: how long (seconds) the state of a deleted row, and a range deletion, is kept
   * after it (default 864000, ten days, as Cassandra's {@code gc_grace_seconds}).
   */
  public static final String CDC_GC_GRACE_SECONDS = "floe.cdc.gc-grace-seconds";

  // ------------------------------------------------------------------ the tail

  /** Whether the table has a write-ahead tail ({@code true}/{@code false}). */
  public static final String TAIL = "floe.tail";

  /** Prefix of every tail property. */
  public static final String TAIL_PREFIX = "floe.tail.";

  /**
   * The warehouse whose log holds the table's tail (its identity, {@code .floe/catalog-id}): only that Floe
   * appends to, seals and protects the tail; another Floe on the same catalog (a REST catalog two Floes share)
   * reads the sealed rows and refuses writes. Absent on tails made before it: the tail is the local one's.
   */
  public static final String TAIL_OWNER = "floe.tail.owner";

  /**
   * Every row with a lower offset is in the table's files (or was deleted there); also the snapshot
   * summary key of a seal's commit.
   */
  public static final String TAIL_THROUGH = "floe.tail.through";

  /** The first offset the log may hand out (a successor's or a restore's start). */
  public static final String TAIL_START = "floe.tail.start-offset";

  /** Set when a log is retired: the offset after its last row. */
  public static final String TAIL_RETIRED = "floe.tail.retired-at";

  /** Tail tuning: WAL segment size, seal triggers, reclaim grace, memtable cache, publish age. */
  public static final String TAIL_SEGMENT_BYTES = "floe.tail.segment-bytes";
  public static final String TAIL_SEAL_ROWS = "floe.tail.seal-rows";
  public static final String TAIL_SEAL_AGE_MS = "floe.tail.seal-age-ms";
  public static final String TAIL_GRACE_MS = "floe.tail.grace-ms";
  public static final String TAIL_CACHE_BYTES = "floe.tail.cache-bytes";
  public static final String TAIL_PUBLISH_AGE_MS = "floe.tail.publish-age-ms";
  /**
   * How stale a tail table may look to a REST catalog client: loading it seals rows acknowledged at least this
   * long ago first (milliseconds; default {@value #DEFAULT_REST_FRESHNESS_MS}; 0: every acknowledged row).
   */
  public static final String TAIL_REST_FRESHNESS_MS = "floe.tail.rest-freshness-ms";
  public static final long DEFAULT_REST_FRESHNESS_MS = 1000;

  // ------------------------------------------------------------------ publishing a log

  /** On a staging table: the {@code s3://} location of the published table its log publishes to. */
  public static final String PUBLISH_TO = "floe.tail.publish-to";

  /**
   * Prefix of every property of publishing (where, how, how far): set when a log is created, never
   * changed or reset after.
   */
  public static final String PUBLISH_PREFIX = "floe.tail.publish";

  /** Staging table properties with this prefix configure the object store (S3FileIO properties). */
  public static final String PUBLISH_STORAGE_PREFIX = "floe.tail.publish.";

  /**
   * Staging table property (and snapshot summary): rows with lower offsets were published and left the
   * staging table; the published table holds them at {@link #PUBLISHED_METADATA}.
   */
  public static final String PUBLISHED_THROUGH = "floe.tail.published";

  /** Staging table property (and snapshot summary): the published metadata file holding those rows. */
  public static final String PUBLISHED_METADATA = "floe.tail.published-metadata";

  /** On a published table: the UUID of the staging table (log) that publishes to it. */
  public static final String PUBLISHED_LOG = "floe.tail.log";
}
