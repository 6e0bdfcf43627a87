package dev.floe.catalog;

import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.view.BaseViewOperations;
import org.apache.iceberg.view.ViewMetadata;

/**
 * One view of the {@link FloeCatalog}, for Iceberg's view API (the REST catalog's views): reads the metadata
 * file its catalog row names; a commit goes through {@link FloeCatalog#commitView} (a new metadata file and a
 * compare-and-swap of the row, or the change sent to a REST catalog). Floe's own
 * {@code CREATE VIEW} ({@code exec.Views}) commits through the same row.
 */
final class FloeViewOperations extends BaseViewOperations {
  private final FloeCatalog catalog;
  private final TableIdentifier id;
  private final FileIO io;

  FloeViewOperations(FloeCatalog catalog, TableIdentifier id, FileIO io) {
    this.catalog = catalog;
    this.id = id;
    this.io = io;
  }

  @Override
  protected void doRefresh() {
    String location = catalog.viewLocation(id).orElse(null);
    if (location == null) {
      if (currentMetadataLocation() != null) {
        throw new NoSuchViewException("View does not exist: %s", id);
      }
      disableRefresh();
      return;
    }
    refreshFromMetadataLocation(location);
  }

  @Override
  protected void doCommit(ViewMetadata base, ViewMetadata metadata) {
    if (!catalog.commitView(id, base, metadata)) {
      throw new CommitFailedException("Cannot commit view %s: another commit moved it first", id);
    }
    requestRefresh();
  }

  @Override
  protected String viewName() {
    return id.toString();
  }

  @Override
  protected FileIO io() {
    return io;
  }
}
