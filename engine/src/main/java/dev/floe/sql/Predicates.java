package dev.floe.sql;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Converts simple WHERE conjuncts from DuckDB's parse tree into Iceberg expressions for scan planning:
 * comparisons of a column with a constant, IN, BETWEEN, IS [NOT] NULL, and AND/OR/NOT of those.
 *
 * <p>A timestamptz column is compared with the instant its literal names: with the literal's offset,
 * or in the session's TimeZone without one ({@link #instantMicros}), as the session's DuckDB reads it.
 *
 * <p>Pruning must never drop a row the query would return, so conversion is conservative: anything
 * whose meaning in DuckDB might differ from Iceberg's evaluation (floating-point columns, literals that
 * need an implicit cast Iceberg does not perform identically, NULL constants) is not converted, and a
 * conjunct that is not converted simply does not prune.
 */
final class Predicates {
  /** Resolves a COLUMN_REF node to a column of the table being planned, or null if it is another's. */
  interface Columns {
    Types.NestedField resolve(JsonNode columnRef);
  }

  private Predicates() {}

  /** Every top-level AND-ed conjunct of an expression. */
  static List<JsonNode> conjuncts(JsonNode expr) {
    List<JsonNode> out = new ArrayList<>();
    if (expr == null || expr.isNull()) {
      return out;
    }
    if ("CONJUNCTION_AND".equals(expr.path("type").asText())) {
      for (JsonNode child : expr.path("children")) {
        out.addAll(conjuncts(child));
      }
    } else {
      out.add(expr);
    }
    return out;
  }

  /**
   * The Iceberg expression implied by {@code expr} for rows of the table {@code columns} resolves, or
   * null when it cannot be converted exactly.
   */
  static Expression convert(JsonNode expr, Columns columns) {
    String type = expr.path("type").asText();
    switch (type) {
      case "CONJUNCTION_AND", "CONJUNCTION_OR" -> {
        Expression result = null;
        for (JsonNode child : expr.path("children")) {
          Expression c = convert(child, columns);
          if (c == null) {
            return null;
          }
          result = result == null ? c
              : type.equals("CONJUNCTION_AND") ? Expressions.and(result, c) : Expressions.or(result, c);
        }
        return result;
      }
      case "OPERATOR_NOT" -> {
        JsonNode child = expr.path("children").path(0);
        Expression c = convert(child, columns);
        return c == null ? null : Expressions.not(c);
      }
      case "OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL" -> {
        Types.NestedField f = column(expr.path("children").path(0), columns);
        if (f == null) {
          return null;
        }
        return type.equals("OPERATOR_IS_NULL") ? Expressions.isNull(f.name()) : Expressions.notNull(f.name());
      }
      case "COMPARE_EQUAL", "COMPARE_NOTEQUAL", "COMPARE_LESSTHAN", "COMPARE_GREATERTHAN",
          "COMPARE_LESSTHANOREQUALTO", "COMPARE_GREATERTHANOREQUALTO" -> {
        JsonNode left = expr.path("left");
        JsonNode right = expr.path("right");
        Types.NestedField f = column(left, columns);
        JsonNode constant = right;
        boolean flipped = false;
        if (f == null) {
          f = column(right, columns);
          constant = left;
          flipped = true;
        }
        if (f == null) {
          return null;
        }
        Object value = literal(constant, f.type());
        if (value == null) {
          return null;
        }
        String name = f.name();
        return switch (flipped ? flip(type) : type) {
          case "COMPARE_EQUAL" -> Expressions.equal(name, value);
          case "COMPARE_NOTEQUAL" -> Expressions.notEqual(name, value);
          case "COMPARE_LESSTHAN" -> Expressions.lessThan(name, value);
          case "COMPARE_GREATERTHAN" -> Expressions.greaterThan(name, value);
          case "COMPARE_LESSTHANOREQUALTO" -> Expressions.lessThanOrEqual(name, value);
          default -> Expressions.greaterThanOrEqual(name, value);
        };
      }
      case "COMPARE_IN", "COMPARE_NOT_IN" -> {
        JsonNode children = expr.path("children");
        Types.NestedField f = column(children.path(0), columns);
        if (f == null || children.size() < 2) {
          return null;
        }
        List<Object> values = new ArrayList<>();
        for (int k = 1; k < children.size(); k++) {
          Object v = literal(children.get(k), f.type());
          if (v == null) {
            return null;
          }
          values.add(v);
        }
        return type.equals("COMPARE_IN") ? Expressions.in(f.name(), values.toArray())
            : Expressions.notIn(f.name(), values.toArray());
      }
      case "COMPARE_BETWEEN" -> {
        Types.NestedField f = column(expr.path("input"), columns);
        if (f == null) {
          return null;
        }
        Object lower = literal(expr.path("lower"), f.type());
        Object upper = literal(expr.path("upper"), f.type());
        if (lower == null || upper == null) {
          return null;
        }
        return Expressions.and(Expressions.greaterThanOrEqual(f.name(), lower),
            Expressions.lessThanOrEqual(f.name(), upper));
      }
      default -> {
        return null;
      }
    }
  }

