package dev.floe.cli;

import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What can be checked before Debezium starts, each failure with its own message: the connection, logical
 * WAL, the role's REPLICATION, the table, its key, and that the Floe table has each of its columns.
 */
final class PostgresPrecheck {
  /** How long a slot in use is waited for. */
  static final long SLOT_WAIT_MS = 10_000;

  private PostgresPrecheck() {}

  /** Each check in turn, on one connection; the first that fails is the error. The source's generated columns. */
  static List<String> run(PostgresSource source, String role, String password, String schema, String name, String slot,
      String publication, Optional<String> resumed, List<Column> columns, String table) {
    Connection c;
    try {
      c = source.connect(role, password);
    } catch (SQLException e) {
      throw new FloeException(e.getSQLState() != null ? e.getSQLState() : SqlState.CONNECTION_EXCEPTION,
          "could not connect to PostgreSQL at " + source + " as " + role + ": " + PostgresSource.describe(e), e);
    }
    try (c) {
      walLevel(c);
      replication(c, role);
      slotFree(c, slot);
      resumable(c, slot, resumed, table);
      long oid = relation(c, schema, name);
      key(c, oid, schema, name);
      partitionRoot(c, oid, schema, name, publication);
      return columns(c, oid, schema, name, columns, table);
    } catch (SQLException e) {
      throw new FloeException(e.getSQLState() != null ? e.getSQLState() : SqlState.CONNECTION_EXCEPTION,
          "could not check PostgreSQL table " + schema + "." + name + " at " + source + ": " + PostgresSource.describe(e), e);
    }
  }

