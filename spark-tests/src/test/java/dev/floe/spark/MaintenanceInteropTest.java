package dev.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.FloeException;
import dev.floe.SnapshotInfo;
import dev.floe.TableInfo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Maintenance across engines (issue 20): a table Floe wrote in many small commits, with position deletes (v2) or
 * deletion vectors (v3), and
 *
 * <ul>
 *   <li>compacted and expired by Floe ({@code VACUUM FULL}, {@code VACUUM} by an expiry policy,
 *       {@code expire_snapshots}, {@code remove_orphan_files}) reads the same in Spark, current and at every
 *       version still kept, and Spark's metadata tables show the compaction;
 *   <li>rewritten by Spark's own procedures ({@code rewrite_data_files} in three forms,
 *       {@code rewrite_position_delete_files}, {@code expire_snapshots}, {@code rewrite_manifests}) reads the same
 *       in Floe, current and by {@code AS OF VERSION}; Floe then writes to it, compacts and expires it, and the
 *       two engines still agree.
 * </ul>
 *
 * The expected rows come from a model of the table kept here; both engines are checked against it after every
 * step.
 */
class MaintenanceInteropTest {

  static Stream<Arguments> layouts() {
    return Stream.of(
        Arguments.of("v2", 2, ""),
        Arguments.of("v3", 3, ""),
        Arguments.of("v2_by_p", 2, " PARTITIONED BY (p)"),
        Arguments.of("v3_bucket", 3, " PARTITIONED BY (bucket(2, k))"));
  }

  /** One table under test: its model and every version checked so far. */
  private static final class Table {
    final SparkFloe sf = SparkFloe.get();
    final String name;
    final String spark;
    final boolean partitioned;
    /** k -> {p, v, n}: the rows as PostgreSQL semantics give them. */
    final TreeMap<Integer, Object[]> model = new TreeMap<>();
    /** version (sequence number) -> the rows at it, and its snapshot id. */
    final Map<Long, List<List<String>>> versions = new LinkedHashMap<>();
    final Map<Long, Long> snapshotIds = new LinkedHashMap<>();

    Table(String name, int formatVersion, String partitioning) {
      this.name = name;
      this.spark = "floe.public." + name;
      this.partitioned = !partitioning.isEmpty();
      sf.floeExec("CREATE TABLE " + name + " (k integer NOT NULL, p text, v text, n bigint)" + partitioning
          + " WITH (format_version = " + formatVersion + ")");
    }

    List<List<String>> expected() {
      List<List<String>> out = new ArrayList<>();
      model.forEach((k, r) -> out.add(List.of(Canonical.value(k), Canonical.value(r[0]), Canonical.value(r[1]),
          Canonical.value(r[2]))));
      return out;
    }

    /** A Floe INSERT of keys {@code from} to {@code to - 1}, one commit (one data file per partition). */
    void insert(int from, int to) {
      List<String> values = new ArrayList<>();
      for (int k = from; k < to; k++) {
        values.add("(" + k + ", 'p" + k % 3 + "', 'v" + k + "', " + k * 10L + ")");
        model.put(k, new Object[] {"p" + k % 3, "v" + k, k * 10L});
      }
      floe("INSERT INTO " + name + " VALUES " + String.join(", ", values), m -> { });
    }

    /** A Floe statement ({@code %t} is the table) and what it does to the model; then both engines are checked. */
    void floe(String sql, Consumer<TreeMap<Integer, Object[]>> change) {
      String statement = sql.replace("%t", name);
      sf.floeExec(statement);
      change.accept(model);
      check("Floe's " + statement);
    }

    /** Floe and Spark both read the model's rows; the current version is recorded. */
    void check(String after) {
      List<List<String>> expected = expected();
      Canonical.assertSame("Floe after " + after, expected, sf.floeRows("SELECT * FROM " + name + " ORDER BY k"));
      Canonical.assertSame("Spark after " + after, expected,
          sf.sparkRows("SELECT * FROM " + spark + " ORDER BY k"));
      TableInfo info = sf.floe.table(name);
      long version = info.currentVersion().orElseThrow();
      versions.put(version, expected);
      snapshotIds.put(version, SparkMutationsReadByFloeTest.currentSnapshot(sf, name));
    }

    /**
     * Runs a Spark procedure ({@code %t} is the table, named with its catalog: a bare {@code public.t} makes
     * Iceberg first look for a catalog {@code public} and log that it found none); returns the first output
     * column of its one row (a count of what it did).
     */
    long call(String procedure) {
      List<List<String>> out = sf.sparkRows("CALL floe.system." + procedure.replace("%t", spark));
      assertThat(out).as(procedure).hasSize(1);
      return number(out.get(0).get(0));
    }