  private static String flip(String type) {
    return switch (type) {
      case "COMPARE_LESSTHAN" -> "COMPARE_GREATERTHAN";
      case "COMPARE_GREATERTHAN" -> "COMPARE_LESSTHAN";
      case "COMPARE_LESSTHANOREQUALTO" -> "COMPARE_GREATERTHANOREQUALTO";
      case "COMPARE_GREATERTHANOREQUALTO" -> "COMPARE_LESSTHANOREQUALTO";
      default -> type;
    };
  }

  private static Types.NestedField column(JsonNode node, Columns columns) {
    if (!"COLUMN_REF".equals(node.path("type").asText())) {
      return null;
    }
    Types.NestedField f = columns.resolve(node);
    if (f == null || !f.type().isPrimitiveType()) {
      return null;
    }
    return switch (f.type().typeId()) {
      // Floating point: DuckDB may compare in another precision than the file statistics hold.
      case FLOAT, DOUBLE -> null;
      default -> f;
    };
  }

  /** The Iceberg value of a constant for a column of {@code type}, or null if not exactly convertible. */
  static Object literal(JsonNode node, Type type) {
    String cls = node.path("class").asText();
    String text;
    String kind;
    if (cls.equals("CONSTANT")) {
      kind = node.path("literal").path("kind").asText();
      text = node.path("literal").path("text").asText();
    } else if (cls.equals("CAST") && node.path("child").path("class").asText().equals("CONSTANT")
        && node.path("child").path("literal").path("kind").asText().equals("STRING")) {
      String target = node.path("type_expr").path("type_name").asText().toLowerCase(Locale.ROOT);
      if (!castMatches(target, type)) {
        return null;
      }
      kind = "STRING";
      text = node.path("child").path("literal").path("text").asText();
    } else if (cls.equals("CAST") && node.path("child").path("class").asText().equals("CONSTANT")
        && node.path("child").path("literal").path("kind").asText().equals("INTEGER")
        && INTEGER_TYPES.contains(node.path("type_expr").path("type_name").asText().toLowerCase(Locale.ROOT))
        && isIntegral(type)) {
      // CAST(42 AS BIGINT), as Floe writes typed key values: the same integer (DuckDB rejects one
      // that does not fit the target type).
      kind = "INTEGER";
      text = node.path("child").path("literal").path("text").asText();
    } else {
      return null;
    }
    Literal<?> lit;
    try {
      switch (kind) {
        case "INTEGER" -> {
          if (!isIntegral(type) && type.typeId() != Type.TypeID.DECIMAL) {
            return null;
          }
          lit = Literal.of(Long.parseLong(text));
        }
        case "NUMERIC" -> {
          if (type.typeId() != Type.TypeID.DECIMAL || text.contains("e") || text.contains("E")) {
            return null;
          }
          lit = Literal.of(new BigDecimal(text));
        }
        case "BOOLEAN" -> {
          if (type.typeId() != Type.TypeID.BOOLEAN) {
            return null;
          }
          lit = Literal.of(Boolean.parseBoolean(text));
        }
        case "STRING" -> {
          switch (type.typeId()) {
            case STRING, DATE, TIME -> lit = Literal.of(text);
            case INTEGER, LONG -> {
              // CAST('42' AS bigint), as PostgreSQL clients' parameters arrive: only plain digits, whose
              // value is DuckDB's too (it also reads forms such as '1e3', left unconverted here).
              if (!PLAIN_INTEGER.matcher(text).matches()) {
                return null;
              }
              lit = Literal.of(Long.parseLong(text));
            }
            case TIMESTAMP -> {
              if (((Types.TimestampType) type).shouldAdjustToUTC()) {
                Long micros = instantMicros(text);
                if (micros == null) {
                  return null; // a form DuckDB may read otherwise: not converted, so no pruning
                }
                lit = Literal.of(micros);
              } else {
                lit = Literal.of(text.trim().replaceFirst(" ", "T"));
              }
            }
            default -> {
              return null;
            }
          }
        }
        default -> {
          return null;
        }
      }
    } catch (NumberFormatException e) {
      return null;
    }
    try {
      Literal<?> converted = lit.to(type);
      if (converted == null) {
        return null;
      }
      Object v = converted.value();
      // Iceberg's sentinels for values beyond the type's range: comparisons against them are not exact.
      if (v == null || !(converted.getClass().getName().contains("Literals$"))) {
        return null;
      }
      if (converted.getClass().getSimpleName().startsWith("Above") || converted.getClass().getSimpleName()
          .startsWith("Below")) {
        return null;
      }
      return v;
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * The zone in which the session's DuckDB reads a timestamptz literal without an offset: the session's
   * TimeZone, set on its connection (SessionContext), for the query being bound. Pruning must read a
   * literal exactly as the query's own comparison does.
   */
  private static final ThreadLocal<java.time.ZoneId> ZONE = ThreadLocal.withInitial(() -> java.time.ZoneOffset.UTC);

  /** Runs {@code binding} with literals without an offset read in {@code zone}. */
  static <T> T inZone(java.time.ZoneId zone, java.util.function.Supplier<T> binding) {
    java.time.ZoneId outer = ZONE.get();
    ZONE.set(zone);
    try {
      return binding.get();
    } finally {
      ZONE.set(outer);
    }
  }

  /**
   * ISO dates and times as both PostgreSQL and DuckDB read them, with an optional numeric offset (hours,
   * minutes, seconds: Floe writes a typed literal's offset as {@code +HH:MM:SS} for DuckDB) or Z.
   */
  private static final java.util.regex.Pattern ISO_INSTANT = java.util.regex.Pattern.compile(
      "\\s*(\\d{4})-(\\d{2})-(\\d{2})(?:[ T](\\d{2}):(\\d{2})(?::(\\d{2})(?:\\.(\\d{1,6}))?)?"
          + "\\s*(Z|[+-]\\d{2}(?::?\\d{2}(?::?\\d{2})?)?)?)?\\s*");

  /**
   * Microseconds since 1970 UTC of a timestamptz literal: with its offset, or, without one, in
   * the session's zone ({@link #inZone}); null for any other form (and for a local time the zone skips or
   * repeats, which DuckDB might resolve differently) (words, BC, time zone names, out of range), which is
   * then not used to prune.
   */
  static Long instantMicros(String text) {
    java.util.regex.Matcher m = ISO_INSTANT.matcher(text);
    if (!m.matches()) {
      return null;
    }
    try {
      java.time.LocalDateTime local = java.time.LocalDateTime.of(Integer.parseInt(m.group(1)),
          Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)),
          m.group(4) == null ? 0 : Integer.parseInt(m.group(4)), m.group(5) == null ? 0 : Integer.parseInt(m.group(5)),
          m.group(6) == null ? 0 : Integer.parseInt(m.group(6)));
      long micros = m.group(7) == null ? 0 : Long.parseLong((m.group(7) + "00000").substring(0, 6));
      java.time.ZoneId zone = ZONE.get();
      java.util.List<java.time.ZoneOffset> valid = zone.getRules().getValidOffsets(local);
      java.time.ZoneOffset offset = valid.size() == 1 ? valid.get(0) : null;
      String z = m.group(8);
      if (z != null && !z.equals("Z")) {
        String digits = z.substring(1).replace(":", "");
        int hours = Integer.parseInt(digits.substring(0, 2));
        int minutes = digits.length() > 2 ? Integer.parseInt(digits.substring(2, 4)) : 0;
        int secs = digits.length() > 4 ? Integer.parseInt(digits.substring(4)) : 0;
        int seconds = (hours * 3600 + minutes * 60 + secs) * (z.charAt(0) == '-' ? -1 : 1);
        offset = java.time.ZoneOffset.ofTotalSeconds(seconds);
      } else if (z != null) {
        offset = java.time.ZoneOffset.UTC;
      }
      if (offset == null) {
        return null; // in a daylight-saving gap or overlap of the session's zone: not used to prune
      }
      java.time.Instant instant = local.toInstant(offset);
      return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), micros);
    } catch (java.time.DateTimeException | ArithmeticException | NumberFormatException e) {
      return null;
    }
  }

  private static final java.util.Set<String> INTEGER_TYPES = java.util.Set.of("tinyint", "smallint", "integer",
      "int", "bigint", "int1", "int2", "int4", "int8", "hugeint");

  private static final java.util.regex.Pattern PLAIN_INTEGER = java.util.regex.Pattern.compile("[+-]?[0-9]{1,18}");

  private static boolean castMatches(String target, Type type) {
    return switch (type.typeId()) {
      case INTEGER, LONG -> INTEGER_TYPES.contains(target);
      case DATE -> target.equals("date");
      case TIMESTAMP -> ((Types.TimestampType) type).shouldAdjustToUTC()
          ? target.equals("timestamptz") || target.equals("timestamp with time zone")
          : target.equals("timestamp") || target.startsWith("timestamp without");
      case TIME -> target.equals("time");
      case UUID -> target.equals("uuid");
      case STRING -> target.equals("varchar") || target.equals("text");
      default -> false;
    };
  }

  private static boolean isIntegral(Type type) {
    return type.typeId() == Type.TypeID.INTEGER || type.typeId() == Type.TypeID.LONG;
  }
}
