package dev.floe;

import java.util.Locale;

/**
 * A PostgreSQL type as a client sees it in RowDescription and ParameterDescription: its OID, length
 * ({@code typlen}, -1 for variable length) and type modifier, for every {@link SqlType} Floe produces.
 *
 * @param oid the pg_type OID
 * @param length pg_type.typlen
 * @param typmod the atttypmod ({@code -1} when none): {@code n + 4} for varchar(n)/char(n),
 *     {@code ((p << 16) | s) + 4} for numeric(p,s)
 * @param name pg_type.typname
 * @param element for an array type, its element type; otherwise null
 */
public record PgType(int oid, int length, int typmod, String name, PgType element) {
  public static final PgType BOOL = scalar(16, 1, "bool");
  public static final PgType BYTEA = scalar(17, -1, "bytea");
  public static final PgType NAME = scalar(19, 64, "name");
  public static final PgType INT8 = scalar(20, 8, "int8");
  public static final PgType INT2 = scalar(21, 2, "int2");
  public static final PgType INT4 = scalar(23, 4, "int4");
  public static final PgType TEXT = scalar(25, -1, "text");
  public static final PgType OID = scalar(26, 4, "oid");
  public static final PgType JSON = scalar(114, -1, "json");
  public static final PgType FLOAT4 = scalar(700, 4, "float4");
  public static final PgType FLOAT8 = scalar(701, 8, "float8");
  public static final PgType UNKNOWN = scalar(705, -2, "unknown");
  public static final PgType BPCHAR = scalar(1042, -1, "bpchar");
  public static final PgType VARCHAR = scalar(1043, -1, "varchar");
  public static final PgType DATE = scalar(1082, 4, "date");
  public static final PgType TIME = scalar(1083, 8, "time");
  public static final PgType TIMESTAMP = scalar(1114, 8, "timestamp");
  public static final PgType TIMESTAMPTZ = scalar(1184, 8, "timestamptz");
  public static final PgType INTERVAL = scalar(1186, 16, "interval");
  public static final PgType NUMERIC = scalar(1700, -1, "numeric");
  public static final PgType UUID = scalar(2950, 16, "uuid");
  public static final PgType JSONB = scalar(3802, -1, "jsonb");

  /** Every scalar type Floe sends or accepts. */
  public static final java.util.List<PgType> SCALARS = java.util.List.of(BOOL, BYTEA, NAME, INT8, INT2, INT4,
      TEXT, OID, JSON, FLOAT4, FLOAT8, UNKNOWN, BPCHAR, VARCHAR, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, INTERVAL, NUMERIC,
      UUID, JSONB);

  /** Array OIDs of the scalar types above (pg_type.typarray). */
  public static int arrayOid(int elementOid) {
    return switch (elementOid) {
      case 16 -> 1000;
      case 17 -> 1001;
      case 19 -> 1003;
      case 20 -> 1016;
      case 21 -> 1005;
      case 23 -> 1007;
      case 25 -> 1009;
      case 26 -> 1028;
      case 114 -> 199;
      case 700 -> 1021;
      case 701 -> 1022;
      case 1042 -> 1014;
      case 1043 -> 1015;
      case 1082 -> 1182;
      case 1083 -> 1183;
      case 1114 -> 1115;
      case 1184 -> 1185;
      case 1186 -> 1187;
      case 1700 -> 1231;
      case 2950 -> 2951;
      case 3802 -> 3807;
      default -> 0;
    };
  }

  private static PgType scalar(int oid, int length, String name) {
    return new PgType(oid, length, -1, name, null);
  }

  public boolean isArray() {
    return element != null;
  }

  public PgType withTypmod(int mod) {
    return new PgType(oid, length, mod, name, element);
  }

  public static PgType arrayOf(PgType element) {
    int oid = arrayOid(element.oid);
    if (oid == 0) {
      return TEXT;
    }
    return new PgType(oid, -1, -1, "_" + element.name, element.withTypmod(-1));
  }

