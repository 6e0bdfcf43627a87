package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code floe cdc follow} against a real PostgreSQL 15 with logical decoding: a table of the common types
 * (NULLs included) changed at random (inserts, updates, deletes, primary-key changes, transactions, some
 * rolled back, a TRUNCATE), some of it before the follower starts (the snapshot), some while it runs, some
 * while it is stopped; after each run the Floe table equals PostgreSQL's, row for row and value for value as PostgreSQL
 * prints them. A follower killed with SIGKILL mid-stream resumes, and the table is still exact: nothing lost,
 * nothing twice.
 */
class CdcFollowPostgresTest {
  private static final String COLUMNS = "id, b, s, tx, v, n, d, r, f, day, ts, tz, bin, u, note";
  private static dev.floe.testing.ThrowawayPostgres postgres;

  @TempDir
  Path dir;

  /** Where the killed children unpack DuckDB's native library. */
  @TempDir
  Path childTmp;

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
  void snapshotThenStreamThenResumeAfterAStopIsExact() throws Exception {
    String wh = dir.resolve("wh").toString();
    try (Connection pg = postgres.connect()) {
      Workload w = new Workload(pg, "orders", new Random(1), true);
      w.create();
      w.run(250); // what the snapshot reads
      createInFloe(wh, "orders");

      // the first run: the snapshot, then what happens while it streams
      CompletableFuture<Cli.Outcome> first = CompletableFuture.supplyAsync(() -> follow(wh, "orders", "--window-ms",
          "200", "--stop-after-idle-ms", "1000"));
      awaitSlot(pg, "floe_orders");
      w.run(500);
      Cli.Outcome o1 = first.get(60, TimeUnit.SECONDS);
      assertThat(o1.status()).as(o1.err()).isZero();
      assertThat(o1.out()).startsWith("following public.orders on " + postgres.url() + " into orders (slot "
          + "floe_orders, publication floe_orders)\n").contains(" event(s) through lsn:");
      assertSameRows(pg, wh, "orders");

      // changes while no follower runs, a TRUNCATE among them: the next one resumes where the last batch ended
      w.run(100);
      w.truncate();
      w.run(150);
      Cli.Outcome o2 = follow(wh, "orders", "--stop-after-idle-ms", "1000");
      assertThat(o2.status()).as(o2.err()).isZero();
      assertThat(o2.out()).contains("resuming after lsn:").doesNotContain("(nothing new)");
      assertSameRows(pg, wh, "orders");

      // nothing new: nothing applied, nothing committed
      long snapshots = snapshots(wh, "orders");
      Cli.Outcome o3 = follow(wh, "orders", "--stop-after-idle-ms", "1000");
      assertThat(o3.status()).as(o3.err()).isZero();
      assertThat(o3.out()).endsWith("applied 0 event(s) to orders\n");
      assertThat(snapshots(wh, "orders")).isEqualTo(snapshots);

      // a slot that is gone took the changes after the table's position with it: no silent gap
      try (Statement s = pg.createStatement()) {
        s.execute("SELECT pg_drop_replication_slot('floe_orders')");
      }
      Cli.Outcome gone = follow(wh, "orders", "--stop-after-idle-ms", "1000");
      assertThat(gone.status()).isEqualTo(Main.EXIT_ERROR);
      assertThat(gone.err()).startsWith("ERROR 55000: table \"orders\" followed replication slot \"floe_orders\" up "
          + "to lsn:").contains(", and the slot is gone HINT: ");
    }
  }

