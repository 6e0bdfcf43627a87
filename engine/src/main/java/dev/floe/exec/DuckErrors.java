package dev.floe.exec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.IOException;
import java.sql.SQLException;
import dev.floe.types.TypeMapping;
import java.util.List;
import java.util.function.IntUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns DuckDB errors (requested as JSON with {@code errors_as_json}) into PostgreSQL-style errors with
 * the SQLSTATE PostgreSQL uses for the same mistake, and positions mapped back to the user's text.
 * Errors Floe raises from inside SQL carry their SQLSTATE in a {@code floe:XXXXX:} message prefix.
 */
final class DuckErrors {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String PREFIX = "floe:";
  private static final Pattern FLOE_ERROR = Pattern.compile("floe:([0-9A-Z]{5}):(.*)", Pattern.DOTALL);
  private static final Pattern TABLE_MISSING = Pattern.compile("Table with name (.+?) does not exist!?.*", Pattern.DOTALL);
  private static final Pattern FUNCTION_MISSING =
      Pattern.compile("(?:Scalar |Table |Aggregate )?Function with name (.+?) does not exist!?.*", Pattern.DOTALL);
  /** A table function called where a value is expected: for PostgreSQL, no such function exists. */
  private static final Pattern TABLE_AS_SCALAR =
      Pattern.compile("Function \"?(.+?)\"? is a table function but it was used as a scalar function.*", Pattern.DOTALL);
  private static final Pattern SCHEMA_MISSING = Pattern.compile("Schema with name (.+?) does not exist!?.*", Pattern.DOTALL);
  private static final Pattern TYPE_MISSING = Pattern.compile("Type with name (.+?) does not exist!?.*", Pattern.DOTALL);
  private static final Pattern COLUMN_MISSING =
      Pattern.compile("Referenced column \"?(.+?)\"? not found in FROM clause!?.*", Pattern.DOTALL);
  private static final Pattern QUALIFIED_COLUMN_MISSING =
      Pattern.compile(".*? \"(.+?)\" does not have a column named \"(.+?)\".*", Pattern.DOTALL);
  private static final Pattern RELATION_MISSING =
      Pattern.compile("Referenced table \"(.+?)\" not found!?.*", Pattern.DOTALL);
  private static final Pattern INTEGER_OVERFLOW =
      Pattern.compile("Could not convert string '\\s*([+-]?\\d+)\\s*' to (INT8|INT16|INT32|INT64|UINT\\d+).*", Pattern.DOTALL);

  private static final Pattern ARITHMETIC_OVERFLOW =
      Pattern.compile("Overflow in (?:addition|subtraction|multiplication|negation|division) of (INT8|INT16|INT32|INT64)"
          + ".*", Pattern.DOTALL);
  private static final Pattern BAD_INPUT =
      Pattern.compile("Could not convert string ['\"](.*)['\"] to (INT8|INT16|INT32|INT64|DOUBLE|FLOAT|BOOL|DECIMAL.*?"
          + "|UUID)", Pattern.DOTALL);

  /** DuckDB's words for date or timestamp text it cannot read. */
  private static final Pattern BAD_DATETIME =
      Pattern.compile("invalid (date|timestamp) field format: \"(.*)\", expected format is .*", Pattern.DOTALL);

  private static final Pattern SPILL_USED = Pattern.compile("\\(([^)]*used)\\)");

  private DuckErrors() {}

  /** A raise-inside-SQL expression: {@code error('floe:XXXXX:message')}. */
  static String raise(String sqlState, String message) {
    return "error(" + dev.floe.sql.Lexer.quoteString(PREFIX + sqlState + ":" + message) + ")";
  }

  /** Separates a raised error's message from its DETAIL, computed in SQL. */
  private static final char DETAIL_MARK = '\u0001';

  /** Like {@link #raise(String, String)}, with a DETAIL that is a SQL expression of the failing row. */
  static String raise(String sqlState, String message, String detailSql) {
    return "error(" + dev.floe.sql.Lexer.quoteString(PREFIX + sqlState + ":" + message) + " || chr(1) || ("
        + detailSql + "))";
  }

