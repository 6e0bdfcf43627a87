package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
