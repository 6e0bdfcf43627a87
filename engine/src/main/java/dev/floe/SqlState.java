package dev.floe;

/**
 * PostgreSQL SQLSTATE codes Floe reports. Clients branch on these (retry on {@link #SERIALIZATION_FAILURE},
 * report {@link #UNDEFINED_TABLE} to the user, ...), so each error Floe raises carries the code PostgreSQL
 * would give for the same mistake.
 */
public final class SqlState {
  private SqlState() {}

  public static final String SUCCESSFUL_COMPLETION = "00000";
  public static final String FEATURE_NOT_SUPPORTED = "0A000";
  public static final String CARDINALITY_VIOLATION = "21000";
  public static final String DATA_EXCEPTION = "22000";
  public static final String STRING_DATA_RIGHT_TRUNCATION = "22001";
  public static final String NUMERIC_VALUE_OUT_OF_RANGE = "22003";
  public static final String NULL_VALUE_NOT_ALLOWED = "22004";
  public static final String INVALID_DATETIME_FORMAT = "22007";
  public static final String DATETIME_FIELD_OVERFLOW = "22008";
  public static final String DIVISION_BY_ZERO = "22012";
  public static final String INVALID_PARAMETER_VALUE = "22023";
  public static final String INVALID_TEXT_REPRESENTATION = "22P02";
  public static final String NOT_NULL_VIOLATION = "23502";
  public static final String UNIQUE_VIOLATION = "23505";
  public static final String READ_ONLY_SQL_TRANSACTION = "25006";
  public static final String INVALID_SCHEMA_NAME = "3F000";
  public static final String DEPENDENT_OBJECTS_STILL_EXIST = "2BP01";
  public static final String SERIALIZATION_FAILURE = "40001";
  public static final String SYNTAX_ERROR = "42601";
  public static final String INSUFFICIENT_PRIVILEGE = "42501";
  public static final String DUPLICATE_COLUMN = "42701";
  public static final String AMBIGUOUS_COLUMN = "42702";
  public static final String UNDEFINED_COLUMN = "42703";
  public static final String GROUPING_ERROR = "42803";
  public static final String DATATYPE_MISMATCH = "42804";
  public static final String WRONG_OBJECT_TYPE = "42809";
  public static final String UNDEFINED_FUNCTION = "42883";
  public static final String UNDEFINED_TABLE = "42P01";
  public static final String INVALID_COLUMN_REFERENCE = "42P10";
  public static final String DUPLICATE_SCHEMA = "42P06";
  public static final String DUPLICATE_TABLE = "42P07";
  public static final String INVALID_TABLE_DEFINITION = "42P16";
  public static final String UNDEFINED_OBJECT = "42704";
  public static final String OUT_OF_MEMORY = "53200";
  public static final String DISK_FULL = "53100";
  public static final String OBJECT_NOT_IN_PREREQUISITE_STATE = "55000";
  public static final String OBJECT_IN_USE = "55006";
  public static final String QUERY_CANCELED = "57014";
  public static final String IO_ERROR = "58030";
  public static final String INTERNAL_ERROR = "XX000";
  public static final String DATA_CORRUPTED = "XX001";
}
