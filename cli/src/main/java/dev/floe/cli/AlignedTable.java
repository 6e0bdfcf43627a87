package dev.floe.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import org.jline.utils.WCWidth;

/**
 * psql's aligned format (border 1): headers centered, a dashed separator, {@code " | "} between columns,
 * numbers right-aligned, text left-aligned, and a {@code +} at the right edge of a value that continues on
 * the next line. Widths count terminal columns, so wide (CJK) characters take two.
 *
 * <pre>
 *  id | name  | fare
 * ----+-------+-------
 *   1 | alice | 12.50
 * </pre>
 */
final class AlignedTable {
  private static final int TAB_STOP = 8;

  private final List<String> headers;
  private final boolean[] rightAligned;
  private final int[] widths;

  /**
   * @param headers the column names
   * @param rightAligned per column, whether its values are right-aligned (numbers)
   */
  AlignedTable(List<String> headers, boolean[] rightAligned) {
    if (headers.size() != rightAligned.length) {
      throw new IllegalArgumentException(headers.size() + " headers for " + rightAligned.length + " alignments");
    }
    this.headers = List.copyOf(headers);
    this.rightAligned = rightAligned.clone();
    this.widths = new int[headers.size()];
    for (int c = 0; c < widths.length; c++) {
      widths[c] = maxWidth(displayLines(headers.get(c)));
    }
  }

  /** Widens the columns so that {@code row} fits. */
  void fit(String[] row) {
    for (int c = 0; c < widths.length; c++) {
      widths[c] = Math.max(widths[c], maxWidth(displayLines(row[c])));
    }
  }

  /** The table's width in columns, borders included. */
  int width() {
    int total = 0;
    for (int w : widths) {
      total += w;
    }
    return total + 3 * Math.max(0, widths.length - 1) + 2;
  }

  /** A title centered over the table, as psql prints {@code Table "public.t"} above {@code \d}. */
  void printTitle(PrintStream out, String title) {
    int pad = (width() - displayWidth(title)) / 2;
    out.println(" ".repeat(Math.max(0, pad)) + title);
  }

  /** The header lines and the dashed separator. */
  void printHeader(PrintStream out) {
    List<List<String>> cells = new ArrayList<>();
    for (String h : headers) {
      cells.add(displayLines(h));
    }
    int height = height(cells);
    for (int line = 0; line < height; line++) {
      StringBuilder b = new StringBuilder(" ");
      for (int c = 0; c < widths.length; c++) {
        List<String> lines = cells.get(c);
        String text = line < lines.size() ? lines.get(line) : "";
        int room = widths[c] - displayWidth(text);
        b.append(" ".repeat(room / 2)).append(text).append(" ".repeat(room - room / 2));
        b.append(line < lines.size() - 1 ? '+' : ' ');
        if (c < widths.length - 1) {
          b.append("| ");
        }
      }
      out.println(b);
    }
    StringBuilder separator = new StringBuilder();
    for (int c = 0; c < widths.length; c++) {
      if (c > 0) {
        separator.append('+');
      }
      separator.append("-".repeat(widths[c] + 2));
    }
    out.println(separator);
  }

  /** One row; values wider than their column (after {@link #fit}) push the rest of the line right. */
  void printRow(PrintStream out, String[] row) {
    List<List<String>> cells = new ArrayList<>();
    for (String value : row) {
      cells.add(displayLines(value));
    }
    int height = height(cells);
    for (int line = 0; line < height; line++) {
      StringBuilder b = new StringBuilder(" ");
      for (int c = 0; c < widths.length; c++) {
        boolean last = c == widths.length - 1;
        List<String> lines = cells.get(c);
        boolean continues = line < lines.size() - 1;
        if (line >= lines.size()) {
          // Below the end of a multi-line neighbour: psql pads every column but the last.
          if (!last) {
            b.append(" ".repeat(widths[c]));
          }
        } else {
          String text = lines.get(line);
          int room = Math.max(0, widths[c] - displayWidth(text));
          if (rightAligned[c]) {
            b.append(" ".repeat(room)).append(text);
          } else {
            b.append(text);
            if (!last || continues) {
              b.append(" ".repeat(room));
            }
          }
        }
        if (!last) {
          b.append(continues ? '+' : ' ').append("| ");
        } else if (continues) {
          b.append('+');
        }
      }
      out.println(b);
    }
  }

  /** psql's footer: {@code (1 row)}, {@code (3 rows)}. */
  static String footer(long rows) {
    return rows == 1 ? "(1 row)" : "(" + rows + " rows)";
  }

  private static int height(List<List<String>> cells) {
    int height = 1;
    for (List<String> lines : cells) {
      height = Math.max(height, lines.size());
    }
    return height;
  }

  /**
   * A value as the lines it shows: split at newlines, tabs expanded to stops of 8, other control characters
   * written as {@code \r} or {@code \x01}, as psql shows them.
   */
  static List<String> displayLines(String value) {
    List<String> lines = new ArrayList<>();
    StringBuilder line = new StringBuilder();
    int column = 0;
    for (int i = 0; i < value.length(); ) {
      int cp = value.codePointAt(i);
      i += Character.charCount(cp);
      if (cp == '\n') {
        lines.add(line.toString());
        line.setLength(0);
        column = 0;
      } else if (cp == '\t') {
        int spaces = TAB_STOP - column % TAB_STOP;
        line.append(" ".repeat(spaces));
        column += spaces;
      } else if (cp == '\r') {
        line.append("\\r");
        column += 2;
      } else if (cp < 0x20 || cp == 0x7f) {
        line.append(String.format("\\x%02x", cp));
        column += 4;
      } else {
        line.appendCodePoint(cp);
        column += Math.max(0, WCWidth.wcwidth(cp));
      }
    }
    lines.add(line.toString());
    return lines;
  }

  /** Terminal columns {@code text} takes: wide characters count two, combining marks none. */
  static int displayWidth(String text) {
    int width = 0;
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      i += Character.charCount(cp);
      width += Math.max(0, WCWidth.wcwidth(cp));
    }
    return width;
  }

  private static int maxWidth(List<String> lines) {
    int max = 0;
    for (String l : lines) {
      max = Math.max(max, displayWidth(l));
    }
    return max;
  }
}
