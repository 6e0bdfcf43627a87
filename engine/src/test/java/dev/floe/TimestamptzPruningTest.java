package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.Rows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Filters on a timestamptz column prune files and month partitions: the literal is the instant it names
 * (its offset, or UTC without one, as the engine reads it). Pruning must never change a result: random
 * filters in every literal form give what DuckDB gives over the same rows in a plain table; and it does
 * prune: with every file but January's gone from disk, January's queries still answer.
 */
class TimestamptzPruningTest {
  @TempDir
  Path dir;

  private static final String[] OPERATORS = {"<", "<=", ">", ">=", "="};
  private static final String[] OFFSETS = {"", "+00", "Z", "+01", "-08", "+05:30", "-03:30", "+14"};

  @Test
  void filtersOnTimestamptzPruneWithoutChangingResults() throws Exception {
    try (Database db = Floe.open(dir); Connection model = DriverManager.getConnection("jdbc:duckdb:");
        java.sql.Statement m = model.createStatement()) {
      m.execute("SET TimeZone = 'UTC'");
      db.sql("CREATE TABLE ev (id int, ts timestamptz) PARTITIONED BY (month(ts))").close();
      db.sql("CREATE TABLE flat (id int, ts timestamptz)").close();
      m.execute("CREATE TABLE ev (id int, ts timestamptz)");
      // a row every 7 hours through 2024, in UTC; the flat table in 12 files, one per INSERT
      String rows = "SELECT i::int AS id, TIMESTAMPTZ '2024-01-01 00:00:00+00' + i * INTERVAL 7 HOUR AS ts "
          + "FROM range(0, 1252) r(i)";
      db.sql("INSERT INTO ev " + rows).close();
      for (int month = 0; month < 12; month++) {
        db.sql("INSERT INTO flat SELECT * FROM (" + rows + ") WHERE month(ts) = " + (month + 1)).close();
      }
      m.execute("INSERT INTO ev " + rows);

      Random random = new Random(42);
      for (int n = 0; n < 300; n++) {
        String filter = randomFilter(random);
        String expected;
        try (ResultSet rs = m.executeQuery("SELECT count(*), coalesce(sum(id), 0) FROM ev WHERE " + filter)) {
          rs.next();
          expected = rs.getLong(1) + "|" + rs.getLong(2);
        }
        for (String table : List.of("ev", "flat")) {
          assertThat(Rows.of(db, "SELECT count(*), coalesce(sum(id), 0) FROM " + table + " WHERE " + filter))
              .as(table + " WHERE " + filter).containsExactly(expected);
        }
      }

      // January's rows are in one file of each table: with the others gone, January still answers
      for (String table : List.of("ev", "flat")) {
        List<String> others = Rows.of(db, "SELECT file_path FROM \"" + table + "$files\" WHERE "
            + "readable_metrics.ts.lower_bound >= TIMESTAMPTZ '2024-02-01 00:00:00+00'");
        assertThat(others).hasSize(11);
        for (String f : others) {
          Files.delete(Path.of(f));
        }
      }
      for (String table : List.of("ev", "flat")) {
        for (String literal : List.of("'2024-02-01'", "'2024-02-01 00:00:00+00'", "'2024-02-01T01:00:00+01:00'",
            "TIMESTAMPTZ '2024-01-31 16:00:00-08'", "CAST('2024-02-01 00:00Z' AS timestamptz)")) {
          assertThat(Rows.of(db, "SELECT count(*), sum(id) FROM " + table + " WHERE ts < " + literal))
              .as(table + " " + literal).containsExactly("107|5671");
          String from = literal.replace("2024-02-01", "2024-01-10").replace("2024-01-31 16", "2024-01-09 16");
          assertThat(Rows.of(db, "SELECT count(*) FROM " + table + " WHERE ts >= " + from + " AND ts < " + literal))
              .as(table + " " + from + " " + literal).containsExactly("76");
        }
        // a filter that is not a constant reads every file: the deleted ones are missing
        assertThatThrownBy(() -> Rows.of(db, "SELECT count(*) FROM " + table + " WHERE ts < TIMESTAMPTZ "
            + "'2024-02-01 00:00:00+00' + INTERVAL 0 DAY")).isInstanceOfSatisfying(FloeException.class,
                e -> assertThat(e.sqlState()).startsWith("58"));
      }
    }
  }

