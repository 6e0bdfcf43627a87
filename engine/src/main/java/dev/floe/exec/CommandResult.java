package dev.floe.exec;

import dev.floe.Column;
import dev.floe.Result;
import dev.floe.Row;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.vector.ipc.ArrowReader;

/** The result of a statement that returns no rows. */
record CommandResult(String commandTag, long rowCount) implements Result {
  @Override
  public List<Column> columns() {
    return List.of();
  }

  @Override
  public boolean hasRows() {
    return false;
  }

  @Override
  public ArrowReader arrow() {
    throw new IllegalStateException(commandTag + " returns no rows");
  }

  @Override
  public Iterator<Row> iterator() {
    return Collections.emptyIterator();
  }

  @Override
  public void close() {}
}
