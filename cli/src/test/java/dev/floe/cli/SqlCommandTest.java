package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqlCommandTest {
  @TempDir
  Path dir;

  String warehouse;

  @BeforeEach
  void createWarehouse() {
    warehouse = dir.resolve("wh").toString();
    Cli.Outcome created = Cli.run("sql", "--warehouse", warehouse, "-c", "SELECT 1");
    assertThat(created.status()).isZero();
    assertThat(created.err()).isEqualTo("NOTICE: created a new warehouse in " + dir.resolve("wh") + "\n");
  }

  private Cli.Outcome sql(String... args) {
    String[] all = new String[args.length + 3];
    all[0] = "sql";
    all[1] = "--warehouse";
    all[2] = warehouse;
    System.arraycopy(args, 0, all, 3, args.length);
    return Cli.run(all);
  }

  @Test
  void commandRunsSeveralStatementsAndPrintsAlignedTables() {
    Cli.Outcome r = sql("-c", """
        CREATE TABLE scores (id integer NOT NULL, name text, score numeric(5,2));
        INSERT INTO scores VALUES (1, 'alice', 9.50), (2, 'bob', NULL), (3, NULL, 10.25);
        SELECT * FROM scores ORDER BY id;""");

    assertThat(r.err()).isEmpty();
    assertThat(r.status()).isZero();
    assertThat(r.out()).isEqualTo("""
        CREATE TABLE
        INSERT 0 3
         id | name  | score\s
        ----+-------+-------
          1 | alice |  9.50
          2 | bob   |      \n\
          3 |       | 10.25
        (3 rows)

        """);
  }

  @Test
  void aWarehouseOpenForWritingElsewhereNamesTheReadOnlyFlag() {
    try (dev.floe.Database writer = dev.floe.Floe.open(dir.resolve("wh"))) {
      Cli.Outcome r = sql("-c", "SELECT 1");
      assertThat(r.status()).isEqualTo(1);
      assertThat(r.err()).startsWith("ERROR 55006: warehouse ").contains("is already open for writing by another process")
          .contains("HINT: Query it beside the writer with floe sql --read-only, or stop the other Floe process.");

      Cli.Outcome readOnly = sql("--read-only", "-c", "SELECT 1 AS one");
      assertThat(readOnly.err()).isEmpty();
      assertThat(readOnly.out()).contains(" one ");
    }
  }

  @Test
  void backslashCommandsRunInScriptsAsInPsql() throws Exception {
    Path script = dir.resolve("meta.sql");
    Files.writeString(script, """
        CREATE TABLE items (id integer NOT NULL, name text);
        \\pset null (none)
        INSERT INTO items VALUES (1, NULL);
        \\d items
        SELECT 'a;
        \\d not a command' AS text;
        SELECT * FROM items;
        """);
    Cli.Outcome r = sql("-f", script.toString());
    assertThat(r.err()).isEmpty();
    assertThat(r.status()).isZero();
    assertThat(r.out()).contains("CREATE TABLE\nNull display is \"(none)\".\nINSERT 0 1\n")
        .contains("Table \"public.items\"").contains(" id     | integer |           | not null |")
        // a backslash line inside a string literal is the literal's
        .contains(" a;              +\n \\d not a command\n").contains(" 1 | (none)");

    Cli.Outcome d = sql("-c", "\\d items");
    assertThat(d.status()).isZero();
    assertThat(d.out()).contains("Table \"public.items\"");

    Cli.Outcome bad = sql("-c", "\\d nosuch", "-c", "SELECT 1");
    assertThat(bad.status()).isEqualTo(1);
    assertThat(bad.err()).startsWith("ERROR 42P01:");
    assertThat(bad.out()).doesNotContain("?column?");

    Cli.Outcome unknown = sql("-c", "\\frobnicate");
    assertThat(unknown.status()).isEqualTo(1);
    assertThat(unknown.err()).startsWith("invalid command \\frobnicate");

    // an error after a backslash line still names the script's own line
    Files.writeString(script, "\\timing off\nSELECT 1;\nSELECT * FROM nowhere;\n");
    Cli.Outcome late = sql("-f", script.toString());
    assertThat(late.status()).isEqualTo(1);
    assertThat(late.err()).contains("line 3");
  }

  /** \\d shows constraints and the keys that reference a table in psql's sections; \\dv and \\d+ show views. */
  @Test
  void describeShowsConstraintsAndViewsAsPsql() {
    Cli.Outcome setup = sql("-c", "CREATE TABLE teams (id int PRIMARY KEY, name text UNIQUE, size int CHECK (size > 0))",
        "-c", "CREATE TABLE players (id int PRIMARY KEY, team int REFERENCES teams)",
        "-c", "CREATE VIEW big_teams AS SELECT id, name FROM teams WHERE size > 10");
    assertThat(setup.err()).isEmpty();
    Cli.Outcome d = sql("-c", "\\d teams", "-c", "\\d players", "-c", "\\dv", "-c", "\\d+ big_teams");
    assertThat(d.status()).isZero();
    assertThat(d.out()).contains("""
        Indexes:
            "teams_pkey" PRIMARY KEY, btree (id)
            "teams_name_key" UNIQUE CONSTRAINT, btree (name)
        Check constraints:
            "teams_size_check" CHECK (size > 0)
        Referenced by:
            TABLE "players" CONSTRAINT "players_team_fkey" FOREIGN KEY (team) REFERENCES teams(id)
        """).contains("""
        Foreign-key constraints:
            "players_team_fkey" FOREIGN KEY (team) REFERENCES teams(id)
        """).contains(" public | big_teams | view | floe\n").contains("View \"public.big_teams\"")
        .contains("View definition:\n SELECT id, name FROM teams WHERE size > 10;\n");
  }

  /** \\du lists the users floe user added, beside floe, as the server's catalogs list them. */
  @Test
  void rolesAreTheWarehousesUsers() throws Exception {
    sql("-c", "SELECT 1"); // the warehouse exists
    new dev.floe.server.auth.Users(Path.of(warehouse)).put("alice", "pw");
    Cli.Outcome r = sql("-c", "\\du");
    assertThat(r.status()).isZero();
    assertThat(r.out()).contains(" alice     | \n").contains(" floe      | Superuser, Create role, Create DB\n");
  }

  @Test
  void expandedFlagAndOutputRedirectionInScripts() throws Exception {
    Cli.Outcome x = sql("-x", "--null", "∅", "-c", "SELECT 1 AS a, NULL AS b");
    assertThat(x.out()).isEqualTo("-[ RECORD 1 ]\na | 1\nb | ∅\n\n");

    // a script never pages, even when asked to always; \o sends results to a file, \echo stays on stdout
    Path file = dir.resolve("results.txt");
    Cli.Outcome r = Cli.run("", Map.of("PAGER", "false"), false, "sql", "-w", warehouse, "-c",
        "\\pset pager always\n\\o " + file + "\nSELECT 7 AS seven;\n\\echo done\n\\o\nSELECT 8 AS eight;");
    assertThat(r.status()).isZero();
    assertThat(r.out()).isEqualTo("Pager is always used.\ndone\n eight \n-------\n     8\n(1 row)\n\n");
    assertThat(Files.readString(file)).isEqualTo(" seven \n-------\n     7\n(1 row)\n\n");
  }

  @Test
  void variablesFromTheCommandLineAndSet() {
    Cli.Outcome r = sql("-v", "n=41", "-c", """
        \\set greeting 'it''s' ' here'
        \\set
        SELECT :n + 1 AS answer, :'greeting' AS text, ':n' AS literal;
        \\echo :greeting
        \\unset greeting
        SELECT :'greeting' AS gone""");
    assertThat(r.out()).startsWith("greeting = 'it''s here'\nn = '41'\n")
        .contains(" answer |   text    | literal \n--------+-----------+---------\n     42 | it's here | :n\n")
        .contains("\nit's here\n");
    // unset: :'greeting' stays as written, which is not SQL
    assertThat(r.status()).isEqualTo(1);
    assertThat(r.err()).startsWith("ERROR 42601");

    Cli.Outcome bad = sql("-v", "novalue", "-c", "SELECT 1");
    assertThat(bad.status()).isEqualTo(2);
  }

  @Test
  void copyBetweenClientFilesAndTables() throws Exception {
    Path in = dir.resolve("in.csv");
    Files.writeString(in, "id,name\n1,alice\n2,\"b, with comma\"\n3,\n");
    Path out = dir.resolve("out.csv");
    Path script = dir.resolve("copy.sql");
    Files.writeString(script, """
        CREATE TABLE people (id int, name text);
        \\copy people FROM '%s' WITH (FORMAT csv, HEADER)
        \\copy people (id, name) TO '%s' WITH (FORMAT csv, HEADER)
        \\copy (SELECT id FROM people WHERE id > 1 ORDER BY id) TO STDOUT
        COPY people FROM STDIN;
        4\tdana
        5\t\\N
        \\.
        \\copy people FROM stdin WITH (FORMAT csv)
        6,erin
        \\.
        COPY (SELECT count(*) AS n, count(name) AS named FROM people) TO STDOUT WITH (FORMAT csv, HEADER);
        """.formatted(in, out));
    Cli.Outcome r = sql("-f", script.toString());
    assertThat(r.err()).isEmpty();
    assertThat(r.status()).isZero();
    assertThat(r.out()).isEqualTo("""
        CREATE TABLE
        COPY 3
        COPY 3
        2
        3
        COPY 2
        COPY 2
        COPY 1
        n,named
        6,4
        COPY 1
        """);
    assertThat(Files.readString(out)).isEqualTo("id,name\n1,alice\n2,\"b, with comma\"\n3,\n");

    Cli.Outcome piped = Cli.runWithInput("7,gus\n8,hal\n", "sql", "-w", warehouse, "-c",
        "\\copy people FROM pstdin WITH (FORMAT csv)");
    assertThat(piped.out()).isEqualTo("COPY 2\n");

    Cli.Outcome missing = sql("-c", "\\copy people FROM 'nosuch.csv'");
    assertThat(missing.status()).isEqualTo(1);
    assertThat(missing.err()).isEqualTo("ERROR 58P01: could not open file \"nosuch.csv\": No such file\n");
    Cli.Outcome serverFile = sql("-c", "COPY people FROM '/etc/passwd'");
    assertThat(serverFile.err()).startsWith("ERROR 42501: permission denied to COPY from a file")
        .contains("\\copy");
  }

  @Test
  void explainPrintsOneQueryPlanColumnALineARow() {
    Cli.Outcome r = sql("-c", "CREATE TABLE e (id int); EXPLAIN SELECT count(*) FROM e WHERE id > 5");
    assertThat(r.status()).isZero();
    String plan = r.out().substring(r.out().indexOf("QUERY PLAN") - 1);
    assertThat(plan).doesNotContain("explain_key").doesNotContain("+\n");
    List<String> lines = plan.stripTrailing().lines().toList();
    assertThat(lines.get(0)).matches(" +QUERY PLAN +");
    assertThat(lines.get(1)).matches("-+");
    assertThat(lines.get(lines.size() - 1)).matches("\\(\\d+ rows\\)");
    assertThat(lines.subList(2, lines.size() - 1)).allMatch(l -> l.startsWith(" ") && !l.isBlank());
  }

  @Test
  void nullDisplayIsConfigurable() {
    Cli.Outcome r = sql("--null", "(null)", "-c", "SELECT 1 AS a, NULL::text AS b");

    assertThat(r.out()).isEqualTo("""
         a |   b    \n\
        ---+--------
         1 | (null)
        (1 row)

        """);
  }

  @Test
  void commandsAndFilesRunInCommandLineOrder() throws Exception {
    Path script = dir.resolve("load.sql");
    Files.writeString(script, """
        -- a comment; with a semicolon
        INSERT INTO t VALUES (1);
        INSERT INTO t SELECT 2 /* ; */ ;
        SELECT 'a;b' AS text, $$c;d$$ AS dollars, count(*) AS n FROM t;
        """);

    Cli.Outcome r = sql("-c", "CREATE TABLE t (x integer)", "-f", script.toString(),
        "-c", "SELECT sum(x) FROM t");

    assertThat(r.err()).isEmpty();
    assertThat(r.out()).isEqualTo("""
        CREATE TABLE
        INSERT 0 1
        INSERT 0 1
         text | dollars | n\s
        ------+---------+---
         a;b  | c;d     | 2
        (1 row)

         sum\s
        -----
           3
        (1 row)

        """);
  }

  @Test
  void fileDashAndPlainStandardInputAreScripts() {
    Cli.Outcome dash = Cli.runWithInput("SELECT 40 + 2 AS answer;\n", "sql", "-w", warehouse, "-f", "-");
    Cli.Outcome piped = Cli.runWithInput("SELECT 40 + 2 AS answer;\n", "sql", "-w", warehouse, "--format", "csv");

    assertThat(dash.out()).isEqualTo(" answer \n--------\n     42\n(1 row)\n\n");
    assertThat(piped.out()).isEqualTo("answer\n42\n");
  }

  @Test
  void csvQuotesAsRfc4180AndKeepsNullApartFromEmpty() {
    Cli.Outcome r = sql("--format", "csv", "-c", """
        CREATE TABLE c (id integer, v text);
        INSERT INTO c VALUES (1, 'plain'), (2, ''), (3, NULL), (4, 'x,y'), (5, 'say "hi"'), (6, 'two' || chr(10) || 'lines');
        SELECT id, v, id > 3 AS big FROM c ORDER BY id""");

    assertThat(r.err()).isEmpty();
    assertThat(r.out()).isEqualTo("""
        id,v,big
        1,plain,f
        2,"",f
        3,,f
        4,"x,y",t
        5,"say \"\"hi\"\"",t
        6,"two
        lines",t
        """);
  }

  @Test
  void csvOfManyRowsIsEachValuesText() {
    // encoded from Arrow batches: the same text as each row's values (Row.getString), over many batches
    String query = "SELECT i, i % 3 = 0 AS b, (i * 7 % 65536 - 32768)::smallint AS s, i * 1.5 AS x, "
        + "(i - 5000) / 7.0 AS d, i / 3.0 AS f, CASE WHEN i % 5 = 0 THEN NULL WHEN i % 7 = 0 THEN '' "
        + "ELSE 'row ' || i || CASE WHEN i % 11 = 0 THEN ',\"q\"' ELSE '' END END AS t, "
        + "DATE '2024-01-01' + (i % 1000)::integer AS dt, TIMESTAMP '2024-01-01 00:00:00' + i * INTERVAL '1 second' "
        + "AS ts, TIMESTAMPTZ '2024-01-01 00:00:00.5+00' + i * INTERVAL '1 minute' AS tz, [i, NULL] AS arr "
        + "FROM generate_series(1, 10000) AS g(i) ORDER BY i";
    StringBuilder expected = new StringBuilder("i,b,s,x,d,f,t,dt,ts,tz,arr\n");
    try (dev.floe.Database db = dev.floe.Floe.open(dir.resolve("wh")); dev.floe.Result r = db.sql(query)) {
      for (dev.floe.Row row : r) {
        for (int c = 0; c < row.size(); c++) {
          if (c > 0) {
            expected.append(',');
          }
          String text = row.getString(c);
          if (text != null) {
            CsvWriter.appendField(expected, text);
          }
        }
        expected.append('\n');
      }
    }
    Cli.Outcome r = sql("--format", "csv", "-c", query);

    assertThat(r.err()).isEmpty();
    assertThat(r.out()).hasLineCount(10001).isEqualTo(expected.toString());
  }

  @Test
  void jsonLinesHaveJsonTypes() {
    Cli.Outcome r = sql("--format", "json", "-c", """
        SELECT 1 AS i, 2.50::numeric(5,2) AS n, 1.5::double precision AS d, 'a"b\\c' AS s, NULL::integer AS z,
               true AS b, DATE '2024-01-02' AS day, TIMESTAMPTZ '2024-01-02 03:04:05+00' AS ts, [1, 2] AS list,
               'NaN'::double precision AS nan, 12345678901234::bigint AS big
        UNION ALL
        SELECT 2, -0.01, -2e-7, '', NULL, false, NULL, NULL, [], 'Infinity'::double precision, NULL
        ORDER BY i""");

    assertThat(r.err()).isEmpty();
    assertThat(r.out()).isEqualTo("""
        {"i":1,"n":2.50,"d":1.5,"s":"a\\"b\\\\c","z":null,"b":true,"day":"2024-01-02","ts":"2024-01-02 03:04:05+00",\
        "list":[1,2],"nan":"NaN","big":12345678901234}
        {"i":2,"n":-0.01,"d":-2e-07,"s":"","z":null,"b":false,"day":null,"ts":null,"list":[],"nan":"Infinity",\
        "big":null}
        """);
  }

  @Test
  void firstErrorStopsTheRunWithOneLineAndStatusOne() {
    Cli.Outcome r = sql("-c", "SELECT 1 AS one; SELECT * FORM nowhere; SELECT 3");

    assertThat(r.status()).isEqualTo(1);
    assertThat(r.out()).isEqualTo(" one \n-----\n   1\n(1 row)\n\n");
    assertThat(r.err()).isEqualTo("ERROR 42601: syntax error at or near \"FORM\" at position 27\n");
  }

  @Test
  void errorInAFileGivesLineAndColumn() throws Exception {
    Path script = dir.resolve("bad.sql");
    Files.writeString(script, "SELECT 1;\n\nSELECT *\n  FROM missing_table;\n");

    Cli.Outcome r = sql("-f", script.toString());

    assertThat(r.status()).isEqualTo(1);
    assertThat(r.err()).isEqualTo("ERROR 42P01: relation \"missing_table\" does not exist at line 4, column 8\n");
  }

  @Test
  void errorWithoutPositionNamesTheStatement() {
    Cli.Outcome r = sql("--format", "csv", "-c", "SELECT 1; SELECT 1 / 0");

    assertThat(r.status()).isEqualTo(1);
    assertThat(r.err()).startsWith("ERROR 22").endsWith(" in statement 2\n");
    assertThat(r.err().lines()).hasSize(1);
  }

  @Test
  void missingFileIsAnErrorNotAUsageError() {
    Cli.Outcome r = sql("-f", dir.resolve("nope.sql").toString());

    assertThat(r.status()).isEqualTo(1);
    assertThat(r.err()).isEqualTo("ERROR 58P01: could not open file \"" + dir.resolve("nope.sql")
        + "\": No such file\n");
  }

  @Test
  void noticesGoToStandardError() {
    Cli.Outcome r = sql("-c", "CREATE TABLE n (x int); CREATE TABLE IF NOT EXISTS n (x int)");

    assertThat(r.status()).isZero();
    assertThat(r.out()).isEqualTo("CREATE TABLE\nCREATE TABLE\n");
    assertThat(r.err()).isEqualTo("NOTICE: relation \"n\" already exists, skipping\n");
  }

  @Test
  void readOnlyRefusesWrites() {
    Cli.Outcome r = sql("--read-only", "-c", "CREATE TABLE r (x int)");

    assertThat(r.status()).isEqualTo(1);
    assertThat(r.err()).startsWith("ERROR 25006: ");
    assertThat(r.err().lines()).hasSize(1);
  }

  @Test
  void warehouseComesFromTheEnvironmentWhenNotGiven() {
    Cli.Outcome write = Cli.run("", Map.of("FLOE_WAREHOUSE", warehouse), false,
        "sql", "-c", "CREATE TABLE from_env (x int)");
    Cli.Outcome read = sql("-c", "SHOW TABLES");

    assertThat(write.status()).isZero();
    assertThat(read.out()).contains(" from_env\n");
  }

  @Test
  void usageErrorsExitWithTwo() {
    Cli.Outcome badFormat = sql("--format", "xml", "-c", "SELECT 1");
    Cli.Outcome unknown = Cli.run("frobnicate");
    Cli.Outcome nothing = Cli.run();

    assertThat(badFormat.status()).isEqualTo(2);
    assertThat(badFormat.err()).startsWith("floe: ").contains("xml").contains("Try 'floe sql --help'");
    assertThat(unknown.status()).isEqualTo(2);
    assertThat(nothing.status()).isEqualTo(2);
    assertThat(nothing.err()).startsWith("floe: missing a command");
  }

  @Test
  void versionAndHelp() {
    Cli.Outcome version = Cli.run("--version");
    Cli.Outcome help = Cli.run("help");
    Cli.Outcome sqlHelp = Cli.run("help", "sql");

    assertThat(version.status()).isZero();
    assertThat(version.out()).startsWith("floe 0.").contains("Apache Iceberg 1.");
    assertThat(help.status()).isZero();
    assertThat(help.out()).contains("sql", "demo", "help");
    assertThat(sqlHelp.out()).contains("--command", "--file", "--format", "--warehouse", "--read-only");
  }
}
