package dev.floe;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What {@link Floe#rebuildCatalog} registered (docs/recovery.md).
 *
 * @param tables each table registered, {@code schema.table -> metadata file}
 * @param skipped table directories not registered, with why
 * @param keptAside where the catalog database that was there now is, if there was one
 */
public record RebuiltCatalog(List<String> tables, List<String> skipped, Optional<Path> keptAside) {
  public RebuiltCatalog {
    tables = List.copyOf(tables);
    skipped = List.copyOf(skipped);
  }
}