  /**
   * Maps a DuckDB failure.
   *
   * @param positions maps a 0-based offset in the SQL DuckDB ran to a 1-based position in the user's
   *     statement (0 if unknown)
   */
  static FloeException map(SQLException e, IntUnaryOperator positions) {
    String raw = e.getMessage() == null ? "" : e.getMessage();
    int brace = raw.indexOf('{');
    String type = "";
    String message = raw;
    String subtype = "";
    int position = 0;
    if (brace >= 0) {
      try {
        JsonNode node = JSON.readTree(raw.substring(brace));
        type = node.path("exception_type").asText("");
        message = node.path("exception_message").asText(raw);
        subtype = node.path("error_subtype").asText("");
        String pos = node.path("position").asText("");
        if (pos.matches("\\d+")) {
          position = positions.applyAsInt(Integer.parseInt(pos));
        }
      } catch (IOException | RuntimeException ignored) {
        message = raw;
      }
    }
    FloeException mapped = classify(type, subtype, message.strip(), position, e);
    return mapped;
  }

  /**
   * As {@link #map}, for SQL DuckDB ran on {@code duck}: a call of a function that does not exist gets
   * its argument types, as PostgreSQL reports them ({@code function foo(integer, unknown) does not
   * exist}). DuckDB names only the function; binding the same SQL with the name replaced by {@code pi}
   * (which takes no arguments) makes it list the arguments' types. Only binds: nothing runs.
   */
  static FloeException map(SQLException e, IntUnaryOperator positions, String sql, java.sql.Connection duck) {
    FloeException mapped = map(e, positions);
    if (!mapped.sqlState().equals(SqlState.UNDEFINED_FUNCTION) || mapped.getMessage().contains("(")) {
      return mapped;
    }
    try {
      String raw = e.getMessage() == null ? "" : e.getMessage();
      int brace = raw.indexOf('{');
      if (brace < 0) {
        return mapped;
      }
      JsonNode node = JSON.readTree(raw.substring(brace));
      String exception = node.path("exception_message").asText("");
      Matcher m = FUNCTION_MISSING.matcher(exception);
      if (!m.matches()) {
        m = TABLE_AS_SCALAR.matcher(exception.lines().findFirst().orElse(""));
      }
      String pos = node.path("position").asText("");
      if (!m.matches() || !pos.matches("\\d+")) {
        return mapped;
      }
      String name = m.group(1);
      int at = Integer.parseInt(pos);
      if (at + name.length() > sql.length() || !sql.regionMatches(true, at, name, 0, name.length())
          || !sql.substring(at + name.length()).stripLeading().startsWith("(")) {
        return mapped;
      }
      String probe = sql.substring(0, at) + "pi" + sql.substring(at + name.length());
      String arguments;
      try (java.sql.PreparedStatement ignored = duck.prepareStatement(probe)) {
        arguments = ""; // it bound: pi() has no arguments, nor has the call
      } catch (SQLException probeError) {
        String probeRaw = probeError.getMessage() == null ? "" : probeError.getMessage();
        int b = probeRaw.indexOf('{');
        String message = b < 0 ? probeRaw : JSON.readTree(probeRaw.substring(b)).path("exception_message").asText("");
        Matcher noMatch = NO_FUNCTION_MATCHES.matcher(message.lines().findFirst().orElse(""));
        if (!noMatch.matches() || !noMatch.group(1).equals("pi")) {
          return mapped;
        }
        arguments = pgArguments(noMatch.group(2));
      }
      return missingFunction(name, arguments, mapped.position(), e);
    } catch (IOException | RuntimeException ignored) {
      return mapped;
    }
  }

  private static final Pattern JAVA_TRACE = Pattern.compile("\\R\\s*at [\\w.$<>/]+\\(.*", Pattern.DOTALL);

