package dev.floe;

import java.util.Objects;

/**
 * The SQL type of a column, as PostgreSQL names it. Table columns have one of the types Floe can store
 * in an Iceberg table; query results may also have DuckDB-only types (lists, structs, intervals, ...),
 * which are {@link Kind#OTHER} and keep DuckDB's type name.
 *
 * @param kind the type family
 * @param precision decimal precision, or the maximum length of {@code varchar(n)}/{@code char(n)}; 0 when unbounded
 * @param scale decimal scale
 * @param duckdbName the DuckDB type this maps to, used for casts; for {@link Kind#OTHER} DuckDB's own name
 */
public record SqlType(Kind kind, int precision, int scale, String duckdbName) {

  /** Type families. */
  public enum Kind {
    BOOLEAN, SMALLINT, INTEGER, BIGINT, REAL, DOUBLE, DECIMAL, TEXT, VARCHAR, CHAR,
    DATE, TIME, TIMESTAMP, TIMESTAMPTZ, UUID, BYTEA, INTERVAL, JSON, NULL, OTHER
  }

  public static final SqlType BOOLEAN = new SqlType(Kind.BOOLEAN, 0, 0, "BOOLEAN");
  public static final SqlType SMALLINT = new SqlType(Kind.SMALLINT, 0, 0, "SMALLINT");
  public static final SqlType INTEGER = new SqlType(Kind.INTEGER, 0, 0, "INTEGER");
  public static final SqlType BIGINT = new SqlType(Kind.BIGINT, 0, 0, "BIGINT");
  public static final SqlType REAL = new SqlType(Kind.REAL, 0, 0, "FLOAT");
  public static final SqlType DOUBLE = new SqlType(Kind.DOUBLE, 0, 0, "DOUBLE");
  public static final SqlType TEXT = new SqlType(Kind.TEXT, 0, 0, "VARCHAR");
  public static final SqlType DATE = new SqlType(Kind.DATE, 0, 0, "DATE");
  public static final SqlType TIME = new SqlType(Kind.TIME, 0, 0, "TIME");
  public static final SqlType TIMESTAMP = new SqlType(Kind.TIMESTAMP, 0, 0, "TIMESTAMP");
  public static final SqlType TIMESTAMPTZ = new SqlType(Kind.TIMESTAMPTZ, 0, 0, "TIMESTAMPTZ");
  public static final SqlType UUID = new SqlType(Kind.UUID, 0, 0, "UUID");
  public static final SqlType BYTEA = new SqlType(Kind.BYTEA, 0, 0, "BLOB");
  public static final SqlType INTERVAL = new SqlType(Kind.INTERVAL, 0, 0, "INTERVAL");
  public static final SqlType JSON = new SqlType(Kind.JSON, 0, 0, "JSON");
  public static final SqlType NULL = new SqlType(Kind.NULL, 0, 0, "\"NULL\"");

  /** Largest decimal precision Iceberg (and DuckDB) store. */
  public static final int MAX_DECIMAL_PRECISION = 38;

  public SqlType {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(duckdbName, "duckdbName");
  }

  public static SqlType decimal(int precision, int scale) {
    if (precision < 1 || precision > MAX_DECIMAL_PRECISION) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE,
          "NUMERIC precision " + precision + " must be between 1 and " + MAX_DECIMAL_PRECISION);
    }
    if (scale < 0 || scale > precision) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE,
          "NUMERIC scale " + scale + " must be between 0 and precision " + precision);
    }
    return new SqlType(Kind.DECIMAL, precision, scale, "DECIMAL(" + precision + "," + scale + ")");
  }

  public static SqlType varchar(int maxLength) {
    if (maxLength < 1) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "length for type varchar must be at least 1");
    }
    return new SqlType(Kind.VARCHAR, maxLength, 0, "VARCHAR");
  }

  public static SqlType character(int length) {
    if (length < 1) {
      throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "length for type char must be at least 1");
    }
    return new SqlType(Kind.CHAR, length, 0, "VARCHAR");
  }

  public static SqlType other(String duckdbName) {
    return new SqlType(Kind.OTHER, 0, 0, duckdbName);
  }

  public boolean isNumeric() {
    return switch (kind) {
      case SMALLINT, INTEGER, BIGINT, REAL, DOUBLE, DECIMAL -> true;
      default -> kind == Kind.OTHER && isDuckIntegral(duckdbName);
    };
  }

  public boolean isString() {
    return kind == Kind.TEXT || kind == Kind.VARCHAR || kind == Kind.CHAR;
  }

  private static boolean isDuckIntegral(String name) {
    return switch (name) {
      case "TINYINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "HUGEINT", "UHUGEINT" -> true;
      default -> false;
    };
  }

  /** The name PostgreSQL's {@code format_type} would print, e.g. {@code numeric(10,2)}. */
  public String displayName() {
    return switch (kind) {
      case BOOLEAN -> "boolean";
      case SMALLINT -> "smallint";
      case INTEGER -> "integer";
      case BIGINT -> "bigint";
      case REAL -> "real";
      case DOUBLE -> "double precision";
      case DECIMAL -> "numeric(" + precision + "," + scale + ")";
      case TEXT -> "text";
      case VARCHAR -> precision > 0 ? "character varying(" + precision + ")" : "character varying";
      case CHAR -> "character(" + precision + ")";
      case DATE -> "date";
      case TIME -> "time without time zone";
      case TIMESTAMP -> "timestamp without time zone";
      case TIMESTAMPTZ -> "timestamp with time zone";
      case UUID -> "uuid";
      case BYTEA -> "bytea";
      case INTERVAL -> "interval";
      case JSON -> "json";
      case NULL -> "unknown";
      case OTHER -> duckdbName.toLowerCase(java.util.Locale.ROOT);
    };
  }

  @Override
  public String toString() {
    return displayName();
  }
}
