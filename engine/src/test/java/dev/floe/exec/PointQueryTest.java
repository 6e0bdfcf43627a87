package dev.floe.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Column;
import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeException;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.Session;
import dev.floe.Values;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Point queries read in the JVM ({@link PointQueries}) against the same statements run by DuckDB: random
 * lookups in every literal and projection form, on tables of every readable type with NULLs, several
 * files and row groups, codecs, partitions, format v2 and v3 with deletes, and after schema changes;
 * the columns, their origins, the rows (as values and as Arrow batches) and the errors must be the same.
 */
class PointQueryTest {
  @TempDir
  Path dir;

  /** Switches the session's point reads off or on (the floe.point_reads setting), to compare both paths. */
  private static void pointReads(dev.floe.Session s, boolean on) {
    s.setSettings(java.util.Map.of("floe.point_reads", on ? "on" : "off"));
  }

  private static final String COLUMNS = "id bigint, i int, s smallint, name text, v varchar(20), u uuid, b boolean,"
      + " r real, d double precision, n numeric(12,3), big numeric(30,5), dt date, tm time, ts timestamp,"
      + " tz timestamptz, by bytea";

  /** One random row as SQL literals, mostly distinct keys with repeats and NULLs mixed in. */
  private static String row(Random rnd, long id, List<String> names, List<UUID> uuids) {
    String name = rnd.nextInt(10) == 0 ? "NULL" : "'" + names.get(rnd.nextInt(names.size())) + "'";
    UUID u = uuids.get(rnd.nextInt(uuids.size()));
    return "(" + (rnd.nextInt(20) == 0 ? "NULL" : Long.toString(id))
        + ", " + (rnd.nextInt(8) == 0 ? "NULL" : Integer.toString(rnd.nextInt(200) - 100))
        + ", " + (rnd.nextInt(8) == 0 ? "NULL" : Integer.toString(rnd.nextInt(60000) - 30000))
        + ", " + name
        + ", " + (rnd.nextBoolean() ? "NULL" : "'v" + rnd.nextInt(50) + "'")
        + ", " + (rnd.nextInt(6) == 0 ? "NULL" : "'" + u + "'")
        + ", " + (rnd.nextInt(3) == 0 ? "NULL" : Boolean.toString(rnd.nextBoolean()))
        + ", " + (rnd.nextInt(5) == 0 ? "NULL" : Float.toString(rnd.nextFloat() * 100 - 50))
        + ", " + (rnd.nextInt(5) == 0 ? "NULL" : Double.toString(rnd.nextGaussian() * 1e6))
        + ", " + (rnd.nextInt(5) == 0 ? "NULL" : (rnd.nextInt(2_000_000) - 1_000_000) + "." + rnd.nextInt(1000))
        + ", " + (rnd.nextInt(5) == 0 ? "NULL" : "-" + Math.abs(rnd.nextLong()) + "." + rnd.nextInt(100000))
        + ", " + (rnd.nextInt(5) == 0 ? "NULL" : "DATE '" + java.time.LocalDate.ofEpochDay(rnd.nextInt(40000) - 20000) + "'")
        + ", " + (rnd.nextInt(5) == 0 ? "NULL" : "TIME '" + java.time.LocalTime.ofNanoOfDay(
            rnd.nextLong(86_400_000_000L) * 1000) + "'")
        + ", " + (rnd.nextInt(5) == 0 ? "NULL" : "TIMESTAMP '" + java.time.LocalDateTime.ofEpochSecond(
            rnd.nextLong(4_000_000_000L) - 2_000_000_000L, rnd.nextInt(1_000_000) * 1000, java.time.ZoneOffset.UTC)
            .toString().replace('T', ' ') + "'")
        + ", " + (rnd.nextInt(5) == 0 ? "NULL" : "TIMESTAMPTZ '" + java.time.OffsetDateTime.ofInstant(
            java.time.Instant.ofEpochSecond(rnd.nextLong(4_000_000_000L), rnd.nextInt(1_000_000) * 1000),
            java.time.ZoneOffset.UTC).toString().replace('T', ' ') + "'")
        + ", " + (rnd.nextInt(5) == 0 ? "NULL" : "'\\x" + String.format("%016x", rnd.nextLong()) + "'::bytea")
        + ")";
  }

