package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.testing.ThrowawayPostgres;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real PostgreSQL 15 table under a random workload (inserts, updates of some columns, NULLs, deletes,
 * primary-key changes, transactions, some rolled back), followed into Floe by {@code floe cdc follow} as a
 * user runs it (its own JVM, the cli's jar and lib/, Debezium's embedded engine on a logical replication
 * slot): afterwards PostgreSQL's rows, Floe's and Spark's (Iceberg's Spark runtime reading the Floe table)
 * are the same rows, value for value, and the table has no equality delete.
 */
class PostgresFollowedReadBySparkTest {
  private static final String COLUMNS = "id, b, tx, n, d, f, day, tz, u, bin";
  private static final String DEFINITION = "id int PRIMARY KEY, b bigint, tx text, n numeric(12,3), "
      + "d double precision, f boolean, day date, tz timestamptz, u uuid, bin bytea";

  @TempDir
  Path dir;

  @Test
  void sparkReadsWhatPostgresHolds() throws Exception {
    Path wh = dir.resolve("wh");
    try (Database db = Floe.open(wh)) {
      db.sql("CREATE TABLE src (" + DEFINITION + ")").close();
    }
    try (ThrowawayPostgres pg = ThrowawayPostgres.startLogical(); Connection c = pg.connect()) {
      try (Statement s = c.createStatement()) {
        s.execute("CREATE TABLE src (" + DEFINITION + ")");
      }
      Random random = new Random(23);
      List<Integer> keys = new ArrayList<>();
      workload(c, random, keys, 200); // what the snapshot reads
      Process follower = follow(wh, pg);
      awaitSlot(c);
      workload(c, random, keys, 300); // what the stream brings
      String printed;
      assertThat(follower.waitFor(180, TimeUnit.SECONDS)).as("the follower caught up and stopped").isTrue();
      printed = Files.readString(dir.resolve("follow.out"));
      assertThat(follower.exitValue()).as(printed).isZero();

      List<List<String>> source = postgresRows(c);
      List<List<String>> floe = new ArrayList<>();
      try (Database db = Floe.open(wh); Result r = db.sql("SELECT " + COLUMNS + " FROM src ORDER BY id")) {
        for (Row row : r) {
          List<String> values = new ArrayList<>();
          for (int k = 0; k < row.size(); k++) {
            values.add(Canonical.value(row.get(k)));
          }
          floe.add(values);
        }
      }
      assertThat(source).as("PostgreSQL's rows").hasSizeGreaterThan(50);
      Canonical.assertSame("Floe (expected: PostgreSQL); the follower printed:\n" + printed, source, floe);

      // Spark reads the table where the follower left it: registered by its metadata file in the catalog
      // Spark shares with the other tests (under a name of its own), dropped from it afterwards
      String metadata;
      try (Connection sqlite = java.sql.DriverManager.getConnection("jdbc:sqlite:" + wh.resolve("catalog.db"));
          Statement s = sqlite.createStatement(); ResultSet r = s.executeQuery("SELECT metadata_location FROM "
              + "iceberg_tables WHERE table_namespace = 'public' AND table_name = 'src'")) {
        assertThat(r.next()).isTrue();
        metadata = r.getString(1);
      }
      SparkFloe sf = SparkFloe.get();
      sf.sparkExec("CALL floe.system.register_table(table => 'public.followed_src', metadata_file => '" + metadata
          + "')");
      try {
        Canonical.assertSame("Spark (expected: Floe)", floe, sf.sparkRows("SELECT " + COLUMNS + " FROM "
            + "floe.public.followed_src ORDER BY id"));
        assertThat(sf.sparkRows("SELECT count(*) FROM floe.public.followed_src.delete_files WHERE content = 2"))
            .as("equality delete files").containsExactly(List.of("long:0"));
      } finally {
        sf.sparkExec("DROP TABLE floe.public.followed_src"); // the catalog's entry; the files are the test's
      }
    }
  }

