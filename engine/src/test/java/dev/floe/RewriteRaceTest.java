package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Predicate;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A block's DELETE or UPDATE that commits after a compaction rewrote the files it deleted from: its rows
 * are found again by value in the rewritten files ({@code write.MovedRows}) and deleted there, and only a
 * row another writer deleted first makes it fail (40001). Checked against a model of the table as a
 * multiset of rows, on a table without a key whose rows repeat, with NULLs, NaN and both zeros (which
 * compare equal in SQL and are different rows), across a column rename (files read by field id).
 */
class RewriteRaceTest {
  @TempDir
  Path dir;

  /** A row of {@code t (a int NOT NULL, b text, c double)}. */
  private record R(int a, String b, Double c) {
    String text() {
      return a + "|" + b + "|" + c; // Double's text tells -0.0, 0.0 and NaN apart
    }
  }

  private static final String[] BS = {"x", "y", null, "é"};
  private static final Double[] CS = {0.0, -0.0, Double.NaN, 1.5, null};

  /** A predicate in SQL (on column b named {@code b}) and in the model. */
  private record Where(String sql, Predicate<R> model) {}

  private static Where where(SplittableRandom rnd, String b) {
    int k = rnd.nextInt(8);
    return switch (rnd.nextInt(4)) {
      case 0 -> new Where("a = " + k, r -> r.a == k);
      case 1 -> {
        String v = BS[rnd.nextInt(BS.length)];
        yield v == null ? new Where(b + " IS NULL AND a % 2 = " + (k % 2), r -> r.b == null && r.a % 2 == k % 2)
            : new Where(b + " = '" + v + "' AND a < " + k, r -> v.equals(r.b) && r.a < k);
      }
      case 2 -> { // one of the two zeros, which compare equal
        double zero = rnd.nextBoolean() ? 0.0 : -0.0;
        yield new Where("CAST(c AS VARCHAR) = '" + zero + "'", r -> r.c != null && Double.doubleToRawLongBits(r.c)
            == Double.doubleToRawLongBits(zero));
      }
      default -> new Where("c IS NULL AND a > " + k, r -> r.c == null && r.a > k);
    };
  }

  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void aBlockCommitsOverACompactionOfItsFilesExactlyAsTheModelSays(int formatVersion) throws Exception {
    SplittableRandom rnd = new SplittableRandom(Long.getLong("rewriterace.seed", 7L) * formatVersion);
    List<R> model = new ArrayList<>();
    String b = "b";
    int conflicts = 0;
    int followed = 0;
    int copied = 0;
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int NOT NULL, b text, c double) WITH ('format-version' = '" + formatVersion
          + "', 'floe.history.max-disk-ratio' = '1000000')").close();
      for (int round = 0; round < 40; round++) {
        String context = "round " + round;
        if (model.size() < 150 || rnd.nextInt(4) == 0) {
          insert(db, rnd, model, 40 + rnd.nextInt(80)); // a new data file
        }
        if (rnd.nextInt(10) == 0) {
          String renamed = b.equals("b") ? "b2" : "b";
          db.sql("ALTER TABLE t RENAME COLUMN " + b + " TO " + renamed).close();
          b = renamed;
        }
        try (Session s = db.connect()) {
          s.sql("BEGIN").close();
          Where mine = where(rnd, b);
          boolean update = rnd.nextBoolean();
          List<R> view = new ArrayList<>(model);
          List<R> mineRows = view.stream().filter(mine.model()).toList();
          String sql = update ? "UPDATE t SET a = a + 100 WHERE " + mine.sql() : "DELETE FROM t WHERE " + mine.sql();
          try (Result r = s.sql(sql)) {
            assertThat(r.commandTag()).as(context + ": " + sql).isEqualTo((update ? "UPDATE " : "DELETE ")
                + mineRows.size());
          }
          // other writers, and a compaction that rewrites the files the block deleted from
          boolean overlap = false;
          int steps = 1 + rnd.nextInt(3);
          int compactAt = rnd.nextInt(steps);
          for (int step = 0; step < steps; step++) {
            if (step == compactAt) {
              db.sql("VACUUM FULL t").close();
            } else if (rnd.nextInt(3) == 0) {
              // rows equal to some the block deleted, which it did not see: they stay
              List<R> copies = new ArrayList<>();
              for (int i = 0; i < 1 + rnd.nextInt(6); i++) {
                copies.add(mineRows.isEmpty() || rnd.nextInt(4) == 0 ? random(rnd) : mineRows.get(rnd.nextInt(
                    mineRows.size())));
              }
              insert(db, copies, model);
            } else {
              Where theirs = where(rnd, b);
              db.sql("DELETE FROM t WHERE " + theirs.sql()).close();
              overlap |= mineRows.stream().anyMatch(theirs.model());
              model.removeIf(theirs.model());
            }
          }
          FloeException failed = null;
          try {
            s.sql("COMMIT").close();
          } catch (FloeException e) {
            failed = e;
          }
          if (overlap) {
            assertThat(failed).as(context + ": a row the block deleted was deleted first by another writer")
                .isNotNull();
            assertThat(failed.sqlState()).isEqualTo(SqlState.SERIALIZATION_FAILURE);
            conflicts++;
          } else {
            assertThat(failed).as(context + ": the block's rows are all still there").isNull();
            followed += mineRows.isEmpty() ? 0 : 1;
            // rows equal to the block's that another writer added: only as many as the block saw go
            copied += mineRows.stream().distinct().anyMatch(v -> model.stream().filter(v::equals).count()
                > mineRows.stream().filter(v::equals).count()) ? 1 : 0;
            for (R r : mineRows) {
              model.remove(r); // one of the equal rows
              if (update) {
                model.add(new R(r.a + 100, r.b, r.c));
              }
            }
          }
        }
        assertThat(rows(db)).as(context).containsExactlyInAnyOrderElementsOf(model.stream().map(R::text).toList());
      }
      try (Result r = db.sql("SELECT count(*) FROM \"t$snapshots\" WHERE operation = 'replace'")) {
        assertThat(r.iterator().next().getLong(0)).as("compactions").isGreaterThan(20);
      }
    }
    assertThat(conflicts).as("blocks that lost a row to another writer").isPositive();
    assertThat(followed).as("blocks whose rows were found again after a compaction").isGreaterThan(10);
    assertThat(copied).as("blocks whose rows had equal rows they did not see").isPositive();
  }

  @ParameterizedTest(name = "format v{0}")
  @ValueSource(ints = {2, 3})
  void aRowGoneIsNotMadeUpForByACopyOfAnother(int formatVersion) {
    try (Database db = Floe.open(dir)) {
      db.sql("CREATE TABLE t (a int NOT NULL, b text, c double) WITH ('format-version' = '" + formatVersion + "')")
          .close();
      db.sql("INSERT INTO t VALUES (1, 'x', 1.5), (2, 'y', NULL), (3, 'z', 2.5)").close();
      try (Session s = db.connect()) {
        s.sql("BEGIN").close();
        s.sql("DELETE FROM t WHERE a IN (1, 2)").close();
        db.sql("DELETE FROM t WHERE a = 2").close();
        db.sql("INSERT INTO t VALUES (1, 'x', 1.5)").close(); // as many rows as the block deleted, one of them gone
        db.sql("VACUUM FULL t").close();
        assertThatThrownBy(() -> s.sql("COMMIT").close()).isInstanceOfSatisfying(FloeException.class,
            e -> assertThat(e.sqlState()).isEqualTo(SqlState.SERIALIZATION_FAILURE));
      }
      assertThat(rows(db)).containsExactlyInAnyOrder("1|x|1.5", "1|x|1.5", "3|z|2.5");
      try (Result r = db.sql("SELECT count(*) FROM \"t$snapshots\" WHERE operation = 'replace'")) {
        assertThat(r.iterator().next().getLong(0)).as("compactions").isEqualTo(1);
      }
    }
  }

  private static R random(SplittableRandom rnd) {
    return new R(rnd.nextInt(8), BS[rnd.nextInt(BS.length)], CS[rnd.nextInt(CS.length)]);
  }

  private static void insert(Database db, SplittableRandom rnd, List<R> model, int n) {
    List<R> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      rows.add(random(rnd));
    }
    insert(db, rows, model);
  }

  private static void insert(Database db, List<R> rows, List<R> model) {
    StringBuilder values = new StringBuilder();
    for (int i = 0; i < rows.size(); i++) {
      R r = rows.get(i);
      model.add(r);
      values.append(i == 0 ? "" : ", ").append('(').append(r.a).append(", ")
          .append(r.b == null ? "NULL" : "'" + r.b + "'").append(", ")
          .append(r.c == null ? "NULL" : "CAST('" + r.c + "' AS double)").append(')');
    }
    db.sql("INSERT INTO t VALUES " + values).close();
  }

  private static List<String> rows(Database db) {
    List<String> out = new ArrayList<>();
    try (Result r = db.sql("SELECT * FROM t")) {
      for (Row row : r) {
        Object c = row.get(2);
        out.add(new R((int) row.getLong(0), (String) row.get(1), c == null ? null : ((Number) c).doubleValue())
            .text());
      }
    }
    return out;
  }
}
