package dev.floe.tail;

import dev.floe.FloeProperties;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import dev.floe.write.Inserter;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PropertyUtil;
import org.duckdb.DuckDBConnection;

/**
 * The durable tail of one table (docs/tail.md): rows appended to a write-ahead log ({@link Wal}) and
 * acknowledged once it is fsynced, readable at once, and sealed into the table's Parquet files later.
 *
 * <p><b>Tiers and watermarks.</b> Every row gets an offset. The table property {@value FloeProperties#TAIL_THROUGH}
 * says which offsets the table holds: all below it. It moves only in the commit that adds the sealed
 * files, so a reader that read a table snapshot with watermark {@code T} takes exactly the unsealed
 * rows with offsets from {@code T} on: every row once, whatever seals happen meanwhile.
 *
 * <p><b>The memtable</b> is DuckDB tables in the engine's in-memory database (queries union them with
 * the table's files), one generation per seal: rows reach them from the durable log lazily, when a
 * query or seal needs them, so an append costs only its log write. A generation is dropped once the
 * table holds its rows and no reader still needs it (a {@link Pin}, in its own file).
 *
 * <p><b>Its parts.</b> This class is what callers use: it opens and closes the log, appends, pins, and
 * runs the steps in order ({@link #advance}, {@link #retire}). {@link Memtable} holds the unsealed rows;
 * {@link Sealing} writes them (or ingested rows) into the table's files and compacts those;
 * {@link Publishing} publishes sealed rows to object storage and evicts them from the staging table;
 * {@link Reclaim} deletes what no reader can still need.
 *
 * <p><b>Locks</b>, in the order a thread takes them: holding one, it takes only those below it.
 * <ol>
 *   <li>{@link #keyedLock}: a keyed table's one change at a time ({@link #change}), held from the
 *       change's first read to the queueing of its record, never across the fsync wait.
 *   <li>{@link #publishLock}: one publish at a time, held across the requests to object storage
 *       ({@link Publishing#publish}).
 *   <li>{@link #sealLock}: one change of the table's files by this log at a time, held across the
 *       commit it makes: seal, ingest and compaction ({@link Sealing}), choosing and claiming the files
 *       to publish and evicting published ones ({@link Publishing}), reclaim and sweep ({@link Reclaim}),
 *       {@link #close}, and what a caller runs in {@link #sealedWhile} (ALTER TABLE).
 *   <li>The table's commit lock ({@code commit.Committer.lock}), taken by those commits. Whoever holds
 *       it takes no seal lock: a statement that seals the log and then commits under the commit lock
 *       takes the seal lock first, with {@link #sealedWhile}.
 *   <li>The log's monitor ({@code synchronized} on this object) guards the memtable (its generations,
 *       pins and the watermark), what this process knows of the published table ({@link Publishing}'s
 *       fields) and closing. It is held briefly: never across a commit, a Parquet write or a request to
 *       object storage, and never while waiting for a seal or publish lock.
 *   <li>{@code Memtable.pending}: durable rows not yet moved into the memtable. The log's flusher takes
 *       it from {@link Wal} holding none of these, and nothing is taken while holding it.
 * </ol>
 * {@link Wal}'s own lock comes below the monitor: closing the log under the monitor waits for a flush
 * in progress, which takes only {@code Memtable.pending}.
 */
public final class TailLog implements AutoCloseable {
  /** The column holding each row's offset. */
  public static final String OFFSET_COLUMN = "_offset";

  /**
   * A keyed log's tombstone flag: the last value of each of its records' rows and a column of its
   * memtable, true when the row is the deletion of its key (its other columns then NULL).
   */
  public static final String DELETED_COLUMN = "__floe_deleted";

  private static final Types.NestedField DELETED = Types.NestedField.optional(Integer.MAX_VALUE - 1, DELETED_COLUMN,
      Types.BooleanType.get());

