package dev.floe.sql;

import static dev.floe.sql.TokenCursor.unexpected;

import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;

/**
 * Column type names into {@link SqlType}, for column definitions, {@code ALTER COLUMN ... TYPE}, sequences'
 * {@code AS type} and {@link Parser#parseType}: PostgreSQL's names and their common aliases ({@code int8},
 * {@code string}, {@code datetime}, ...) with precision, length and time zone, refusing with PostgreSQL's
 * words what an Iceberg table cannot store.
 */
final class TypeNameParser {
  private final TokenCursor in;

  TypeNameParser(TokenCursor in) {
    this.in = in;
  }

  /** A type name, with its modifiers, at the cursor. */
  SqlType type() {
    Token t = in.peek();
    if (!t.isIdentifier()) {
      throw unexpected(t);
    }
    in.next();
    String name = t.value();
    SqlType type = switch (name) {
      case "boolean", "bool" -> SqlType.BOOLEAN;
      case "smallint", "int2" -> SqlType.SMALLINT;
      case "integer", "int", "int4" -> SqlType.INTEGER;
      case "bigint", "int8", "long" -> SqlType.BIGINT;
      case "real", "float4" -> SqlType.REAL;
      case "float8" -> SqlType.DOUBLE;
      case "double" -> {
        in.acceptKeyword("precision");
        yield SqlType.DOUBLE;
      }
      case "float" -> {
        if (in.acceptOp("(")) {
          int p = intLiteral();
          in.expectOp(")");
          if (p < 1 || p > 53) {
            throw new FloeException(SqlState.INVALID_PARAMETER_VALUE,
                "precision for type float must be between 1 and 53", t.position());
          }
          yield p <= 24 ? SqlType.REAL : SqlType.DOUBLE;
        }
        yield SqlType.DOUBLE;
      }
      case "decimal", "numeric", "dec" -> {
        if (in.acceptOp("(")) {
          int p = intLiteral();
          int s = 0;
          if (in.acceptOp(",")) {
            s = intLiteral();
          }
          in.expectOp(")");
          yield decimal(p, s, t);
        }
        yield SqlType.decimal(38, 9);
      }
      case "text", "string" -> SqlType.TEXT;
      case "varchar" -> varchar(t);
      case "character", "char", "bpchar", "nchar" -> {
        if (in.acceptKeyword("varying")) {
          yield varchar(t);
        }
        if (in.acceptOp("(")) {
          int n = intLiteral();
          in.expectOp(")");
          yield SqlType.character(n);
        }
        yield SqlType.character(1);
      }
      case "date" -> SqlType.DATE;
      case "time" -> {
        optionalPrecision(t);
        if (withTimeZone()) {
          throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
              "time with time zone cannot be stored in an Iceberg table", null, "Use time or timestamptz.",
              t.position(), null);
        }
        yield SqlType.TIME;
      }
      case "timetz" -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
          "time with time zone cannot be stored in an Iceberg table", null, "Use time or timestamptz.",
          t.position(), null);
      case "timestamp", "datetime" -> {
        optionalPrecision(t);
        yield withTimeZone() ? SqlType.TIMESTAMPTZ : SqlType.TIMESTAMP;
      }
      case "timestamptz" -> {
        optionalPrecision(t);
        yield SqlType.TIMESTAMPTZ;
      }
      case "uuid" -> SqlType.UUID;
      case "bytea", "binary", "blob", "varbinary" -> SqlType.BYTEA;
      default -> throw new FloeException(SqlState.UNDEFINED_OBJECT, "type \"" + t.text() + "\" does not exist",
          null, "Floe tables support boolean, smallint, integer, bigint, real, double precision, numeric(p,s), "
              + "varchar(n), text, char(n), date, time, timestamp, timestamptz, uuid and bytea.",
          t.position(), null);
    };
    if (in.peek().isOp("[") || in.peek().isKeyword("array")) {
      throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "array columns are not supported yet", in.peek().position());
    }
    return type;
  }

  private SqlType decimal(int p, int s, Token at) {
    try {
      return SqlType.decimal(p, s);
    } catch (FloeException e) {
      throw e.withPosition(at.position());
    }
  }

  private SqlType varchar(Token at) {
    if (in.acceptOp("(")) {
      int n = intLiteral();
      in.expectOp(")");
      try {
        return SqlType.varchar(n);
      } catch (FloeException e) {
        throw e.withPosition(at.position());
      }
    }
    return new SqlType(SqlType.Kind.VARCHAR, 0, 0, "VARCHAR");
  }

  private void optionalPrecision(Token at) {
    if (in.acceptOp("(")) {
      int p = intLiteral();
      in.expectOp(")");
      if (p < 0 || p > 6) {
        throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "precision " + p + " must be between 0 and 6", at.position());
      }
    }
  }

  private boolean withTimeZone() {
    if (in.peek().isKeyword("with") && in.peekAt(1).isKeyword("time")) {
      in.next();
      in.next();
      in.expectKeyword("zone");
      return true;
    }
    if (in.peek().isKeyword("without") && in.peekAt(1).isKeyword("time")) {
      in.next();
      in.next();
      in.expectKeyword("zone");
    }
    return false;
  }

  private int intLiteral() {
    Token t = in.next();
    if (t.type() != Token.Type.NUMBER || !t.value().matches("\\d+")) {
      throw unexpected(t);
    }
    try {
      return Integer.parseInt(t.value());
    } catch (NumberFormatException e) {
      throw new FloeException(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value " + t.text() + " is out of range", t.position());
    }
  }
}
