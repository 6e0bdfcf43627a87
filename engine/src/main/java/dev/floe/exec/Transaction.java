package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.Durable;
import dev.floe.commit.BlockTable;
import dev.floe.commit.Committed;
import dev.floe.commit.StagedSnapshots;
import dev.floe.commit.StagingOperations;
import dev.floe.commit.TableChange;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;

/**
 * A transaction block of one session (snapshot isolation, docs/transactions.md).
 *
 * <p>Its snapshot is the catalog's state at its first statement: every table it reads is read at the
 * metadata file the catalog named then. A table it writes gets a private copy of that state
 * ({@link TxnOps}): its statements write data, delete files and manifests as usual, and "commit" by
 * replacing the private metadata, so later statements of the block read their own changes and nobody
 * else sees them. The statements commit through the engine's committer like any other, which tells the
 * private copy what each change must be validated against ({@link TxnOps#staged}). COMMIT hands every
 * written table to the committer ({@link dev.floe.commit.Committer#commitBlock}): each table's changes,
 * folded into one, on the table's current state, validated against everything committed since the
 * block's snapshot (first committer wins: a conflict fails with 40001 and changes nothing), and all
 * tables' catalog pointers moved in one SQLite transaction. ROLLBACK deletes what the block wrote.
 */
final class Transaction {
  private final Tables tables;
  private boolean readOnly;
  /** The catalog's pointers at the block's first statement; null before it. */
  private Map<TableIdentifier, String> pinned;
  private final Map<TableIdentifier, TableMetadata> pinnedMetadata = new HashMap<>();
  private final Map<TableIdentifier, Written> written = new LinkedHashMap<>();
  private final Deque<Savepoint> savepoints = new ArrayDeque<>();
  private boolean ended;
  /** A statement failed: only ROLLBACK (or ROLLBACK TO SAVEPOINT) may follow. */
  private boolean failed;
  /** The digests of the files the statements wrote, recorded when COMMIT moves the pointers. */
  private final List<dev.floe.catalog.FileDigests.Digest> digests = new ArrayList<>();

  /**
   * A table this block wrote: its state at the block's snapshot, and its private current state; at
   * COMMIT, what the committer takes of it.
   */
  private final class Written implements BlockTable {
    final TableIdentifier id;
    final TableMetadata base;
    final TxnOps ops;
    final Table table;
    /** At COMMIT: the block's change to the table, folded ({@link #folded}); null until asked for. */
    TableChange folded;

    Written(TableIdentifier id, TableMetadata base, TxnOps ops, String name) {
      this.id = id;
      this.base = base;
      this.ops = ops;
      this.table = new BaseTable(ops, name);
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
      return tables.current(id);
    }

    @Override
    public Optional<TableMetadata> single() {
      return StagedSnapshots.between(base, ops.current()).size() == 1 ? Optional.of(ops.current()) : Optional.empty();
    }

    @Override
    public TableChange folded() {
      if (folded == null) {
        StagedSnapshots.Net net = StagedSnapshots.net(table, base, ops.current());
        // a statement that did not say what it read may have read anything
        Expression read = ops.conflictFilter == null || ops.noted < ops.commits ? null : ops.conflictFilter;
        boolean untouched = !net.removedData.isEmpty() || !net.addedDeletes.isEmpty()
            || !net.removedDeletes.isEmpty();
        // what the statements wrote is the block's: abandon() deletes it
        folded = net.rowDelta(base, new TableChange.Validation(read, ops.keys, untouched, List.of()), List.of());
      }
      return folded;
    }

    @Override
    public void rebased(TableChange change) {
      folded = change;
      rebaseWritten.addAll(change.written());
    }

    /** Files a rebase wrote for the block's COMMIT. */
    final List<String> rebaseWritten = new java.util.ArrayList<>();

    @Override
    public void abandon() {
      StagedSnapshots.deleteWritten(table, base, ops.current(), Set.of());
      for (String f : rebaseWritten) {
        try {
          table.io().deleteFile(f);
        } catch (RuntimeException e) {
          // an unreferenced file: harmless, swept by orphan cleanup
        }
      }
    }
  }