  /**
   * Sizing: when a seal without {@code flush} cuts the memtable; how long files a snapshot stopped
   * naming, or nothing names, are kept for readers (reclaim, sweep).
   */
  public record Config(long segmentBytes, long sealRows, long sealAgeMillis, long graceMillis, long cacheBytes,
      long publishAgeMillis) {
    public static final Config DEFAULT = new Config(64L << 20, 1_000_000, 10_000, 600_000, 1L << 30, 60_000);

    /**
     * A keyed log's default seal size: its unsealed versions are also held in the JVM ({@link KeyIndex}),
     * so it seals at a tenth of an append-only log's.
     */
    static final long KEYED_SEAL_ROWS = 100_000;

    static Config of(Map<String, String> properties, boolean keyed) {
      return new Config(
          PropertyUtil.propertyAsLong(properties, FloeProperties.TAIL_SEGMENT_BYTES, DEFAULT.segmentBytes),
          PropertyUtil.propertyAsLong(properties, FloeProperties.TAIL_SEAL_ROWS, keyed ? KEYED_SEAL_ROWS
              : DEFAULT.sealRows),
          PropertyUtil.propertyAsLong(properties, FloeProperties.TAIL_SEAL_AGE_MS, DEFAULT.sealAgeMillis),
          PropertyUtil.propertyAsLong(properties, FloeProperties.TAIL_GRACE_MS, DEFAULT.graceMillis),
          PropertyUtil.propertyAsLong(properties, FloeProperties.TAIL_CACHE_BYTES, DEFAULT.cacheBytes),
          PropertyUtil.propertyAsLong(properties, FloeProperties.TAIL_PUBLISH_AGE_MS, DEFAULT.publishAgeMillis));
    }
  }

  /** What the log needs from its engine. */
  public interface Host {
    /** The table, refreshed to its current metadata. */
    Table table();

    /** The table's name in the catalog (its commit lock's). */
    org.apache.iceberg.catalog.TableIdentifier id();

    /** Where the log's commits to the table, and to its published table, go. */
    dev.floe.commit.Committer committer();

    /** Where statements stage files. */
    Path scratch();

    /** A new connection to the engine's DuckDB database. */
    DuckDBConnection connect();

    /**
     * Merges the table's small files (see {@code exec.Compaction}), with {@code all} even a partition's
     * few, leaving out files with offsets below {@code fromOffset}; returns the number of files rewritten.
     */
    int compact(DuckDBConnection duck, boolean all, long fromOffset);

    /** The table the log publishes to on object storage, if it has one ({@link Published}). */
    java.util.Optional<Published> published();

    /** Expires snapshots replaced more than {@code graceMillis} ago; returns how many. */
    int reclaim(long graceMillis);

    /** Deletes unreferenced files older than {@code graceMillis}; returns how many. */
    int sweep(long graceMillis);

    /**
     * A keyed log's seal: the change (not committed) that makes the newest of the versions
     * {@code versions} selects (rows of the table's columns and {@value #DELETED_COLUMN}) the table's
     * row of its key, on {@code duck}: the table's live row of each key deleted by position (deletion
     * vectors or position deletes, never equality deletes), the newest versions that are not deletions
     * written as new rows.
     */
    dev.floe.commit.TableChange fold(DuckDBConnection duck, Table table, String versions);
  }

  private final Host host;
  private final Config config;
  private final Path dir;
  private final Schema schema;
  private final RowCodec codec;
  /** Whether the table has a primary key: its log holds versions of keys (see {@link #change}). */
  private final boolean keyed;
  /** Held by a keyed change from its first read to the queueing of its versions (see {@link #change}). */
  private final java.util.concurrent.locks.ReentrantLock keyedLock = new java.util.concurrent.locks.ReentrantLock();
  /** The log this process writes; null when it follows another's. */
  private final Wal wal;
  private final DuckDBConnection mirrorDuck;
  private final DuckDBConnection sealDuck;
  /** One publish at a time; the seal lock is held only to choose and claim the files (see the class comment). */
  final Object publishLock = new Object();
  /** One change of the table's files by this log at a time (see the class comment). */
  final Object sealLock = new Object();
  private final ThreadLocal<RowCodec.Buffer> buffers = ThreadLocal.withInitial(() -> new RowCodec.Buffer(256));
  /** The unsealed rows; guarded by the log's monitor. */
  private final Memtable memtable;
  private final Publishing publishing;
  private final Sealing sealing;
  private final Reclaim reclaim;
  private volatile boolean closed;

