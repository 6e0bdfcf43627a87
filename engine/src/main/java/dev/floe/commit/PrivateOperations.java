package dev.floe.commit;

import org.apache.iceberg.LocationProviders;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * A table's operations over a private copy of its metadata: a commit replaces the copy and moves no
 * catalog pointer, and nobody else sees it; files are written where the table's are. A transaction
 * block's statements commit to one ({@code exec.Transaction}), and so does a group commit's leader,
 * applying the group's changes in turn ({@link GroupCommit}); what was committed privately is then
 * folded into one change ({@link StagedSnapshots}).
 */
public class PrivateOperations implements TableOperations {
  private final TableOperations real;
  private TableMetadata current;

  /** Operations of the table {@code real} operates, starting from its state {@code base}. */
  public PrivateOperations(TableOperations real, TableMetadata base) {
    this.real = real;
    this.current = base;
  }

  /** Puts the private state back to {@code metadata} (a savepoint's). */
  public void reset(TableMetadata metadata) {
    this.current = metadata;
  }

  @Override
  public TableMetadata current() {
    return current;
  }

  @Override
  public TableMetadata refresh() {
    return current;
  }

  @Override
  public void commit(TableMetadata base, TableMetadata metadata) {
    if (base != current) {
      throw new CommitFailedException("Cannot commit: the private state changed since the change was planned");
    }
    current = metadata;
  }

  @Override
  public FileIO io() {
    return real.io();
  }

  @Override
  public EncryptionManager encryption() {
    return real.encryption();
  }

  @Override
  public String metadataFileLocation(String fileName) {
    return real.metadataFileLocation(fileName);
  }

  @Override
  public LocationProvider locationProvider() {
    return LocationProviders.locationsFor(current.location(), current.properties());
  }

  @Override
  public long newSnapshotId() {
    return real.newSnapshotId();
  }
}
