package dev.floe;

import static org.assertj.core.api.Assertions.fail;

import dev.floe.testing.Canonical;
import dev.floe.testing.IcebergClients;
import dev.floe.testing.IcebergFiles;
import dev.floe.testing.RandomValues;
import dev.floe.testing.SqlPredicate;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.expressions.Term;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.StructLikeWrapper;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Randomized differential test: random Iceberg tables written through Iceberg's Java API (JdbcCatalog on
 * the warehouse's catalog.db, as Spark or Flink would write them) must read the same through Floe as
 * through Iceberg's generic reader ({@link IcebergGenerics}), after every operation: appends, schema
 * evolution, partition evolution, position deletes (v2) and deletion vectors (v3), equality deletes,
 * file deletes and compaction; filtered reads (predicate pushdown) must equal filtering the reference rows
 * with SQL semantics; every snapshot must read the same by time travel.
 *
 * <p>Seeds: a fixed set by default (deterministic in CI). {@code -Dfloe.seed=N} replays one seed,
 * {@code -Dfloe.randomSeeds=K} adds K fresh random seeds (printed), {@code -Dfloe.ops=N} sets the number
 * of operations per seed.
 */
class DifferentialIcebergTest {
  private static final long[] DEFAULT_SEEDS = {2, 3, 4, 8};
  private static final int DEFAULT_OPS = 18;
  private static final TableIdentifier ID = TableIdentifier.of(Namespace.of("public"), "t");
  private static final List<String> NAMES = List.of("id", "a", "b", "c", "d", "e", "f", "g", "h", "k", "v", "w",
      "x", "y", "z", "qty", "price", "name", "note", "day", "ts", "amount", "Mixed Case", "select", "ünï",
      "with\"quote", "UPPER", "file_name", "pos", "filename", "it's");
  // Not in the pool while positionDeletesOnTableWithColumnNamedFileRowNumber fails: "file_row_number"
  // (a fifth of random seeds hit that bug, which hides everything else).

  @TempDir
  Path temp;

  @TestFactory
  Stream<DynamicTest> randomWorkloads() {
    List<Long> seeds = new ArrayList<>();
    String replay = System.getProperty("floe.seed");
    if (replay != null && !replay.isBlank()) {
      seeds.add(Long.parseLong(replay.trim()));
    } else {
      for (long s : DEFAULT_SEEDS) {
        seeds.add(s);
      }
      int extra = Integer.getInteger("floe.randomSeeds", 0);
      Random r = new Random();
      for (int i = 0; i < extra; i++) {
        seeds.add(r.nextLong() & 0xffffffffL);
      }
    }
    int ops = Integer.getInteger("floe.ops", DEFAULT_OPS);
    return seeds.stream().map(seed -> DynamicTest.dynamicTest("seed " + seed, () -> runSeed(seed, ops)));
  }

  private void runSeed(long seed, int ops) throws Exception {
    System.out.println("[DifferentialIcebergTest] seed " + seed + " (replay with -Dfloe.seed=" + seed + ")");
    Path warehouse = temp.resolve("seed-" + seed).toAbsolutePath();
    try (Database db = Floe.open(warehouse)) {
      // Table locations as a plain path or as the file: URIs Spark and Flink write.
      String location = switch ((int) Math.floorMod(seed, 3L)) {
        case 0 -> warehouse.toString();
        case 1 -> "file:" + warehouse;
        default -> "file://" + warehouse;
      };
      JdbcCatalog catalog = IcebergClients.jdbcCatalog(warehouse, location);
      try {
        new Workload(seed, db, catalog).run(ops);
      } finally {
        catalog.close();
      }
    }
  }

  // ------------------------------------------------------------------ minimized reproductions

  /** A table written through JdbcCatalog, its rows read back by Floe and by Iceberg's generic reader. */
  private static void assertSameRows(Database db, Table table, String sql) {
    String problem = sameRows(db, table, sql);
    if (problem != null) {
      fail(problem);
    }
  }

  /** Null if Floe reads the same rows as Iceberg's generic reader, else what differs. */
  private static String sameRows(Database db, Table table, String sql) {
    table.refresh();
    List<Record> ref = Workload.read(IcebergGenerics.read(table).build(), table.schema());
    List<List<String>> actual;
    try {
      actual = Canonical.rows(db.sql(sql));
    } catch (FloeException e) {
      return sql + ": Floe failed: " + e.sqlState() + " " + e.getMessage();
    }
    String diff = Canonical.diff(Canonical.records(ref), actual, 20);
    return diff == null ? null : sql + ": " + diff;
  }

  private static Record row(Schema schema, Object... values) {
    GenericRecord r = GenericRecord.create(schema);
    for (int i = 0; i < values.length; i++) {
      r.set(i, values[i]);
    }
    return r;
  }

