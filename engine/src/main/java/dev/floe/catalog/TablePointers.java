package dev.floe.catalog;

import static dev.floe.catalog.CatalogDatabase.namespaceString;

import dev.floe.catalog.FloeCatalog.CatalogException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.NoSuchTableException;

/**
 * The {@code iceberg_tables} rows of the catalog database: each table's pointer to its current metadata
 * file (and the one before it). A commit is a compare-and-swap of the pointer in one SQLite transaction
 * ({@link #swap}, {@link #swapAll}: {@link CatalogDatabase#transaction}, whose errors {@link PointerSwap}
 * explains), passing {@link CommitGate} just before it and recording the new files' digests in it
 * ({@link DigestStore#record}). Reads, renames and drops are one statement each under the database's
 * lock. Rows of another {@code iceberg_type} (JdbcCatalog's views) are never read or touched.
 */
final class TablePointers {
  private static final String TABLE_FILTER = " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)";
  private static final String CURRENT_SQL = locationSql("metadata_location");
  private static final String PREVIOUS_SQL = locationSql("previous_metadata_location");

  private static String locationSql(String column) {
    return "SELECT " + column + " FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?"
        + " AND table_name = ?" + TABLE_FILTER;
  }

  private final CatalogDatabase db;
  private final String catalogName;

  TablePointers(CatalogDatabase db, String catalogName) {
    this.db = db;
    this.catalogName = catalogName;
  }

  Optional<String> previousMetadataLocation(TableIdentifier id) {
    return location(id, "previous_metadata_location", "Cannot read the catalog: ");
  }

  Optional<String> metadataLocation(TableIdentifier id) {
    return location(id, "metadata_location", "Cannot read catalog entry of " + id + ": ");
  }

