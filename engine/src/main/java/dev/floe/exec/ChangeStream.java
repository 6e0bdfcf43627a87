package dev.floe.exec;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.cdc.Fold;
import dev.floe.cdc.TableShape;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A target table's change stream, as the embedded {@link dev.floe.Changes} API uses it: the shape its
 * envelopes are decoded with, batches applied ({@link ChangeApply}), and the position the last one
 * committed.
 */
public final class ChangeStream {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ChangeStream.class);
  private final Engine engine;
  private final TableIdentifier target;
  private final ChangeState state;

  ChangeStream(Engine engine, TableIdentifier target, ChangeState state) {
    this.engine = engine;
    this.target = target;
    this.state = state;
  }

  static ChangeStream open(Engine engine, List<String> parts, String defaultSchema) {
    TableIdentifier id = engine.tables().identifier(parts, defaultSchema)
        .orElseThrow(() -> FloeException.undefinedTable(String.join(".", parts)));
    Optional<Table> table = engine.tables().current(id);
    if (ChangeStateGuard.isState(id) && table.isPresent()) {
      throw ChangeStateGuard.denied(id, ChangeStateGuard.targetOf(engine.tables(), id), 0);
    }
    if (table.isEmpty() && engine.tables().catalog().viewLocation(id).isPresent()) {
      throw new FloeException(SqlState.WRONG_OBJECT_TYPE, "\"" + id.name() + "\" is not a table", null,
          "A change stream is applied to a table with a primary key.", 0, null);
    }
    return new ChangeStream(engine, id, ChangeState.of(table.orElseThrow(() -> FloeException.undefinedTable(
        String.join(".", parts))), id.name()));
  }

  public TableShape shape() {
    return state.shape;
  }

  /**
   * Applies a folded batch, at {@code nowSeconds} (when TTLs are judged), recording {@code position}
   * (null: the batch's greatest source position) in the snapshots it commits.
   *
   * @return the changes applied, the keys whose rows changed, the rows written and deleted, and whether
   *     anything was committed: {@code long[] {changes, keys, written, deleted, committed ? 1 : 0}}
   */
  public long[] apply(Fold fold, String position, long nowSeconds) {
    engine.checkWritable();
    ChangeApply.Outcome o = new ChangeApply(engine, target, state).apply(fold, position, nowSeconds);
    return new long[] {o.changes(), o.keysChanged(), o.rowsWritten(), o.rowsDeleted(), o.committed() ? 1 : 0};
  }

  /**
   * Applies a large batch of envelopes (one JSON value each) decoded and folded in columns and reconciled
   * in DuckDB ({@link ChangeBulk}), as {@link #apply} does; null when that path does not take the batch
   * (small, or an envelope the columnar decoders do not read exactly): fold it in Java.
   */
  public long[] applyColumnar(dev.floe.cdc.ChangeFormat format, List<String> envelopes, String position,
      long nowSeconds) {
    engine.checkWritable();
    if (envelopes.size() < Integer.getInteger(ChangeBulk.MIN_EVENTS_PROPERTY, ChangeBulk.MIN_EVENTS)
        || !ChangeBulk.fits(state.shape)) {
      return null;
    }
    long t0 = System.nanoTime();
    dev.floe.cdc.FoldedColumns folded = format == dev.floe.cdc.ChangeFormat.DEBEZIUM
        ? dev.floe.cdc.DebeziumBatch.fold(state.shape, envelopes) : dev.floe.cdc.LwwBatch.fold(state.shape, envelopes);
    if (folded == null) {
      return null;
    }
    LOG.debug("{} envelopes of {} decoded and folded in columns in {} ms", envelopes.size(), target.name(),
        (System.nanoTime() - t0) / 1_000_000);
    ChangeApply.Outcome o = new ChangeApply(engine, target, state).applyBulk(folded,
        format == dev.floe.cdc.ChangeFormat.DEBEZIUM, position, nowSeconds);
    return o == null ? null
        : new long[] {o.changes(), o.keysChanged(), o.rowsWritten(), o.rowsDeleted(), o.committed() ? 1 : 0};
  }

  /** Records {@code position} with nothing changed; whether it committed ({@link ChangeApply#advance}). */
  public boolean advance(String position) {
    engine.checkWritable();
    return new ChangeApply(engine, target, state).advance(position);
  }

  /** The position the last committed batch recorded, if one did. */
  public Optional<String> position() {
    return engine.tables().current(state.id).map(Table::currentSnapshot).map(Snapshot::summary)
        .map(s -> s.get(ChangeState.POSITION)).filter(p -> !p.isEmpty());
  }
}
