package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.catalog.LocalFileIO;
import dev.floe.testing.IcebergClients;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StatisticsFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child JVM runs a stream of INSERT, UPDATE and DELETE statements on each of three tables (merge-on-read
 * v2; partitioned; format version 3, with deletion vectors), one thread per table, while two other threads
 * run maintenance through SQL on a table picked at random — {@code VACUUM FULL} (compaction, expiry and
 * orphan removal by the table's policies, all set to zero), {@code expire_snapshots('0s')} and
 * {@code remove_orphan_files('0s', dry_run => false)} — half the time beside writes in flight, half the
 * time alone (every other statement held back, so that expiry has versions no running statement holds).
 * The child is killed with SIGKILL shortly after a maintenance statement starts (within that kind's usual
 * duration so far), again and again; the tables persist from one child to the next, which continues each
 * stream. After each kill, before anything opens the warehouse again, Iceberg's own
 * catalog client finds every file the metadata names (every snapshot's manifest list, manifests, data and
 * delete files, the metadata log) on disk, and Iceberg's generic reader reads exactly each table's
 * acknowledged statements (plus possibly the one in flight); the next child then verifies every file's
 * checksum and reads the same rows through Floe. At the end VACUUM and {@code remove_orphan_files('0s')}
 * leave nothing in the tables' directories that their metadata does not name: the next run cleans what
 * the crashes left.
 */
class MaintenanceCrashTest {
  /** The tables, and what they are created with. */
  private static final Map<String, String> TABLES = new java.util.LinkedHashMap<>();

  static {
    String properties = "'history.expire.max-snapshot-age-ms' = '0', 'floe.orphan-retention-ms' = '0', "
        + "'write.target-file-size-bytes' = '65536'";
    TABLES.put("t", " WITH (" + properties + ")");
    TABLES.put("p", " PARTITIONED BY (bucket(4, id)) WITH (" + properties + ")");
    TABLES.put("dv", " WITH (" + properties + ", format_version = 3)");
  }

  @TempDir
  Path dir;

  /** Where the killed children unpack DuckDB's native library (see CrashTest). */
  @TempDir
  Path childTmp;

  /** The id statement {@code j} picks among those inserted so far. */
  static long pick(long j) {
    long h = j * 0x9E3779B97F4A7C15L;
    return Math.floorMod(h ^ (h >>> 29), 5 * (j / 4 + 1));
  }

  /** Statement {@code j} of a table's stream. */
  static String statement(String table, long j) {
    long k = j / 4;
    return switch ((int) (j % 4)) {
      case 0 -> {
        StringBuilder b = new StringBuilder("INSERT INTO " + table + " VALUES ");
        for (int i = 0; i < 5; i++) {
          b.append(i == 0 ? "" : ", ").append('(').append(5 * k + i).append(", 0)");
        }
        yield b.toString();
      }
      case 1 -> "UPDATE " + table + " SET v = v + 1 WHERE id = " + pick(j);
      case 2 -> "DELETE FROM " + table + " WHERE id = " + pick(j);
      default -> "UPDATE " + table + " SET v = v + 100 WHERE id BETWEEN " + pick(j) + " AND " + (pick(j) + 40);
    };
  }

  /** Applies statement {@code j} to {@code rows}. */
  static void apply(Map<Long, Long> rows, long j) {
    long k = j / 4;
    switch ((int) (j % 4)) {
      case 0 -> {
        for (int i = 0; i < 5; i++) {
          rows.put(5 * k + i, 0L);
        }
      }
      case 1 -> rows.computeIfPresent(pick(j), (id, v) -> v + 1);
      case 2 -> rows.remove(pick(j));
      default -> {
        for (long id = pick(j); id <= pick(j) + 40; id++) {
          rows.computeIfPresent(id, (i, v) -> v + 100);
        }
      }
    }
  }

  /**
   * The child. args: the warehouse, then each table's first statement. Prints {@code VERIFIED} (or
   * {@code DAMAGED}) for each table, {@code R table id v} for each row as the last child left it,
   * {@code READY}, then {@code ACK table j} as statements are acknowledged and {@code M maintainer kind
   * [alone] table} / {@code M-END maintainer kind ms} around each maintenance statement, with its notice
   * ({@code N}) in between.
   */
  public static void main(String[] args) throws Exception {
    Path warehouse = Path.of(args[0]);
    List<String> tables = List.copyOf(TABLES.keySet());
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    try (Database db = Floe.open(warehouse)) {
      for (String table : tables) {
        db.sql("CREATE TABLE IF NOT EXISTS " + table + " (id bigint, v bigint)" + TABLES.get(table)).close();
      }
      for (Verification v : db.verify()) {
        for (Verification.Damage d : v.damaged()) {
          out.println("DAMAGED " + v.table() + " " + d.file() + ": " + d.problem());
        }
        out.println("VERIFIED " + v.table() + " " + v.files() + " " + v.withoutChecksum());
      }
      for (String table : tables) {
        try (Result r = db.sql("SELECT id, v FROM " + table)) {
          for (Row row : r) {
            out.println("R " + table + " " + row.getLong(0) + " " + row.getLong(1));
          }
        }
      }
      out.println("READY");
      out.flush();
      // every statement takes the read side of the gate; maintenance takes the write side half the time, to
      // run alone: a running statement holds the versions of every table that were current up to a minute
      // before it started (docs/maintenance.md, reader holds), so only then does expiry have versions to expire
      ReentrantReadWriteLock gate = new ReentrantReadWriteLock(true);
      List<Thread> threads = new ArrayList<>();
      for (int n = 0; n < tables.size(); n++) {
        String table = tables.get(n);
        long first = Long.parseLong(args[1 + n]);
        threads.add(new Thread(() -> {
          try (Session s = db.connect()) {
            for (long j = first; ; j++) {
              gate.readLock().lock();
              try {
                while (true) {
                  try {
                    s.sql(statement(table, j)).close();
                    break;
                  } catch (FloeException e) {
                    if (!SqlState.SERIALIZATION_FAILURE.equals(e.sqlState())) {
                      throw e;
                    }
                    // a compaction committed a rewrite of a file this statement deletes from: run it again
                    print(out, "RETRY " + table + " " + j + " " + e.getMessage().replace('\n', ' '));
                  }
                }
              } finally {
                gate.readLock().unlock();
              }
              print(out, "ACK " + table + " " + j);
            }
          } catch (Throwable e) {
            failed(out, e);
          }
        }));
      }
      for (int m = 0; m < 2; m++) {
        int maintainer = m;
        threads.add(new Thread(() -> {
          try (Session s = db.connect()) {
            s.onNotice(n -> print(out, "N " + n.message().replace('\n', ' ')));
            ThreadLocalRandom random = ThreadLocalRandom.current();
            while (true) {
              Thread.sleep(random.nextInt(50));
              String table = tables.get(random.nextInt(tables.size()));
              String kind = List.of("vacuum", "expire", "orphans").get(random.nextInt(3));
              String sql = switch (kind) {
                case "vacuum" -> "VACUUM FULL VERBOSE " + table;
                case "expire" -> "ALTER TABLE " + table + " EXECUTE expire_snapshots(retention_threshold => '0s')";
                default -> "ALTER TABLE " + table + " EXECUTE remove_orphan_files(retention_threshold => '0s', "
                    + "dry_run => false)";
              };
              java.util.concurrent.locks.Lock lock = random.nextBoolean() ? gate.writeLock() : gate.readLock();
              lock.lock();
              try {
                print(out, "M " + maintainer + " " + kind + (lock == gate.writeLock() ? " alone" : "") + " " + table);
                long start = System.nanoTime();
                s.sql(sql).close();
                print(out, "M-END " + maintainer + " " + kind + " "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
              } finally {
                lock.unlock();
              }
            }
          } catch (Throwable e) {
            failed(out, e);
          }
        }));
      }
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join();
      }
    }
  }

  private static void print(PrintStream out, String line) {
    synchronized (out) {
      out.println(line);
      out.flush();
    }
  }

  private static void failed(PrintStream out, Throwable e) {
    synchronized (out) {
      out.println("CHILD-FAILED " + e.toString().replace('\n', ' '));
      e.printStackTrace(out);
      out.flush();
    }
  }

  /** One table's stream as the parent knows it. */
  private static final class TableStream {
    /** The table after statements 0 .. next-1. */
    Map<Long, Long> model = new TreeMap<>();
    long next;
    long acked;
  }

  @Test
  void acknowledgedRowsAndReferencedFilesSurviveKillsDuringMaintenance() throws Exception {
    int rounds = Integer.getInteger("floe.maintenanceCrash.rounds", 50);
    Random random = new Random(20);
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Map<String, TableStream> streams = new java.util.LinkedHashMap<>();
    TABLES.keySet().forEach(t -> streams.put(t, new TableStream()));
    long acknowledged = 0;
    long retries = 0;
    long inFlightCommitted = 0;
    long left = 0; // files nothing names, after each kill (summed over the kills)
    Map<String, Integer> killedIn = new TreeMap<>();
    Map<String, long[]> durations = new TreeMap<>();
    Map<String, Long> work = new TreeMap<>();
    ScheduledExecutorService killer = Executors.newSingleThreadScheduledExecutor();
    long started = System.nanoTime();
    try {
      for (int round = 0; round < rounds; round++) {
        List<String> command = new ArrayList<>(List.of(javaBin, "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.io.tmpdir=" + childTmp, "-cp",
            System.getProperty("java.class.path"), MaintenanceCrashTest.class.getName(), dir.toString()));
        streams.values().forEach(s -> command.add(Long.toString(s.next)));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        AtomicBoolean hung = new AtomicBoolean();
        ScheduledFuture<?> watchdog = killer.schedule(() -> {
          hung.set(true);
          p.toHandle().destroyForcibly();
        }, 90, TimeUnit.SECONDS);
        Map<String, Map<Long, Long>> found = new TreeMap<>();
        TABLES.keySet().forEach(t -> found.put(t, new TreeMap<>()));
        streams.values().forEach(s -> s.acked = s.next - 1);
        List<String> output = new ArrayList<>();
        boolean ready = false;
        // a new JVM's first statements are slow: let a few be acknowledged, then kill shortly after a
        // maintenance statement of this round's kind starts (VACUUM, which compacts, expires and removes
        // orphans, every other round), within its usual duration so far, so that most kills land inside it
        int warm = 1 + random.nextInt(3);
        String target = List.of("vacuum", "expire", "vacuum", "orphans").get(round % 4);
        int ackedThisRound = 0;
        String[] running = new String[2]; // what each maintainer runs (as far as the parent has read)
        AtomicBoolean killScheduled = new AtomicBoolean();
        AtomicBoolean killed = new AtomicBoolean();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
          String line;
          while ((line = out.readLine()) != null) {
            if (output.size() < 200 && !line.startsWith("R ") && !line.startsWith("ACK ")) {
              output.add(line);
            }
            if (line.startsWith("CHILD-FAILED") || line.startsWith("DAMAGED")) {
              p.toHandle().destroyForcibly();
              StringBuilder rest = new StringBuilder(line);
              for (int n = 0; n < 60 && (line = out.readLine()) != null; n++) {
                rest.append('\n').append(line);
              }
              throw new AssertionError("round " + round + ": " + rest);
            }
            if (!ready) {
              if (line.startsWith("R ")) {
                String[] f = line.split(" ");
                found.get(f[1]).put(Long.parseLong(f[2]), Long.parseLong(f[3]));
              } else if (line.startsWith("VERIFIED ")) {
                // every file Floe wrote has its checksum recorded, so verify compared each one's bytes
                assertThat(line.split(" ")[3]).as("round %d: files without a checksum: %s", round, line).isEqualTo("0");
              } else if (line.equals("READY")) {
                ready = true;
                for (var e : streams.entrySet()) {
                  assertThat(found.get(e.getKey())).as("round %d: table %s as Floe reads it after the kill", round,
                      e.getKey()).isEqualTo(e.getValue().model);
                }
              }
              continue;
            }
            if (line.startsWith("ACK ")) {
              String[] f = line.split(" ");
              TableStream s = streams.get(f[1]);
              long j = Long.parseLong(f[2]);
              assertThat(j).as("table %s acknowledged in order", f[1]).isEqualTo(s.acked + 1);
              s.acked = j;
              apply(s.model, j);
              acknowledged++;
              ackedThisRound++;
            } else if (line.startsWith("RETRY ")) {
              retries++;
            } else if (line.startsWith("N ")) {
              tally(line, work);
            } else if (line.startsWith("M-END ")) {
              String[] f = line.split(" ");
              long[] d = durations.computeIfAbsent(f[2], k -> new long[2]);
              d[0]++;
              d[1] += Long.parseLong(f[3]);
              synchronized (running) {
                running[Integer.parseInt(f[1])] = null;
              }
            } else if (line.startsWith("M ")) {
              String[] f = line.split(" ");
              synchronized (running) {
                running[Integer.parseInt(f[1])] = f[2] + (f[3].equals("alone") ? " alone" : "");
              }
              if (ackedThisRound >= warm && f[2].equals(target) && killScheduled.compareAndSet(false, true)) {
                long[] d = durations.get(target);
                long usual = d == null ? 100 : Math.max(5, d[1] / d[0]);
                killer.schedule(() -> {
                  synchronized (running) {
                    // where the kill landed, as far as the parent has read (the child may be a line ahead)
                    String in = Stream.of(running).filter(java.util.Objects::nonNull).sorted()
                        .collect(java.util.stream.Collectors.joining(" + "));
                    killedIn.merge(in.isEmpty() ? "writes only" : in, 1, Integer::sum);
                    killed.set(true);
                  }
                  p.toHandle().destroyForcibly(); // SIGKILL; what the child printed before is still read
                }, random.nextLong(usual * 5 / 4 + 1), TimeUnit.MILLISECONDS);
              }
            }
          }
        }
        watchdog.cancel(false);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(hung.get()).as("round %d: the child hung: %s", round, output).isFalse();
        assertThat(ready).as("round %d: the child reached READY: %s", round, output).isTrue();
        assertThat(killed.get()).as("round %d: the child was killed, not ended: %s", round, output).isTrue();
        for (var e : streams.entrySet()) {
          TableStream s = e.getValue();
          // the statement after the last acknowledged one may or may not have committed
          Found after = checkWithIceberg(dir, e.getKey(), round);
          left += after.unreferenced();
          Map<Long, Long> read = after.rows();
          if (read.equals(s.model)) {
            s.next = s.acked + 1;
          } else {
            Map<Long, Long> withInFlight = new TreeMap<>(s.model);
            apply(withInFlight, s.acked + 1);
            assertThat(read).as("round %d: Iceberg's reader of table %s after the kill (last acknowledged "
                + "statement %d)", round, e.getKey(), s.acked).isEqualTo(withInFlight);
            s.model = withInFlight;
            s.next = s.acked + 2;
            inFlightCommitted++;
          }
        }
      }
    } finally {
      killer.shutdownNow();
    }
    System.out.printf("MaintenanceCrashTest: %d kills in %d s, %d statements acknowledged (%s), %d committed but "
        + "not acknowledged, %d failed with 40001 (must be none); kills landed in %s; files nothing named "
        + "after a kill, summed over the kills: %d; maintenance runs (count, total ms): %s; their work: %s%n", rounds,
        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started), acknowledged, streamsText(streams),
        inFlightCommitted, retries, killedIn, left, durationsText(durations), work);
    assertThat(acknowledged).as("statements were acknowledged").isGreaterThan(rounds);
    assertThat(retries).as("writes that failed because of a compaction (writers win)").isZero();
    assertThat(work.getOrDefault("snapshots expired", 0L)).isPositive();
    assertThat(work.getOrDefault("files compacted", 0L)).isPositive();

    // the next run cleans what the crashes left
    try (Database db = Floe.open(dir)) {
      assertThat(db.verify()).allSatisfy(v -> assertThat(v.damaged()).as(v.table()).isEmpty());
      db.sql("VACUUM FULL").close();
      for (var e : streams.entrySet()) {
        db.sql("ALTER TABLE " + e.getKey() + " EXECUTE remove_orphan_files(retention_threshold => '0s', "
            + "dry_run => false)").close();
        Map<Long, Long> rows = new TreeMap<>();
        try (Result r = db.sql("SELECT id, v FROM " + e.getKey())) {
          for (Row row : r) {
            rows.put(row.getLong(0), row.getLong(1));
          }
        }
        assertThat(rows).as("table %s", e.getKey()).isEqualTo(e.getValue().model);
      }
    }
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      for (var e : streams.entrySet()) {
        assertThat(checkWithIceberg(dir, e.getKey(), rounds).rows()).as("table %s", e.getKey())
            .isEqualTo(e.getValue().model);
        Table t = catalog.loadTable(TableIdentifier.of("public", e.getKey()));
        // the metadata files every metadata log names, back to the table's first (what orphan removal keeps)
        Set<Path> referenced = referenced(t);
        for (String l : org.apache.iceberg.ReachableFileUtil.metadataFileLocations(t, true)) {
          referenced.add(LocalFileIO.toPath(l).toAbsolutePath().normalize());
        }
        assertThat(unreferenced(t, referenced)).as("files of table %s its metadata does not name, after VACUUM and "
            + "remove_orphan_files", e.getKey()).isEmpty();
      }
    }
  }

  private static final Pattern VACUUMED = Pattern.compile(
      "vacuuming .*: (\\d+) file\\(s\\) compacted into (\\d+)(?: \\(gave way to concurrent writers (\\d+) "
      + "time\\(s\\)\\))?, (\\d+) snapshot\\(s\\) expired with (\\d+) "
      + "file\\(s\\) only they referenced, (\\d+) orphan file\\(s\\) removed");
  private static final Pattern EXPIRED = Pattern.compile(
      "expired (\\d+) snapshot\\(s\\) of table .* and deleted (\\d+) file\\(s\\) only they referenced");
  private static final Pattern ORPHANS = Pattern.compile("deleted (\\d+) orphan file\\(s\\) of table .*");

  /** Adds what a maintenance statement's notice says it did to {@code work}. */
  private static void tally(String line, Map<String, Long> work) {
    String message = line.substring(2);
    Matcher m;
    if ((m = VACUUMED.matcher(message)).matches()) {
      work.merge("files compacted", Long.parseLong(m.group(1)), Long::sum);
      work.merge("files written by compaction", Long.parseLong(m.group(2)), Long::sum);
      if (m.group(3) != null) {
        work.merge("compactions that gave way", Long.parseLong(m.group(3)), Long::sum);
      }
      work.merge("snapshots expired", Long.parseLong(m.group(4)), Long::sum);
      work.merge("files deleted by expiry", Long.parseLong(m.group(5)), Long::sum);
      work.merge("orphans removed", Long.parseLong(m.group(6)), Long::sum);
    } else if ((m = EXPIRED.matcher(message)).matches()) {
      work.merge("snapshots expired", Long.parseLong(m.group(1)), Long::sum);
      work.merge("files deleted by expiry", Long.parseLong(m.group(2)), Long::sum);
    } else if ((m = ORPHANS.matcher(message)).matches()) {
      work.merge("orphans removed", Long.parseLong(m.group(1)), Long::sum);
    } else {
      throw new AssertionError("an unexpected notice: " + message);
    }
  }

  private static String durationsText(Map<String, long[]> durations) {
    StringBuilder b = new StringBuilder();
    durations.forEach((k, d) -> b.append(k).append(' ').append(d[0]).append('/').append(d[1]).append(' '));
    return b.toString().trim();
  }

  private static String streamsText(Map<String, TableStream> streams) {
    StringBuilder b = new StringBuilder();
    streams.forEach((k, s) -> b.append(b.length() == 0 ? "" : ", ").append(k).append(' ').append(s.next)
        .append(" statements, ").append(s.model.size()).append(" rows"));
    return b.toString();
  }

  /** What Iceberg's client found: the rows, and how many files (metadata files aside) nothing names. */
  record Found(Map<Long, Long> rows, int unreferenced) {}

  /**
   * With Iceberg's own catalog client, before Floe opens the warehouse again: every file the metadata
   * names exists, and the generic reader reads the table.
   */
  private static Found checkWithIceberg(Path dir, String table, int round) throws IOException {
    try (JdbcCatalog catalog = IcebergClients.jdbcCatalog(dir)) {
      Table t = catalog.loadTable(TableIdentifier.of("public", table));
      Set<Path> referenced = referenced(t);
      List<Path> missing = referenced.stream().filter(f -> !Files.exists(f)).sorted().toList();
      if (!missing.isEmpty()) {
        // what names them, and what the metadata directory holds: enough to tell which path deleted them
        TableMetadata current = ((HasTableOperations) t).operations().current();
        List<String> metadataFiles;
        try (var files = Files.list(LocalFileIO.toPath(t.location()).resolve("metadata"))) {
          metadataFiles = files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".metadata.json"))
              .sorted().toList();
        }
        throw new AssertionError(String.format("round %d: files the metadata of table %s names are missing: %s;"
            + " current metadata %s, its log %s; metadata files on disk %s", round, table, missing,
            current.metadataFileLocation(), current.previousFiles().stream().map(e -> e.file()).toList(),
            metadataFiles));
      }
      Map<Long, Long> rows = new TreeMap<>();
      try (CloseableIterable<Record> it = IcebergGenerics.read(t).build()) {
        for (Record r : it) {
          assertThat(rows.put((Long) r.getField("id"), (Long) r.getField("v")))
              .as("round %d: id %s of table %s read once", round, r.getField("id"), table).isNull();
        }
      }
      List<Path> unreferenced = unreferenced(t, referenced);
      unreferenced.removeIf(f -> f.getFileName().toString().endsWith(".metadata.json"));
      return new Found(rows, unreferenced.size());
    }
  }

  /** The files in the table's data and metadata directories that are not {@code referenced} (nor the hint). */
  private static List<Path> unreferenced(Table t, Set<Path> referenced) throws IOException {
    Path root = LocalFileIO.toPath(t.location());
    List<Path> unreferenced = new ArrayList<>();
    for (String sub : List.of("data", "metadata")) {
      try (Stream<Path> files = Files.walk(root.resolve(sub))) {
        files.filter(Files::isRegularFile)
            .filter(f -> !f.getFileName().toString().equals("version-hint.text"))
            .filter(f -> !referenced.contains(f.toAbsolutePath().normalize()))
            .forEach(unreferenced::add);
      }
    }
    return unreferenced;
  }

  /**
   * Every file the table's metadata names: the current metadata file and those of its metadata log, and
   * each snapshot's manifest list, manifests, data and delete files, and statistics files.
   */
  private static Set<Path> referenced(Table t) {
    Set<String> locations = new HashSet<>();
    TableMetadata current = ((HasTableOperations) t).operations().current();
    locations.add(current.metadataFileLocation());
    current.previousFiles().forEach(e -> locations.add(e.file()));
    for (StatisticsFile s : t.statisticsFiles()) {
      locations.add(s.path());
    }
    Set<String> manifests = new HashSet<>();
    for (Snapshot s : t.snapshots()) {
      locations.add(s.manifestListLocation());
      for (ManifestFile m : s.allManifests(t.io())) {
        if (!manifests.add(m.path())) {
          continue;
        }
        locations.add(m.path());
        try (ManifestReader<? extends ContentFile<?>> reader = m.content() == ManifestContent.DATA
            ? ManifestFiles.read(m, t.io(), t.specs())
            : ManifestFiles.readDeleteManifest(m, t.io(), t.specs())) {
          for (ContentFile<?> f : reader) {
            locations.add(f.location());
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    Set<Path> paths = new HashSet<>();
    for (String l : locations) {
      paths.add(LocalFileIO.toPath(l).toAbsolutePath().normalize());
    }
    return paths;
  }
}
