package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.cdc.FoldedColumns;
import dev.floe.cdc.TableShape;
import dev.floe.read.ScanPlan;
import dev.floe.read.ScanSql;
import dev.floe.sql.Lexer;
import dev.floe.types.TypeMapping;
import dev.floe.write.DeltaWriter;
import dev.floe.write.Inserter;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBConnection;

/**
 * A large batch of changes reconciled inside DuckDB, vectorized and on every core (docs/decisions/0010):
 * the batch, decoded and folded per key in columns ({@link dev.floe.cdc.DebeziumBatch},
 * {@link dev.floe.cdc.LwwBatch}: {@link FoldedColumns}), is handed to DuckDB as Arrow and merged with the
 * stored state by a join, cell by cell in Cassandra's order, and the new state rows and the target's rows
 * are written straight from those relations.
 *
 * <p>It computes exactly what the Java fold ({@link dev.floe.cdc.Fold#reconcile}, the reference) computes,
 * and takes only the batches it computes exactly: those the columnar decoders read, a state with no range
 * deletion but "everything" and no expiring cell due, no tie of two values with the stored state, and no
 * NOT NULL violation. Anything else returns null before anything is written: the caller folds the batch in
 * Java, which also reports a bad envelope precisely. {@code ChangeBulkTest} checks both paths agree.
 */