  private record Outcome(List<String> columns, List<String> rows, String error) {}

  private static Outcome run(Session s, String sql, boolean arrow) {
    List<String> rows = new ArrayList<>();
    List<String> columns = new ArrayList<>();
    try (Result r = s.sql(sql)) {
      for (int k = 0; k < r.columns().size(); k++) {
        Column c = r.columns().get(k);
        columns.add(c.name() + " " + c.type() + " " + r.origin(k).map(Object::toString).orElse("-"));
      }
      if (arrow) {
        ResultPathsTest.arrowRows(r).forEach(values -> rows.add(text(values)));
      } else {
        for (Row row : r) {
          rows.add(text(row.values()));
        }
      }
    } catch (FloeException e) {
      return new Outcome(columns, List.of(), e.sqlState());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    rows.sort(null);
    return new Outcome(columns, rows, null);
  }

  private static String text(List<Object> values) {
    StringBuilder b = new StringBuilder();
    for (Object v : values) {
      b.append(v == null ? "null" : v.getClass().getSimpleName() + ":" + Values.toText(v)).append(" | ");
    }
    return b.toString();
  }

  /** A lookup in one of the forms clients write, on a key column and value seen in the table (or not). */
  private static String lookup(Random rnd, String table, String column, String kind, Object value) {
    String literal = switch (kind) {
      case "int" -> switch (rnd.nextInt(5)) {
        case 0 -> String.valueOf(value);
        case 4 -> "'" + value + "'";
        case 1 -> "CAST('" + value + "' AS " + (column.equals("id") ? "bigint" : column.equals("i") ? "integer"
            : "smallint") + ")";
        case 2 -> "'" + value + "'::" + (column.equals("s") ? "int2" : "int8");
        default -> "CAST('" + value + "' AS bigint)";
      };
      case "text" -> switch (rnd.nextInt(3)) {
        case 0 -> "'" + value + "'";
        case 1 -> "CAST('" + value + "' AS text)";
        default -> "'" + value + "'::varchar";
      };
      default -> switch (rnd.nextInt(3)) {
        case 0 -> "CAST('" + value + "' AS uuid)";
        case 1 -> "'" + value + "'";
        default -> "'" + value + "'::uuid";
      };
    };
    String alias = rnd.nextInt(3) == 0 ? "q" : null;
    String qualifier = alias != null ? alias : table;
    String projection = switch (rnd.nextInt(6)) {
      case 0 -> "*";
      case 1 -> qualifier + ".*";
      case 2 -> "id, name, tz";
      case 3 -> "name AS \"Label\", " + qualifier + ".id AS k, big, by";
      case 4 -> column + ", n, dt, tm, ts, u, b, r, d, s, i, v";
      default -> "*, id AS again";
    };
    String where = rnd.nextBoolean() ? qualifier + "." + column + " = " + literal : literal + " = " + column;
    String from = table + (alias != null ? " AS " + alias : "");
    // other statements with the same condition: the table reference is read as the rows a point read found
    return switch (rnd.nextInt(8)) {
      case 0 -> "SELECT count(*), count(name), min(id), max(tz), sum(n) FROM " + from + " WHERE " + where;
      case 1 -> "SELECT " + qualifier + ".id, o.name, o.by FROM " + from + " JOIN " + table + " AS o ON o.id = "
          + qualifier + ".id WHERE " + where;
      case 2 -> "SELECT * FROM " + from + " WHERE " + where + " AND " + qualifier + ".id >= 0 ORDER BY id";
      default -> "SELECT " + projection + " FROM " + from + " WHERE " + where
          + (rnd.nextInt(5) == 0 ? " LIMIT " + rnd.nextInt(3) : "");
    };
  }

  private void compare(Session s, String table, Random rnd, int count) {
    List<Object[]> keys = new ArrayList<>();
    for (String[] k : new String[][] {{"id", "int"}, {"i", "int"}, {"s", "int"}, {"name", "text"}, {"v", "text"},
        {"u", "uuid"}}) {
      try (Result r = s.sql("SELECT DISTINCT " + k[0] + " FROM " + table + " WHERE " + k[0] + " IS NOT NULL")) {
        for (Row row : r) {
          keys.add(new Object[] {k[0], k[1], row.get(0)});
        }
      }
      keys.add(new Object[] {k[0], k[1], k[1].equals("int") ? (Object) 77777 : k[1].equals("uuid")
          ? UUID.randomUUID() : "absent"});
    }
    keys.add(new Object[] {"s", "int", 40000}); // out of smallint's range: no row, or the cast's error
    keys.add(new Object[] {"id", "int", "99999999999999999999"});
    long before = PointQueries.served.get();
    long relationsBefore = PointQueries.relations.get();
    for (int q = 0; q < count; q++) {
      Object[] k = keys.get(rnd.nextInt(keys.size()));
      String sql = lookup(rnd, table, (String) k[0], (String) k[1], k[2]);
      pointReads(s, false);
      long servedOff = PointQueries.served.get();
      Outcome expected = run(s, sql, false);
      int limit = sql.lastIndexOf(" LIMIT ");
      // LIMIT without ORDER BY may give any of the rows: the same number, each one of all the rows
      Outcome all = limit < 0 ? expected : run(s, sql.substring(0, limit), false);
      assertThat(PointQueries.served.get()).as("no point read with floe.point_reads off").isEqualTo(servedOff);
      pointReads(s, true);
      for (boolean arrow : new boolean[] {false, true}) {
        Outcome got = run(s, sql, arrow);
        if (limit < 0) {
          assertThat(got).as(sql + (arrow ? " (Arrow)" : "")).isEqualTo(expected);
        } else {
          assertThat(got.columns()).as(sql).isEqualTo(expected.columns());
          assertThat(got.error()).as(sql).isEqualTo(expected.error());
          assertThat(got.rows()).as(sql).hasSameSizeAs(expected.rows());
          assertThat(all.rows()).as(sql).containsAll(got.rows());
        }
      }
    }
    assertThat(PointQueries.served.get() - before).as("lookups read in the JVM").isGreaterThan(count / 3);
    assertThat(PointQueries.relations.get() - relationsBefore).as("references read as found rows")
        .isGreaterThan(count / 20);
  }

  private static void load(Session s, String table, Random rnd, int rows, int statements) {
    List<String> names = new ArrayList<>();
    for (int k = 0; k < 40; k++) {
      names.add("n" + k + (k % 7 == 0 ? "é" : ""));
    }
    List<UUID> uuids = new ArrayList<>();
    for (int k = 0; k < 30; k++) {
      uuids.add(UUID.randomUUID());
    }
    long id = 0;
    for (int st = 0; st < statements; st++) {
      StringBuilder values = new StringBuilder();
      for (int k = 0; k < rows; k++) {
        values.append(k > 0 ? ", " : "").append(row(rnd, id++ * 3 + rnd.nextInt(3), names, uuids));
      }
      s.sql("INSERT INTO " + table + " VALUES " + values).close();
    }
  }

  @Test
  void lookupsReadInTheJvmGiveWhatDuckDbGives() {
    Random rnd = new Random(7);
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      s.sql("CREATE TABLE plain (" + COLUMNS + ") WITH ('write.parquet.row-group-size-rows' = '50', "
          + "sorted_by = ARRAY['id'])").close();
      load(s, "plain", rnd, 400, 4);
      compare(s, "plain", rnd, 300);

      s.sql("CREATE TABLE snappy (" + COLUMNS + ") WITH ('write.parquet.compression-codec' = 'snappy')").close();
      load(s, "snappy", rnd, 300, 2);
      s.sql("CREATE TABLE uncompressed (" + COLUMNS + ") WITH ('write.parquet.compression-codec' = 'uncompressed')").close();
      load(s, "uncompressed", rnd, 300, 2);
      compare(s, "snappy", rnd, 100);
      compare(s, "uncompressed", rnd, 100);

      // few rows into a partitioned table are written by Iceberg's writer in the JVM, more by DuckDB
      s.sql("CREATE TABLE parts (" + COLUMNS + ") PARTITIONED BY (bucket(4, id))").close();
      load(s, "parts", rnd, 5, 6);
      load(s, "parts", rnd, 2000, 1);
      compare(s, "parts", rnd, 200);
    }
  }

