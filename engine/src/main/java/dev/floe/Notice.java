package dev.floe;

/**
 * A message a statement sends beside its result, as PostgreSQL's NoticeResponse: "relation ... already
 * exists, skipping" (NOTICE), "there is no transaction in progress" (WARNING).
 *
 * @param severity {@code NOTICE} or {@code WARNING}
 * @param sqlState the PostgreSQL SQLSTATE ({@code 00000} for a plain notice)
 */
public record Notice(String severity, String sqlState, String message) {
  /** A NOTICE (SQLSTATE 00000). */
  public static Notice notice(String message) {
    return new Notice("NOTICE", SqlState.SUCCESSFUL_COMPLETION, message);
  }

  /** A WARNING with its SQLSTATE. */
  public static Notice warning(String sqlState, String message) {
    return new Notice("WARNING", sqlState, message);
  }

  @Override
  public String toString() {
    return severity + ": " + message;
  }
}