  /** The type a result column of this SQL type is sent as. */
  public static PgType of(SqlType t) {
    return switch (t.kind()) {
      case BOOLEAN -> BOOL;
      case SMALLINT -> INT2;
      case INTEGER -> INT4;
      case BIGINT -> INT8;
      case REAL -> FLOAT4;
      case DOUBLE -> FLOAT8;
      case DECIMAL -> NUMERIC.withTypmod(((t.precision() << 16) | t.scale()) + 4);
      case TEXT -> TEXT;
      case VARCHAR -> t.precision() > 0 ? VARCHAR.withTypmod(t.precision() + 4) : VARCHAR;
      case CHAR -> BPCHAR.withTypmod(t.precision() + 4);
      case DATE -> DATE;
      case TIME -> TIME;
      case TIMESTAMP -> TIMESTAMP;
      case TIMESTAMPTZ -> TIMESTAMPTZ;
      case UUID -> UUID;
      case BYTEA -> BYTEA;
      case INTERVAL -> INTERVAL;
      case JSON -> JSON;
      case NULL -> TEXT;
      case OTHER -> ofDuckdb(t.duckdbName());
    };
  }

  /** DuckDB-only result types: unsigned and huge integers widen, lists become arrays, the rest text. */
  private static PgType ofDuckdb(String duckdbName) {
    String n = duckdbName.trim().toUpperCase(Locale.ROOT);
    if (n.endsWith("[]")) {
      PgType element = ofDuckdb(n.substring(0, n.length() - 2));
      return element.isArray() ? TEXT : arrayOf(element);
    }
    return switch (n) {
      case "BOOLEAN" -> BOOL;
      case "TINYINT", "SMALLINT", "UTINYINT" -> INT2;
      case "INTEGER", "USMALLINT" -> INT4;
      case "BIGINT", "UINTEGER" -> INT8;
      case "UBIGINT", "HUGEINT", "UHUGEINT" -> NUMERIC;
      case "FLOAT" -> FLOAT4;
      case "DOUBLE" -> FLOAT8;
      case "VARCHAR" -> TEXT;
      case "DATE" -> DATE;
      case "TIME" -> TIME;
      case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS" -> TIMESTAMP;
      case "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ" -> TIMESTAMPTZ;
      case "UUID" -> UUID;
      case "BLOB" -> BYTEA;
      case "INTERVAL" -> INTERVAL;
      case "JSON" -> JSON;
      default -> n.startsWith("DECIMAL") ? NUMERIC : TEXT;
    };
  }

  /** The type with this OID, for parameter types a client declares; null if Floe does not know it. */
  public static PgType byOid(int oid) {
    for (PgType t : SCALARS) {
      if (t.oid == oid) {
        return t;
      }
      if (arrayOid(t.oid) == oid) {
        return arrayOf(t);
      }
    }
    return null;
  }

  /** The type's name in casts Floe understands (for parameters substituted into a statement). */
  public String castName() {
    if (isArray()) {
      return element.castName() + "[]";
    }
    return switch (oid) {
      case 16 -> "boolean";
      case 17 -> "bytea";
      case 20 -> "bigint";
      case 21 -> "smallint";
      case 23, 26 -> "integer";
      case 700 -> "real";
      case 701 -> "double precision";
      case 1082 -> "date";
      case 1083 -> "time";
      case 1114 -> "timestamp";
      case 1184 -> "timestamptz";
      case 1186 -> "interval";
      case 1700 -> "numeric";
      case 2950 -> "uuid";
      case 114, 3802 -> "json";
      default -> "text";
    };
  }

  /** Whether a text parameter of this type can be passed as a plain string literal. */
  public boolean isTextual() {
    return switch (oid) {
      case 0, 19, 25, 705, 1042, 1043 -> true;
      default -> false;
    };
  }
}