    long sparkCount(String sql) {
      return number(sf.sparkRows(sql.replace("%s", spark)).get(0).get(0));
    }

    long dataFiles() {
      return sparkCount("SELECT count(*) FROM %s.data_files");
    }

    long deleteFiles() {
      return sparkCount("SELECT count(*) FROM %s.delete_files");
    }

    /** Partitions holding data files (Spark's view). */
    long partitionsWithData() {
      return partitioned ? sparkCount("SELECT count(DISTINCT partition) FROM %s.data_files") : 1;
    }

    /** The versions the table still has, as Floe and as Spark list them (they must agree). */
    Set<Long> keptSnapshots() {
      Set<Long> floe = new TreeSet<>();
      for (SnapshotInfo s : sf.floe.table(name).snapshots()) {
        floe.add(s.snapshotId());
      }
      Set<Long> spark = new TreeSet<>();
      for (List<String> r : sf.sparkRows("SELECT snapshot_id FROM " + this.spark + ".snapshots")) {
        spark.add(number(r.get(0)));
      }
      assertThat(spark).as("snapshots Spark lists (expected: Floe's)").isEqualTo(floe);
      return floe;
    }

    /**
     * Every recorded version still kept reads its rows by time travel in both engines (Floe by version number,
     * Spark by snapshot id); every other one is refused by both.
     */
    void timeTravel(String after) {
      Set<Long> kept = keptSnapshots();
      for (Map.Entry<Long, List<List<String>>> v : versions.entrySet()) {
        long version = v.getKey();
        long snapshot = snapshotIds.get(version);
        if (kept.contains(snapshot)) {
          Canonical.assertSame("Floe AS OF VERSION " + version + " after " + after, v.getValue(),
              sf.floeRows("SELECT * FROM " + name + " AS OF VERSION " + version + " ORDER BY k"));
          Canonical.assertSame("Spark VERSION AS OF " + snapshot + " (version " + version + ") after " + after,
              v.getValue(), sf.sparkRows("SELECT * FROM " + spark + " VERSION AS OF " + snapshot + " ORDER BY k"));
        } else {
          assertThatThrownBy(() -> sf.floeRows("SELECT * FROM " + name + " AS OF VERSION " + version))
              .as("Floe AS OF VERSION %d, expired, after %s", version, after)
              .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo("22023"));
          assertThatThrownBy(() -> sf.sparkRows("SELECT * FROM " + spark + " VERSION AS OF " + snapshot))
              .as("Spark VERSION AS OF %d (version %d), expired, after %s", snapshot, version, after)
              .hasMessageContaining(String.valueOf(snapshot));
        }
      }
    }

    Path location() {
      return path(sf.floe.table(name).location());
    }