  /**
   * Found by seeds 1808734545 and 3539125604. A data column named {@code file_row_number} shadows DuckDB's
   * virtual row-number column in ScanSql's position-delete anti-join ({@code f.file_row_number = d.pos}),
   * so a position delete (or deletion vector) at position p removes the rows whose column value is p
   * instead of the row at position p.
   */
  @Test
  void positionDeletesOnTableWithColumnNamedFileRowNumber() throws Exception {
    Path warehouse = temp.resolve("file-row-number");
    try (Database db = Floe.open(warehouse)) {
      JdbcCatalog catalog = IcebergClients.jdbcCatalog(warehouse);
      List<String> problems = new ArrayList<>();
      try {
        for (int version : new int[] {2, 3}) {
          Schema schema = new Schema(Types.NestedField.optional(1, "file_row_number", Types.LongType.get()),
              Types.NestedField.optional(2, "name", Types.StringType.get()));
          Table t = catalog.createTable(TableIdentifier.of("public", "v" + version), schema,
              PartitionSpec.unpartitioned(), Map.of(TableProperties.FORMAT_VERSION, Integer.toString(version)));
          DataFile f = IcebergFiles.writeData(t,
              List.of(row(schema, 5L, "row 0"), row(schema, 0L, "row 1"), row(schema, 1L, "row 2")), 10).get(0);
          t.newAppend().appendFile(f).commit();
          // Delete the row at position 0: ("row 0", 5) must go, ("row 1", 0) must stay.
          RowDelta delta = t.newRowDelta();
          if (version == 2) {
            delta.addDeletes(IcebergFiles.writePositionDeletes(t, t.spec(), null,
                Map.of(f.location(), new TreeSet<>(List.of(0L)))));
          } else {
            IcebergFiles.writeDeletionVectors(t, Map.of(f, List.of(0L))).added().forEach(delta::addDeletes);
          }
          delta.commit();
          String problem = sameRows(db, t, "SELECT * FROM public.v" + version);
          if (problem != null) {
            problems.add("format v" + version + ": " + problem);
          }
        }
      } finally {
        catalog.close();
      }
      if (!problems.isEmpty()) {
        fail(String.join("\n", problems));
      }
    }
  }

  /**
   * Found by seed 3508795390. Two columns with v3 initial defaults of different types make every read of
   * the table fail ("Cannot deduce template type 'T' in function: 'list_value(...)'"): ScanSql.schemaMap
   * puts each column's {@code default_value: CAST(.. AS <type>)} into one DuckDB MAP literal, whose
   * struct values must all have one type.
   */
  @Test
  void initialDefaultsOfDifferentTypes() throws Exception {
    Path warehouse = temp.resolve("defaults");
    try (Database db = Floe.open(warehouse)) {
      JdbcCatalog catalog = IcebergClients.jdbcCatalog(warehouse);
      try {
        Schema schema = new Schema(Types.NestedField.optional(1, "id", Types.IntegerType.get()));
        Table t = catalog.createTable(TableIdentifier.of("public", "t"), schema, PartitionSpec.unpartitioned(),
            Map.of(TableProperties.FORMAT_VERSION, "3"));
        t.newAppend().appendFile(IcebergFiles.writeData(t, List.of(row(schema, 1), row(schema, 2)), 10).get(0))
            .commit();
        t.updateSchema().addColumn("d", Types.DateType.get(), Literal.of("2024-06-30").to(Types.DateType.get()))
            .commit();
        assertSameRows(db, t, "SELECT * FROM public.t"); // one default: fine
        t.updateSchema().addColumn("n", Types.IntegerType.get(), Literal.of(7)).commit();
        assertSameRows(db, t, "SELECT * FROM public.t"); // two defaults of different types: fails
      } finally {
        catalog.close();
      }
    }
  }

  /**
   * Found by seed 1489747221. SqlLiterals renders timestamps via {@code Instant.EPOCH.plusNanos(
   * Math.multiplyExact(micros, 1000L))}, which overflows for instants before 1677-09-21 or after 2262-04-11:
   * a table with such a timestamp initial default cannot be read (a raw ArithmeticException escapes, not
   * even a FloeException), and the same rendering serves write defaults (Inserts) and metadata table rows
   * such as {@code $partitions} of an identity-partitioned timestamp column.
   */
  @Test
  void timestampLiteralsOutsideTheNanosecondRange() throws Exception {
    Path warehouse = temp.resolve("old-timestamps");
    List<String> problems = new ArrayList<>();
    try (Database db = Floe.open(warehouse)) {
      JdbcCatalog catalog = IcebergClients.jdbcCatalog(warehouse);
      try {
        Schema schema = new Schema(Types.NestedField.optional(1, "id", Types.IntegerType.get()));
        Table t = catalog.createTable(TableIdentifier.of("public", "t"), schema, PartitionSpec.unpartitioned(),
            Map.of(TableProperties.FORMAT_VERSION, "3"));
        t.newAppend().appendFile(IcebergFiles.writeData(t, List.of(row(schema, 1)), 10).get(0)).commit();
        t.updateSchema().addColumn("f", Types.TimestampType.withZone(),
            Literal.of("1582-10-10T12:00:00+00:00").to(Types.TimestampType.withZone())).commit();
        try {
          String problem = sameRows(db, t, "SELECT * FROM public.t");
          if (problem != null) {
            problems.add(problem);
          }
        } catch (RuntimeException e) {
          problems.add("initial default 1582-10-10T12:00Z: SELECT * threw " + e);
        }
      } finally {
        catalog.close();
      }
      db.sql("CREATE TABLE p (ts timestamp) PARTITIONED BY (ts)").close();
      db.sql("INSERT INTO p VALUES (TIMESTAMP '1500-01-01 00:00:00')").close();
      try {
        Canonical.rows(db.sql("SELECT * FROM \"p$partitions\""));
      } catch (RuntimeException e) {
        problems.add("identity(ts) partition 1500-01-01: SELECT * FROM \"p$partitions\" threw " + e);
      }
    }
    if (!problems.isEmpty()) {
      fail(String.join("\n", problems));
    }
  }

