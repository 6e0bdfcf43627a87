package dev.floe.catalog;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Where tables may keep their files: inside the warehouse, or inside a storage root the operator
 * allowed ({@code FloeConfig.storageRoots}), each table in a directory of its own. Names become directory
 * names, so a name cannot climb out of its directory; a location is checked with symbolic links resolved,
 * never overlaps another table's, and is never one of the warehouse's own entries (the catalog, the
 * users file, the TLS key, {@code .floe/}). This is what lets maintenance delete unreferenced files in a
 * table's directories: nothing else lives there (docs/security.md).
 */
public final class Locations {
  /** The warehouse's own entries at its top; no schema or table directory may take their names. */
  public static final Set<String> RESERVED = Set.of(".floe", "catalog.db", "catalog.db-wal", "catalog.db-shm",
      "catalog.db-journal", "floe-users", "tls");

  private final Path warehouse;
  private final List<Path> roots;
  /** The object store location tables may be under ({@code s3://bucket/prefix}), or null. */
  private final String objects;

  /**
   * @param warehouse the warehouse directory
   * @param extraRoots further directories an operator allows table locations in
   */
  public Locations(Path warehouse, List<Path> extraRoots) {
    this(warehouse, extraRoots, null);
  }

  /**
   * @param objects an object store location ({@code s3://bucket/prefix}) tables may be under too, or null
   */
  public Locations(Path warehouse, List<Path> extraRoots, String objects) {
    this.objects = objects == null ? null : stripSlashes(objects);
    this.warehouse = real(warehouse);
    List<Path> all = new ArrayList<>();
    all.add(this.warehouse);
    for (Path r : extraRoots) {
      all.add(real(r));
    }
    this.roots = List.copyOf(all);
  }

  /** Every directory tables may be in (the warehouse first). */
  public List<Path> roots() {
    return roots;
  }

  /**
   * Why {@code name} cannot name a schema ({@code schema}) or a table, or empty if it can: it becomes a
   * directory name.
   */
  public static Optional<String> nameProblem(String name, boolean schema) {
    if (name.isEmpty()) {
      return Optional.of("a name cannot be empty");
    }
    if (name.equals(".") || name.equals("..") || name.startsWith(".")) {
      return Optional.of("a name cannot start with \".\"");
    }
    for (int k = 0; k < name.length(); k++) {
      char c = name.charAt(k);
      if (c == '/' || c == '\\') {
        return Optional.of("a name cannot contain \"" + c + "\"");
      }
      if (c < 0x20 || c == 0x7f) {
        return Optional.of("a name cannot contain control characters");
      }
    }
    if (schema && RESERVED.contains(name.toLowerCase(Locale.ROOT))) {
      return Optional.of("\"" + name + "\" is the name of one of the warehouse's own files");
    }
    return Optional.empty();
  }

  /** Refuses a schema or table name that cannot be a directory name (42602). */
  public static void checkName(String name, boolean schema, int position) {
    Optional<String> problem = nameProblem(name, schema);
    if (problem.isPresent()) {
      throw new FloeException(SqlState.INVALID_NAME, "invalid " + (schema ? "schema" : "table") + " name \"" + name
          + "\": " + problem.get(), null, null, position, null);
    }
  }

