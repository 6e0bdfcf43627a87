package dev.floe.cli;

import java.util.Objects;

/**
 * How results are shown. The shell changes these as the user asks ({@code \timing}, {@code \pset}); scripts
 * keep what the command line set.
 */
final class OutputSettings {
  private OutputFormat format;
  private String nullDisplay;
  private boolean timing;

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
}