  private TailLog(Host host, Table table, Config config, Path dir, boolean readOnly) {
    this.host = host;
    this.config = config;
    this.dir = dir;
    this.schema = table.schema();
    long claimed = Math.max(evicted(table), Publishing.readClaim(dir));
    Types.NestedField offset = schema.findField(OFFSET_COLUMN);
    if (offset == null || offset.type().typeId() != Type.TypeID.LONG) {
      throw new FloeException(SqlState.DATA_CORRUPTED, "table " + table.name() + " has a tail but no bigint column "
          + OFFSET_COLUMN);
    }
    this.codec = new RowCodec(recordColumns(schema));
    this.keyed = keyed(schema);
    long through = through(table);
    this.mirrorDuck = host.connect();
    this.sealDuck = readOnly ? null : host.connect();
    // a read-only memtable follows the log another process writes
    this.memtable = new Memtable(this, host, schema, table.schemas(), codec, schema.columns().indexOf(offset),
        through, readOnly ? new WalTailer(dir) : null, mirrorDuck);
    this.publishing = new Publishing(this, host, config, dir, schema, memtable, claimed);
    if (readOnly) {
      this.wal = null;
    } else {
      List<Wal.Durable> replayed = new ArrayList<>();
      try {
        this.wal = Wal.open(dir, config.segmentBytes(), Math.max(through, start(table)), r -> {
          if (r.end() <= through) {
            return; // the table holds these rows
          }
          replayed.add(memtable.rowsFrom(r, through));
        }, memtable::durable);
      } catch (RuntimeException e) {
        closeQuietly(); // a damaged log (XX001) fails every use until it is repaired: keep no connections
        throw e;
      }
      memtable.durableFrom(wal.nextOffset());
      if (!replayed.isEmpty()) {
        memtable.durable(replayed);
      }
    }
    this.sealing = new Sealing(this, host, config, memtable, publishing, wal, sealDuck);
    this.reclaim = new Reclaim(this, host, config, publishing);
    synchronized (this) {
      memtable.start();
    }
  }

  private void closeQuietly() {
    try {
      mirrorDuck.close();
      sealDuck.close();
    } catch (SQLException ignored) {
      // failing anyway
    }
  }

  /**
   * Opens the tail of {@code host}'s table, its log in {@code dir}, replaying the rows the table does
   * not hold yet.
   */
  public static TailLog open(Host host, Path dir) {
    Table table = host.table();
    return new TailLog(host, table, Config.of(table.properties(), keyed(table.schema())), dir, false);
  }

  /**
   * Opens the tail of {@code host}'s table for reading beside the process that writes it: the log's
   * files are followed (never changed), and what they hold past the table's watermark is readable.
   */
  public static TailLog openReadOnly(Host host, Path dir) {
    Table table = host.table();
    return new TailLog(host, table, Config.of(table.properties(), keyed(table.schema())), dir, true);
  }

  /** The columns a log record holds: the table's, without {@value #OFFSET_COLUMN}. */
  static List<Types.NestedField> logColumns(Schema schema) {
    List<Types.NestedField> columns = new ArrayList<>(schema.columns());
    columns.removeIf(f -> f.name().equals(OFFSET_COLUMN));
    return columns;
  }

  /**
   * The columns a log record's rows hold: {@link #logColumns}, and for a keyed table (one with a primary
   * key) the tombstone flag {@value #DELETED_COLUMN} last.
   */
  static List<Types.NestedField> recordColumns(Schema schema) {
    List<Types.NestedField> columns = logColumns(schema);
    if (keyed(schema)) {
      columns.add(DELETED);
    }
    return columns;
  }

  /** Whether a tail of a table of this schema is keyed: the table has a primary key. */
  public static boolean keyed(Schema schema) {
    return !schema.identifierFieldIds().isEmpty();
  }

  /** Whether this log holds versions of keys (its table has a primary key). */
  public boolean keyed() {
    return keyed;
  }

  /** Checks that a table of this schema can have a tail. */
  public static void checkSchema(Schema schema) {
    RowCodec.check(logColumns(schema));
  }

  /** The table's watermark: every offset below it is in the table. */
  public static long through(Table table) {
    return Math.max(PropertyUtil.propertyAsLong(table.properties(), FloeProperties.TAIL_THROUGH, 0), start(table));
  }

  private static long start(Table table) {
    return PropertyUtil.propertyAsLong(table.properties(), FloeProperties.TAIL_START, 0);
  }

  public static boolean hasTail(Table table) {
    return hasTail(table.properties());
  }

  public static boolean hasTail(Map<String, String> properties) {
    return "true".equalsIgnoreCase(properties.get(FloeProperties.TAIL));
  }

  /** The table's schema the log was opened with. */
  public Schema schema() {
    return schema;
  }

  /** The columns of an appended row, in order: the table's, without {@value #OFFSET_COLUMN}. */
  public List<Types.NestedField> rowColumns() {
    return logColumns(schema);
  }

