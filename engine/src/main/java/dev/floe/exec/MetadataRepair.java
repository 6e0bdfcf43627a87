package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.TableRepair;
import dev.floe.catalog.LocalFileIO;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A table whose current metadata file is damaged (cut short, garbled, its checksum wrong) cannot be read
 * at all. Its older metadata files usually can: the catalog remembers the previous one, and the metadata
 * directory holds the others. This lists them and points the catalog back to one the operator chooses
 * ({@code floe repair TABLE --to previous|FILE}); the table then reads as of that version, and later
 * commits build on it.
 */
final class MetadataRepair {
  private MetadataRepair() {}

  static TableRepair repair(Engine engine, TableIdentifier id, Optional<String> to) {
    var catalog = engine.tables().catalog();
    String current = catalog.metadataLocation(id).orElseThrow(() -> FloeException.undefinedTable(id.name()));
    Optional<String> problem = problem(engine, current);
    List<TableRepair.Candidate> candidates = candidates(engine, id, current);
    if (to.isEmpty()) {
      return new TableRepair(id.toString(), current, problem, candidates, Optional.empty());
    }
    String target = to.get().equals("previous")
        ? candidates.stream().filter(c -> c.readable() && !c.location().equals(current)).findFirst()
            .map(TableRepair.Candidate::location).orElseThrow(() -> new FloeException(SqlState.UNDEFINED_OBJECT,
                "table " + id + " has no readable metadata file other than its current one"))
        : to.get();
    if (candidates.stream().noneMatch(c -> c.location().equals(target))) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "\"" + target + "\" is not a metadata file of table "
          + id + " (its metadata files are listed without --to)");
    }
    problem(engine, target).ifPresent(p -> {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "cannot point table " + id + " to " + target + ": "
          + p);
    });
    engine.checkWritable();
    synchronized (engine.committer().lock(id)) {
      if (!catalog.repoint(id, current, target)) {
        throw new FloeException(SqlState.SERIALIZATION_FAILURE, "table " + id + " was changed meanwhile");
      }
      engine.tables().forget(id);
    }
    return new TableRepair(id.toString(), current, problem, candidates, Optional.of(target));
  }

  /** Why a metadata file cannot be the table's, or empty if it reads and is as written. */
  private static Optional<String> problem(Engine engine, String location) {
    var digests = engine.files().digests().check(List.of(location));
    if (!digests.isEmpty()) {
      return Optional.of(digests.get(0).what());
    }
    try {
      TableMetadataParser.read(engine.tables().catalog().io(), location);
      return Optional.empty();
    } catch (RuntimeException e) {
      return Optional.of("it cannot be read: " + e.getMessage());
    }
  }

  /** The table's metadata files, newest first: the catalog's previous one, then the metadata directory's. */
  private static List<TableRepair.Candidate> candidates(Engine engine, TableIdentifier id, String current) {
    Set<String> locations = new LinkedHashSet<>();
    locations.add(current);
    engine.tables().catalog().previousMetadataLocation(id).ifPresent(locations::add);
    Path dir = dev.floe.catalog.S3.remote(current) ? null : LocalFileIO.toPath(current).getParent();
    if (dir != null && Files.isDirectory(dir)) {
      try (Stream<Path> files = Files.list(dir)) {
        files.filter(p -> p.getFileName().toString().endsWith(".metadata.json"))
            .sorted(Comparator.comparingLong(MetadataRepair::modified).reversed())
            .forEach(p -> locations.add(p.toString()));
      } catch (IOException e) {
        // the ones known from the catalog are still offered
      }
    }
    List<TableRepair.Candidate> out = new ArrayList<>();
    for (String l : locations) {
      Optional<String> problem = problem(engine, l);
      String description;
      if (problem.isPresent()) {
        description = problem.get();
      } else {
        TableMetadata m = TableMetadataParser.read(engine.tables().catalog().io(), l);
        Snapshot s = m.currentSnapshot();
        description = s == null ? "no snapshot" : "snapshot " + s.snapshotId() + " (sequence number "
            + s.sequenceNumber() + ", " + s.operation() + ", " + Instant.ofEpochMilli(s.timestampMillis()) + ")";
      }
      out.add(new TableRepair.Candidate(l, problem.isEmpty(), description));
    }
    return out;
  }

  private static long modified(Path p) {
    try {
      return Files.getLastModifiedTime(p).toMillis();
    } catch (IOException e) {
      return 0;
    }
  }
}