  /** One random table and the operations applied to it. */
  static final class Workload {
    final long seed;
    final Random rnd;
    final Database db;
    final JdbcCatalog catalog;
    final List<String> log = new ArrayList<>();
    final Set<Integer> protectedIds = new HashSet<>();
    final Set<String> droppedNames = new TreeSet<>();
    Table table;
    int formatVersion;
    List<Record> reference = List.of();
    int filtered;
    long floeNanos;
    long referenceNanos;
    long writeNanos;
    final Map<String, Integer> counts = new java.util.TreeMap<>();

    Workload(long seed, Database db, JdbcCatalog catalog) {
      this.seed = seed;
      // Scramble: java.util.Random's first draws for small neighbouring seeds are nearly equal.
      this.rnd = new Random(new java.util.SplittableRandom(seed).nextLong());
      this.db = db;
      this.catalog = catalog;
    }

    void run(int ops) {
      IcebergFiles.resetNames();
      createTable();
      check("create");
      for (int i = 0; i < ops; i++) {
        int roll = rnd.nextInt(100);
        String what;
        long start = System.nanoTime();
        if (roll < 28 || table.currentSnapshot() == null) {
          what = append();
        } else if (roll < 43) {
          what = schemaChange();
        } else if (roll < 61) {
          what = positionDeletes();
        } else if (roll < 78) {
          what = equalityDeletes();
        } else if (roll < 84) {
          what = specChange();
        } else if (roll < 90) {
          what = deleteDataFile();
        } else {
          what = compact();
        }
        writeNanos += System.nanoTime() - start;
        log.add("op " + i + ": " + what);
        counts.merge(what.split(" ")[0], 1, Integer::sum);
        check("op " + i);
      }
      timeTravel();
      System.out.println("[DifferentialIcebergTest] seed " + seed + ": format v" + formatVersion + ", "
          + table.schema().columns().size() + " columns, " + table.specs().size() + " specs (current "
          + table.spec().fields().size() + " fields), " + counts + ", " + Iterables.size(table.snapshots()) + " snapshots, "
          + reference.size() + " live rows, " + filtered + " filtered queries; Floe " + floeNanos / 1_000_000
          + " ms, reference reads " + referenceNanos / 1_000_000 + " ms, Iceberg writes " + writeNanos / 1_000_000
          + " ms");
    }

    // ---------------------------------------------------------------- table creation

    void createTable() {
      formatVersion = 2 + rnd.nextInt(2);
      int n = 2 + rnd.nextInt(6);
      List<Types.NestedField> fields = new ArrayList<>();
      Set<String> used = new HashSet<>();
      for (int i = 0; i < n; i++) {
        String name = freshName(used);
        used.add(name.toLowerCase(Locale.ROOT));
        Type type = randomType();
        fields.add(rnd.nextInt(4) == 0 ? Types.NestedField.required(i + 1, name, type)
            : Types.NestedField.optional(i + 1, name, type));
      }
      Schema schema = new Schema(fields);
      PartitionSpec.Builder spec = PartitionSpec.builderFor(schema);
      List<String> partitioning = new ArrayList<>();
      if (rnd.nextInt(10) < 6) {
        List<Types.NestedField> candidates = new ArrayList<>(fields);
        Collections.shuffle(candidates, rnd);
        int parts = 1 + rnd.nextInt(2);
        for (Types.NestedField f : candidates) {
          if (partitioning.size() >= parts) {
            break;
          }
          String t = addTransform(spec, f);
          if (t != null) {
            partitioning.add(t);
            protectedIds.add(f.fieldId());
          }
        }
      }
      Map<String, String> props = new HashMap<>();
      props.put(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion));
      if (rnd.nextBoolean()) {
        props.put(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, "2048"); // several row groups per file
        props.put(TableProperties.PARQUET_PAGE_ROW_LIMIT, "4");
      }
      table = catalog.createTable(ID, schema, spec.build(), props);
      log.add("create v" + formatVersion + " " + table.schema().asStruct() + " partitioned by " + partitioning
          + " " + props);
    }

    /** Adds a random transform of {@code f} to {@code spec}; its description, or null if none fits. */
    private String addTransform(PartitionSpec.Builder spec, Types.NestedField f) {
      String name = f.name();
      List<String> options = transformsFor(f.type());
      if (options.isEmpty()) {
        return null;
      }
      String t = options.get(rnd.nextInt(options.size()));
      switch (t) {
        case "identity" -> spec.identity(name);
        case "bucket" -> spec.bucket(name, 2 + rnd.nextInt(4));
        case "truncate" -> spec.truncate(name, 1 + rnd.nextInt(4));
        case "year" -> spec.year(name);
        case "month" -> spec.month(name);
        case "day" -> spec.day(name);
        case "hour" -> spec.hour(name);
        default -> throw new IllegalStateException(t);
      }
      return t + "(" + name + ")";
    }

    private static List<String> transformsFor(Type type) {
      return switch (type.typeId()) {
        case INTEGER, LONG, DECIMAL -> List.of("identity", "bucket", "truncate");
        case STRING -> List.of("identity", "bucket", "truncate");
        case BOOLEAN -> List.of("identity");
        case DATE -> List.of("identity", "bucket", "year", "month", "day");
        case TIMESTAMP -> List.of("identity", "bucket", "year", "month", "day", "hour");
        case TIME, UUID -> List.of("bucket");
        case BINARY -> List.of("bucket", "truncate");
        default -> List.of();
      };
    }

