package dev.floe.exec;

import dev.floe.Verification;
import dev.floe.catalog.FileDigests;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * {@code floe verify}: every file of every table read again and checked ({@link Verification}). The walk
 * checks each metadata file, manifest list and manifest before it decodes it, so a damaged one is reported
 * as itself, and the files only it names are not reached.
 */
final class Verifier {
  private Verifier() {}

  static List<Verification> verifyAll(Engine engine) {
    List<Verification> out = new ArrayList<>();
    for (TableIdentifier id : engine.tables().catalog().tableLocations().keySet()) {
      out.add(verify(engine, id));
    }
    return out;
  }

  static Verification verify(Engine engine, TableIdentifier id) {
    FileDigests digests = engine.files().digests();
    String pointer = engine.tables().catalog().metadataLocation(id).orElse("?");
    List<Verification.Damage> damaged = new ArrayList<>();
    Table table;
    try {
      table = engine.tables().current(id).orElseThrow(() -> new IllegalStateException("dropped meanwhile"));
    } catch (RuntimeException e) {
      damaged.addAll(damages(digests.check(List.of(pointer))));
      if (damaged.isEmpty()) {
        damaged.add(new Verification.Damage(pointer, "it cannot be read: " + e.getMessage()));
      }
      return new Verification(id.toString(), 1, 0, damaged);
    }
    TableMetadata metadata = ((HasTableOperations) table).operations().current();
    Set<String> all = new LinkedHashSet<>();
    Set<String> metadataFiles = new LinkedHashSet<>();
    metadataFiles.add(metadata.metadataFileLocation());
    metadata.previousFiles().forEach(e -> metadataFiles.add(e.file()));
    all.addAll(metadataFiles);
    damaged.addAll(damages(digests.check(metadataFiles)));
    Set<String> manifests = new LinkedHashSet<>();
    Set<String> content = new LinkedHashSet<>();
    for (Snapshot s : table.snapshots()) {
      String list = s.manifestListLocation();
      if (list != null) {
        all.add(list);
        if (!isOk(digests, list, damaged)) {
          continue;
        }
      }
      List<ManifestFile> listed;
      try {
        listed = s.allManifests(table.io());
      } catch (RuntimeException e) {
        damaged.add(new Verification.Damage(list, "it cannot be read: " + e.getMessage()));
        continue;
      }
      for (ManifestFile m : listed) {
        if (!manifests.add(m.path())) {
          continue;
        }
        all.add(m.path());
        if (!isOk(digests, m.path(), damaged)) {
          continue;
        }
        try (ManifestReader<? extends ContentFile<?>> reader = m.content() == org.apache.iceberg.ManifestContent.DATA
            ? ManifestFiles.read(m, table.io(), table.specs())
            : ManifestFiles.readDeleteManifest(m, table.io(), table.specs())) {
          for (ContentFile<?> f : reader) {
            content.add(f.location());
          }
        } catch (IOException | RuntimeException e) {
          damaged.add(new Verification.Damage(m.path(), "it cannot be read: " + (e instanceof UncheckedIOException u
              ? u.getCause().getMessage() : e.getMessage())));
        }
      }
    }
    table.statisticsFiles().forEach(f -> content.add(f.path()));
    all.addAll(content);
    damaged.addAll(damages(digests.check(content)));
    int known = digests.known(all);
    Set<String> named = new java.util.HashSet<>();
    damaged.forEach(d -> named.add(d.file()));
    for (String f : content) {
      // files another engine wrote have no checksum: their Parquet footers at least must read
      if (f.endsWith(".parquet") && !named.contains(f) && digests.known(List.of(f)) == 0) {
        try {
          engine.files().footers().footer(table.io(), f);
        } catch (RuntimeException e) {
          damaged.add(new Verification.Damage(f, e.getMessage()));
        }
      }
    }
    return new Verification(id.toString(), all.size(), all.size() - known, damaged);
  }

  /** Whether a metadata file is as written (or has no checksum); if not, it is added to {@code damaged}. */
  private static boolean isOk(FileDigests digests, String location, List<Verification.Damage> damaged) {
    List<Verification.Damage> found = damages(digests.check(List.of(location)));
    damaged.addAll(found);
    return found.isEmpty();
  }

  private static List<Verification.Damage> damages(List<FileDigests.Problem> problems) {
    return problems.stream().map(p -> new Verification.Damage(p.location(), p.what())).toList();
  }
}