    /**
     * The table's data directory holds exactly the data and delete files Spark says some kept version references:
     * what expiry took is gone, and so is every orphan.
     */
    void dataDirectoryIsExactlyReferenced() {
      Set<Path> referenced = new HashSet<>();
      for (String meta : List.of("all_data_files", "all_delete_files")) {
        for (List<String> r : sf.sparkRows("SELECT DISTINCT file_path FROM " + spark + "." + meta)) {
          referenced.add(path(r.get(0).substring("text:".length())));
        }
      }
      Set<Path> present = new HashSet<>();
      try (Stream<Path> files = Files.walk(location().resolve("data"))) {
        files.filter(Files::isRegularFile).forEach(p -> present.add(p.toAbsolutePath().normalize()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      assertThat(present).as("files in " + location().resolve("data")).isEqualTo(referenced);
    }
  }

  private static long number(String canonical) {
    return Long.parseLong(canonical.substring(canonical.indexOf(':') + 1));
  }

  private static Path path(String location) {
    Path p = location.startsWith("file:") ? Path.of(URI.create(location)) : Path.of(location);
    return p.toAbsolutePath().normalize();
  }

  /** Twelve small INSERTs, then UPDATEs and DELETEs: deletes in most files, one file entirely deleted, rows moved. */
  private static void smallCommits(Table t) {
    for (int i = 0; i < 12; i++) {
      t.insert(i * 5, i * 5 + 5);
    }
    t.floe("UPDATE %t SET v = v || '-u', n = n + 1 WHERE k % 4 = 1", m -> m.forEach((k, r) -> {
      if (k % 4 == 1) {
        r[1] = r[1] + "-u";
        r[2] = (Long) r[2] + 1;
      }
    }));
    t.floe("DELETE FROM %t WHERE k % 7 = 3", m -> m.keySet().removeIf(k -> k % 7 == 3));
    t.floe("DELETE FROM %t WHERE k BETWEEN 20 AND 24", m -> m.keySet().removeIf(k -> k >= 20 && k <= 24));
    t.floe("UPDATE %t SET p = 'p9', v = v || '-m' WHERE k IN (2, 5, 31)", m -> m.forEach((k, r) -> {
      if (k == 2 || k == 5 || k == 31) {
        r[0] = "p9";
        r[1] = r[1] + "-m";
      }
    }));
    assertThat(t.deleteFiles()).as("delete files before maintenance").isPositive();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void sparkReadsWhatFloeCompactedAndExpired(String layout, int formatVersion, String partitioning)
      throws IOException {
    Table t = new Table("mi_floe_" + layout, formatVersion, partitioning);
    smallCommits(t);
    long filesBefore = t.dataFiles();
    assertThat(filesBefore).isGreaterThan(t.partitionsWithData());

    // Compaction: every partition's files into one, the deletes applied; expiry by the default age (5 days)
    // keeps every version (and so does the size bound, let loose: a table this small keeps its newest 16).
    t.sf.floeExec("ALTER TABLE " + t.name + " SET ('floe.history.max-disk-ratio' = '1000000')");
    t.sf.floeExec("VACUUM FULL " + t.name);
    t.check("VACUUM FULL");
    assertThat(t.dataFiles()).as("data files Spark lists after VACUUM FULL (before: " + filesBefore + ")")
        .isEqualTo(t.partitionsWithData());
    assertThat(t.deleteFiles()).as("delete files Spark lists after VACUUM FULL").isZero();
    assertThat(t.keptSnapshots()).as("versions kept by VACUUM FULL's default expiry policy")
        .containsAll(t.snapshotIds.values());
    t.timeTravel("VACUUM FULL");

    // Floe writes on the compacted files, then VACUUM expires by the table's policy: versions older than 1 ms,
    // keeping the newest 3.
    t.insert(60, 66);
    t.floe("DELETE FROM %t WHERE k IN (11, 61)", m -> m.keySet().removeIf(k -> k == 11 || k == 61));
    t.sf.floeExec("ALTER TABLE " + t.name + " SET ('history.expire.max-snapshot-age-ms' = '1',"
        + " 'history.expire.min-snapshots-to-keep' = '3')");
    sleep(5);
    t.sf.floeExec("VACUUM " + t.name);
    t.check("VACUUM by policy");
    assertThat(t.keptSnapshots()).hasSize(3);
    t.timeTravel("VACUUM by policy");

    // A crashed write's file, an hour old; then expiry of everything but the current version and orphan removal.
    Path data = t.location().resolve("data");
    Path anyDataFile;
    try (Stream<Path> files = Files.walk(data)) {
      anyDataFile = files.filter(p -> p.getFileName().toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
    Path orphan = data.resolve("00000-0-" + java.util.UUID.randomUUID() + "-00001.parquet");
    Files.copy(anyDataFile, orphan);
    Files.setLastModifiedTime(orphan, FileTime.from(Instant.now().minusSeconds(3600)));
    t.sf.floeExec("ALTER TABLE " + t.name + " EXECUTE expire_snapshots(retention_threshold => '0s')");
    t.check("expire_snapshots('0s')");
    assertThat(t.keptSnapshots()).hasSize(1);
    t.timeTravel("expire_snapshots('0s')");
    t.sf.floeExec("ALTER TABLE " + t.name + " EXECUTE remove_orphan_files(retention_threshold => '0s', dry_run => false)");
    assertThat(orphan).doesNotExist();
    t.check("remove_orphan_files");
    t.dataDirectoryIsExactlyReferenced();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("layouts")
  void floeReadsWhatSparkRewroteAndExpired(String layout, int formatVersion, String partitioning) {
    Table t = new Table("mi_spark_" + layout, formatVersion, partitioning);
    smallCommits(t);
    long filesBefore = t.dataFiles();

    // Compaction of every partition with two files or more, deletes applied as the files are rewritten.
    assertThat(t.call("rewrite_data_files(table => '%t', options => map('min-input-files', '2'))"))
        .as("files rewritten by rewrite_data_files(min-input-files 2)").isPositive();
    t.check("Spark's rewrite_data_files(min-input-files 2)");
    assertThat(t.dataFiles()).as("data files after rewrite_data_files").isLessThan(filesBefore);

    // Floe's deletes in the files Spark wrote, then a rewrite of every file with a delete file.
    t.floe("DELETE FROM %t WHERE k % 5 = 0", m -> m.keySet().removeIf(k -> k % 5 == 0));
    t.floe("UPDATE %t SET n = -n WHERE k % 6 = 2", m -> m.forEach((k, r) -> {
      if (k % 6 == 2) {
        r[2] = -(Long) r[2];
      }
    }));
    assertThat(t.call("rewrite_data_files(table => '%t', options => map('delete-file-threshold', '1'))"))
        .as("files rewritten by rewrite_data_files(delete-file-threshold 1)").isPositive();
    t.check("Spark's rewrite_data_files(delete-file-threshold 1)");

    if (formatVersion == 2) {
      // Position delete files of Floe's (one data file each), merged by Spark (several data files each).
      t.floe("DELETE FROM %t WHERE k % 9 = 4", m -> m.keySet().removeIf(k -> k % 9 == 4));
      t.floe("DELETE FROM %t WHERE k % 11 = 7", m -> m.keySet().removeIf(k -> k % 11 == 7));
      assertThat(t.call("rewrite_position_delete_files(table => '%t', options => map('rewrite-all', 'true'))"))
          .as("delete files rewritten by rewrite_position_delete_files").isPositive();
      t.check("Spark's rewrite_position_delete_files");
    }

    t.floe("UPDATE %t SET v = v || '-x' WHERE k < 15", m -> m.forEach((k, r) -> {
      if (k < 15) {
        r[1] = r[1] + "-x";
      }
    }));
    t.insert(100, 104);
    assertThat(t.call("rewrite_data_files(table => '%t', options => map('rewrite-all', 'true'))"))
        .as("files rewritten by rewrite_data_files(rewrite-all)").isPositive();
    t.check("Spark's rewrite_data_files(rewrite-all)");
    assertThat(t.dataFiles()).as("data files after rewrite-all").isEqualTo(t.partitionsWithData());

    t.insert(104, 108);
    t.floe("DELETE FROM %t WHERE k IN (1, 104)", m -> m.keySet().removeIf(k -> k == 1 || k == 104));

    // Spark expires the versions committed before the third-to-last one (retain_last 1 keeps the current one
    // whatever the time).
    List<Long> recorded = new ArrayList<>(t.versions.keySet());
    long keepFrom = recorded.get(recorded.size() - 3);
    Instant olderThan = committedAt(t, t.snapshotIds.get(keepFrom));
    assertThat(t.call("expire_snapshots(table => '%t', older_than => TIMESTAMP '" + olderThan
        + "', retain_last => 1)")).as("data files deleted by Spark's expire_snapshots").isPositive();
    t.check("Spark's expire_snapshots");
    assertThat(t.keptSnapshots()).as("versions left by Spark's expire_snapshots")
        .hasSizeGreaterThanOrEqualTo(3).hasSizeLessThan(t.versions.size());
    t.timeTravel("Spark's expire_snapshots");

    long manifestsBefore = t.sparkCount("SELECT count(*) FROM %s.manifests");
    assertThat(t.call("rewrite_manifests('%t')")).as("manifests rewritten by rewrite_manifests").isPositive();
    t.check("Spark's rewrite_manifests");
    assertThat(t.sparkCount("SELECT count(*) FROM %s.manifests")).isLessThanOrEqualTo(manifestsBefore);

    // Floe writes on everything Spark rewrote.
    t.floe("UPDATE %t SET n = n + 1000, v = v || '-after' WHERE k % 3 = 0", m -> m.forEach((k, r) -> {
      if (k % 3 == 0) {
        r[1] = r[1] + "-after";
        r[2] = (Long) r[2] + 1000;
      }
    }));
    t.floe("DELETE FROM %t WHERE k % 8 = 6", m -> m.keySet().removeIf(k -> k % 8 == 6));
    t.insert(200, 205);
    t.insert(205, 210);

    // Floe's VACUUM compacts the Spark-rewritten table; every version kept still reads as it did.
    long filesBeforeVacuum = t.dataFiles();
    t.sf.floeExec("VACUUM FULL " + t.name);
    t.check("Floe's VACUUM FULL of the Spark-rewritten table");
    assertThat(t.dataFiles()).as("data files after Floe's VACUUM FULL").isLessThan(filesBeforeVacuum);
    t.timeTravel("Floe's VACUUM FULL");

    t.sf.floeExec("ALTER TABLE " + t.name + " EXECUTE expire_snapshots(retention_threshold => '0s')");
    t.sf.floeExec("ALTER TABLE " + t.name + " EXECUTE remove_orphan_files(retention_threshold => '0s', dry_run => false)");
    t.check("Floe's expire_snapshots and remove_orphan_files");
    assertThat(t.keptSnapshots()).hasSize(1);
    t.timeTravel("Floe's expire_snapshots");
    t.dataDirectoryIsExactlyReferenced();
  }

  private static Instant committedAt(Table t, long snapshotId) {
    for (SnapshotInfo s : t.sf.floe.table(t.name).snapshots()) {
      if (s.snapshotId() == snapshotId) {
        return s.committedAt();
      }
    }
    throw new AssertionError("no snapshot " + snapshotId);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