    private Term transformTerm(Types.NestedField f) {
      List<String> options = transformsFor(f.type());
      if (options.isEmpty()) {
        return null;
      }
      String name = f.name();
      return switch (options.get(rnd.nextInt(options.size()))) {
        case "identity" -> Expressions.ref(name);
        case "bucket" -> Expressions.bucket(name, 2 + rnd.nextInt(4));
        case "truncate" -> Expressions.truncate(name, 1 + rnd.nextInt(4));
        case "year" -> Expressions.year(name);
        case "month" -> Expressions.month(name);
        case "day" -> Expressions.day(name);
        default -> Expressions.hour(name);
      };
    }

    private Type randomType() {
      return switch (rnd.nextInt(14)) {
        case 0 -> Types.BooleanType.get();
        case 1 -> Types.IntegerType.get();
        case 2 -> Types.LongType.get();
        case 3 -> Types.FloatType.get();
        case 4 -> Types.DoubleType.get();
        case 5 -> {
          int[][] ps = {{9, 2}, {18, 4}, {38, 10}, {5, 0}, {38, 0}, {3, 3}, {12, 6}, {20, 2}};
          int[] p = ps[rnd.nextInt(ps.length)];
          yield Types.DecimalType.of(p[0], p[1]);
        }
        case 6 -> Types.StringType.get();
        case 7 -> Types.DateType.get();
        case 8 -> Types.TimeType.get();
        case 9 -> Types.TimestampType.withoutZone();
        case 10 -> Types.TimestampType.withZone();
        case 11 -> Types.UUIDType.get();
        case 12 -> Types.BinaryType.get();
        default -> Types.StringType.get();
      };
    }

    /** A column name not in {@code usedLower}, sometimes one that was dropped earlier. */
    private String freshName(Set<String> usedLower) {
      if (!droppedNames.isEmpty() && rnd.nextInt(3) == 0) {
        for (String d : droppedNames) {
          if (!usedLower.contains(d.toLowerCase(Locale.ROOT))) {
            return d;
          }
        }
      }
      for (int attempt = 0; attempt < 100; attempt++) {
        String name = NAMES.get(rnd.nextInt(NAMES.size()));
        if (!usedLower.contains(name.toLowerCase(Locale.ROOT))) {
          return name;
        }
      }
      String name;
      int i = 0;
      do {
        name = "col" + i++;
      } while (usedLower.contains(name));
      return name;
    }

    private Set<String> currentNamesLower() {
      return table.schema().columns().stream().map(f -> f.name().toLowerCase(Locale.ROOT))
          .collect(Collectors.toSet());
    }

    // ---------------------------------------------------------------- operations

