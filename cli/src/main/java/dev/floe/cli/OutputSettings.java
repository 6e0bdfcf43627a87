package dev.floe.cli;

import java.util.Objects;

/**
 * How results are shown. The shell changes these as the user asks ({@code \timing}, {@code \pset}, {@code \x});
 * scripts keep what the command line set.
 */
final class OutputSettings {
  /** psql's {@code \x}: rows as records of name and value lines; auto when a table is wider than the screen. */
  enum Expanded { OFF, ON, AUTO }

  /** psql's {@code \pset pager}: off, on (output longer than the screen), always. */
  enum Pager { OFF, ON, ALWAYS }

  private OutputFormat format;
  private String nullDisplay;
  private boolean timing;
  private Expanded expanded = Expanded.OFF;
  private Pager pager = Pager.ON;

  OutputSettings(OutputFormat format, String nullDisplay, boolean timing) {
    this.format = Objects.requireNonNull(format, "format");
    this.nullDisplay = Objects.requireNonNull(nullDisplay, "nullDisplay");
    this.timing = timing;
  }

  OutputFormat format() {
    return format;
  }

  void format(OutputFormat value) {
    this.format = Objects.requireNonNull(value, "value");
  }

  /** What the table format prints for NULL: empty by default, as psql does. CSV and JSON have their own NULL. */
  String nullDisplay() {
    return nullDisplay;
  }

  void nullDisplay(String value) {
    this.nullDisplay = Objects.requireNonNull(value, "value");
  }

  /** Whether each statement is followed by {@code Time: 12.345 ms}. */
  boolean timing() {
    return timing;
  }

  void timing(boolean value) {
    this.timing = value;
  }

  /** Whether the table format prints rows as records ({@code \x}). */
  Expanded expanded() {
    return expanded;
  }

  void expanded(Expanded value) {
    this.expanded = Objects.requireNonNull(value, "value");
  }

  /** When output to the terminal goes through the pager (the shell only; never for scripts or {@code \o}). */
  Pager pager() {
    return pager;
  }

  void pager(Pager value) {
    this.pager = Objects.requireNonNull(value, "value");
  }
}
