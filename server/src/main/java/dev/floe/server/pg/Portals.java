package dev.floe.server.pg;

import dev.floe.Column;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A connection's prepared statements (Parse) and portals (Bind), by name, the unnamed ones under "". The
 * extended query protocol fills them; DEALLOCATE, DISCARD ALL, a simple query and the end of a transaction
 * empty them; while a portal holds an open result ({@link #anyOpen}), other statements run in helper
 * sessions.
 */
final class Portals {
  /** A bound statement, ready to execute (and maybe partly executed: suspended). */
  static final class Portal {
    final Prepared statement;
    final String sql;
    final Prepared.Bound bound;
    final boolean[] binaryResults;
    final boolean allBinary;
    Reply reply;
    /** The result's columns and origins, kept after the rows are sent (Describe of a finished portal). */
    List<Column> columns = List.of();
    java.util.function.IntFunction<java.util.Optional<dev.floe.ColumnOrigin>> origins = k -> java.util.Optional.empty();
    boolean done;

    Portal(Prepared statement, Prepared.Bound bound, boolean[] binaryResults, boolean allBinary) {
      this.statement = statement;
      this.bound = bound;
      this.sql = bound.sql();
      this.binaryResults = binaryResults;
      this.allBinary = allBinary;
    }

    void close() {
      if (reply != null) {
        reply.close();
        reply = null;
      }
    }
  }

  private final Map<String, Prepared> statements = new HashMap<>();
  private final Map<String, Portal> portals = new HashMap<>();

  /** The prepared statement {@code name}, or null. */
  Prepared statement(String name) {
    return statements.get(name);
  }

  boolean hasStatement(String name) {
    return statements.containsKey(name);
  }

  void putStatement(String name, Prepared p) {
    statements.put(name, p);
  }

  /** Forgets the prepared statement {@code name}; false when there was none. */
  boolean removeStatement(String name) {
    return statements.remove(name) != null;
  }

  /** DEALLOCATE ALL: forgets every named prepared statement (the unnamed one stays). */
  void removeNamedStatements() {
    statements.keySet().removeIf(k -> !k.isEmpty());
  }

  /** DISCARD ALL: forgets every prepared statement and closes every portal. */
  void discardAll() {
    statements.clear();
    closeAll();
  }

  /** The portal {@code name}, or null. */
  Portal portal(String name) {
    return portals.get(name);
  }

  boolean hasPortal(String name) {
    return portals.containsKey(name);
  }

  /** Keeps a bound portal under {@code name}, closing one it replaces. */
  void putPortal(String name, Portal portal) {
    Portal old = portals.put(name, portal);
    if (old != null) {
      old.close();
    }
  }

  /** Closes the portal {@code name}, if there is one. */
  void closePortal(String name) {
    Portal p = portals.remove(name);
    if (p != null) {
      p.close();
    }
  }

  /**
   * Whether a portal holds an open result (suspended, or described and not yet run to its end): the engine
   * session holds one open result at a time.
   */
  boolean anyOpen() {
    for (Portal p : portals.values()) {
      if (p.reply != null) {
        return true;
      }
    }
    return false;
  }

  /** Closes every portal (a Sync or a Query outside a block, DISCARD ALL, the connection's end). */
  void closeAll() {
    for (Portal p : portals.values()) {
      p.close();
    }
    portals.clear();
  }
}
