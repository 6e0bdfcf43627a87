package dev.floe.commit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FloeCommit;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;

/**
 * One change to one table, described as a value: what it adds and removes, the snapshot it was decided
 * from, what must still hold for it to be valid if the table moved since, and the files it wrote for
 * itself. Nothing here commits: {@link Committer} does, and nothing about the change is left on any
 * other object. Because the change is a value, it can be applied again on a newer state of the table
 * (re-validated against it), which is all a rebase or a group commit needs.
 *
 * @param kind which Iceberg operation records it (the snapshot's {@code operation} and how it is validated)
 * @param parentId the snapshot the change was decided from (null: the table had none). An append reads
 *     no row and applies to whatever the table holds when it commits: its parent is ignored
 * @param addedData data files it adds
 * @param addedDeletes delete files it adds
 * @param removedData data files it removes
 * @param removedDeletes delete files it removes
 * @param validation what it must be validated against if the table moved since {@code parentId}
 * @param summary properties its snapshot's summary carries besides Iceberg's own
 * @param setProperties table properties set in the same commit
 * @param removedProperties table properties removed in the same commit
 * @param written files the change wrote for itself, deleted when it does not commit
 */
public record TableChange(Kind kind, Long parentId, List<DataFile> addedData, List<DeleteFile> addedDeletes,
    List<DataFile> removedData, List<DeleteFile> removedDeletes, Validation validation, Map<String, String> summary,
    Map<String, String> setProperties, Set<String> removedProperties, List<String> written) {

  /** The Iceberg operation a change is, when Iceberg commits it. */
  public enum Kind {
    /** New data files only (Iceberg's AppendFiles): nothing to validate. */
    APPEND,
    /** Row-level change (Iceberg's RowDelta): data and delete files added and removed, validated. */
    ROW_DELTA,
    /** The same rows in other files (Iceberg's RewriteFiles, snapshot operation {@code replace}). */
    REWRITE,
    /** Data files dropped whole (Iceberg's DeleteFiles). */
    DELETE,
    /**
     * A snapshot of no file, carrying its summary alone (Iceberg's AppendFiles with nothing to append): a
     * change stream recording how far its source has been read when nothing changed (docs/cdc.md).
     */
    MARK
  }

  /**
   * What a change must be checked against when something was committed since the snapshot it read
   * (its parent): the conflicts that fail it with 40001.
   *
   * @param read the rows it was decided from ({@code alwaysFalse()}: none; null: it may have read any)
   * @param keys the primary keys it adds (null: none): data files added since with rows matching them
   *     conflict (Iceberg's {@code validateNoConflictingDataFiles})
   * @param untouched the files it removes, and those its delete files apply to, must be untouched since:
   *     still live and without new deletes matching {@code read} (Iceberg's {@code validateDeletedFiles}
   *     and {@code validateNoConflictingDeleteFiles}); a rewrite always requires it
   * @param referenced data files its delete files apply to, which must still exist
   */
  public record Validation(Expression read, Expression keys, boolean untouched, List<String> referenced) {
    /** An append's: it read nothing and adds no keys. */
    public static final Validation NONE = new Validation(Expressions.alwaysFalse(), null, false, List.of());
    /** A change decided from everything the table held, which added no keys (TRUNCATE). */
    public static final Validation READ_ALL = new Validation(null, null, false, List.of());

    public Validation {
      referenced = List.copyOf(referenced);
    }

    /** The conflict-detection filter: the rows read, and the keys added. */
    public Expression conflictFilter() {
      Expression filter = read == null ? Expressions.alwaysTrue() : read;
      return keys == null ? filter : Expressions.or(filter, keys);
    }
  }

  public TableChange {
    addedData = List.copyOf(addedData);
    addedDeletes = List.copyOf(addedDeletes);
    removedData = List.copyOf(removedData);
    removedDeletes = List.copyOf(removedDeletes);
    summary = Map.copyOf(summary);
    setProperties = Map.copyOf(setProperties);
    removedProperties = Set.copyOf(removedProperties);
    written = List.copyOf(written);
  }

  /** New data files, which the change wrote. */
  public static TableChange append(List<DataFile> files) {
    List<String> written = new ArrayList<>(files.size());
    files.forEach(f -> written.add(f.location()));
    return new TableChange(Kind.APPEND, null, files, List.of(), List.of(), List.of(), Validation.NONE, Map.of(),
        Map.of(), Set.of(), written);
  }

  /** A row-level change decided from snapshot {@code parentId}. */
  public static TableChange rowDelta(Long parentId, List<DataFile> addedData, List<DeleteFile> addedDeletes,
      List<DataFile> removedData, List<DeleteFile> removedDeletes, Validation validation, List<String> written) {
    return new TableChange(Kind.ROW_DELTA, parentId, addedData, addedDeletes, removedData, removedDeletes,
        validation, Map.of(), Map.of(), Set.of(), written);
  }

  /** {@code removed} rewritten as {@code added} (which the change wrote), from snapshot {@code parentId}. */
  public static TableChange rewrite(long parentId, List<DataFile> removed, List<DataFile> added) {
    return rewrite(parentId, removed, List.of(), added);
  }

  /**
   * {@code removed} rewritten as {@code added} without the rows {@code removedDeletes} (deletes of the
   * removed files alone) delete, which go with them; from snapshot {@code parentId}.
   */
  public static TableChange rewrite(long parentId, List<DataFile> removed, List<DeleteFile> removedDeletes,
      List<DataFile> added) {
    List<String> written = new ArrayList<>(added.size());
    added.forEach(f -> written.add(f.location()));
    return new TableChange(Kind.REWRITE, parentId, added, List.of(), removed, removedDeletes,
        new Validation(null, null, true, List.of()), Map.of(), Map.of(), Set.of(), written);
  }

  /**
   * {@code removed} (with {@code removedDeletes}, their deletes) rewritten as {@code added}, less the rows
   * {@code addedDeletes} delete from the added files (rows deleted from the removed files after the
   * rewrite read them); from snapshot {@code parentId}. Only the added delete files are the change's own
   * to delete if it fails: the caller keeps the rewritten data files for another attempt.
   */
  public static TableChange rewrite(long parentId, List<DataFile> removed, List<DeleteFile> removedDeletes,
      List<DataFile> added, List<DeleteFile> addedDeletes) {
    List<String> written = new ArrayList<>(addedDeletes.size());
    addedDeletes.forEach(f -> written.add(f.location()));
    return new TableChange(Kind.REWRITE, parentId, added, addedDeletes, removed, removedDeletes,
        new Validation(null, null, true, List.of()), Map.of(), Map.of(), Set.of(), written);
  }

  /** Data files dropped whole, validating nothing. */
  public static TableChange delete(List<DataFile> removed) {
    return new TableChange(Kind.DELETE, null, List.of(), List.of(), removed, List.of(), Validation.NONE, Map.of(),
        Map.of(), Set.of(), List.of());
  }

  /** A snapshot of no file whose summary carries {@code summary}, from snapshot {@code parentId} ({@link Kind#MARK}). */
  public static TableChange mark(Long parentId, Map<String, String> summary) {
    return new TableChange(Kind.MARK, parentId, List.of(), List.of(), List.of(), List.of(), Validation.NONE, summary,
        Map.of(), Set.of(), List.of());
  }

  /** Table properties only: no snapshot (a change of no file has no Iceberg operation; its kind is unused). */
  public static TableChange properties(Map<String, String> set, Set<String> removed) {
    return new TableChange(Kind.APPEND, null, List.of(), List.of(), List.of(), List.of(), Validation.NONE, Map.of(),
        set, removed, List.of());
  }

  /** This change, its snapshot's summary carrying {@code properties} too. */
  public TableChange withSummary(Map<String, String> properties) {
    return new TableChange(kind, parentId, addedData, addedDeletes, removedData, removedDeletes, validation,
        properties, setProperties, removedProperties, written);
  }

  /** This change, setting and removing table properties in the same commit. */
  public TableChange withProperties(Map<String, String> set, Set<String> removed) {
    return new TableChange(kind, parentId, addedData, addedDeletes, removedData, removedDeletes, validation,
        summary, set, removed, written);
  }

  /** This change, having written {@code files} for itself (none: nothing to delete if it fails). */
  public TableChange withWritten(List<String> files) {
    return new TableChange(kind, parentId, addedData, addedDeletes, removedData, removedDeletes, validation,
        summary, setProperties, removedProperties, files);
  }

  /** Whether it adds or removes any file (and so makes a snapshot). */
  public boolean changesFiles() {
    return !addedData.isEmpty() || !addedDeletes.isEmpty() || !removedData.isEmpty() || !removedDeletes.isEmpty();
  }

  /** Whether it makes a snapshot: it changes files, or is a {@link Kind#MARK}. */
  public boolean makesSnapshot() {
    return changesFiles() || kind == Kind.MARK;
  }

  /** Whether committing it would change nothing. */
  public boolean isEmpty() {
    return !makesSnapshot() && setProperties.isEmpty() && removedProperties.isEmpty();
  }

  /** Its files, as Floe's own commit and the scan planner take them. */
  FloeCommit.Change files() {
    return new FloeCommit.Change(addedData, addedDeletes, removedData, removedDeletes);
  }
}
