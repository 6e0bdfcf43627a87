package dev.floe.catalog;

import dev.floe.catalog.FloeCatalog.CatalogException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code floe_sequences} rows of the catalog database: the counters behind serial and identity
 * columns ({@code exec.Sequences} hands their values out in blocks). Each method is one statement under
 * the database's lock ({@link CatalogDatabase}), so each change is durable when it returns. Whether the
 * catalog may be written is checked by {@link FloeCatalog} before it calls in.
 */
final class SequenceStore {
  private final CatalogDatabase db;
  private final String catalogName;

  SequenceStore(CatalogDatabase db, String catalogName) {
    this.db = db;
    this.catalogName = catalogName;
  }

  /** Creates (or restarts at {@code start}) a sequence advancing by {@code increment}; durable when it returns. */
  void create(String sequence, long start, long increment) {
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement("INSERT OR REPLACE INTO floe_sequences (catalog_name, "
          + "sequence_name, next_value, increment_by) VALUES (?, ?, ?, ?)")) {
        ps.setString(1, catalogName);
        ps.setString(2, sequence);
        ps.setLong(3, start);
        ps.setLong(4, increment);
        ps.executeUpdate();
      } catch (SQLException e) {
        throw new CatalogException("Cannot create sequence " + sequence + ": " + e.getMessage(), e);
      }
    });
  }

  /**
   * Makes the sequence hand out {@code value} next, or ({@code called}) the value after it (setval);
   * durable when it returns.
   */
  void restart(String sequence, long value, boolean called) {
    db.run(conn -> {
      try (PreparedStatement ps = conn.prepareStatement("UPDATE floe_sequences SET next_value = ? + CASE WHEN ? "
          + "THEN increment_by ELSE 0 END WHERE catalog_name = ? AND sequence_name = ?")) {
        ps.setLong(1, value);
        ps.setBoolean(2, called);
        ps.setString(3, catalogName);
        ps.setString(4, sequence);
        if (ps.executeUpdate() == 0) {
          throw new CatalogException("Sequence does not exist: " + sequence, null);
        }
      } catch (SQLException e) {
        throw new CatalogException("Cannot set sequence " + sequence + ": " + e.getMessage(), e);
      }
    });
  }

  /** Every sequence of this catalog ({@code schema.name}). */
  List<String> names() {
    List<String> names = new ArrayList<>();
    return db.call(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(
          "SELECT sequence_name FROM floe_sequences WHERE catalog_name = ? ORDER BY sequence_name")) {
        ps.setString(1, catalogName);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            names.add(rs.getString(1));
          }
        }
      } catch (SQLException e) {
        // a catalog written by an older Floe has no sequences table
        return names;
      }
      return names;
    });
  }

  /** Whether a sequence exists. */
  boolean exists(String sequence) {
    return db.call(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(
          "SELECT 1 FROM floe_sequences WHERE catalog_name = ? AND sequence_name = ?")) {
        ps.setString(1, catalogName);
        ps.setString(2, sequence);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next();
        }
      } catch (SQLException e) {
        throw new CatalogException("Cannot read sequence " + sequence + ": " + e.getMessage(), e);
      }
    });
  }

  /** Drops a sequence; false if there was none. */
  boolean drop(String sequence) {
    return db.call(conn -> {
      try (PreparedStatement ps = conn.prepareStatement(
          "DELETE FROM floe_sequences WHERE catalog_name = ? AND sequence_name = ?")) {
        ps.setString(1, catalogName);
        ps.setString(2, sequence);
        return ps.executeUpdate() == 1;
      } catch (SQLException e) {
        throw new CatalogException("Cannot drop sequence " + sequence + ": " + e.getMessage(), e);
      }
    });
  }

  /**
   * Reserves the next {@code count} values of a sequence, durably (a crash loses at most the unused rest
   * of a block, as PostgreSQL's sequence cache does); returns the first.
   */
  long[] reserve(String sequence, int count) {
    return db.call(conn -> {
      try (PreparedStatement ps = conn.prepareStatement("UPDATE floe_sequences SET next_value = next_value + ? * "
          + "increment_by WHERE catalog_name = ? AND sequence_name = ? RETURNING next_value - ? * increment_by, "
          + "increment_by")) {
        ps.setInt(1, count);
        ps.setString(2, catalogName);
        ps.setString(3, sequence);
        ps.setInt(4, count);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            throw new CatalogException("Sequence does not exist: " + sequence, null);
          }
          return new long[] {rs.getLong(1), rs.getLong(2)};
        }
      } catch (SQLException e) {
        throw new CatalogException("Cannot advance sequence " + sequence + ": " + e.getMessage(), e);
      }
    });
  }
}