  @Test
  void lookupsSeeDeletesUpdatesAndSchemaChanges() {
    Random rnd = new Random(11);
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      for (String version : new String[] {"2", "3"}) {
        String t = "v" + version;
        s.sql("CREATE TABLE " + t + " (" + COLUMNS + ") WITH (format_version = " + version
            + ", 'write.parquet.row-group-size-rows' = '64')").close();
        load(s, t, rnd, 500, 3);
        s.sql("DELETE FROM " + t + " WHERE id % 5 = 0").close();
        s.sql("UPDATE " + t + " SET name = 'changed', i = i + 1 WHERE id % 7 = 1").close();
        s.sql("DELETE FROM " + t + " WHERE id = 4").close();
        s.sql("UPDATE " + t + " SET v = 'one' WHERE id = 10").close();
        compare(s, t, rnd, 200);
        // a renamed column keeps its field id; a widened one is stored as int32 in older files
        s.sql("ALTER TABLE " + t + " RENAME COLUMN v TO v2").close();
        s.sql("ALTER TABLE " + t + " RENAME COLUMN v2 TO v").close();
        s.sql("ALTER TABLE " + t + " ALTER COLUMN i TYPE bigint").close();
        s.sql("ALTER TABLE " + t + " ADD COLUMN extra int").close();
        s.sql("INSERT INTO " + t + " (id, i, name, extra) VALUES (5000, 1, 'late', 9)").close();
        pointReads(s, false);
        Outcome expected = run(s, "SELECT * FROM " + t + " WHERE id = 5000", false);
        pointReads(s, true);
        assertThat(run(s, "SELECT * FROM " + t + " WHERE id = 5000", false)).isEqualTo(expected);
        assertThat(expected.rows()).hasSize(1);
        assertThat(run(s, "SELECT id, name FROM " + t + " WHERE id = 12", false)).isEqualTo(
            runWithout(s, "SELECT id, name FROM " + t + " WHERE id = 12"));
      }
    }
  }

  private static Outcome runWithout(Session s, String sql) {
    pointReads(s, false);
    try {
      return run(s, sql, false);
    } finally {
      pointReads(s, true);
    }
  }

  @Test
  void aTransactionBlockReadsItsOwnSnapshot() {
    try (Database db = Floe.open(dir); Session a = db.connect(); Session b = db.connect()) {
      a.sql("CREATE TABLE kv (k bigint, val text)").close();
      a.sql("INSERT INTO kv VALUES (1, 'one'), (2, 'two')").close();
      a.sql("BEGIN").close();
      assertThat(a.sql("SELECT val FROM kv WHERE k = 1").toList()).hasSize(1);
      a.sql("INSERT INTO kv VALUES (3, 'three')").close();
      b.sql("INSERT INTO kv VALUES (4, 'four')").close();
      long before = PointQueries.served.get();
      assertThat(a.sql("SELECT val FROM kv WHERE k = 3").toList()).extracting(r -> r.get(0)).containsExactly("three");
      assertThat(a.sql("SELECT val FROM kv WHERE k = 4").toList()).isEmpty(); // committed after the block's snapshot
      assertThat(b.sql("SELECT val FROM kv WHERE k = 3").toList()).isEmpty(); // not committed yet
      assertThat(b.sql("SELECT val FROM kv WHERE k = 4").toList()).extracting(r -> r.get(0)).containsExactly("four");
      assertThat(PointQueries.served.get() - before).isEqualTo(4);
      a.sql("ROLLBACK").close();
      assertThat(a.sql("SELECT val FROM kv WHERE k = 3").toList()).isEmpty();
    }
  }

  @Test
  void otherShapesAreLeftToTheGeneralPath() {
    for (String sql : new String[] {
        "SELECT * FROM t WHERE id = 1 OR id = 2", "SELECT * FROM t WHERE id > 1", "SELECT count(*) FROM t WHERE id = 1",
        "SELECT * FROM t WHERE id = 1 ORDER BY id", "SELECT * FROM t JOIN u ON true WHERE id = 1",
        "SELECT id + 1 FROM t WHERE id = 1", "SELECT * FROM t AS OF VERSION 3 WHERE id = 1",
        "SELECT * FROM t WHERE id = 1.5", "SELECT * FROM t WHERE id = $1", "SELECT DISTINCT id FROM t WHERE id = 1",
        "SELECT * FROM t WHERE id = 1 FOR UPDATE", "SELECT * FROM a.b.t WHERE id = 1",
        "SELECT * FROM t WHERE id = E'1'", "SELECT id AS Upper FROM t WHERE id = 1",
        "SELECT * FROM t WHERE id = CAST('1' AS varchar(3))", "SELECT * FROM t WHERE x.id = 1"}) {
      PointQueries.Shape shape = PointQueries.parse(sql);
      assertThat(shape == null ? null : PointQueries.value(shape.key(), dev.floe.SqlType.Kind.BIGINT))
          .as(sql).isNull();
    }
    // a statement cut anywhere is recognised or not, never failing (statements the path does not take
    // are the general path's to report)
    for (String full : new String[] {"SELECT t.id, name AS \"N\" FROM public.t AS t WHERE t.id = CAST('5' AS bigint) "
        + "LIMIT 3;", "SELECT * FROM t WHERE '5'::int8 = id", "SELECT * FROM t WHERE id = -5"}) {
      for (int end = 0; end < full.length(); end++) {
        PointQueries.parse(full.substring(0, end));
      }
      assertThat(PointQueries.parse(full)).as(full).isNotNull();
    }
    for (String cut : new String[] {"SELECT * FROM t WHERE id = '5'::", "SELECT * FROM t WHERE id = CAST('5' AS",
        "SELECT * FROM t WHERE id = CAST('5' AS bigint", "SELECT * FROM t WHERE id =", "SELECT * FROM t WHERE t.",
        "SELECT * FROM t WHERE id = 5 LIMIT", "SELECT \"unterminated FROM t WHERE id = 5"}) {
      assertThat(PointQueries.parse(cut)).as(cut).isNull();
    }
    PointQueries.Shape shape = PointQueries.parse(
        "select T.ID, name as \"N\", t.* from public.t as t where 5 = t.id limit 3;");
    assertThat(shape).isNull(); // names not in lower case: DuckDB keeps their case, PostgreSQL folds it
    shape = PointQueries.parse("select t.id, name as \"N\", t.* from public.t as t where -5 = t.id limit 3;");
    assertThat(shape.table()).containsExactly("public", "t");
    assertThat(shape.items()).containsExactly(new PointQueries.Item("id", null), new PointQueries.Item("name", "N"),
        new PointQueries.Item(null, null));
    assertThat(shape.keyColumn()).isEqualTo("id");
    assertThat(PointQueries.value(shape.key(), dev.floe.SqlType.Kind.BIGINT)).isEqualTo(-5L);
    assertThat(shape.limit()).isEqualTo(3);
  }
}