  /** One of a table's metadata locations ({@code column}); empty when the table is not in the catalog. */
  private Optional<String> location(TableIdentifier id, String column, String failure) {
    String sql = column.equals("metadata_location") ? CURRENT_SQL : PREVIOUS_SQL;
    return db.call(conn -> {
      try {
        PreparedStatement ps = db.prepared(sql); // read for every statement: prepared once
        ps.setString(1, catalogName);
        ps.setString(2, namespaceString(id.namespace()));
        ps.setString(3, id.name());
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
        }
      } catch (SQLException e) {
        db.forget(sql);
        throw new CatalogException(failure + e.getMessage(), e);
      }
    });
  }

  /**
   * Moves a table's pointer from {@code expected} to {@code newLocation} (with {@code expected == null}
   * creates its row) and records {@code digests}, in one transaction.
   *
   * @return false if the table moved since {@code expected} was read
   * @throws AlreadyExistsException when creating a table that already exists
   * @throws CommitStateUnknownException when SQLite's COMMIT failed and may have taken effect
   */
  boolean swap(TableIdentifier id, String expected, String newLocation, List<FileDigests.Digest> digests) {
    CommitGate.pass();
    return db.transaction(id.toString(), conn -> {
      if (!swapLocked(conn, id, expected, newLocation)) {
        return false;
      }
      DigestStore.record(conn, digests);
      return true;
    });
  }

  private boolean swapLocked(Connection conn, TableIdentifier id, String expected, String newLocation) {
    try {
      if (expected == null) {
        String sql = "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location,"
            + " previous_metadata_location, iceberg_type) VALUES (?,?,?,?,null,'TABLE')";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
          ps.setString(1, catalogName);
          ps.setString(2, namespaceString(id.namespace()));
          ps.setString(3, id.name());
          ps.setString(4, newLocation);
          ps.executeUpdate();
          return true;
        } catch (SQLException e) {
          if (e.getMessage() != null && e.getMessage().contains("UNIQUE")) {
            throw new AlreadyExistsException("Table already exists: %s", id);
          }
          throw e;
        }
      }
      String sql = "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?"
          + " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?"
          + TABLE_FILTER;
      try (PreparedStatement ps = conn.prepareStatement(sql)) {
        ps.setString(1, newLocation);
        ps.setString(2, expected);
        ps.setString(3, catalogName);
        ps.setString(4, namespaceString(id.namespace()));
        ps.setString(5, id.name());
        ps.setString(6, expected);
        return ps.executeUpdate() == 1;
      }
    } catch (SQLException e) {
      throw new CatalogException("Cannot commit " + id + " to the catalog: " + e.getMessage(), e);
    }
  }

  /**
   * Moves the pointers of several tables (creating the rows of those with no expected file), all or none,
   * and records {@code digests}, in one transaction.
   *
   * @return false if any table moved since its expected file was read
   * @throws CommitStateUnknownException when SQLite's COMMIT failed and may have taken effect
   */
  boolean swapAll(List<FloeTableOperations.Prepared> swaps, List<FileDigests.Digest> digests) {
    CommitGate.pass();
    return db.transaction(swaps.size() + " tables", conn -> {
      for (FloeTableOperations.Prepared p : swaps) {
        if (!swapLocked(conn, p.id(), p.expected(), p.location())) {
          return false;
        }
      }
      DigestStore.record(conn, digests);
      return true;
    });
  }

  /** Every table with its current metadata file, in one query, ordered by namespace and name. */
  Map<TableIdentifier, String> tableLocations() {
    String sql = "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE catalog_name = ?"
        + TABLE_FILTER + " ORDER BY table_namespace, table_name";
    Map<TableIdentifier, String> result = new LinkedHashMap<>();
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(sql)) {
        ps.setString(1, catalogName);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            result.put(TableIdentifier.of(Namespace.of(rs.getString(1).split("\\.")), rs.getString(2)),
                rs.getString(3));
          }
        }
      } catch (SQLException e) {
        throw new CatalogException("Cannot list tables: " + e.getMessage(), e);
      }
    });
    return result;
  }

  /** The tables of one namespace, by name. */
  List<TableIdentifier> tables(Namespace namespace) {
    String sql = "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?"
        + TABLE_FILTER + " ORDER BY table_name";
    List<TableIdentifier> result = new ArrayList<>();
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(sql)) {
        ps.setString(1, catalogName);
        ps.setString(2, namespaceString(namespace));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            result.add(TableIdentifier.of(namespace, rs.getString(1)));
          }
        }
      } catch (SQLException e) {
        throw new CatalogException("Cannot list tables: " + e.getMessage(), e);
      }
    });
    return result;
  }

  /** Deletes a table's row; false if there was none. */
  boolean delete(TableIdentifier id) {
    String sql = "DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"
        + TABLE_FILTER;
    return db.call(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(sql)) {
        ps.setString(1, catalogName);
        ps.setString(2, namespaceString(id.namespace()));
        ps.setString(3, id.name());
        return ps.executeUpdate() != 0;
      } catch (SQLException e) {
        throw new CatalogException("Cannot drop " + id + ": " + e.getMessage(), e);
      }
    });
  }

  /**
   * Renames a table's row.
   *
   * @throws NoSuchTableException if {@code from} has none
   * @throws AlreadyExistsException if {@code to} has one
   */
  void rename(TableIdentifier from, TableIdentifier to) {
    renameRow(db, catalogName, from, to, TABLE_FILTER, "Table");
  }

  /**
   * Renames a table's or view's row ({@code filter} picks which kind; {@code kind} names it in errors):
   * {@link NoSuchTableException} if there is none, {@link AlreadyExistsException} if {@code to} is taken.
   */
  static void renameRow(CatalogDatabase db, String catalogName, TableIdentifier from, TableIdentifier to,
      String filter, String kind) {
    String sql = "UPDATE iceberg_tables SET table_namespace = ?, table_name = ? WHERE catalog_name = ?"
        + " AND table_namespace = ? AND table_name = ?" + filter;
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(sql)) {
        ps.setString(1, namespaceString(to.namespace()));
        ps.setString(2, to.name());
        ps.setString(3, catalogName);
        ps.setString(4, namespaceString(from.namespace()));
        ps.setString(5, from.name());
        if (ps.executeUpdate() != 1) {
          if (kind.equals("View")) {
            throw new org.apache.iceberg.exceptions.NoSuchViewException("View does not exist: %s", from);
          }
          throw new NoSuchTableException("Table does not exist: %s", from);
        }
      } catch (SQLException e) {
        if (e.getMessage() != null && e.getMessage().contains("UNIQUE")) {
          throw new AlreadyExistsException("Table or view already exists: %s", to);
        }
        throw new CatalogException("Cannot rename " + from + ": " + e.getMessage(), e);
      }
    });
  }
}
