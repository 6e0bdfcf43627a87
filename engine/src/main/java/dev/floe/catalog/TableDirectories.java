package dev.floe.catalog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.UUID;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A table's directory: where a new table's goes ({@code <warehouse>/<schema>/<table>}, made unique when
 * something is already there or the warehouse is on object storage), and what is left of it on the local
 * file system after a purge. No catalog rows and no lock: this is file work, done outside the database's lock.
 */
final class TableDirectories {
  private TableDirectories() {}

  /** Where a new table named {@code identifier} goes (a directory nothing else uses). */
  static String newLocation(String warehouse, TableIdentifier identifier) {
    for (String level : identifier.namespace().levels()) {
      Locations.nameProblem(level, true).ifPresent(p -> {
        throw new IllegalArgumentException("invalid schema name \"" + level + "\": " + p);
      });
    }
    Locations.nameProblem(identifier.name(), false).ifPresent(p -> {
      throw new IllegalArgumentException("invalid table name \"" + identifier.name() + "\": " + p);
    });
    StringBuilder dir = new StringBuilder(warehouse);
    for (String level : identifier.namespace().levels()) {
      dir.append('/').append(level);
    }
    dir.append('/').append(identifier.name());
    String location = dir.toString();
    // A dropped table's files (DROP without PURGE) or a renamed table's directory may still sit
    // there; a new table never shares a directory with anything.
    // On object storage, where looking costs a listing, every table's directory is made unique.
    if (S3.remote(location) || Files.exists(Path.of(location))) {
      location = location + "-" + UUID.randomUUID().toString().replace("-", "");
    }
    return location;
  }

  /** After a purge, removes what Iceberg's file lists do not name (version hint) and empty directories. */
  static void deleteLeftovers(Path tableDir) {
    try {
      Files.deleteIfExists(tableDir.resolve("metadata").resolve(VersionHint.FILE_NAME));
      if (Files.isDirectory(tableDir)) {
        try (var walk = Files.walk(tableDir)) {
          walk.sorted(Comparator.reverseOrder())
              .filter(Files::isDirectory)
              .forEach(dir -> {
                try (var entries = Files.list(dir)) {
                  if (entries.findAny().isEmpty()) {
                    Files.delete(dir);
                  }
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
        }
      }
    } catch (IOException | UncheckedIOException e) {
      // The table is gone from the catalog; leftover empty directories are harmless.
    }
  }

  /** A location ({@code file:} URI or path) as a local path string. */
  static String stripScheme(String location) {
    return LocalFileIO.toPath(location).toString();
  }
}