  /**
   * The location a user asked a table to have, checked: an absolute path (or {@code file:} URI) inside
   * the warehouse or an allowed root, not one of the warehouse's own entries, and not inside, around or
   * at another table's location.
   *
   * @param others the other tables' locations
   */
  public String requested(String location, Map<TableIdentifier, String> others) {
    String text = location.strip();
    if (S3.remote(text)) {
      return requestedObjects(location, stripSlashes(text), others);
    }
    Path path;
    try {
      path = LocalFileIO.toPath(text);
    } catch (RuntimeException e) {
      throw new FloeException(SqlState.INVALID_OBJECT_DEFINITION, "invalid table location \"" + location + "\"");
    }
    if (!path.isAbsolute()) {
      throw new FloeException(SqlState.INVALID_OBJECT_DEFINITION, "table location must be an absolute path: \""
          + location + "\"");
    }
    Path resolved = real(path.normalize());
    Path root = roots.stream().filter(r -> resolved.startsWith(r) && !resolved.equals(r)).findFirst()
        .orElseThrow(() -> new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: table location \""
            + location + "\" is outside the warehouse", null, "Leave location out (the table gets a directory of its "
            + "own in the warehouse), or ask the operator to allow that directory as a storage root.", 0, null));
    if (root.equals(warehouse) && RESERVED.contains(warehouse.relativize(resolved).getName(0).toString())) {
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: table location \"" + location
          + "\" is inside the warehouse's own files");
    }
    for (Map.Entry<TableIdentifier, String> e : others.entrySet()) {
      if (S3.remote(e.getValue())) {
        continue;
      }
      Path other = real(LocalFileIO.toPath(e.getValue()).normalize());
      if (other.startsWith(resolved) || resolved.startsWith(other)) {
        throw new FloeException(SqlState.INVALID_OBJECT_DEFINITION, "table location \"" + location
            + "\" overlaps the location of table " + e.getKey() + ": a table's directory is its own");
      }
    }
    if (Files.isDirectory(resolved)) {
      // empty directories (what a dropped table's purge leaves) do not make it taken; any file does
      try (var entries = Files.walk(resolved)) {
        if (entries.anyMatch(f -> !Files.isDirectory(f))) {
          throw new FloeException(SqlState.INVALID_OBJECT_DEFINITION, "table location \"" + location
              + "\" is not empty");
        }
      } catch (IOException e) {
        throw new FloeException(SqlState.IO_ERROR, "cannot read table location \"" + location + "\": "
            + e.getMessage(), e);
      }
    } else if (Files.exists(resolved)) {
      throw new FloeException(SqlState.INVALID_OBJECT_DEFINITION, "table location \"" + location
          + "\" is not a directory");
    }
    return resolved.toString();
  }

  /** {@link #requested} for a location on object storage: under the warehouse's, and no other table's. */
  private String requestedObjects(String location, String text, Map<TableIdentifier, String> others) {
    if (objects == null) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "table location \"" + location + "\" is not "
          + "supported: this warehouse keeps its tables' files on the local file system", null, "A warehouse keeps "
          + "its tables on S3 when Floe is started with --warehouse-location s3://bucket/prefix "
          + "(docs/object-storage.md).", 0, null);
    }
    if (!under(text, objects)) {
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied: table location \"" + location
          + "\" is outside the warehouse", null, "Leave location out, or give one under " + objects + ".", 0, null);
    }
    if (text.substring(text.indexOf("://") + 3).contains("//") || text.contains("/./") || text.contains("/../")
        || text.endsWith("/.") || text.endsWith("/..")) {
      throw new FloeException(SqlState.INVALID_OBJECT_DEFINITION, "invalid table location \"" + location + "\"");
    }
    for (Map.Entry<TableIdentifier, String> e : others.entrySet()) {
      String other = stripSlashes(e.getValue());
      if (S3.remote(other) && (other.equals(text) || under(other, text) || under(text, other))) {
        throw new FloeException(SqlState.INVALID_OBJECT_DEFINITION, "table location \"" + location
            + "\" overlaps the location of table " + e.getKey() + ": a table's directory is its own");
      }
    }
    return text;
  }

  /** Whether {@code location} is strictly under {@code root} (both without trailing slashes). */
  private static boolean under(String location, String root) {
    return location.startsWith(root + "/") && location.length() > root.length() + 1;
  }

  private static String stripSlashes(String l) {
    String s = l.strip();
    while (s.endsWith("/")) {
      s = s.substring(0, s.length() - 1);
    }
    return s;
  }

  /** The object store location tables may be under, if the warehouse has one. */
  public Optional<String> objects() {
    return Optional.ofNullable(objects);
  }

  /**
   * Why a file or directory named by table metadata another engine sent is not one Floe may use, or empty
   * if it is: it must be on the local file system, inside the warehouse or an allowed root, and not one of
   * the warehouse's own entries.
   */
  public Optional<String> inside(String location) {
    if (location == null || location.isBlank()) {
      return Optional.empty();
    }
    String text = location.strip();
    if (S3.remote(text)) {
      String t = stripSlashes(text);
      return objects != null && under(t, objects) && !t.contains("/../") && !t.endsWith("/..")
          ? Optional.empty() : Optional.of("is not on this warehouse's storage");
    }
    Path resolved;
    try {
      Path path = LocalFileIO.toPath(text);
      if (!path.isAbsolute()) {
        return Optional.of("is not an absolute path");
      }
      resolved = real(path.normalize());
    } catch (RuntimeException e) {
      return Optional.of("is not a valid path");
    }
    if (roots.stream().noneMatch(r -> resolved.startsWith(r) && !resolved.equals(r))) {
      return Optional.of("is outside the warehouse");
    }
    if (resolved.startsWith(warehouse) && RESERVED.contains(warehouse.relativize(resolved).getName(0).toString())) {
      return Optional.of("is inside the warehouse's own files");
    }
    return Optional.empty();
  }

  /**
   * Why Floe may not sweep unreferenced files from a table at {@code location}, or empty if it may: the
   * location must be inside a root, be the table's alone, and hold nothing but files of the kinds an
   * Iceberg table has.
   */
  public Optional<String> sweepProblem(String location, Map<TableIdentifier, String> others) {
    if (S3.remote(location)) {
      String l = stripSlashes(location);
      if (objects == null || !under(l, objects)) {
        return Optional.of("its location " + location + " is outside the warehouse");
      }
      for (Map.Entry<TableIdentifier, String> e : others.entrySet()) {
        String other = stripSlashes(e.getValue());
        if (S3.remote(other) && (other.equals(l) || under(other, l) || under(l, other))) {
          return Optional.of("its location " + location + " overlaps the location of table " + e.getKey());
        }
      }
      return Optional.empty();
    }
    Path resolved = real(LocalFileIO.toPath(location).normalize());
    if (roots.stream().noneMatch(r -> resolved.startsWith(r) && !resolved.equals(r))) {
      return Optional.of("its location " + location + " is outside the warehouse");
    }
    if (resolved.startsWith(warehouse) && !resolved.equals(warehouse)
        && RESERVED.contains(warehouse.relativize(resolved).getName(0).toString())) {
      return Optional.of("its location " + location + " is inside the warehouse's own files");
    }
    for (Map.Entry<TableIdentifier, String> e : others.entrySet()) {
      if (S3.remote(e.getValue())) {
        continue;
      }
      Path other = real(LocalFileIO.toPath(e.getValue()).normalize());
      if (other.startsWith(resolved) || resolved.startsWith(other)) {
        return Optional.of("its location " + location + " overlaps the location of table " + e.getKey());
      }
    }
    return Optional.empty();
  }

  /** Whether a file under a table's data or metadata directory is of a kind Floe and Iceberg write. */
  public static boolean tableFile(String name) {
    return name.endsWith(".parquet") || name.endsWith(".avro") || name.endsWith(".puffin")
        || name.endsWith(".metadata.json") || name.endsWith(".metadata.json.gz") || name.endsWith(".stats")
        || name.equals("version-hint.text") || name.startsWith(".") && name.endsWith(".tmp")
        || name.endsWith(".crc");
  }

  /** The path with every symbolic link of its longest existing prefix resolved. */
  static Path real(Path path) {
    Path abs = path.toAbsolutePath().normalize();
    Path existing = abs;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return abs;
    }
    try {
      return existing.toRealPath().resolve(existing.relativize(abs));
    } catch (IOException e) {
      return abs;
    }
  }
}