final class ChangeBulk {
  /**
   * Below this many envelopes a batch is folded in Java: planning the SQL costs more than it saves. On a
   * 1M-row table, batches of 2,000 Debezium events went at 8.4k/s in Java and 7.3k/s here, of 5,000 at
   * 12.9k/s both ways, of 10,000 at 25k/s and 30k/s, of 100,000 at 47k/s and 92k/s.
   */
  static final int MIN_EVENTS = 5_000;
  /** The system property that sets {@link #MIN_EVENTS} otherwise. */
  static final String MIN_EVENTS_PROPERTY = "floe.cdc.bulk-min-events";
  /** How many batches this path has taken (for tests: that a batch did not fall back). */
  static final java.util.concurrent.atomic.AtomicLong TAKEN = new java.util.concurrent.atomic.AtomicLong();

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ChangeBulk.class);
  private static final String ARROW = "__floe_cdc_arrow";
  private static final String FOLD = "__floe_cdc_fold";
  private static final String STORED = "__floe_cdc_stored";
  private static final String MERGED = "__floe_cdc_merged";
  private static final String TARGET_DELETED = "__floe_cdc_target_deleted";
  /** The table's rows of a batch's keys, with their places (scanned once when their values are needed). */
  private static final String TABLE_ROWS = "__floe_cdc_table_rows";

  /** What the batch writes, not yet committed. */
  record Planned(DeltaWriter.Delta state, DeltaWriter.Delta target, long changes, long keysChanged, long written,
      long deleted, long maxPosition) {}

  private final ChangeApply apply;
  private final ChangeState state;
  private final TableShape shape;
  /** When TTLs are judged, in seconds. */
  private final long now;
  /** How long a deletion is kept, in seconds ({@link ChangeState#gcGrace}). */
  private final long grace;

  ChangeBulk(ChangeApply apply, ChangeState state, long now, long grace) {
    this.apply = apply;
    this.state = state;
    this.shape = state.shape;
    this.now = now;
    this.grace = grace;
  }

  /** Whether a table's columns are all of types this path decodes (a key of integers or text). */
  static boolean fits(TableShape shape) {
    return FoldedColumns.fits(shape);
  }

  /**
   * Plans the folded batch against the state and target as of the given snapshots, with every stored
   * range deletion covering all rows at {@code everythingDeletedAt} (null: none): the files written, or
   * null when this path does not take the batch (nothing written).
   */
  Planned plan(DuckDBConnection duck, FoldedColumns folded, Table target, Optional<Snapshot> targetSnapshot,
      Table stateTable, Optional<Snapshot> stateSnapshot, Long everythingDeletedAt, ChangeIndex index) {
    Steps steps = new Steps();
    try (Statement st = duck.createStatement()) {
      ChangeIndex.Hits hits = index == null ? null : index.lookup(duck, folded, everythingDeletedAt);
      steps.done("index looked up");
      load(duck, folded, hits, steps);
      steps.done("loaded");
      st.execute(storedDdl());
      if (stateSnapshot.isPresent() && (hits == null || hits.read() > 0)) {
        // the stored rows of the batch's keys (those the index does not give)
        ScanPlan plan = ScanPlan.plan(apply.planner(), stateTable, stateSnapshot, Expressions.alwaysTrue(), false);
        st.execute("INSERT INTO " + STORED + " SELECT s." + ScanSql.ROW_FILE + ", s." + ScanSql.ROW_POSITION + ", "
            + state.selectList("s") + " FROM (" + ScanSql.relation(plan, stateTable.io(), apply.files(), true)
            + ") AS s SEMI JOIN " + (hits == null ? FOLD : "(SELECT k0 FROM " + FOLD
            + " WHERE i_sf IS NOT NULL AND NOT i_kept)") + " AS f ON " + keyJoin("f", "s", true) + " WHERE s."
            + ChangeState.RANGE + " IS NULL");
      }
      // the keys the stream has not written: their table rows are their stored rows (unless overwritten whole)
      boolean tableRowsRead = false;
      String unwritten = "SELECT * FROM " + FOLD + " AS f" + (hits == null ? " ANTI JOIN " + STORED + " AS s ON "
          + keyJoin("f", "s", true) + " WHERE " : " WHERE f.i_sf IS NULL AND f.i_tf IS NOT NULL AND ") + "NOT ("
          + overwrittenWhole("f") + ")";
      if (targetSnapshot.isPresent() && (hits != null ? hits.tableRows() : longs(st, "SELECT count(*) FROM ("
          + unwritten + ")")[0]) > 0) {
        ScanPlan plan = ScanPlan.plan(apply.planner(), target, targetSnapshot, Expressions.alwaysTrue(), false);
        String rows = ScanSql.relation(plan, target.io(), apply.files(), true);
        if (hits == null) {
          // one scan for the table's rows of every key of the batch: these, and the rows the batch replaces
          st.execute("CREATE OR REPLACE TEMP TABLE " + TABLE_ROWS + " AS SELECT * FROM (" + rows + ") AS r SEMI JOIN "
              + FOLD + " AS f ON " + keyJoin("f", "r", false));
          st.execute("INSERT INTO " + STORED + " SELECT NULL, NULL, " + state.tableRowList("t") + " FROM " + TABLE_ROWS
              + " AS t SEMI JOIN (" + unwritten + ") AS f ON " + keyJoin("f", "t", false));
          tableRowsRead = true;
        } else {
          st.execute("INSERT INTO " + STORED + " SELECT NULL, NULL, " + state.tableRowList("r") + " FROM (" + rows
              + ") AS r SEMI JOIN (" + unwritten + ") AS f ON " + keyJoin("f", "r", false));
        }
      }
      steps.done(hits == null ? "stored rows read" : "stored rows read (" + hits.keptCount() + " from the index, "
          + hits.read() + " from the state table, " + hits.tableRows() + " from the table)");
      st.execute(merge(everythingDeletedAt, hits));
      long[] merged = longs(st, "SELECT count(*) FILTER (WHERE conflict), count(*) FILTER (WHERE changed), "
          + "count(*) FILTER (WHERE changed AND live), count(*) FILTER (WHERE changed AND sfile IS NOT NULL), "
          + "count(*) FILTER (WHERE changed AND live AND NOT (" + required(target) + "))  FROM " + MERGED);
      if (merged[0] != 0 || merged[4] != 0) {
        return null; // a tie of two values; a NULL in a NOT NULL column (the Java fold's 23502)
      }
      long changes = folded.changes;
      TAKEN.incrementAndGet();
      if (merged[1] == 0) {
        return new Planned(null, null, changes, 0, 0, 0, folded.maxPosition);
      }
      steps.done("merged");
      DeltaWriter.Delta stateDelta = writeState(duck, stateTable, stateSnapshot, merged[3]);
      steps.done("state written");
      ScanPlan targetPlan = ScanPlan.plan(apply.planner(), target, targetSnapshot, Expressions.alwaysTrue(), false);
      st.execute("CREATE OR REPLACE TEMP TABLE " + TARGET_DELETED + " AS " + (hits != null
          ? "SELECT tf.path AS " + ScanSql.ROW_FILE + ", m.i_tp AS " + ScanSql.ROW_POSITION + " FROM " + MERGED
              + " AS m JOIN " + ChangeIndex.TARGET_FILES + " AS tf ON tf.no = m.i_tf WHERE m.changed"
          : tableRowsRead ? "SELECT t." + ScanSql.ROW_FILE + ", t." + ScanSql.ROW_POSITION + " FROM " + TABLE_ROWS
              + " AS t SEMI JOIN (SELECT * FROM " + MERGED + " WHERE changed) AS m ON " + keyJoin("m", "t", false)
          : "SELECT r." + ScanSql.ROW_FILE + ", r." + ScanSql.ROW_POSITION + " FROM (" + ScanSql.relation(targetPlan,
              target.io(), apply.files(), true) + ") AS r SEMI JOIN (SELECT * FROM " + MERGED
              + " WHERE changed) AS m ON " + keyJoin("m", "r", false)));
      long deleted = longs(st, "SELECT count(*) FROM " + TARGET_DELETED)[0];
      steps.done("target rows found");
      DeltaWriter.Delta targetDelta = apply.write(duck, target, targetPlan, deleted == 0 ? null
          : new DeltaWriter.Deleted("SELECT * FROM " + TARGET_DELETED, deleted, null), merged[2] == 0 ? null
          : Inserter.Rows.query(targetRows(target), merged[2]));
      steps.done("target written");
      LOG.debug("{} changes of {} reconciled in DuckDB: {}", folded.changes, shape.table(), steps);
      return new Planned(stateDelta, targetDelta, changes, merged[1], merged[2], deleted, folded.maxPosition);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot apply changes to " + shape.table() + ": "
          + e.getMessage(), e);
    }
  }

  /** How long each step of a batch took, for the debug log. */
  private static final class Steps {
    private final StringBuilder done = new StringBuilder();
    private long last = System.nanoTime();

    void done(String step) {
      long now = System.nanoTime();
      done.append(done.length() == 0 ? "" : ", ").append(step).append(' ').append((now - last) / 1_000_000).append(" ms");
      last = now;
    }

    @Override
    public String toString() {
      return done.toString();
    }
  }

  /**
   * The folded batch as the temp table {@value #FOLD}: the key ({@code k0}...), the newest deletion's and
   * row marker's positions ({@code del}, {@code mt}; NULL: none), and each cell's newest write: its position
   * ({@code p0}...; NULL: none) and value ({@code c0}...), with what the index found of each key if it was
   * looked up ({@code i_sf}, {@code i_sp}, {@code i_tf}, {@code i_tp}, {@code i_del}, {@code i_mx},
   * {@code i_ds}, {@code i_kept}: {@link ChangeIndex.Hits}), handed to DuckDB as one Arrow batch.
   */
  private void load(DuckDBConnection duck, FoldedColumns f, ChangeIndex.Hits hits, Steps steps)
      throws SQLException {
    org.apache.arrow.memory.BufferAllocator allocator = apply.allocator();
    List<org.apache.arrow.vector.FieldVector> vectors = new ArrayList<>();
    try {
      int[] key = shape.key();
      int[] cells = shape.cells();
      List<java.util.function.Supplier<org.apache.arrow.vector.FieldVector>> columns = new ArrayList<>();
      for (int k = 0; k < key.length; k++) {
        int at = k;
        columns.add(() -> vector(allocator, "k" + at, FoldedColumns.kindOf(shape, key[at]), f.keys[at], null, f.size));
      }
      columns.add(() -> longs(allocator, "del", "BIGINT", f.deletedAt, f.size));
      columns.add(() -> longs(allocator, "mt", "BIGINT", f.markerAt, f.size));
      for (int i = 0; i < cells.length; i++) {
        int at = i;
        columns.add(() -> longs(allocator, "p" + at, "BIGINT", f.cellAt[at], f.size));
        columns.add(() -> vector(allocator, "c" + at, FoldedColumns.kindOf(shape, cells[at]), f.cells[at],
            f.cellNulls[at], f.size));
      }
      if (hits != null) {
        columns.add(() -> longs(allocator, "i_sf", "INTEGER", hits.stateFile(), f.size));
        columns.add(() -> longs(allocator, "i_sp", "BIGINT", hits.statePosition(), f.size));
        columns.add(() -> longs(allocator, "i_tf", "INTEGER", hits.targetFile(), f.size));
        columns.add(() -> longs(allocator, "i_tp", "BIGINT", hits.targetPosition(), f.size));
        columns.add(() -> longs(allocator, "i_del", "BIGINT", hits.deletedAt(), f.size));
        columns.add(() -> longs(allocator, "i_mx", "BIGINT", hits.newest(), f.size));
        columns.add(() -> longs(allocator, "i_ds", "BIGINT", hits.deadSince(), f.size));
        columns.add(() -> longs(allocator, "i_kept", "BOOLEAN", hits.kept(), f.size));
      }
      // the columns filled on every core (the allocator is thread-safe), kept in order
      org.apache.arrow.vector.FieldVector[] built = new org.apache.arrow.vector.FieldVector[columns.size()];
      try {
        java.util.stream.IntStream.range(0, built.length).parallel().forEach(i -> built[i] = columns.get(i).get());
      } finally {
        for (org.apache.arrow.vector.FieldVector v : built) {
          if (v != null) {
            vectors.add(v); // closed below if this fails
          }
        }
      }
      try (org.apache.arrow.vector.VectorSchemaRoot root = new org.apache.arrow.vector.VectorSchemaRoot(vectors);
          org.apache.arrow.c.ArrowArrayStream stream = org.apache.arrow.c.ArrowArrayStream.allocateNew(allocator);
          Statement st = duck.createStatement()) {
        vectors.clear(); // the root's now
        root.setRowCount(f.size);
        steps.done("as Arrow");
        org.apache.arrow.c.Data.exportArrayStream(allocator, new OneBatch(allocator, root), stream);
        duck.registerArrowStream(ARROW, stream);
        List<String> casts = new ArrayList<>(); // what came as text: a uuid, a decimal
        for (int k = 0; k < key.length; k++) {
          cast(key[k], "k" + k, casts);
        }
        for (int i = 0; i < cells.length; i++) {
          cast(cells[i], "c" + i, casts);
        }
        st.execute("CREATE OR REPLACE TEMP TABLE " + FOLD + " AS SELECT *" + (casts.isEmpty() ? ""
            : " REPLACE (" + String.join(", ", casts) + ")") + " FROM " + ARROW);
      }
    } finally {
      vectors.forEach(org.apache.arrow.vector.FieldVector::close);
    }
  }

  /** The cast of fold column {@code name} (of table column {@code c}) to its type, if it came as text. */
  private void cast(int c, String name, List<String> casts) {
    String kind = FoldedColumns.kindOf(shape, c);
    if ("UUID".equals(kind) || "DECIMAL".equals(kind)) {
      casts.add("CAST(" + name + " AS " + TypeMapping.duckdbType(shape.columns().get(c).type()) + ") AS " + name);
    }
  }

  /**
   * A column of {@code n} values held as longs, of a kind {@link FoldedColumns#kindOf} names (positions:
   * BIGINT), {@link Long#MIN_VALUE} being NULL.
   */
  private static org.apache.arrow.vector.FieldVector longs(org.apache.arrow.memory.BufferAllocator allocator,
      String name, String kind, long[] values, int n) {
    return column(allocator, name, kind, values, i -> values[i] == Long.MIN_VALUE, n);
  }

  /** A column of {@code n} values of a kind {@link FoldedColumns#kindOf} names (nulls: none are NULL). */
  private static org.apache.arrow.vector.FieldVector vector(org.apache.arrow.memory.BufferAllocator allocator,
      String name, String kind, Object values, boolean[] nulls, int n) {
    return column(allocator, name, kind, values, nulls == null ? i -> false : i -> nulls[i], n);
  }

  private static org.apache.arrow.vector.FieldVector column(org.apache.arrow.memory.BufferAllocator allocator,
      String name, String kind, Object values, java.util.function.IntPredicate isNull, int n) {
    org.apache.arrow.vector.FieldVector v;
    java.util.function.IntConsumer set;
    switch (kind) {
      case "TEXT", "UUID", "DECIMAL" -> { // a uuid or decimal as its text, cast as the fold is made
        String[] t = (String[]) values;
        org.apache.arrow.vector.VarCharVector x = new org.apache.arrow.vector.VarCharVector(name, allocator);
        set = i -> x.setSafe(i, t[i].getBytes(java.nio.charset.StandardCharsets.UTF_8));
        v = x;
      }
      case "BOOLEAN" -> {
        long[] l = (long[]) values;
        org.apache.arrow.vector.BitVector x = new org.apache.arrow.vector.BitVector(name, allocator);
        set = i -> x.set(i, (int) l[i]);
        v = x;
      }
      case "BYTEA" -> { // one char a byte
        String[] t = (String[]) values;
        org.apache.arrow.vector.VarBinaryVector x = new org.apache.arrow.vector.VarBinaryVector(name, allocator);
        set = i -> x.setSafe(i, t[i].getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        v = x;
      }
      case "SMALLINT", "INTEGER" -> { // a smallint is an Iceberg int
        long[] l = (long[]) values;
        org.apache.arrow.vector.IntVector x = new org.apache.arrow.vector.IntVector(name, allocator);
        set = i -> x.set(i, (int) l[i]);
        v = x;
      }
      case "BIGINT" -> {
        long[] l = (long[]) values;
        org.apache.arrow.vector.BigIntVector x = new org.apache.arrow.vector.BigIntVector(name, allocator);
        set = i -> x.set(i, l[i]);
        v = x;
      }
      case "DATE" -> {
        long[] l = (long[]) values;
        org.apache.arrow.vector.DateDayVector x = new org.apache.arrow.vector.DateDayVector(name, allocator);
        set = i -> x.set(i, (int) l[i]);
        v = x;
      }
      case "TIME" -> {
        long[] l = (long[]) values;
        org.apache.arrow.vector.TimeMicroVector x = new org.apache.arrow.vector.TimeMicroVector(name, allocator);
        set = i -> x.set(i, l[i]);
        v = x;
      }
      case "TIMESTAMP" -> {
        long[] l = (long[]) values;
        org.apache.arrow.vector.TimeStampMicroVector x = new org.apache.arrow.vector.TimeStampMicroVector(name,
            allocator);
        set = i -> x.set(i, l[i]);
        v = x;
      }
      case "TIMESTAMPTZ" -> {
        long[] l = (long[]) values;
        org.apache.arrow.vector.TimeStampMicroTZVector x = new org.apache.arrow.vector.TimeStampMicroTZVector(name,
            allocator, "UTC");
        set = i -> x.set(i, l[i]);
        v = x;
      }
      case "REAL" -> {
        long[] l = (long[]) values;
        org.apache.arrow.vector.Float4Vector x = new org.apache.arrow.vector.Float4Vector(name, allocator);
        set = i -> x.set(i, (float) Double.longBitsToDouble(l[i]));
        v = x;
      }
      case "DOUBLE" -> {
        long[] l = (long[]) values;
        org.apache.arrow.vector.Float8Vector x = new org.apache.arrow.vector.Float8Vector(name, allocator);
        set = i -> x.set(i, Double.longBitsToDouble(l[i]));
        v = x;
      }
      default -> throw new IllegalArgumentException(kind);
    }
    v.setInitialCapacity(n);
    v.allocateNew(); // every value NULL until set
    for (int i = 0; i < n; i++) {
      if (!isNull.test(i)) {
        set.accept(i);
      }
    }
    v.setValueCount(n);
    return v;
  }

  /** A reader of one batch, moved out of {@code root} (which stays its owner's to close) when DuckDB reads it. */
  private static final class OneBatch extends org.apache.arrow.vector.ipc.ArrowReader {
    private org.apache.arrow.vector.VectorSchemaRoot root;

    OneBatch(org.apache.arrow.memory.BufferAllocator allocator, org.apache.arrow.vector.VectorSchemaRoot root) {
      super(allocator);
      this.root = root;
    }

    @Override
    public boolean loadNextBatch() {
      if (root == null) {
        return false;
      }
      try (org.apache.arrow.vector.ipc.message.ArrowRecordBatch batch =
          new org.apache.arrow.vector.VectorUnloader(root).getRecordBatch()) {
        new org.apache.arrow.vector.VectorLoader(getVectorSchemaRoot()).load(batch);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      root = null;
      return true;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {
      // the root is its owner's to close
    }

    @Override
    protected org.apache.arrow.vector.types.pojo.Schema readSchema() {
      return root.getSchema();
    }
  }

  /** The stored state of the batch's keys: the state table's columns with the row's file and position. */
  private String storedDdl() {
    StringBuilder ddl = new StringBuilder("CREATE OR REPLACE TEMP TABLE " + STORED + " (sfile VARCHAR, spos BIGINT");
    for (Types.NestedField f : state.schema().columns()) {
      ddl.append(", ").append(Lexer.quoteIdentifier(f.name())).append(' ').append(TypeMapping.duckdbType(f.type()));
    }
    return ddl.append(')').toString();
  }

  /**
   * Each key's state after the batch, as {@link dev.floe.cdc.Fold#reconcile} has it: the newest deletion
   * ({@code d}), the newer marker and the greater write of each cell (Cassandra's order: timestamp, then
   * kind), each only if newer than {@code d}; whether it differs from the stored state (or the stored
   * deletion outlived the grace period), whether it is live, since when it is dead, when it next expires.
   * With the index's {@code hits} (null: the stored rows were all read), the target row's file number and
   * position ({@code i_tf}, {@code i_tp}) too.
   */
  private String merge(Long everything, ChangeIndex.Hits hits) {
    // every key overwritten whole or new: no stored write outlives the batch, and none ties with it
    boolean overwritten = hits != null && hits.read() == 0 && hits.tableRows() == 0;
    StringBuilder cols = new StringBuilder();
    StringBuilder changed = new StringBuilder("s.sfile IS NULL OR d IS DISTINCT FROM s." + ChangeState.DELETED_AT
        + " OR bm OR s." + ChangeState.DEAD_SINCE + " < " + (now - grace));
    StringBuilder conflict = new StringBuilder("FALSE");
    StringBuilder wins = new StringBuilder();
    StringBuilder live = new StringBuilder("(n_marker_ts IS NOT NULL AND (n_marker_expires = 0 OR " + now
        + " < n_marker_expires))");
    StringBuilder expires = new StringBuilder("least(CASE WHEN n_marker_ts IS NOT NULL AND n_marker_expires <> 0 AND "
        + now + " < n_marker_expires THEN n_marker_expires END");
    for (int k = 0; k < shape.keySize(); k++) {
      cols.append("s.k").append(k).append(", ");
    }
    int[] cells = shape.cells();
    for (int i = 0; i < cells.length; i++) {
      int id = state.fieldId(cells[i]);
      String v = "s." + ChangeState.value(id);
      String t = "s." + ChangeState.ts(id);
      String kind = "s." + ChangeState.kind(id);
      String x = "s." + ChangeState.ldt(id);
      String nv = "s.c" + i;
      String p = "p" + i;
      String bk = "(CASE WHEN " + nv + " IS NULL THEN 2 ELSE 0 END)";
      wins.append(", ").append(p).append(" IS NOT NULL AND (d IS NULL OR ").append(p).append(" > d) AND (").append(t)
          .append(" IS NULL OR ").append(p).append(" > ").append(t).append(" OR ").append(p).append(" = ").append(t)
          .append(" AND ").append(bk).append(" > ").append(kind).append(") AS bw").append(i);
      changed.append(" OR bw").append(i);
      if (!overwritten) {
        // two values at one timestamp: Cassandra's order compares their bytes (the Java fold's); 0.0 and -0.0
        // are equal values but not equal bytes
        String kindName = FoldedColumns.kindOf(shape, cells[i]);
        String signs = "REAL".equals(kindName) || "DOUBLE".equals(kindName) ? " OR signbit(" + nv + ") <> signbit("
            + v + ")" : "";
        conflict.append(" OR (").append(p).append(" = ").append(t).append(" AND ").append(kind).append(" = 0 AND ")
            .append(x).append(" = 0 AND ").append(nv).append(" IS NOT NULL AND (").append(nv)
            .append(" IS DISTINCT FROM ").append(v).append(signs).append("))");
      }
      String keep = overwritten ? "FALSE" : "(" + t + " > d OR d IS NULL AND " + t + " IS NOT NULL)";
      cols.append("CASE WHEN bw").append(i).append(" THEN ").append(nv).append(" WHEN ").append(keep).append(" THEN ")
          .append(v).append(" END AS n_v").append(i).append(", ");
      cols.append("CASE WHEN bw").append(i).append(" THEN ").append(p).append(" WHEN ").append(keep).append(" THEN ")
          .append(t).append(" END AS n_t").append(i).append(", ");
      cols.append("CASE WHEN bw").append(i).append(" THEN ").append(bk).append(" WHEN ").append(keep).append(" THEN ")
          .append(kind).append(" END AS n_k").append(i).append(", ");
      cols.append("CASE WHEN bw").append(i).append(" THEN 0 WHEN ").append(keep).append(" THEN ").append(x)
          .append(" END AS n_x").append(i).append(", ");
      live.append(" OR (n_t").append(i).append(" IS NOT NULL AND (n_k").append(i).append(" = 0 OR n_k").append(i)
          .append(" = 1 AND ").append(now).append(" < n_x").append(i).append("))");
      expires.append(", CASE WHEN n_k").append(i).append(" = 1 AND ").append(now).append(" < n_x").append(i)
          .append(" THEN n_x").append(i).append(" END");
    }
    expires.append(')');
    String keepMarker = overwritten ? "FALSE" : "(s." + ChangeState.MARKER_TS + " > d OR d IS NULL AND s."
        + ChangeState.MARKER_TS + " IS NOT NULL)";
    cols.append("CASE WHEN bm THEN mt WHEN ").append(keepMarker).append(" THEN s.").append(ChangeState.MARKER_TS)
        .append(" END AS n_marker_ts, CASE WHEN bm THEN 0 WHEN ").append(keepMarker).append(" THEN s.")
        .append(ChangeState.MARKER_EXPIRES).append(" END AS n_marker_expires, d AS n_deleted_at, s.sfile, s.spos, s.")
        .append(ChangeState.DEAD_SINCE).append(" AS s_dead_since, ").append(changed).append(" AS changed, ")
        .append(conflict).append(" AS conflict");
    if (hits != null) {
      cols.append(", s.i_tf, s.i_tp");
    }
    String stored = hits != null ? storedOrIndexed(!overwritten)
        : "SELECT f.*, s.* FROM " + FOLD + " AS f LEFT JOIN " + STORED + " AS s ON " + keyJoin("f", "s", true);
    String joined = "SELECT *, greatest(" + ChangeState.DELETED_AT + ", del" + (everything == null ? ""
        : ", CAST(" + everything + " AS BIGINT)") + ") AS d FROM (" + stored + ")";
    String withWins = "SELECT *, mt IS NOT NULL AND (d IS NULL OR mt > d) AND (s." + ChangeState.MARKER_TS
        + " IS NULL OR mt > s." + ChangeState.MARKER_TS + ") AS bm" + wins + " FROM (" + joined + ") AS s";
    String next = "SELECT " + cols + " FROM (" + withWins + ") AS s";
    String liveOf = "SELECT *, " + live + " AS live, " + expires + " AS n_expires_next FROM (" + next + ")";
    return "CREATE OR REPLACE TEMP TABLE " + MERGED + " AS SELECT *, CASE WHEN live THEN NULL ELSE coalesce(s_dead_since, "
        + now + ") END AS n_dead_since FROM (" + liveOf + ")";
  }

  /**
   * The folded rows each with its key's stored row: from {@value #STORED} (read from the state table), or
   * from the index's columns of {@value #FOLD} for a key the batch overwrites whole ({@code i_kept}): no
   * values, and every timestamp the row's newest, which the batch's writes are all newer than (or deleted
   * since), so it merges as the stored row would.
   */
  private String storedOrIndexed(boolean anyStored) {
    String zero = "CASE WHEN f.i_mx IS NOT NULL THEN 0 END";
    java.util.Map<String, String> known = new java.util.HashMap<>();
    known.put(ChangeState.value(state.fieldId(shape.key()[0])), "f.k0");
    for (int c : shape.cells()) {
      known.put(ChangeState.ts(state.fieldId(c)), "f.i_mx");
      known.put(ChangeState.kind(state.fieldId(c)), zero);
      known.put(ChangeState.ldt(state.fieldId(c)), zero);
    }
    known.put(ChangeState.DELETED_AT, "f.i_del");
    known.put(ChangeState.MARKER_TS, "f.i_mx");
    known.put(ChangeState.MARKER_EXPIRES, zero);
    known.put(ChangeState.DEAD_SINCE, "f.i_ds");
    StringBuilder cols = new StringBuilder("f.*, CASE WHEN f.i_kept THEN sfp.path " + (anyStored ? "ELSE s.sfile "
        : "") + "END AS sfile, CASE WHEN f.i_kept THEN f.i_sp " + (anyStored ? "ELSE s.spos " : "") + "END AS spos");
    for (Types.NestedField f : state.schema().columns()) {
      String name = Lexer.quoteIdentifier(f.name());
      cols.append(", CASE WHEN f.i_kept THEN CAST(").append(known.getOrDefault(f.name(), "NULL")).append(" AS ")
          .append(TypeMapping.duckdbType(f.type())).append(") ELSE ").append(anyStored ? "s." + name : "NULL")
          .append(" END AS ").append(name);
    }
    return "SELECT " + cols + " FROM " + FOLD + " AS f" + (anyStored ? " LEFT JOIN " + STORED + " AS s ON "
        + keyJoin("f", "s", true) : "") + " LEFT JOIN " + ChangeIndex.STATE_FILES + " AS sfp ON sfp.no = f.i_sf";
  }

  /**
   * SQL of whether the batch writes every cell and the marker of folded row {@code f}, or deletes it: true of a
   * key whose stored row is its table row ({@link ChangeState#TABLE_ROW_TS}, older than any write), whose
   * values then do not matter.
   */
  private String overwrittenWhole(String f) {
    StringBuilder b = new StringBuilder(f + ".del IS NOT NULL OR " + f + ".mt IS NOT NULL");
    for (int i = 0; i < shape.cells().length; i++) {
      b.append(" AND ").append(f).append(".p").append(i).append(" IS NOT NULL");
    }
    return b.toString();
  }

  /** SQL of the keys ({@code k0}) whose state rows the last batch planned deleted without writing them again. */
  String forgotten() {
    return "SELECT k0 FROM " + MERGED + " WHERE changed AND NOT (live OR n_dead_since >= " + (now - grace) + ")";
  }

  /** The new state rows of the changed keys (a dead row past the grace period is forgotten) and the stored rows they replace. */
  private DeltaWriter.Delta writeState(DuckDBConnection duck, Table stateTable, Optional<Snapshot> snapshot,
      long replaced) throws SQLException {
    List<String> select = new ArrayList<>();
    for (Types.NestedField f : stateTable.schema().columns()) {
      select.add("CAST(" + stateValue(f.name()) + " AS " + TypeMapping.duckdbType(f.type()) + ") AS "
          + Lexer.quoteIdentifier(f.name()));
    }
    String rows = "SELECT " + String.join(", ", select) + " FROM " + MERGED + " WHERE changed AND (live OR "
        + "n_dead_since >= " + (now - grace) + ")";
    long count;
    try (Statement st = duck.createStatement()) {
      count = longs(st, "SELECT count(*) FROM (" + rows + ")")[0];
    }
    ScanPlan plan = ScanPlan.plan(apply.planner(), stateTable, snapshot, Expressions.alwaysTrue(), false);
    return apply.write(duck, stateTable, plan, replaced == 0 ? null : new DeltaWriter.Deleted("SELECT sfile AS "
        + ScanSql.ROW_FILE + ", spos AS " + ScanSql.ROW_POSITION + " FROM " + MERGED + " WHERE changed AND sfile IS "
        + "NOT NULL", replaced, null), count == 0 ? null : Inserter.Rows.query(rows, count));
  }

  /** A state table column's new value, by its name. */
  private String stateValue(String name) {
    int[] cells = shape.cells();
    for (int i = 0; i < cells.length; i++) {
      int id = state.fieldId(cells[i]);
      if (name.equals(ChangeState.value(id))) {
        return "n_v" + i;
      } else if (name.equals(ChangeState.ts(id))) {
        return "n_t" + i;
      } else if (name.equals(ChangeState.kind(id))) {
        return "n_k" + i;
      } else if (name.equals(ChangeState.ldt(id))) {
        return "n_x" + i;
      }
    }
    int[] key = shape.key();
    for (int k = 0; k < key.length; k++) {
      if (name.equals(ChangeState.value(state.fieldId(key[k])))) {
        return "k" + k;
      }
    }
    return switch (name) {
      case ChangeState.DELETED_AT -> "n_deleted_at";
      case ChangeState.MARKER_TS -> "n_marker_ts";
      case ChangeState.MARKER_EXPIRES -> "n_marker_expires";
      case ChangeState.DEAD_SINCE -> "n_dead_since";
      case ChangeState.EXPIRES_NEXT -> "n_expires_next";
      default -> "NULL"; // the range column, and a column of a target column dropped since
    };
  }

  /** The live rows of the changed keys, in the target's columns. */
  private String targetRows(Table target) {
    List<String> select = new ArrayList<>();
    for (Types.NestedField f : target.schema().columns()) {
      select.add("CAST(" + targetValue(f.name()) + " AS " + TypeMapping.duckdbType(f.type()) + ") AS "
          + Lexer.quoteIdentifier(f.name()));
    }
    return "SELECT " + String.join(", ", select) + " FROM " + MERGED + " WHERE changed AND live";
  }

  /** A target column's value in a live row: the key, a live cell's value, or NULL. */
  private String targetValue(String name) {
    int c = shape.column(name);
    if (c < 0) {
      return "NULL";
    }
    int k = shape.keyPosition(c);
    if (k >= 0) {
      return "k" + k;
    }
    int i = shape.cellOf(c);
    return "CASE WHEN n_k" + i + " = 0 OR n_k" + i + " = 1 AND " + now + " < n_x" + i + " THEN n_v" + i + " END";
  }

  /** Whether a live row has a value in each NOT NULL column of the target. */
  private String required(Table target) {
    StringBuilder b = new StringBuilder("TRUE");
    for (Types.NestedField f : target.schema().columns()) {
      if (f.isRequired()) {
        b.append(" AND ").append(targetValue(f.name())).append(" IS NOT NULL");
      }
    }
    return b.toString();
  }

  /** Equality of the fold's key ({@code k0}...) and a state ({@code v_<id>}) or target (by name) row's. */
  private String keyJoin(String fold, String other, boolean stateColumns) {
    StringBuilder b = new StringBuilder();
    int[] key = shape.key();
    for (int k = 0; k < key.length; k++) {
      String col = stateColumns ? ChangeState.value(state.fieldId(key[k]))
          : Lexer.quoteIdentifier(shape.columns().get(key[k]).name());
      b.append(k > 0 ? " AND " : "").append(fold).append(".k").append(k).append(" = ").append(other).append('.')
          .append(col);
    }
    return b.toString();
  }

  private static long[] longs(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      long[] out = new long[rs.getMetaData().getColumnCount()];
      for (int i = 0; i < out.length; i++) {
        out[i] = rs.getLong(i + 1);
      }
      return out;
    }
  }
}
