package dev.floe.commit;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.catalog.FloeCatalog;
import dev.floe.catalog.FloeTableOperations;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;

/**
 * Commits of table metadata decided elsewhere: another engine's commit through the REST catalog (Spark,
 * Trino, PyIceberg) arrives as the metadata it wants after the table's current one. Such a commit is not a
 * {@link TableChange} (Floe did not write its files and cannot rebase it); it is a compare-and-swap of the
 * table's catalog pointer, as Iceberg's own catalogs commit, taken here under the tables' commit locks
 * ({@link Committer#lock}, in name order, as a transaction block's COMMIT takes them) so this process's
 * writers and the foreign commit take turns instead of failing each other's swap, and swapped for every
 * table of the commit in one SQLite transaction ({@link FloeCatalog#swapAll}): all tables move or none.
 *
 * <p>Each change gets the table's current metadata (null for a table that does not exist yet: a create)
 * and returns the metadata to commit, or throws when what it requires of the table no longer holds
 * ({@link CommitFailedException}: the client reloads and retries). When another process moves a pointer
 * between the read and the swap, the changes run again on the new state.
 */
public final class MetadataCommits {
  /** Attempts when other processes keep winning the swap. */
  private static final int ATTEMPTS = 4;

  /** One table's change: its current metadata (null if none) to the metadata to commit. */
  public record Change(TableIdentifier id, UnaryOperator<TableMetadata> apply) {}

  private final FloeCatalog catalog;
  private final Committer committer;

  public MetadataCommits(FloeCatalog catalog, Committer committer) {
    this.catalog = catalog;
    this.committer = committer;
  }

  /**
   * Commits every change, atomically.
   *
   * @param check called with each new metadata before anything is written (locations a client may not
   *     use): it throws to refuse the commit
   * @return each table's metadata after the commit, in the order given
   * @throws CommitFailedException when a change's requirements do not hold
   * @throws FloeException 08007 when the outcome is unknown
   */
  public List<TableMetadata> commit(List<Change> changes, Consumer<TableMetadata> check) {
    Set<TableIdentifier> seen = new HashSet<>();
    for (Change c : changes) {
      if (!seen.add(c.id())) {
        throw new IllegalArgumentException("table " + c.id() + " is changed twice in one commit");
      }
    }
    List<Change> sorted = new ArrayList<>(changes);
    sorted.sort(Comparator.comparing(c -> c.id().toString()));
    for (int attempt = 1; ; attempt++) {
      List<TableMetadata> committed = locked(sorted, 0, check);
      if (committed != null) {
        List<TableMetadata> out = new ArrayList<>();
        for (Change c : changes) {
          out.add(committed.get(sorted.indexOf(c)));
        }
        return out;
      }
      if (attempt == ATTEMPTS) {
        throw new CommitFailedException("Cannot commit: other processes moved the tables %d times", ATTEMPTS);
      }
    }
  }

  /** Under the locks of {@code sorted[k..]}: null when another process won the swap. */
  private List<TableMetadata> locked(List<Change> sorted, int k, Consumer<TableMetadata> check) {
    if (k < sorted.size()) {
      synchronized (committer.lock(sorted.get(k).id())) {
        return locked(sorted, k + 1, check);
      }
    }
    List<FloeTableOperations.Prepared> prepared = new ArrayList<>();
    List<java.util.function.Supplier<TableMetadata>> results = new ArrayList<>();
    try {
      for (Change c : sorted) {
        FloeTableOperations ops = catalog.operations(c.id());
        TableMetadata base = ops.refresh();
        TableMetadata updated = c.apply().apply(base);
        if (base != null && updated == base) {
          results.add(() -> base); // nothing to change: the table stays as it is
          continue;
        }
        check.accept(updated);
        FloeTableOperations.Prepared p = ops.prepare(base, updated);
        prepared.add(p);
        results.add(ops::current); // as committed, once published
      }
      if (prepared.isEmpty()) {
        return results.stream().map(java.util.function.Supplier::get).toList();
      }
      if (!catalog.swapAll(prepared, dev.floe.catalog.Durable.now())) {
        prepared.forEach(FloeTableOperations.Prepared::abandon);
        return null;
      }
    } catch (CommitStateUnknownException e) {
      throw new FloeException(SqlState.TRANSACTION_RESOLUTION_UNKNOWN, "could not tell whether the commit took "
          + "effect", e.getMessage(), "Load the tables to see whether the change is in them.", 0, e);
    } catch (RuntimeException e) {
      prepared.forEach(FloeTableOperations.Prepared::abandon);
      throw e;
    }
    prepared.forEach(FloeTableOperations.Prepared::publish);
    return results.stream().map(java.util.function.Supplier::get).toList();
  }
}
