package dev.floe.cdc;

import java.util.List;

/**
 * A large batch of LWW envelopes decoded and folded per key in columns, on every core, without a tree or
 * an object per envelope, as {@link DebeziumBatch} does Debezium's: each key's newest row deletion, its
 * newest row marker ({@code insert}) and each cell's newest write by Cassandra's order (the later
 * timestamp; at one timestamp a tombstone over a value).
 *
 * <p>It takes only batches it decodes exactly as {@link LwwEnvelopes} does, and returns null for any other
 * (the caller folds it with {@link Fold}): every line valid JSON, an object of {@code key} (every key
 * column once, of its type), {@code ts} (an integer), and either {@code delete: true} or a write
 * ({@code insert} true, false or null; {@code cells} of the table's other columns, each once, NULL or of
 * its JSON type) that writes something; no TTL ({@code ttl}, {@code expires_at}), no partition or range
 * deletion, and no two different values of a cell at one timestamp (Cassandra compares their bytes: the
 * fold's). Column types: {@link FoldedColumns#fits}.
 */
public final class LwwBatch extends ColumnarBatch {
  private LwwBatch(TableShape shape, Kind[] kinds) {
    super(shape, kinds);
  }

  /** The batch folded per key, or null when it has an envelope this decoder does not read exactly. */
  public static FoldedColumns fold(TableShape shape, List<String> lines) {
    Kind[] kinds = kinds(shape);
    if (kinds == null) {
      return null;
    }
    LwwBatch batch = new LwwBatch(shape, kinds);
    List<Chunk> chunks = chunks(lines, (from, to) -> batch.decode(lines, from, to));
    return chunks == null ? null : batch.fold(chunks);
  }

  /** A chunk of envelopes decoded: per line its timestamp, whether it deletes or inserts, and the cells it writes. */
  private final class Chunk {
    final int n;
    final long[] ts;
    final boolean[] delete;
    final boolean[] insert;
    /** Per column, per line: whether the envelope writes it. */
    final boolean[][] written;
    final Values values;

    Chunk(int n) {
      this.n = n;
      ts = new long[n];
      delete = new boolean[n];
      insert = new boolean[n];
      written = new boolean[kinds.length][n];
      values = new Values(n);
    }
  }

  private Chunk decode(List<String> lines, int from, int to) {
    Chunk d = new Chunk(to - from);
    JsonCursor in = new JsonCursor(shape, kinds);
    boolean[] seen = new boolean[kinds.length];
    for (int i = from; i < to; i++) {
      read(in, seen, lines.get(i), d, i - from);
    }
    return d;
  }

  private void read(JsonCursor in, boolean[] seen, String line, Chunk d, int row) {
    in.reset(line);
    in.ws();
    boolean keyNamed = false;
    boolean tsNamed = false;
    boolean insertNamed = false;
    boolean cellsNamed = false;
    boolean deleteNamed = false;
    boolean deletes = false;
    int cellsWritten = 0;
    if (!in.open()) {
      throw Refused.INSTANCE;
    }
    do {
      switch (in.name()) {
        case "key" -> {
          if (keyNamed || in.peek() != '{') {
            throw Refused.INSTANCE;
          }
          keyNamed = true;
          java.util.Arrays.fill(seen, false);
          int count = 0;
          if (in.open()) {
            do {
              int c = shape.column(in.name());
              if (c < 0 || shape.keyPosition(c) < 0 || !in.value(c, false, false)) {
                throw Refused.INSTANCE; // not a key column, NULL or not of its type
              }
              count += seen[c] ? 0 : 1; // a column named twice: the last value, as in Jackson's tree
              seen[c] = true;
              d.values.set(c, row, in);
            } while (in.next());
          }
          if (count != shape.keySize()) {
            throw Refused.INSTANCE; // a prefix: a partition or range deletion, or the fold's error
          }
        }
        case "ts" -> {
          if (tsNamed) {
            throw Refused.INSTANCE;
          }
          tsNamed = true;
          d.ts[row] = in.integer();
        }
        case "insert" -> {
          if (insertNamed) {
            throw Refused.INSTANCE;
          }
          insertNamed = true;
          d.insert[row] = in.bool(false);
        }
        case "delete" -> {
          if (deleteNamed) {
            throw Refused.INSTANCE;
          }
          deleteNamed = true;
          deletes = in.bool(false);
        }
        case "cells" -> {
          if (cellsNamed) {
            throw Refused.INSTANCE;
          }
          cellsNamed = true;
          if (in.peek() == 'n') {
            in.literal("null");
          } else {
            if (in.peek() != '{') {
              throw Refused.INSTANCE;
            }
            java.util.Arrays.fill(seen, false);
            if (in.open()) {
              do {
                int c = shape.column(in.name());
                if (c < 0 || shape.keyPosition(c) >= 0 || !in.value(c, true, false)) {
                  throw Refused.INSTANCE; // the fold's error, or a value it reads otherwise
                }
                cellsWritten += seen[c] ? 0 : 1; // a column named twice: the last value, as in Jackson's tree
                seen[c] = true;
                d.written[c][row] = true;
                d.values.set(c, row, in);
              } while (in.next());
            }
          }
        }
        default -> throw Refused.INSTANCE; // ttl and expires_at (the tree decoder's), or an unknown field
      }
    } while (in.next());
    in.end();
    if (!keyNamed || !tsNamed) {
      throw Refused.INSTANCE;
    }
    if (deletes) {
      if (cellsNamed || d.insert[row]) {
        throw Refused.INSTANCE; // deletes and writes: the fold's error
      }
      d.delete[row] = true;
    } else if (!d.insert[row] && cellsWritten == 0) {
      throw Refused.INSTANCE; // writes nothing
    }
  }

