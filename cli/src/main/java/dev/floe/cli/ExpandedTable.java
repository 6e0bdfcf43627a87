package dev.floe.cli;

import java.io.PrintStream;
import java.util.List;

/**
 * psql's expanded display ({@code \x}, border 1): each row a record of {@code name | value} lines under a
 * {@code -[ RECORD n ]} rule as wide as the records; values are left-aligned whatever their type, and a
 * value that continues on the next line ends in {@code +}, as psql shows them.
 *
 * <pre>
 * -[ RECORD 1 ]-
 * first  | 1
 * second | one
 * </pre>
 */
final class ExpandedTable {
  private final List<String> headers;
  private final int headerWidth;
  private int valueWidth;

  ExpandedTable(List<String> headers) {
    this.headers = List.copyOf(headers);
    int width = 0;
    for (String h : headers) {
      width = Math.max(width, maxWidth(AlignedTable.displayLines(h)));
    }
    this.headerWidth = width;
  }

  /** Widens the value column so that {@code row} fits. */
  void fit(String[] row) {
    for (String value : row) {
      valueWidth = Math.max(valueWidth, maxWidth(AlignedTable.displayLines(value)));
    }
  }

  /** Record {@code number} (from 1): its rule, then a line per column (more for values with line breaks). */
  void printRecord(PrintStream out, long number, String[] row) {
    out.println(rule(number));
    for (int c = 0; c < headers.size(); c++) {
      List<String> names = AlignedTable.displayLines(headers.get(c));
      List<String> values = AlignedTable.displayLines(row[c]);
      int height = Math.max(names.size(), values.size());
      for (int line = 0; line < height; line++) {
        StringBuilder b = new StringBuilder();
        String name = line < names.size() ? names.get(line) : "";
        b.append(name).append(" ".repeat(Math.max(0, headerWidth - AlignedTable.displayWidth(name))));
        b.append(line < names.size() - 1 ? '+' : ' ').append("| ");
        if (line < values.size()) {
          String value = values.get(line);
          b.append(value);
          if (line < values.size() - 1) {
            b.append(" ".repeat(Math.max(0, valueWidth - AlignedTable.displayWidth(value)))).append('+');
          }
        }
        out.println(b);
      }
    }
  }

  /**
   * {@code -[ RECORD n ]} laid over the separator psql draws between the name and value columns
   * ({@code -------+------}): what of it is longer than the label shows after it.
   */
  String rule(long number) {
    String label = "-[ RECORD " + number + " ]";
    String separator = "-".repeat(headerWidth + 1) + "+" + "-".repeat(valueWidth + 1);
    return label.length() >= separator.length() ? label : label + separator.substring(label.length());
  }

  private static int maxWidth(List<String> lines) {
    int max = 0;
    for (String l : lines) {
      max = Math.max(max, AlignedTable.displayWidth(l));
    }
    return max;
  }
}
