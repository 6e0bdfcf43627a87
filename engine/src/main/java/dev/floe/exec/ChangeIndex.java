package dev.floe.exec;

import dev.floe.catalog.TableFiles;
import dev.floe.cdc.FoldedColumns;
import dev.floe.read.ScanPlan;
import dev.floe.read.ScanSql;
import dev.floe.sql.Lexer;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBConnection;

/**
 * What a change stream's large batches ({@link ChangeBulk}) look up instead of scanning, kept in this
 * process's memory between them (docs/decisions/0010), for a target whose key is one integer column: per
 * key, where its state row is and what of it decides a batch's merge without its values (its deletion,
 * the newest of its writes, since when it is dead), and where its row in the target is.
 *
 * <p>A batch whose every write of a key is newer than all the key's stored writes (or deleted after
 * them), as a stream delivered in order is, needs none of the stored values: the batch overwrites every
 * cell. Such a key's stored row is taken from here; any other key's is read from the state table, by a
 * scan filtered to those keys. The target's rows of the changed keys are found here too, so a batch no
 * longer scans the whole state and the whole target's keys, costs that grew with the tables rather than
 * with the batch.
 *
 * <p>The Iceberg tables stay the record: the index is a copy of them as of one snapshot of each, used only
 * by a batch that reads exactly those snapshots. It is built by one scan of both, and after a batch
 * commits it is brought forward (the rows the batch wrote read back) only if the batch's commits sit
 * directly on the snapshots it read. Anything else (a compaction, an UPDATE of the target, a batch folded
 * in Java, another process) leaves it stale; the next batch scans as without it, and builds it again.
 */
