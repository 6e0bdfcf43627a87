package dev.floe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.testing.Rows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sessions as PostgreSQL's backends (docs/activity.md): {@code pg_stat_activity} shows every session, its
 * state, query and the versions it pins; {@code pg_cancel_backend} stops a backend's statement (57014),
 * {@code pg_terminate_backend} ends the session (57P01) and lets go of what it held, so expiry and orphan
 * removal can take its files; {@code floe_reader_holds} lists the holds.
 */
class ActivityTest {
  /** A query DuckDB takes minutes over: something to cancel. */
  private static final String SLOW = "SELECT sum(hash(i)) FROM range(100000000000) r(i)";

  @TempDir
  Path dir;

  private static void exec(Session s, String sql) {
    s.sql(sql).close();
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(10);
    }
  }

  /** Runs {@code sql} on another thread; the outcome is "ok" or "SQLSTATE message". */
  private static CompletableFuture<String> runAsync(Session s, String sql) {
    return CompletableFuture.supplyAsync(() -> {
      try (Result r = s.sql(sql)) {
        r.forEach(row -> { });
        return "ok";
      } catch (FloeException e) {
        return e.sqlState() + " " + e.getMessage();
      }
    });
  }

  private static List<String> activity(Session s, int pid) {
    return Rows.of(s, "SELECT state, query, xact_start IS NOT NULL, floe_pinned_since IS NOT NULL, backend_type "
        + "FROM pg_stat_activity WHERE pid = " + pid);
  }

  @Test
  void pgStatActivityShowsEachSessionsStateAndQuery() throws Exception {
    try (Database db = Floe.open(dir); Session a = db.connect(); Session b = db.connect()) {
      exec(a, "CREATE TABLE t (id int)");
      exec(a, "INSERT INTO t VALUES (1), (2)");
      assertThat(a.backendPid()).isNotEqualTo(b.backendPid());
      assertThat(activity(b, a.backendPid())).containsExactly("idle|INSERT INTO t VALUES (1), (2)|false|false|client backend");
      assertThat(Rows.of(a, "SELECT pg_backend_pid()")).containsExactly(Integer.toString(a.backendPid()));

      exec(a, "BEGIN");
      assertThat(Rows.of(a, "SELECT count(*) FROM t")).containsExactly("2");
      assertThat(activity(b, a.backendPid())).containsExactly("idle in transaction|SELECT count(*) FROM t|true|true|"
          + "client backend");
      assertThat(Rows.of(b, "SELECT xact_start <= query_start, query_start <= state_change FROM pg_stat_activity "
          + "WHERE pid = " + a.backendPid())).containsExactly("true|true");
      assertThatThrownBy(() -> exec(a, "SELECT 1/0")).isInstanceOf(FloeException.class);
      assertThat(activity(b, a.backendPid())).first().asString().startsWith("idle in transaction (aborted)|SELECT 1/0");
      exec(a, "ROLLBACK");
      assertThat(activity(b, a.backendPid())).containsExactly("idle|ROLLBACK|false|false|client backend");

      // the querying session sees itself running its own query
      String self = "SELECT state, query, usename, datname FROM pg_stat_activity WHERE pid = pg_backend_pid()";
      assertThat(Rows.of(b, self)).containsExactly("active|" + self + "|floe|floe");
      // PostgreSQL's columns, in order, then Floe's
      try (Result r = b.sql("SELECT * FROM pg_catalog.pg_stat_activity")) {
        assertThat(r.columns()).extracting(Column::name).containsExactly("datid", "datname", "pid", "leader_pid",
            "usesysid", "usename", "application_name", "client_addr", "client_hostname", "client_port",
            "backend_start", "xact_start", "query_start", "state_change", "wait_event_type", "wait_event", "state",
            "backend_xid", "backend_xmin", "query_id", "query", "backend_type", "floe_pinned_since");
        assertThat(r.columns().get(10).type()).isEqualTo(SqlType.TIMESTAMPTZ);
        assertThat(r.columns().get(2).type()).isEqualTo(SqlType.INTEGER);
      }
    }
  }

  @Test
  void cancelStopsTheBackendsRunningStatement() throws Exception {
    try (Database db = Floe.open(dir); Session a = db.connect(); Session b = db.connect()) {
      CompletableFuture<String> slow = runAsync(a, SLOW);
      await(() -> Rows.of(b, "SELECT state FROM pg_stat_activity WHERE pid = " + a.backendPid())
          .equals(List.of("active")), "the slow query to run");
      assertThat(Rows.of(b, "SELECT query FROM pg_stat_activity WHERE pid = " + a.backendPid()))
          .containsExactly(SLOW);
      assertThat(Rows.of(b, "SELECT pg_cancel_backend(" + a.backendPid() + ")")).containsExactly("true");
      assertThat(slow.get(30, TimeUnit.SECONDS)).isEqualTo("57014 canceling statement due to user request");
      // the session goes on
      assertThat(Rows.of(a, "SELECT 1")).containsExactly("1");
    }
  }

  @Test
  void terminateEndsARunningStatementAndTheSession() throws Exception {
    try (Database db = Floe.open(dir); Session a = db.connect(); Session b = db.connect()) {
      CompletableFuture<String> slow = runAsync(a, SLOW);
      await(() -> Rows.of(b, "SELECT state FROM pg_stat_activity WHERE pid = " + a.backendPid())
          .equals(List.of("active")), "the slow query to run");
      assertThat(Rows.of(b, "SELECT pg_terminate_backend(" + a.backendPid() + ")")).containsExactly("true");
      assertThat(slow.get(30, TimeUnit.SECONDS)).isEqualTo("57P01 terminating connection due to administrator command");
      assertThat(a.terminated()).isTrue();
      assertThatThrownBy(() -> exec(a, "SELECT 1")).isInstanceOf(FloeException.class)
          .extracting(e -> ((FloeException) e).sqlState()).isEqualTo(SqlState.ADMIN_SHUTDOWN);
      assertThat(Rows.of(b, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + a.backendPid()))
          .containsExactly("0");
    }
  }

  @Test
  void aTerminatedBlockLetsGoOfItsFilesWhichExpiryAndOrphanRemovalThenDelete() throws Exception {
    try (Database db = Floe.open(dir); Session a = db.connect(); Session b = db.connect()) {
      exec(b, "CREATE TABLE p (id int, v text)");
      for (int i = 0; i < 3; i++) {
        exec(b, "INSERT INTO p SELECT i, 'v' || i FROM range(" + (i * 100) + ", " + (i * 100 + 100) + ") r(i)");
      }
      Path data = dir.resolve("public").resolve("p").resolve("data");
      List<Path> old = files(data);
      assertThat(old).hasSize(3);

      exec(a, "BEGIN");
      assertThat(Rows.of(a, "SELECT count(*), sum(id) FROM p")).containsExactly("300|44850");
      assertThat(Rows.of(b, "SELECT holder, table_name, since <= now(), age >= INTERVAL '0 seconds' "
          + "FROM floe_reader_holds WHERE pid = " + a.backendPid())).containsExactly("transaction block|null|true|true");
      assertThat(Rows.of(b, "SELECT floe_pinned_since = (SELECT min(since) FROM floe_reader_holds WHERE pid = "
          + a.backendPid() + ") FROM pg_stat_activity WHERE pid = " + a.backendPid())).containsExactly("true");

      // the table is rewritten, its history expired and its orphans removed with no grace at all
      exec(b, "ALTER TABLE p EXECUTE optimize");
      Thread.sleep(5);
      exec(b, "ALTER TABLE p EXECUTE expire_snapshots(retention_threshold => '0s')");
      exec(b, "ALTER TABLE p EXECUTE remove_orphan_files(retention_threshold => '0s', dry_run => 'false')");
      assertThat(files(data)).containsAll(old);
      // the block reads all its rows, from its own files
      assertThat(Rows.of(a, "SELECT count(*), sum(id), min(v) FROM p")).containsExactly("300|44850|v0");

      assertThat(Rows.of(b, "SELECT pg_terminate_backend(" + a.backendPid() + ")")).containsExactly("true");
      assertThat(Rows.of(b, "SELECT count(*) FROM floe_reader_holds WHERE pid = " + a.backendPid()))
          .containsExactly("0");
      Thread.sleep(5);
      exec(b, "ALTER TABLE p EXECUTE expire_snapshots(retention_threshold => '0s')");
      exec(b, "ALTER TABLE p EXECUTE remove_orphan_files(retention_threshold => '0s', dry_run => 'false')");
      assertThat(files(data)).doesNotContainAnyElementsOf(old);
      assertThat(Rows.of(b, "SELECT count(*), sum(id) FROM p")).containsExactly("300|44850");
      assertThatThrownBy(() -> exec(a, "SELECT count(*) FROM p")).isInstanceOf(FloeException.class)
          .hasMessage("terminating connection due to administrator command");
    }
  }

  private static List<Path> files(Path dir) throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(f -> f.toString().endsWith(".parquet")).toList();
    }
  }

  @Test
  void anUnknownPidIsAWarningAndFalse() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      List<Notice> notices = new CopyOnWriteArrayList<>();
      s.onNotice(notices::add);
      assertThat(Rows.of(s, "SELECT pg_cancel_backend(999999), pg_terminate_backend(999998)"))
          .containsExactly("false|false");
      assertThat(notices).extracting(Notice::severity, Notice::sqlState, Notice::message).containsExactlyInAnyOrder(
          org.assertj.core.groups.Tuple.tuple("WARNING", "01000", "PID 999999 is not a PostgreSQL server process"),
          org.assertj.core.groups.Tuple.tuple("WARNING", "01000", "PID 999998 is not a PostgreSQL server process"));
      assertThat(Rows.of(s, "SELECT pg_cancel_backend(NULL) IS NULL")).containsExactly("true");
    }
  }

  @Test
  void onlyASuperuserSignalsOtherRolesBackends() throws Exception {
    try (Database db = Floe.open(dir); Session owner = db.connect(); Session alice = db.connect();
        Session alice2 = db.connect(); Session bob = db.connect()) {
      alice.setUser("alice");
      alice2.setUser("alice");
      bob.setUser("bob");
      assertThat(Rows.of(owner, "SELECT usename FROM pg_stat_activity WHERE pid = " + alice.backendPid()))
          .containsExactly("alice");
      assertThatThrownBy(() -> Rows.of(bob, "SELECT pg_cancel_backend(" + alice.backendPid() + ")"))
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo("42501");
            assertThat(e.getMessage()).isEqualTo("permission denied to cancel query");
            assertThat(e.detail()).contains("Only roles with privileges of the role whose query is being canceled "
                + "or with privileges of the \"pg_signal_backend\" role may cancel this query.");
          });
      assertThatThrownBy(() -> Rows.of(bob, "SELECT pg_terminate_backend(" + owner.backendPid() + ")"))
          .isInstanceOfSatisfying(FloeException.class, e -> {
            assertThat(e.sqlState()).isEqualTo("42501");
            assertThat(e.getMessage()).isEqualTo("permission denied to terminate process");
            assertThat(e.detail()).contains("Only roles with the SUPERUSER attribute may terminate processes of "
                + "roles with the SUPERUSER attribute.");
          });
      // a role signals its own backends; the superuser anyone's
      assertThat(Rows.of(alice2, "SELECT pg_cancel_backend(" + alice.backendPid() + ")")).containsExactly("true");
      assertThat(Rows.of(owner, "SELECT pg_terminate_backend(" + bob.backendPid() + ")")).containsExactly("true");
      assertThat(bob.terminated()).isTrue();
      assertThat(Rows.of(alice, "SELECT 1")).containsExactly("1");
    }
  }

  @Test
  void floeMaintenanceRunsShowsTheMaintainersSteps() throws Exception {
    try (Database db = Floe.open(dir); Session s = db.connect()) {
      try (Result r = s.sql("SELECT * FROM floe_maintenance_runs")) {
        assertThat(r.columns()).extracting(Column::name).containsExactly("started_at", "table_name", "action",
            "trigger", "files_removed", "files_added", "bytes_removed", "bytes_added", "snapshots_expired", "duration",
            "outcome");
        assertThat(r.iterator().hasNext()).isFalse();
      }
      exec(s, "CREATE TABLE t (id int) WITH ('floe.maintenance.min-files' = '4')");
      for (int i = 0; i < 6; i++) {
        exec(s, "INSERT INTO t VALUES (" + i + ")");
      }
      try (AutoCloseable m = db.startMaintainer(Duration.ofMillis(200))) {
        await(() -> !Rows.of(s, "SELECT 1 FROM floe_maintenance_runs WHERE action = 'compact'").isEmpty(),
            "a compaction");
        assertThat(Rows.of(s, "SELECT table_name, files_removed, files_added, outcome, duration >= INTERVAL '0 seconds' "
            + "FROM pg_catalog.floe_maintenance_runs WHERE action = 'compact'")).containsExactly("public.t|6|1|done|true");
        assertThat(Rows.of(s, "SELECT count(*) FROM floe_maintenance_runs")).containsExactly(
            Integer.toString(db.maintenanceRuns().size()));
      }
    }
  }
}
