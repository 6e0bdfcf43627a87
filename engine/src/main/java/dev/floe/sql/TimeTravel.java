package dev.floe.sql;

/**
 * A time-travel target on a table reference.
 *
 * @param kind how to read {@code valueSql}
 * @param valueSql the target as SQL text (a literal, or a parenthesised expression), evaluated once
 * @param position 1-based offset of the clause in the statement
 */
public record TimeTravel(Kind kind, String valueSql, int position) {
  public enum Kind {
    /** {@code AS OF VERSION n}: the snapshot whose sequence number is n. */
    VERSION,
    /** {@code FOR VERSION AS OF x}: a snapshot id, or a branch or tag name when x is a string. */
    SNAPSHOT,
    /** {@code AS OF TIMESTAMP t}, {@code FOR SYSTEM_TIME AS OF t}: the snapshot current at t. */
    TIMESTAMP
  }
}
