package dev.floe;

/**
 * The table column a result column passes through unchanged, as PostgreSQL's RowDescription names it:
 * the table's {@code pg_class} oid and the column's {@code pg_attribute} number.
 */
public record ColumnOrigin(int tableOid, int attributeNumber) {}
