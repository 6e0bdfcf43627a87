package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.read.MetadataTables;
import dev.floe.read.PointReader;
import dev.floe.read.ScanPlan;
import dev.floe.read.ScanFiles;
import dev.floe.read.ScanPlanner;
import dev.floe.read.Versions;
import dev.floe.read.ScanSql;
import dev.floe.sql.QueryBinder;
import dev.floe.sql.TimeTravel;
import dev.floe.tail.Pin;
import dev.floe.tail.TailLog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.And;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.NamedReference;
import org.apache.iceberg.expressions.UnboundPredicate;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Resolves the table references of one statement. Each table is looked up once per statement, so all
 * references to it read the same snapshot, and time-travel targets are resolved to snapshots here.
 */
final class Relations implements QueryBinder.Resolver {
  private final Tables tables;
  private final ScanPlanner planner;
  private final ScanFiles files;
  /** Where unqualified names resolve: the session's schema, or while a view's query binds, the view's. */
  private String defaultSchema;
  private final Evaluator evaluator;
  private final java.util.function.Function<List<String>, Optional<String>> system;
  /** SQL for the view a name designates (bound with this statement's relations), if it is one. */
  private final java.util.function.BiFunction<TableIdentifier, Relations, Optional<String>> views;
  private final Map<TableIdentifier, Optional<Table>> seen = new HashMap<>();
  /** Tails of the tables read (null: none are read, as in a read-only warehouse's helper). */
  private final Tails tails;
  /** Where pins go: the session releases them when the statement has started. */
  private final java.util.function.Consumer<Pin> pinned;
  private final Map<TableIdentifier, Optional<Pin>> pins = new HashMap<>();
  /** Where holds of time-travel reads go: the statement releases them when it ends. */
  private final java.util.function.Consumer<ReaderPins.Hold> held;
  /** The name a row-level statement's SQL uses for its target table, which is read with row ids. */
  static final String TARGET = "__floe_target__";
  private TableIdentifier target;
  /** Whether {@link #TARGET} was resolved since {@link #target} named it: it stands for one reference. */
  private boolean targetResolved;
  /** The only keys of the target the statement can touch (null: any); see {@link #targetKeys}. */
  private List<Object> targetKeys;

  /**
   * Says that the statement reads only the rows of the target with these values of its one-column
   * primary key (an INSERT's proposed keys, which its checks and ON CONFLICT join on): a keyed tail's
   * target is then read as those keys' rows alone, each looked up in the JVM.
   */
  Relations targetKeys(List<Object> keys) {
    this.targetKeys = List.copyOf(keys);
    return this;
  }
  /** The scans of {@link #TARGET} since {@link #target} named it. */
  private final List<TargetScan> targetScans = new ArrayList<>();
  /** The statement is a network client's: see {@link QueryBinder.Resolver#clientSql()}. */
  private final boolean clientSql;
  /** DuckDB's own catalogs, whose objects (information_schema, pg_catalog, ...) DuckDB resolves. */
  private static final java.util.Set<String> DUCKDB_CATALOGS = java.util.Set.of("system", "temp", "memory");

  /** Where metadata tables' rows go (the statement's DuckDB connection). */
  private final dev.floe.read.RowStage stage;
  /** Whether a key lookup may read its rows in the JVM (the session's {@code floe.point_reads}). */
  private final boolean pointReads;

  /** Evaluates a constant SQL expression (time-travel targets) to a Java value. */
  interface Evaluator {
    Object evaluate(String sql);
  }

  /**
   * @param system SQL for the system relation (pg_catalog, information_schema) a name designates, if any
   */
  Relations(Tables tables, ScanPlanner planner, ScanFiles files, String defaultSchema, Evaluator evaluator,
      java.util.function.Function<List<String>, Optional<String>> system,
      java.util.function.BiFunction<TableIdentifier, Relations, Optional<String>> views, Tails tails,
      java.util.function.Consumer<Pin> pinned, java.util.function.Consumer<ReaderPins.Hold> held, boolean clientSql,
      dev.floe.read.RowStage stage, boolean pointReads) {
    this.held = held;
    this.pointReads = pointReads;
    this.clientSql = clientSql;
    this.stage = stage;
    this.system = system;
    this.views = views;
    this.tails = tails;
    this.pinned = pinned;
    this.tables = tables;
    this.planner = planner;
    this.files = files;
    this.defaultSchema = defaultSchema;
    this.evaluator = evaluator;
  }

