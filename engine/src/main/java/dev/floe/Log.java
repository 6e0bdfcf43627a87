package dev.floe;

import dev.floe.exec.Engine;
import dev.floe.sql.Lexer;
import dev.floe.tail.TailLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An append-only log over a table with a durable tail (docs/tail.md). {@link #append} and
 * {@link #extend} return once the rows are durable in the write-ahead log; the rows are readable at
 * once, by {@link #sql}, {@link #scan} and any query of the table, and reach the table's Parquet files
 * when the tail is sealed ({@link #seal}, {@link #advance}, or the server's background advancer).
 *
 * <p>Every row gets an offset ({@code _offset}): dense, increasing, never reused. Safe for concurrent
 * use by many threads; concurrent appends share fsyncs.
 */
public final class Log {
  private final Database db;
  private final Engine engine;
  private final String name;
  private final boolean readOnly;

  Log(Database db, Engine engine, String name, boolean readOnly) {
    this.db = db;
    this.engine = engine;
    this.name = name;
    this.readOnly = readOnly;
    handle(); // the table exists and has a tail
  }

  /**
   * A new log's sizing (when seal cuts the memtable, the log's segment size) and its first offset (a
   * retired log's successor starts where it ended: {@link #retire()}).
   */
  public record Config(long sealRows, long sealAgeMillis, long segmentBytes, long startOffset, String publishTo,
      Map<String, String> storage) {
    public static final Config DEFAULT = new Config(TailLog.Config.DEFAULT.sealRows(),
        TailLog.Config.DEFAULT.sealAgeMillis(), TailLog.Config.DEFAULT.segmentBytes(), 0, null, Map.of());

    public Config {
      if (sealRows < 1 || sealAgeMillis < 0 || segmentBytes < 4096 || startOffset < 0) {
        throw new IllegalArgumentException("sealRows >= 1, sealAgeMillis >= 0, segmentBytes >= 4096 and "
            + "startOffset >= 0");
      }
      storage = Map.copyOf(storage);
      if (publishTo != null) {
        dev.floe.tail.Published.check(publishTo, storage);
      }
    }

    public Config(long sealRows, long sealAgeMillis, long segmentBytes) {
      this(sealRows, sealAgeMillis, segmentBytes, 0, null, Map.of());
    }

    /** This sizing, starting at {@code offset}. */
    public Config withStartOffset(long offset) {
      return new Config(sealRows, sealAgeMillis, segmentBytes, offset, publishTo, storage);
    }

    /**
     * This sizing, publishing to a table at {@code location} ({@code s3://bucket/path}) on object
     * storage: sealed rows are staged in the local table and published there ({@link Log#publish}).
     * {@code storage} are Iceberg S3FileIO properties, e.g. {@code s3.endpoint},
     * {@code s3.path-style-access}, {@code client.region}; credentials come from the AWS default chain
     * and are refused here.
     */
    public Config withPublishTo(String location, Map<String, String> storage) {
      return new Config(sealRows, sealAgeMillis, segmentBytes, startOffset, location, storage);
    }

    String withClause() {
      StringBuilder with = new StringBuilder("'floe.tail.seal-rows' = '" + sealRows + "', 'floe.tail.seal-age-ms' = '"
          + sealAgeMillis + "', 'floe.tail.segment-bytes' = '" + segmentBytes + "'"
          + (startOffset > 0 ? ", '" + FloeProperties.TAIL_START + "' = '" + startOffset + "'" : ""));
      if (publishTo != null) {
        with.append(", publish_to = ").append(Lexer.quoteString(publishTo));
        storage.forEach((k, v) -> with.append(", ").append(Lexer.quoteString(FloeProperties.PUBLISH_STORAGE_PREFIX + k))
            .append(" = ").append(Lexer.quoteString(v)));
      }
      return with.toString();
    }
  }

  /** The table's open tail; looked up again once it was closed (the table was dropped or altered). */
  private Engine.TailHandle handle() {
    db.checkOpen();
    Engine.TailHandle h = cached;
    if (h == null || !h.log().isOpen()) {
      h = engine.tail(dev.floe.sql.Parser.parseName(name).parts(), dev.floe.catalog.Warehouse.DEFAULT_NAMESPACE);
      cached = h;
    }
    return h;
  }

  private volatile Engine.TailHandle cached;

  private Engine.TailHandle writable() {
    if (readOnly) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION, "log \"" + name + "\" is open read-only");
    }
    return handle();
  }

  /** The log's table name, as given. */
  public String name() {
    return name;
  }

  /**
   * Appends one row: its values in column order (every column but {@code _offset}). Returns once the
   * row is durable.
   *
   * @return the row's offset
   * @throws FloeException if the row does not fit the columns (nothing is written then)
   */
  public long append(Object... values) {
    return extend(List.<Object>of((Object) values));
  }

  /** Appends one row given by column name; columns not named are NULL. */
  public long append(Map<String, ?> row) {
    return extend(List.of(row));
  }

  /**
   * Appends rows (each an {@code Object[]} or {@code List} of values in column order, or a {@code Map}
   * by column name) as one log record: one fsync, all or none.
   *
   * @return the offset of the first row; the others follow it densely
   */
  public long extend(List<?> rows) {
    Objects.requireNonNull(rows, "rows");
    try {
      return extendOnce(rows);
    } catch (FloeException e) {
      if (!SqlState.SERIALIZATION_FAILURE.equals(e.sqlState())) {
        throw e;
      }
      // the log was closed under this append (an ALTER reopens it on the new schema): nothing was
      // written, so the rows are checked against the table as it is now and appended again, once
      cached = null;
      return extendOnce(rows);
    }
  }

  private long extendOnce(List<?> rows) {
    Engine.TailHandle h = writable();
    List<Object[]> checked = new ArrayList<>(rows.size());
    for (Object row : rows) {
      checked.add(h.values().row(row));
    }
    return h.log().extend(checked);
  }

  /** Checks a row exactly as {@link #append} would, writing nothing. */
  public void validateRow(Object row) {
    handle().values().row(row);
  }

  /** The offset the next appended row will get. */
  public long endOffset() {
    return handle().log().endOffset();
  }

  /** Rows appended and not yet sealed into the table. */
  public long bufferedRows() {
    return handle().log().bufferedRows();
  }

  /** Every row with a lower offset is in the table's files. */
  public long sealedThrough() {
    return handle().log().sealedThrough();
  }

  /**
   * Every row with a lower offset is in the published table: for a local table, which sealing commits
   * to directly, {@link #sealedThrough()}; for a table on object storage, as far as this process knows
   * (after a restart, until its first publish, what the staging table let go of).
   */
  public long publishedThrough() {
    return handle().log().publishedThrough();
  }

  /**
   * Seals the unsealed rows into the table if the memtable reached its size or age trigger, or always
   * with {@code flush}.
   *
   * @return the number of rows sealed
   */
  public long seal(boolean flush) {
    return writable().log().seal(flush);
  }

  /**
   * Publishes every sealed row to the published table on object storage: the staged files are
   * uploaded and committed there in one snapshot (the staging table lets them go at the next
   * {@link #evict}). For a local table, which sealing commits to directly, there is nothing to do.
   *
   * @return {@link #publishedThrough()}
   * @throws FloeException 58030 when object storage cannot be reached (the staged rows stay, readable,
   *     for the next publish), 55000 when another process publishes to the same table
   */
  public long publish() {
    return writable().log().publish(true);
  }

  /**
   * Merges runs of small sealed files into files of the table's target size
   * ({@code write.target-file-size-bytes}); with {@code all}, every run of two or more files.
   *
   * @return the number of files rewritten
   */
  public int compact(boolean all) {
    return writable().log().compact(all);
  }

  /**
   * Writes rows that are already durable elsewhere (a file, a stream that can be replayed) straight
   * into the table as Parquet at its target size, without the log: cheaper than {@link #extend} for
   * bulk loads. Columns are matched by name (those not given are NULL or their default) and checked as
   * an INSERT checks them; the rows get the next offsets, densely. Appends wait while it runs, and
   * every row appended before it is sealed first.
   *
   * @return the offset of the first ingested row
   */
  public long ingest(org.apache.arrow.vector.ipc.ArrowReader batches) {
    Objects.requireNonNull(batches, "batches");
    return engine.ingestTail(writable().id(), batches)[0];
  }

  /**
   * Ends the log: appends are refused from here on, every acknowledged row is sealed (and small files
   * compacted) into the table, the log's files are deleted, and the table becomes a plain table
   * (its {@code _offset} column stays). A successor log continues the offsets with
   * {@code Config.withStartOffset(returned value)}.
   *
   * @return the offset after the last row the log acknowledged
   */
  public long retire() {
    Engine.TailHandle h = writable();
    long end = engine.retireTail(h.id());
    cached = null;
    return end;
  }

  /**
   * Expires the table's snapshots that were replaced more than the grace period ago (table property
   * {@code floe.tail.grace-ms}, default 10 minutes), deleting the files only they named: scans that
   * started on them have had that long to finish.
   *
   * @return the number of snapshots expired
   */
  public int reclaim() {
    return writable().log().reclaim();
  }

  /**
   * Deletes files in the table's data and metadata directories that no snapshot or metadata file
   * names and that are older than the grace period: what a crashed seal or commit left behind.
   *
   * @return the number of files deleted
   */
  public int sweep() {
    return writable().log().sweep();
  }

  /** The log's segment files on disk (the writer's). */
  public int segmentsOnDisk() {
    return writable().log().segments();
  }

  /** Deletes log segments whose rows the table holds. Returns the number deleted. */
  public int evict() {
    return writable().log().evict();
  }

  /**
   * Runs the tiers in order: seal (by its triggers, or everything with {@code flush}), compact (with
   * {@code flush}, every run of small files), publish (staged files once settled, table property
   * {@code floe.tail.publish-age-ms}, or all with {@code flush}), evict, reclaim, sweep. A failed
   * publish stops only the publish: eviction, reclaim and sweep still run, then its error is raised.
   *
   * @return the number of rows sealed
   */
  public long advance(boolean flush) {
    return writable().log().advance(flush, true);
  }

  /**
   * Runs a query in which {@code log} names this log's rows (all tiers, each row once).
   *
   * @throws FloeException with the query's SQLSTATE
   */
  public Result sql(String query) {
    Objects.requireNonNull(query, "query");
    String relation = "log AS (SELECT * FROM " + qualified() + ")";
    List<dev.floe.sql.Token> tokens = Lexer.tokenize(query);
    String text;
    if (!tokens.isEmpty() && tokens.get(0).isKeyword("with")) {
      int at = tokens.size() > 1 && tokens.get(1).isKeyword("recursive") ? 1 : 0;
      int end = tokens.get(at).end();
      text = query.substring(0, end) + " " + relation + "," + query.substring(end);
    } else {
      text = "WITH " + relation + " " + query;
    }
    return db.sql(text);
  }

  /**
   * The rows with offsets in [{@code startOffset}, {@code endOffset}) that satisfy {@code where} (SQL,
   * or null for all), in offset order, with the given columns (null or empty: all).
   */
  public Result scan(List<String> columns, String where, long startOffset, long endOffset) {
    String select = columns == null || columns.isEmpty() ? "*"
        : String.join(", ", columns.stream().map(Lexer::quoteIdentifier).toList());
    String offset = Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN);
    return db.sql("SELECT " + select + " FROM " + qualified() + " WHERE " + offset + " >= " + startOffset + " AND "
        + offset + " < " + endOffset + (where == null || where.isBlank() ? "" : " AND (" + where + ")")
        + " ORDER BY " + offset);
  }

  /** One column's statistics over a tier: its bounds (as {@link #append} takes values) and NULL count. */
  public record ColumnStatistics(Object min, Object max, long nullCount) {}

  /** A tier's row count and its columns' statistics, by column name. */
  public record TierStatistics(String tier, long rows, Map<String, ColumnStatistics> columns) {}

  /**
   * Column statistics of one tier, kept locally: {@code "memtable"} (rows not sealed yet, exact bounds
   * kept as rows arrive) or {@code "table"} (the sealed files of the table's current snapshot, from
   * their Iceberg metrics; string bounds may be truncated, and rows deleted since still count). A
   * query's filter skips a tier whose bounds rule it out, as Iceberg skips a file.
   *
   * @throws FloeException 22023 for another tier name
   */
  public TierStatistics columnStatistics(String tier) {
    Engine.TailHandle h = handle();
    dev.floe.tail.ColumnBounds.Summary summary = switch (tier) {
      case "memtable" -> h.log().memtableBounds();
      case "table" -> engine.fileBounds(h.id());
      case "published" -> engine.publishedBounds(h.id());
      default -> throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "no tier \"" + tier
          + "\": the tiers are \"memtable\", \"table\" and \"published\"");
    };
    Map<String, ColumnStatistics> columns = new java.util.LinkedHashMap<>();
    for (org.apache.iceberg.types.Types.NestedField f : h.log().schema().columns()) {
      dev.floe.tail.ColumnBounds.Column c = summary.columns().get(f.name());
      if (c != null) {
        columns.put(f.name(), new ColumnStatistics(dev.floe.tail.RowValues.toJava(f.type(), c.lower()),
            dev.floe.tail.RowValues.toJava(f.type(), c.upper()), c.nulls()));
      }
    }
    return new TierStatistics(tier, summary.rows(), columns);
  }

  private String qualified() {
    Engine.TailHandle h = handle();
    return Lexer.quoteIdentifier(h.id().namespace().level(0)) + "." + Lexer.quoteIdentifier(h.id().name());
  }
}
