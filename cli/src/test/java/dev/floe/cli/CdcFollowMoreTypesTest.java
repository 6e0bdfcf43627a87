package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code floe cdc follow} of PostgreSQL types a Floe table has no type of its own for, into the Floe columns
 * docs/cdc-postgres.md maps them to: {@code jsonb} and {@code json} into {@code text} (their text), arrays into
 * {@code text} (Debezium sends them as JSON arrays: their JSON text; {@code text[]}, {@code int[]}, {@code uuid[]}),
 * an enum into {@code text}, {@code money} into {@code numeric(p,2)}, {@code inet} and {@code cidr} into
 * {@code text}, {@code numeric} without a scale into {@code numeric(p,s)}, {@code interval} into {@code bigint}
 * (Debezium's microseconds). Random inserts, updates of some columns, deletes and key changes, before the
 * follower starts (the snapshot) and while it runs, under the default replica identity with some values
 * big enough to be stored out of line (so an update that leaves one alone sends Debezium's placeholder); the
 * Floe table then holds, row for row, what PostgreSQL's rows give as that text.
 */
class CdcFollowMoreTypesTest {
  private static final String PG_DEFINITION = "id int PRIMARY KEY, j jsonb, js json, tags text[], nums int[], m mood, "
      + "cash money, ip inet, x numeric, ids uuid[], iv interval, net cidr";
  private static final String FLOE_DEFINITION = "id int PRIMARY KEY, j text, js text, tags text, nums text, m text, "
      + "cash numeric(18,2), ip text, x numeric(38,10), ids text, iv bigint, net text";
  private static final String[] COLUMNS = {"id", "j", "js", "tags", "nums", "m", "cash", "ip", "x", "ids", "iv",
      "net"};
  /** PostgreSQL's rows as Debezium sends them: the text of json, the JSON of arrays, the output of the others. */
  private static final String EXPECTED = "SELECT id, j::text, js::text, to_json(tags)::text, to_json(nums)::text, "
      + "m::text, cash::numeric, ip, x, to_json(ids)::text, ((extract(year from iv) * 12 + extract(month from iv)) "
      + "* 2629800000000 + extract(day from iv) * 86400000000 + extract(hour from iv) * 3600000000 "
      + "+ extract(minute from iv) * 60000000 + extract(microseconds from iv))::bigint, net FROM more";
  private static final String[] WORDS = {"", "a", "b c", "héllo", "snow ☃", "emoji 😀", "it's", "back\\slash",
      "two\nlines", "tab\there", "\"quoted\"", "{braces}", "comma,", "NULL", "null", "__debezium_unavailable_value_not"};

  private static dev.floe.testing.ThrowawayPostgres postgres;

  @TempDir
  Path dir;

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = dev.floe.testing.ThrowawayPostgres.startLogical();
  }

  @AfterAll
  static void stopPostgres() {
    if (postgres != null) {
      postgres.close();
    }
  }

  @Test
  void jsonArraysEnumsMoneyAndInetLandAsTheirText() throws Exception {
    String wh = dir.resolve("wh").toString();
    try (Connection pg = postgres.connect()) {
      Workload w = new Workload(pg, new Random(5));
      try (Statement s = pg.createStatement()) {
        s.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')");
        s.execute("CREATE TABLE more (" + PG_DEFINITION + ")");
      }
      w.run(150); // what the snapshot reads
      Cli.Outcome made = Cli.run("sql", "-w", wh, "-c", "CREATE TABLE more (" + FLOE_DEFINITION + ")");
      assertThat(made.status()).as(made.err()).isZero();
      CompletableFuture<Cli.Outcome> run = CompletableFuture.supplyAsync(() -> follow(wh, "more", "--window-ms", "200",
          "--stop-after-idle-ms", "1500"));
      FollowRuns.awaitSlot(pg, "floe_more");
      w.run(400);
      Cli.Outcome o = run.get(120, TimeUnit.SECONDS);
      assertThat(o.status()).as(o.err()).isZero();
      assertThat(w.placeholders()).as("updates that left an out-of-line value alone").isGreaterThan(5);
      assertSameRows(pg, wh);
    }
  }

  /**
   * PostgreSQL's infinite dates and timestamps, as Debezium sends them (the largest counts for date and
   * timestamp, the text for timestamptz), stop the follower with 22008 naming the event, nothing of the
   * batch committed; the row before them stays.
   */
  @Test
  void anInfiniteDateOrTimestampStopsTheFollowerWith22008() throws Exception {
    String[][] cases = {{"date", "'infinity'", "date"}, {"timestamp", "'-infinity'", "timestamp"},
        {"timestamptz", "'infinity'", "timestamp"}};
    for (int i = 0; i < cases.length; i++) {
      String wh = dir.resolve("inf" + i).toString();
      String table = "inf" + i;
      try (Connection pg = postgres.connect(); Statement s = pg.createStatement()) {
        s.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, v " + cases[i][0] + ")");
        s.execute("INSERT INTO " + table + " VALUES (1, NULL)");
        Cli.Outcome made = Cli.run("sql", "-w", wh, "-c", "CREATE TABLE " + table + " (id int PRIMARY KEY, v "
            + cases[i][0] + ")");
        assertThat(made.status()).as(made.err()).isZero();
        Cli.Outcome first = follow(wh, table, "--stop-after-idle-ms", "800");
        assertThat(first.status()).as(first.err()).isZero();
        s.execute("INSERT INTO " + table + " VALUES (2, " + cases[i][1] + ")");
        Cli.Outcome o = follow(wh, table, "--stop-after-idle-ms", "800");
        assertThat(o.status()).as(cases[i][0]).isEqualTo(Main.EXIT_ERROR);
        assertThat(o.err()).as(cases[i][0]).startsWith("ERROR 22008: " + cases[i][2] + " out of range for column \"v\" "
            + "(the event at lsn:").contains("and no infinity");
        try (Database db = Floe.open(Path.of(wh)); Result r = db.sql("SELECT id FROM " + table)) {
          List<String> ids = new ArrayList<>();
          r.forEach(row -> ids.add(row.getString(0)));
          assertThat(ids).as(cases[i][0]).containsExactly("1");
        }
        s.execute("SELECT pg_drop_replication_slot('floe_" + table + "')");
      }
    }
  }

  private static void assertSameRows(Connection pg, String wh) throws SQLException {
    Map<String, List<String>> source = new HashMap<>();
    try (Statement s = pg.createStatement(); ResultSet r = s.executeQuery(EXPECTED)) {
      while (r.next()) {
        List<String> values = new ArrayList<>();
        for (int k = 1; k <= COLUMNS.length; k++) {
          values.add(canonical(k - 1, r.getString(k)));
        }
        source.put(values.get(0), values);
      }
    }
    Map<String, List<String>> floe = new HashMap<>();
    try (Database db = Floe.open(Path.of(wh)); Result r = db.sql("SELECT " + String.join(", ", COLUMNS) + " FROM more")) {
      for (Row row : r) {
        List<String> values = new ArrayList<>();
        for (int k = 0; k < row.size(); k++) {
          values.add(canonical(k, row.getString(k)));
        }
        floe.put(values.get(0), values);
      }
    }
    assertThat(source).isNotEmpty();
    assertThat(floe.keySet()).as("keys").containsExactlyInAnyOrderElementsOf(source.keySet());
    for (Map.Entry<String, List<String>> e : source.entrySet()) {
      List<String> f = floe.get(e.getKey());
      for (int k = 1; k < COLUMNS.length; k++) {
        String expected = e.getValue().get(k);
        if (COLUMNS[k].equals("iv") && !expected.equals("<NULL>") && !f.get(k).equals("<NULL>")) {
          // Debezium computes an interval's microseconds in floating point: within one of the exact figure
          assertThat(Long.parseLong(f.get(k))).as("id " + e.getKey() + " column iv")
              .isBetween(Long.parseLong(expected) - 1, Long.parseLong(expected) + 1);
          continue;
        }
        assertThat(abbreviate(f.get(k))).as("id " + e.getKey() + " column " + COLUMNS[k]).isEqualTo(abbreviate(expected));
      }
    }
  }

  /** A value as text; a number by its value ({@code numeric(38,10)} prints the scale's zeros). */
  private static String canonical(int column, String text) {
    if (text == null) {
      return "<NULL>";
    }
    return column == 6 || column == 8 ? new BigDecimal(text).stripTrailingZeros().toPlainString() : text;
  }

  private static String abbreviate(String s) {
    return s.length() > 200 ? s.substring(0, 100) + "...(" + s.length() + ", hash " + s.hashCode() + ")" : s;
  }

  private static Cli.Outcome follow(String wh, String table, String... more) {
    return FollowRuns.follow(postgres, wh, table, more);
  }


  /** Random changes of the table, as SQL literals (NULL one time in six). */
  private static final class Workload {
    private final Connection pg;
    private final Random random;
    private final List<Integer> keys = new ArrayList<>();
    private final List<Integer> big = new ArrayList<>(); // keys whose j or tags is stored out of line
    private int nextId = 1;
    private int placeholders;

    Workload(Connection pg, Random random) {
      this.pg = pg;
      this.random = random;
    }

    int placeholders() {
      return placeholders;
    }

    void run(int operations) throws SQLException {
      try (Statement s = pg.createStatement()) {
        for (int i = 0; i < operations; i++) {
          int op = random.nextInt(100);
          if (keys.size() < 15 || op < 35) {
            int id = nextId++;
            StringBuilder values = new StringBuilder().append(id);
            for (int c = 1; c < COLUMNS.length; c++) {
              values.append(", ").append(value(c, id));
            }
            s.execute("INSERT INTO more VALUES (" + values + ")");
            keys.add(id);
          } else if (op < 75) {
            int id = keys.get(random.nextInt(keys.size()));
            // the cheap columns only, at times: an out-of-line value left alone comes as the placeholder
            int c = random.nextInt(3) == 0 ? 1 + random.nextInt(COLUMNS.length - 1) : 5 + random.nextInt(4);
            placeholders += big.contains(id) && c >= 5 && c <= 8 ? 1 : 0;
            s.execute("UPDATE more SET " + COLUMNS[c] + " = " + value(c, id) + " WHERE id = " + id);
          } else if (op < 90) {
            Integer id = keys.remove(random.nextInt(keys.size()));
            big.remove(id);
            s.execute("DELETE FROM more WHERE id = " + id);
          } else {
            int index = random.nextInt(keys.size());
            Integer old = keys.get(index);
            int id = nextId++;
            s.execute("UPDATE more SET id = " + id + " WHERE id = " + old);
            keys.set(index, id);
            if (big.remove(old)) {
              big.add(id);
            }
          }
        }
      }
    }

    /** A random value of column {@code c} as a SQL literal, for row {@code id}. */
    private String value(int c, int id) {
      if (random.nextInt(6) == 0) {
        return "NULL";
      }
      boolean large = (c == 1 || c == 3 || c == 4 || c == 9) && random.nextInt(12) == 0;
      if (large && !big.contains(id)) {
        big.add(id);
      }
      return switch (c) {
        case 1, 2 -> literal(json(2, large)) + (c == 1 ? "::jsonb" : "::json");
        case 3 -> {
          List<String> items = new ArrayList<>();
          for (int k = random.nextInt(large ? 400 : 5); k > 0; k--) {
            items.add(random.nextInt(8) == 0 ? "NULL" : literal(word() + (large ? Long.toHexString(random.nextLong()) : "")));
          }
          yield items.isEmpty() ? "'{}'::text[]" : "ARRAY[" + String.join(", ", items) + "]::text[]";
        }
        case 4 -> {
          List<String> items = new ArrayList<>();
          for (int k = random.nextInt(large ? 2000 : 5); k > 0; k--) {
            items.add(random.nextInt(8) == 0 ? "NULL" : Integer.toString(random.nextInt()));
          }
          yield items.isEmpty() ? "'{}'::int[]" : "ARRAY[" + String.join(", ", items) + "]::int[]";
        }
        case 9 -> {
          List<String> items = new ArrayList<>();
          for (int k = random.nextInt(large ? 300 : 3); k > 0; k--) {
            items.add(random.nextInt(8) == 0 ? "NULL" : literal(new java.util.UUID(random.nextLong(), random.nextLong())
                .toString()));
          }
          yield items.isEmpty() ? "'{}'::uuid[]" : "ARRAY[" + String.join(", ", items) + "]::uuid[]";
        }
        case 5 -> literal(new String[] {"sad", "ok", "happy"}[random.nextInt(3)]) + "::mood";
        case 6 -> "(" + BigDecimal.valueOf(random.nextLong() % 100_000_000_000L, 2).toPlainString() + ")::numeric::money";
        case 7 -> literal(random.nextBoolean() ? (random.nextInt(256) + "." + random.nextInt(256) + ".0." + random.nextInt(256)
            + (random.nextBoolean() ? "/" + (8 + random.nextInt(25)) : "")) : "2001:db8::" + Integer.toHexString(random.nextInt(65536)))
            + "::inet";
        case 8 -> "(" + BigDecimal.valueOf(random.nextLong() % 1_000_000_000_000L, random.nextInt(10)).toPlainString() + ")";
        case 10 -> "'" + (random.nextInt(21) - 10) + " years " + (random.nextInt(25) - 12) + " mons " + (random.nextInt(61) - 30)
            + " days " + (random.nextInt(49) - 24) + " hours " + random.nextInt(60) + " mins " + random.nextInt(60) + "."
            + String.format("%06d", random.nextInt(1_000_000)) + " secs'::interval";
        case 11 -> literal(random.nextBoolean() ? "10." + random.nextInt(256) + ".0.0/16" : "2001:db8:" + Integer.toHexString(
            random.nextInt(65536)) + "::/48") + "::cidr";
        default -> throw new IllegalArgumentException("column " + c);
      };
    }

    /** A random JSON document: objects, arrays, strings, numbers, booleans and nulls. */
    private String json(int depth, boolean large) {
      int pick = depth == 0 ? 2 + random.nextInt(4) : random.nextInt(6);
      return switch (pick) {
        case 0 -> {
          List<String> members = new ArrayList<>();
          for (int k = large ? 300 : random.nextInt(4); k > 0; k--) {
            members.add(quoted(word() + k) + ": " + json(depth - 1, false));
          }
          yield "{" + String.join(", ", members) + "}";
        }
        case 1 -> {
          List<String> items = new ArrayList<>();
          for (int k = random.nextInt(4); k > 0; k--) {
            items.add(json(depth - 1, false));
          }
          yield "[" + String.join(",", items) + "]";
        }
        case 2 -> quoted(word());
        case 3 -> random.nextBoolean() ? Integer.toString(random.nextInt(2000) - 1000) : "2.50";
        case 4 -> random.nextBoolean() ? "true" : "false";
        default -> "null";
      };
    }

    private String word() {
      return WORDS[random.nextInt(WORDS.length)];
    }

    private static String quoted(String s) {
      StringBuilder b = new StringBuilder("\"");
      for (char ch : s.toCharArray()) {
        switch (ch) {
          case '"' -> b.append("\\\"");
          case '\\' -> b.append("\\\\");
          case '\n' -> b.append("\\n");
          case '\t' -> b.append("\\t");
          default -> b.append(ch);
        }
      }
      return b.append('"').toString();
    }

    private static String literal(String s) {
      return "'" + s.replace("'", "''") + "'";
    }
  }
}
