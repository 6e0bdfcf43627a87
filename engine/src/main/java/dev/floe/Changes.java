package dev.floe;

import dev.floe.cdc.ChangeFormat;
import dev.floe.cdc.Fold;
import dev.floe.exec.ChangeStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A change stream folded into a table with a primary key (docs/cdc.md): envelopes in (Cassandra-style
 * LWW cells, or Debezium change events, one JSON value each), the table's current state out. Each
 * {@link #apply} is one batch: its envelopes are reconciled per key with what earlier batches left, and
 * the changed rows are committed in one catalog swap together with the reconciliation state, the
 * snapshot summaries recording the batch's source position. Applying envelopes again, in any order or
 * batches, leaves the table as it is: each write is a maximum of its key's state.
 *
 * <pre>{@code
 * Changes changes = db.changes("customers", Changes.Format.DEBEZIUM);
 * Changes.Applied a = changes.apply(List.of(eventJson1, eventJson2));   // one commit
 * }</pre>
 */
public final class Changes {
  /** The envelope formats. */
  public enum Format {
    /** Cassandra-style cells with write timestamps, TTLs and tombstones. */
    LWW,
    /** Debezium change events, with or without their schema. */
    DEBEZIUM
  }

  /**
   * What a batch did: its envelopes, the changes they made (a primary-key change is two), the keys whose
   * rows changed, the rows written and deleted in the table, and whether anything was committed.
   */
  public record Applied(long envelopes, long changes, long keysChanged, long rowsWritten, long rowsDeleted,
      boolean committed) {}

  private final Database db;
  private final String table;
  private final Format format;
  private final ChangeStream stream;

  Changes(Database db, ChangeStream stream, String table, Format format) {
    this.db = db;
    this.stream = stream;
    this.table = table;
    this.format = Objects.requireNonNull(format, "format");
  }

  public String table() {
    return table;
  }

  public Format format() {
    return format;
  }

  /** Applies {@code envelopes} as one batch. */
  public Applied apply(Iterable<String> envelopes) {
    return apply(envelopes.iterator(), null);
  }

  /** Applies {@code envelopes} as one batch, recording {@code position} as where the source stands after it. */
  public Applied apply(Iterable<String> envelopes, String position) {
    return apply(envelopes.iterator(), position);
  }

  /** Applies {@code envelopes} as one batch. */
  public Applied apply(Stream<String> envelopes) {
    return apply(envelopes.iterator(), null);
  }

  /**
   * Applies {@code envelopes} as one batch. A bad envelope fails the whole batch (nothing is applied)
   * with its error, whose context names the envelope (1 for the first).
   *
   * @throws FloeException 22P02 (not JSON), 22023 (not an envelope of the format), 42703 (a column the
   *     table lacks), a value's error (22003, 22001, 22P02), 23502 (a NULL in a NOT NULL column of a row
   *     that exists), 40001 (a concurrent write to the table conflicted: nothing was applied; try again)
   */
  public Applied apply(Iterator<String> envelopes, String position) {
    db.checkOpen();
    List<String> batch = new ArrayList<>();
    envelopes.forEachRemaining(batch::add);
    long now = System.currentTimeMillis() / 1000;
    long[] r = stream.applyColumnar(format == Format.DEBEZIUM ? dev.floe.cdc.ChangeFormat.DEBEZIUM
        : dev.floe.cdc.ChangeFormat.LWW, batch, position, now);
    if (r == null) {
      r = stream.apply(decode(batch), position, now);
    }
    return new Applied(batch.size(), r[0], r[1], r[2], r[3], r[4] == 1);
  }

  /** Envelopes per decoding task: a large batch is decoded on every core, each part folded apart. */
  private static final int PART = 20_000;

  /**
   * The batch decoded and folded. Folding is a maximum per key, so the parts' folds, folded together, are
   * the fold of the whole batch.
   */
  private Fold decode(List<String> batch) {
    int parts = (int) Math.min(Runtime.getRuntime().availableProcessors(), (batch.size() + PART - 1) / PART);
    if (parts <= 1) {
      return decode(batch, 0, batch.size());
    }
    List<java.util.concurrent.Future<Fold>> futures = new ArrayList<>();
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(parts, r -> {
      Thread t = new Thread(r, "floe-cdc-decode");
      t.setDaemon(true);
      return t;
    });
    try {
      for (int p = 0; p < parts; p++) {
        int from = (int) ((long) batch.size() * p / parts);
        int to = (int) ((long) batch.size() * (p + 1) / parts);
        futures.add(pool.submit(() -> decode(batch, from, to)));
      }
      Fold fold = null;
      for (java.util.concurrent.Future<Fold> f : futures) {
        Fold part = f.get();
        if (fold == null) {
          fold = part;
        } else {
          fold.addAll(part);
        }
      }
      return fold;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FloeException(SqlState.QUERY_CANCELED, "canceling the batch: interrupted");
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r; // the first part's error in batch order
      }
      throw new FloeException(SqlState.INTERNAL_ERROR, "cannot decode the batch: " + e.getCause(), e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  private Fold decode(List<String> batch, int from, int to) {
    ChangeFormat.Decoder decoder = (format == Format.LWW ? ChangeFormat.LWW : ChangeFormat.DEBEZIUM)
        .decoder(stream.shape());
    Fold fold = new Fold(stream.shape(), from == 0 ? batch.size() : to - from); // the first part takes the others in
    for (int n = from; n < to; n++) {
      try {
        decoder.decode(batch.get(n)).forEach(fold::add);
      } catch (FloeException err) {
        throw err.withContext("change envelope " + (n + 1));
      }
    }
    return fold;
  }

  /**
   * Rewrites the rows whose TTL cells expired since the last batch (a batch does it too; this is for a
   * stream that is quiet).
   */
  public Applied expire() {
    return apply(java.util.Collections.emptyIterator(), position().orElse(null));
  }

  /**
   * Records that the source has been read up to {@code position} with nothing in it for this table (a
   * heartbeat: a source that is written elsewhere keeps this table's position moving, so that it can let
   * go of what it kept for the stream). Commits a snapshot of the change stream's state alone, which adds
   * no file; the table is untouched. The caller orders positions: only a newer one is to be recorded.
   *
   * @return whether it committed (false: {@code position} is the one recorded already)
   * @throws FloeException 22023 if {@code position} is empty
   */
  public boolean advance(String position) {
    db.checkOpen();
    if (position == null || position.isEmpty()) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "a change stream's position is not empty");
    }
    return stream.advance(position);
  }

  /** The source position the last committed batch (or {@link #advance}) recorded, if any did. */
  public Optional<String> position() {
    db.checkOpen();
    return stream.position();
  }
}
