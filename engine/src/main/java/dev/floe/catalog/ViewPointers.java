package dev.floe.catalog;

import static dev.floe.catalog.CatalogDatabase.namespaceString;

import dev.floe.catalog.FloeCatalog.CatalogException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;

/**
 * The catalog rows of views, as Iceberg's JdbcCatalog keeps them: rows of {@code iceberg_tables} whose
 * {@code iceberg_type} is {@code VIEW}, pointing at the view's metadata file. A view and a table share
 * the table's key (catalog, namespace, name), so a name is one or the other.
 */
final class ViewPointers {
  private static final String VIEW_FILTER = " AND iceberg_type = 'VIEW'";

  private final CatalogDatabase db;
  private final String catalogName;

  ViewPointers(CatalogDatabase db, String catalogName) {
    this.db = db;
    this.catalogName = catalogName;
  }

  Optional<String> location(TableIdentifier id) {
    String sql = "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?"
        + " AND table_name = ?" + VIEW_FILTER;
    return db.call(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(sql)) {
        ps.setString(1, catalogName);
        ps.setString(2, namespaceString(id.namespace()));
        ps.setString(3, id.name());
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
        }
      } catch (SQLException e) {
        throw new CatalogException("Cannot read catalog entry of " + id + ": " + e.getMessage(), e);
      }
    });
  }

  List<TableIdentifier> views(Namespace namespace) {
    String sql = "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?"
        + VIEW_FILTER + " ORDER BY table_name";
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
        throw new CatalogException("Cannot list views: " + e.getMessage(), e);
      }
    });
    return result;
  }

  /** Every view's metadata file, by view. */
  java.util.Map<TableIdentifier, String> locations() {
    String sql = "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE catalog_name = ?"
        + VIEW_FILTER + " ORDER BY table_namespace, table_name";
    java.util.Map<TableIdentifier, String> result = new java.util.LinkedHashMap<>();
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
        throw new CatalogException("Cannot list views: " + e.getMessage(), e);
      }
    });
    return result;
  }

  /**
   * Creates the view's row ({@code expected == null}), or moves it from {@code expected} to
   * {@code newLocation}.
   *
   * @return false if the view moved since {@code expected} was read
   * @throws AlreadyExistsException when creating a name a table or view has
   */
  boolean swap(TableIdentifier id, String expected, String newLocation) {
    CommitGate.pass();
    return db.call(conn -> {
      try {
        if (expected == null) {
          String sql = "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location,"
              + " previous_metadata_location, iceberg_type) VALUES (?,?,?,?,null,'VIEW')";
          try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setString(1, catalogName);
            ps.setString(2, namespaceString(id.namespace()));
            ps.setString(3, id.name());
            ps.setString(4, newLocation);
            ps.executeUpdate();
            return true;
          } catch (SQLException e) {
            if (e.getMessage() != null && e.getMessage().contains("UNIQUE")) {
              throw new AlreadyExistsException("Table or view already exists: %s", id);
            }
            throw e;
          }
        }
        String sql = "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?"
            + " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?"
            + VIEW_FILTER;
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
        throw new CatalogException("Cannot commit view " + id + " to the catalog: " + e.getMessage(), e);
      }
    });
  }

  /** Renames a view's row (see {@link TablePointers#renameRow}). */
  void rename(TableIdentifier from, TableIdentifier to) {
    TablePointers.renameRow(db, catalogName, from, to, VIEW_FILTER, "View");
  }

  /** Deletes a view's row; false if there was none. */
  boolean delete(TableIdentifier id) {
    String sql = "DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"
        + VIEW_FILTER;
    return db.call(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(sql)) {
        ps.setString(1, catalogName);
        ps.setString(2, namespaceString(id.namespace()));
        ps.setString(3, id.name());
        return ps.executeUpdate() != 0;
      } catch (SQLException e) {
        throw new CatalogException("Cannot drop view " + id + ": " + e.getMessage(), e);
      }
    });
  }
}
