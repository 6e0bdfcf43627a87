package dev.floe.catalog;

import dev.floe.FloeException;
import dev.floe.RebuiltCatalog;
import dev.floe.SqlState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A new catalog database for a warehouse whose catalog.db was lost, built from the tables' own files:
 * every {@code <schema>/<table>/metadata/} directory under the warehouse becomes a table, at the metadata
 * file its version hint names (else the newest one that reads). What a catalog alone knew is not
 * recovered: tables located outside the warehouse, serial counters (sequences restart; set them with
 * setval), and the files' checksums (files are read unchecked until rewritten).
 */
public final class CatalogRebuild {
  /** A directory made for a table whose name was taken: {@code name-<32 hex digits>}. */
  private static final Pattern SUFFIXED = Pattern.compile("(.+)-[0-9a-f]{32}");

  private CatalogRebuild() {}

  public static RebuiltCatalog rebuild(Path directory, String catalogName) {
    Path root = directory.toAbsolutePath().normalize();
    if (!Files.isDirectory(root)) {
      throw new FloeException(SqlState.UNDEFINED_OBJECT, "no warehouse at " + root);
    }
    try (Warehouse.Lock lock = Warehouse.Lock.take(root)) {
      Optional<Path> aside = Optional.empty();
      Path db = root.resolve("catalog.db");
      String stamp = Long.toString(System.currentTimeMillis());
      if (Files.exists(db)) {
        aside = Optional.of(root.resolve("catalog.db.lost-" + stamp));
        Files.move(db, aside.get());
      }
      for (String suffix : List.of("-wal", "-shm", "-journal")) {
        Path p = root.resolve("catalog.db" + suffix);
        if (Files.exists(p)) {
          Files.move(p, root.resolve("catalog.db.lost-" + stamp + suffix));
        }
      }
      Files.deleteIfExists(root.resolve(".floe").resolve(Warehouse.ID_FILE));
      List<String> tables = new ArrayList<>();
      List<String> skipped = new ArrayList<>();
      FloeCatalog catalog = FloeCatalog.open(catalogName, root, new LocalFileIO(), false);
      try {
        catalog.createNamespace(Namespace.of(Warehouse.DEFAULT_NAMESPACE), Map.of());
        for (Path schemaDir : list(root)) {
          String schema = schemaDir.getFileName().toString();
          if (Locations.nameProblem(schema, true).isPresent()) {
            continue;
          }
          for (Path tableDir : list(schemaDir)) {
            Path metadataDir = tableDir.resolve("metadata");
            if (!Files.isDirectory(metadataDir)) {
              continue;
            }
            register(catalog, schema, tableDir, metadataDir, tables, skipped);
          }
        }
      } finally {
        catalog.close();
      }
      return new RebuiltCatalog(tables, skipped, aside);
    } catch (IOException e) {
      throw new FloeException(SqlState.IO_ERROR, "cannot rebuild the catalog of " + root + ": " + e.getMessage(), e);
    }
  }

  private static void register(FloeCatalog catalog, String schema, Path tableDir, Path metadataDir,
      List<String> tables, List<String> skipped) throws IOException {
    String dirName = tableDir.getFileName().toString();
    Optional<Path> current = current(metadataDir);
    if (current.isEmpty()) {
      skipped.add(tableDir + ": no metadata file that reads");
      return;
    }
    Namespace ns = Namespace.of(schema);
    if (!catalog.namespaceExists(ns)) {
      catalog.createNamespace(ns, Map.of());
    }
    Matcher m = SUFFIXED.matcher(dirName);
    String name = m.matches() && catalog.metadataLocation(TableIdentifier.of(ns, m.group(1))).isEmpty()
        ? m.group(1) : dirName;
    TableIdentifier id = TableIdentifier.of(ns, name);
    if (catalog.metadataLocation(id).isPresent()) {
      skipped.add(tableDir + ": table " + id + " is registered from another directory");
      return;
    }
    catalog.registerTable(id, current.get().toString());
    tables.add(id + " -> " + current.get());
  }

  /** The metadata file the version hint names, if it reads; else the newest that reads. */
  private static Optional<Path> current(Path metadataDir) throws IOException {
    OptionalInt hinted = VersionHint.read(metadataDir);
    if (hinted.isPresent()) {
      Path p = metadataDir.resolve(VersionHint.metadataFileName(hinted.getAsInt()));
      if (reads(p)) {
        return Optional.of(p);
      }
    }
    List<Path> files;
    try (Stream<Path> s = Files.list(metadataDir)) {
      files = s.filter(p -> p.getFileName().toString().endsWith(".metadata.json"))
          .sorted(Comparator.comparing(CatalogRebuild::version).thenComparing(CatalogRebuild::modified).reversed())
          .toList();
    }
    return files.stream().filter(CatalogRebuild::reads).findFirst();
  }

  private static boolean reads(Path p) {
    try {
      TableMetadataParser.read(new LocalFileIO(), p.toString());
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static int version(Path p) {
    OptionalInt v = VersionHint.versionOf(p.toString());
    return v.isPresent() ? v.getAsInt() : -1;
  }

  private static long modified(Path p) {
    try {
      return Files.getLastModifiedTime(p).toMillis();
    } catch (IOException e) {
      return 0;
    }
  }

  private static List<Path> list(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(Files::isDirectory).filter(p -> !p.getFileName().toString().startsWith("."))
          .sorted().toList();
    }
  }
}
