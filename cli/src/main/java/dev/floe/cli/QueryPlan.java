package dev.floe.cli;

import dev.floe.Column;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.SqlType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * EXPLAIN's result as psql shows PostgreSQL's: one {@code QUERY PLAN} column, a row per line of the plan, so
 * the plan reads as text (and pages and copies as lines). The engine returns DuckDB's two columns
 * ({@code explain_key}, {@code explain_value}), the whole plan drawn in one multi-line value.
 */
final class QueryPlan implements Result {
  private static final List<Column> COLUMNS = List.of(Column.result("QUERY PLAN", SqlType.TEXT));

  private final List<Row> rows;

  private QueryPlan(List<Row> rows) {
    this.rows = rows;
  }

  /** Whether {@code result} is an EXPLAIN's. */
  static boolean isPlan(Result result) {
    List<Column> c = result.columns();
    return c.size() == 2 && c.get(0).name().equals("explain_key") && c.get(1).name().equals("explain_value");
  }

  /** Reads the plan of {@code result} (closed by its caller) into lines. */
  static QueryPlan of(Result result) {
    List<Row> rows = new ArrayList<>();
    for (Row row : result) {
      String plan = row.getString(1);
      if (plan == null) {
        continue;
      }
      List<String> lines = new ArrayList<>(plan.lines().toList());
      while (!lines.isEmpty() && lines.get(lines.size() - 1).isBlank()) {
        lines.remove(lines.size() - 1);
      }
      for (String line : lines) {
        rows.add(Row.of(COLUMNS, new Object[] {line.stripTrailing()}));
      }
    }
    return new QueryPlan(rows);
  }

  @Override
  public List<Column> columns() {
    return COLUMNS;
  }

  @Override
  public boolean hasRows() {
    return true;
  }

  @Override
  public long rowCount() {
    return rows.size();
  }

  @Override
  public String commandTag() {
    return "EXPLAIN";
  }

  @Override
  public ArrowReader arrow() {
    throw new IllegalStateException("a plan's lines are read as rows");
  }

  @Override
  public Iterator<Row> iterator() {
    return rows.iterator();
  }

  @Override
  public void close() {}
}
