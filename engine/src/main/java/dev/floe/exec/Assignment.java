package dev.floe.exec;

import dev.floe.SqlType;
import dev.floe.types.TypeMapping;
import java.util.Locale;

/**
 * PostgreSQL's assignment-cast rules for INSERT: which source types a column of a given type accepts
 * implicitly. Untyped literals ('...' and NULL) are accepted by every column and converted (or rejected
 * with 22P02 etc.) when the row is written.
 */
final class Assignment {
  private Assignment() {}

  static boolean allowed(SqlType target, String sourceDuckType, boolean untypedLiteral) {
    if (untypedLiteral) {
      return true;
    }
    SqlType source = TypeMapping.fromDuckdb(sourceDuckType);
    if (source.kind() == SqlType.Kind.NULL) {
      return true;
    }
    String upper = sourceDuckType.toUpperCase(Locale.ROOT);
    return switch (target.kind()) {
      case TEXT, VARCHAR, CHAR -> true;
      case SMALLINT, INTEGER, BIGINT, REAL, DOUBLE, DECIMAL -> source.isNumeric();
      case BOOLEAN -> source.kind() == SqlType.Kind.BOOLEAN;
      case DATE, TIMESTAMP, TIMESTAMPTZ -> source.kind() == SqlType.Kind.DATE
          || source.kind() == SqlType.Kind.TIMESTAMP || source.kind() == SqlType.Kind.TIMESTAMPTZ
          || upper.startsWith("TIMESTAMP");
      case TIME -> source.kind() == SqlType.Kind.TIME || source.kind() == SqlType.Kind.TIMESTAMP;
      case UUID -> source.kind() == SqlType.Kind.UUID;
      case BYTEA -> source.kind() == SqlType.Kind.BYTEA;
      default -> false;
    };
  }
}
