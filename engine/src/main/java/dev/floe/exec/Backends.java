package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.Notice;
import dev.floe.SqlState;
import dev.floe.TransactionState;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.duckdb.DuckDBColumnType;
import org.duckdb.DuckDBFunctions;
import org.duckdb.DuckDBReadableVector;
import org.duckdb.DuckDBScalarFunctionBuilder;

/**
 * The engine's sessions as PostgreSQL's backends, one registry per engine: every session has a backend
 * pid (embedded sessions one of their own, a server connection's sessions the connection's: the
 * connection's own session first, its helper sessions beside it), and what {@code pg_stat_activity} shows of
 * it ({@link Activity}: who, from where, since when, its state and its current or last query).
 * {@code pg_cancel_backend} and {@code pg_terminate_backend} reach a backend's sessions here
 * ({@link #signal}), with PostgreSQL's permission rule over the one superuser Floe knows ({@link #superuser}).
 *
 * <p>Concurrency: the registry is a concurrent map; an {@link Activity}'s fields are volatile, written by
 * its session's thread (its statements) and read by any session's query of {@code pg_stat_activity}.
 */
public final class Backends {
  /** The first pid handed out (PostgreSQL's pids are process ids: never small). */
  private static final int FIRST_PID = 1000;

  private final AtomicInteger nextPid = new AtomicInteger(FIRST_PID);
  /** Every backend's sessions, its own session (the first registered) first. */
  private final Map<Integer, List<SessionContext>> byPid = new ConcurrentHashMap<>();
  private final ReaderPins pins;

  Backends(ReaderPins pins) {
    this.pins = pins;
  }

  /**
   * The role Floe treats as superuser: the warehouse's owner, the one role {@code pg_roles} lists, which
   * embedded sessions (no user set) run as. Every other user is an ordinary role: it may signal only its
   * own backends.
   */
  static boolean superuser(String user) {
    return user == null || user.equals(PgCatalog.OWNER);
  }

  /** A new backend pid, never handed out before in this process. */
  public int newPid() {
    return nextPid.getAndIncrement();
  }

  void register(SessionContext session) {
    byPid.computeIfAbsent(session.activity().pid(), p -> new CopyOnWriteArrayList<>()).add(session);
  }

  void unregister(SessionContext session) {
    byPid.computeIfPresent(session.activity().pid(), (p, sessions) -> {
      sessions.remove(session);
      return sessions.isEmpty() ? null : sessions;
    });
  }

  /** A session takes the pid {@code pid} (a front end's connection's), leaving the one it had. */
  void move(SessionContext session, int pid) {
    unregister(session);
    session.activity().pid = pid;
    register(session);
  }

  /** One backend as pg_stat_activity shows it. */
  record Row(int pid, String user, String database, String applicationName, String clientAddress,
      Integer clientPort, long backendStart, long xactStart, long queryStart, long stateChange, String state,
      String query, Long pinnedSince) {}

  /**
   * Every backend now, by pid: its own session's identity, and the state and query of whichever of its
   * sessions runs a statement (else its own session's).
   */
  List<Row> rows() {
    List<Row> rows = new ArrayList<>();
    for (Map.Entry<Integer, List<SessionContext>> e : byPid.entrySet()) {
      List<SessionContext> sessions = e.getValue();
      if (sessions.isEmpty()) {
        continue;
      }
      Activity own = sessions.get(0).activity();
      Activity shown = own;
      for (SessionContext s : sessions) {
        if (s.activity().state.equals(ACTIVE)) {
          shown = s.activity();
          break;
        }
      }
      rows.add(new Row(e.getKey(), own.user(), own.database, own.applicationName, own.clientAddress,
          own.clientPort, own.backendStart, shown.xactStart, shown.queryStart, shown.stateChange, shown.state,
          shown.query, pins.oldestOf(e.getKey()).orElse(null)));
    }
    rows.sort(java.util.Comparator.comparingInt(Row::pid));
    return rows;
  }