  @Override
  public boolean clientSql() {
    return clientSql;
  }

  /** The session's TimeZone, which literals without an offset are read in. */
  private java.time.ZoneId timeZone = java.time.ZoneOffset.UTC;

  void timeZone(java.time.ZoneId zone) {
    this.timeZone = zone;
  }

  @Override
  public java.time.ZoneId timeZone() {
    return timeZone;
  }

  /**
   * How a row-level statement read its target: the files planned (which name the rows by file and
   * position) under the filter the binder pushed down, which the commit validates concurrent deletes
   * against.
   */
  record TargetScan(ScanPlan plan, Expression filter) {}

  /** Makes {@link #TARGET} stand for {@code id}, read with row ids. */
  Relations target(TableIdentifier id) {
    if (!id.equals(target)) {
      targetKeys = null;
    }
    this.target = id;
    targetResolved = false;
    targetScans.clear();
    return this;
  }

  /**
   * The one scan of the target in the query bound since {@link #target}; a row-level statement's change
   * query reads its target exactly once.
   */
  TargetScan targetScan() {
    if (targetScans.size() != 1) {
      throw new IllegalStateException("the target was scanned " + targetScans.size() + " times");
    }
    return targetScans.get(0);
  }

  /**
   * The unsealed rows of table {@code id}'s tail this statement reads, pinned now if they are not yet
   * (in a transaction block, the block's pin); empty if the table has no tail.
   */
  Optional<Pin> tailPin(TableIdentifier id) {
    Optional<Table> t = table(id);
    return t.isEmpty() ? Optional.empty() : unsealed(id, t.get());
  }

  /** Runs {@code binding} with unqualified names resolving in {@code schema} (a view's query's own). */
  <T> T inSchema(String schema, java.util.function.Supplier<T> binding) {
    String session = defaultSchema;
    defaultSchema = schema;
    try {
      return binding.get();
    } finally {
      defaultSchema = session;
    }
  }

  /** The table as this statement reads it (resolved once per statement). */
  Optional<Table> statementTable(TableIdentifier id) {
    return table(id);
  }