  /** {@code floe cdc follow} in its own JVM, as {@code bin/floe} runs it, until it has caught up. */
  private Process follow(Path wh, ThrowawayPostgres pg) throws Exception {
    Path cli = Path.of("../cli/target").toAbsolutePath().normalize();
    Path jar;
    try (Stream<Path> files = Files.list(cli)) {
      jar = files.filter(p -> p.getFileName().toString().matches("floe-cli-.*\\.jar")).findFirst()
          .orElseThrow(() -> new IllegalStateException("no floe-cli jar in " + cli + ": build the cli module first"));
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx512m",
        "-cp", jar + ":" + cli.resolve("lib") + "/*", "dev.floe.cli.Main", "cdc", "follow", "-w", wh.toString(),
        "--postgres", pg.url(), "--user", "floe", "--table", "src", "--window-ms", "200", "--batch", "100",
        "--stop-after-idle-ms", "2000");
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("follow.out").toFile())
        .start();
  }

  /** Waits for the follower's slot: what changes after it is streamed rather than read by the snapshot. */
  private static void awaitSlot(Connection c) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    try (Statement s = c.createStatement()) {
      while (System.nanoTime() < deadline) {
        try (ResultSet r = s.executeQuery("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'floe_src' "
            + "AND active")) {
          r.next();
          if (r.getInt(1) == 1) {
            return;
          }
        }
        Thread.sleep(50);
      }
    }
    throw new AssertionError("the follower made no replication slot within 60 s");
  }

  /** {@code operations} random changes in transactions of 1 to 5, one in ten rolled back. */
  private static void workload(Connection c, Random random, List<Integer> keys, int operations) throws SQLException {
    c.setAutoCommit(false);
    int nextId = keys.stream().mapToInt(Integer::intValue).max().orElse(0) + 1;
    for (int done = 0; done < operations; ) {
      int size = 1 + random.nextInt(5);
      List<Integer> before = new ArrayList<>(keys);
      int start = nextId;
      for (int i = 0; i < size; i++, done++) {
        int what = random.nextInt(10);
        if (keys.isEmpty() || what < 4) {
          int id = nextId++;
          try (PreparedStatement p = c.prepareStatement("INSERT INTO src (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, "
              + "?, ?, ?)")) {
            p.setInt(1, id);
            for (int k = 2; k <= 10; k++) {
              set(p, k, k, random);
            }
            p.executeUpdate();
          }
          keys.add(id);
        } else if (what < 7) {
          int col = 2 + random.nextInt(9);
          String name = COLUMNS.split(", ")[col - 1];
          try (PreparedStatement p = c.prepareStatement("UPDATE src SET " + name + " = ? WHERE id = ?")) {
            set(p, 1, col, random);
            p.setInt(2, keys.get(random.nextInt(keys.size())));
            p.executeUpdate();
          }
        } else if (what < 9) {
          int id = keys.remove(random.nextInt(keys.size()));
          try (PreparedStatement p = c.prepareStatement("DELETE FROM src WHERE id = ?")) {
            p.setInt(1, id);
            p.executeUpdate();
          }
        } else {
          int from = keys.remove(random.nextInt(keys.size()));
          int to = nextId++;
          try (PreparedStatement p = c.prepareStatement("UPDATE src SET id = ? WHERE id = ?")) {
            p.setInt(1, to);
            p.setInt(2, from);
            p.executeUpdate();
          }
          keys.add(to);
        }
      }
      if (random.nextInt(10) == 0) {
        c.rollback();
        keys.clear();
        keys.addAll(before);
        nextId = Math.max(nextId, start);
      } else {
        c.commit();
      }
    }
    c.setAutoCommit(true);
  }

  /** A random value (a NULL one time in six) for column {@code col} (1-based in {@link #COLUMNS}). */
  private static void set(PreparedStatement p, int index, int col, Random random) throws SQLException {
    if (random.nextInt(6) == 0) {
      p.setNull(index, Types.OTHER);
      return;
    }
    switch (col) {
      case 2 -> p.setLong(index, random.nextLong());
      case 3 -> p.setString(index, List.of("", "a", "héllo", "snow ☃", "it's", "two\nlines", "\"q\"").get(
          random.nextInt(7)) + random.nextInt(1000));
      case 4 -> p.setBigDecimal(index, BigDecimal.valueOf(random.nextLong() % 1_000_000_000_000L, 3));
      case 5 -> p.setDouble(index, (random.nextDouble() - 0.5) * Math.pow(10, random.nextInt(30) - 15));
      case 6 -> p.setBoolean(index, random.nextBoolean());
      case 7 -> p.setObject(index, LocalDate.ofEpochDay(random.nextInt(60_000) - 20_000));
      case 8 -> p.setObject(index, OffsetDateTime.ofInstant(Instant.ofEpochSecond(random.nextInt(2_000_000_000),
          random.nextInt(1_000_000) * 1000L), ZoneOffset.UTC));
      case 9 -> p.setObject(index, new UUID(random.nextLong(), random.nextLong()));
      default -> {
        byte[] b = new byte[random.nextInt(20)];
        random.nextBytes(b);
        p.setBytes(index, b);
      }
    }
  }

  private static List<List<String>> postgresRows(Connection c) throws SQLException {
    List<List<String>> out = new ArrayList<>();
    try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT " + COLUMNS + " FROM src ORDER BY id")) {
      while (r.next()) {
        List<String> row = new ArrayList<>();
        row.add(Canonical.value(r.getObject(1, Integer.class)));
        row.add(Canonical.value(r.getObject(2, Long.class)));
        row.add(Canonical.value(r.getString(3)));
        row.add(Canonical.value(r.getBigDecimal(4)));
        row.add(Canonical.value(r.getObject(5, Double.class)));
        row.add(Canonical.value(r.getObject(6, Boolean.class)));
        row.add(Canonical.value(r.getObject(7, LocalDate.class)));
        row.add(Canonical.value(r.getObject(8, OffsetDateTime.class)));
        row.add(Canonical.value(r.getObject(9, UUID.class)));
        row.add(Canonical.value(r.getBytes(10)));
        out.add(row);
      }
    }
    return out;
  }
}
