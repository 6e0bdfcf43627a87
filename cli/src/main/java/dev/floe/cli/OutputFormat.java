package dev.floe.cli;

import java.io.PrintStream;
import java.util.Locale;

/** How query results are printed. */
enum OutputFormat {
  /** psql's aligned table, with a row-count footer; commands print their tag ({@code INSERT 0 5}). */
  TABLE,
  /** RFC 4180 CSV with a header line; commands print nothing. */
  CSV,
  /** JSON Lines: one object per row, keyed by column name; commands print nothing. */
  JSON;

  /** The writer that prints one query result in this format. */
  ResultWriter writer(PrintStream out, String nullDisplay) {
    return writer(out, new OutputSettings(this, nullDisplay, false), 0);
  }

  /**
   * The writer that prints one query result in this format, as {@code settings} say ({@code \x} for tables).
   *
   * @param screenWidth the terminal's width when the output goes to it, else 0
   */
  ResultWriter writer(PrintStream out, OutputSettings settings, int screenWidth) {
    return switch (this) {
      case TABLE -> new TableWriter(out, settings.nullDisplay(), settings.expanded(), screenWidth);
      case CSV -> new CsvWriter(out);
      case JSON -> new JsonLinesWriter(out);
    };
  }

  /** Whether commands print their tag, as psql does in its aligned format. */
  boolean printsCommandTags() {
    return this == TABLE;
  }

  /** Lower case, as users type it: picocli lists the candidates with this. */
  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