  /**
   * {@code pg_cancel_backend(pid)} ({@code terminate} false): interrupts the statement backend {@code pid}
   * runs, which fails with 57014; {@code pg_terminate_backend(pid)}: ends its sessions (57P01), rolling
   * back its transaction block and releasing what it holds. False, with PostgreSQL's WARNING to the
   * caller, when there is no such backend.
   *
   * @param callerPid the backend asking
   * @throws FloeException 42501 when the caller's role may not signal the backend's, as PostgreSQL decides
   */
  boolean signal(int callerPid, int pid, boolean terminate) {
    // copies: a session leaves its backend's live list as it ends, which terminating it does
    List<SessionContext> caller = List.copyOf(byPid.getOrDefault(callerPid, List.of()));
    List<SessionContext> target = List.copyOf(byPid.getOrDefault(pid, List.of()));
    if (target.isEmpty()) {
      // to the caller's session running the statement that asked
      caller.stream().filter(s -> s.activity().state.equals(ACTIVE)).findFirst()
          .or(() -> caller.stream().findFirst())
          .ifPresent(s -> s.activity().warn(Notice.warning(SqlState.WARNING,
              "PID " + pid + " is not a PostgreSQL server process")));
      return false;
    }
    String callerUser = caller.isEmpty() ? null : caller.get(0).activity().user;
    String targetUser = target.get(0).activity().user;
    if (!superuser(callerUser)) {
      String denied = terminate ? "permission denied to terminate process" : "permission denied to cancel query";
      if (superuser(targetUser)) {
        throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, denied, terminate
            ? "Only roles with the SUPERUSER attribute may terminate processes of roles with the SUPERUSER attribute."
            : "Only roles with the SUPERUSER attribute may cancel queries of roles with the SUPERUSER attribute.",
            null, 0, null);
      }
      if (!callerUser.equals(targetUser)) {
        throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, denied, terminate
            ? "Only roles with privileges of the role whose process is being terminated or with privileges of the "
                + "\"pg_signal_backend\" role may terminate this process."
            : "Only roles with privileges of the role whose query is being canceled or with privileges of the "
                + "\"pg_signal_backend\" role may cancel this query.", null, 0, null);
      }
    }
    for (SessionContext s : target) {
      if (terminate) {
        s.terminate();
      } else {
        s.cancel();
      }
    }
    if (terminate) {
      Runnable told = target.get(0).activity().onTerminate;
      if (told != null) {
        told.run(); // the front end closes its connection
      }
    }
    return true;
  }

  static final String ACTIVE = "active";

  /**
   * What pg_stat_activity shows of one session: written by the session's thread as its statements start
   * and end, read by any thread.
   */
  static final class Activity {
    volatile int pid;
    /** The user a front end logged in as (null: the owner, as for embedded sessions). */
    volatile String user;
    volatile String database;
    /** The front end's application_name setting (empty: none). */
    volatile String applicationName = "";
    volatile String clientAddress;
    volatile Integer clientPort;
    final long backendStart = System.currentTimeMillis();
    volatile long xactStart;
    volatile long queryStart;
    volatile long stateChange = backendStart;
    volatile String state = "idle";
    volatile String query = "";
    /** What the front end does when its session is terminated (closes its connection), or null. */
    volatile Runnable onTerminate;
    /** Warnings raised for this session by a signal it sent, delivered on its own thread. */
    final java.util.Queue<Notice> warnings = new java.util.concurrent.ConcurrentLinkedQueue<>();

    Activity(int pid) {
      this.pid = pid;
    }

    int pid() {
      return pid;
    }

    /** The user pg_stat_activity and the permission checks see. */
    String user() {
      return user == null ? PgCatalog.OWNER : user;
    }

    void warn(Notice n) {
      warnings.add(n);
    }

    /** A statement starts: the backend is active with it; a transaction starts with it unless a block is open. */
    void started(String text, boolean inBlock) {
      long now = System.currentTimeMillis();
      query = text;
      queryStart = now;
      if (!inBlock || xactStart == 0) {
        xactStart = now;
      }
      state = ACTIVE;
      stateChange = now;
    }

    /** Between statements: idle, or idle in its open (or failed) block. */
    void idle(TransactionState t) {
      String now = switch (t.status()) {
        case IDLE -> "idle";
        case IN_BLOCK -> "idle in transaction";
        case FAILED -> "idle in transaction (aborted)";
      };
      if (t.status() == TransactionState.Status.IDLE) {
        xactStart = 0;
      } else if (xactStart == 0) {
        xactStart = System.currentTimeMillis(); // a block begun through the API
      }
      if (!now.equals(state)) {
        state = now;
        stateChange = System.currentTimeMillis();
      }
    }
  }

  /**
   * Registers {@code floe_signal_backend(pid, terminate, caller) -> boolean} in the DuckDB instance of
   * {@code conn}, behind the pg_catalog macros {@code pg_cancel_backend} and {@code pg_terminate_backend}.
   */
  void register(Connection conn) throws SQLException {
    try (DuckDBScalarFunctionBuilder b = DuckDBFunctions.scalarFunction()) {
      b.withName("floe_signal_backend")
          .withParameters(DuckDBColumnType.INTEGER, DuckDBColumnType.BOOLEAN, DuckDBColumnType.INTEGER)
          .withReturnType(DuckDBColumnType.BOOLEAN).withVolatile().withVectorizedFunction((in, out) -> {
            DuckDBReadableVector pid = in.vector(0);
            DuckDBReadableVector terminate = in.vector(1);
            DuckDBReadableVector caller = in.vector(2);
            for (long r = 0; r < in.rowCount(); r++) {
              if (pid.isNull(r)) {
                out.setNull(r); // PostgreSQL's functions are strict
                continue;
              }
              try {
                out.setBoolean(r, signal(caller.isNull(r) ? 0 : caller.getInt(r), pid.getInt(r),
                    terminate.getBoolean(r)));
              } catch (FloeException e) {
                // carried out of DuckDB with its SQLSTATE and DETAIL (DuckErrors)
                throw new IllegalArgumentException(DuckErrors.PREFIX + e.sqlState() + ":" + e.getMessage()
                    + e.detail().map(d -> "\u0001" + d).orElse(""));
              }
            }
          }).register(conn);
    }
  }
}
