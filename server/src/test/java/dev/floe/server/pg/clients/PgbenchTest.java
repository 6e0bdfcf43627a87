package dev.floe.server.pg.clients;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.server.pg.clients.ClientHarness.Result;
import dev.floe.server.pg.clients.ClientHarness.Server;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * pgbench (PostgreSQL 15's) with custom scripts (src/test/resources/clients/pgbench) against a Floe server,
 * without its vacuum step (-n), for a fixed number of transactions per client (-t) so that the run is short
 * and its count exact. Query modes: simple (values substituted into the text), extended (unnamed statements
 * with text parameters of unspecified type) and prepared (named statements, parsed once per connection).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PgbenchTest {
  @TempDir
  static Path dir;
  Server floe;
  String pgbench;

  @BeforeAll
  void start() throws Exception {
    pgbench = ClientHarness.requireTool("pgbench");
    floe = new Server(dir.resolve("wh"));
    floe.execute("CREATE TABLE pgb_accounts (aid integer PRIMARY KEY, abalance integer NOT NULL, filler text)",
        "INSERT INTO pgb_accounts SELECT i, 0, 'filler ' || i FROM generate_series(1, 1000) AS g(i)");
  }

  @AfterAll
  void stop() {
    if (floe != null) {
      floe.close();
    }
  }

  private Result pgbench(String script, String mode, int clients, int transactions, String... more) {
    List<String> cmd = ClientHarness.args(pgbench, "-n", "-M", mode, "-f",
        ClientHarness.script("pgbench/" + script).toString(), "-c", Integer.toString(clients), "-j",
        Integer.toString(clients), "-t", Integer.toString(transactions));
    cmd.addAll(List.of(more));
    return ClientHarness.run(cmd, floe.env(), null, Duration.ofSeconds(120));
  }

  /** Two clients, 300 point selects each. */
  @ParameterizedTest
  @ValueSource(strings = {"simple", "extended", "prepared"})
  void selectScript(String mode) {
    Result r = pgbench("select.sql", mode, 2, 300);
    assertThat(r.exit()).as(r.describe()).isZero();
    assertThat(r.err()).as(r.describe()).doesNotContain("error");
    assertThat(r.lines()).as(r.describe()).contains(
        "query mode: " + mode,
        "number of transactions actually processed: 600/600",
        "number of failed transactions: 0 (0.000%)");
  }

  /**
   * BEGIN; UPDATE ... SET abalance = abalance + :delta; SELECT; END. Two clients updating different rows of one
   * table never fail on PostgreSQL (READ COMMITTED); on Floe a concurrent commit to the same table is a
   * serialization failure (40001), which pgbench retries with --max-tries (and counts as failed without it).
   * In extended and prepared modes the parameter of {@code abalance + $1} arrives with no type (OID 0):
   * PostgreSQL takes the integer of the other operand.
   */
  @ParameterizedTest
  @ValueSource(strings = {"simple", "extended", "prepared"})
  void updateScriptInTransactionBlocks(String mode) {
    Result r = pgbench("select_update.sql", mode, 2, 20, "--max-tries=1000", "--failures-detailed");
    assertThat(r.exit()).as(r.describe()).isZero();
    assertThat(r.err()).as(r.describe()).doesNotContain("error");
    assertThat(r.lines()).as(r.describe()).contains(
        "query mode: " + mode,
        "number of transactions actually processed: 40/40",
        "number of failed transactions: 0 (0.000%)");
  }
}
