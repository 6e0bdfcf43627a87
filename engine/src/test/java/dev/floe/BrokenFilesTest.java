package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Missing or corrupt files give an error naming the file, and leave the database usable. */
class BrokenFilesTest {
  @TempDir
  Path dir;

  private static List<Path> files(Path root, String suffix) throws Exception {
    try (Stream<Path> s = Files.walk(root)) {
      return s.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
    }
  }

  private static long count(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      return r.toList().get(0).getLong(0);
    }
  }

  @Test
  void missingDataFile() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
      db.sql("INSERT INTO t VALUES (1)").close();
      db.sql("CREATE TABLE ok (a int)").close();
      Path data = files(Path.of(db.table("t").location()), ".parquet").get(0);
      Files.delete(data);
      assertThatThrownBy(() -> count(db, "SELECT count(*) FROM t"))
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo(SqlState.IO_ERROR);
            assertThat(e.getMessage()).contains(data.getFileName().toString());
          });
      assertThat(count(db, "SELECT count(*) FROM ok")).isZero();
    }
  }

  @Test
  void corruptDataFile() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
      db.sql("INSERT INTO t VALUES (1)").close();
      Path data = files(Path.of(db.table("t").location()), ".parquet").get(0);
      Files.writeString(data, "not a parquet file at all, but long enough to have a footer");
      assertThatThrownBy(() -> count(db, "SELECT sum(a) FROM t"))
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isIn(SqlState.DATA_CORRUPTED, SqlState.IO_ERROR);
            assertThat(e.getMessage()).contains(data.getFileName().toString());
          });
    }
  }

  /**
   * Bit rot anywhere in any file Floe wrote — data pages, footers, position deletes, deletion vectors,
   * manifests, manifest lists, metadata — is found by {@link Database#verify()}, and a query in a new
   * process fails with XX001 naming the file: never a different answer.
   */
  @ParameterizedTest
  @ValueSource(ints = {2, 3})
  void bitRotIsAnErrorNamingTheFileNeverAWrongAnswer(int formatVersion) throws Exception {
    String expected;
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint, v text) WITH (format_version = " + formatVersion + ")").close();
      for (int k = 0; k < 3; k++) {
        db.sql("INSERT INTO t SELECT i, md5(i::text) FROM range(" + k * 5000 + ", " + (k + 1) * 5000 + ") r(i)").close();
      }
      db.sql("DELETE FROM t WHERE id % 7 = 0").close();
      db.sql("UPDATE t SET v = 'x' WHERE id % 11 = 0").close();
      expected = answer(db);
    }
    List<Path> all = new java.util.ArrayList<>();
    for (String suffix : List.of(".parquet", ".puffin", ".avro", ".metadata.json")) {
      all.addAll(files(dir.resolve("public").resolve("t"), suffix));
    }
    assertThat(all.stream().map(p -> p.getFileName().toString())).anyMatch(n -> n.endsWith(".parquet"))
        .anyMatch(n -> n.endsWith(".avro"));
    java.util.Random random = new java.util.Random(formatVersion);
    try (Database db = Floe.open(dir)) {
      assertThat(db.verify()).allMatch(Verification::ok);
      for (int trial = 0; trial < 60; trial++) {
        Path file = all.get(random.nextInt(all.size()));
        byte[] original = Files.readAllBytes(file);
        byte[] damaged = original.clone();
        int at = random.nextInt(damaged.length);
        int span = trial % 3 == 0 ? Math.min(16, damaged.length - at) : 1; // one flipped byte, or 16 of garbage
        for (int k = 0; k < span; k++) {
          damaged[at + k] ^= (byte) (1 + random.nextInt(255));
        }
        Files.write(file, damaged);
        try {
          List<Verification> found = db.verify();
          assertThat(found).as("%s damaged at %d", file, at).anySatisfy(v -> assertThat(v.damaged())
              .anySatisfy(d -> assertThat(d.file()).endsWith(file.getFileName().toString())));
          if (trial % 6 == 0) {
            // a process that has not read the file yet: the query fails naming it, or is right
            try (Database fresh = Floe.openReadOnly(dir)) {
              String got;
              try {
                got = answer(fresh);
              } catch (FloeException e) {
                assertThat(e.sqlState()).as(e.getMessage()).isIn(SqlState.DATA_CORRUPTED, SqlState.IO_ERROR);
                assertThat(e.getMessage()).contains(file.getFileName().toString());
                continue;
              }
              assertThat(got).as("%s damaged at %d, read without an error", file, at).isEqualTo(expected);
            }
          }
        } finally {
          Files.write(file, original);
        }
      }
      assertThat(db.verify()).allMatch(Verification::ok);
    }
  }

  /** A commit never carries a damaged manifest forward: the write fails naming it, the table unchanged. */
  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void aWriteNeverCommitsOnTopOfADamagedManifest(int formatVersion) throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (id bigint) WITH (format_version = " + formatVersion + ")").close();
      for (int k = 0; k < 3; k++) {
        db.sql("INSERT INTO t VALUES (" + k + ")").close();
      }
    }
    Path manifest = files(dir.resolve("public").resolve("t"), ".avro").stream()
        .filter(p -> !p.getFileName().toString().startsWith("snap-")).findFirst().orElseThrow();
    byte[] bytes = Files.readAllBytes(manifest);
    bytes[bytes.length / 2] ^= 0x40;
    Files.write(manifest, bytes);
    try (Database db = Floe.open(dir)) {
      long snapshots = db.table("t").snapshots().size();
      for (String sql : List.of("INSERT INTO t VALUES (9)", "INSERT INTO t SELECT 10")) {
        assertThatThrownBy(() -> db.sql(sql).close()).as(sql).isInstanceOfSatisfying(FloeException.class, e -> {
          assertThat(e.sqlState()).isEqualTo(SqlState.DATA_CORRUPTED);
          assertThat(e.getMessage()).contains(manifest.getFileName().toString());
        });
      }
      try (Session s = db.connect()) {
        s.begin();
        s.sql("INSERT INTO t VALUES (11)").close();
        assertThatThrownBy(s::commit).isInstanceOfSatisfying(FloeException.class,
            e -> assertThat(e.getMessage()).contains(manifest.getFileName().toString()));
      }
      assertThat(db.table("t").snapshots()).hasSize((int) snapshots);
    }
  }

  /**
   * One table's current metadata file cut short: the other tables' introspection goes on (the broken one
   * listed, saying why), the broken one can be renamed, dropped, or pointed back to its previous version.
   */
  @Test
  void aTableWithDamagedMetadataHidesNoOtherAndCanBeRepairedOrDropped() throws Exception {
    try (Database db = Floe.open(dir)) {
      for (String t : List.of("broken", "fine", "gone")) {
        db.sql("CREATE TABLE " + t + " (a int, b text)").close();
        db.sql("INSERT INTO " + t + " VALUES (1, 'one')").close();
        db.sql("INSERT INTO " + t + " VALUES (2, 'two')").close();
      }
    }
    for (String t : List.of("broken", "gone")) {
      Path current = files(dir.resolve("public").resolve(t), ".metadata.json").stream()
          .max(java.util.Comparator.comparing(p -> p.getFileName().toString())).orElseThrow();
      Files.write(current, java.util.Arrays.copyOf(Files.readAllBytes(current), 100));
    }
    try (Database db = Floe.open(dir)) {
      assertThatThrownBy(() -> count(db, "SELECT count(*) FROM broken")).isInstanceOfSatisfying(FloeException.class,
          e -> assertThat(e.sqlState()).isEqualTo(SqlState.DATA_CORRUPTED));
      assertThat(rows(db, "SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 2200 ORDER BY 1"))
          .containsExactly("broken", "fine", "gone");
      assertThat(rows(db, "SELECT column_name FROM information_schema.columns WHERE table_name = 'fine' ORDER BY 1"))
          .containsExactly("a", "b");
      assertThat(rows(db, "SELECT obj_description('broken'::regclass, 'pg_class')").get(0)).startsWith("cannot be read");
      assertThat(count(db, "SELECT count(*) FROM fine")).isEqualTo(2);

      db.sql("ALTER TABLE gone RENAME TO gone2").close();
      db.sql("DROP TABLE gone2 PURGE").close();
      assertThat(rows(db, "SELECT relname FROM pg_class WHERE relname LIKE 'gone%'")).isEmpty();

      TableRepair report = db.repairTable("broken", java.util.Optional.empty());
      assertThat(report.problem()).isPresent();
      assertThat(report.candidates().get(0).readable()).isFalse();
      TableRepair done = db.repairTable("broken", java.util.Optional.of("previous"));
      assertThat(done.pointedTo()).isPresent();
      assertThat(rows(db, "SELECT a FROM broken ORDER BY a")).containsExactly("1"); // as of the previous version
      db.sql("INSERT INTO broken VALUES (3, 'three')").close();
      assertThat(rows(db, "SELECT a FROM broken ORDER BY a")).containsExactly("1", "3");
      assertThat(db.verify()).allMatch(Verification::ok);
    }
  }

  private static List<String> rows(Database db, String sql) {
    try (Result r = db.sql(sql)) {
      List<String> out = new java.util.ArrayList<>();
      for (Row row : r) {
        out.add(String.valueOf(row.get(0)));
      }
      return out;
    }
  }

  private static String answer(Database db) {
    try (Result r = db.sql("SELECT count(*), sum(id), count(DISTINCT v), max(v) FROM t")) {
      Row row = r.iterator().next();
      return row.get(0) + "|" + row.get(1) + "|" + row.get(2) + "|" + row.get(3);
    }
  }

  @Test
  void aDamagedFooterOfAFileAnotherEngineWroteIsNamed() throws Exception {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
    }
    // a file written by Iceberg's own writer, as Spark would: Floe has no checksum for it
    try (org.apache.iceberg.jdbc.JdbcCatalog catalog = dev.floe.testing.IcebergClients.jdbcCatalog(dir)) {
      org.apache.iceberg.Table t = catalog.loadTable(org.apache.iceberg.catalog.TableIdentifier.of("public", "t"));
      org.apache.iceberg.data.GenericRecord rec = org.apache.iceberg.data.GenericRecord.create(t.schema());
      rec.setField("a", 7);
      org.apache.iceberg.DataFile f = dev.floe.testing.IcebergFiles.writeData(t, null, List.of(rec));
      t.newAppend().appendFile(f).commit();
    }
    Path data = files(dir.resolve("public").resolve("t"), ".parquet").get(0);
    byte[] bytes = Files.readAllBytes(data);
    for (int k = bytes.length - 40; k < bytes.length - 8; k++) {
      bytes[k] = (byte) 0x5a; // the footer's end, before its length and magic
    }
    Files.write(data, bytes);
    try (Database db = Floe.open(dir)) {
      assertThatThrownBy(() -> count(db, "SELECT sum(a) FROM t")).isInstanceOfSatisfying(FloeException.class, e -> {
        assertThat(e.sqlState()).isEqualTo(SqlState.DATA_CORRUPTED);
        assertThat(e.getMessage()).contains(data.getFileName().toString());
      });
      assertThat(db.verify()).anySatisfy(v -> assertThat(v.withoutChecksum()).isPositive());
    }
  }

  @Test
  void corruptOrMissingMetadata() throws Exception {
    Path location;
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int)").close();
      db.sql("INSERT INTO t VALUES (1)").close();
      location = Path.of(db.table("t").location());
    }
    Path manifestList = files(location, ".avro").stream()
        .filter(p -> p.getFileName().toString().startsWith("snap-")).findFirst().orElseThrow();
    Files.delete(manifestList);
    try (Database db = Floe.open(dir)) {
      assertThatThrownBy(() -> count(db, "SELECT count(*) FROM t"))
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo(SqlState.IO_ERROR);
            assertThat(e.getMessage()).contains(manifestList.getFileName().toString());
          });
    }
    // A metadata file garbled on disk: the next process cannot load the table, and says which file.
    Path metadata = files(dir, ".metadata.json").stream().max(java.util.Comparator.naturalOrder()).orElseThrow();
    Files.writeString(metadata, "{ this is not json");
    try (Database db = Floe.open(dir)) {
      assertThatThrownBy(() -> count(db, "SELECT count(*) FROM t"))
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo(SqlState.DATA_CORRUPTED);
            assertThat(e.getMessage()).contains(metadata.getFileName().toString());
          });
    }
  }
}