  /**
   * A savepoint: each written table's private state then, with what its COMMIT would validate, and how
   * many rows the block had queued for each tail.
   */
  private record Savepoint(String name, Map<TableIdentifier, TableState> tables, Map<TableIdentifier, Integer> appends,
      Map<TableIdentifier, Integer> versions) {}

  /** Rows the block appends to a table's tail: queued, and appended as one log record at COMMIT. */
  private record PendingAppend(dev.floe.tail.TailLog log, List<Object[]> rows) {}

  private final Map<TableIdentifier, PendingAppend> appends = new java.util.LinkedHashMap<>();

  /**
   * Queues rows for a table's tail (checked already). A block either appends to tails or changes
   * tables: its COMMIT is then one atomic step, a log record or a catalog swap.
   */
  void append(TableIdentifier id, dev.floe.tail.TailLog log, List<Object[]> rows) {
    if (readOnly) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION,
          "cannot append to table \"" + id.name() + "\" in a read-only transaction");
    }
    if (!written.isEmpty() || keyedWrites().isPresent()) {
      throw mixed(id);
    }
    appends.computeIfAbsent(id, k -> new PendingAppend(log, new ArrayList<>())).rows().addAll(rows);
  }

  private static FloeException mixed(TableIdentifier id) {
    return new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "a transaction block cannot both append to a table "
        + "with a tail and change other rows (table \"" + id.name() + "\")", null,
        "Its COMMIT would be two steps, a log append and a catalog commit; use a block for each.", 0, null);
  }

  /**
   * Where the block's change of a keyed tail's rows puts its versions: its own ({@link dev.floe.tail.Draft},
   * over what it reads through {@code pin}), appended to the log at COMMIT as one record. Such a block
   * changes one table, and nothing else, so that its COMMIT is one atomic step.
   */
  dev.floe.tail.TailLog.Versions keyedVersions(TableIdentifier id, dev.floe.tail.Pin pin, java.sql.Connection duck) {
    if (readOnly) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION,
          "cannot write table \"" + id.name() + "\" in a read-only transaction");
    }
    if (!written.isEmpty() || !appends.isEmpty()) {
      throw mixedKeyed(id);
    }
    Optional<TableIdentifier> other = keyedWrites().filter(t -> !t.equals(id));
    if (other.isPresent()) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "a transaction block can change the rows of only one "
          + "table with a keyed tail: it changed table \"" + other.get().name() + "\", not table \"" + id.name()
          + "\"", null, "Each keyed table's changes are one record of its own log; use a block for each.", 0, null);
    }
    if (!keyedBase.containsKey(id)) {
      org.apache.iceberg.Snapshot read = snapshotOf(id).map(Table::currentSnapshot).orElse(null);
      keyedBase.put(id, read == null ? -1L : read.snapshotId());
    }
    return pin.draft(duck).versions();
  }

  /** The snapshot of each keyed table the block changes as it read it (-1: none), checked at COMMIT. */
  private final Map<TableIdentifier, Long> keyedBase = new HashMap<>();

  /** The keyed table whose rows the block changed, if any (its versions are not all rolled back). */
  private Optional<TableIdentifier> keyedWrites() {
    for (Map.Entry<TableIdentifier, dev.floe.tail.Pin> e : tailPins.entrySet()) {
      if (e.getValue().draft().filter(d -> !d.isEmpty()).isPresent()) {
        return Optional.of(e.getKey());
      }
    }
    return Optional.empty();
  }

  private static FloeException mixedKeyed(TableIdentifier id) {
    return new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "a transaction block cannot both change rows of a "
        + "table with a keyed tail (table \"" + id.name() + "\") and write other tables", null,
        "Its COMMIT would be two steps, a log append and a catalog commit; use a block for each.", 0, null);
  }

  /**
   * At COMMIT of a block that changed a keyed table, holding its log's keyed change: the table's files
   * changed since the block read them only by the log's own seals and by compactions (which keep the
   * rows); anything else (TRUNCATE, another engine's write) may have changed rows the block changed,
   * and fails the COMMIT with 40001.
   */
  private void checkOnlySealed(TableIdentifier id) {
    long base = keyedBase.getOrDefault(id, -1L);
    Table now = tables.current(id).orElseThrow(() -> conflict(id, "it was dropped"));
    org.apache.iceberg.Snapshot s = now.currentSnapshot();
    while (s != null && s.snapshotId() != base) {
      if (!s.summary().containsKey(dev.floe.FloeProperties.TAIL_THROUGH)
          && !org.apache.iceberg.DataOperations.REPLACE.equals(s.operation())) {
        throw conflict(id, "it was changed by another transaction");
      }
      s = s.parentId() == null ? null : now.snapshot(s.parentId());
    }
    if (s == null && base != -1L) {
      throw conflict(id, "its history was rewritten");
    }
  }

  private static FloeException conflict(TableIdentifier id, String why) {
    return new FloeException(SqlState.SERIALIZATION_FAILURE, "could not serialize access due to concurrent update",
        "Table \"" + id.name() + "\" changed since the transaction read it: " + why + ".", "Retry the transaction.", 0,
        null);
  }

  private record TableState(TableMetadata metadata, Expression conflictFilter, Expression keys, int commits,
      int noted) {}

  /** The backend pid of the session that began it (its hold is shown as that backend's). */
  private final int backendPid;

  Transaction(Tables tables, boolean readOnly, int backendPid) {
    this.tables = tables;
    this.readOnly = readOnly;
    this.backendPid = backendPid;
  }

  boolean readOnly() {
    return readOnly;
  }

  /** SET TRANSACTION READ ONLY / READ WRITE. */
  void setReadOnly(boolean readOnly) {
    this.readOnly = readOnly;
  }

  /** Whether a statement ran in it (its snapshot is taken). */
  boolean started() {
    return pinned != null || !written.isEmpty();
  }

  boolean failed() {
    return failed;
  }

  void fail() {
    failed = true;
  }

  /** Whether it committed or rolled back (sessions that joined it then leave it). */
  boolean ended() {
    return ended;
  }

  boolean hasWrites() {
    return !written.isEmpty();
  }

  private Map<TableIdentifier, String> pinned() {
    if (pinned == null) {
      if (hold == null) {
        hold = tables.readerPins().hold("transaction block", backendPid); // before the catalog is read: see ReaderPins
      }
      pinned = tables.catalog().tableLocations();
    }
    return pinned;
  }

  /** The block's hold on the versions it reads, from its snapshot to its end (null before its first read). */
  private ReaderPins.Hold hold;

  private void releaseHold() {
    if (hold != null) {
      hold.close();
      hold = null;
    }
  }

  boolean wrote(TableIdentifier id) {
    return written.containsKey(id);
  }

  /**
   * After DDL, which takes effect at once: the tables the block has not written are read as the catalog
   * has them now (so the block sees a table it created or altered); those it wrote keep their state.
   */
  void repin() {
    pinned = null;
    pinnedMetadata.keySet().retainAll(written.keySet());
  }

  /** The table as of the block's snapshot, or as the block left it; empty if it did not exist then. */
  Optional<Table> snapshotOf(TableIdentifier id) {
    Written w = written.get(id);
    if (w != null) {
      return Optional.of(Tables.frozen(w.table));
    }
    Optional<Table> live = tables.current(id);
    return live.flatMap(t -> pinnedMetadata(id, t).map(m -> new BaseTable(new StaticTableOperations(m, t.io()),
        t.name())));
  }

  /** The table this block writes: its private state, starting from the block's snapshot. */
  Optional<Table> live(TableIdentifier id) {
    Written w = written.get(id);
    if (w != null) {
      return Optional.of(w.table);
    }
    if (readOnly) {
      throw new FloeException(SqlState.READ_ONLY_SQL_TRANSACTION,
          "cannot write table \"" + id.name() + "\" in a read-only transaction");
    }
    Optional<Table> live = tables.current(id);
    if (live.isEmpty()) {
      return Optional.empty();
    }
    if (!appends.isEmpty()) {
      throw mixed(id);
    }
    if (keyedWrites().isPresent()) {
      throw mixedKeyed(keyedWrites().get());
    }
    Optional<TableMetadata> base = pinnedMetadata(id, live.get());
    if (base.isEmpty()) {
      return Optional.empty();
    }
    TableOperations real = ((HasTableOperations) live.get()).operations();
    w = new Written(id, base.get(), new TxnOps(real, base.get(), digests), live.get().name());
    written.put(id, w);
    return Optional.of(w.table);
  }

  private Optional<TableMetadata> pinnedMetadata(TableIdentifier id, Table live) {
    TableMetadata cached = pinnedMetadata.get(id);
    if (cached != null) {
      return Optional.of(cached);
    }
    String location = pinned().get(id);
    if (location == null) {
      return Optional.empty(); // created after the block's snapshot
    }
    TableMetadata current = ((HasTableOperations) live).operations().current();
    TableMetadata m = location.equals(current.metadataFileLocation()) ? current
        : TableMetadataParser.read(live.io(), location);
    pinnedMetadata.put(id, m);
    return Optional.of(m);
  }

  // ------------------------------------------------------------------ savepoints

  void savepoint(String name) {
    Map<TableIdentifier, TableState> tables = new HashMap<>();
    written.forEach((id, w) -> tables.put(id, new TableState(w.ops.current(), w.ops.conflictFilter, w.ops.keys,
        w.ops.commits, w.ops.noted)));
    Map<TableIdentifier, Integer> queued = new HashMap<>();
    appends.forEach((id, a) -> queued.put(id, a.rows().size()));
    Map<TableIdentifier, Integer> versions = new HashMap<>();
    tailPins.forEach((id, p) -> p.draft().ifPresent(d -> versions.put(id, d.size())));
    savepoints.push(new Savepoint(name, tables, queued, versions));
  }

  boolean hasSavepoint(String name) {
    return savepoints.stream().anyMatch(s -> s.name().equals(name));
  }

  /** ROLLBACK TO SAVEPOINT: every table back to its state then (the savepoint stays). */
  void rollbackTo(String name) {
    failed = false;
    while (!savepoints.peek().name().equals(name)) {
      savepoints.pop();
    }
    Savepoint s = savepoints.peek();
    appends.entrySet().removeIf(e -> !s.appends().containsKey(e.getKey()));
    appends.forEach((id, a) -> a.rows().subList(s.appends().get(id), a.rows().size()).clear());
    tailPins.forEach((id, p) -> p.draft().ifPresent(d -> d.truncate(s.versions().getOrDefault(id, 0))));
    for (Written w : List.copyOf(written.values())) {
      TableState then = s.tables().get(w.id);
      StagedSnapshots.deleteWritten(w.table, then != null ? then.metadata() : w.base, w.ops.current(), Set.of());
      if (then == null) {
        written.remove(w.id);
      } else {
        w.ops.reset(then.metadata());
        w.ops.conflictFilter = then.conflictFilter();
        w.ops.keys = then.keys();
        w.ops.commits = then.commits();
        w.ops.noted = then.noted();
      }
    }
  }

  void release(String name) {
    while (!savepoints.pop().name().equals(name)) {
      // the savepoints after it go too
    }
  }

  // ------------------------------------------------------------------ end

  /**
   * The block's hold on a tail table's unsealed rows: taken at its first read of the table, so every
   * statement of the block reads the same rows (the block's snapshot), and released when it ends.
   */
  private final java.util.Map<TableIdentifier, dev.floe.tail.Pin> tailPins = new java.util.HashMap<>();

  java.util.Optional<dev.floe.tail.Pin> tailPin(TableIdentifier id) {
    return java.util.Optional.ofNullable(tailPins.get(id));
  }

  void holdTailPin(TableIdentifier id, dev.floe.tail.Pin pin) {
    tailPins.put(id, pin);
  }

  private void releaseTailPins() {
    tailPins.values().forEach(dev.floe.tail.Pin::close);
    tailPins.clear();
  }

  /** Deletes every file the block wrote; nothing it did is visible to anyone. */
  void rollback() {
    ended = true;
    releaseTailPins();
    releaseHold();
    appends.clear();
    for (Written w : written.values()) {
      try {
        w.abandon();
      } catch (RuntimeException e) {
        // unreferenced files: harmless, swept by orphan cleanup
      }
    }
    written.clear();
    savepoints.clear();
  }

  /**
   * Commits every table the block wrote, atomically; a block that only read commits without touching
   * the catalog.
   *
   * @throws FloeException 40001 when a commit since the block's snapshot conflicts with its changes:
   *     nothing is applied then, and what the block wrote is gone; 08007 when the catalog may or may not
   *     have taken it: then every file stays
   */
  void commit() {
    if (failed) {
      throw new IllegalStateException("a failed transaction cannot commit");
    }
    ended = true;
    try {
      commitWrites();
    } finally {
      releaseTailPins();
      releaseHold();
    }
  }

  private void commitWrites() {
    Optional<TableIdentifier> keyed = keyedWrites();
    if (keyed.isPresent()) {
      // a block that changed a keyed table changes nothing else: its COMMIT is one record of the log
      dev.floe.catalog.CommitGate.pass();
      tailPins.get(keyed.get()).draft().orElseThrow().commit(() -> checkOnlySealed(keyed.get()));
      savepoints.clear();
      return;
    }
    if (!appends.isEmpty()) {
      // a block that appends changes nothing else: its COMMIT is the log records, acknowledged when durable
      List<TableIdentifier> ids = new ArrayList<>(appends.keySet());
      ids.sort(java.util.Comparator.comparing(TableIdentifier::toString));
      dev.floe.catalog.CommitGate.pass(); // the appends are the commit
      for (TableIdentifier id : ids) {
        PendingAppend a = appends.get(id);
        if (!a.rows().isEmpty()) {
          a.log().extend(a.rows());
        }
      }
      appends.clear();
      savepoints.clear();
      return;
    }
    if (written.isEmpty()) {
      return;
    }
    List<Written> list = new ArrayList<>(written.values());
    List<Committed> done;
    try {
      done = tables.committer().commitBlock(list, digests);
    } catch (RuntimeException e) {
      // the committer deleted what the block wrote (or, when the outcome is unknown, kept all of it)
      written.clear();
      savepoints.clear();
      throw e;
    }
    // What the statements wrote for themselves and the commit did not keep: their manifests and lists,
    // and files added and removed again within the block.
    for (int k = 0; k < list.size(); k++) {
      Written w = list.get(k);
      if (done.get(k).how() == Committed.How.STAGED) {
        continue; // the block's own snapshot is the table's: everything it names stays
      }
      try {
        StagedSnapshots.deleteWritten(w.table, w.base, w.ops.current(), StagedSnapshots.kept(w.folded()));
      } catch (RuntimeException e) {
        // unreferenced files: harmless, swept by orphan cleanup
      }
    }
    written.clear();
    savepoints.clear();
  }

  /**
   * A table's operations inside a block: its current metadata is the block's private state; a commit
   * replaces it (once the statement's files are on disk) and moves no catalog pointer.
   */
  private static final class TxnOps extends dev.floe.commit.PrivateOperations implements StagingOperations {
    /** The statements' commits so far. */
    int commits;
    /** How many of them said what they read ({@link #staged}). */
    int noted;
    /** What the statements read to decide their changes (OR); null: a statement read everything. */
    Expression conflictFilter = Expressions.alwaysFalse();
    /** The keys the statements added, for tables with a primary key; null when none. */
    Expression keys;
    private final List<dev.floe.catalog.FileDigests.Digest> digests;

    TxnOps(TableOperations real, TableMetadata base, List<dev.floe.catalog.FileDigests.Digest> digests) {
      super(real, base);
      this.digests = digests;
    }

    @Override
    public void staged(TableChange.Validation validation) {
      noted++;
      if (conflictFilter != null) {
        conflictFilter = validation.read() == null ? null : Expressions.or(conflictFilter, validation.read());
      }
      if (validation.keys() != null) {
        keys = keys == null ? validation.keys() : Expressions.or(keys, validation.keys());
      }
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      if (base != current()) {
        throw new CommitFailedException("Cannot commit: the transaction's state changed since the change was planned");
      }
      digests.addAll(Durable.now()); // the statement's files are on disk before the block may commit them
      super.commit(base, metadata);
      commits++;
    }
  }
}
