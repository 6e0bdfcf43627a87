package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.testing.Rows;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real Debezium events of the types most PostgreSQL tables have (numeric in Kafka Connect's base64 with its
 * scale in the schema, timestamp and time in microseconds, timestamptz, uuid and json as text (a json column
 * into a text one), date in days,
 * bytea in base64, smallint and real as numbers, numeric without a scale as Debezium's VariableScaleDecimal) folded by the
 * columnar decoders and reconciled in DuckDB, against the same stream folded in Java: {@code floe cdc follow}
 * runs twice on one PostgreSQL table, into two warehouses, every batch large enough for the columnar path in
 * the one and none in the other; both tables end the same, and as many rows as PostgreSQL's.
 */
class CdcFollowColumnarTest {
  private static final String DEFINITION = "id int PRIMARY KEY, n numeric(12,3), ts timestamp, tz timestamptz, "
      + "day date, u uuid, v text, b bigint, sm smallint, r real, tm time, bt bytea, vn numeric, big text, j ";

  @TempDir
  Path dir;

  @Test
  void realEventsFoldInColumnsAsInJava() throws Exception {
    try (dev.floe.testing.ThrowawayPostgres pg = dev.floe.testing.ThrowawayPostgres.startLogical();
        Connection c = pg.connect(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE t (" + DEFINITION + "json)"); // Floe keeps its text
      s.execute("INSERT INTO t SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 1.001 - 500)::numeric(12,3) END, "
          + "timestamp '2020-01-01' + i * interval '1 hour 1.000001 second', timestamptz '2021-06-01 00:00+02' "
          + "+ i * interval '1 minute', date '1969-12-01' + i, md5(i::text)::uuid, 'v' || i, i::bigint * 1000003, "
          + "(i * 7 % 65536 - 32768)::smallint, (i / 7.0)::real, time '00:00' + i * interval '1.000001 second', "
          + "decode(md5(i::text), 'hex'), CASE WHEN i % 13 = 0 THEN NULL ELSE i / 7.0 - 100 END, CASE WHEN i % 10 = 1 THEN (SELECT string_agg(md5(i::text || j), '') "
          + "FROM generate_series(1, 300) j) END, json_build_object('i', i, 'a', json_build_array(i, NULL, 'x')) "
          + "FROM generate_series(1, 3000) i");
      String columnar = dir.resolve("columnar").toString();
      String java = dir.resolve("java").toString();
      for (String wh : List.of(columnar, java)) {
        Cli.Outcome made = Cli.run("sql", "-w", wh, "-c", "CREATE TABLE t (" + DEFINITION + "text)");
        assertThat(made.status()).as(made.err()).isZero();
      }
      long taken = taken();
      follow(pg, columnar, "col", true); // the snapshot's reads
      follow(pg, java, "jav", false);
      assertThat(taken()).as("batches the columnar path took").isGreaterThan(taken);
      s.execute("UPDATE t SET n = n * 2, ts = ts + interval '1 day', tz = NULL, sm = -sm / 2, r = r * 3, "
          + "tm = tm + interval '1 hour', bt = bt || '\\x00'::bytea, vn = -vn * 1000, j = NULL WHERE id % 3 = 0");
      // updates that leave a TOASTed value as it is: Debezium sends its placeholder, and the value stays
      s.execute("UPDATE t SET b = b + 1 WHERE id % 10 = 1 AND id % 3 <> 0");
      s.execute("UPDATE t SET id = id + 10000 WHERE id % 11 = 0"); // key changes
      s.execute("DELETE FROM t WHERE id % 5 = 0");
      s.execute("INSERT INTO t VALUES (20001, -0.5, '1900-01-01 00:00:00.5', '2262-04-11 23:47:16+00', "
          + "'0001-01-01', 'ffffffff-ffff-ffff-ffff-ffffffffffff', NULL, NULL, 32767, -1.5e38, '23:59:59.999999', "
          + "'\\x', 12345678901234567890.123456789, NULL, '{\"a\": \"é\\u00e9\"}')");
      taken = taken();
      follow(pg, columnar, "col", true); // what streamed meanwhile
      follow(pg, java, "jav", false);
      assertThat(taken()).as("batches the columnar path took").isGreaterThan(taken);
      List<String> expected = rows(java);
      assertThat(rows(columnar)).isEqualTo(expected);
      try (var r = s.executeQuery("SELECT count(*) FROM t")) {
        r.next();
        assertThat(expected).hasSize(r.getInt(1));
      }
      // the TOASTed values the updates left as they were are PostgreSQL's
      List<String> toasted = new ArrayList<>();
      try (var r = s.executeQuery("SELECT id, md5(big) FROM t WHERE big IS NOT NULL ORDER BY id")) {
        while (r.next()) {
          toasted.add(r.getInt(1) + "|" + r.getString(2));
        }
      }
      assertThat(toasted).hasSizeGreaterThan(100);
      try (Database db = Floe.open(Path.of(columnar))) {
        assertThat(Rows.of(db, "SELECT id, md5(big) FROM t WHERE big IS NOT NULL ORDER BY id")).isEqualTo(toasted);
      }
    }
  }

  private static List<String> rows(String wh) {
    try (Database db = Floe.open(Path.of(wh))) {
      return Rows.of(db, "SELECT * FROM t ORDER BY id");
    }
  }

  /** {@code floe cdc follow} until caught up, in this JVM, every batch columnar or none. */
  private static void follow(dev.floe.testing.ThrowawayPostgres pg, String wh, String slot, boolean columnar) {
    String property = "floe.cdc.bulk-min-events";
    System.setProperty(property, columnar ? "1" : String.valueOf(Integer.MAX_VALUE));
    try {
      List<String> args = new ArrayList<>(List.of("cdc", "follow", "-w", wh, "--postgres", pg.url(), "--user", "floe",
          "--table", "t", "--slot", slot, "--publication", slot, "--stop-after-idle-ms", "1000", "--maintain-ms", "0", "--batch", "500"));
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      Environment env = new Environment(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true,
          StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), false, false);
      int status = Main.run(env, args.toArray(String[]::new));
      assertThat(status).as(err.toString(StandardCharsets.UTF_8)).isZero();
    } finally {
      System.clearProperty(property);
    }
  }

  /** How many batches the columnar path has taken in this JVM. */
  private static long taken() throws ReflectiveOperationException {
    java.lang.reflect.Field f = Class.forName("dev.floe.exec.ChangeBulk").getDeclaredField("TAKEN");
    f.setAccessible(true);
    return ((java.util.concurrent.atomic.AtomicLong) f.get(null)).get();
  }
}
