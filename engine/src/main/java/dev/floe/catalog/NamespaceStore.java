package dev.floe.catalog;

import static dev.floe.catalog.CatalogDatabase.namespaceString;

import dev.floe.catalog.FloeCatalog.CatalogException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.catalog.Namespace;

/**
 * The namespaces (schemas) of the catalog database, as JdbcCatalog keeps them: a namespace exists when
 * it has a row in {@code iceberg_namespace_properties} (Floe writes {@code exists=true} when it creates
 * one) or any row in {@code iceberg_tables}. This class reads and writes those rows; the rules of
 * Iceberg's {@code SupportsNamespaces} (what must exist, what must be empty, read-only refusal) are
 * {@link FloeCatalog}'s. Each method takes the database's lock once ({@link CatalogDatabase}), for
 * one statement, one batch, or its two reads.
 */
final class NamespaceStore {
  private final CatalogDatabase db;
  private final String catalogName;

  NamespaceStore(CatalogDatabase db, String catalogName) {
    this.db = db;
    this.catalogName = catalogName;
  }

  /** The namespaces one level below {@code parent} that have properties or tables, in name order. */
  List<Namespace> children(Namespace parent) {
    Set<String> names = new TreeSet<>();
    db.run(conn -> {
      try (PreparedStatement a = conn.prepareStatement(
              "SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name = ?");
          PreparedStatement b = conn.prepareStatement(
              "SELECT DISTINCT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?")) {
        for (PreparedStatement ps : List.of(a, b)) {
          ps.setString(1, catalogName);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              names.add(rs.getString(1));
            }
          }
        }
      } catch (SQLException e) {
        throw new CatalogException("Cannot list namespaces: " + e.getMessage(), e);
      }
    });
    List<Namespace> result = new ArrayList<>();
    String prefix = parent.isEmpty() ? "" : namespaceString(parent) + ".";
    int depth = parent.levels().length + 1;
    Set<String> seen = new TreeSet<>();
    for (String n : names) {
      if (!n.startsWith(prefix)) {
        continue;
      }
      String[] levels = n.split("\\.");
      if (levels.length < depth) {
        continue;
      }
      String[] child = Arrays.copyOf(levels, depth);
      if (seen.add(String.join(".", child))) {
        result.add(Namespace.of(child));
      }
    }
    return result;
  }

  /** A namespace's properties (empty if it has none). */
  Map<String, String> properties(Namespace namespace) {
    Map<String, String> props = new LinkedHashMap<>();
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(
          "SELECT property_key, property_value FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?")) {
        ps.setString(1, catalogName);
        ps.setString(2, namespaceString(namespace));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            if (rs.getString(1) != null) {
              props.put(rs.getString(1), rs.getString(2));
            }
          }
        }
      } catch (SQLException e) {
        throw new CatalogException("Cannot load namespace " + namespace + ": " + e.getMessage(), e);
      }
    });
    return props;
  }

  /** Deletes every property row of a namespace (its tables, if any, are not touched). */
  void delete(Namespace namespace) {
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(
          "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?")) {
        ps.setString(1, catalogName);
        ps.setString(2, namespaceString(namespace));
        ps.executeUpdate();
      } catch (SQLException e) {
        throw new CatalogException("Cannot drop namespace " + namespace + ": " + e.getMessage(), e);
      }
    });
  }

  void removeProperties(Namespace namespace, Set<String> properties) {
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(
          "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? AND property_key = ?")) {
        for (String key : properties) {
          ps.setString(1, catalogName);
          ps.setString(2, namespaceString(namespace));
          ps.setString(3, key);
          ps.addBatch();
        }
        ps.executeBatch();
      } catch (SQLException e) {
        throw new CatalogException("Cannot update namespace " + namespace + ": " + e.getMessage(), e);
      }
    });
  }

  void insertProperties(Namespace namespace, Map<String, String> props) {
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(
          "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)"
              + " VALUES (?,?,?,?)")) {
        for (Map.Entry<String, String> e : props.entrySet()) {
          ps.setString(1, catalogName);
          ps.setString(2, namespaceString(namespace));
          ps.setString(3, e.getKey());
          ps.setString(4, e.getValue());
          ps.addBatch();
        }
        ps.executeBatch();
      } catch (SQLException e) {
        throw new CatalogException("Cannot write namespace " + namespace + ": " + e.getMessage(), e);
      }
    });
  }

  /** Whether a namespace has properties or tables. */
  boolean exists(Namespace namespace) {
    String ns = namespaceString(namespace);
    return db.call(conn -> {
      try (PreparedStatement a = conn.prepareStatement(
              "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? LIMIT 1");
          PreparedStatement b = conn.prepareStatement(
              "SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? LIMIT 1")) {
        for (PreparedStatement ps : List.of(a, b)) {
          ps.setString(1, catalogName);
          ps.setString(2, ns);
          try (ResultSet rs = ps.executeQuery()) {
            if (rs.next()) {
              return true;
            }
          }
        }
        return false;
      } catch (SQLException e) {
        throw new CatalogException("Cannot read namespace " + namespace + ": " + e.getMessage(), e);
      }
    });
  }
}