  private static void walLevel(Connection c) throws SQLException {
    String level = single(c, "SHOW wal_level");
    if (!"logical".equals(level)) {
      throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "PostgreSQL's wal_level is " + level
          + ": following a table needs logical", null, "set wal_level = logical (ALTER SYSTEM SET wal_level = "
          + "logical) and restart PostgreSQL", 0, null);
    }
  }

  private static void replication(Connection c, String role) throws SQLException {
    if (!"t".equals(single(c, "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user"))) {
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "PostgreSQL role \"" + role + "\" may not "
          + "replicate", null, "ALTER ROLE " + role + " WITH REPLICATION", 0, null);
    }
  }

  /**
   * The slot, if it exists, is not in use: a follower stopped a moment ago may still hold it while its
   * server process notices (waited for up to {@link #SLOT_WAIT_MS}), another that runs holds it for good.
   */
  private static void slotFree(Connection c, String slot) throws SQLException {
    long deadline = System.nanoTime() + SLOT_WAIT_MS * 1_000_000L;
    try (PreparedStatement s = c.prepareStatement("SELECT active_pid, plugin FROM pg_replication_slots "
        + "WHERE slot_name = ?")) {
      s.setString(1, slot);
      while (true) {
        String pid;
        try (ResultSet r = s.executeQuery()) {
          if (!r.next()) {
            return;
          }
          if (!"pgoutput".equals(r.getString(2))) {
            throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "replication slot \"" + slot
                + "\" decodes with " + r.getString(2) + ", not pgoutput", null, "give another --slot", 0, null);
          }
          pid = r.getString(1);
        }
        if (pid == null) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new FloeException(SqlState.OBJECT_IN_USE, "replication slot \"" + slot + "\" is active for PID "
              + pid, null, "another follower uses it: stop it, or give this one its own --slot", 0, null);
        }
        sleep(250);
      }
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FloeException(SqlState.QUERY_CANCELED, "canceling follow: interrupted");
    }
  }

  /**
   * A table that followed the slot before resumes from where its last batch ended, which the slot must
   * still hold: it never moves past a committed batch, so a slot that is gone, or past that position, was
   * dropped (and perhaps made again) or lost its WAL, and the changes in between are lost.
   */
  private static void resumable(Connection c, String slot, Optional<String> resumed, String table)
      throws SQLException {
    if (resumed.isEmpty()) {
      return;
    }
    long processed = DebeziumPosition.parse(resumed.get()).map(n -> n.path("offset").path("lsn_proc").asLong(0)).orElse(0L);
    String lsn = DebeziumPosition.lsnOf(resumed.get());
    String hint = "changes after it are lost to this slot: to start again with a snapshot, make the table afresh "
        + "(DROP TABLE and CREATE TABLE), or follow into another table";
    try (PreparedStatement s = c.prepareStatement("SELECT restart_lsn - '0/0'::pg_lsn, wal_status FROM "
        + "pg_replication_slots WHERE slot_name = ?")) {
      s.setString(1, slot);
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) {
          throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "table \"" + table + "\" followed "
              + "replication slot \"" + slot + "\" up to " + lsn + ", and the slot is gone", null, hint, 0, null);
        }
        boolean lost = "lost".equals(r.getString(2));
        if (lost || processed > 0 && r.getBigDecimal(1) != null && r.getBigDecimal(1).longValue() > processed) {
          throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "replication slot \"" + slot
              + "\" no longer holds the changes after " + lsn + ", where table \"" + table + "\" is"
              + (lost ? " (PostgreSQL removed its WAL: max_slot_wal_keep_size)" : ""), null, hint, 0, null);
        }
      }
    }
  }

  private static long relation(Connection c, String schema, String name) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("SELECT c.oid, c.relkind FROM pg_class c JOIN pg_namespace n "
        + "ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?")) {
      s.setString(1, schema);
      s.setString(2, name);
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) {
          throw new FloeException(SqlState.UNDEFINED_TABLE, "relation \"" + schema + "." + name + "\" does not "
              + "exist in PostgreSQL", null, "--source-table names it as PostgreSQL stores it (lower case unless "
              + "it was created quoted)", 0, null);
        }
        if (!Set.of("r", "p").contains(r.getString(2))) {
          throw new FloeException(SqlState.WRONG_OBJECT_TYPE, "\"" + schema + "." + name + "\" is not a table in "
              + "PostgreSQL");
        }
        return r.getLong(1);
      }
    }
  }

  /**
   * A partitioned table's publication, if it exists already, publishes its partitions' changes under the
   * table's name ({@code publish_via_partition_root}): otherwise they come under the partitions' names,
   * which the follower does not follow, and would be lost. One the follower makes is made so.
   */
  private static void partitionRoot(Connection c, long oid, String schema, String name, String publication)
      throws SQLException {
    if (!"p".equals(single(c, "SELECT relkind FROM pg_class WHERE oid = " + oid))) {
      return;
    }
    try (PreparedStatement s = c.prepareStatement("SELECT pubviaroot FROM pg_publication WHERE pubname = ?")) {
      s.setString(1, publication);
      try (ResultSet r = s.executeQuery()) {
        if (r.next() && !r.getBoolean(1)) {
          throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "publication \"" + publication
              + "\" publishes the changes of partitioned table \"" + schema + "." + name + "\" under its "
              + "partitions' names, which the follower would not see", null, "ALTER PUBLICATION " + publication
              + " SET (publish_via_partition_root = true)", 0, null);
        }
      }
    }
  }

  /** A primary key, or REPLICA IDENTITY FULL: without either a delete carries no key to fold by. */
  private static void key(Connection c, long oid, String schema, String name) throws SQLException {
    String identity = single(c, "SELECT relreplident FROM pg_class WHERE oid = " + oid);
    String hasKey = single(c, "SELECT count(*) > 0 FROM pg_index WHERE indrelid = " + oid + " AND indisprimary");
    if ("t".equals(hasKey) && ("d".equals(identity) || "f".equals(identity)) || "f".equals(identity)) {
      return;
    }
    throw new FloeException(SqlState.OBJECT_NOT_IN_PREREQUISITE_STATE, "PostgreSQL table \"" + schema + "."
        + name + "\" " + ("t".equals(hasKey) ? "does not log its primary key (REPLICA IDENTITY "
        + ("n".equals(identity) ? "NOTHING" : "USING INDEX") + ")" : "has no primary key")
        + ": its deletes would not say which row went", null, "give it a primary key (and REPLICA IDENTITY "
        + "DEFAULT), or ALTER TABLE " + schema + "." + name + " REPLICA IDENTITY FULL", 0, null);
  }

  /**
   * Each column of the source is one of the table's, but a generated one, which the table must not have:
   * PostgreSQL (before 18) does not publish generated columns, so the follower leaves them out of what it
   * reads, the snapshot too, and a column of the table for one would stay NULL or as the snapshot read it.
   * The generated columns' names.
   */
  private static List<String> columns(Connection c, long oid, String schema, String name, List<Column> columns,
      String table) throws SQLException {
    Set<String> floe = new java.util.HashSet<>();
    columns.forEach(col -> floe.add(col.name()));
    List<String> generated = new java.util.ArrayList<>();
    try (PreparedStatement s = c.prepareStatement("SELECT attname, attgenerated <> '' FROM pg_attribute WHERE "
        + "attrelid = ? AND attnum > 0 AND NOT attisdropped ORDER BY attnum")) {
      s.setLong(1, oid);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          String column = r.getString(1);
          if (r.getBoolean(2)) {
            if (floe.contains(column)) {
              throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "column \"" + column + "\" of PostgreSQL table \""
                  + schema + "." + name + "\" is generated, and PostgreSQL does not publish generated columns", null,
                  "drop it from table \"" + table + "\" (a view can compute it): ALTER TABLE " + table
                  + " DROP COLUMN " + column, 0, null);
            }
            generated.add(column);
          } else if (!floe.contains(column)) {
            throw new FloeException(SqlState.UNDEFINED_COLUMN, "column \"" + column + "\" of PostgreSQL "
                + "table \"" + schema + "." + name + "\" is not a column of table \"" + table + "\"", null,
                "add it: ALTER TABLE " + table + " ADD COLUMN " + column + " ...", 0, null);
          }
        }
      }
    }
    return generated;
  }

  private static String single(Connection c, String sql) throws SQLException {
    try (var s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
      return r.next() ? r.getString(1) : null;
    }
  }
}
