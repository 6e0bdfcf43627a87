package dev.floe.server.pg.clients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.floe.server.pg.clients.ClientHarness.Result;
import dev.floe.server.pg.clients.ClientHarness.Server;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * psqlODBC (Debian's odbc-postgresql, the Unicode driver psqlodbcw.so) through unixODBC's isql against a Floe
 * server, with a temporary odbc.ini and odbcinst.ini (ODBCSYSINI/ODBCINI point at them) or a DSN-less
 * connection string (isql -k). isql reads one statement per line from src/test/resources/clients/odbc/*.sql;
 * {@code -b -c -d|} prints each result as a header row and rows separated by '|'. Expected output is what isql
 * prints against PostgreSQL 15.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OdbcTest {
  @TempDir
  static Path dir;
  Server floe;
  String isql;
  String driver;
  Map<String, String> odbcEnv;

  @BeforeAll
  void start() throws Exception {
    isql = ClientHarness.requireTool("isql");
    driver = findDriver();
    floe = new Server(dir.resolve("wh"));
    Path conf = Files.createDirectories(dir.resolve("odbc"));
    Files.writeString(conf.resolve("odbcinst.ini"), "[FloePostgreSQL]\nDriver=" + driver + "\n");
    Files.writeString(conf.resolve("odbc.ini"), "[floe]\nDriver=FloePostgreSQL\nServername=127.0.0.1\nPort="
        + floe.port() + "\nDatabase=floe\nUsername=tester\n");
    odbcEnv = floe.env();
    odbcEnv.put("ODBCSYSINI", conf.toString());
    odbcEnv.put("ODBCINI", conf.resolve("odbc.ini").toString());
  }

  @AfterAll
  void stop() {
    if (floe != null) {
      floe.close();
    }
  }

  /** psqlodbcw.so under /usr/lib/<multiarch>/odbc, where Debian puts it. */
  private static String findDriver() throws IOException {
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/usr/lib"))) {
      for (Path d : dirs) {
        Path so = d.resolve("odbc/psqlodbcw.so");
        if (Files.isRegularFile(so)) {
          return so.toString();
        }
      }
    }
    return fail("psqlODBC (psqlodbcw.so) is not installed: " + ClientHarness.INSTALL_HINT);
  }

  private Result isql(String script, String... options) {
    List<String> cmd = ClientHarness.args(isql, "floe", "-b", "-v", "-c", "-d|");
    cmd.addAll(Arrays.asList(options));
    try {
      return ClientHarness.run(cmd, odbcEnv, Files.readString(ClientHarness.script("odbc/" + script)),
          Duration.ofSeconds(60));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Prepared statements (isql's SQLPrepare + SQLExecute): rows, NULLs, DML, and errors with SQLSTATE. */
  @Test
  void queriesAndErrorsThroughADsn() {
    Result r = isql("queries.sql");
    assertThat(r.exit()).as(r.describe()).isZero();
    assertThat(r.lines()).as(r.describe()).containsExactly(
        "id|name|price|born|ts|ok|d|big",
        "1|it's|12.50|2024-02-29|2024-02-29 13:14:15|1|1.5|9000000000",
        "2|||||||",
        "3|héllo ☃|-0.01|1999-12-31|2000-01-01 00:00:00|0|-0.0025|-1",
        "n|total",
        "3|12.49",
        "[22012]ERROR: division by zero;",
        "Error while executing the query",
        "[42P01]ERROR: relation \"no_such_table\" does not exist;",
        "Error while preparing parameters",
        "[23505]ERROR: duplicate key value violates unique constraint \"od_pkey\"",
        "DETAIL: Key (id)=(1) already exists.;",
        "Error while executing the query",
        "id|name",
        "2|x",
        "3|héllo ☃");
    // isql -e: SQLExecDirect instead of SQLPrepare
    Result direct = ClientHarness.run(List.of(isql, "floe", "-b", "-v", "-c", "-d|", "-e"), odbcEnv,
        "SELECT id, name FROM od WHERE id > 2\n", Duration.ofSeconds(60));
    assertThat(direct.lines()).as(direct.describe()).containsExactly("id|name", "3|héllo ☃");
  }

  @Test
  void dsnLessConnection() {
    String conn = "Driver=" + driver + ";Servername=127.0.0.1;Port=" + floe.port()
        + ";Database=floe;Username=tester";
    Result r = ClientHarness.run(List.of(isql, "-k", conn, "-b", "-v", "-c", "-d|"), floe.env(),
        "SELECT 42 AS answer, 'x' AS letter, CAST(NULL AS integer) AS nothing\n", Duration.ofSeconds(60));
    assertThat(r.exit()).as(r.describe()).isZero();
    assertThat(r.lines()).as(r.describe()).containsExactly("answer|letter|nothing", "42|x|");
  }

  /**
   * isql's {@code help} is SQLTables and {@code help TABLE} is SQLColumns: psqlODBC answers both from
   * pg_catalog (pg_class, pg_namespace, pg_attribute, pg_type, pg_attrdef; see the statements it sends with
   * CommLog=1 or a PostgreSQL statement log).
   */
  @Test
  void catalogFunctionsListTablesAndColumns() {
    Result r = isql("catalog.sql");
    assertThat(r.exit()).as(r.describe()).isZero();
    List<String> lines = r.lines();
    assertThat(lines).as(r.describe()).contains("floe|public|odc|TABLE|");
    int columnsHeader = lines.indexOf(lines.stream().filter(l -> l.startsWith("TABLE_QUALIFIER|TABLE_OWNER|TABLE_NAME"
        + "|COLUMN_NAME|")).findFirst().orElseGet(() -> fail("no SQLColumns header:\n" + r.describe())));
    // TABLE_NAME, COLUMN_NAME, DATA_TYPE, TYPE_NAME, PRECISION, LENGTH, SCALE, RADIX, NULLABLE, then
    // ORDINAL_POSITION (fields 2-10 and 16); the table's OID differs from one server to another
    List<String> columns = lines.subList(columnsHeader + 1, lines.size()).stream()
        .map(l -> l.split("\\|", -1))
        .map(f -> String.join("|", Arrays.copyOfRange(f, 2, 11)) + "|" + f[16])
        .toList();
    assertThat(columns).as(r.describe()).containsExactly(
        "odc|id|4|int4|10|4|0|10|0|1",
        "odc|name|12|varchar|20|80|||0|2",
        "odc|price|2|numeric|10|12|2|10|1|3",
        "odc|born|9|date|10|6|||1|4");
  }
}
