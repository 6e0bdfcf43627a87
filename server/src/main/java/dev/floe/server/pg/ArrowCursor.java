package dev.floe.server.pg;

import dev.floe.Column;
import dev.floe.PgType;
import dev.floe.ArrowText;
import java.io.IOException;
import java.time.ZoneId;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Rows of a result read straight from its Arrow batches: DataRow messages and COPY's rows are encoded from
 * the vectors into the message buffer ({@link ArrowText}), with no Java object per value for the common
 * types. Keeps its place between Execute messages (suspended portals).
 */
final class ArrowCursor {
  private final ArrowReader reader;
  private final List<Column> columns;
  private final PgType[] types;
  private VectorSchemaRoot root;
  private List<FieldVector> vectors = List.of();
  /** Batches loaded so far. */
  private long batches;
  private int row;
  private int rows;
  private boolean done;
  /** Per column, the vector its encoder was made for, the encoder, and whether it is binary. */
  private final FieldVector[] encoded;
  private final ArrowText.Encoder[] encoders;
  private final boolean[] encodedBinary;
  private ZoneId encodedZone;
  /** Per column: whether the batch has NULLs in it. */
  private final boolean[] nullable;

  ArrowCursor(ArrowReader reader, List<Column> columns) {
    this.reader = reader;
    this.columns = columns;
    this.types = columns.stream().map(c -> PgType.of(c.type())).toArray(PgType[]::new);
    this.encoded = new FieldVector[columns.size()];
    this.encoders = new ArrowText.Encoder[columns.size()];
    this.encodedBinary = new boolean[columns.size()];
    this.nullable = new boolean[columns.size()];
  }

  /** Whether another row follows (loading the next batch if this one is used up). */
  boolean hasNext() throws IOException {
    while (!done && (root == null || row + 1 >= rows)) {
      if (!reader.loadNextBatch()) {
        done = true;
        break;
      }
      root = reader.getVectorSchemaRoot();
      vectors = List.copyOf(root.getFieldVectors());
      batches++;
      for (int k = 0; k < vectors.size(); k++) {
        nullable[k] = vectors.get(k).getNullCount() > 0; // a column without NULLs is not asked each value's
      }
      rows = root.getRowCount();
      row = -1;
    }
    return !done && row + 1 < rows;
  }

  /** Moves to the next row; false at the end. */
  boolean next() throws IOException {
    if (!hasNext()) {
      return false;
    }
    row++;
    return true;
  }

  /** Moves to the next row of the batch in hand; false when it is used up (then {@link #next}). */
  boolean nextInBatch() {
    if (root != null && row + 1 < rows) {
      row++;
      return true;
    }
    return false;
  }

  /** How many batches were loaded so far: a new count is a new batch ({@link #vectors}). */
  long batches() {
    return batches;
  }

  /** The current batch's vectors. */
  List<FieldVector> vectors() {
    return vectors;
  }

  /** The current row in the batch. */
  int row() {
    return row;
  }

  /** Writes the current row as a DataRow. */
  void write(MessageWriter out, boolean[] binary, ZoneId zone) throws IOException {
    List<FieldVector> vs = vectors;
    out.begin('D').int16(vs.size());
    try {
      for (int k = 0; k < vs.size(); k++) {
        FieldVector v = vs.get(k);
        if (nullable[k] && v.isNull(row)) {
          out.int32(-1);
          continue;
        }
        int at = out.len;
        out.int32(0);
        encoder(v, k, binary[k], zone).write(out, row);
        out.setInt(at, out.len - at - 4);
      }
    } catch (RuntimeException e) {
      out.abandon();
      throw e;
    }
    out.end();
  }

  private ArrowText.Encoder encoder(FieldVector v, int k, boolean binary, ZoneId zone) {
    if (zone != encodedZone) {
      java.util.Arrays.fill(encoded, null); // SET TimeZone between two Executes of a portal
      encodedZone = zone;
    }
    if (encoded[k] != v || encodedBinary[k] != binary) {
      encoders[k] = binary ? ArrowText.binary(v, columns.get(k), types[k], zone) : ArrowText.text(v, columns.get(k), zone);
      encoded[k] = v;
      encodedBinary[k] = binary;
    }
    return encoders[k];
  }
}