  /**
   * In a session whose TimeZone is not UTC, a literal without an offset names the instant of that local
   * time, as PostgreSQL reads it (DuckDB's connection takes the zone; pruning reads the literal the same
   * way, and not at all for a local time that daylight saving skips or repeats): the same random filters,
   * and times around the 2024 transitions, give what DuckDB gives in that zone over the same rows.
   */
  @Test
  void aSessionsTimeZoneReadsLiteralsWithoutAnOffset() throws Exception {
    try (Database db = Floe.open(dir); Connection model = DriverManager.getConnection("jdbc:duckdb:");
        java.sql.Statement m = model.createStatement()) {
      db.sql("CREATE TABLE ev (id int, ts timestamptz) PARTITIONED BY (month(ts))").close();
      m.execute("CREATE TABLE ev (id int, ts timestamptz)");
      String rows = "SELECT i::int AS id, TIMESTAMPTZ '2024-01-01 00:00:00+00' + i * INTERVAL 7 HOUR AS ts "
          + "FROM range(0, 1252) r(i)";
      db.sql("INSERT INTO ev " + rows).close();
      m.execute("INSERT INTO ev " + rows);
      for (String zone : List.of("Europe/Paris", "America/New_York", "Asia/Kolkata")) {
        m.execute("SET TimeZone = '" + zone + "'");
        try (Session s = db.connect()) {
          s.setSettings(java.util.Map.of("TimeZone", zone));
          Random random = new Random(7);
          List<String> filters = new java.util.ArrayList<>(List.of("ts < '2024-02-01'",
              "ts >= '2024-03-31 02:30' AND ts < '2024-04-01'", "ts < '2024-10-27 02:30'",
              "ts BETWEEN '2024-11-03 01:30' AND '2024-11-04'", "ts = '2024-01-01 07:00'",
              "CAST(ts AS DATE) = DATE '2024-06-01'"));
          for (int n = 0; n < 120; n++) {
            filters.add(randomFilter(random));
          }
          for (String filter : filters) {
            String expected;
            try (ResultSet rs = m.executeQuery("SELECT count(*), coalesce(sum(id), 0) FROM ev WHERE " + filter)) {
              rs.next();
              expected = rs.getLong(1) + "|" + rs.getLong(2);
            }
            assertThat(Rows.of(s, "SELECT count(*), coalesce(sum(id), 0) FROM ev WHERE " + filter))
                .as(zone + ": " + filter).containsExactly(expected);
          }
          // the literal is the local time's instant: in Paris, January ends an hour before it does in UTC
          if (zone.equals("Europe/Paris")) {
            assertThat(Rows.of(s, "SELECT count(*) FROM ev WHERE ts < '2024-02-01'")).containsExactly("107");
            assertThat(Rows.of(s, "SELECT epoch(TIMESTAMPTZ '2024-02-01 00:00')")).containsExactly("1.706742E9");
          }
        }
      }
    }
  }

  private static String randomFilter(Random random) {
    int kind = random.nextInt(4);
    if (kind == 0) {
      return "ts BETWEEN " + randomLiteral(random) + " AND " + randomLiteral(random);
    }
    if (kind == 1) {
      return "ts IN (" + randomLiteral(random) + ", " + randomLiteral(random) + ")";
    }
    String op = OPERATORS[random.nextInt(OPERATORS.length)];
    return kind == 2 ? "ts " + op + " " + randomLiteral(random) : randomLiteral(random) + " " + op + " ts";
  }

  /** An instant near a month boundary of 2024 (or on a row's own time), in one of the literal forms. */
  private static String randomLiteral(Random random) {
    int month = 1 + random.nextInt(12);
    int day = random.nextBoolean() ? 1 : 28 + random.nextInt(1);
    int hour = random.nextInt(24);
    int minute = random.nextBoolean() ? 0 : random.nextInt(60);
    String date = String.format("2024-%02d-%02d", month, day);
    String offset = OFFSETS[random.nextInt(OFFSETS.length)];
    String text = switch (random.nextInt(4)) {
      case 0 -> date;
      case 1 -> String.format("%s %02d:%02d:00%s", date, hour, minute, offset);
      case 2 -> String.format("%sT%02d:%02d%s", date, hour, minute, offset);
      default -> String.format("%s %02d:%02d:00.%06d%s", date, hour, minute, random.nextInt(1_000_000), offset);
    };
    return switch (random.nextInt(3)) {
      case 0 -> "'" + text + "'";
      case 1 -> "TIMESTAMPTZ '" + text + "'";
      default -> "CAST('" + text + "' AS timestamp with time zone)";
    };
  }
}