  /**
   * Appends rows (Iceberg internal values of {@link #rowColumns()}, already checked) as one log record,
   * and returns once it is durable.
   *
   * @return the offset of the first row; the others follow densely
   */
  public long extend(List<Object[]> rows) {
    checkWritable();
    if (keyed) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "the table has a primary key: its log takes keyed "
          + "changes (INSERT, UPDATE, DELETE, ON CONFLICT), not plain appends");
    }
    if (rows.isEmpty()) {
      return endOffset();
    }
    RowCodec.Buffer buffer = buffers.get();
    buffer.reset();
    codec.encode(rows, buffer);
    long first;
    try {
      first = wal.append(buffer.array(), buffer.position(), rows.size(), schema.schemaId(), List.copyOf(rows));
    } catch (FloeException e) {
      throw appendFailed(e);
    }
    if (buffer.array().length > 1 << 20) {
      buffers.remove(); // do not keep a large batch's buffer
    }
    if (memtable.pendingRows() > MAX_PENDING_ROWS && moving.compareAndSet(false, true)) {
      // Nobody has read or sealed for a while (no advancer running): the rows waiting in the JVM heap
      // move into the memtable, at the cost of this one append.
      try {
        synchronized (this) {
          if (!closed) {
            memtable.sync();
          }
        }
      } finally {
        moving.set(false);
      }
    }
    return first;
  }

  /**
   * A failed write of the log: a failed fsync closes it (the next use opens it again from disk); one
   * closed under the appender (ALTER, DROP, retire) wrote nothing and is retried.
   */
  private FloeException appendFailed(FloeException e) {
    if (SqlState.IO_ERROR.equals(e.sqlState())) {
      synchronized (this) {
        if (!closed) {
          broken(); // the log accepts nothing more: the next use opens it again from disk
        }
      }
    }
    if (SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE.equals(e.sqlState())) {
      return new FloeException(SqlState.SERIALIZATION_FAILURE, "the table's tail closed while appending (the table "
          + "was altered, dropped or its log retired); nothing was appended", null, "Retry the append.", 0, e);
    }
    return e;
  }

  /** Appends versions of keys inside a {@link #change}. */
  public interface Versions {
    /**
     * Queues versions as one log record: the deletions of the keys in {@code deleted}, then the rows
     * {@code rows} (both values of {@link #rowColumns()}, the rows already checked; of a deleted row only
     * its key columns are kept), so a key both deleted and given a row keeps the row. The change's later
     * reads see them at once, everyone else once they are durable.
     *
     * @return the offset of the first
     */
    long append(List<Object[]> deleted, List<Object[]> rows);
  }

  /**
   * A keyed change (docs/tail.md, "Keyed tables"): {@code body} reads the table (the pins it takes see
   * every version queued before it, durable or not) and appends the versions it decides with the
   * {@link Versions} it is given. Keyed changes of the log run one at a time from their first read to
   * the queueing of their versions, so each reads the newest version of every key, and they are ordered
   * by the log; the call returns once its versions are durable, sharing fsyncs with the others.
   *
   * @return what {@code body} returns
   */
  public <T> T change(java.util.function.Function<Versions, T> body) {
    checkWritable();
    if (!keyed) {
      throw new IllegalStateException("the table has no primary key");
    }
    List<Wal.Ticket> tickets = new ArrayList<>();
    T result;
    keyedLock.lock();
    try {
      result = body.apply((deleted, added) -> {
        if (deleted.isEmpty() && added.isEmpty()) {
          return endOffset();
        }
        RowCodec.Buffer buffer = buffers.get();
        buffer.reset();
        List<Object[]> rows = records(schema, deleted, added);
        codec.encode(rows, buffer);
        Wal.Ticket ticket;
        try {
          ticket = wal.enqueue(buffer.array(), buffer.position(), rows.size(), schema.schemaId(), Memtable.LOADED);
        } catch (FloeException e) {
          throw appendFailed(e);
        }
        tickets.add(ticket);
        synchronized (this) {
          checkOpen();
          memtable.loaded(ticket.first(), rows);
        }
        return ticket.first();
      });
    } finally {
      keyedLock.unlock();
    }
    for (Wal.Ticket t : tickets) {
      try {
        wal.await(t);
      } catch (FloeException e) {
        throw appendFailed(e);
      }
    }
    return result;
  }

  /**
   * A keyed change's versions as its log record holds them (see {@link Versions#append}): the deletions,
   * their key columns and the tombstone flag set, then the rows, the flag unset.
   */
  static List<Object[]> records(Schema schema, List<Object[]> deleted, List<Object[]> added) {
    List<Object[]> rows = new ArrayList<>(deleted.size() + added.size());
    List<Types.NestedField> columns = logColumns(schema);
    for (Object[] d : deleted) {
      Object[] row = new Object[columns.size() + 1];
      for (int i = 0; i < columns.size(); i++) {
        if (schema.identifierFieldIds().contains(columns.get(i).fieldId())) {
          row[i] = d[i];
        }
      }
      row[columns.size()] = Boolean.TRUE;
      rows.add(row);
    }
    for (Object[] a : added) {
      rows.add(java.util.Arrays.copyOf(a, columns.size() + 1));
    }
    return rows;
  }

  /** Durable rows waiting in the heap beyond which an append moves them into the memtable itself. */
  static final long MAX_PENDING_ROWS = 100_000;
  private final java.util.concurrent.atomic.AtomicBoolean moving = new java.util.concurrent.atomic.AtomicBoolean();

  /** The offset the next appended row will get. */
  public long endOffset() {
    if (wal == null) {
      synchronized (this) {
        memtable.sync();
      }
    }
    return memtable.durableEnd();
  }

  /** Rows acknowledged but not yet in the table. */
  public long bufferedRows() {
    synchronized (this) {
      return memtable.durableEnd() - memtable.through();
    }
  }

  /** The watermark as this log last committed or found it. */
  public synchronized long sealedThrough() {
    return memtable.through();
  }

  private void checkWritable() {
    if (wal == null) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION, "the log is open read-only here: another "
          + "process writes it");
    }
  }

  /**
   * Pins the unsealed rows a reader of a table snapshot with watermark {@code from} must add: those with
   * offsets from {@code from} to the end of what is durable now.
   *
   * @return empty if the memtable no longer holds rows from {@code from} (the snapshot is older than a
   *     seal the memtable has forgotten): read the table again
   */
  public synchronized java.util.Optional<Pin> pin(long from) {
    checkOpen();
    // a keyed change reads the versions queued before it too (see change)
    return memtable.pin(from, keyedLock.isHeldByCurrentThread()).map(p -> new Pin(this, memtable, schema, keyed, from, p.end(), p.tables(),
        p.bounds()));
  }

  /**
   * Seals unsealed rows into the table: Parquet sorted by the table's sort order, committed in one
   * snapshot that also moves the watermark. Without {@code flush} only when the memtable has reached
   * its size or age trigger.
   *
   * @return the number of rows sealed
   */
  public long seal(boolean flush) {
    checkWritable();
    return sealing.seal(flush);
  }

  /**
   * Seals when the oldest unsealed row was acknowledged at least {@code maxAgeMillis} ago (or the size or
   * age trigger is reached): what a reader outside Floe (a REST catalog client) sees is then at most that
   * stale. Concurrent callers take turns on the seal lock; those after the first find the rows sealed.
   *
   * @return the number of rows sealed
   */
  public long sealOlderThan(long maxAgeMillis) {
    checkWritable();
    return sealing.seal(false, maxAgeMillis);
  }

  /**
   * Writes rows that are already durable elsewhere straight into the table: appends are held back,
   * every acknowledged row is sealed, then {@code writer} writes the new rows' files numbering them
   * from the offset it is given, and they are committed with the watermark past them, in one snapshot.
   *
   * @return the offset of the first ingested row
   */
  public long ingest(java.util.function.LongFunction<Inserter.Written> writer) {
    checkWritable();
    return sealing.ingest(writer);
  }

  /**
   * Seals every unsealed row, then runs {@code change} with none of this log's steps that change the
   * table's files (seal, ingest, compaction, the choice of files to publish, eviction, reclaim, sweep)
   * running until it returns: for a change the log's rows must not straddle, such as ALTER TABLE's.
   * {@code change} may take the table's commit lock (this holds the seal lock, which comes first; see
   * the class comment) and may close the log.
   *
   * @return what {@code change} returns
   */
  public <T> T sealedWhile(java.util.function.Supplier<T> change) {
    checkWritable();
    return sealing.sealedWhile(change);
  }

  /**
   * Merges runs of small sealed files into files of the table's target size; with {@code all}, every
   * run of two or more.
   *
   * @return the number of files rewritten
   */
  public int compact(boolean all) {
    checkWritable();
    return sealing.compact(all);
  }

  /**
   * Publishes the staged rows to the published table on object storage: the staging table's files
   * holding rows from the published table's watermark to the staging table's are uploaded and
   * committed there in one snapshot that moves its watermark. The staging table keeps them until
   * {@link #evict} (readers of a staging snapshot read the published table as of the version that
   * snapshot names, so every row is read once). Without a published table, every sealed row is
   * "published" already.
   *
   * @return the offset below which every row is in the published table
   * @throws FloeException 58030 when object storage cannot be reached (nothing is lost: the staged
   *     files stay and the next publish takes them), 55000 when another process publishes there
   */
  public long publish(boolean flush) {
    checkWritable();
    return publishing.publish(flush);
  }

  /** Staging table property {@value Published#EVICTED_PROPERTY}: rows below it left for the published table. */
  public static long evicted(Table staging) {
    return PropertyUtil.propertyAsLong(staging.properties(), FloeProperties.PUBLISHED_THROUGH, 0);
  }

  /** Every row with a lower offset is in the published table, as far as this process knows. */
  public synchronized long publishedThrough() {
    return publishing.publishedThrough();
  }

  /**
   * Stops the log for good: nothing more is acknowledged, every acknowledged row is sealed and the
   * small files compacted. The caller then marks the table retired and deletes the log.
   *
   * @return the offset after the last acknowledged row
   */
  public long retire() {
    checkWritable();
    wal.close(); // appends fail from here on; every acknowledged one is in the memtable's queue
    seal(true);
    compact(true);
    if (host.published().isPresent()) {
      publish(true);
      evict();
    }
    return memtable.durableEnd();
  }

  /**
   * Expires the table's snapshots replaced more than the grace period ({@code floe.tail.grace-ms}) ago
   * and deletes the files only they named; for a publishing log also the published table's old
   * snapshots, and local copies of published files beyond {@code floe.tail.cache-bytes}.
   *
   * @return the number of snapshots expired
   */
  public int reclaim() {
    checkWritable();
    return reclaim.reclaim();
  }

  /**
   * Deletes files in the table's directories that nothing references and that are older than the grace
   * period: what a crashed seal or commit left.
   *
   * @return the number of files deleted
   */
  public int sweep() {
    checkWritable();
    return reclaim.sweep();
  }

  /**
   * Runs the tiers in order: seal (by its triggers, or everything with {@code flush}), compact (with
   * {@code flush} every run of small files), publish (settled staged files, or all with {@code flush}),
   * evict, and with {@code maintain} reclaim and sweep. A failed publish stops only the publish: the
   * local steps still run, then its error is raised.
   *
   * @return the number of rows sealed
   */
  public long advance(boolean flush, boolean maintain) {
    long sealed = seal(flush);
    compact(flush);
    FloeException failed = null;
    try {
      publish(flush);
    } catch (FloeException e) {
      failed = e;
    }
    evict();
    if (maintain) {
      reclaim();
      sweep();
    }
    if (failed != null) {
      throw failed;
    }
    return sealed;
  }

  /**
   * Deletes the log segments whose rows the table holds.
   *
   * @return the number of segments deleted
   */
  public int evict() {
    checkWritable();
    long t;
    synchronized (this) {
      checkOpen();
      t = memtable.through();
    }
    int segments = wal.evictBelow(t);
    if (host.published().isPresent()) {
      publishing.evict();
    }
    return segments;
  }

  /** Log segment files on disk. */
  public int segments() {
    checkWritable();
    return wal.segmentCount();
  }

  /**
   * The memtable is not to be trusted: the log stops here and is opened again from disk. Holding the
   * log's monitor.
   */
  void broken() {
    stop();
  }

  /** Stops the log and drops the memtable. Holding the log's monitor. */
  private void stop() {
    closed = true;
    if (wal != null) {
      wal.close();
    }
    memtable.drop();
  }

  /**
   * Bounds of each column over the unsealed rows (the memtable's tier): lower and upper value, nulls,
   * rows. Values are in Iceberg's internal representation.
   */
  public synchronized ColumnBounds.Summary memtableBounds() {
    checkOpen();
    memtable.sync();
    return memtable.bounds();
  }

  public boolean isOpen() {
    return !closed;
  }

  void checkOpen() {
    if (closed) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "the tail of this table is closed");
    }
  }

  /** Closes the log; rows acknowledged and not sealed stay in it, for the next open. */
  @Override
  public void close() {
    synchronized (sealLock) {
      synchronized (this) {
        if (closed) {
          return;
        }
        stop();
        try {
          mirrorDuck.close();
          if (sealDuck != null) {
            sealDuck.close();
          }
        } catch (SQLException ignored) {
          // nothing left to lose
        }
      }
    }
  }
}
