package dev.floe.catalog;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.iceberg.catalog.Namespace;

/**
 * The catalog database {@code catalog.db}: its one SQLite connection, its schema, and the lock on it.
 *
 * <p>The schema is Iceberg's JdbcCatalog's ({@code iceberg_tables} with its {@code iceberg_type}
 * column, {@code iceberg_namespace_properties}: schema version V1), plus Floe's own tables
 * ({@code floe_meta}, {@code floe_file_digests}, {@code floe_sequences}); a writer creates what is
 * missing when it opens the database. SQLite runs in WAL mode (other processes read while Floe writes)
 * with synchronous=FULL (a transaction is durable when its COMMIT returns).
 *
 * <p><b>Concurrency.</b> This object's monitor guards the connection, and it is the catalog's only lock:
 * the connection is used only inside {@link #call}, {@link #run} and {@link #transaction}, which hold the
 * monitor for one statement (or one transaction) and never across calls, so a caller never holds it
 * while doing file I/O or reading Iceberg metadata. The per-table commit lock
 * ({@code commit.Committer.lock}) and {@link FloeTableOperations}' monitor are taken before it, never
 * while it is held.
 */
final class CatalogDatabase {
  private static final String CREATE_TABLES =
      "CREATE TABLE iceberg_tables(catalog_name VARCHAR(255) NOT NULL,table_namespace VARCHAR(255) NOT NULL,"
          + "table_name VARCHAR(255) NOT NULL,metadata_location VARCHAR(1000),previous_metadata_location VARCHAR(1000),"
          + "PRIMARY KEY (catalog_name, table_namespace, table_name))";
  private static final String ADD_TYPE_COLUMN = "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)";
  private static final String CREATE_NAMESPACE_PROPERTIES =
      "CREATE TABLE iceberg_namespace_properties(catalog_name VARCHAR(255) NOT NULL,namespace VARCHAR(255) NOT NULL,"
          + "property_key VARCHAR(255),property_value VARCHAR(1000),PRIMARY KEY (catalog_name, namespace, property_key))";

  private final Connection conn;
  private final boolean readOnly;

  private CatalogDatabase(Connection conn, boolean readOnly) {
    this.conn = conn;
    this.readOnly = readOnly;
  }

