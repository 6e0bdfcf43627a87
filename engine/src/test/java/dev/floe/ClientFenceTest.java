package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.Rows;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client session reaches tables, never the host (docs/security.md). Not a list of names: every
 * function and setting DuckDB has is enumerated from DuckDB itself and called as a client would, with
 * canary files inside and outside the warehouse as arguments; none may return a canary's content, make or
 * remove a file, or change a setting.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientFenceTest {
  private static final String INSIDE_SECRET = "canary-inside-7f3a";
  private static final String OUTSIDE_SECRET = "canary-outside-91c2";
  /** The table functions a client may call: they compute rows from their arguments alone. */
  private static final Set<String> PURE = Set.of("range", "generate_series", "unnest", "json_each", "json_tree");

  @TempDir
  static Path dir;

  private Database db;
  private Path warehouse;
  private Path inside;
  private Path outside;
  private Path outsideDir;

  @BeforeAll
  void open() throws IOException {
    warehouse = dir.resolve("wh");
    Files.createDirectories(warehouse);
    inside = warehouse.resolve("secret.csv"); // as the users file and the TLS key: in the warehouse, not a table's
    Files.writeString(inside, "a,b\n" + INSIDE_SECRET + ",1\n");
    outsideDir = dir.resolve("outside");
    Files.createDirectories(outsideDir);
    outside = outsideDir.resolve("canary.csv");
    Files.writeString(outside, "a,b\n" + OUTSIDE_SECRET + ",1\n");
    db = Floe.open(FloeConfig.builder(warehouse).fenced(true).build());
    db.sql("CREATE TABLE t (id bigint, name text)").close();
    db.sql("INSERT INTO t VALUES (1, 'one'), (2, 'two')").close();
  }

  @AfterAll
  void close() {
    db.close();
  }

  @Test
  void aClientSessionReadsAndWritesTables() {
    try (Session s = db.connectClient()) {
      exec(s, "INSERT INTO t VALUES (3, 'three')");
      exec(s, "UPDATE t SET name = upper(name) WHERE id = 3");
      assertThat(Rows.of(s, "SELECT id, name FROM t WHERE id >= 2 ORDER BY id")).containsExactly("2|two", "3|THREE");
      assertThat(Rows.of(s, "WITH x AS (SELECT id FROM t) SELECT count(*) FROM x, range(2) r")).containsExactly("6");
      assertThat(Rows.of(s, "SELECT sum(u) FROM unnest([1, 2, 3]) AS v(u)")).containsExactly("6");
      assertThat(Rows.of(s, "SELECT count(*) FROM generate_series(1, 5)")).containsExactly("5");
      assertThat(Rows.of(s, "SELECT relname FROM pg_class WHERE relname = 't'")).containsExactly("t");
      assertThat(Rows.of(s, "SELECT count(*) FROM \"t$snapshots\"")).containsExactly("3");
      exec(s, "DELETE FROM t WHERE id = 3");
    }
  }

  @Test
  void copyFromStdinLoadsTheFileTheEngineGave() throws IOException {
    try (Session s = db.connectClient()) {
      exec(s, "CREATE TABLE copied (id int, v text)");
      try (CopyIn copy = s.copyIn("copied", List.of())) {
        assertThat(copy.file().toAbsolutePath().startsWith(warehouse.toAbsolutePath())).isTrue();
        Files.writeString(copy.file(), "1,x\n2,\n");
        try (Result r = copy.load()) {
          assertThat(r.rowCount()).isEqualTo(2);
        }
      }
      assertThat(Rows.of(s, "SELECT id, v FROM copied ORDER BY id")).containsExactly("1|x", "2|null");
      try (CopyIn copy = s.copyIn("copied", List.of("id"))) {
        Files.writeString(copy.file(), "zz\n");
        assertThatThrownBy(() -> copy.load()).isInstanceOf(FloeException.class)
            .hasFieldOrPropertyWithValue("sqlState", "22P02")
            .hasMessageContaining("invalid input syntax for type integer: \"zz\"");
      }
      // PostgreSQL's words for a bad line, the line in the CONTEXT; never DuckDB's, never the staged file
      exec(s, "CREATE TABLE dated (id int, day date)");
      java.util.Map<String, String[]> bad = new java.util.LinkedHashMap<>();
      bad.put("1,2024-01-01\n2,2024-01-02,x\n", new String[] {"22P04", "extra data after last expected column",
          "COPY dated, line 2: \"2,2024-01-02,x\""});
      bad.put("1,2024-01-01\n2\n", new String[] {"22P04", "missing data for column \"day\"", "COPY dated, line 2: \"2\""});
      bad.put("1,2024-01-01\n2,2024-01-02\n3,notadate\n", new String[] {"22007",
          "invalid input syntax for type date: \"notadate\"", "COPY dated, line 3, column day: \"notadate\""});
      for (var e : bad.entrySet()) {
        try (CopyIn copy = s.copyIn("dated", List.of())) {
          Files.writeString(copy.file(), e.getKey());
          assertThatThrownBy(() -> copy.load()).isInstanceOfSatisfying(FloeException.class, f -> {
            assertThat(f.sqlState()).isEqualTo(e.getValue()[0]);
            assertThat(f.getMessage()).isEqualTo(e.getValue()[1]);
            assertThat(f.context()).contains(e.getValue()[2]);
          });
        }
      }
      // with a header, the file's lines are counted from it, as PostgreSQL counts them
      try (CopyIn copy = s.copyIn(Copy.parse("COPY dated FROM STDIN (FORMAT csv, HEADER)"))) {
        Files.writeString(copy.file(), "id,day\n1,2024-01-01\n2,notadate\n");
        assertThatThrownBy(() -> copy.load()).isInstanceOfSatisfying(FloeException.class, f ->
            assertThat(f.context()).contains("COPY dated, line 3, column day: \"notadate\""));
      }
      try (CopyIn copy = s.copyIn(Copy.parse("COPY dated FROM STDIN (FORMAT csv, HEADER)"))) {
        Files.writeString(copy.file(), "id,day\nzz,2024-01-01\n");
        assertThatThrownBy(() -> copy.load()).isInstanceOfSatisfying(FloeException.class, f ->
            assertThat(f.context()).contains("COPY dated, line 2, column id: \"zz\""));
      }
      try (CopyIn copy = s.copyIn(Copy.parse("COPY dated FROM STDIN (FORMAT csv, HEADER)"))) {
        Files.writeString(copy.file(), "id,day\n1,2024-01-01\n2\n");
        assertThatThrownBy(() -> copy.load()).isInstanceOfSatisfying(FloeException.class, f ->
            assertThat(f.context()).contains("COPY dated, line 3: \"2\""));
      }
    }
  }

  @Test
  void theEngineItselfReachesNoFileOutsideTheWarehouse() {
    // the first fence: DuckDB's own, for every session of a fenced process
    assertThatThrownBy(() -> Rows.of(db, "SELECT * FROM read_text('" + outside + "')")).isInstanceOf(FloeException.class)
        .hasMessageNotContaining(OUTSIDE_SECRET);
    assertThatThrownBy(() -> Rows.of(db, "SELECT * FROM read_text('" + warehouse + "/../outside/canary.csv')"))
        .isInstanceOf(FloeException.class);
  }

  @Test
  void everyTableFunctionButPureOnesIsRefused() {
    List<String[]> functions = new ArrayList<>();
    for (String row : Rows.of(db, "SELECT DISTINCT function_name, function_type FROM duckdb_functions() "
        + "WHERE function_type IN ('table', 'table_macro') ORDER BY 1")) {
      functions.add(row.split("\\|"));
    }
    assertThat(functions).hasSizeGreaterThan(100);
    Set<String> allowed = new TreeSet<>();
    try (Session s = db.connectClient()) {
      for (String[] f : functions) {
        String name = f[0];
        for (String path : List.of(inside.toString(), outside.toString())) {
          for (String form : List.of("SELECT * FROM %s('%s')", "SELECT * FROM system.main.%s('%s')",
              "SELECT 1 WHERE EXISTS (SELECT * FROM \"%s\"('%s'))", "WITH c AS (SELECT * FROM %s('%s')) SELECT * FROM c",
              "INSERT INTO t SELECT 9, (SELECT count(*) FROM %s('%s'))::text",
              "UPDATE t SET name = (SELECT max(x::text) FROM %s('%s') AS x) WHERE id = 1")) {
            String sql = String.format(form, name, path);
            try {
              List<String> out = Rows.of(s, sql);
              allowed.add(name);
              assertThat(String.join("\n", out)).as(sql).doesNotContain(INSIDE_SECRET, OUTSIDE_SECRET);
            } catch (FloeException e) {
              assertThat(e.getMessage()).as(sql).doesNotContain(INSIDE_SECRET, OUTSIDE_SECRET);
              if (!PURE.contains(name) || sql.contains("system.main.")) {
                assertThat(e.sqlState()).as(sql + ": " + e.getMessage()).isIn("42501", "42P01");
              }
            }
          }
        }
      }
      exec(s, "DELETE FROM t WHERE id = 9");
      exec(s, "UPDATE t SET name = 'one' WHERE id = 1");
    }
    assertThat(PURE).containsAll(allowed);
    assertThat(Rows.of(db, "SELECT name FROM t ORDER BY id")).containsExactly("one", "two");
  }

  @Test
  void noScalarOrAggregateFunctionReadsAFileOrTheEnvironment() throws IOException {
    Set<String> before = listing();
    List<String[]> overloads = new ArrayList<>();
    for (String row : Rows.of(db, "SELECT function_name, function_type, array_to_string(parameter_types, ';') "
        + "FROM duckdb_functions() WHERE function_type IN ('scalar', 'aggregate', 'macro') "
        + "AND NOT starts_with(function_name, '__') ORDER BY 1")) {
      overloads.add(row.split("\\|", -1));
    }
    assertThat(overloads).hasSizeGreaterThan(1000);
    Set<String> paths = new LinkedHashSet<>(List.of(inside.toString(), outside.toString(), "file://" + outside,
        "HOME", "PATH", "USER", "JAVA_HOME"));
    int ran = 0;
    try (Session s = db.connectClient()) {
      for (String[] o : overloads) {
        String name = o[0];
        if (!name.matches("[a-z_][a-z0-9_]*")) {
          continue; // operators
        }
        String[] types = o[2].isEmpty() ? new String[0] : o[2].split(";");
        for (String path : paths) {
          StringBuilder args = new StringBuilder();
          for (int k = 0; k < types.length; k++) {
            String type = types[k];
            args.append(k > 0 ? ", " : "");
            if (type.equals("VARCHAR") || type.equals("ANY") || type.equals("BLOB") || type.equals("JSON")) {
              args.append('\'').append(path).append("'");
            } else if (type.equals("VARCHAR[]") || type.equals("ANY[]")) {
              args.append("['").append(path).append("']");
            } else {
              args.append("NULL");
            }
          }
          String sql = "SELECT " + name + "(" + args + ")::text";
          try {
            String out = String.join("\n", Rows.of(s, sql));
            ran++;
            assertThat(out).as(sql).doesNotContain(INSIDE_SECRET, OUTSIDE_SECRET).doesNotContain("/root", "/usr/lib/jvm");
          } catch (FloeException e) {
            assertThat(e.getMessage()).as(sql).doesNotContain(INSIDE_SECRET, OUTSIDE_SECRET);
          }
        }
      }
    }
    assertThat(ran).isGreaterThan(500);
    assertThat(listing()).isEqualTo(before);
  }

  @Test
  void aNameFloeDoesNotKnowIsNeverReadAsAFile() {
    try (Session s = db.connectClient()) {
      for (String sql : List.of("SELECT * FROM '" + inside + "'", "SELECT * FROM '" + outside + "'",
          "SELECT * FROM \"" + inside + "\"", "SELECT * FROM duckdb_settings", "SELECT * FROM duckdb_tables",
          "SELECT * FROM sqlite_master", "SELECT * FROM t, '" + inside + "' AS x",
          "SELECT (SELECT count(*) FROM '" + inside + "')", "INSERT INTO t SELECT 5, a FROM '" + inside + "'")) {
        assertThatThrownBy(() -> Rows.of(s, sql)).as(sql).isInstanceOf(FloeException.class)
            .hasFieldOrPropertyWithValue("sqlState", "42P01").hasMessageNotContaining(INSIDE_SECRET);
      }
    }
  }

  @Test
  void noSettingCanBeChangedOrReadByAClient() {
    List<String> settings = Rows.of(db, "SELECT name || '|' || coalesce(value, '') FROM duckdb_settings() ORDER BY 1");
    assertThat(settings).hasSizeGreaterThan(100);
    try (Session s = db.connectClient()) {
      for (String row : settings) {
        String name = row.substring(0, row.indexOf('|'));
        String value = row.substring(row.indexOf('|') + 1);
        for (String sql : List.of("SET " + name + " = '" + outsideDir + "'", "SET GLOBAL " + name + " = 1",
            "RESET " + name, "PRAGMA " + name, "CALL " + name + "()")) {
          assertThatThrownBy(() -> exec(s, sql)).as(sql).isInstanceOf(FloeException.class);
        }
        if (value.length() > 3 && (value.contains("/") || value.contains("\\"))) {
          // a setting naming a place on the host is not a client's to read: no such parameter
          List<String> seen = Rows.of(s, "SELECT current_setting('" + name + "', true)");
          assertThat(String.join("", seen)).as(name).doesNotContain(value);
          assertThatThrownBy(() -> Rows.of(s, "SELECT current_setting('" + name + "')")).as(name)
              .isInstanceOfSatisfying(FloeException.class, e -> assertThat(e.sqlState()).isEqualTo(SqlState.UNDEFINED_OBJECT));
        }
      }
    }
    assertThat(Rows.of(db, "SELECT name || '|' || coalesce(value, '') FROM duckdb_settings() ORDER BY 1"))
        .isEqualTo(settings);
  }

  @Test
  void statementsThatReachTheHostAreRefused() {
    try (Session s = db.connectClient()) {
      for (String sql : List.of("ATTACH '" + outsideDir.resolve("x.db") + "' AS x", "INSTALL httpfs", "LOAD httpfs",
          "COPY t TO '" + outsideDir.resolve("x.csv") + "'", "EXPORT DATABASE '" + outsideDir + "'",
          "IMPORT DATABASE '" + outsideDir + "'", "CHECKPOINT", "CREATE SECRET s (TYPE s3)",
          "CREATE MACRO m() AS 1", "CREATE TEMP TABLE x AS SELECT * FROM read_text('" + outside + "')", "DETACH x",
          "USE x",
          "CREATE VIEW v AS SELECT * FROM read_text('" + outside + "')")) {
        assertThatThrownBy(() -> exec(s, sql)).as(sql).isInstanceOf(FloeException.class)
            .hasMessageNotContaining(OUTSIDE_SECRET);
      }
    }
    assertThat(outsideDir.resolve("x.db")).doesNotExist();
    assertThat(outsideDir.resolve("x.csv")).doesNotExist();
  }

  private Set<String> listing() throws IOException {
    Set<String> all = new TreeSet<>();
    for (Path root : List.of(outsideDir, warehouse)) {
      try (Stream<Path> files = Files.walk(root)) {
        files.filter(p -> !p.toString().contains("/.floe/")).filter(p -> !p.toString().contains("/public/"))
            .forEach(p -> all.add(p.toString()));
      }
    }
    assertThat(Files.readString(inside, StandardCharsets.UTF_8)).contains(INSIDE_SECRET);
    assertThat(Files.readString(outside, StandardCharsets.UTF_8)).contains(OUTSIDE_SECRET);
    return all;
  }

  private static void exec(Session s, String sql) {
    s.sql(sql).close();
  }

}
