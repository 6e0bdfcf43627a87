package dev.floe.catalog;

import dev.floe.catalog.FloeCatalog.CatalogException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code floe_file_digests} rows of the catalog database: the length and CRC-32C of each file Floe
 * wrote, keyed by its absolute local path. {@link FileDigests} decides what to record and check; this
 * class only reads and writes the rows. Digests are written in the transaction of the pointer swap that
 * first names the files ({@link #record}, called by {@link TablePointers}); every other method takes the
 * database's lock once ({@link CatalogDatabase}), a lookup for all its chunks of 500.
 */
final class DigestStore {
  private final CatalogDatabase db;

  DigestStore(CatalogDatabase db) {
    this.db = db;
  }

  /** Writes file digests, in the caller's transaction (on its connection, under the database's lock). */
  static void record(Connection conn, List<FileDigests.Digest> digests) throws SQLException {
    if (digests.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = conn.prepareStatement(
        "INSERT OR REPLACE INTO floe_file_digests (location, length, crc32c) VALUES (?, ?, ?)")) {
      for (FileDigests.Digest d : digests) {
        ps.setString(1, d.location());
        ps.setLong(2, d.length());
        ps.setInt(3, d.crc32c());
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  /** The recorded digests of those of {@code locations} (local paths) that have one. */
  Map<String, FileDigests.Digest> digests(Collection<String> locations) {
    Map<String, FileDigests.Digest> out = new HashMap<>();
    List<String> all = new ArrayList<>(locations);
    return db.call(conn -> {
      for (int from = 0; from < all.size(); from += 500) {
        List<String> chunk = all.subList(from, Math.min(all.size(), from + 500));
        String sql = "SELECT location, length, crc32c FROM floe_file_digests WHERE location IN ("
            + String.join(",", Collections.nCopies(chunk.size(), "?")) + ")";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
          for (int k = 0; k < chunk.size(); k++) {
            ps.setString(k + 1, chunk.get(k));
          }
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              out.put(rs.getString(1), new FileDigests.Digest(rs.getString(1), rs.getLong(2), rs.getInt(3)));
            }
          }
        } catch (SQLException e) {
          if (e.getMessage() != null && e.getMessage().contains("no such table")) {
            return out; // a warehouse no writer has opened since digests were introduced
          }
          throw new CatalogException("Cannot read file digests: " + e.getMessage(), e);
        }
      }
      return out;
    });
  }

  /** Forgets the digests of every file under a directory (a purged table's). */
  void forgetUnder(String directory) {
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(
          "DELETE FROM floe_file_digests WHERE substr(location, 1, ?) = ?")) {
        String prefix = directory.endsWith("/") ? directory : directory + "/";
        ps.setInt(1, prefix.length());
        ps.setString(2, prefix);
        ps.executeUpdate();
      } catch (SQLException e) {
        throw new CatalogException("Cannot forget file digests: " + e.getMessage(), e);
      }
    });
  }

  /** Forgets the digests of deleted files; nothing on a read-only catalog. */
  void forget(Collection<String> locations) {
    if (db.readOnly() || locations.isEmpty()) {
      return;
    }
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement("DELETE FROM floe_file_digests WHERE location = ?")) {
        for (String l : locations) {
          ps.setString(1, l);
          ps.addBatch();
        }
        ps.executeBatch();
      } catch (SQLException e) {
        throw new CatalogException("Cannot forget file digests: " + e.getMessage(), e);
      }
    });
  }
}
