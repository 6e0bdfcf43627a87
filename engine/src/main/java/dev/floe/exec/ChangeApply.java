package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.Durable;
import dev.floe.cdc.Fold;
import dev.floe.cdc.Key;
import dev.floe.cdc.RangeDeletion;
import dev.floe.cdc.RowState;
import dev.floe.cdc.TableShape;
import dev.floe.commit.BlockTable;
import dev.floe.commit.TableChange;
import dev.floe.read.ScanFiles;
import dev.floe.read.ScanPlan;
import dev.floe.read.ScanSql;
import dev.floe.sql.Lexer;
import dev.floe.tail.TailLog;
import dev.floe.write.DeltaWriter;
import dev.floe.write.Inserter;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;
import org.duckdb.DuckDBConnection;

/**
 * Applies a folded batch of changes ({@link Fold}) to its target table (docs/cdc.md): reads the stored
 * state ({@link ChangeState}) of the keys the batch writes, of the keys a new range deletion may cover
 * and of the rows whose expiring cells expired since, reconciles them with the batch
 * ({@link Fold#reconcile}), and commits in one catalog swap the new state and the target's changed rows
 * (the old row of each changed key deleted by position, as a deletion vector or position delete, never an
 * equality delete; the live rows written), each snapshot's summary carrying the source position. A key
 * whose state the batch does not change is not written at all, so applying the same changes again
 * commits nothing.
 *
 * <p>One batch of a target at a time ({@link ChangeLocks}: a lock per target in this process, which this
 * process's maintainer also holds while it compacts the target or its state); a commit by another writer to
 * the target meanwhile is validated as any row-level change's, and a conflict fails the batch with 40001
 * having changed nothing. A target with a tail has every acknowledged row sealed first, and no seal runs
 * until the batch committed. A batch holds a reader pin ({@link ReaderPins}) while it runs, so snapshot
 * expiry never takes a version it reads; a compaction of either table committed meanwhile is followed by
 * the committer's rebase ({@code write.DeleteRebase}) where it can be; a batch that loses a race all the
 * same (40001) is applied again from the state as it then is ({@link #ATTEMPTS} times in all).
 */
final class ChangeApply {
  /** What a batch did. */
  record Outcome(long changes, long keysChanged, long rowsWritten, long rowsDeleted, boolean committed) {}

  private final Engine engine;
  private final TableIdentifier targetId;
  private final ChangeState state;

  ChangeApply(Engine engine, TableIdentifier targetId, ChangeState state) {
    this.engine = engine;
    this.targetId = targetId;
    this.state = state;
  }

  Outcome apply(Fold fold, String position, long nowSeconds) {
    return locked((target, stateTable) -> applyLocked(target, stateTable, fold, position, nowSeconds));
  }

  /**
   * Applies a batch folded in columns, reconciled in DuckDB ({@link ChangeBulk}), or null when that path
   * does not take it (nothing was written: fold it in Java).
   */
  Outcome applyBulk(dev.floe.cdc.FoldedColumns folded, boolean wholeRows, String position, long nowSeconds) {
    return locked((target, stateTable) -> applyBulkLocked(target, stateTable, folded, wholeRows, position,
        nowSeconds));
  }

  private interface Step {
    Outcome run(Table target, Table stateTable);
  }

  /** How many times a batch is applied before a serialization failure (40001) stands. */
  static final int ATTEMPTS = 4;

  /**
   * {@code step} with this target's batches held off, and a tail's acknowledged rows sealed first. A batch
   * that lost a race (40001: a commit to the table or its state table landed under it that its commit could
   * not be rebased over) is applied again from the state as it is then, which is what applying it later
   * would do: a batch is applied exactly once whenever it lands, so a stream does not stop for a race.
   */
  private Outcome locked(Step step) {
    java.util.concurrent.locks.ReentrantLock lock = ChangeLocks.of(state);
    lock.lock();
    try {
      for (int attempt = 1; ; attempt++) {
        try {
          return attempt(step);
        } catch (FloeException e) {
          if (!SqlState.SERIALIZATION_FAILURE.equals(e.sqlState()) || attempt >= ATTEMPTS) {
            throw e;
          }
          LOG.info("a batch of the change stream of {} lost a race (attempt {} of {}), applying it again: {}",
              targetId, attempt, ATTEMPTS, e.detail().orElse(e.getMessage()));
        }
      }
    } finally {
      lock.unlock();
    }
  }