final class ChangeIndex {
  /**
   * {@code auto} (the default: for streams of whole rows, built again after going stale if the last one was
   * used, or after {@value #RETRY_AFTER} batches without one), {@code always} (built by every batch that
   * finds none, whatever the stream), {@code never}.
   */
  static final String MODE_PROPERTY = "floe.cdc.index";
  /** How many batches found their keys here (for tests: that it is used, and when). */
  static final java.util.concurrent.atomic.AtomicLong USES = new java.util.concurrent.atomic.AtomicLong();
  /** How many times an index was built. */
  static final java.util.concurrent.atomic.AtomicLong BUILDS = new java.util.concurrent.atomic.AtomicLong();
  /** How many times an index was brought forward over another writer's rewrites rather than built again. */
  static final java.util.concurrent.atomic.AtomicLong CAUGHT_UP = new java.util.concurrent.atomic.AtomicLong();
  /** How many times an index grew (for tests: that keys past its first size were kept). */
  static final java.util.concurrent.atomic.AtomicLong GROWN = new java.util.concurrent.atomic.AtomicLong();
  /** Bytes a slot costs. */
  private static final int SLOT_BYTES = 6 * 8;
  /** A batch that finds no index builds one after this many batches without it, even if the last went unused. */
  private static final int RETRY_AFTER = 8;
  static final long NONE = Long.MIN_VALUE;
  private static final int POSITION_BITS = 40;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ChangeIndex.class);

  /** Per engine, per state table: the index, and how the last one fared. */
  private static final Map<Engine, Map<String, Slot>> INDEXES = Collections.synchronizedMap(new WeakHashMap<>());

  private static final class Slot {
    ChangeIndex index;
    boolean lastUsed = true;
    int without;
  }

  /** What it was built for: the state table, the key's field id and type. */
  private final String layout;
  private long stateSnapshot;
  private long targetSnapshot;
  private boolean used;

  private final Files stateFiles = new Files();
  private final Files targetFiles = new Files();

  /**
   * The slots, {@value #WIDTH} longs each, side by side so that a lookup touches one cache line: the key,
   * its state row's file number and position ({@link #location}; {@link #NONE}: none; {@link #EMPTY}: the
   * slot is free), its target row's, the stored deletion, the newest of the stored writes (its marker's
   * and cells' timestamps), and since when the stored row is dead ({@link #NONE}: none of these).
   */
  private long[] slots;
  private int capacity;
  private int size;
  private static final int WIDTH = 6;
  private static final int KEY = 0;
  private static final int STATE_ROW = 1;
  private static final int TARGET_ROW = 2;
  private static final int DELETED_AT = 3;
  private static final int NEWEST = 4;
  private static final int DEAD_SINCE = 5;
  private static final long EMPTY = Long.MIN_VALUE + 1;

  private ChangeIndex(String layout, long expected) {
    this.layout = layout;
    allocate(capacity(expected));
  }

  /** Data files by number, as DuckDB's scan names them ({@link TableFiles#path}). */
  private static final class Files {
    final List<String> paths = new ArrayList<>();
    final Map<String, Integer> numbers = new HashMap<>();

    int number(String path) {
      return numbers.computeIfAbsent(path, p -> {
        paths.add(p);
        return paths.size() - 1;
      });
    }

    /** The numbers of the files at these locations that have one. */
    java.util.Set<Integer> numbersOf(FileIO io, List<String> locations) {
      java.util.Set<Integer> out = new java.util.HashSet<>();
      for (String l : locations) {
        Integer n = numbers.get(TableFiles.path(io, l).toString());
        if (n != null) {
          out.add(n);
        }
      }
      return out;
    }
  }

  /** Most slots: six longs each stay within one Java array. */
  private static final int MAX_CAPACITY = 1 << 28;

  private static int capacity(long expected) {
    long c = Long.highestOneBit(Math.max(16, expected * 4 / 3)) << 1;
    return (int) Math.min(c, MAX_CAPACITY);
  }

  private void allocate(int capacity) {
    this.capacity = capacity;
    slots = new long[capacity * WIDTH];
    for (int i = 0; i < capacity; i++) {
      slots[i * WIDTH + STATE_ROW] = EMPTY;
    }
  }

  /** Whether a target's stream can be indexed: a key of one integer column. */
  static boolean fits(dev.floe.cdc.TableShape shape) {
    if (shape.keySize() != 1) {
      return false;
    }
    String kind = FoldedColumns.kindOf(shape, shape.key()[0]);
    return "BIGINT".equals(kind) || "INTEGER".equals(kind) || "SMALLINT".equals(kind);
  }

  private static String mode() {
    return System.getProperty(MODE_PROPERTY, "auto");
  }

  private static String layout(ChangeState state) {
    return state.id.name() + "|" + state.fieldId(state.shape.key()[0]) + "|" + state.shape.columns()
        .get(state.shape.key()[0]).type();
  }

  private static long id(Optional<Snapshot> s) {
    return s.map(Snapshot::snapshotId).orElse(-1L);
  }

  /**
   * The index of this state table as of exactly these snapshots, built now if there is none and one is
   * worth it; null: the batch scans. Only a stream whose writes are whole rows (Debezium's after images)
   * is indexed: an LWW envelope writes some of a row's cells, so a key it updates needs the stored
   * values of the others, read from the state table all the same, and the index would only add its
   * upkeep (measured in docs/decisions/0010).
   *
   * @param wholeRows whether the stream's writes are whole rows
   */
  static ChangeIndex forBatch(Engine engine, ChangeApply apply, DuckDBConnection duck, ChangeState state,
      boolean wholeRows, Table stateTable, Optional<Snapshot> stateSnapshot, Table target,
      Optional<Snapshot> targetSnapshot) throws SQLException {
    if ("never".equals(mode()) || !fits(state.shape) || !wholeRows && !"always".equals(mode())) {
      return null;
    }
    Slot slot;
    synchronized (INDEXES) {
      slot = INDEXES.computeIfAbsent(engine, e -> new HashMap<>()).computeIfAbsent(state.id.name(), n -> new Slot());
    }
    // one batch of a target at a time (ChangeApply's lock), so the slot is this batch's alone
    ChangeIndex index = slot.index;
    if (index != null && index.layout.equals(layout(state)) && (index.stateSnapshot == id(stateSnapshot)
        && index.targetSnapshot == id(targetSnapshot)
        || index.catchUp(duck, apply, state, stateTable, stateSnapshot, target, targetSnapshot))) {
      index.used = true;
      USES.incrementAndGet();
      return index;
    }
    if (index != null) {
      slot.lastUsed = index.used;
      slot.index = null; // stale: its memory goes before another is built
    }
    boolean build = "always".equals(mode()) || slot.lastUsed || ++slot.without >= RETRY_AFTER;
    if (!build) {
      return null;
    }
    // at least as many keys as either table has live rows (the state a row per key the stream wrote,
    // the target a row per live key), at most both: sized for the larger, the index grows if need be,
    // and gives up (TooLarge) past its share of the heap
    long expected = Math.max(liveRows(stateSnapshot), liveRows(targetSnapshot));
    if (!fitsHeap(capacity(expected))) {
      LOG.debug("the change stream of {} keeps no index: {} keys would take more than a quarter of the heap",
          state.shape.table(), expected);
      return null;
    }
    slot.without = 0;
    long started = System.nanoTime();
    index = new ChangeIndex(layout(state), expected);
    try {
      index.read(duck, apply, state, stateTable, stateSnapshot, target, targetSnapshot);
    } catch (TooLarge e) {
      LOG.debug("the change stream of {} keeps no index: {}", state.shape.table(), e.getMessage());
      slot.lastUsed = false; // tried again after RETRY_AFTER batches, not by every one
      return null;
    }
    index.stateSnapshot = id(stateSnapshot);
    index.targetSnapshot = id(targetSnapshot);
    slot.index = index;
    BUILDS.incrementAndGet();
    LOG.debug("index of the change stream of {} built in {} ms: {} keys", state.shape.table(),
        (System.nanoTime() - started) / 1_000_000, index.size);
    return index;
  }

  // ---------------------------------------------------------------- over another writer's rewrites

  /**
   * Brings the index forward over commits that only moved rows, as compaction does (Iceberg's {@code replace}
   * operation: the same rows, other files): the rows of the files they added are read back, and a key whose
   * row was in a file they removed and is in none they added (a rewrite of the state that left it out) has
   * none. A stream's table and state are compacted every few batches by the maintainer, and building the
   * index again costs a scan of both tables, which grows with them; reading back what a rewrite wrote costs
   * what it rewrote. False (the index may then be half brought forward: it is dropped) when any of the
   * commits since is of another kind, or the snapshots it was built for are no longer ancestors.
   */
  private boolean catchUp(DuckDBConnection duck, ChangeApply apply, ChangeState state, Table stateTable,
      Optional<Snapshot> stateSnapshot, Table target, Optional<Snapshot> targetSnapshot) {
    Optional<Rewritten> s = Rewritten.since(stateTable, stateSnapshot, this.stateSnapshot);
    Optional<Rewritten> t = Rewritten.since(target, targetSnapshot, this.targetSnapshot);
    if (s.isEmpty() || t.isEmpty()) {
      return false;
    }
    long started = System.nanoTime();
    try {
      String written = readBack(stateTable.io(), s.get().added(), stateFiles, no -> keyColumn(state, true) + ", "
          + no + ", file_row_number, " + ChangeState.RANGE + " IS NULL AS k");
      if (written != null) {
        each(duck, apply.allocator(), "SELECT * EXCLUDE (k) FROM (" + written + ") WHERE k", (c, nulls, r) -> {
          int o = find(c[0][r]);
          if (o < 0) {
            throw new IllegalStateException("a rewrite of the state has a key the index does not: " + c[0][r]);
          }
          slots[o + STATE_ROW] = location(c[1][r], c[2][r]);
        });
      }
      written = readBack(target.io(), t.get().added(), targetFiles, no -> keyColumn(state, false) + ", " + no
          + ", file_row_number");
      if (written != null) {
        each(duck, apply.allocator(), written, (c, nulls, r) -> {
          int o = find(c[0][r]);
          if (o < 0) {
            throw new IllegalStateException("a rewrite of the table has a key the index does not: " + c[0][r]);
          }
          slots[o + TARGET_ROW] = location(c[1][r], c[2][r]);
        });
      }
    } catch (RuntimeException | SQLException e) {
      LOG.warn("the index of the change stream of {} could not follow a rewrite: {}", state.shape.table(), e.toString());
      return false;
    }
    java.util.Set<Integer> goneState = stateFiles.numbersOf(stateTable.io(), s.get().removed());
    java.util.Set<Integer> goneTarget = targetFiles.numbersOf(target.io(), t.get().removed());
    for (int o = 0; o < (goneState.isEmpty() && goneTarget.isEmpty() ? 0 : slots.length); o += WIDTH) {
      long stateRow = slots[o + STATE_ROW];
      if (stateRow != EMPTY && stateRow != NONE && goneState.contains(fileOf(stateRow))) {
        slots[o + STATE_ROW] = NONE; // left out of the rewrite: nothing is stored for the key any more
        slots[o + DELETED_AT] = NONE;
        slots[o + NEWEST] = NONE;
        slots[o + DEAD_SINCE] = NONE;
      }
      long targetRow = slots[o + TARGET_ROW];
      if (stateRow != EMPTY && targetRow != NONE && goneTarget.contains(fileOf(targetRow))) {
        slots[o + TARGET_ROW] = NONE;
      }
    }
    this.stateSnapshot = id(stateSnapshot);
    this.targetSnapshot = id(targetSnapshot);
    CAUGHT_UP.incrementAndGet();
    LOG.debug("index of the change stream of {} followed {} rewritten file(s) in {} ms", state.shape.table(),
        s.get().added().size() + t.get().added().size(), (System.nanoTime() - started) / 1_000_000);
    return true;
  }

  /** What commits since a snapshot did, when each only moved rows: the data files they added and removed. */
  private record Rewritten(List<DataFile> added, List<String> removed) {
    /** Empty when a commit after {@code from} up to {@code to} is not a rewrite, or {@code from} is not an ancestor. */
    static Optional<Rewritten> since(Table table, Optional<Snapshot> to, long from) {
      Map<String, DataFile> added = new HashMap<>();
      java.util.Set<String> removed = new java.util.HashSet<>();
      Snapshot s = to.orElse(null);
      for (long at = id(to); at != from; ) {
        if (s == null || !org.apache.iceberg.DataOperations.REPLACE.equals(s.operation()) || s.parentId() == null) {
          return Optional.empty();
        }
        org.apache.iceberg.SnapshotChanges changes = org.apache.iceberg.SnapshotChanges.builderFor(table).snapshot(s)
            .build();
        changes.addedDataFiles().forEach(f -> added.put(f.location(), f));
        changes.removedDataFiles().forEach(f -> removed.add(f.location()));
        at = s.parentId();
        s = table.snapshot(at); // gone once expired (a compaction's expiry often takes its parent): enough if it is `from`
      }
      // a file both added and removed since came and went: neither read back nor forgotten
      List<String> gone = removed.stream().filter(f -> added.remove(f) == null).toList();
      return Optional.of(new Rewritten(List.copyOf(added.values()), gone));
    }
  }

  /** A snapshot's rows less its position-deleted ones, by its summary (0 where it says nothing). */
  private static long liveRows(Optional<Snapshot> s) {
    if (s.isEmpty() || s.get().summary() == null) {
      return 0;
    }
    try {
      return Math.max(0, Long.parseLong(s.get().summary().getOrDefault("total-records", "0"))
          - Long.parseLong(s.get().summary().getOrDefault("total-position-deletes", "0")));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The newest of a state row's writes, in SQL over alias {@code s}: its marker's and cells' timestamps. */
  private static String newestSql(ChangeState state, String s) {
    String q = s == null ? "" : s + ".";
    StringBuilder b = new StringBuilder("greatest(" + q + ChangeState.MARKER_TS);
    for (int c : state.shape.cells()) {
      b.append(", ").append(q).append(ChangeState.ts(state.fieldId(c)));
    }
    return b.append(')').toString();
  }

  private static String keyColumn(ChangeState state, boolean stateTable) {
    int k = state.shape.key()[0];
    return stateTable ? ChangeState.value(state.fieldId(k))
        : Lexer.quoteIdentifier(state.shape.columns().get(k).name());
  }

  /** Reads every state row and every target row's key and place. */
  private void read(DuckDBConnection duck, ChangeApply apply, ChangeState state, Table stateTable,
      Optional<Snapshot> stateSnapshot, Table target, Optional<Snapshot> targetSnapshot) throws SQLException {
    if (stateSnapshot.isPresent()) {
      ScanPlan plan = ScanPlan.plan(apply.planner(), stateTable, stateSnapshot, Expressions.alwaysTrue(), false);
      String sql = scan(apply, plan, stateFiles, "s", no -> "s." + keyColumn(state, true) + ", " + no + ", s."
          + ScanSql.ROW_POSITION + ", s." + ChangeState.DELETED_AT + ", " + newestSql(state, "s") + ", s."
          + ChangeState.DEAD_SINCE, " WHERE s." + ChangeState.RANGE + " IS NULL");
      if (sql != null) {
        each(duck, apply.allocator(), sql, this::stored);
      }
    }
    if (targetSnapshot.isPresent()) {
      ScanPlan plan = ScanPlan.plan(apply.planner(), target, targetSnapshot, Expressions.alwaysTrue(), false);
      String sql = scan(apply, plan, targetFiles, "r", no -> "r." + keyColumn(state, false) + ", " + no + ", r."
          + ScanSql.ROW_POSITION, "");
      if (sql != null) {
        each(duck, apply.allocator(), sql, this::targetRow);
      }
    }
  }

  /**
   * SQL of {@code select} (given the SQL of the row's file number) over the plan's rows (as {@code alias}),
   * numbering the files in {@code files}; null when the plan has no file.
   */
  private static String scan(ChangeApply apply, ScanPlan plan, Files files, String alias,
      java.util.function.Function<String, String> select, String where) {
    if (plan.tasks().isEmpty()) {
      return null;
    }
    FileIO io = plan.table().io();
    return "SELECT " + select.apply(fileNumbers(io, plan, files, alias + "." + ScanSql.ROW_FILE)) + " FROM ("
        + ScanSql.relation(plan, io, apply.files(), true) + ") AS " + alias + where;
  }

  /** A state row read: key, file number, position, deletion, newest write, dead-since. */
  private void stored(long[][] c, boolean[][] nulls, int r) {
    int i = put(c[0][r]);
    slots[i + STATE_ROW] = location(c[1][r], c[2][r]);
    slots[i + TARGET_ROW] = NONE; // a changed key's row was deleted; a live one's new row is read after
    slots[i + DELETED_AT] = nulls[3][r] ? NONE : c[3][r];
    slots[i + NEWEST] = nulls[4][r] ? NONE : c[4][r];
    slots[i + DEAD_SINCE] = nulls[5][r] ? NONE : c[5][r];
  }

  /** A target row read: key, file number, position. */
  private void targetRow(long[][] c, boolean[][] nulls, int r) {
    int i = put(c[0][r]); // first: a put that grows the index replaces the array (Java reads an array before its index)
    slots[i + TARGET_ROW] = location(c[1][r], c[2][r]);
  }

  /** How many rows' slots {@link #each} reads ahead of putting them. */
  private static final int PREFETCH = 32;
  /** Where the slots read ahead go (so that the reads are not optimized away). */
  private long touched;

  /** What takes the rows of {@link #each}, one at a time, from columns of a batch of them. */
  private interface Rows {
    void row(long[][] columns, boolean[][] nulls, int row);
  }

  /**
   * Runs a query of integer columns and hands each row over (its columns as longs), read as Arrow batches
   * rather than row by row over JDBC.
   */
  private void each(DuckDBConnection duck, org.apache.arrow.memory.BufferAllocator allocator, String sql,
      Rows rows) throws SQLException {
    try (java.sql.PreparedStatement ps = duck.prepareStatement("SELECT CAST(COLUMNS(*) AS BIGINT) FROM (" + sql + ")");
        ResultSet rs = ps.executeQuery();
        org.apache.arrow.vector.ipc.ArrowReader reader = (org.apache.arrow.vector.ipc.ArrowReader) rs.unwrap(
            org.duckdb.DuckDBResultSet.class).arrowExportStream(allocator, 1 << 16)) {
      org.apache.arrow.vector.VectorSchemaRoot root = reader.getVectorSchemaRoot();
      int width = root.getFieldVectors().size();
      long[][] columns = new long[width][];
      boolean[][] nulls = new boolean[width][];
      while (reader.loadNextBatch()) {
        int n = root.getRowCount();
        for (int c = 0; c < width; c++) {
          org.apache.arrow.vector.FieldVector v = root.getVector(c);
          long[] values = columns[c] == null || columns[c].length < n ? new long[n] : columns[c];
          boolean[] isNull = nulls[c] == null || nulls[c].length < n ? new boolean[n] : nulls[c];
          v.getDataBuffer().nioBuffer(0, n * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(values, 0, n);
          boolean any = v.getNullCount() > 0;
          for (int r = 0; r < n; r++) {
            isNull[r] = any && v.isNull(r);
          }
          columns[c] = values;
          nulls[c] = isNull;
        }
        long[] keys = columns[0];
        for (int from = 0; from < n; from += PREFETCH) {
          int to = Math.min(n, from + PREFETCH);
          // the block's slots first, loads that do not wait on one another, so the puts find them cached
          long touched = 0;
          for (int r = from; r < to; r++) {
            touched += slots[home(keys[r]) * WIDTH];
          }
          this.touched = touched;
          for (int r = from; r < to; r++) {
            rows.row(columns, nulls, r);
          }
        }
      }
    } catch (java.io.IOException e) {
      throw new SQLException(e.getMessage(), e);
    }
  }

  /** SQL of a scanned row's file number, from its file's name ({@code fileName}), every file numbered. */
  private static String fileNumbers(FileIO io, ScanPlan plan, Files files, String fileName) {
    StringBuilder list = new StringBuilder();
    List<Integer> numbers = new ArrayList<>();
    for (FileScanTask t : plan.tasks()) {
      String path = TableFiles.path(io, t.file().location()).toString();
      list.append(list.length() > 0 ? ", " : "").append(Lexer.quoteString(path));
      numbers.add(files.number(path));
    }
    return "CAST(" + numbers + "[list_position([" + list + "], " + fileName + ")] AS INTEGER)";
  }

  private static long location(long file, long position) {
    if (position < 0 || position >= 1L << POSITION_BITS) {
      throw new IllegalStateException("a row position out of the index's range: " + position);
    }
    return file << POSITION_BITS | position;
  }

  private static int fileOf(long location) {
    return (int) (location >>> POSITION_BITS);
  }

  private static long positionOf(long location) {
    return location & ((1L << POSITION_BITS) - 1);
  }

  private int home(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32)) & (capacity - 1);
  }

  /** The offset of {@code key}'s slot in {@link #slots}, or -1. */
  private int find(long key) {
    for (int i = home(key); ; i = (i + 1) & (capacity - 1)) {
      int o = i * WIDTH;
      if (slots[o + STATE_ROW] == EMPTY) {
        return -1;
      }
      if (slots[o + KEY] == key) {
        return o;
      }
    }
  }

  /** The offset of {@code key}'s slot, added (nothing stored, no target row) if it had none. */
  private int put(long key) {
    if ((size + 1) * 4L > capacity * 3L) {
      grow();
    }
    for (int i = home(key); ; i = (i + 1) & (capacity - 1)) {
      int o = i * WIDTH;
      if (slots[o + STATE_ROW] == EMPTY) {
        slots[o + KEY] = key;
        slots[o + STATE_ROW] = NONE;
        slots[o + TARGET_ROW] = NONE;
        slots[o + DELETED_AT] = NONE;
        slots[o + NEWEST] = NONE;
        slots[o + DEAD_SINCE] = NONE;
        size++;
        return o;
      }
      if (slots[o + KEY] == key) {
        return o;
      }
    }
  }

  /** Thrown when the index would take more than its share of the heap: it is not kept. */
  private static final class TooLarge extends RuntimeException {
    TooLarge() {
      super("the index would take more than a quarter of the heap, or more than 2^28 slots", null, false, false);
    }
  }

  private static boolean fitsHeap(long capacity) {
    return capacity * SLOT_BYTES <= Runtime.getRuntime().maxMemory() / 4;
  }

  private void grow() {
    if (capacity >= MAX_CAPACITY || !fitsHeap(capacity * 2L)) {
      throw new TooLarge();
    }
    GROWN.incrementAndGet();
    long[] old = slots;
    allocate(capacity * 2);
    size = 0;
    for (int o = 0; o < old.length; o += WIDTH) {
      if (old[o + STATE_ROW] != EMPTY) {
        System.arraycopy(old, o + 1, slots, put(old[o + KEY]) + 1, WIDTH - 1);
      }
    }
  }

  // ---------------------------------------------------------------- a batch's lookups

  /** The temp tables of the file names the batch's hits refer to ({@code no}, {@code path}). */
  static final String STATE_FILES = "__floe_cdc_hit_sfiles";
  static final String TARGET_FILES = "__floe_cdc_hit_tfiles";

  /**
   * What a batch found here, a value per folded row ({@link #NONE}: none): its state row's file number and
   * position, its target row's, the stored deletion, the newest stored write, since when the stored row is
   * dead, and whether the stored row is taken from here ({@code kept}: there is one, and the batch
   * overwrites it whole, so its values are not needed); with how many stored rows must be read from the
   * state table ({@code read}), how many are taken from here, and how many keys without a state row the batch
   * does not overwrite whole, whose table rows are their stored rows ({@code tableRows},
   * {@link ChangeState#TABLE_ROW_TS}).
   */
  record Hits(long[] stateFile, long[] statePosition, long[] targetFile, long[] targetPosition, long[] deletedAt,
      long[] newest, long[] deadSince, long[] kept, long read, long keptCount, long tableRows) {}

  /**
   * Looks up the batch's keys, and makes {@value #STATE_FILES} and {@value #TARGET_FILES} of the file
   * names the hits refer to.
   *
   * @param everything the stored range deletion of every row's timestamp, or null
   */
  Hits lookup(DuckDBConnection duck, FoldedColumns f, Long everything) throws SQLException {
    long[][] c = new long[8][f.size];
    // the keys in a few ranges on every core (the slots are only read), each range a block at a time: the
    // block's slots loaded first, loads that do not wait on one another, then read while they are cached
    int ranges = f.size < 2 * lookupRange ? 1 : Math.max(1, Runtime.getRuntime().availableProcessors());
    long[][] counts = new long[ranges][];
    java.util.stream.IntStream.range(0, ranges).parallel().forEach(r -> counts[r] = lookup(f, everything, c,
        (int) ((long) f.size * r / ranges), (int) ((long) f.size * (r + 1) / ranges)));
    long read = 0;
    long kept = 0;
    long tableRows = 0;
    for (long[] n : counts) {
      read += n[0];
      kept += n[1];
      tableRows += n[2];
    }
    files(duck, STATE_FILES, stateFiles);
    files(duck, TARGET_FILES, targetFiles);
    return new Hits(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], read, kept, tableRows);
  }

  /** Below twice this many keys a batch is looked up on one thread (tests lower it to split small batches). */
  static volatile int lookupRange = 50_000;

  /**
   * Looks up keys {@code from} to {@code to} into {@code c} ({@link Hits}' columns): {stored rows read, kept,
   * table rows read}.
   */
  private long[] lookup(FoldedColumns f, Long everything, long[][] c, int from, int to) {
    long[] k = (long[]) f.keys[0];
    long read = 0;
    long kept = 0;
    long tableRows = 0;
    long touched = 0;
    for (int block = from; block < to; block += PREFETCH) {
      int end = Math.min(to, block + PREFETCH);
      for (int i = block; i < end; i++) {
        touched += slots[home(k[i]) * WIDTH];
      }
      for (int i = block; i < end; i++) {
        int o = find(k[i]);
        long stateRow = o < 0 ? NONE : slots[o + STATE_ROW];
        long targetRow = o < 0 ? NONE : slots[o + TARGET_ROW];
        c[0][i] = stateRow == NONE ? NONE : fileOf(stateRow);
        c[1][i] = stateRow == NONE ? NONE : positionOf(stateRow);
        c[2][i] = targetRow == NONE ? NONE : fileOf(targetRow);
        c[3][i] = targetRow == NONE ? NONE : positionOf(targetRow);
        c[4][i] = o < 0 ? NONE : slots[o + DELETED_AT];
        c[5][i] = o < 0 ? NONE : slots[o + NEWEST];
        c[6][i] = o < 0 ? NONE : slots[o + DEAD_SINCE];
        long deletion = Math.max(Math.max(f.deletedAt[i], c[4][i]), everything == null ? NONE : everything);
        if (stateRow != NONE) {
          if (overwrites(f, i, c[5][i], deletion)) {
            c[7][i] = 1;
            kept++;
          } else {
            read++;
          }
        } else if (targetRow != NONE && !overwrites(f, i, ChangeState.TABLE_ROW_TS, deletion)) {
          tableRows++;
        }
      }
    }
    this.touched = touched; // so that the loads are not optimized away (a racy write of a value never read)
    return new long[] {read, kept, tableRows};
  }

  /**
   * Whether the batch's writes of key {@code i} leave none of its stored writes standing, so that the
   * merge needs none of their values or timestamps: each cell and the marker written by the batch after
   * {@code newest} (the stored row's newest write), or else deleted ({@code d}, the key's deletion after
   * the batch) at or after it. Then a stored row with every timestamp equal to {@code newest} and no
   * values merges to the same row as the stored one.
   */
  private static boolean overwrites(FoldedColumns f, int i, long newest, long d) {
    if (newest == NONE) {
      return true; // nothing stored but a deletion
    }
    boolean deleted = d != NONE && d >= newest;
    if (!(f.markerAt[i] != NONE ? f.markerAt[i] > newest : deleted)) {
      return false;
    }
    for (long[] cell : f.cellAt) {
      if (!(cell[i] != NONE ? cell[i] > newest : deleted)) {
        return false;
      }
    }
    return true;
  }

  private static void files(DuckDBConnection duck, String table, Files files) throws SQLException {
    try (Statement st = duck.createStatement()) {
      StringBuilder values = new StringBuilder();
      for (int i = 0; i < files.paths.size(); i++) {
        values.append(values.length() > 0 ? ", " : "").append('(').append(i).append(", ")
            .append(Lexer.quoteString(files.paths.get(i))).append(')');
      }
      st.execute("CREATE OR REPLACE TEMP TABLE " + table + " (no INTEGER, path VARCHAR)");
      if (values.length() > 0) {
        st.execute("INSERT INTO " + table + " VALUES " + values);
      }
    }
  }

  // ---------------------------------------------------------------- after a batch commits

  /**
   * Brings the index forward over a batch that committed the given changes, reading back the rows it
   * wrote, or drops it when the commits do not sit directly on the snapshots it was built for or a file
   * it names was rewritten. It never fails the batch: an index it cannot bring forward is dropped.
   *
   * @param forgotten SQL of the keys ({@code k0}) whose state rows the batch deleted and did not write again
   */
  void follow(Engine engine, DuckDBConnection duck, ChangeApply apply, ChangeState state, Table stateTable,
      Table target, dev.floe.write.DeltaWriter.Delta stateDelta, dev.floe.write.DeltaWriter.Delta targetDelta,
      dev.floe.commit.Committed stateCommit, dev.floe.commit.Committed targetCommit, String forgotten) {
    long started = System.nanoTime();
    boolean direct = sitsOn(stateCommit, stateSnapshot) && (targetCommit == null || sitsOn(targetCommit, targetSnapshot))
        && stateDelta.removedDataFiles().isEmpty() && (targetDelta == null || targetDelta.removedDataFiles().isEmpty());
    if (!direct) {
      drop(engine, state);
      return;
    }
    try {
      each(duck, apply.allocator(), "SELECT CAST(k0 AS BIGINT) FROM (" + forgotten + ")", (c, nulls, r) -> {
        int o = find(c[0][r]);
        if (o >= 0) {
          slots[o + STATE_ROW] = NONE;
          slots[o + TARGET_ROW] = NONE;
          slots[o + DELETED_AT] = NONE;
          slots[o + NEWEST] = NONE;
          slots[o + DEAD_SINCE] = NONE;
        }
      });
      String written = readBack(stateTable.io(), stateDelta.addedDataFiles(), stateFiles, no -> keyColumn(state, true)
          + ", " + no + ", file_row_number, " + ChangeState.DELETED_AT + ", " + newestSql(state, null) + ", "
          + ChangeState.DEAD_SINCE);
      if (written != null) {
        each(duck, apply.allocator(), written, this::stored);
      }
      written = targetDelta == null ? null : readBack(target.io(), targetDelta.addedDataFiles(), targetFiles,
          no -> keyColumn(state, false) + ", " + no + ", file_row_number");
      if (written != null) {
        each(duck, apply.allocator(), written, this::targetRow);
      }
    } catch (RuntimeException | SQLException e) {
      // the batch committed: only the index is lost, and the next batch scans
      LOG.warn("the index of the change stream of {} could not follow a batch: {}", state.shape.table(),
          e.toString());
      drop(engine, state);
      return;
    }
    stateSnapshot = stateCommit.snapshot().snapshotId();
    if (targetCommit != null) {
      targetSnapshot = targetCommit.snapshot().snapshotId();
    }
    LOG.debug("index of the change stream of {} followed in {} ms: {} keys", state.shape.table(),
        (System.nanoTime() - started) / 1_000_000, size);
  }

  private static boolean sitsOn(dev.floe.commit.Committed c, long read) {
    Snapshot s = c.snapshot();
    return s != null && (s.snapshotId() == read || s.parentId() != null && s.parentId() == read
        || s.parentId() == null && read == -1);
  }

  /** SQL of {@code select} (given the SQL of the file's number) over the rows of files just written (null: none). */
  private static String readBack(FileIO io, List<DataFile> files, Files numbers,
      java.util.function.Function<String, String> select) {
    if (files.isEmpty()) {
      return null;
    }
    List<String> locations = files.stream().map(f -> f.location().toString()).toList();
    TableFiles.fetch(io, locations);
    StringBuilder union = new StringBuilder();
    for (String l : locations) {
      String path = TableFiles.path(io, l).toString();
      union.append(union.length() > 0 ? " UNION ALL " : "").append("SELECT ")
          .append(select.apply(Integer.toString(numbers.number(path)))).append(" FROM read_parquet(")
          .append(Lexer.quoteString(path)).append(", file_row_number = true, hive_partitioning = false)");
    }
    return union.toString();
  }

  /** Forgets the index of state table {@code stateName}: its table was dropped. */
  static void forget(Engine engine, String stateName) {
    synchronized (INDEXES) {
      Map<String, Slot> slots = INDEXES.get(engine);
      if (slots != null) {
        slots.remove(stateName);
      }
    }
  }

  /** Forgets the index of a state table (the batch it would have followed could not be read back). */
  private static void drop(Engine engine, ChangeState state) {
    synchronized (INDEXES) {
      Map<String, Slot> slots = INDEXES.get(engine);
      Slot slot = slots == null ? null : slots.get(state.id.name());
      if (slot != null && slot.index != null) {
        slot.lastUsed = slot.index.used;
        slot.index = null;
      }
    }
  }

}
