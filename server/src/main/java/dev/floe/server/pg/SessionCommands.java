package dev.floe.server.pg;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.Row;
import dev.floe.Session;
import dev.floe.SessionCommand;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.TransactionState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The statements that act on the connection's session rather than on data, answered here: SET, SHOW, RESET,
 * set_config, SET SESSION CHARACTERISTICS (run-time parameters, {@link Settings}, handed to the engine
 * session for current_setting and the default transaction modes), DISCARD, DEALLOCATE, and SQL cursors
 * (DECLARE, FETCH, MOVE, CLOSE). A cursor runs in a helper engine session of its own, joined to the block,
 * so that other statements can run while it is open; the end of a block closes all but WITH HOLD ones.
 */
final class SessionCommands {
  private final EngineSessions sessions;
  private final Settings settings;
  private final Portals portals;
  /** Open SQL cursors (DECLARE): each runs in an engine session of its own, so other statements can run. */
  private final Map<String, SqlCursor> cursors = new HashMap<>();

  private record SqlCursor(Session session, Reply reply, boolean hold) {
    void close() {
      try {
        reply.close();
      } finally {
        session.close();
      }
    }
  }

  SessionCommands(EngineSessions sessions, Settings settings, Portals portals) {
    this.sessions = sessions;
    this.settings = settings;
    this.portals = portals;
  }