  private Outcome attempt(Step step) {
    // held before any metadata is read: expiry keeps every version the batch may still read
    try (ReaderPins.Hold ignored = engine.tables().readerPins().hold("change stream of " + targetId)) {
      Table target = target();
      Table stateTable = stateTable(target);
      if (TailLog.hasTail(target)) {
        return engine.tails().sealedWhile(targetId, target, () -> {
          target.refresh();
          return step.run(target, stateTable);
        });
      }
      return step.run(target, stateTable);
    }
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ChangeApply.class);

  /**
   * Records {@code position} with nothing changed (the source had nothing for the table up to there: a
   * heartbeat), as a snapshot of the state table alone that adds no file; nothing if it is the position
   * recorded already. Whether it committed.
   */
  boolean advance(String position) {
    java.util.concurrent.locks.ReentrantLock lock = ChangeLocks.of(state);
    lock.lock();
    try {
      Table stateTable = stateTable(target());
      Snapshot current = stateTable.currentSnapshot();
      if (current != null && position.equals(current.summary().get(ChangeState.POSITION))) {
        return false;
      }
      engine.tables().committer().commit(state.id, stateTable, TableChange.mark(current == null ? null
          : current.snapshotId(), Map.of(ChangeState.POSITION, position, ChangeState.CHANGES, "0")));
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** The target as it is now, checked to be the table, of the columns, the stream was opened for. */
  private Table target() {
    Table target = engine.tables().current(targetId).orElseThrow(() -> FloeException.undefinedTable(targetId.name()));
    if (!target.uuid().toString().equals(state.id.name())) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "table \"" + targetId.name()
          + "\" was dropped and created again since its change stream was opened");
    }
    if (!ChangeState.of(target, targetId.name()).schema().sameSchema(state.schema())) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "the columns of table \""
          + targetId.name() + "\" changed since its change stream was opened: open it again");
    }
    return target;
  }

  /** The target's state table, made (with its namespace) the first time and given columns the target gained. */
  private Table stateTable(Table target) {
    Tables tables = engine.tables();
    Optional<Table> existing = tables.current(state.id);
    if (existing.isPresent()) {
      List<Types.NestedField> missing = state.missing(existing.get().schema());
      if (!missing.isEmpty()) {
        synchronized (tables.committer().lock(state.id)) {
          org.apache.iceberg.UpdateSchema update = existing.get().updateSchema();
          missing.forEach(f -> update.addColumn(f.name(), f.type()));
          update.commit();
        }
        existing.get().refresh();
      }
      return existing.get();
    }
    Namespace ns = state.id.namespace();
    if (!tables.catalog().namespaceExists(ns)) {
      try {
        tables.catalog().createNamespace(ns, Map.of("comment", "change-stream state (docs/cdc.md)"));
      } catch (org.apache.iceberg.exceptions.AlreadyExistsException e) {
        // made meanwhile
      }
    }
    String location = tables.newLocation(Optional.empty(), state.id);
    Table created = tables.creating(location, () -> tables.catalog().buildTable(state.id, state.schema())
        .withLocation(location).withProperties(ChangeState.properties(target, targetId.toString()))
        .withProperty(org.apache.iceberg.TableProperties.FORMAT_VERSION, String.valueOf(formatVersion(target)))
        .create());
    if (!state.id.toString().equals(target.properties().get(dev.floe.FloeProperties.CDC_STATE))) {
      synchronized (tables.committer().lock(targetId)) {
        target.updateProperties().set(dev.floe.FloeProperties.CDC_STATE, state.id.toString()).commit();
      }
    }
    return tables.current(state.id).orElse(created);
  }

  /** The state and target as a batch found them, and the target's grace period. */
  private record Base(TableMetadata state, TableMetadata target, long grace) {
    static Base of(Table target, Table stateTable) {
      return new Base(((HasTableOperations) stateTable).operations().current(),
          ((HasTableOperations) target).operations().current(), ChangeState.gcGrace(target));
    }

    Optional<Snapshot> stateSnapshot() {
      return Optional.ofNullable(state.currentSnapshot());
    }

    Optional<Snapshot> targetSnapshot() {
      return Optional.ofNullable(target.currentSnapshot());
    }
  }

  private Outcome applyBulkLocked(Table target, Table stateTable, dev.floe.cdc.FoldedColumns folded,
      boolean wholeRows, String position, long now) {
    Base b = Base.of(target, stateTable);
    try (Durable.Scope ignored = Durable.scope(); DuckDBConnection duck = engine.connect()) {
      Long everything = null;
      for (StoredRange r : storedRanges(duck, stateTable, b.stateSnapshot())) {
        if (r.range.prefix().length > 0 || r.range.lower() != null || r.range.upper() != null
            || r.since < now - b.grace()) {
          return null; // a range of clustering keys, or one to forget: the Java fold
        }
        everything = everything == null ? r.range.ts() : Math.max(everything, r.range.ts());
      }
      if (expiring(duck, stateTable, b.stateSnapshot(), now)) {
        return null; // rows whose expiring cells are due: the Java fold rewrites them
      }
      ChangeIndex index = ChangeIndex.forBatch(engine, this, duck, state, wholeRows, stateTable, b.stateSnapshot(),
          target, b.targetSnapshot());
      ChangeBulk bulk = new ChangeBulk(this, state, now, b.grace());
      ChangeBulk.Planned p = bulk.plan(duck, folded, target, b.targetSnapshot(), stateTable, b.stateSnapshot(),
          everything, index);
      if (p == null) {
        return null;
      }
      if (p.state() == null) {
        return new Outcome(p.changes(), 0, 0, 0, false);
      }
      Map<String, String> summary = summary(position, p.maxPosition(), p.changes());
      List<BlockTable> block = new ArrayList<>();
      block.add(new Direct(state.id, b.state(), stateChange(b.stateSnapshot(), p.state()).withSummary(summary)));
      TableChange targetChange = targetChange(b.targetSnapshot(), Expressions.alwaysTrue(), p.target());
      if (targetChange.changesFiles()) {
        block.add(new Direct(targetId, b.target(), targetChange.withSummary(summary)));
      }
      // a commit that fails leaves the index as it was: a batch uses it only at the snapshots it holds
      List<dev.floe.commit.Committed> done = engine.tables().committer().commitBlock(block, List.of());
      if (index != null) {
        boolean targetCommitted = block.size() > 1;
        index.follow(engine, duck, this, state, stateTable, target, p.state(), targetCommitted ? p.target() : null,
            done.get(0), targetCommitted ? done.get(1) : null, bulk.forgotten());
      }
      return new Outcome(p.changes(), p.keysChanged(), p.written(), p.deleted(), true);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot apply changes to " + targetId.name() + ": "
          + e.getMessage(), e);
    }
  }

  /** Whether a stored row has an expiring cell due by {@code now} (the files' statistics rule most out). */
  private boolean expiring(DuckDBConnection duck, Table stateTable, Optional<Snapshot> snapshot, long now)
      throws SQLException {
    if (snapshot.isEmpty()) {
      return false;
    }
    ScanPlan plan = ScanPlan.plan(engine.planner(), stateTable, snapshot, Expressions.lessThanOrEqual(
        ChangeState.EXPIRES_NEXT, now), false);
    if (plan.tasks().isEmpty()) {
      return false;
    }
    try (var st = duck.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM (" + ScanSql.relation(
        plan, stateTable.io(), engine.files(), false) + ") AS s WHERE s." + ChangeState.EXPIRES_NEXT + " <= " + now)) {
      rs.next();
      return rs.getLong(1) > 0;
    }
  }

  private static Map<String, String> summary(String position, long maxPosition, long changes) {
    Map<String, String> summary = new HashMap<>();
    summary.put(ChangeState.POSITION, position != null ? position
        : maxPosition == Long.MIN_VALUE ? "" : Long.toString(maxPosition));
    summary.put(ChangeState.CHANGES, Long.toString(changes));
    summary.put(ChangeState.BATCH, java.util.UUID.randomUUID().toString());
    return summary;
  }

  dev.floe.read.ScanPlanner planner() {
    return engine.planner();
  }

  org.apache.arrow.memory.BufferAllocator allocator() {
    return engine.allocator();
  }

  ScanFiles files() {
    return engine.files();
  }

  private Outcome applyLocked(Table target, Table stateTable, Fold fold, String position, long now) {
    TableShape shape = state.shape;
    Base b = Base.of(target, stateTable);
    try (Durable.Scope ignored = Durable.scope(); DuckDBConnection duck = engine.connect()) {
      StagedRows stage = new StagedRows(duck, engine.scratch()); // flat relations as CSV: a batch stages millions of values
      // 1. the range deletions kept so far
      List<StoredRange> stored = storedRanges(duck, stateTable, b.stateSnapshot());
      List<RangeDeletion> ranges = new ArrayList<>();
      stored.forEach(r -> ranges.add(r.range));
      List<RangeDeletion> newRanges = new ArrayList<>();
      for (RangeDeletion r : fold.ranges()) {
        if (Fold.addRange(ranges, r)) {
          newRanges.add(r);
        }
      }
      // 2. the stored state of every key to revisit
      Types.NestedField[] keyFields = new Types.NestedField[shape.keySize()];
      for (int k = 0; k < keyFields.length; k++) {
        keyFields[k] = shape.columns().get(shape.key()[k]);
      }
      String keys = stageKeys(stage, keyFields, fold.rows().keySet());
      Map<Key, Stored> revisit = revisit(duck, stage, stateTable, b.stateSnapshot(), keyFields, keys, newRanges, now);
      tableRows(duck, stage, target, b.targetSnapshot(), keyFields, fold, revisit);
      // 3. reconcile
      List<Object[]> stateRows = new ArrayList<>();
      Map<String, List<Long>> stateDeletes = new HashMap<>();
      Map<Key, Object[]> targetRows = new LinkedHashMap<>(); // changed keys; null: no live row
      Map<Key, RowState> carried = Fold.carried(fold.carries(), k -> revisit.containsKey(k) ? revisit.get(k).state
          : null, shape);
      for (Stored s : revisit.values()) {
        RowState merged = Fold.reconcile(s.state, fold.rows().get(s.state.key()), ranges, shape);
        Fold.carry(merged, carried.get(merged.key()), shape);
        boolean expired = s.expiresNext != null && s.expiresNext <= now;
        if (merged.equals(s.state) && !expired && !(s.deadSince != null && s.deadSince < now - b.grace())) {
          continue;
        }
        if (s.file != null) { // null: a table row's state, never stored
          stateDeletes.computeIfAbsent(s.file, f -> new ArrayList<>()).add(s.pos);
        }
        keep(merged, s.deadSince, now, b.grace(), stateRows);
        targetRows.put(merged.key(), merged.row(shape, now));
      }
      for (Map.Entry<Key, RowState> e : fold.rows().entrySet()) {
        if (!revisit.containsKey(e.getKey())) {
          RowState merged = Fold.reconcile(null, e.getValue(), ranges, shape);
          Fold.carry(merged, carried.get(merged.key()), shape);
          keep(merged, null, now, b.grace(), stateRows);
          targetRows.put(merged.key(), merged.row(shape, now));
        }
      }
      for (StoredRange r : stored) {
        boolean replaced = newRanges.stream().anyMatch(n -> n.sameRows(r.range));
        if (replaced || r.since < now - b.grace()) {
          stateDeletes.computeIfAbsent(r.file, f -> new ArrayList<>()).add(r.pos);
        }
      }
      for (RangeDeletion r : newRanges) {
        stateRows.add(state.stored(r, now));
      }
      // a range deletion applies to keys the target holds but no stream wrote (rows it had before)
      boolean rangeOnTarget = !newRanges.isEmpty();
      if (stateRows.isEmpty() && stateDeletes.isEmpty() && targetRows.isEmpty()) {
        return new Outcome(fold.changes(), 0, 0, 0, false);
      }
      Map<String, String> summary = summary(position, fold.maxPosition(), fold.changes());
      // 4. the state's change
      TableChange stateChange = stateChange(duck, stage, stateTable, b.stateSnapshot(), stateRows, stateDeletes)
          .withSummary(summary);
      // 5. the target's change
      Written targetChange = targetChange(duck, stage, target, b.targetSnapshot(), keyFields, targetRows, newRanges,
          rangeOnTarget, revisit.keySet());
      List<BlockTable> block = new ArrayList<>();
      block.add(new Direct(state.id, b.state(), stateChange));
      if (targetChange.change.changesFiles()) {
        block.add(new Direct(targetId, b.target(), targetChange.change.withSummary(summary)));
      }
      engine.tables().committer().commitBlock(block, List.of());
      return new Outcome(fold.changes(), targetRows.size(), targetChange.written, targetChange.deleted, true);
    } catch (SQLException e) {
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot apply changes to " + targetId.name() + ": "
          + e.getMessage(), e);
    }
  }

  /** Adds {@code merged}'s state row, unless it is a deletion older than the grace period. */
  private void keep(RowState merged, Long deadSince, long now, long grace, List<Object[]> out) {
    boolean live = merged.live(now);
    Long since = live ? null : deadSince != null ? deadSince : now;
    if (!live && since < now - grace) {
      return; // its tombstones have outlived the grace period: forgotten, as Cassandra's are
    }
    out.add(state.stored(merged, since, merged.nextExpiry(now)));
  }

  private record StoredRange(RangeDeletion range, long since, String file, long pos) {}

  private record Stored(RowState state, Long deadSince, Long expiresNext, String file, long pos) {}

  private List<StoredRange> storedRanges(DuckDBConnection duck, Table stateTable, Optional<Snapshot> snapshot)
      throws SQLException {
    List<StoredRange> out = new ArrayList<>();
    if (snapshot.isEmpty()) {
      return out;
    }
    ScanPlan plan = ScanPlan.plan(engine.planner(), stateTable, snapshot, Expressions.notNull(ChangeState.RANGE),
        false);
    String sql = "SELECT s." + ScanSql.ROW_FILE + ", s." + ScanSql.ROW_POSITION + ", s." + ChangeState.RANGE + ", s."
        + ChangeState.DELETED_AT + ", s." + ChangeState.DEAD_SINCE + " FROM (" + ScanSql.relation(plan, stateTable.io(),
        engine.files(), true) + ") AS s WHERE s." + ChangeState.RANGE + " IS NOT NULL";
    try (var st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(new StoredRange(RangeDeletion.decode(rs.getString(3), rs.getLong(4), state.shape), rs.getLong(5),
            rs.getString(1), rs.getLong(2)));
      }
    }
    return out;
  }

  /** Stages the batch's keys as a relation with the key's column names. */
  private static String stageKeys(StagedRows stage, Types.NestedField[] keyFields, java.util.Collection<Key> keys) {
    List<Types.NestedField> fields = new ArrayList<>();
    for (int k = 0; k < keyFields.length; k++) {
      fields.add(Types.NestedField.optional(k + 1, "k" + k, keyFields[k].type()));
    }
    String sql = stage.relation(new Schema(fields), sink -> keys.forEach(key -> sink.row(key.values())));
    return "(" + sql + ")";
  }

  /**
   * The stored state of the batch's keys, of the keys a new range deletion may cover (by its prefix; the
   * fold decides the bounds), and of the rows an expiring cell changes by {@code now}.
   */
  private Map<Key, Stored> revisit(DuckDBConnection duck, StagedRows stage, Table stateTable,
      Optional<Snapshot> snapshot, Types.NestedField[] keyFields, String keys, List<RangeDeletion> newRanges,
      long now) throws SQLException {
    Map<Key, Stored> out = new HashMap<>();
    if (snapshot.isEmpty()) {
      return out;
    }
    String[] cols = new String[keyFields.length];
    for (int k = 0; k < cols.length; k++) {
      cols[k] = ChangeState.value(keyFields[k].fieldId());
    }
    Expression filter = Expressions.lessThanOrEqual(ChangeState.EXPIRES_NEXT, now);
    if (newRanges.isEmpty() && keyFields.length == 1) {
      filter = Expressions.or(filter, KeyedFold.keyFilter(duck, Types.NestedField.optional(0, cols[0],
          keyFields[0].type()), keys, "k0"));
    } else {
      filter = Expressions.alwaysTrue();
    }
    ScanPlan plan = ScanPlan.plan(engine.planner(), stateTable, snapshot, filter, false);
    StringBuilder match = new StringBuilder("EXISTS (SELECT 1 FROM " + keys + " AS b WHERE ");
    for (int k = 0; k < cols.length; k++) {
      match.append(k > 0 ? " AND " : "").append("b.k").append(k).append(" = s.").append(cols[k]);
    }
    match.append(") OR s.").append(ChangeState.EXPIRES_NEXT).append(" <= ").append(now);
    for (RangeDeletion r : newRanges) {
      StringBuilder p = new StringBuilder("TRUE");
      for (int k = 0; k < r.prefix().length; k++) {
        p.append(" AND s.").append(cols[k]).append(" IS NOT DISTINCT FROM ").append(literal(stage, keyFields[k],
            r.prefix()[k]));
      }
      match.append(" OR (").append(p).append(')');
    }
    String sql = "SELECT s." + ScanSql.ROW_FILE + ", s." + ScanSql.ROW_POSITION + ", " + state.selectList("s") + ", s."
        + ChangeState.DEAD_SINCE + ", s." + ChangeState.EXPIRES_NEXT + " FROM (" + ScanSql.relation(plan,
        stateTable.io(), engine.files(), true) + ") AS s WHERE s." + ChangeState.RANGE + " IS NULL AND (" + match + ")";
    int columns = state.schema().columns().size();
    try (var st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        RowState s = state.row(rs, 3);
        long dead = rs.getLong(3 + columns);
        Long deadSince = rs.wasNull() ? null : dead;
        long next = rs.getLong(4 + columns);
        Long expiresNext = rs.wasNull() ? null : next;
        out.put(s.key(), new Stored(s, deadSince, expiresNext, rs.getString(1), rs.getLong(2)));
      }
    }
    return out;
  }

  /**
   * Adds to {@code revisit} the stored state of each key of the batch that has none but a row in the table
   * (loaded before the stream, or written by a statement): the row's values, written before every change
   * ({@link ChangeState#tableRow}), so that the cells the batch leaves out keep them. Keys the batch overwrites
   * whole (or deletes) do not need it, but for the old keys of key changes, whose cells a new key may take.
   */
  private void tableRows(DuckDBConnection duck, StagedRows stage, Table target, Optional<Snapshot> snapshot,
      Types.NestedField[] keyFields, Fold fold, Map<Key, Stored> revisit) throws SQLException {
    if (snapshot.isEmpty()) {
      return;
    }
    java.util.Set<Key> wanted = new java.util.HashSet<>();
    fold.rows().forEach((k, s) -> {
      if (!revisit.containsKey(k) && !overwrittenWhole(s)) {
        wanted.add(k);
      }
    });
    fold.carries().forEach(c -> {
      if (!revisit.containsKey(c.from())) {
        wanted.add(c.from());
      }
    });
    if (wanted.isEmpty()) {
      return;
    }
    String keys = stageKeys(stage, keyFields, wanted);
    Expression filter = keyFields.length == 1 ? KeyedFold.keyFilter(duck, keyFields[0], keys, "k0")
        : Expressions.alwaysTrue();
    ScanPlan plan = ScanPlan.plan(engine.planner(), target, snapshot, filter, false);
    List<Types.NestedField> columns = state.shape.columns();
    String sql = "SELECT " + columnList("r", columns.toArray(new Types.NestedField[0])) + " FROM (" + ScanSql.relation(
        plan, target.io(), engine.files(), false) + ") AS r WHERE EXISTS (SELECT 1 FROM " + keys + " AS b WHERE "
        + stagedKeyIs(keyFields) + ")";
    try (var st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        Object[] values = new Object[columns.size()];
        for (int i = 0; i < values.length; i++) {
          values[i] = ChangeState.internal(rs, i + 1, columns.get(i).type());
        }
        RowState s = state.tableRow(values);
        revisit.put(s.key(), new Stored(s, null, null, null, -1));
      }
    }
  }

  /** Whether a folded key's writes leave nothing of a stored row: it is deleted, or its marker and every cell written. */
  private static boolean overwrittenWhole(RowState s) {
    if (s.deletedAt() != RowState.NEVER) {
      return true;
    }
    if (s.marker() == null) {
      return false;
    }
    for (int i = 0; i < s.cellCount(); i++) {
      if (s.cell(i) == null) {
        return false;
      }
    }
    return true;
  }

  /** A key value as SQL: a one-row staged relation's value, so every type is exact. */
  private static String literal(StagedRows stage, Types.NestedField field, Object value) {
    String rel = stage.relation(new Schema(Types.NestedField.optional(1, "v", field.type())),
        sink -> sink.row(new Object[] {value}));
    return "(SELECT v FROM (" + rel + "))";
  }

  private TableChange stateChange(DuckDBConnection duck, StagedRows stage, Table stateTable,
      Optional<Snapshot> snapshot, List<Object[]> rows, Map<String, List<Long>> deletes) {
    Schema ours = state.schema();
    String staged = stage.relation(ours, sink -> rows.forEach(sink::row));
    StringBuilder select = new StringBuilder();
    for (Types.NestedField f : stateTable.schema().columns()) {
      select.append(select.length() > 0 ? ", " : "").append(ours.findField(f.name()) != null
          ? Lexer.quoteIdentifier(f.name()) : "NULL AS " + Lexer.quoteIdentifier(f.name()));
    }
    DeltaWriter.Deleted deleted = null;
    long count = 0;
    if (!deletes.isEmpty()) {
      Map<String, long[]> positions = new HashMap<>();
      List<Object[]> pairs = new ArrayList<>();
      for (Map.Entry<String, List<Long>> e : deletes.entrySet()) {
        long[] p = e.getValue().stream().mapToLong(Long::longValue).sorted().distinct().toArray();
        positions.put(e.getKey(), p);
        for (long pos : p) {
          pairs.add(new Object[] {e.getKey(), pos});
          count++;
        }
      }
      String rel = stage.relation(new Schema(Types.NestedField.optional(1, ScanSql.ROW_FILE, Types.StringType.get()),
          Types.NestedField.optional(2, ScanSql.ROW_POSITION, Types.LongType.get())), sink -> pairs.forEach(sink::row));
      deleted = new DeltaWriter.Deleted(rel, count, positions);
    }
    ScanPlan plan = ScanPlan.plan(engine.planner(), stateTable, snapshot, Expressions.alwaysTrue(), false);
    return stateChange(snapshot, write(duck, stateTable, plan, deleted, rows.isEmpty() ? null
        : Inserter.Rows.query("SELECT " + select + " FROM (" + staged + ")", rows.size())));
  }

  private static TableChange stateChange(Optional<Snapshot> snapshot, DeltaWriter.Delta delta) {
    // the state is this stream's alone (one batch at a time, under the lock above): anything else
    // committed to it since is a conflict
    return TableChange.rowDelta(snapshot.map(Snapshot::snapshotId).orElse(null), delta.addedDataFiles(),
        delta.addedDeleteFiles(), delta.removedDataFiles(), delta.removedDeleteFiles(),
        new TableChange.Validation(null, null, true, delta.referencedDataFiles()), delta.writtenLocations());
  }

  /** The target's change: validated against what was committed to the rows of {@code filter} meanwhile. */
  private static TableChange targetChange(Optional<Snapshot> snapshot, Expression filter, DeltaWriter.Delta delta) {
    TableChange.Validation validation = new TableChange.Validation(filter, null,
        !delta.referencedDataFiles().isEmpty() || !delta.removedDataFiles().isEmpty(), delta.referencedDataFiles());
    return TableChange.rowDelta(snapshot.map(Snapshot::snapshotId).orElse(null), delta.addedDataFiles(),
        delta.addedDeleteFiles(), delta.removedDataFiles(), delta.removedDeleteFiles(), validation,
        delta.writtenLocations());
  }

  private record Written(TableChange change, long written, long deleted) {}

  private Written targetChange(DuckDBConnection duck, StagedRows stage, Table target, Optional<Snapshot> snapshot,
      Types.NestedField[] keyFields, Map<Key, Object[]> rows, List<RangeDeletion> newRanges, boolean rangeOnTarget,
      java.util.Set<Key> known) throws SQLException {
    Schema schema = target.schema();
    List<Types.NestedField> columns = schema.columns();
    String keys = stageKeys(stage, keyFields, rows.keySet());
    Expression filter = keyFields.length == 1 && !rangeOnTarget
        ? KeyedFold.keyFilter(duck, keyFields[0], keys, "k0") : Expressions.alwaysTrue();
    ScanPlan plan = ScanPlan.plan(engine.planner(), target, snapshot, filter, false);
    String on = stagedKeyIs(keyFields);
    StringBuilder where = new StringBuilder("EXISTS (SELECT 1 FROM " + keys + " AS b WHERE " + on + ")");
    // rows the target holds that no stream wrote (no state knows them) are deleted by a range deletion
    // covering them; the rows of keys with a state are as their state says
    List<Object[]> coveredKeys = new ArrayList<>();
    String covered = null;
    if (rangeOnTarget) {
      String sql = "SELECT " + columnList("r", keyFields) + " FROM (" + ScanSql.relation(plan, target.io(),
          engine.files(), false) + ") AS r";
      try (var st = duck.createStatement(); ResultSet rs = st.executeQuery(sql)) {
        while (rs.next()) {
          Object[] key = new Object[keyFields.length];
          for (int k = 0; k < key.length; k++) {
            key[k] = ChangeState.internal(rs, k + 1, keyFields[k].type());
          }
          Key kk = new Key(key);
          if (!rows.containsKey(kk) && !known.contains(kk) && newRanges.stream().anyMatch(r -> r.covers(kk, state.shape))) {
            coveredKeys.add(key);
          }
        }
      }
      if (!coveredKeys.isEmpty()) {
        List<Key> ks = coveredKeys.stream().map(Key::new).toList();
        covered = stageKeys(stage, keyFields, ks);
        where.append(" OR EXISTS (SELECT 1 FROM ").append(covered).append(" AS b WHERE ").append(on).append(')');
      }
    }
    String deletedSql = "SELECT r." + ScanSql.ROW_FILE + ", r." + ScanSql.ROW_POSITION + " FROM (" + ScanSql.relation(
        plan, target.io(), engine.files(), true) + ") AS r WHERE " + where;
    String deletedRel = "__floe_cdc_deleted";
    long deletedCount;
    try (var st = duck.createStatement()) {
      st.execute("CREATE OR REPLACE TEMP TABLE " + deletedRel + " AS " + deletedSql);
      try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + deletedRel)) {
        rs.next();
        deletedCount = rs.getLong(1);
      }
    }
    List<Object[]> live = new ArrayList<>();
    for (Object[] row : rows.values()) {
      if (row == null) {
        continue;
      }
      Object[] full = new Object[columns.size()];
      for (int i = 0; i < columns.size(); i++) {
        int c = state.shape.column(columns.get(i).name());
        full[i] = c < 0 ? null : row[c];
        if (full[i] == null && columns.get(i).isRequired()) {
          throw new FloeException(SqlState.NOT_NULL_VIOLATION, "null value in column \"" + columns.get(i).name()
              + "\" of relation \"" + targetId.name() + "\" violates not-null constraint", "Failing row has key "
              + java.util.Arrays.toString(keyOf(row)) + ".", null, 0, null);
        }
      }
      live.add(full);
    }
    String staged = live.isEmpty() ? null : stage.relation(schema, sink -> live.forEach(sink::row));
    DeltaWriter.Delta delta = write(duck, target, plan, deletedCount == 0 ? null
        : new DeltaWriter.Deleted("SELECT * FROM " + deletedRel, deletedCount, null),
        staged == null ? null : Inserter.Rows.query(staged, live.size()));
    return new Written(targetChange(snapshot, filter, delta), live.size(), deletedCount);
  }

  private Object[] keyOf(Object[] row) {
    int[] k = state.shape.key();
    Object[] out = new Object[k.length];
    for (int i = 0; i < k.length; i++) {
      out[i] = row[k[i]];
    }
    return out;
  }

  /** SQL of a staged key ({@code b.k0}, ...: {@link #stageKeys}) equal to table row {@code r}'s. */
  private static String stagedKeyIs(Types.NestedField[] keyFields) {
    StringBuilder on = new StringBuilder();
    for (int k = 0; k < keyFields.length; k++) {
      on.append(k > 0 ? " AND " : "").append("b.k").append(k).append(" = r.")
          .append(Lexer.quoteIdentifier(keyFields[k].name()));
    }
    return on.toString();
  }

  /** SQL of columns {@code fields} of row {@code alias}, in order. */
  private static String columnList(String alias, Types.NestedField[] fields) {
    StringBuilder b = new StringBuilder();
    for (Types.NestedField f : fields) {
      b.append(b.length() > 0 ? ", " : "").append(alias).append('.').append(Lexer.quoteIdentifier(f.name()));
    }
    return b.toString();
  }

  DeltaWriter.Delta write(DuckDBConnection duck, Table table, ScanPlan plan, DeltaWriter.Deleted deleted,
      Inserter.Rows rows) {
    try {
      return DeltaWriter.write(duck, table, plan, engine.files(), deleted, rows, DeltaWriter.Mode.MERGE_ON_READ,
          formatVersion(table), engine.scratch());
    } catch (Inserter.WriteFailure e) {
      throw e.as("apply changes to " + table.name());
    }
  }

  private static int formatVersion(Table table) {
    return ((HasTableOperations) table).operations().current().formatVersion();
  }

  /** A change decided here, committed with {@link dev.floe.commit.Committer#commitBlock}. */
  private final class Direct implements BlockTable {
    private final TableIdentifier id;
    private final TableMetadata base;
    private TableChange change;
    private final List<String> written = new ArrayList<>();

    Direct(TableIdentifier id, TableMetadata base, TableChange change) {
      this.id = id;
      this.base = base;
      this.change = change;
      written.addAll(change.written());
    }

    @Override
    public TableIdentifier id() {
      return id;
    }

    @Override
    public TableMetadata base() {
      return base;
    }

    @Override
    public Optional<Table> current() {
      return engine.tables().current(id);
    }

    @Override
    public Optional<TableMetadata> single() {
      return Optional.empty();
    }

    @Override
    public TableChange folded() {
      return change;
    }

    @Override
    public void rebased(TableChange rebased) {
      change = rebased;
      written.addAll(rebased.written());
    }

    @Override
    public void abandon() {
      Table t = engine.tables().current(id).orElse(null);
      if (t == null) {
        return;
      }
      for (String f : written) {
        try {
          t.io().deleteFile(f);
        } catch (RuntimeException e) {
          // an unreferenced file: harmless, swept by orphan cleanup
        }
      }
    }
  }
}