  @Override
  public Optional<QueryBinder.Relation> resolve(List<String> parts, Optional<TimeTravel> timeTravel, int position) {
    if (target != null && parts.size() == 1 && parts.get(0).equals(TARGET)) {
      if (targetResolved) {
        // a second reference is the statement's own text naming Floe's internal name
        throw FloeException.undefinedTable(TARGET, position);
      }
      targetResolved = true;
      Table t = table(target).orElseThrow(() -> FloeException.undefinedTable(target.name()));
      // a keyed tail's statement changes the newest versions of keys, in the memtable too; any other
      // tail was sealed first
      Optional<Pin> unsealed = Optional.empty();
      if (TailLog.hasTail(t) && TailLog.keyed(t.schema())) {
        unsealed = unsealed(target, t);
        t = seen.get(target).orElseThrow(); // a stale snapshot was read again
      }
      TableRelation relation = new TableRelation(planner, files, t, Optional.ofNullable(t.currentSnapshot()),
          t.schema(), false, qualified(target), true, unsealed, Optional.empty(), pointReads, targetScans::add);
      relation.onlyKeys = targetKeys;
      return Optional.of(relation);
    }
    Optional<String> systemSql = system.apply(parts);
    if (systemSql.isPresent()) {
      return Optional.of(new SystemRelation(systemSql.get(), parts));
    }
    Optional<TableIdentifier> id = tables.identifier(parts, defaultSchema);
    if (id.isEmpty()) {
      if (parts.size() >= 3 && !DUCKDB_CATALOGS.contains(parts.get(0).toLowerCase(java.util.Locale.ROOT))) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "cross-database references are not implemented: "
            + String.join(".", parts), position);
      }
      return Optional.empty();
    }
    String name = id.get().name();
    Optional<String[]> meta = MetadataTables.split(name);
    if (meta.isPresent() && MetadataTables.isKnown(meta.get()[1])) {
      TableIdentifier base = TableIdentifier.of(id.get().namespace(), meta.get()[0]);
      Optional<Table> table = table(base);
      if (table.isPresent()) {
        String kind = meta.get()[1];
        Optional<Snapshot> snapshot = timeTravel.map(tt -> snapshot(table.get(), tt));
        return Optional.of(new MetadataRelation(table.get(), kind, snapshot, qualified(id.get()), stage));
      }
    }
    Optional<Table> table = table(id.get());
    if (table.isEmpty()) {
      Optional<String> view = timeTravel.isPresent() ? Optional.empty() : views.apply(id.get(), this);
      return view.map(sql -> new SystemRelation(sql, qualified(id.get())));
    }
    Table t = table.get();
    boolean historic = timeTravel.isPresent();
    Optional<Pin> unsealed = Optional.empty();
    if (!historic) {
      unsealed = unsealed(id.get(), t);
      t = seen.get(id.get()).orElseThrow(); // a stale snapshot was read again
    }
    Optional<Snapshot> snapshot = timeTravel.isPresent()
        ? Optional.of(snapshot(t, timeTravel.get()))
        : Optional.ofNullable(t.currentSnapshot());
    if (historic) {
      held.accept(tables.readerPins().hold(id.get(), snapshot.get(), "time-travel read"));
    }
    Schema schema = historic && snapshot.isPresent() ? ScanPlan.schemaOf(t, snapshot.get()) : t.schema();
    Optional<Table> published = tails == null ? Optional.empty() : tails.publishedTier(t, snapshot, historic);
    TableRelation relation = new TableRelation(planner, files, t, snapshot, schema, historic, qualified(id.get()),
        false, unsealed, published, pointReads);
    relation.explained = explained::add;
    return Optional.of(relation);
  }

  /** What each table read of the bound statement does, as EXPLAIN tells it: files read of the snapshot's, or a point read. */
  private final List<String> explained = new ArrayList<>();

  List<String> explained() {
    return explained;
  }

  /**
   * The rows of {@code t}'s tail its snapshot does not hold, pinned for this statement (once per table,
   * so every reference reads the same rows). When the memtable has already let go of rows the snapshot
   * lacks (a seal committed after the snapshot was read), the table is read again; a transaction block
   * cannot, and fails with 40001.
   */
  private Optional<Pin> unsealed(TableIdentifier id, Table t) {
    if (tails == null || !TailLog.hasTail(t)) {
      return Optional.empty();
    }
    Optional<Pin> known = pins.get(id);
    if (known != null) {
      return known;
    }
    Optional<TailLog> log = tails.forReading(id, t);
    if (log.isEmpty()) {
      return Optional.empty();
    }
    Optional<Transaction> block = tables.transaction();
    if (block.isPresent() && block.get().tailPin(id).isPresent()) {
      // the block read this table before: the same unsealed rows again (its snapshot)
      Optional<Pin> held = block.get().tailPin(id);
      pins.put(id, held);
      return held;
    }
    Optional<Pin> pin = log.get().pin(TailLog.through(t));
    if (pin.isEmpty() && !tables.inTransaction()) {
      Optional<Table> again = tables.snapshotOf(id);
      seen.put(id, again);
      if (again.isPresent()) {
        pin = log.get().pin(TailLog.through(again.get()));
      }
    }
    if (pin.isEmpty()) {
      throw new FloeException(SqlState.SERIALIZATION_FAILURE, "could not read table \"" + id.name()
          + "\": rows appended to its tail were sealed into a snapshot newer than this transaction's", null,
          "Retry the transaction.", 0, null);
    }
    if (block.isPresent()) {
      block.get().holdTailPin(id, pin.get()); // released when the block ends
    } else {
      pinned.accept(pin.get());
    }
    pins.put(id, pin);
    return pin;
  }

  private List<String> qualified(TableIdentifier id) {
    return List.of(tables.catalog().name(), id.namespace().level(0), id.name());
  }

  private Optional<Table> table(TableIdentifier id) {
    return seen.computeIfAbsent(id, tables::snapshotOf);
  }

  /** The snapshot a time-travel clause designates. */
  Snapshot snapshot(Table table, TimeTravel tt) {
    switch (tt.kind()) {
      case VERSION -> {
        long version = asLong(evaluator.evaluate("CAST(" + tt.valueSql() + " AS BIGINT)"), tt);
        return Versions.find(table, version).orElseThrow(() -> noSuchVersion(table, "version " + version, tt));
      }
      case SNAPSHOT -> {
        String value = tt.valueSql().strip();
        if (value.startsWith("'")) {
          String ref = (String) evaluator.evaluate(value);
          SnapshotRef r = table.refs().get(ref);
          if (r == null) {
            throw noSuchVersion(table, "branch or tag \"" + ref + "\"", tt);
          }
          return table.snapshot(r.snapshotId());
        }
        long id = asLong(evaluator.evaluate("CAST(" + value + " AS BIGINT)"), tt);
        Snapshot s = table.snapshot(id);
        if (s == null) {
          throw noSuchVersion(table, "snapshot " + id, tt);
        }
        return s;
      }
      default -> {
        Object v = evaluator.evaluate("epoch_ms(CAST(" + tt.valueSql() + " AS TIMESTAMPTZ))");
        long millis = asLong(v, tt);
        try {
          return table.snapshot(SnapshotUtil.snapshotIdAsOfTime(table, millis));
        } catch (IllegalArgumentException e) {
          throw noSuchVersion(table, "version at or before " + Instant.ofEpochMilli(millis), tt);
        }
      }
    }
  }

  private static long asLong(Object v, TimeTravel tt) {
    if (v instanceof Number n) {
      return n.longValue();
    }
    throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "invalid time-travel target " + tt.valueSql(), tt.position());
  }

  private static FloeException noSuchVersion(Table table, String what, TimeTravel tt) {
    return new FloeException(SqlState.INVALID_PARAMETER_VALUE, "table \"" + shortName(table) + "\" has no " + what,
        null, "Its snapshots are listed in \"" + shortName(table) + "$snapshots\"; expired ones cannot be read.",
        tt.position(), null);
  }

  static String shortName(Table table) {
    String name = table.name();
    return name.substring(name.lastIndexOf('.') + 1);
  }

  /** What a keyed tail's memtable rows carry as their file in a row-level statement's target. */
  static final String MEMTABLE_ROWS = "<memtable>";

  /** A data table at a snapshot. */
  static final class TableRelation implements QueryBinder.Relation {
    final ScanPlanner planner;
    final ScanFiles files;
    final Table table;
    final Optional<Snapshot> snapshot;
    final Schema schema;
    final boolean historic;
    final List<String> name;
    final boolean rowIds;
    final Optional<Pin> unsealed;
    /** A log's published table on object storage, as of the version this snapshot names. */
    final Optional<Table> published;
    /** Whether a key lookup may read its rows in the JVM ({@link #pointRows}). */
    final boolean pointReads;
    /** A keyed tail target's only keys the statement touches (null: any; see Relations#targetKeys). */
    List<Object> onlyKeys;
    /** Told how the relation reads its rows, for EXPLAIN; null: nobody asks. */
    java.util.function.Consumer<String> explained;
    /** Told of each scan the relation's SQL makes (a row-level statement's target); null: nobody. */
    private final java.util.function.Consumer<TargetScan> scans;

    TableRelation(ScanPlanner planner, ScanFiles files, Table table, Optional<Snapshot> snapshot, Schema schema,
        boolean historic, List<String> name, boolean rowIds, Optional<Pin> unsealed,
        Optional<Table> published, boolean pointReads) {
      this(planner, files, table, snapshot, schema, historic, name, rowIds, unsealed, published, pointReads, null);
    }

    TableRelation(ScanPlanner planner, ScanFiles files, Table table, Optional<Snapshot> snapshot, Schema schema,
        boolean historic, List<String> name, boolean rowIds, Optional<Pin> unsealed,
        Optional<Table> published, boolean pointReads, java.util.function.Consumer<TargetScan> scans) {
      this.scans = scans;
      this.pointReads = pointReads;
      this.published = published;
      this.rowIds = rowIds;
      this.unsealed = unsealed;
      this.files = files;
      this.name = name;
      this.planner = planner;
      this.table = table;
      this.snapshot = snapshot;
      this.schema = schema;
      this.historic = historic;
    }

    @Override
    public Optional<Schema> schema() {
      return Optional.of(schema);
    }

    @Override
    public boolean changeTarget() {
      return rowIds; // only the target of a row-level statement reads its rows' files and positions
    }

    @Override
    public List<String> qualifiedName() {
      return name;
    }

    @Override
    public List<dev.floe.Column> columns() {
      return dev.floe.types.TypeMapping.columns(schema, table.properties());
    }

    @Override
    public String sql(Expression filter) {
      ScanPlan plan = ScanPlan.plan(planner, table, snapshot, filter, historic);
      if (scans != null) {
        scans.accept(new TargetScan(plan, filter));
      }
      if (unsealed.isPresent() && !unsealed.get().isEmpty() && unsealed.get().keyed()) {
        Optional<String> point = onlyKeys != null ? keyedRows(plan, filter, unsealed.get(), onlyKeys)
            : keyedPoint(plan, filter, unsealed.get());
        if (point.isPresent()) {
          return point.get();
        }
      }
      Optional<String> point = pointRows(plan, filter);
      String scan = point.orElseGet(() -> ScanSql.relation(plan, table.io(), files, rowIds));
      if (explained != null) {
        explained.accept(explain(plan, point.isPresent()));
      }
      if (published.isPresent() && published.get().currentSnapshot() != null) {
        // rows the log published to object storage and let go of: the files planning keeps are read
        // from their local copies
        Table p = published.get();
        List<org.apache.iceberg.FileScanTask> tasks = planner.plan(p, p.currentSnapshot(), p.schema(), filter);
        if (!tasks.isEmpty()) {
          ScanPlan publishedPlan = new ScanPlan(p, Optional.of(p.currentSnapshot()), schema, plan.columns(), tasks);
          scan = ScanSql.relation(publishedPlan, p.io(), files, rowIds) + "\nUNION ALL\n" + scan;
        }
      }
      if (unsealed.isEmpty() || unsealed.get().isEmpty()) {
        return scan;
      }
      // the rows of the tail this snapshot does not hold: each row is in exactly one of the two
      StringBuilder columns = new StringBuilder();
      for (dev.floe.Column c : plan.columns()) {
        columns.append(columns.length() > 0 ? ", " : "").append("CAST(").append(
            dev.floe.sql.Lexer.quoteIdentifier(c.name())).append(" AS ").append(
            dev.floe.types.TypeMapping.duckdbType(c, schema.findField(c.fieldId()).type())).append(") AS ").append(
            dev.floe.sql.Lexer.quoteIdentifier(c.name()));
      }
      if (unsealed.get().keyed()) {
        return keyed(scan, unsealed.get(), columns);
      }
      // a filter the memtable's column bounds rule out leaves the memtable out, as planning leaves out files
      Optional<String> rows = unsealed.get().sql(columns.toString(), filter);
      return rows.isEmpty() ? scan : scan + "\nUNION ALL\n" + rows.get();
    }
    /**
     * A keyed tail's rows: the files' rows of keys with no version in the memtable, and the newest
     * version of every other key unless it deletes the key. Every version is read whatever the filter
     * (an older one must not stand in for a newer that does not match), and in a row-level statement's
     * target the memtable's rows are named by their offsets ({@value #MEMTABLE_ROWS}, offset).
     */
    private String keyed(String scan, Pin pin, StringBuilder columns) {
      if (rowIds) {
        columns.append(", '").append(MEMTABLE_ROWS).append("' AS ").append(dev.floe.read.ScanSql.ROW_FILE).append(", ")
            .append(dev.floe.sql.Lexer.quoteIdentifier(TailLog.OFFSET_COLUMN)).append(" AS ")
            .append(dev.floe.read.ScanSql.ROW_POSITION);
      }
      StringBuilder on = new StringBuilder();
      for (int id : schema.identifierFieldIds()) {
        String k = dev.floe.sql.Lexer.quoteIdentifier(schema.findField(id).name());
        on.append(on.length() > 0 ? " AND " : "").append("__floe_k.").append(k).append(" = __floe_s.").append(k);
      }
      return "SELECT * FROM (" + scan + ") AS __floe_s WHERE NOT EXISTS (SELECT 1 FROM (" + pin.versionKeys()
          + ") AS __floe_k WHERE " + on + ")\nUNION ALL\n" + pin.newest(columns.toString());
    }

    /**
     * A keyed tail's rows of one key, when the filter requires its (one-column) key to equal a value:
     * the key's newest version in the memtable, found in the JVM (none if it deletes the key), or
     * without one the files' rows of the key (a point read where one can, the planned scan otherwise),
     * with nothing to subtract: no DuckDB window over the memtable, no anti-join.
     */
    private Optional<String> keyedPoint(ScanPlan plan, Expression filter, Pin pin) {
      if (schema.identifierFieldIds().size() != 1) {
        return Optional.empty();
      }
      org.apache.iceberg.types.Types.NestedField keyField = schema.findField(
          schema.identifierFieldIds().iterator().next());
      for (UnboundPredicate<?> p : equalities(filter, new ArrayList<>())) {
        if (!((NamedReference<?>) p.term()).name().equals(keyField.name())) {
          continue;
        }
        dev.floe.Column keyColumn = plan.columns().stream().filter(c -> c.fieldId() == keyField.fieldId())
            .findFirst().orElse(null);
        Object key = keyColumn == null ? null : keyValue(keyColumn.type().kind(), p.literal().value());
        if (key == null) {
          return Optional.empty();
        }
        Optional<Pin.Version> version = pin.version(key);
        if (version.isEmpty()) {
          // no version of the key is pinned: the files hold its row, if any
          return Optional.of(pointRows(plan, filter).orElseGet(() -> ScanSql.relation(plan, table.io(), files,
              rowIds)));
        }
        if (version.get().deleted()) {
          return Optional.of(ScanSql.relation(plan, List.of(), rowIds)); // no rows
        }
        return Optional.of(versionRow(plan, pin, version.get()));
      }
      return Optional.empty();
    }

    /**
     * A keyed tail's rows of the given keys (of its one-column key), each read as {@link #keyedPoint}
     * reads one; empty when a key's rows cannot be read so (the general SQL then reads them).
     */
    private Optional<String> keyedRows(ScanPlan plan, Expression filter, Pin pin, List<Object> keys) {
      if (schema.identifierFieldIds().size() != 1 || keys.isEmpty() || keys.size() > ScanSql.MAX_POINT_ROWS) {
        return Optional.empty();
      }
      String key = schema.findField(schema.identifierFieldIds().iterator().next()).name();
      List<String> parts = new ArrayList<>();
      for (Object k : keys) {
        Expression one = ScanPlan.prunesBy(schema.findField(key).type()) ? Expressions.equal(key, k)
            : Expressions.alwaysTrue();
        ScanPlan keyPlan = ScanPlan.plan(planner, table, snapshot, one, historic);
        Optional<Pin.Version> version = pin.version(k);
        if (version.isPresent()) {
          if (!version.get().deleted()) {
            parts.add(versionRow(keyPlan, pin, version.get()));
          }
          continue;
        }
        Optional<String> rows = pointRows(keyPlan, one);
        if (rows.isEmpty()) {
          return Optional.empty();
        }
        parts.add(rows.get());
      }
      return Optional.of(parts.isEmpty() ? ScanSql.relation(plan, List.of(), rowIds)
          : String.join("\nUNION ALL\n", parts));
    }

    /**
     * The table's row of a one-column primary key as this relation reads it, in the JVM: the values of
     * {@link #columns()} in Iceberg's internal representation; an empty Optional when the key has no
     * row; null when it cannot be told here (the files cannot be point-read, or hold it twice).
     */
    Optional<Object[]> keyRow(Object key) {
      if (schema.identifierFieldIds().size() != 1 || historic || published.isPresent()) {
        return null;
      }
      List<dev.floe.Column> columns = columns();
      if (unsealed.isPresent() && !unsealed.get().isEmpty()) {
        if (!unsealed.get().keyed()) {
          return null;
        }
        Optional<Pin.Version> version = unsealed.get().version(key);
        if (version.isPresent()) {
          if (version.get().deleted()) {
            return Optional.empty();
          }
          List<org.apache.iceberg.types.Types.NestedField> logColumns = unsealed.get().columns();
          Object[] row = new Object[columns.size()];
          for (int k = 0; k < columns.size(); k++) {
            if (columns.get(k).name().equals(TailLog.OFFSET_COLUMN)) {
              row[k] = version.get().offset();
            }
            for (int i = 0; i < logColumns.size(); i++) {
              if (logColumns.get(i).fieldId() == columns.get(k).fieldId()) {
                row[k] = version.get().values()[i];
              }
            }
          }
          return Optional.of(row);
        }
      }
      org.apache.iceberg.types.Types.NestedField keyField = schema.findField(schema.identifierFieldIds().iterator().next());
      List<PointReader.Field> fields = new ArrayList<>();
      PointReader.Field keyRead = null;
      for (dev.floe.Column c : columns) {
        org.apache.iceberg.types.Type type = schema.findField(c.fieldId()).type();
        if (!PointReader.readable(type, c.type().kind())) {
          return null;
        }
        PointReader.Field f = new PointReader.Field(c.fieldId(), type, c.type().kind());
        fields.add(f);
        if (c.fieldId() == keyField.fieldId()) {
          keyRead = f;
          if (!PointReader.keyable(c.type().kind())) {
            return null;
          }
        }
      }
      ScanPlan plan = ScanPlan.plan(planner, table, snapshot, ScanPlan.prunesBy(keyField.type())
          ? Expressions.equal(keyField.name(), key) : Expressions.alwaysTrue(), false);
      Optional<List<PointReader.Hit>> hits = PointReader.scan(plan, files, keyRead, key, fields, 2);
      if (hits.isEmpty() || hits.get().size() > 1) {
        return null;
      }
      if (hits.get().isEmpty()) {
        return Optional.empty();
      }
      Object[] values = hits.get().get(0).values();
      Object[] row = new Object[columns.size()];
      for (int k = 0; k < columns.size(); k++) {
        row[k] = dev.floe.types.IcebergValues.internal(fields.get(k).type(), values[k]);
      }
      return Optional.of(row);
    }

    /** A memtable version as a one-row relation of the plan's columns (and row ids, in a target). */
    private String versionRow(ScanPlan plan, Pin pin, Pin.Version v) {
      List<org.apache.iceberg.types.Types.NestedField> logColumns = pin.columns();
      StringBuilder sql = new StringBuilder("SELECT ");
      List<dev.floe.Column> columns = plan.columns();
      for (int k = 0; k < columns.size(); k++) {
        dev.floe.Column c = columns.get(k);
        org.apache.iceberg.types.Type type = plan.schema().findField(c.fieldId()).type();
        Object value = null;
        if (c.name().equals(TailLog.OFFSET_COLUMN)) {
          value = v.offset();
        } else {
          for (int i = 0; i < logColumns.size(); i++) {
            if (logColumns.get(i).fieldId() == c.fieldId()) {
              value = v.values()[i];
            }
          }
        }
        sql.append(k > 0 ? ", " : "").append("CAST(").append(dev.floe.types.SqlLiterals.of(type, value)).append(" AS ")
            .append(dev.floe.types.TypeMapping.duckdbType(c, type)).append(") AS ")
            .append(dev.floe.sql.Lexer.quoteIdentifier(c.name()));
      }
      if (rowIds) {
        sql.append(", '").append(MEMTABLE_ROWS).append("' AS ").append(ScanSql.ROW_FILE).append(", CAST(")
            .append(v.offset()).append(" AS BIGINT) AS ").append(ScanSql.ROW_POSITION);
      }
      return sql.toString();
    }

    /**
     * When the filter requires a column to equal a value that a point read can look up, the planned
     * files' rows with that value, read in the JVM and given to DuckDB as literals: DuckDB then plans and
     * runs the statement over those rows instead of decoding every row group that may hold them (a
     * one-row UPDATE's "find the row" query). Empty when the files cannot be read so, or too many rows
     * match (docs/decisions/0005-point-reads.md).
     */
    /** How this relation reads {@code plan}: its files of the snapshot's, or a point read in the JVM. */
    private String explain(ScanPlan plan, boolean point) {
      String total = snapshot.map(s -> s.summary() == null ? null : s.summary().get("total-data-files")).orElse("0");
      long dataFiles = plan.tasks().stream().map(t -> t.file().location()).distinct().count();
      long deleteFiles = plan.tasks().stream().flatMap(t -> t.deletes().stream()).map(d -> d.location()).distinct()
          .count();
      String table = String.join(".", name.subList(Math.max(0, name.size() - 2), name.size()));
      return "Floe " + (point ? "point read of " + table + " by primary key, in Floe's reader" : "scan of " + table)
          + ": " + dataFiles + " of " + (total == null ? "?" : total) + " data files" + (deleteFiles > 0 ? ", "
          + deleteFiles + " delete files" : "") + (unsealed.isPresent() && !unsealed.get().isEmpty()
          ? ", and the tail's unsealed rows" : "");
    }

    private Optional<String> pointRows(ScanPlan plan, Expression filter) {
      if (!pointReads) {
        return Optional.empty();
      }
      for (UnboundPredicate<?> p : equalities(filter, new ArrayList<>())) {
        String name = ((NamedReference<?>) p.term()).name();
        for (dev.floe.Column c : plan.columns()) {
          if (!c.name().equals(name) || !PointReader.keyable(c.type().kind())) {
            continue;
          }
          Object key = keyValue(c.type().kind(), p.literal().value());
          if (key == null) {
            continue;
          }
          List<PointReader.Field> fields = new ArrayList<>();
          PointReader.Field keyField = null;
          for (dev.floe.Column col : plan.columns()) {
            org.apache.iceberg.types.Type type = plan.schema().findField(col.fieldId()).type();
            if (!PointReader.readable(type, col.type().kind())) {
              return Optional.empty();
            }
            PointReader.Field f = new PointReader.Field(col.fieldId(), type, col.type().kind());
            fields.add(f);
            if (col == c) {
              keyField = f;
            }
          }
          Optional<List<PointReader.Hit>> hits = PointReader.scan(plan, files, keyField, key, fields,
              ScanSql.MAX_POINT_ROWS + 1);
          if (hits.isEmpty() || hits.get().size() > ScanSql.MAX_POINT_ROWS) {
            return Optional.empty();
          }
          PointQueries.relations.incrementAndGet();
          return Optional.of(ScanSql.relation(plan, hits.get(), rowIds));
        }
      }
      return Optional.empty();
    }

    /** An Iceberg literal's value as a point read's key of this kind (Long, String), or null. */
    private static Object keyValue(dev.floe.SqlType.Kind kind, Object value) {
      return switch (kind) {
        case SMALLINT, INTEGER, BIGINT -> value instanceof Integer || value instanceof Long
            ? (Object) ((Number) value).longValue() : null;
        case TEXT, VARCHAR -> value instanceof CharSequence cs ? cs.toString() : null;
        default -> null; // uuid bounds are not pruned by (ScanPlan.prunesBy)
      };
    }

    /** The {@code column = value} conjuncts of a filter. */
    private static List<UnboundPredicate<?>> equalities(Expression e, List<UnboundPredicate<?>> out) {
      if (e instanceof And and) {
        equalities(and.left(), out);
        equalities(and.right(), out);
      } else if (e instanceof UnboundPredicate<?> p && p.op() == Expression.Operation.EQ
          && p.term() instanceof NamedReference && p.literal() != null) {
        out.add(p);
      }
      return out;
    }
  }

  /** A metadata table ($snapshots, $files, ...). */
  record MetadataRelation(Table table, String kind, Optional<Snapshot> snapshot, List<String> qualifiedName,
      dev.floe.read.RowStage stage) implements QueryBinder.Relation {
    @Override
    public List<dev.floe.Column> columns() {
      return List.of();
    }

    @Override
    public Optional<Schema> schema() {
      return Optional.empty();
    }

    @Override
    public String sql(Expression filter) {
      return MetadataTables.relation(table, kind, snapshot, stage);
    }
  }

  /** A relation of the PostgreSQL system catalogs. */
  record SystemRelation(String sql, List<String> qualifiedName) implements QueryBinder.Relation {
    @Override
    public List<dev.floe.Column> columns() {
      return List.of();
    }

    @Override
    public Optional<Schema> schema() {
      return Optional.empty();
    }

    @Override
    public String sql(Expression filter) {
      return sql;
    }
  }
}
