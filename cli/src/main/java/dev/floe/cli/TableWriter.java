package dev.floe.cli;

import dev.floe.Column;
import dev.floe.Result;
import dev.floe.Row;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Prints a result as psql's aligned table followed by {@code (N rows)} and a blank line, or with {@code \x} as
 * psql's expanded records (no row count, as psql). Column widths come from the first {@value #ALIGNED_ROWS}
 * rows; a longer result streams the rest with those widths instead of holding millions of rows in memory, so a
 * wider value further down shifts its own line only.
 */
final class TableWriter implements ResultWriter {
  static final int ALIGNED_ROWS = 10_000;

  private final PrintStream out;
  private final String nullDisplay;
  private final OutputSettings.Expanded expanded;
  private final int screenWidth;

  TableWriter(PrintStream out, String nullDisplay) {
    this(out, nullDisplay, OutputSettings.Expanded.OFF, 0);
  }

  /**
   * @param expanded {@code \x}: records instead of a table; auto: records when the table would be wider than
   *     {@code screenWidth} (0 when the output is no terminal: never)
   */
  TableWriter(PrintStream out, String nullDisplay, OutputSettings.Expanded expanded, int screenWidth) {
    this.out = out;
    this.nullDisplay = nullDisplay;
    this.expanded = expanded;
    this.screenWidth = screenWidth;
  }

  @Override
  public long write(Result result) {
    List<Column> columns = result.columns();
    List<String> headers = new ArrayList<>();
    boolean[] rightAligned = new boolean[columns.size()];
    for (int c = 0; c < columns.size(); c++) {
      headers.add(columns.get(c).name());
      rightAligned[c] = columns.get(c).type().isNumeric();
    }
    AlignedTable table = new AlignedTable(headers, rightAligned);
    Iterator<Row> rows = result.iterator();
    List<String[]> first = new ArrayList<>();
    while (first.size() < ALIGNED_ROWS && rows.hasNext()) {
      String[] cells = cells(rows.next());
      table.fit(cells);
      first.add(cells);
    }
    boolean records = expanded == OutputSettings.Expanded.ON || expanded == OutputSettings.Expanded.AUTO
        && screenWidth > 0 && headers.size() > 1 && table.width() > screenWidth;
    if (records) {
      return writeRecords(headers, first, rows);
    }
    table.printHeader(out);
    for (String[] cells : first) {
      table.printRow(out, cells);
    }
    long count = first.size();
    while (rows.hasNext()) {
      table.printRow(out, cells(rows.next()));
      count++;
    }
    out.println(AlignedTable.footer(count));
    out.println();
    return count;
  }

  private long writeRecords(List<String> headers, List<String[]> first, Iterator<Row> rows) {
    if (first.isEmpty()) {
      out.println(AlignedTable.footer(0)); // psql's expanded display counts only an empty result
      out.println();
      return 0;
    }
    ExpandedTable records = new ExpandedTable(headers);
    first.forEach(records::fit);
    long count = 0;
    for (String[] cells : first) {
      records.printRecord(out, ++count, cells);
    }
    while (rows.hasNext()) {
      records.printRecord(out, ++count, cells(rows.next()));
    }
    out.println();
    return count;
  }

  private String[] cells(Row row) {
    String[] cells = new String[row.size()];
    for (int c = 0; c < cells.length; c++) {
      String text = row.getString(c);
      cells[c] = text == null ? nullDisplay : text;
    }
    return cells;
  }
}