  /** Runs a session command: answered here, with what it changes handed to the engine session. */
  Reply run(SessionCommand c) {
    switch (c.kind()) {
      case SET -> {
        if (c.name().equalsIgnoreCase("role")) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "SET ROLE is not supported");
        }
        settings.set(c.name(), c.value());
        applySearchPath(); // the engine session sees it at once: current_setting(), pg_stat_activity
        return Reply.command(c.tag());
      }
      case SET_CONFIG -> {
        settings.set(c.name(), c.value());
        applySearchPath();
        return Reply.rows("SELECT 1", List.of(Column.result("set_config", SqlType.TEXT)),
            List.<Object[]>of(new Object[] {settings.get(c.name())}));
      }
      case SESSION_CHARACTERISTICS -> {
        if (c.isolation() != null) {
          settings.set("default_transaction_isolation", c.isolation());
        }
        if (c.readOnly() != null) {
          settings.set("default_transaction_read_only", c.readOnly() ? "on" : "off");
        }
        applySearchPath(); // hands the defaults to the engine session, which opens blocks with them
        return Reply.command(c.tag());
      }
      case RESET -> {
        if (c.name() == null) {
          settings.resetAll();
        } else {
          settings.set(c.name(), null);
        }
        applySearchPath();
        return Reply.command(c.tag());
      }
      case SHOW -> {
        if (c.name() == null) {
          List<Column> cols = List.of(Column.result("name", SqlType.TEXT), Column.result("setting", SqlType.TEXT),
              Column.result("description", SqlType.TEXT));
          List<Object[]> rows = new ArrayList<>();
          for (String[] r : settings.all()) {
            rows.add(new Object[] {r[0], r[1], r[2]});
          }
          return Reply.rows("SHOW", cols, rows);
        }
        String value = settings.get(c.name());
        String column = settings.canonicalName(c.name()).toLowerCase(java.util.Locale.ROOT);
        return Reply.rows("SHOW", List.of(Column.result(column, SqlType.TEXT)), List.<Object[]>of(
            new Object[] {value}));
      }
      case DISCARD_ALL -> {
        if (!sessions.idle()) {
          throw new FloeException(SqlState.ACTIVE_SQL_TRANSACTION, "DISCARD ALL cannot run inside a transaction block");
        }
        settings.resetAll();
        applySearchPath();
        portals.discardAll();
        sessions.session().discardSequences();
        return Reply.command(c.tag());
      }
      case DISCARD_SEQUENCES -> {
        sessions.session().discardSequences();
        return Reply.command(c.tag());
      }
      case DISCARD_PLANS, DISCARD_TEMP -> {
        // Floe keeps no query plans between statements, and sessions have no temporary tables of their own
        return Reply.command(c.tag());
      }
      case DECLARE -> {
        boolean hold = c.hold();
        if (!hold && sessions.idle()) {
          throw new FloeException(SqlState.NO_ACTIVE_SQL_TRANSACTION,
              "DECLARE CURSOR can only be used in transaction blocks");
        }
        if (cursors.containsKey(c.name())) {
          throw new FloeException(SqlState.DUPLICATE_CURSOR, "cursor \"" + c.name() + "\" already exists");
        }
        Session own = sessions.newSession();
        try {
          String query = c.query();
          Reply reply = Reply.of(sessions.timed(() -> own.sql(query)));
          if (!reply.hasRows()) {
            reply.close();
            throw new FloeException(SqlState.INVALID_CURSOR_DEFINITION, "cursor can only scan a query that returns rows");
          }
          cursors.put(c.name(), new SqlCursor(own, reply, hold));
        } catch (RuntimeException e) {
          own.close();
          throw e;
        }
        return Reply.command(c.tag());
      }
      case FETCH, MOVE -> {
        SqlCursor cursor = cursors.get(c.name());
        if (cursor == null) {
          throw new FloeException(SqlState.INVALID_CURSOR_NAME, "cursor \"" + c.name() + "\" does not exist");
        }
        if (c.kind() == SessionCommand.Kind.FETCH) {
          return Reply.limited(cursor.reply(), c.count(), "FETCH");
        }
        long moved = 0;
        Iterator<Row> rows = cursor.reply().rows();
        while (moved < c.count() && sessions.timedNext(rows)) {
          rows.next();
          moved++;
        }
        return Reply.command("MOVE " + moved);
      }
      case CLOSE -> {
        if (c.name() == null) {
          closeCursors(true);
        } else {
          SqlCursor cursor = cursors.remove(c.name());
          if (cursor == null) {
            throw new FloeException(SqlState.INVALID_CURSOR_NAME, "cursor \"" + c.name() + "\" does not exist");
          }
          cursor.close();
        }
        return Reply.command(c.tag());
      }
      case DEALLOCATE -> {
        if (c.name() == null) {
          portals.removeNamedStatements();
        } else if (!portals.removeStatement(c.name())) {
          throw new FloeException(SqlState.INVALID_SQL_STATEMENT_NAME, "prepared statement \"" + c.name()
              + "\" does not exist");
        }
        return Reply.command(c.tag());
      }
      default -> throw new IllegalStateException("unhandled session command " + c);
    }
  }

  /** The open result of the DECLAREd cursor {@code name} (a portal too, for Describe), or null. */
  Reply cursor(String name) {
    SqlCursor cursor = cursors.get(name);
    return cursor == null ? null : cursor.reply();
  }

  /** Closes the cursors a transaction end closes (all but WITH HOLD ones), or all of them. */
  void closeCursors(boolean all) {
    var it = cursors.values().iterator();
    while (it.hasNext()) {
      SqlCursor c = it.next();
      if (all || !c.hold()) {
        it.remove();
        try {
          c.close();
        } catch (RuntimeException ignored) {
          // closing anyway
        }
      }
    }
  }

  /** Hands changed settings to the engine session: the schema names resolve in, current_setting(). */
  private void applySearchPath() {
    Session session = sessions.session();
    if (session != null) {
      session.setCurrentSchema(settings.firstSchema());
      List<String> changed = settings.drainSet();
      if (!changed.isEmpty()) {
        Map<String, String> values = new java.util.LinkedHashMap<>();
        for (String name : changed) {
          values.put(name, settings.get(name));
        }
        session.setSettings(values);
      }
    }
  }

  /**
   * After a statement: the settings that show the block's modes follow the engine's block, and the
   * cursors a block's end closes are closed.
   */
  void transactionChanged(TransactionState before) {
    TransactionState now = sessions.session().transactionState();
    if (now.equals(before)) {
      return;
    }
    if (now.status() == TransactionState.Status.IDLE) {
      settings.set("transaction_isolation", null);
      settings.set("transaction_read_only", null);
      closeCursors(false);
    } else {
      settings.set("transaction_isolation", now.isolation());
      settings.set("transaction_read_only", now.readOnly() ? "on" : "off");
    }
  }
}