  private static FloeException classify(String type, String subtype, String message, int position, SQLException e) {
    Matcher floe = FLOE_ERROR.matcher(message);
    if (floe.find()) {
      // An error a Floe function threw in Java arrives with the Java stack trace appended.
      String text = JAVA_TRACE.matcher(floe.group(2)).replaceFirst("");
      int mark = text.indexOf(DETAIL_MARK);
      return mark < 0 ? new FloeException(floe.group(1), text.strip(), null, null, 0, e)
          : new FloeException(floe.group(1), text.substring(0, mark).strip(), text.substring(mark + 1).strip(), null,
              0, e);
    }
    String first = message.lines().findFirst().orElse(message);
    FloeException worded = inPostgresWords(first, position, e);
    if (worded != null) {
      return worded;
    }
    if (first.startsWith("Division by zero")) {
      return error(SqlState.DIVISION_BY_ZERO, "division by zero", position, e);
    }
    FloeException depth = dev.floe.sql.DepthLimit.error(first, position, e);
    if (depth != null) {
      return depth;
    }
    Matcher tableFunction = TABLE_AS_SCALAR.matcher(first);
    if (tableFunction.matches()) {
      return error(SqlState.UNDEFINED_FUNCTION, "function " + tableFunction.group(1) + " does not exist", position, e);
    }
    if (first.startsWith("More than one row returned by a subquery")) {
      return error(SqlState.CARDINALITY_VIOLATION, "more than one row returned by a subquery used as an expression",
          position, e);
    }
    switch (type) {
      case "Parser" -> {
        return error(SqlState.SYNTAX_ERROR, first, position, e);
      }
      case "Catalog" -> {
        Matcher m = TABLE_MISSING.matcher(message);
        if (m.matches()) {
          return error(SqlState.UNDEFINED_TABLE, "relation \"" + unquote(m.group(1)) + "\" does not exist", position,
              e);
        }
        m = FUNCTION_MISSING.matcher(message);
        if (m.matches()) {
          return error(SqlState.UNDEFINED_FUNCTION, "function " + m.group(1) + " does not exist", position, e);
        }
        m = SCHEMA_MISSING.matcher(message);
        if (m.matches()) {
          return error(SqlState.INVALID_SCHEMA_NAME, "schema \"" + m.group(1) + "\" does not exist", position, e);
        }
        m = TYPE_MISSING.matcher(message);
        if (m.matches()) {
          return error(SqlState.UNDEFINED_OBJECT, "type \"" + m.group(1) + "\" does not exist", position, e);
        }
        return error(SqlState.UNDEFINED_OBJECT, first, position, e);
      }
      case "Binder" -> {
        Matcher m = COLUMN_MISSING.matcher(message);
        if (subtype.equals("COLUMN_NOT_FOUND") || m.matches()) {
          String column = m.matches() ? m.group(1) : first;
          return error(SqlState.UNDEFINED_COLUMN, "column \"" + column + "\" does not exist", position, e);
        }
        Matcher q = QUALIFIED_COLUMN_MISSING.matcher(first);
        if (q.matches()) {
          return error(SqlState.UNDEFINED_COLUMN, "column " + q.group(1) + "." + q.group(2) + " does not exist",
              position, e);
        }
        Matcher r = RELATION_MISSING.matcher(first);
        if (r.matches()) {
          return error(SqlState.UNDEFINED_TABLE, "missing FROM-clause entry for table \"" + r.group(1) + "\"",
              position, e);
        }
        Matcher noMatch = NO_FUNCTION_MATCHES.matcher(first);
        if (noMatch.matches()) {
          return missingFunction(noMatch.group(1), pgArguments(noMatch.group(2)), position, e);
        }
        Matcher ambiguous = NOT_UNIQUE.matcher(first);
        if (ambiguous.matches()) {
          String name = ambiguous.group(1);
          String args = pgArguments(ambiguous.group(2));
          return operator(name) ? error(SqlState.AMBIGUOUS_FUNCTION, "operator is not unique: " + operands(name, args),
              "Could not choose a best candidate operator. You might need to add explicit type casts.", position, e,
              null)
              : error(SqlState.AMBIGUOUS_FUNCTION, "function " + name + "(" + args + ") is not unique",
                  "Could not choose a best candidate function. You might need to add explicit type casts.", position,
                  e, null);
        }
        if (first.contains("No function matches") || first.contains("Cannot compare values")
            || first.contains("No operator")) {
          return error(SqlState.UNDEFINED_FUNCTION, first, position, e);
        }
        if (first.contains("Ambiguous reference")) {
          return error(SqlState.AMBIGUOUS_COLUMN, first, position, e);
        }
        if (first.contains("GROUP BY") || first.contains("aggregate")) {
          return error(SqlState.GROUPING_ERROR, first, position, e);
        }
        if (first.contains("Cannot mix") || first.contains("type")) {
          return error(SqlState.DATATYPE_MISMATCH, first, position, e);
        }
        return error("42000", first, position, e);
      }
      case "Conversion" -> {
        if (first.startsWith("Failure in decode: could not convert blob to UTF8")) {
          return error(SqlState.CHARACTER_NOT_IN_REPERTOIRE, "invalid byte sequence for encoding \"UTF8\"", position, e);
        }
        if (first.contains("field value out of range")) {
          // PostgreSQL: date/time field value out of range: "2024-02-30"
          String value = first.contains(": ") ? first.substring(first.indexOf(": ") + 2) : "";
          value = value.replaceFirst(", expected format is .*$", "");
          return error(SqlState.DATETIME_FIELD_OVERFLOW, "date/time field value out of range"
              + (value.isEmpty() ? "" : ": " + value), position, e);
        }
        Matcher badDate = BAD_DATETIME.matcher(first);
        if (badDate.matches()) {
          return error(SqlState.INVALID_DATETIME_FORMAT, "invalid input syntax for type " + badDate.group(1) + ": \""
              + badDate.group(2) + "\"", position, e);
        }
        Matcher badInput = BAD_INPUT.matcher(first);
        if (badInput.matches() && !INTEGER_OVERFLOW.matcher(first).matches()) {
          return error(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type "
              + pgType(badInput.group(2)) + ": \"" + badInput.group(1) + "\"", position, e);
        }
        Matcher overflow = INTEGER_OVERFLOW.matcher(first);
        if (overflow.matches()) {
          return error(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value \"" + overflow.group(1)
              + "\" is out of range for type " + pgInteger(overflow.group(2)), position, e);
        }
        if (first.startsWith("Could not cast value") && first.contains("DECIMAL")) {
          return error(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow", null, position, e, first);
        }
        if (first.contains("out of range") || first.contains("Overflow")) {
          return error(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, first, position, e);
        }
        if (first.contains("date") || first.contains("time") || first.contains("Date") || first.contains("Time")) {
          return error(SqlState.INVALID_DATETIME_FORMAT, first, position, e);
        }
        return error(SqlState.INVALID_TEXT_REPRESENTATION, first, position, e);
      }
      case "Out of Range" -> {
        Matcher arithmetic = ARITHMETIC_OVERFLOW.matcher(first);
        if (arithmetic.matches()) {
          return error(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, pgInteger(arithmetic.group(1)) + " out of range", position,
              e);
        }
        return error(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, first, position, e);
      }
      case "Invalid Input" -> {
        if (first.contains("Parquet") || first.contains("parquet") || first.contains("magic bytes")) {
          return error(SqlState.DATA_CORRUPTED, first, 0, e);
        }
        return error(SqlState.DATA_EXCEPTION, first, position, e);
      }
      case "Constraint" -> {
        return error("23000", first, position, e);
      }
      case "INTERRUPT", "Interrupt" -> {
        return error(SqlState.QUERY_CANCELED, "canceling statement due to user request", 0, e);
      }
      case "Out of Memory" -> {
        if (first.contains("offload")) {
          // nowhere left to spill: the spill directory's limit, or its disk, is full
          Matcher used = SPILL_USED.matcher(first);
          return error(SqlState.CONFIGURATION_LIMIT_EXCEEDED, "temporary file size exceeds the spill limit"
              + (used.find() ? " (" + used.group(1) + ")" : ""), null, 0, e, null);
        }
        return error(SqlState.OUT_OF_MEMORY, "out of memory", "Raise --memory-limit, or let the statement spill: "
            + "free space on the warehouse's disk.", 0, e, null);
      }
      case "IO" -> {
        FloeException io = error(SqlState.IO_ERROR, first, 0, e);
        return dev.floe.DiskFull.of(io).orElse(io);
      }
      case "Not implemented" -> {
        return error(SqlState.FEATURE_NOT_SUPPORTED, first, position, e);
      }
      case "Permission" -> {
        return error(SqlState.INSUFFICIENT_PRIVILEGE, first, position, e);
      }
      case "Invalid", "Syntax" -> {
        return error(SqlState.SYNTAX_ERROR, first, position, e);
      }
      default -> {
        if (raw(e).contains("Interrupted") || raw(e).contains("INTERRUPT")) {
          return error(SqlState.QUERY_CANCELED, "canceling statement due to user request", 0, e);
        }
        return error(SqlState.INTERNAL_ERROR, type.isEmpty() ? first : type + " error: " + first, position, e);
      }
    }
  }

  private static final Pattern NO_FROM_COLUMN =
      Pattern.compile("Referenced column \"?(.+?)\"? was not found because the FROM clause is missing.*");
  private static final Pattern AMBIGUOUS_COLUMN = Pattern.compile("Ambiguous reference to column name \"(.+?)\".*");
  private static final Pattern DUPLICATE_ALIAS = Pattern.compile("Ambiguous reference to table \"(.+?)\" \\(duplicate "
      + "alias.*");
  private static final Pattern NOT_ALLOWED =
      Pattern.compile("(.+?) clause cannot contain (aggregates|window functions)!?");
  private static final Pattern COLUMNS_MISMATCH = Pattern.compile("Subquery returns (\\d+) columns - expected (\\d+)");
  private static final Pattern CANNOT_MIX = Pattern.compile(
      "Cannot mix values of type (.+?) and (.+?) in (.+?) (?:clause|expression)? ?- an explicit cast is required");
  private static final Pattern NO_CAST = Pattern.compile("Unimplemented type for cast \\((.+?) -> (.+?)\\)");
  private static final Pattern INTEGER_CAST_RANGE = Pattern.compile(
      "Type \\w+ with value .+? can't be cast because the value is out of range for the destination type "
          + "(INT16|INT32|INT64|UINT8|INT8)\\b.*");
  private static final Pattern FLOAT_CAST_RANGE = Pattern.compile(
      "Type \\w+ with value .+? can't be cast because the value is out of range for the destination type "
          + "(FLOAT|DOUBLE)\\b.*");
  private static final Pattern DECIMAL_CAST_RANGE = Pattern.compile(
      "Casting value \"(.*?)\" to type DECIMAL\\((\\d+),(\\d+)\\) failed: value is out of range!.*");
  private static final Pattern ARRAY_LITERAL = Pattern.compile(
      "Type VARCHAR with value '(.*)' can't be cast to the destination type .*\\[\\].*", Pattern.DOTALL);
  private static final Pattern CONVERT_STRING = Pattern.compile(
      ".*?Could not convert string ['\"](.*?)['\"] to (INT8|INT16|INT32|INT64|DOUBLE|FLOAT|BOOL|UUID|DECIMAL\\S*)"
          + "(?: when casting from source column \\S+)?$");
  private static final Pattern DATE_RANGE = Pattern.compile("Date out of range: (-?\\d+)-(\\d+)-(\\d+)");
  private static final Pattern BAD_UNIT = Pattern.compile("extract specifier \"(.+?)\" not recognized");
  /** RE2's messages (as DuckDB passes them on, "what: where") and PostgreSQL's for the same mistake. */
  private static final java.util.Map<String, String> REGEX_ERRORS = java.util.Map.ofEntries(
      java.util.Map.entry("missing )", "parentheses () not balanced"),
      java.util.Map.entry("unexpected )", "parentheses () not balanced"),
      java.util.Map.entry("missing ]", "brackets [] not balanced"),
      java.util.Map.entry("trailing \\", "invalid escape \\ sequence"),
      java.util.Map.entry("invalid escape sequence", "invalid escape \\ sequence"),
      java.util.Map.entry("no argument for repetition operator", "quantifier operand invalid"),
      java.util.Map.entry("missing argument to repetition operator", "quantifier operand invalid"),
      java.util.Map.entry("bad repetition operator", "quantifier operand invalid"),
      java.util.Map.entry("invalid repetition size", "invalid repetition count(s)"),
      java.util.Map.entry("invalid character class range", "invalid character range"),
      java.util.Map.entry("invalid character class", "invalid character class"),
      java.util.Map.entry("invalid named capture group", "invalid regular expression"),
      java.util.Map.entry("invalid perl operator", "quantifier operand invalid"));

  /**
   * DuckDB's words for mistakes PostgreSQL has its own words for, whatever DuckDB's exception type:
   * PostgreSQL's SQLSTATE and message; null for any other message.
   */
  private static FloeException inPostgresWords(String first, int position, SQLException e) {
    Matcher m = NO_FROM_COLUMN.matcher(first);
    if (m.matches()) {
      return error(SqlState.UNDEFINED_COLUMN, "column \"" + m.group(1) + "\" does not exist", position, e);
    }
    if ((m = AMBIGUOUS_COLUMN.matcher(first)).matches()) {
      return error(SqlState.AMBIGUOUS_COLUMN, "column reference \"" + m.group(1) + "\" is ambiguous", position, e);
    }
    if ((m = DUPLICATE_ALIAS.matcher(first)).matches()) {
      return error(SqlState.DUPLICATE_ALIAS, "table name \"" + m.group(1) + "\" specified more than once", 0, e);
    }
    if (first.startsWith("* expression without FROM clause")) {
      return error(SqlState.SYNTAX_ERROR, "SELECT * with no tables specified is not valid", position, e);
    }
    if ((m = NOT_ALLOWED.matcher(first)).matches()) {
      String where = m.group(1).strip();
      return m.group(2).equals("aggregates")
          ? error(SqlState.GROUPING_ERROR, "aggregate functions are not allowed in " + where, position, e)
          : error(SqlState.WINDOWING_ERROR, "window functions are not allowed in " + where, position, e);
    }
    if ((m = COLUMNS_MISMATCH.matcher(first)).matches()) {
      boolean many = Integer.parseInt(m.group(1)) > Integer.parseInt(m.group(2));
      return error(SqlState.SYNTAX_ERROR, "subquery has too " + (many ? "many" : "few") + " columns", position, e);
    }
    if ((m = CANNOT_MIX.matcher(first)).matches()) {
      String a = pgArgument(m.group(1).strip());
      String b = pgArgument(m.group(2).strip());
      String where = m.group(3).strip();
      return switch (where) {
        case "BETWEEN" -> error(SqlState.UNDEFINED_FUNCTION, "operator does not exist: " + a + " >= " + b,
            OPERATOR_HINT, position, e, null);
        case "IN" -> error(SqlState.UNDEFINED_FUNCTION, "operator does not exist: " + a + " = " + b, OPERATOR_HINT,
            position, e, null);
        default -> error(SqlState.DATATYPE_MISMATCH, where + " types " + a + " and " + b + " cannot be matched",
            position, e);
      };
    }
    if ((m = NO_CAST.matcher(first)).matches()) {
      return error(SqlState.CANNOT_COERCE, "cannot cast type " + pgArgument(m.group(1)) + " to "
          + pgArgument(m.group(2)), position, e);
    }
    if ((m = INTEGER_CAST_RANGE.matcher(first)).matches()) {
      return error(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, pgInteger(m.group(1)) + " out of range", 0, e);
    }
    if (FLOAT_CAST_RANGE.matcher(first).matches()) { // PostgreSQL's float8 to float4
      return error(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow", 0, e);
    }
    if ((m = DECIMAL_CAST_RANGE.matcher(first)).matches()) {
      int precision = Integer.parseInt(m.group(2));
      int scale = Integer.parseInt(m.group(3));
      String detail = precision == scale ? "A field with precision " + precision + ", scale " + scale
          + " must round to an absolute value less than 1."
          : "A field with precision " + precision + ", scale " + scale + " must round to an absolute value less "
              + "than 10^" + (precision - scale) + ".";
      return error(SqlState.NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow", null, 0, e, detail);
    }
    if ((m = ARRAY_LITERAL.matcher(first)).matches()) {
      return error(SqlState.INVALID_TEXT_REPRESENTATION, "malformed array literal: \"" + m.group(1) + "\"", position,
          e);
    }
    if ((m = CONVERT_STRING.matcher(first)).matches() && !INTEGER_OVERFLOW.matcher(first).matches()) {
      return error(SqlState.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type " + pgType(m.group(2)) + ": \""
          + m.group(1) + "\"", position, e);
    }
    if ((m = DATE_RANGE.matcher(first)).matches()) {
      return error(SqlState.DATETIME_FIELD_OVERFLOW, String.format(java.util.Locale.ROOT,
          "date field value out of range: %s-%02d-%02d", m.group(1), Integer.parseInt(m.group(2)),
          Integer.parseInt(m.group(3))), 0, e);
    }
    if ((m = BAD_UNIT.matcher(first)).matches()) {
      return error(SqlState.INVALID_PARAMETER_VALUE, "unit \"" + m.group(1) + "\" not recognized", 0, e);
    }
    if (first.startsWith("Invalid escape string")) {
      return error(SqlState.INVALID_ESCAPE_SEQUENCE, "invalid escape string",
          "Escape string must be empty or one character.", 0, e, null);
    }
    int colon = first.indexOf(": ");
    String regex = REGEX_ERRORS.get(colon < 0 ? first : first.substring(0, colon));
    if (regex != null) {
      return error(SqlState.INVALID_REGULAR_EXPRESSION, "invalid regular expression: " + regex, 0, e);
    }
    if (first.startsWith("Set operations can only apply to expressions with the same number of result columns")) {
      return error(SqlState.SYNTAX_ERROR, "each UNION query must have the same number of columns", position, e);
    }
    return null;
  }

  /** A call with no match: of a function, or, named by symbols ({@code +}, {@code ~~}), of an operator. */
  private static FloeException missingFunction(String name, String pgArguments, int position, SQLException e) {
    return operator(name)
        ? error(SqlState.UNDEFINED_FUNCTION, "operator does not exist: " + operands(name, pgArguments), OPERATOR_HINT,
            position, e, null)
        : error(SqlState.UNDEFINED_FUNCTION, "function " + name + "(" + pgArguments + ") does not exist",
            "No function matches the given name and argument types. You might need to add explicit type casts.",
            position, e, null);
  }

  private static boolean operator(String name) {
    return name.matches("[-+*/<>=~!@#%^&|`?]+");
  }

  /** {@code integer + text} for a binary operator's arguments, {@code - text} for a prefix one. */
  private static String operands(String operator, String pgArguments) {
    String[] args = pgArguments.split(", ");
    return args.length == 2 ? args[0] + " " + operator + " " + args[1] : operator + " " + pgArguments;
  }

  static final String OPERATOR_HINT =
      "No operator matches the given name and argument types. You might need to add explicit type casts.";

  private static String unquote(String name) {
    return name.length() > 1 && name.startsWith("\"") && name.endsWith("\"") ? name.substring(1, name.length() - 1)
        : name;
  }

  private static final Pattern NO_FUNCTION_MATCHES = Pattern.compile(
      "No function matches the given name and argument types '([^(']+)\\((.*)\\)'.*", Pattern.DOTALL);
  private static final Pattern NOT_UNIQUE = Pattern.compile(
      "Could not choose a best candidate function for the function call \"([^(\"]+)\\((.*)\\)\".*",
      Pattern.DOTALL);

  /**
   * DuckDB's argument types of a function call ({@code INTEGER_LITERAL, VARCHAR}) as PostgreSQL names
   * them in its errors ({@code integer, text}; a string literal is {@code unknown}; no type modifiers).
   */
  static String pgArguments(String duckArguments) {
    List<String> out = new java.util.ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i <= duckArguments.length(); i++) {
      char c = i < duckArguments.length() ? duckArguments.charAt(i) : ',';
      if (c == '(' || c == '[') {
        depth++;
      } else if (c == ')' || c == ']') {
        depth--;
      } else if (c == ',' && depth == 0) {
        String arg = duckArguments.substring(start, i).strip();
        if (!arg.isEmpty()) {
          out.add(pgArgument(arg));
        }
        start = i + 1;
      }
    }
    return String.join(", ", out);
  }

  private static String pgArgument(String duckType) {
    switch (duckType) {
      case "STRING_LITERAL" -> {
        return "unknown";
      }
      case "INTEGER_LITERAL" -> {
        return "integer";
      }
      case "NULL" -> {
        return "unknown";
      }
      default -> {
        try {
          return TypeMapping.fromDuckdb(duckType).toString().replaceFirst("\\(.*\\)$", "");
        } catch (RuntimeException unknown) {
          return duckType.toLowerCase(java.util.Locale.ROOT);
        }
      }
    }
  }

  private static String pgType(String duckType) {
    return switch (duckType) {
      case "INT8", "INT16", "INT32", "INT64" -> pgInteger(duckType);
      case "DOUBLE" -> "double precision";
      case "FLOAT" -> "real";
      case "BOOL" -> "boolean";
      case "UUID" -> "uuid";
      default -> "numeric";
    };
  }

  private static String pgInteger(String duckType) {
    return switch (duckType) {
      case "INT8", "INT16" -> "smallint";
      case "INT32" -> "integer";
      default -> "bigint";
    };
  }

  private static String raw(SQLException e) {
    return e.getMessage() == null ? "" : e.getMessage();
  }

  private static FloeException error(String state, String message, int position, SQLException e) {
    return new FloeException(state, message, null, null, position, e);
  }

  private static FloeException error(String state, String message, String hint, int position, SQLException e,
      String detail) {
    return new FloeException(state, message, detail, hint, position, e);
  }
}
