package dev.floe.types;

import dev.floe.FloeProperties;
import dev.floe.Column;
import dev.floe.FloeException;
import dev.floe.SqlState;
import dev.floe.SqlType;
import dev.floe.sql.Lexer;
import dev.floe.sql.Parser;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The one place that maps types between SQL (as PostgreSQL names them), Iceberg and DuckDB.
 *
 * <p>Iceberg has no smallint, bounded varchar or char: such columns are stored as Iceberg {@code int} /
 * {@code string}, and the declared SQL type is kept in the table property
 * {@code floe.column.<field-id>.sql-type} so Floe can enforce it on write and report it back.
 */
public final class TypeMapping {
  private static final Pattern DECIMAL = Pattern.compile("DECIMAL\\((\\d+),\\s*(\\d+)\\)");

  private TypeMapping() {}

  /** The Iceberg type that stores values of {@code type}. */
  public static Type toIceberg(SqlType type) {
    return switch (type.kind()) {
      case BOOLEAN -> Types.BooleanType.get();
      case SMALLINT, INTEGER -> Types.IntegerType.get();
      case BIGINT -> Types.LongType.get();
      case REAL -> Types.FloatType.get();
      case DOUBLE -> Types.DoubleType.get();
      case DECIMAL -> Types.DecimalType.of(type.precision(), type.scale());
      case TEXT, VARCHAR, CHAR -> Types.StringType.get();
      case DATE -> Types.DateType.get();
      case TIME -> Types.TimeType.get();
      case TIMESTAMP -> Types.TimestampType.withoutZone();
      case TIMESTAMPTZ -> Types.TimestampType.withZone();
      case UUID -> Types.UUIDType.get();
      case BYTEA -> Types.BinaryType.get();
      default -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
          "type " + type.displayName() + " cannot be stored in an Iceberg table");
    };
  }

  /** Whether {@code type} needs its declared name remembered because the Iceberg type loses it. */
  public static boolean needsDeclaredType(SqlType type) {
    return type.kind() == SqlType.Kind.SMALLINT
        || type.kind() == SqlType.Kind.CHAR
        || type.kind() == SqlType.Kind.VARCHAR;
  }

  /** Text stored in the declared-type property; parses back with {@link Parser#parseType}. */
  public static String declaredTypeText(SqlType type) {
    return switch (type.kind()) {
      case SMALLINT -> "smallint";
      case CHAR -> "char(" + type.precision() + ")";
      case VARCHAR -> type.precision() > 0 ? "varchar(" + type.precision() + ")" : "varchar";
      default -> type.displayName();
    };
  }

  /** The SQL type of an Iceberg column, honouring a declared type recorded in the table properties. */
  public static SqlType fromIceberg(Type type, Optional<String> declared) {
    if (declared.isPresent()) {
      try {
        SqlType d = Parser.parseType(declared.get());
        if (toIceberg(d).equals(type)) {
          return d;
        }
      } catch (FloeException e) {
        // A property another tool garbled: fall back to the Iceberg type.
      }
    }
    return switch (type.typeId()) {
      case BOOLEAN -> SqlType.BOOLEAN;
      case INTEGER -> SqlType.INTEGER;
      case LONG -> SqlType.BIGINT;
      case FLOAT -> SqlType.REAL;
      case DOUBLE -> SqlType.DOUBLE;
      case DECIMAL -> {
        Types.DecimalType d = (Types.DecimalType) type;
        yield SqlType.decimal(d.precision(), d.scale());
      }
      case STRING -> SqlType.TEXT;
      case DATE -> SqlType.DATE;
      case TIME -> SqlType.TIME;
      case TIMESTAMP -> ((Types.TimestampType) type).shouldAdjustToUTC() ? SqlType.TIMESTAMPTZ : SqlType.TIMESTAMP;
      case UUID -> SqlType.UUID;
      case BINARY, FIXED -> SqlType.BYTEA;
      default -> SqlType.other(duckdbType(type));
    };
  }

  /** The columns of a table schema with their SQL types. */
  public static List<Column> columns(Schema schema, Map<String, String> properties) {
    List<Column> result = new ArrayList<>();
    for (Types.NestedField f : schema.columns()) {
      Optional<String> declared = Optional.ofNullable(properties.get(FloeProperties.columnSqlType(f.fieldId())));
      result.add(new Column(f.name(), fromIceberg(f.type(), declared), f.isOptional(), f.fieldId()));
    }
    return result;
  }

  /** The DuckDB type that reads an Iceberg type from Parquet. */
  public static String duckdbType(Type type) {
    return switch (type.typeId()) {
      case BOOLEAN -> "BOOLEAN";
      case INTEGER -> "INTEGER";
      case LONG -> "BIGINT";
      case FLOAT -> "FLOAT";
      case DOUBLE -> "DOUBLE";
      case DECIMAL -> {
        Types.DecimalType d = (Types.DecimalType) type;
        yield "DECIMAL(" + d.precision() + "," + d.scale() + ")";
      }
      case STRING -> "VARCHAR";
      case DATE -> "DATE";
      case TIME -> "TIME";
      case TIMESTAMP -> ((Types.TimestampType) type).shouldAdjustToUTC() ? "TIMESTAMPTZ" : "TIMESTAMP";
      case TIMESTAMP_NANO -> ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? "TIMESTAMPTZ" : "TIMESTAMP_NS";
      case UUID -> "UUID";
      case BINARY, FIXED -> "BLOB";
      case STRUCT -> {
        StringBuilder b = new StringBuilder("STRUCT(");
        List<Types.NestedField> fields = type.asStructType().fields();
        for (int k = 0; k < fields.size(); k++) {
          if (k > 0) {
            b.append(", ");
          }
          b.append(Lexer.quoteIdentifier(fields.get(k).name())).append(' ').append(duckdbType(fields.get(k).type()));
        }
        yield b.append(')').toString();
      }
      case LIST -> duckdbType(type.asListType().elementType()) + "[]";
      case MAP -> "MAP(" + duckdbType(type.asMapType().keyType()) + ", " + duckdbType(type.asMapType().valueType())
          + ")";
      default -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
          "Iceberg type " + type + " cannot be read by Floe yet");
    };
  }

  /** The DuckDB type a table column is read and written as (the declared SQL type where it has one). */
  public static String duckdbType(Column column, Type icebergType) {
    return switch (column.type().kind()) {
      case SMALLINT -> "SMALLINT";
      default -> duckdbType(icebergType);
    };
  }

  /**
   * Whether DuckDB's name of a result column's type, {@code reported}, names the type {@code duckType}
   * (as {@link #duckdbType} spells it).
   */
  public static boolean isDuckdbType(String reported, String duckType) {
    String name = reported.trim().toUpperCase(Locale.ROOT).replace(" ", "");
    return (name.equals("TIMESTAMPWITHTIMEZONE") ? "TIMESTAMPTZ" : name).equals(duckType.replace(" ", ""));
  }

  /** The SQL type of a DuckDB result column, from the type name DuckDB reports. */
  public static SqlType fromDuckdb(String duckdbName) {
    String name = duckdbName.trim();
    String upper = name.toUpperCase(Locale.ROOT);
    Matcher m = DECIMAL.matcher(upper);
    if (m.matches()) {
      return SqlType.decimal(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
    }
    return switch (upper) {
      case "BOOLEAN" -> SqlType.BOOLEAN;
      case "SMALLINT", "TINYINT", "UTINYINT" -> SqlType.SMALLINT;
      case "INTEGER", "USMALLINT" -> SqlType.INTEGER;
      case "BIGINT", "UINTEGER" -> SqlType.BIGINT;
      case "HUGEINT", "UBIGINT", "UHUGEINT" -> SqlType.decimal(38, 0);
      case "FLOAT" -> SqlType.REAL;
      case "DOUBLE" -> SqlType.DOUBLE;
      case "VARCHAR" -> SqlType.TEXT;
      case "DATE" -> SqlType.DATE;
      case "TIME" -> SqlType.TIME;
      case "TIMESTAMP" -> SqlType.TIMESTAMP;
      case "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ" -> SqlType.TIMESTAMPTZ;
      case "UUID" -> SqlType.UUID;
      case "BLOB" -> SqlType.BYTEA;
      case "INTERVAL" -> SqlType.INTERVAL;
      case "JSON" -> SqlType.JSON;
      case "\"NULL\"", "NULL" -> SqlType.NULL;
      default -> SqlType.other(name);
    };
  }

  /**
   * The table column type for a query result column (CREATE TABLE AS): the result's own type where an
   * Iceberg type holds it exactly.
   */
  public static SqlType storableType(String columnName, String duckdbName) {
    String upper = duckdbName.trim().toUpperCase(Locale.ROOT);
    SqlType t = fromDuckdb(duckdbName);
    return switch (t.kind()) {
      case BOOLEAN, SMALLINT, INTEGER, BIGINT, REAL, DOUBLE, DECIMAL, TEXT, DATE, TIME, TIMESTAMP, TIMESTAMPTZ,
          UUID, BYTEA -> t;
      case NULL -> SqlType.TEXT;
      default -> switch (upper) {
        case "HUGEINT", "UBIGINT" -> SqlType.decimal(38, 0);
        case "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS" -> SqlType.TIMESTAMP;
        case "JSON" -> SqlType.TEXT;
        default -> throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED,
            "column \"" + columnName + "\" has type " + t.displayName() + ", which Floe tables cannot store yet",
            null, "Cast it to a supported type.", 0, null);
      };
    };
  }
}