  /** Folds the decoded chunks per key by Cassandra's order, part by part. */
  private FoldedColumns fold(List<Chunk> chunks) {
    int lines = chunks.stream().mapToInt(c -> c.n).sum();
    Slots slots = new Slots(lines);
    int capacity = Math.max(16, lines); // a key a line at most
    long[] del = new long[capacity];
    long[] marker = new long[capacity];
    long[][] at = new long[cells.length][capacity];
    long[][] winner = new long[cells.length][capacity]; // (chunk << 32) | row of each cell's newest write
    long changes = 0;
    long maxPosition = Long.MIN_VALUE;
    for (int ci = 0; ci < chunks.size(); ci++) {
      Chunk d = chunks.get(ci);
      for (int r = 0; r < d.n; r++) {
        changes++;
        long ts = d.ts[r];
        maxPosition = Math.max(maxPosition, ts);
        int size = slots.size;
        int slot = slots.of(d.values, r);
        if (slot == size) {
          if (size == capacity) {
            capacity *= 2;
            del = java.util.Arrays.copyOf(del, capacity);
            marker = java.util.Arrays.copyOf(marker, capacity);
            for (int i = 0; i < cells.length; i++) {
              at[i] = java.util.Arrays.copyOf(at[i], capacity);
              winner[i] = java.util.Arrays.copyOf(winner[i], capacity);
            }
          }
          del[slot] = Long.MIN_VALUE;
          marker[slot] = Long.MIN_VALUE;
          for (long[] a : at) {
            a[slot] = Long.MIN_VALUE;
          }
        }
        if (d.delete[r]) {
          del[slot] = Math.max(del[slot], ts);
          continue;
        }
        if (d.insert[r]) {
          marker[slot] = Math.max(marker[slot], ts);
        }
        for (int i = 0; i < cells.length; i++) {
          int c = cells[i];
          if (!d.written[c][r]) {
            continue;
          }
          if (ts > at[i][slot]) {
            at[i][slot] = ts;
            winner[i][slot] = ((long) ci << 32) | r;
          } else if (ts == at[i][slot]) {
            Chunk w = chunks.get((int) (winner[i][slot] >>> 32));
            int wr = (int) winner[i][slot];
            boolean newNull = d.values.nulls[c][r];
            boolean oldNull = w.values.nulls[c][wr];
            if (newNull && !oldNull) {
              winner[i][slot] = ((long) ci << 32) | r; // at one timestamp a tombstone beats a value
            } else if (!newNull && !oldNull && !sameValue(c, d, r, w, wr)) {
              return null; // two values at one timestamp: Cassandra compares their bytes, in the fold
            }
          }
        }
      }
    }
    int size = slots.size;
    Object[] cellValues = new Object[cells.length];
    boolean[][] cellNulls = new boolean[cells.length][size];
    for (int i = 0; i < cells.length; i++) {
      cellValues[i] = kinds[cells[i]].textual() ? new String[size] : new long[size];
    }
    for (int slot = 0; slot < size; slot++) {
      if (marker[slot] <= del[slot]) {
        marker[slot] = Long.MIN_VALUE; // what the key's deletion outranks is no write (RowState.prune)
      }
      for (int i = 0; i < cells.length; i++) {
        if (at[i][slot] <= del[slot]) {
          at[i][slot] = Long.MIN_VALUE;
        }
        if (at[i][slot] == Long.MIN_VALUE) {
          cellNulls[i][slot] = true;
          continue;
        }
        Chunk w = chunks.get((int) (winner[i][slot] >>> 32));
        int wr = (int) winner[i][slot];
        int c = cells[i];
        cellNulls[i][slot] = w.values.nulls[c][wr];
        if (cellValues[i] instanceof String[] t) {
          t[slot] = w.values.textAt(c, wr);
        } else {
          ((long[]) cellValues[i])[slot] = w.values.longAt(c, wr);
        }
      }
    }
    long[][] cellAt = new long[cells.length][];
    for (int i = 0; i < cells.length; i++) {
      cellAt[i] = java.util.Arrays.copyOf(at[i], size);
    }
    return new FoldedColumns(size, slots.keys(), java.util.Arrays.copyOf(del, size),
        java.util.Arrays.copyOf(marker, size), cellAt, cellValues, cellNulls, changes, maxPosition);
  }

  private boolean sameValue(int c, Chunk a, int ar, Chunk b, int br) {
    return kinds[c].textual() ? a.values.textAt(c, ar).equals(b.values.textAt(c, br))
        : a.values.longAt(c, ar) == b.values.longAt(c, br);
  }
}