    private List<Record> randomRows(int n) {
      Schema schema = table.schema();
      double nulls = rnd.nextInt(4) == 0 ? 0.6 : 0.15;
      Set<Integer> truncated = new HashSet<>();
      for (PartitionSpec spec : table.specs().values()) {
        for (PartitionField pf : spec.fields()) {
          if (pf.transform().toString().startsWith("truncate")) {
            truncated.add(pf.sourceId());
          }
        }
      }
      List<Record> rows = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        GenericRecord r = GenericRecord.create(schema);
        for (Types.NestedField f : schema.columns()) {
          Object v = RandomValues.of(f, rnd, nulls);
          if (truncated.contains(f.fieldId()) && v instanceof Number num && !(v instanceof BigDecimal)
              && num.longValue() < (f.type().typeId() == Type.TypeID.INTEGER ? Integer.MIN_VALUE : Long.MIN_VALUE)
                  + 1000) {
            // Iceberg's truncate wraps around for values this close to the minimum, so its partition value
            // (and every engine's pruning on it, Iceberg's own included) is wrong: not Floe's to test.
            v = RandomValues.promote(0, f.type());
          }
          r.setField(f.name(), v);
        }
        rows.add(r);
      }
      return rows;
    }

    private List<DataFile> writeRows(List<Record> rows) {
      return IcebergFiles.writeData(table, rows, 3 + rnd.nextInt(30));
    }

    String append() {
      List<Record> rows = randomRows(1 + rnd.nextInt(40));
      // Duplicate some rows: equality deletes must remove every copy.
      if (!rows.isEmpty() && rnd.nextBoolean()) {
        rows.add(rows.get(rnd.nextInt(rows.size())).copy());
      }
      List<DataFile> files = writeRows(rows);
      try {
        if (rnd.nextBoolean()) {
          var append = table.newAppend();
          files.forEach(append::appendFile);
          append.commit();
        } else {
          var append = table.newFastAppend();
          files.forEach(append::appendFile);
          append.commit();
        }
      } catch (RuntimeException e) {
        // truncate(W, d) of a decimal near its minimum can exceed the decimal's precision: Iceberg cannot
        // write that partition value into the manifest (Spark fails the same way).
        if (String.valueOf(e.getMessage()).contains("Cannot write value as decimal")) {
          return "append rejected by Iceberg: " + e.getMessage();
        }
        throw e;
      }
      return "append " + rows.size() + " rows in " + files.size() + " files";
    }

    String schemaChange() {
      Schema schema = table.schema();
      List<Types.NestedField> columns = schema.columns();
      int kind = rnd.nextInt(6);
      UpdateSchema update = table.updateSchema();
      String what;
      try {
        switch (kind) {
          case 0, 1 -> {
            String name = freshName(currentNamesLower());
            Type type = randomType();
            if (formatVersion >= 3 && rnd.nextInt(3) == 0) {
              Object value = RandomValues.of(type, rnd);
              Literal<?> def = literal(type, value);
              if (rnd.nextInt(3) == 0) {
                update.addRequiredColumn(name, type, def);
                what = "add required column " + name + " " + type + " default " + Canonical.value(value);
              } else {
                update.addColumn(name, type, def);
                what = "add column " + name + " " + type + " default " + Canonical.value(value);
              }
            } else {
              update.addColumn(name, type);
              what = "add column " + name + " " + type;
            }
            droppedNames.remove(name);
          }
          case 2 -> {
            List<Types.NestedField> droppable = columns.stream().filter(f -> !protectedIds.contains(f.fieldId()))
                .toList();
            if (droppable.isEmpty() || columns.size() < 2) {
              return "schema change skipped (nothing droppable)";
            }
            Types.NestedField f = droppable.get(rnd.nextInt(droppable.size()));
            update.deleteColumn(f.name());
            droppedNames.add(f.name());
            what = "drop column " + f.name();
          }
          case 3 -> {
            Types.NestedField f = columns.get(rnd.nextInt(columns.size()));
            String name = freshName(currentNamesLower());
            update.renameColumn(f.name(), name);
            droppedNames.remove(name);
            droppedNames.add(f.name());
            what = "rename column " + f.name() + " to " + name;
          }
          case 4 -> {
            List<Types.NestedField> widenable = columns.stream().filter(f -> widened(f.type()) != null).toList();
            if (widenable.isEmpty()) {
              return "schema change skipped (nothing to widen)";
            }
            Types.NestedField f = widenable.get(rnd.nextInt(widenable.size()));
            Type.PrimitiveType to = widened(f.type());
            update.updateColumn(f.name(), to);
            what = "widen column " + f.name() + " " + f.type() + " -> " + to;
          }
          default -> {
            List<Types.NestedField> required = columns.stream().filter(Types.NestedField::isRequired).toList();
            if (required.isEmpty()) {
              return "schema change skipped (no required column)";
            }
            Types.NestedField f = required.get(rnd.nextInt(required.size()));
            update.makeColumnOptional(f.name());
            what = "make column " + f.name() + " optional";
          }
        }
        update.commit();
      } catch (IllegalArgumentException | IllegalStateException | org.apache.iceberg.exceptions.ValidationException e) {
        return "schema change rejected by Iceberg: " + e.getMessage();
      }
      return what + " -> " + table.schema().asStruct();
    }

    private Type.PrimitiveType widened(Type type) {
      return switch (type.typeId()) {
        case INTEGER -> Types.LongType.get();
        case FLOAT -> Types.DoubleType.get();
        case DECIMAL -> {
          Types.DecimalType d = (Types.DecimalType) type;
          yield d.precision() < 38 ? Types.DecimalType.of(d.precision() + 1 + rnd.nextInt(38 - d.precision()),
              d.scale()) : null;
        }
        default -> null;
      };
    }

    /** An Iceberg literal (for a column default) holding a generic value. */
    private static Literal<?> literal(Type type, Object v) {
      return switch (type.typeId()) {
        case BOOLEAN -> Literal.of((Boolean) v);
        case INTEGER -> Literal.of((Integer) v);
        case LONG -> Literal.of((Long) v);
        case FLOAT -> Literal.of((Float) v);
        case DOUBLE -> Literal.of((Double) v);
        case DECIMAL -> Literal.of((BigDecimal) v);
        case STRING -> Literal.of((String) v);
        case UUID -> Literal.of((UUID) v);
        case BINARY -> Literal.of((ByteBuffer) v);
        case DATE -> Literal.of(v.toString()).to(type);
        case TIME -> Literal.of(DateTimeFormatter.ISO_LOCAL_TIME.format((LocalTime) v)).to(type);
        case TIMESTAMP -> v instanceof OffsetDateTime o
            ? Literal.of(DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(o)).to(type)
            : Literal.of(DateTimeFormatter.ISO_LOCAL_DATE_TIME.format((LocalDateTime) v)).to(type);
        default -> throw new IllegalArgumentException(type.toString());
      };
    }

    String positionDeletes() {
      List<DataFile> live = IcebergFiles.liveDataFiles(table);
      if (live.isEmpty()) {
        return "position deletes skipped (no data files)";
      }
      Collections.shuffle(live, rnd);
      Map<DataFile, NavigableSet<Long>> positions = new LinkedHashMap<>();
      int total = 0;
      for (DataFile f : live.subList(0, Math.min(live.size(), 1 + rnd.nextInt(3)))) {
        NavigableSet<Long> pos = new TreeSet<>();
        long count = f.recordCount();
        int kind = rnd.nextInt(6);
        if (kind == 0) {
          for (long p = 0; p < count; p++) {
            pos.add(p); // the whole file
          }
        } else if (kind == 1) {
          for (long p = 0; p < count; p++) {
            if (rnd.nextBoolean()) {
              pos.add(p); // about half the file: a scan masks them (ScanSql.DENSE) rather than anti-joining
            }
          }
        } else {
          for (int k = 1 + rnd.nextInt((int) Math.min(count, 5)); k > 0; k--) {
            pos.add((long) rnd.nextInt((int) count));
          }
        }
        positions.put(f, pos);
        total += pos.size();
      }
      RowDelta delta = table.newRowDelta().validateFromSnapshot(table.currentSnapshot().snapshotId());
      String what;
      if (formatVersion >= 3) {
        IcebergFiles.DVs dvs = IcebergFiles.writeDeletionVectors(table, positions);
        dvs.added().forEach(delta::addDeletes);
        dvs.replaced().forEach(delta::removeDeletes);
        what = "deletion vectors for " + positions.size() + " files (" + total + " positions, "
            + dvs.replaced().size() + " merged)";
      } else {
        // One delete file per partition, as Spark writes them.
        Map<String, Map<String, NavigableSet<Long>>> byPartition = new LinkedHashMap<>();
        Map<String, DataFile> sample = new HashMap<>();
        for (Map.Entry<DataFile, NavigableSet<Long>> e : positions.entrySet()) {
          DataFile f = e.getKey();
          String key = f.specId() + "/" + partitionKey(f);
          byPartition.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(f.location(), e.getValue());
          sample.put(key, f);
        }
        for (Map.Entry<String, Map<String, NavigableSet<Long>>> e : byPartition.entrySet()) {
          DataFile f = sample.get(e.getKey());
          delta.addDeletes(IcebergFiles.writePositionDeletes(table, table.specs().get(f.specId()), f.partition(),
              e.getValue()));
        }
        what = "position deletes for " + positions.size() + " files (" + total + " positions, "
            + byPartition.size() + " delete files)";
      }
      if (rnd.nextInt(3) == 0) {
        List<Record> rows = randomRows(1 + rnd.nextInt(5));
        writeRows(rows).forEach(delta::addRows);
        what += " + " + rows.size() + " new rows (update)";
      }
      delta.commit();
      return what;
    }

    private String partitionKey(DataFile f) {
      StructLike p = f.partition();
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < p.size(); i++) {
        b.append(Canonical.value(p.get(i, Object.class))).append('|');
      }
      return b.toString();
    }

    String equalityDeletes() {
      Schema schema = table.schema();
      List<Types.NestedField> candidates = schema.columns().stream()
          .filter(f -> f.type().typeId() != Type.TypeID.FLOAT && f.type().typeId() != Type.TypeID.DOUBLE)
          .collect(Collectors.toCollection(ArrayList::new));
      if (candidates.isEmpty()) {
        return "equality deletes skipped (no key candidates)";
      }
      Collections.shuffle(candidates, rnd);
      List<Types.NestedField> keyFields = candidates.subList(0, Math.min(candidates.size(), 1 + rnd.nextInt(2)));
      Schema deleteSchema = schema.select(keyFields.stream().map(Types.NestedField::name).toList());
      // Keys grouped by the partition they apply to: keys of live rows in the rows' partitions, plus
      // NULL and random keys.
      Map<StructLikeWrapper, PartitionKey> partitions = new LinkedHashMap<>();
      Map<StructLikeWrapper, List<Record>> keys = new LinkedHashMap<>();
      Types.StructType partitionType = table.spec().partitionType();
      int n = 1 + rnd.nextInt(4);
      for (int i = 0; i < n; i++) {
        Record source;
        if (!reference.isEmpty() && rnd.nextInt(5) != 0) {
          source = reference.get(rnd.nextInt(reference.size()));
        } else {
          source = randomRows(1).get(0);
        }
        GenericRecord key = GenericRecord.create(deleteSchema);
        for (Types.NestedField f : deleteSchema.columns()) {
          Object v = source.getField(f.name());
          if (f.isOptional() && rnd.nextInt(6) == 0) {
            v = null;
          }
          key.setField(f.name(), v);
        }
        PartitionKey partition = IcebergFiles.partitionOf(table.spec(), schema, source);
        StructLikeWrapper w = StructLikeWrapper.forType(partitionType).set(partition);
        partitions.putIfAbsent(w, partition);
        keys.computeIfAbsent(w, k -> new ArrayList<>()).add(key);
      }
      RowDelta delta = table.newRowDelta().validateFromSnapshot(table.currentSnapshot().snapshotId());
      int total = 0;
      for (Map.Entry<StructLikeWrapper, List<Record>> e : keys.entrySet()) {
        delta.addDeletes(IcebergFiles.writeEqualityDeletes(table, deleteSchema, partitions.get(e.getKey()),
            e.getValue()));
        total += e.getValue().size();
      }
      keyFields.forEach(f -> protectedIds.add(f.fieldId()));
      String what = "equality deletes on " + keyFields.stream().map(Types.NestedField::name).toList() + ": "
          + total + " keys in " + keys.size() + " files " + keys.values().stream().flatMap(List::stream)
              .map(r -> Canonical.row(r).toString()).toList();
      if (rnd.nextInt(3) == 0) {
        // Upsert, as Flink writes it: the new rows in the same commit are not deleted.
        List<Record> rows = new ArrayList<>();
        for (List<Record> ks : keys.values()) {
          for (Record k : ks) {
            Record r = randomRows(1).get(0);
            for (Types.NestedField f : deleteSchema.columns()) {
              if (k.getField(f.name()) != null || f.isOptional()) {
                r.setField(f.name(), k.getField(f.name()));
              }
            }
            rows.add(r);
          }
        }
        writeRows(rows).forEach(delta::addRows);
        what += " + " + rows.size() + " upserted rows";
      }
      delta.commit();
      return what;
    }

    String specChange() {
      try {
        var update = table.updateSpec();
        String what;
        if (!table.spec().isUnpartitioned() && rnd.nextInt(3) == 0) {
          PartitionField pf = table.spec().fields().get(rnd.nextInt(table.spec().fields().size()));
          update.removeField(pf.name());
          what = "remove partition field " + pf.name();
        } else {
          List<Types.NestedField> columns = table.schema().columns();
          Types.NestedField f = columns.get(rnd.nextInt(columns.size()));
          Term term = transformTerm(f);
          if (term == null) {
            return "spec change skipped (no transform for " + f.type() + ")";
          }
          update.addField(term);
          protectedIds.add(f.fieldId());
          what = "add partition field " + term;
        }
        update.commit();
        return what + " -> " + table.spec();
      } catch (IllegalArgumentException | IllegalStateException | org.apache.iceberg.exceptions.ValidationException e) {
        return "spec change rejected by Iceberg: " + e.getMessage();
      }
    }

    String deleteDataFile() {
      List<DataFile> live = IcebergFiles.liveDataFiles(table);
      if (live.isEmpty()) {
        return "file delete skipped (no data files)";
      }
      DataFile f = live.get(rnd.nextInt(live.size()));
      table.newDelete().deleteFile(f).commit();
      return "delete data file with " + f.recordCount() + " rows";
    }

    String compact() {
      Set<DataFile> oldData = new HashSet<>();
      Map<String, DeleteFile> oldDeletes = new LinkedHashMap<>();
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        for (FileScanTask t : tasks) {
          oldData.add(t.file().copy());
          for (DeleteFile d : t.deletes()) {
            oldDeletes.putIfAbsent(d.location(), d.copy());
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      if (oldData.isEmpty()) {
        return "compaction skipped (no data files)";
      }
      List<Record> live = new ArrayList<>();
      for (Record r : reference) {
        GenericRecord copy = GenericRecord.create(table.schema());
        for (int i = 0; i < copy.size(); i++) {
          copy.set(i, r.get(i));
        }
        live.add(copy);
      }
      List<DataFile> newFiles = live.isEmpty() ? List.of() : IcebergFiles.writeData(table, live, 1000);
      RewriteFiles rewrite = table.newRewrite().validateFromSnapshot(table.currentSnapshot().snapshotId());
      oldData.forEach(rewrite::deleteFile);
      oldDeletes.values().forEach(rewrite::deleteFile);
      newFiles.forEach(rewrite::addFile);
      rewrite.commit();
      return "compaction: " + oldData.size() + " data + " + oldDeletes.size() + " delete files -> "
          + newFiles.size() + " data files";
    }

    // ---------------------------------------------------------------- comparisons

    /**
     * The records of a generic read, as records of {@code schema}: Iceberg's generic reader appends the
     * metadata columns its delete filter needs (_pos, equality columns) to the records it returns.
     */
    static List<Record> read(CloseableIterable<Record> records, Schema schema) {
      List<Record> out = new ArrayList<>();
      try (records) {
        for (Record r : records) {
          GenericRecord copy = GenericRecord.create(schema);
          for (int i = 0; i < copy.size(); i++) {
            copy.set(i, r.get(i));
          }
          out.add(copy);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return out;
    }

    private List<List<String>> floe(String sql, List<String> expectedColumns, String step) {
      long start = System.nanoTime();
      try (Result r = db.sql(sql)) {
        List<String> names = r.columns().stream().map(Column::name).toList();
        if (!names.equals(expectedColumns)) {
          failWith(step, sql, "columns " + names + ", expected " + expectedColumns);
        }
        List<List<String>> rows = Canonical.rows(r);
        floeNanos += System.nanoTime() - start;
        return rows;
      } catch (FloeException e) {
        failWith(step, sql, "Floe failed: " + e.sqlState() + " " + e.getMessage());
        return null;
      } catch (RuntimeException e) {
        throw new AssertionError(context(step, sql) + "Floe threw " + e, e);
      }
    }

    private void failWith(String step, String sql, String problem) {
      fail(context(step, sql) + problem);
    }

    private String context(String step, String sql) {
      return "seed " + seed + " (replay: -Dfloe.seed=" + seed + "), " + step + "\n  SQL: " + sql
          + "\n  history:\n    " + String.join("\n    ", log) + "\n  ";
    }

    void check(String step) {
      table.refresh();
      long start = System.nanoTime();
      reference = read(IcebergGenerics.read(table).build(), table.schema());
      referenceNanos += System.nanoTime() - start;
      // Planning is parallel: sort so that the seeded choices below see the rows in a fixed order.
      reference.sort(java.util.Comparator.comparing(r -> Canonical.row(r).toString()));
      List<String> columns = table.schema().columns().stream().map(Types.NestedField::name).toList();
      String sql = "SELECT * FROM public.t";
      List<List<String>> actual = floe(sql, columns, step);
      String diff = Canonical.diff(rows(reference), actual, 15);
      if (diff != null) {
        failWith(step, sql, diff);
      }
      for (int k = 0; k < 2; k++) {
        filteredQuery("public.t", reference, table.schema(), columns, step);
      }
    }

    /**
     * A random query over {@code from} filtered by a random predicate, in one of several shapes that give
     * Floe's predicate pushdown a chance to go wrong (aliases, inner and outer joins, negation); its rows
     * must equal the reference rows filtered in Java with SQL semantics.
     */
    private void filteredQuery(String from, List<Record> ref, Schema schema, List<String> columns, String step) {
      SqlPredicate p = SqlPredicate.random(SqlPredicate.columns(schema.asStruct()), ref, rnd);
      List<Record> matching = ref.stream().filter(p::matches).toList();
      List<List<String>> expected = rows(matching);
      String q;
      switch (rnd.nextInt(12)) {
        case 0 -> q = "SELECT a.* FROM " + from + " AS a WHERE " + p.sql("a.");
        case 1 -> q = "SELECT t.* FROM " + from + " AS t JOIN (SELECT 1 AS one) AS x ON " + p.sql("t.");
        case 2 -> {
          // The table is the preserved side: the ON condition filters nothing.
          q = "SELECT t.* FROM " + from + " AS t LEFT JOIN (SELECT 1 AS one) AS x ON " + p.sql("t.");
          expected = rows(ref);
        }
        case 3 -> {
          // The table is the nullable side: matching rows, or one all-NULL row.
          q = "SELECT t.* FROM (SELECT 1 AS one) AS x LEFT JOIN " + from + " AS t ON " + p.sql("t.");
          if (matching.isEmpty()) {
            expected = List.of(Collections.nCopies(columns.size(), "NULL"));
          }
        }
        case 4 -> {
          q = "SELECT * FROM " + from + " WHERE (" + p.sql() + ") IS NOT TRUE";
          expected = rows(ref.stream().filter(r -> !p.matches(r)).toList());
        }
        case 5 -> {
          // Two references to the table, each with its own predicate.
          SqlPredicate other = SqlPredicate.random(SqlPredicate.columns(schema.asStruct()), ref, rnd);
          q = "SELECT a.* FROM " + from + " AS a, (SELECT count(*) AS n FROM " + from + " AS b WHERE "
              + other.sql("b.") + ") AS c WHERE " + p.sql("a.");
        }
        case 6 -> {
          q = "SELECT * FROM " + from + " WHERE " + p.sql() + " UNION ALL SELECT * FROM " + from + " WHERE NOT ("
              + p.sql() + ")";
          expected = rows(ref.stream().filter(r -> p.eval(r) != null).toList());
        }
        case 7 -> q = "WITH x AS (SELECT * FROM " + from + ") SELECT * FROM x WHERE " + p.sql();
        default -> q = "SELECT * FROM " + from + " WHERE " + p.sql();
      }
      String diff = Canonical.diff(expected, floe(q, columns, step), 15);
      filtered++;
      if (diff != null) {
        failWith(step, q, diff);
      }
    }

    void timeTravel() {
      for (Snapshot s : table.snapshots()) {
        Schema schema = table.schemas().get(s.schemaId());
        List<Record> ref = read(IcebergGenerics.read(table).useSnapshot(s.snapshotId()).build(), schema);
        ref.sort(java.util.Comparator.comparing(r -> Canonical.row(r).toString()));
        List<String> columns = schema.columns().stream().map(Types.NestedField::name).toList();
        String step = "time travel to snapshot " + s.snapshotId() + " (sequence " + s.sequenceNumber() + ", "
            + s.operation() + ")";
        String sql = rnd.nextBoolean() ? "SELECT * FROM public.t FOR VERSION AS OF " + s.snapshotId()
            : "SELECT * FROM public.t AS OF VERSION " + s.sequenceNumber(); // Floe: version = sequence number
        String diff = Canonical.diff(rows(ref), floe(sql, columns, step), 15);
        if (diff != null) {
          failWith(step, sql, diff);
        }
        filteredQuery("public.t FOR VERSION AS OF " + s.snapshotId(), ref, schema, columns, step);
      }
      // By time: the snapshot current at each snapshot's commit time, as Iceberg's asOfTime finds it.
      for (Snapshot s : table.snapshots()) {
        long millis = s.timestampMillis();
        Snapshot at = table.snapshot(org.apache.iceberg.util.SnapshotUtil.snapshotIdAsOfTime(table, millis));
        Schema schema = table.schemas().get(at.schemaId());
        List<Record> ref = read(IcebergGenerics.read(table).asOfTime(millis).build(), schema);
        List<String> columns = schema.columns().stream().map(Types.NestedField::name).toList();
        String ts = java.time.format.DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSS")
            .format(java.time.Instant.ofEpochMilli(millis).atOffset(java.time.ZoneOffset.UTC));
        String sql = "SELECT * FROM public.t FOR SYSTEM_TIME AS OF TIMESTAMPTZ '" + ts + "+00'";
        String diff = Canonical.diff(rows(ref), floe(sql, columns, "time travel to " + ts), 15);
        if (diff != null) {
          failWith("time travel to " + ts + " (snapshot " + at.snapshotId() + ")", sql, diff);
        }
      }
    }

    private static List<List<String>> rows(List<Record> records) {
      return Canonical.records(records);
    }
  }

  /** Guava-free size of an iterable. */
  private static final class Iterables {
    static int size(Iterable<?> it) {
      int n = 0;
      for (Object ignored : it) {
        n++;
      }
      return n;
    }
  }
}