  /**
   * Opens (creating if needed) a catalog database file.
   *
   * @param readOnly when true nothing is ever written to it (its schema is not created either)
   */
  static CatalogDatabase open(Path file, boolean readOnly) throws SQLException {
    Properties props = new Properties();
    props.setProperty("busy_timeout", "10000");
    props.setProperty("journal_mode", "WAL");
    props.setProperty("synchronous", "FULL");
    props.setProperty("foreign_keys", "false");
    Connection conn = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath(), props);
    CatalogDatabase db = new CatalogDatabase(conn, readOnly);
    if (!readOnly) {
      try {
        db.createSchemaIfMissing();
      } catch (SQLException | RuntimeException e) {
        try {
          conn.close(); // nothing will use it: the catalog did not open
        } catch (SQLException closing) {
          e.addSuppressed(closing);
        }
        throw e;
      }
    }
    return db;
  }

  private void createSchemaIfMissing() throws SQLException {
    synchronized (this) {
      Set<String> tables = new TreeSet<>();
      try (Statement st = conn.createStatement();
          ResultSet rs = st.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table'")) {
        while (rs.next()) {
          tables.add(rs.getString(1));
        }
      }
      try (Statement st = conn.createStatement()) {
        if (!tables.contains("iceberg_tables")) {
          st.execute(CREATE_TABLES);
          st.execute(ADD_TYPE_COLUMN);
        } else if (!hasTypeColumn()) {
          st.execute(ADD_TYPE_COLUMN);
        }
        if (!tables.contains("iceberg_namespace_properties")) {
          st.execute(CREATE_NAMESPACE_PROPERTIES);
        }
        if (!tables.contains("floe_meta")) {
          st.execute("CREATE TABLE floe_meta (key VARCHAR(255) NOT NULL PRIMARY KEY, value VARCHAR(1000))");
        }
        if (!tables.contains("floe_file_digests")) {
          st.execute("CREATE TABLE floe_file_digests (location VARCHAR(1000) NOT NULL PRIMARY KEY, length INTEGER NOT "
              + "NULL, crc32c INTEGER NOT NULL)");
        }
        if (!tables.contains("floe_sequences")) {
          st.execute("CREATE TABLE floe_sequences (catalog_name VARCHAR(255) NOT NULL, sequence_name VARCHAR(767) "
              + "NOT NULL, next_value INTEGER NOT NULL, increment_by INTEGER NOT NULL DEFAULT 1, "
              + "PRIMARY KEY (catalog_name, sequence_name))");
        } else if (!hasColumn("floe_sequences", "increment_by")) {
          // a catalog of an older Floe: its sequences advance by 1
          st.execute("ALTER TABLE floe_sequences ADD COLUMN increment_by INTEGER NOT NULL DEFAULT 1");
        }
      }
    }
  }

  private boolean hasColumn(String table, String column) throws SQLException {
    try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("PRAGMA table_info(" + table + ")")) {
      while (rs.next()) {
        if (column.equalsIgnoreCase(rs.getString("name"))) {
          return true;
        }
      }
    }
    return false;
  }

  private boolean hasTypeColumn() throws SQLException {
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("PRAGMA table_info(iceberg_tables)")) {
      while (rs.next()) {
        if ("iceberg_type".equalsIgnoreCase(rs.getString("name"))) {
          return true;
        }
      }
      return false;
    }
  }

  /** Whether the database was opened read-only: then nothing is ever written to it. */
  boolean readOnly() {
    return readOnly;
  }

  /** How a namespace is keyed in the catalog's rows: its levels joined by dots, as JdbcCatalog does. */
  static String namespaceString(Namespace namespace) {
    return String.join(".", namespace.levels());
  }

  /** Runs {@code work} on the connection, holding the lock; {@code work} handles its SQLExceptions. */
  <T> T call(Function<Connection, T> work) {
    synchronized (this) {
      return work.apply(conn);
    }
  }

  /** Statements prepared once and kept, by their text (used only under this object's monitor). */
  private final java.util.Map<String, PreparedStatement> prepared = new java.util.HashMap<>();

  /**
   * {@code sql} prepared on the connection once and kept: a statement run for every query (a table's
   * pointer) is not parsed by SQLite every time. Only inside {@link #call}, {@link #run} or {@link
   * #transaction}; a caller whose statement failed calls {@link #forget}.
   */
  PreparedStatement prepared(String sql) throws SQLException {
    PreparedStatement ps = prepared.get(sql);
    if (ps == null) {
      ps = conn.prepareStatement(sql);
      prepared.put(sql, ps);
    }
    return ps;
  }

  /** Closes a kept statement that failed: the next {@link #prepared} prepares it again. */
  void forget(String sql) {
    PreparedStatement ps = prepared.remove(sql);
    if (ps != null) {
      try {
        ps.close();
      } catch (SQLException ignored) {
        // it is dropped either way
      }
    }
  }

  /** {@link #call} for work that returns nothing. */
  void run(Consumer<Connection> work) {
    synchronized (this) {
      work.accept(conn);
    }
  }

  /**
   * Runs {@code work} in one SQLite transaction, holding the lock: committed when it returns true, rolled
   * back when it returns false or fails; what its errors mean is {@link PointerSwap}'s.
   */
  boolean transaction(String what, PointerSwap.SqlWork work) {
    synchronized (this) {
      return PointerSwap.run(conn, what, work);
    }
  }

  /**
   * The warehouse identity this catalog database carries (also kept in {@code .floe/catalog-id}, so that
   * an emptied or replaced catalog.db is noticed, see {@link Warehouse}); empty if it carries none.
   */
  Optional<String> catalogId() {
    return meta("catalog-id");
  }

  void setCatalogId(String id) {
    setMeta("catalog-id", id);
  }

  /** One of the warehouse's own settings in {@code floe_meta}; empty if it has none. */
  Optional<String> meta(String key) {
    return call(conn -> {
      try (PreparedStatement ps = conn.prepareStatement("SELECT value FROM floe_meta WHERE key = ?")) {
        ps.setString(1, key);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
        }
      } catch (SQLException e) {
        if (e.getMessage() != null && e.getMessage().contains("no such table")) {
          return Optional.empty();
        }
        throw new FloeCatalog.CatalogException("Cannot read the catalog: " + e.getMessage(), e);
      }
    });
  }

  void setMeta(String key, String value) {
    run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(
          "INSERT OR REPLACE INTO floe_meta (key, value) VALUES (?, ?)")) {
        ps.setString(1, key);
        ps.setString(2, value);
        ps.executeUpdate();
      } catch (SQLException e) {
        throw new FloeCatalog.CatalogException("Cannot write the catalog: " + e.getMessage(), e);
      }
    });
  }

  void close() {
    run(conn -> {
      try {
        for (PreparedStatement ps : prepared.values()) {
          ps.close();
        }
        prepared.clear();
        conn.close();
      } catch (SQLException e) {
        throw new FloeCatalog.CatalogException("Cannot close catalog: " + e.getMessage(), e);
      }
    });
  }
}
