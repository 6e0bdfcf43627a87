package dev.floe.exec;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * One lock per change stream in this process, keyed by its target's uuid (its state table's name). Each
 * batch holds it ({@link ChangeApply}), and so does the background maintainer while it plans and commits
 * a compaction of the stream's target or state table ({@link Maintainer}).
 *
 * <p>A batch reads both tables, works for seconds and commits both. A rewrite of either landing in that
 * time makes the batch find every row it deletes again, by value, among the rewritten files
 * ({@code DeleteRebase}, {@code MovedRows}); for a batch of a million rows that costs more than the rewrite
 * itself (12 s against 6 s, measured). A rewrite between two batches costs nothing of the sort. The lock is
 * fair, so that a stream applying batches back to back does not keep the maintainer out.
 */
final class ChangeLocks {
  private static final Map<String, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

  private ChangeLocks() {}

  /** The lock of the stream whose state is {@code state}. */
  static ReentrantLock of(ChangeState state) {
    return LOCKS.computeIfAbsent(state.id.name(), k -> new ReentrantLock(true));
  }

  /**
   * The lock of the stream of this process that writes {@code id}, if one does: {@code id} is its target
   * (whose uuid is {@code uuid}) or its state table.
   */
  static Optional<ReentrantLock> writing(TableIdentifier id, String uuid) {
    boolean state = id.namespace().levels().length == 1 && ChangeState.NAMESPACE.equals(id.namespace().level(0));
    return Optional.ofNullable(LOCKS.get(state ? id.name() : uuid));
  }
}
