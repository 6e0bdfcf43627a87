package dev.floe.server.pg;

import dev.floe.Column;
import dev.floe.PgType;
import dev.floe.PgValues;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Rows of a result read straight from its Arrow batches into DataRow messages: integers, booleans and
 * text are encoded from the vectors without making a Java object per value; other values go through
 * the same conversion rows do. Keeps its place between Execute messages (suspended portals).
 */
final class ArrowCursor {
  private final ArrowReader reader;
  private final List<Column> columns;
  private final PgType[] types;
  private VectorSchemaRoot root;
  private int row;
  private int rows;
  private boolean done;

  ArrowCursor(ArrowReader reader, List<Column> columns) {
    this.reader = reader;
    this.columns = columns;
    this.types = columns.stream().map(c -> PgType.of(c.type())).toArray(PgType[]::new);
  }

  /** Whether another row follows (loading the next batch if this one is used up). */
  boolean hasNext() throws IOException {
    while (!done && (root == null || row + 1 >= rows)) {
      if (!reader.loadNextBatch()) {
        done = true;
        break;
      }
      root = reader.getVectorSchemaRoot();
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

  /** Writes the current row as a DataRow. */
  void write(MessageWriter out, boolean[] binary, ZoneId zone) throws IOException {
    List<FieldVector> vectors = root.getFieldVectors();
    out.begin('D').int16(vectors.size());
    try {
      for (int k = 0; k < vectors.size(); k++) {
        FieldVector v = vectors.get(k);
        if (v.isNull(row)) {
          out.value(null);
        } else if (binary[k]) {
          out.value(PgValues.binary(PgValues.fromArrow(v, row, columns.get(k)), types[k], zone));
        } else if (v instanceof VarCharVector s) {
          out.value(s.get(row)); // already UTF-8
        } else if (v instanceof BigIntVector b) {
          out.value(Long.toString(b.get(row)).getBytes(StandardCharsets.US_ASCII));
        } else if (v instanceof IntVector i) {
          out.value(Integer.toString(i.get(row)).getBytes(StandardCharsets.US_ASCII));
        } else if (v instanceof SmallIntVector i) {
          out.value(Short.toString(i.get(row)).getBytes(StandardCharsets.US_ASCII));
        } else if (v instanceof BitVector b) {
          out.value(new byte[] {(byte) (b.get(row) != 0 ? 't' : 'f')});
        } else {
          out.value(PgValues.text(PgValues.fromArrow(v, row, columns.get(k)), zone));
        }
      }
    } catch (RuntimeException e) {
      out.abandon();
      throw e;
    }
    out.end();
  }
}
