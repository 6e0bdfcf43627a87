package dev.floe.server.pg.clients;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.server.pg.clients.ClientHarness.Result;
import dev.floe.server.pg.clients.ClientHarness.Server;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * psql (PostgreSQL 15's, from Debian's postgresql-client) against a Floe server. Scripts are under
 * src/test/resources/clients/psql and go to psql on its standard input ({@code -f -}), so that its messages
 * read {@code psql:<stdin>:LINE:}. Expected output is what psql prints against PostgreSQL 15 itself.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PsqlTest {
  @TempDir
  static Path dir;
  Server floe;
  String psql;

  @BeforeAll
  void start() throws Exception {
    psql = ClientHarness.requireTool("psql");
    floe = new Server(dir.resolve("wh"));
  }

  @AfterAll
  void stop() {
    if (floe != null) {
      floe.close();
    }
  }

  private Result psqlScript(String script, String... options) {
    List<String> cmd = ClientHarness.args(psql, "-X", "-v", "ON_ERROR_STOP=0");
    cmd.addAll(List.of(options));
    cmd.addAll(List.of("-f", "-"));
    try {
      return ClientHarness.run(cmd, floe.env(), Files.readString(ClientHarness.script("psql/" + script)),
          Duration.ofSeconds(60));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Result psql(String... args) {
    List<String> cmd = ClientHarness.args(psql, "-X");
    cmd.addAll(List.of(args));
    return ClientHarness.run(cmd, floe.env(), null, Duration.ofSeconds(60));
  }

  @Test
  void createInsertSelectSeveralTypes() {
    Result r = psqlScript("basics.sql", "-At", "-v", "ON_ERROR_STOP=1").assertSuccess();
    assertThat(r.err()).as(r.describe()).isEmpty();
    assertThat(r.lines()).as(r.describe()).containsExactly(
        "SET",
        "CREATE TABLE",
        "INSERT 0 3",
        "1|a'b \"c\"|12.50|2024-02-29|2024-02-29 13:14:15.5|2024-02-29 11:14:15+00|t|1.5|0.25|9000000000"
            + "|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|\\x00ff",
        "2|||||||||||",
        "3|héllo ☃|-0.01|1999-12-31|2000-01-01 00:00:00|2000-01-01 00:00:00+00|f|-0.0025|3|-1"
            + "|00000000-0000-0000-0000-000000000000|\\x",
        "3|héllo ☃",
        "1|a'b \"c\"",
        "UPDATE 1",
        "DELETE 1",
        "2|12.49|1999-12-31|2024-02-29 13:14:15.5|a'b \"c\",z",
        "t|3|1|xy|5|2",
        "1|1",
        "2|4",
        "3|9");
  }

  @Test
  void errorsCarrySqlStateAndTheScriptGoesOn() {
    Result r = psqlScript("errors.sql", "-At");
    assertThat(r.exit()).as(r.describe()).isZero();
    assertThat(r.lines()).as(r.describe()).containsExactly("CREATE TABLE", "INSERT 0 1", "1");
    List<String> errors = r.errLines().stream().filter(l -> l.contains("ERROR:")).toList();
    assertThat(errors.stream().map(l -> l.replaceAll("^psql:<stdin>:(\\d+): ERROR:  (\\w{5}): .*$", "$1 $2")))
        .as(r.describe())
        .containsExactly("6 22012", "7 42P01", "8 42703", "9 42601", "10 23505", "11 42P07", "12 22003", "13 42883",
            "14 23502", "15 22P02", "16 22008", "17 42P01");
    assertThat(r.errLines()).as(r.describe()).containsSubsequence(
        "psql:<stdin>:6: ERROR:  22012: division by zero",
        "psql:<stdin>:7: ERROR:  42P01: relation \"no_such_table\" does not exist",
        "LINE 1: SELECT * FROM no_such_table;",
        "                      ^",
        "psql:<stdin>:8: ERROR:  42703: column \"no_such_column\" does not exist",
        "LINE 1: SELECT no_such_column FROM errs;",
        "               ^",
        "psql:<stdin>:9: ERROR:  42601: syntax error at or near \"SELEC\"",
        "LINE 1: SELEC 1;",
        "        ^",
        "psql:<stdin>:10: ERROR:  23505: duplicate key value violates unique constraint \"errs_pkey\"",
        "DETAIL:  Key (id)=(1) already exists.",
        "psql:<stdin>:11: ERROR:  42P07: relation \"errs\" already exists",
        "psql:<stdin>:14: ERROR:  23502: null value in column \"name\" of relation \"errs\" violates not-null constraint",
        "psql:<stdin>:17: ERROR:  42P01: table \"no_such_table\" does not exist");
  }

  /** The texts PostgreSQL writes for errors that Floe reports with the right SQLSTATE. */
  @Test
  void errorMessagesReadAsPostgreSqlWritesThem() {
    Result r = psqlScript("error_messages.sql", "-At");
    assertThat(r.lines()).as(r.describe()).containsExactly("CREATE TABLE");
    assertThat(r.errLines()).as(r.describe()).containsSubsequence(
        "psql:<stdin>:5: ERROR:  22003: integer out of range",
        "psql:<stdin>:6: ERROR:  42883: function no_such_function(integer) does not exist",
        "HINT:  No function matches the given name and argument types. You might need to add explicit type casts.",
        "psql:<stdin>:7: ERROR:  23502: null value in column \"name\" of relation \"errmsg\" violates not-null constraint",
        "DETAIL:  Failing row contains (2, null).",
        "psql:<stdin>:8: ERROR:  22P02: invalid input syntax for type integer: \"abc\"",
        "psql:<stdin>:9: ERROR:  22008: date/time field value out of range: \"2024-02-30\"");
  }

  @Test
  void stopsAtTheFirstErrorWithOnErrorStop() {
    Result r = psql("-At", "-v", "ON_ERROR_STOP=1", "-c", "SELECT 1", "-c", "SELECT 1/0", "-c", "SELECT 3");
    assertThat(r.exit()).as(r.describe()).isEqualTo(1);
    assertThat(r.lines()).containsExactly("1");
    assertThat(r.err()).contains("ERROR:  division by zero");
  }

  @Test
  void severalStatementsOnOneLine() {
    Result r = psqlScript("multi.sql", "-At").assertSuccess();
    assertThat(r.err()).as(r.describe()).isEmpty();
    assertThat(r.lines()).as(r.describe()).containsExactly("CREATE TABLE", "INSERT 0 2", "2", "1", "two", "a", "b");
    // -c sends the line as one simple Query message: psql shows every result; an error ends the rest
    Result c = psql("-At", "-c", "SELECT 1 AS a; SELECT 'b' AS b; SELECT count(*) FROM multi");
    assertThat(c.assertSuccess().lines()).as(c.describe()).containsExactly("1", "b", "2");
    Result e = psql("-At", "-c", "SELECT 1; SELECT 1/0; SELECT 3");
    assertThat(e.exit()).as(e.describe()).isEqualTo(1);
    assertThat(e.lines()).as(e.describe()).containsExactly("1");
    assertThat(e.err()).as(e.describe()).contains("ERROR:  division by zero");
  }

  @Test
  void expandedOutput() {
    Result r = psqlScript("expanded.sql").assertSuccess();
    assertThat(r.err()).as(r.describe()).isEmpty();
    assertThat(r.lines()).as(r.describe()).containsExactly(
        "CREATE TABLE",
        "INSERT 0 2",
        "Expanded display is on.",
        "-[ RECORD 1 ]-",
        "id    | 1",
        "name  | first",
        "price | 1.50",
        "note  | ",
        "-[ RECORD 2 ]-",
        "id    | 2",
        "name  | second",
        "price | 22.25",
        "note  | x",
        "",
        "Expanded display is off.",
        " id |  name  | price | note ",
        "----+--------+-------+------",
        "  1 | first  |  1.50 | ",
        "  2 | second | 22.25 | x",
        "(2 rows)",
        "");
    Result x = psql("-At", "-x", "-c", "SELECT id, name FROM wide WHERE id = 2");
    assertThat(x.assertSuccess().lines()).containsExactly("id|2", "name|second");
  }

  /** current_database(), current_user, version(), server_version_num: what tools ask on connecting. */
  @Test
  void sessionFunctionsAnswerAsPostgreSql() {
    Result r = psqlScript("session.sql", "-At");
    assertThat(r.err()).as(r.describe()).isEmpty();
    assertThat(r.lines()).as(r.describe()).containsExactly(
        "floe|tester|tester|public",
        "t",
        "t",
        "\"$user\", public",
        "t",
        // Known difference (docs/sql.md): numeric division gives double precision; PostgreSQL prints
        // 3.5000000000000000|0.33333333333333333333
        "3.5|0.3333333333333333");
  }

  /** psql's describing meta-commands: they query pg_catalog (see psql -E). */
  @Test
  void describeMetaCommands() {
    Result create = psqlScript("describe.sql", "-At").assertSuccess();
    assertThat(create.lines()).containsExactly("CREATE TABLE");
    Result l = psql("-At", "-c", "\\l");
    assertThat(l.err()).as(l.describe()).isEmpty();
    assertThat(l.lines()).as(l.describe()).anyMatch(s -> s.startsWith("floe|") && s.contains("|UTF8|"));
    Result dn = psql("-At", "-c", "\\dn");
    assertThat(dn.err()).as(dn.describe()).isEmpty();
    assertThat(dn.lines()).as(dn.describe()).anyMatch(s -> s.startsWith("public|"));
    Result dt = psql("-At", "-c", "\\dt");
    assertThat(dt.err()).as(dt.describe()).isEmpty();
    assertThat(dt.lines()).as(dt.describe()).anyMatch(s -> s.startsWith("public|t|table|"));
    List<String> columns = List.of(
        "id|integer||not null|",
        "name|text|||",
        "price|numeric(10,2)|||",
        "born|date|||",
        "ts|timestamp without time zone|||",
        "tz|timestamp with time zone|||",
        "ok|boolean|||",
        "d|double precision|||",
        "big|bigint|||",
        "u|uuid|||",
        "b|bytea|||");
    Result d = psql("-At", "-c", "\\d t");
    assertThat(d.err()).as(d.describe()).isEmpty();
    assertThat(d.lines()).as(d.describe()).startsWith(columns.toArray(String[]::new));
    Result aligned = psql("-c", "\\d t");
    assertThat(aligned.err()).as(aligned.describe()).isEmpty();
    assertThat(aligned.lines()).as(aligned.describe()).contains(
        "                           Table \"public.t\"",
        " Column |            Type             | Collation | Nullable | Default ",
        " id     | integer                     |           | not null | ",
        " tz     | timestamp with time zone    |           |          | ");
    Result dplus = psql("-At", "-c", "\\d+ t");
    assertThat(dplus.err()).as(dplus.describe()).isEmpty();
    assertThat(dplus.lines()).as(dplus.describe()).hasSizeGreaterThanOrEqualTo(columns.size());
    for (int i = 0; i < columns.size(); i++) {
      // \d+ adds Storage, Compression, Stats target and Description after the same five columns
      assertThat(dplus.lines().get(i)).as(dplus.describe()).startsWith(columns.get(i) + "|");
    }
  }

  @Test
  void copyInAndOut() {
    Result r = psqlScript("copy.sql", "-At");
    assertThat(r.err()).as(r.describe()).isEmpty();
    assertThat(r.lines()).as(r.describe()).containsExactly(
        "CREATE TABLE",
        "COPY 3",
        "COPY 1",
        "4|-0.50",
        "1\tone\t1.50\t2024-01-01",
        "2\t\\N\t\\N\t\\N",
        "3\ttab\\there\t-2.00\t1999-12-31",
        "4\tquoted, comma\t\\N\t\\N",
        "id,name",
        "2,",
        "3,tab\there",
        "4,\"quoted, comma\"",
        "1,2024-01-01",
        "2,");
  }

  /**
   * psql's \\d of tables with UNIQUE, CHECK and FOREIGN KEY constraints: the catalogs answer psql's own
   * queries (pg_constraint, relchecks, relhastriggers, pg_partition_ancestors) so that it prints what it
   * prints against PostgreSQL 15, byte for byte.
   */
  @Test
  void describeShowsConstraintsAsAgainstPostgres() {
    Result r = psqlScript("describe_constraints.sql");
    assertThat(r.err()).as(r.describe()).isEmpty();
    assertThat(r.out()).as(r.describe()).isEqualTo("""
        CREATE TABLE
        CREATE TABLE
                       Table "public.teams"
         Column |  Type   | Collation | Nullable | Default\s
        --------+---------+-----------+----------+---------
         id     | integer |           | not null |\s
         code   | text    |           |          |\s
         size   | integer |           |          |\s
        Indexes:
            "teams_pkey" PRIMARY KEY, btree (id)
            "teams_code_key" UNIQUE CONSTRAINT, btree (code)
        Check constraints:
            "teams_size_check" CHECK (size >= 0)
        Referenced by:
            TABLE "players" CONSTRAINT "players_team_fkey" FOREIGN KEY (team) REFERENCES teams(id)
        
                      Table "public.players"
         Column |  Type   | Collation | Nullable | Default\s
        --------+---------+-----------+----------+---------
         id     | integer |           | not null |\s
         team   | integer |           |          |\s
        Indexes:
            "players_pkey" PRIMARY KEY, btree (id)
        Foreign-key constraints:
            "players_team_fkey" FOREIGN KEY (team) REFERENCES teams(id)
        
        DROP TABLE
        DROP TABLE
        """);
  }
}
