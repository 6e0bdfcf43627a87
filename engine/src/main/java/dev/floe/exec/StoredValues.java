package dev.floe.exec;

import dev.floe.SqlState;
import dev.floe.sql.Lexer;
import dev.floe.types.PgDateTime;
import dev.floe.types.Utf8Text;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * What Floe refuses to store although DuckDB holds it, because PostgreSQL refuses it or Iceberg cannot
 * hold it faithfully:
 *
 * <ul>
 *   <li>text with a NUL character (PostgreSQL: 22021, {@code invalid byte sequence for encoding "UTF8":
 *       0x00}), which DuckDB holds (its {@code chr(0)} makes one: a query's {@code chr} is
 *       {@link PgFunctions}' instead);
 *   <li>dates outside PostgreSQL's range (4714-11-24 BC to 5874897-12-31), and timestamps before
 *       4714-11-24 BC or after the last one Iceberg's 64-bit microseconds hold (22008);
 *   <li>{@code infinity} and {@code -infinity}: PostgreSQL stores them, but Iceberg has no infinite dates
 *       or timestamps, and DuckDB's are the largest counts, which other engines read as dates thousands
 *       of years ahead (22008).
 * </ul>
 */
final class StoredValues {
  private StoredValues() {}

  /**
   * SQL raising the error for a value of column {@code column} that Floe does not store, and otherwise
   * the value; {@code v} is a column reference of the stored type (it is read more than once).
   */
  static String checked(String column, Type stored, String v) {
    String name = "\"" + column + "\"";
    return switch (stored.typeId()) {
      // a NUL made without chr, which a query's text turns into floe_chr
      case STRING -> "CASE WHEN contains(" + v + ", decode('\\x00'::BLOB)) THEN " + DuckErrors.raise(
          SqlState.CHARACTER_NOT_IN_REPERTOIRE, Utf8Text.NUL_MESSAGE) + " ELSE " + v + " END";
      case DATE -> "CASE WHEN " + v + " < DATE '4714-11-24 (BC)' OR " + v + " > DATE '5874897-12-31' THEN "
          + DuckErrors.raise(SqlState.DATETIME_FIELD_OVERFLOW, "date out of range for column " + name,
          Lexer.quoteString(PgDateTime.DATE_RANGE)) + " ELSE " + v + " END";
      case TIMESTAMP -> {
        boolean zoned = ((Types.TimestampType) stored).shouldAdjustToUTC();
        // the last finite timestamp DuckDB holds is the last Floe stores: only infinity is past it
        yield "CASE WHEN NOT isfinite(" + v + ") OR " + v + " < " + (zoned
            ? "TIMESTAMPTZ '4714-11-24 (BC) 00:00:00+00'" : "TIMESTAMP '4714-11-24 (BC) 00:00:00'") + " THEN "
            + DuckErrors.raise(SqlState.DATETIME_FIELD_OVERFLOW, "timestamp out of range for column " + name,
            Lexer.quoteString(PgDateTime.TIMESTAMP_RANGE)) + " ELSE " + v + " END";
      }
      default -> v;
    };
  }

  /**
   * Whether Floe stores {@code value} (Iceberg's internal representation) in a column of type
   * {@code stored}: the JVM's own writes check this where DuckDB's run {@link #checked}.
   */
  static boolean storable(Type stored, Object value) {
    if (value == null) {
      return true;
    }
    return switch (stored.typeId()) {
      case STRING -> value.toString().indexOf('\0') < 0;
      case DATE -> PgDateTime.storableDay(((Number) value).intValue());
      case TIMESTAMP -> PgDateTime.storableMicros(((Number) value).longValue());
      default -> true;
    };
  }

  /** As {@link #storable}, raising the error {@link #checked} raises when the value is not. */
  static void check(String column, Type stored, Object value) {
    if (storable(stored, value)) {
      return;
    }
    throw switch (stored.typeId()) {
      case STRING -> Utf8Text.nul();
      case DATE -> PgDateTime.notStored(true, column);
      default -> PgDateTime.notStored(false, column);
    };
  }
}