  @Test
  void aQuietTableLetsTheSlotMoveOnWhileOtherTablesAreWritten() throws Exception {
    String wh = dir.resolve("wh").toString();
    try (Connection pg = postgres.connect(); Statement s = pg.createStatement()) {
      s.execute("CREATE TABLE quiet (id bigint PRIMARY KEY, v text)");
      s.execute("INSERT INTO quiet VALUES (1, 'a')");
      s.execute("CREATE TABLE noise (id bigint, v text)");
      Cli.Outcome made = Cli.run("sql", "-w", wh, "-c", "CREATE TABLE quiet (id bigint PRIMARY KEY, v text)");
      assertThat(made.status()).as(made.err()).isZero();
      Process follower = followInChild(wh, "quiet", "--heartbeat-ms", "200");
      awaitSlot(pg, "floe_quiet");
      // the database is written, the followed table is not: PostgreSQL may recycle that WAL once the
      // follower has recorded a position past it
      s.execute("INSERT INTO noise SELECT i, md5(i::text) FROM generate_series(1, 250000) i"); // > a WAL segment
      String written = one(s, "SELECT pg_current_wal_lsn()::text");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90); // PostgreSQL decodes (and skips) it all
      String moved = "f";
      while (!moved.equals("t") && System.nanoTime() < deadline) {
        Thread.sleep(100);
        moved = one(s, "SELECT confirmed_flush_lsn >= '" + written + "'::pg_lsn FROM pg_replication_slots "
            + "WHERE slot_name = 'floe_quiet'");
      }
      follower.destroy(); // SIGTERM: a clean stop
      assertThat(follower.waitFor(60, TimeUnit.SECONDS)).isTrue();
      String printed = Files.readString(childTmp.resolve("quiet.out"));
      assertThat(moved).as("the slot's confirmed position passed " + written + "; the follower printed:\n"
          + printed).isEqualTo("t");
      assertThat(follower.exitValue()).as(printed).isZero();
      assertThat(rows(wh, "quiet")).containsExactly("1|a");
      // the next start resumes from the heartbeat's position
      Cli.Outcome again = follow(wh, "quiet", "--stop-after-idle-ms", "1000");
      assertThat(again.status()).as(again.err()).isZero();
      String resumed = again.out().replaceAll("(?s).*resuming after lsn:([0-9A-F/]+).*", "$1");
      assertThat(one(s, "SELECT '" + resumed + "'::pg_lsn >= '" + written + "'::pg_lsn")).as(again.out()).isEqualTo("t");
    }
  }

  @Test
  void aKeyChangeKeepsTheUnchangedToastValueUnderTheDefaultReplicaIdentity() throws Exception {
    String wh = dir.resolve("wh").toString();
    try (Connection pg = postgres.connect(); Statement s = pg.createStatement()) {
      s.execute("CREATE TABLE toasty (id int PRIMARY KEY, big text, n int)"); // REPLICA IDENTITY DEFAULT
      // 22 kB of hex: stored out of line even compressed, so an UPDATE that leaves it unchanged does not log it
      s.execute("INSERT INTO toasty SELECT 1, string_agg(md5(i::text), '') , 1 FROM generate_series(1, 700) i");
      s.execute("INSERT INTO toasty VALUES (7, 'small', 7)");
      Cli.Outcome made = Cli.run("sql", "-w", wh, "-c", "CREATE TABLE toasty (id int PRIMARY KEY, big text, n int)");
      assertThat(made.status()).as(made.err()).isZero();
      CompletableFuture<Cli.Outcome> follower = CompletableFuture.supplyAsync(() -> follow(wh, "toasty",
          "--window-ms", "200", "--stop-after-idle-ms", "2000"));
      awaitSlot(pg, "floe_toasty");
      s.execute("UPDATE toasty SET id = 2, n = 2 WHERE id = 1"); // Debezium sends big as its placeholder
      s.execute("UPDATE toasty SET id = 3 WHERE id = 2");
      Cli.Outcome o = follower.get(90, TimeUnit.SECONDS);
      assertThat(o.status()).as(o.err()).isZero();
      String expected = one(s, "SELECT string_agg(id || '|' || md5(big) || '|' || n, ',' ORDER BY id) FROM toasty");
      try (Database db = Floe.open(Path.of(wh)); Result r = db.sql("SELECT string_agg(id || '|' || md5(big) || '|' "
          + "|| n, ',' ORDER BY id) FROM toasty")) {
        assertThat(r.iterator().next().getString(0)).as(o.out()).isEqualTo(expected);
      }
    }
  }

  private static String one(Statement s, String sql) throws SQLException {
    try (ResultSet r = s.executeQuery(sql)) {
      r.next();
      return r.getString(1);
    }
  }

  @Test
  void killedMidStreamItResumesAndTheTableIsStillExact() throws Exception {
    String wh = dir.resolve("wh").toString();
    try (Connection pg = postgres.connect()) {
      Workload w = new Workload(pg, "accounts", new Random(2), false);
      w.create();
      w.run(150);
      createInFloe(wh, "accounts");
      StringBuilder children = new StringBuilder();
      for (int kill = 0; kill < 2; kill++) {
        Process child = followInChild(wh, "accounts");
        AtomicInteger batches = new AtomicInteger();
        StringBuilder printed = new StringBuilder();
        Thread reader = new Thread(() -> {
          try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(),
              StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
              printed.append(line).append('\n');
              if (line.contains(" event(s) through lsn:")) {
                batches.incrementAndGet();
              }
            }
          } catch (java.io.IOException e) {
            // the child died
          }
        });
        reader.start();
        awaitSlot(pg, "floe_accounts");
        // changes until the child committed a few batches, then SIGKILL wherever it is
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (batches.get() < 3 && System.nanoTime() < deadline && child.isAlive()) {
          w.run(10);
          Thread.sleep(20);
        }
        assertThat(child.isAlive()).as(printed.toString()).isTrue();
        assertThat(batches.get()).as(printed.toString()).isGreaterThanOrEqualTo(3);
        w.run(30);
        child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        reader.join(10_000);
        children.append(printed).append("(killed)\n");
        w.run(100); // while none runs
      }
      Cli.Outcome last = follow(wh, "accounts", "--stop-after-idle-ms", "1000");
      assertThat(last.status()).as(last.err()).isZero();
      assertThat(last.out()).contains("resuming after lsn:");
      assertSameRows(pg, wh, "accounts", children + last.out());
    }
  }

  @Test
  void mistakesAreOneLineErrors() throws Exception {
    String wh = dir.resolve("wh").toString();
    try (Connection pg = postgres.connect(); Statement s = pg.createStatement()) {
      s.execute("CREATE TABLE nokey (id int, v text)");
      s.execute("CREATE TABLE wide (id int PRIMARY KEY, v text, extra int)");
      s.execute("CREATE TABLE narrow (id int PRIMARY KEY, v varchar(10))");
      s.execute("CREATE ROLE plain LOGIN");
    }
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE nokey (id int PRIMARY KEY, v text); CREATE TABLE wide "
        + "(id int PRIMARY KEY, v text); CREATE TABLE narrow (id int PRIMARY KEY, v varchar(3)); CREATE TABLE nosource "
        + "(id int PRIMARY KEY)").status()).isZero();
    Map<String, String> errors = new HashMap<>();
    errors.put("ERROR 08001: could not connect to PostgreSQL at 127.0.0.1:1/postgres as floe: Connection to "
        + "127.0.0.1:1 refused.", "--postgres=127.0.0.1:1/postgres --table=nokey");
    errors.put("ERROR 3D000: could not connect to PostgreSQL at " + postgres.url() + "x as floe: FATAL: database "
        + "\"postgresx\" does not exist", "--postgres=" + postgres.url() + "x --table=nokey");
    errors.put("ERROR 55000: PostgreSQL table \"public.nokey\" has no primary key", "--table=nokey");
    errors.put("ERROR 42501: PostgreSQL role \"plain\" may not replicate HINT: ALTER ROLE plain WITH REPLICATION",
        "--table=wide --user=plain");
    errors.put("ERROR 42703: column \"extra\" of PostgreSQL table \"public.wide\" is not a column of table \"wide\"",
        "--table=wide");
    errors.put("ERROR 42P01: relation \"public.nosource\" does not exist in PostgreSQL", "--table=nosource");
    errors.put("ERROR 42P01: relation \"missing\" does not exist", "--table=missing");
    for (Map.Entry<String, String> e : errors.entrySet()) {
      List<String> args = new ArrayList<>(List.of("cdc", "follow", "-w", wh));
      if (!e.getValue().contains("--postgres")) {
        args.add("--postgres=" + postgres.url());
      }
      if (!e.getValue().contains("--user")) {
        args.add("--user=floe");
      }
      args.addAll(List.of(e.getValue().split(" ")));
      Cli.Outcome o = Cli.run(args.toArray(String[]::new));
      assertThat(o.status()).as(e.getValue() + ": " + o.err()).isEqualTo(Main.EXIT_ERROR);
      assertThat(o.err()).as(e.getValue()).startsWith(e.getKey()).hasLineCount(1);
    }
    // a value the Floe table cannot hold stops the follower with the table's error, naming the event
    try (Connection pg = postgres.connect(); Statement s = pg.createStatement()) {
      s.execute("INSERT INTO narrow VALUES (1, 'ok'), (2, 'too long')");
    }
    Cli.Outcome o = follow(wh, "narrow", "--stop-after-idle-ms", "5000");
    assertThat(o.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(o.err()).matches("ERROR 22001: value too long for type character varying\\(3\\) in column \"v\" \\(the "
        + "event at lsn:[0-9A-F]+/[0-9A-F]+\\)\n");
    assertThat(rows(wh, "narrow")).isEmpty(); // the batch failed whole
    // wrong command lines
    Cli.Outcome usage = Cli.run("cdc", "follow", "-w", wh, "--postgres", "floe:secret@localhost/db", "--table", "t");
    assertThat(usage.status()).isEqualTo(Main.EXIT_USAGE);
    assertThat(usage.err()).startsWith("floe: --postgres takes no user or password");
    assertThat(Cli.run("cdc", "follow", "-w", wh, "--postgres", "localhost", "--table", "t").err())
        .startsWith("floe: --postgres is host[:port]/dbname");
    assertThat(Cli.run("cdc").err()).startsWith("floe: missing a command: apply or follow");
  }

  /** {@code floe cdc follow} in this JVM, as role floe. */
  private static Cli.Outcome follow(String wh, String table, String... more) {
    return FollowRuns.follow(postgres, wh, table, more);
  }

  /** {@code floe cdc follow} in a child JVM of this class path, committing small batches often. */
  private Process followInChild(String wh, String table, String... more) throws java.io.IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx512m",
        "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + childTmp, "-cp", System.getProperty("java.class.path"),
        Main.class.getName(), "cdc", "follow", "-w", wh, "--postgres", postgres.url(), "--user", "floe", "--table",
        table));
    if (more.length == 0) {
      command.addAll(List.of("--window-ms", "100", "--batch", "25"));
      return new ProcessBuilder(command).redirectErrorStream(true).start(); // read as it goes
    }
    command.addAll(List.of(more));
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(childTmp.resolve(table + ".out")
        .toFile()).start();
  }

  /** Waits for the follower's slot to exist: changes made after that are streamed, not snapshotted. */
  private static void awaitSlot(Connection pg, String slot) throws Exception {
    FollowRuns.awaitSlot(pg, slot);
  }


  private static void createInFloe(String wh, String table) {
    Cli.Outcome o = Cli.run("sql", "-w", wh, "-c", "CREATE TABLE " + table + " (" + Workload.DEFINITION + ")");
    assertThat(o.status()).as(o.err()).isZero();
  }

  /** Both tables' rows, each as PostgreSQL prints its values, compared as multisets both ways. */
  private static void assertSameRows(Connection pg, String wh, String table) throws SQLException {
    assertSameRows(pg, wh, table, "");
  }

  private static void assertSameRows(Connection pg, String wh, String table, String followed) throws SQLException {
    List<String> source = new ArrayList<>();
    try (Statement s = pg.createStatement()) {
      s.execute("SET TimeZone = 'UTC'");
      try (ResultSet r = s.executeQuery("SELECT " + COLUMNS + " FROM " + table)) {
        int n = r.getMetaData().getColumnCount();
        while (r.next()) {
          List<String> values = new ArrayList<>();
          for (int k = 1; k <= n; k++) {
            values.add(canonical(k - 1, r.getString(k)));
          }
          source.add(String.join("|", values));
        }
      }
    }
    List<String> floe = rows(wh, table);
    List<String> missing = minus(source, floe);
    List<String> extra = minus(floe, source);
    assertThat(missing).as(followed + "rows of PostgreSQL's " + table + " that Floe's lacks (" + source.size() + " in PostgreSQL, "
        + floe.size() + " in Floe); where they differ: " + differences(missing, extra)).isEmpty();
    assertThat(extra).as(followed + "rows of Floe's " + table + " that PostgreSQL's lacks (" + source.size()
        + " in PostgreSQL, " + floe.size() + " in Floe)").isEmpty();
    assertThat(source).isNotEmpty();
  }

  /** For the first rows of {@code a} that {@code b} has a row of the same id of: the columns that differ. */
  private static List<String> differences(List<String> a, List<String> b) {
    Map<String, String> byId = new HashMap<>();
    b.forEach(row -> byId.put(row.substring(0, row.indexOf('|')), row));
    List<String> out = new ArrayList<>();
    String[] names = COLUMNS.split(", ");
    for (String row : a) {
      String other = byId.get(row.substring(0, row.indexOf('|')));
      if (other == null) {
        out.add("id " + row.substring(0, row.indexOf('|')) + " only in one");
        continue;
      }
      String[] x = row.split("\\|", -1);
      String[] y = other.split("\\|", -1);
      for (int k = 0; k < Math.min(x.length, y.length) && k < names.length; k++) {
        if (!x[k].equals(y[k])) {
          out.add("id " + x[0] + " " + names[k] + ": " + abbreviate(x[k]) + " vs " + abbreviate(y[k]));
        }
      }
      if (out.size() > 20) {
        break;
      }
    }
    return out;
  }

  private static String abbreviate(String s) {
    return s.length() > 40 ? s.substring(0, 37) + "...(" + s.length() + ")" : s;
  }

  /** Floe's rows of {@code table}, each value as {@link Row#getString} prints it (PostgreSQL's text form). */
  private static List<String> rows(String wh, String table) {
    List<String> out = new ArrayList<>();
    try (Database db = Floe.open(Path.of(wh)); Result r = db.sql("SELECT " + COLUMNS_OF.apply(table) + " FROM "
        + table)) {
      for (Row row : r) {
        List<String> values = new ArrayList<>();
        for (int k = 0; k < row.size(); k++) {
          values.add(canonical(k, row.getString(k)));
        }
        out.add(String.join("|", values));
      }
    }
    return out;
  }

  private static final java.util.function.Function<String, String> COLUMNS_OF =
      table -> table.equals("narrow") || table.equals("quiet") ? "id, v" : COLUMNS;

  private static long snapshots(String wh, String table) {
    try (Database db = Floe.open(Path.of(wh))) {
      return db.table(table).snapshots().size();
    }
  }

  /**
   * A value as text: PostgreSQL's, except that floating-point numbers are compared as numbers (PostgreSQL
   * prints -2.3302312536377488e+16 where Floe prints -2.330231253637749e+16, the same double).
   */
  private static String canonical(int column, String text) {
    if (text == null) {
      return "null";
    }
    return switch (column) {
      case 6 -> Double.toString(Double.parseDouble(text));
      case 7 -> Float.toString(Float.parseFloat(text));
      default -> text;
    };
  }

  /** {@code a} less {@code b}, as multisets (EXCEPT ALL). */
  private static List<String> minus(List<String> a, List<String> b) {
    Map<String, Integer> counts = new HashMap<>();
    b.forEach(s -> counts.merge(s, 1, Integer::sum));
    List<String> out = new ArrayList<>();
    for (String s : a) {
      if (counts.getOrDefault(s, 0) > 0) {
        counts.merge(s, -1, Integer::sum);
      } else {
        out.add(s);
      }
    }
    return out;
  }

  /**
   * Random changes to a PostgreSQL table of the common types: inserts, updates of some columns, deletes,
   * primary-key changes, and transactions of several of these (one in five rolled back). With {@code toast},
   * some texts are big enough to be stored out of line, and the table logs whole old rows (REPLICA IDENTITY
   * FULL): with the default identity, an update that leaves such a value alone does not carry it, and Debezium
   * sends a placeholder instead (see docs/cdc-postgres.md).
   */
  static final class Workload {
    static final String DEFINITION = "id int PRIMARY KEY, b bigint, s smallint, tx text, v varchar(20), "
        + "n numeric(12,3), d double precision, r real, f boolean, day date, ts timestamp, tz timestamptz, bin bytea, "
        + "u uuid, note text";
    private static final String[] WORDS = {"", "a", "héllo", "snow ☃", "emoji 😀", "it's", "back\\slash", "two\nlines",
        "tab\there", "\"quoted\"", "__debezium_like", "NULL", "   "};

    private final Connection pg;
    private final String table;
    private final Random random;
    private final boolean toast;
    private final List<Integer> keys = new ArrayList<>();
    private int nextId = 1;

    Workload(Connection pg, String table, Random random, boolean toast) {
      this.pg = pg;
      this.table = table;
      this.random = random;
      this.toast = toast;
    }

    /** The table, with a DEFAULT that a NULL must not turn into. */
    void create() throws SQLException {
      try (Statement s = pg.createStatement()) {
        s.execute("CREATE TABLE " + table + " (" + DEFINITION.replace("note text", "note text DEFAULT 'none'") + ")");
        if (toast) {
          s.execute("ALTER TABLE " + table + " REPLICA IDENTITY FULL");
        }
      }
    }

    void truncate() throws SQLException {
      try (Statement s = pg.createStatement()) {
        s.execute("TRUNCATE " + table);
      }
      keys.clear();
    }

    void run(int operations) throws SQLException {
      for (int i = 0; i < operations; i++) {
        if (random.nextInt(10) == 0) {
          transaction();
        } else {
          operation();
        }
      }
    }

    private void transaction() throws SQLException {
      List<Integer> before = new ArrayList<>(keys);
      pg.setAutoCommit(false);
      try {
        for (int k = 2 + random.nextInt(4); k > 0; k--) {
          operation();
        }
        if (random.nextInt(5) == 0) {
          pg.rollback();
          keys.clear();
          keys.addAll(before);
        } else {
          pg.commit();
        }
      } finally {
        pg.setAutoCommit(true);
      }
    }

    private void operation() throws SQLException {
      int op = random.nextInt(100);
      if (keys.size() < 20 || op < 40) {
        insert();
      } else if (op < 72) {
        update();
      } else if (op < 88) {
        delete();
      } else {
        changeKey();
      }
    }

    private void insert() throws SQLException {
      int id = nextId++;
      try (PreparedStatement s = pg.prepareStatement("INSERT INTO " + table + " (" + COLUMNS + ") VALUES "
          + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
        s.setInt(1, id);
        for (int c = 1; c < 15; c++) {
          set(s, c + 1, c);
        }
        s.executeUpdate();
      }
      keys.add(id);
    }

    private void update() throws SQLException {
      int id = keys.get(random.nextInt(keys.size()));
      String[] names = COLUMNS.split(", ");
      List<Integer> columns = new ArrayList<>();
      for (int c = 1; c < names.length; c++) {
        if (random.nextInt(4) == 0) {
          columns.add(c);
        }
      }
      if (columns.isEmpty()) {
        columns.add(1 + random.nextInt(names.length - 1));
      }
      StringBuilder sql = new StringBuilder("UPDATE " + table + " SET ");
      for (int i = 0; i < columns.size(); i++) {
        sql.append(i == 0 ? "" : ", ").append(names[columns.get(i)]).append(" = ?");
      }
      try (PreparedStatement s = pg.prepareStatement(sql + " WHERE id = ?")) {
        for (int i = 0; i < columns.size(); i++) {
          set(s, i + 1, columns.get(i));
        }
        s.setInt(columns.size() + 1, id);
        s.executeUpdate();
      }
    }

    private void delete() throws SQLException {
      int id = keys.remove(random.nextInt(keys.size()));
      try (PreparedStatement s = pg.prepareStatement("DELETE FROM " + table + " WHERE id = ?")) {
        s.setInt(1, id);
        s.executeUpdate();
      }
    }

    /** {@code UPDATE t SET id = <new> WHERE id = <old>}, sometimes with another column. */
    private void changeKey() throws SQLException {
      int index = random.nextInt(keys.size());
      int old = keys.get(index);
      int id = nextId++;
      boolean more = random.nextBoolean();
      try (PreparedStatement s = pg.prepareStatement("UPDATE " + table + " SET id = ?" + (more ? ", tx = ?" : "")
          + " WHERE id = ?")) {
        s.setInt(1, id);
        if (more) {
          set(s, 2, 3);
        }
        s.setInt(more ? 3 : 2, old);
        s.executeUpdate();
      }
      keys.set(index, id);
    }

    /** A random value (NULL one time in seven) of column {@code c} of {@link #COLUMNS} as parameter {@code p}. */
    private void set(PreparedStatement s, int p, int c) throws SQLException {
      boolean nul = random.nextInt(7) == 0;
      switch (c) {
        case 1 -> {
          if (nul) {
            s.setNull(p, Types.BIGINT);
          } else {
            s.setLong(p, random.nextBoolean() ? random.nextLong() : random.nextInt(1000) - 500);
          }
        }
        case 2 -> {
          if (nul) {
            s.setNull(p, Types.SMALLINT);
          } else {
            s.setShort(p, (short) random.nextInt(65536));
          }
        }
        case 3, 14 -> s.setString(p, nul ? null : text());
        case 4 -> s.setString(p, nul ? null : WORDS[random.nextInt(WORDS.length)] + random.nextInt(1000));
        case 5 -> s.setBigDecimal(p, nul ? null : BigDecimal.valueOf(random.nextLong() % 1_000_000_000_000L, 3));
        case 6 -> {
          if (nul) {
            s.setNull(p, Types.DOUBLE);
          } else {
            int pick = random.nextInt(20);
            s.setDouble(p, pick == 0 ? Double.NaN : pick == 1 ? Double.POSITIVE_INFINITY : pick == 2 ? -0.0
                : pick == 3 ? Double.MIN_VALUE : (random.nextDouble() - 0.5) * Math.pow(10, random.nextInt(40) - 20));
          }
        }
        case 7 -> {
          if (nul) {
            s.setNull(p, Types.REAL);
          } else {
            s.setFloat(p, random.nextInt(10) == 0 ? Float.NEGATIVE_INFINITY : (random.nextFloat() - 0.5f) * 1e6f);
          }
        }
        case 8 -> {
          if (nul) {
            s.setNull(p, Types.BOOLEAN);
          } else {
            s.setBoolean(p, random.nextBoolean());
          }
        }
        case 9 -> s.setObject(p, nul ? null : LocalDate.of(1900, 1, 1).plusDays(random.nextInt(200 * 365)),
            Types.DATE);
        case 10 -> s.setObject(p, nul ? null : LocalDateTime.of(1970, 1, 1, 0, 0).plusSeconds(random.nextInt())
            .plusNanos(random.nextInt(1_000_000) * 1000L), Types.TIMESTAMP);
        case 11 -> s.setObject(p, nul ? null : OffsetDateTime.of(2000, 1, 1, 0, 0, 0, 0, ZoneOffset.ofHours(
            random.nextInt(25) - 12)).plusSeconds(random.nextInt()).plusNanos(random.nextInt(1_000_000) * 1000L),
            Types.TIMESTAMP_WITH_TIMEZONE);
        case 12 -> {
          byte[] bytes = new byte[random.nextInt(40)];
          random.nextBytes(bytes);
          s.setBytes(p, nul ? null : bytes);
        }
        case 13 -> s.setObject(p, nul ? null : new UUID(random.nextLong(), random.nextLong()), Types.OTHER);
        default -> throw new IllegalArgumentException("column " + c);
      }
    }

    private String text() {
      StringBuilder b = new StringBuilder();
      for (int k = random.nextInt(4); k >= 0; k--) {
        b.append(WORDS[random.nextInt(WORDS.length)]).append(k == 0 ? "" : " ");
      }
      if (toast && random.nextInt(25) == 0) { // big enough to be TOASTed out of line: unchanged, it is not sent again
        while (b.length() < 9000) {
          b.append(Long.toHexString(random.nextLong()));
        }
      }
      return b.toString();
    }
  }
}
