package dev.floe.sql;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * PostgreSQL's names for unaliased result columns ({@code SELECT count(*)} is column {@code count},
 * {@code SELECT 1 + 1} is {@code ?column?}), where DuckDB would name them by their text. Clients,
 * drivers and CREATE TABLE AS see the names PostgreSQL users expect.
 */
final class OutputNames {
  static final String UNNAMED = "?column?";
  private static final Map<String, String> TYPE_NAMES = Map.ofEntries(
      Map.entry("integer", "int4"), Map.entry("int", "int4"), Map.entry("int4", "int4"),
      Map.entry("bigint", "int8"), Map.entry("int8", "int8"), Map.entry("smallint", "int2"),
      Map.entry("int2", "int2"), Map.entry("real", "float4"), Map.entry("float4", "float4"),
      Map.entry("double", "float8"), Map.entry("float8", "float8"), Map.entry("float", "float8"),
      Map.entry("boolean", "bool"), Map.entry("bool", "bool"), Map.entry("varchar", "varchar"),
      Map.entry("text", "text"), Map.entry("date", "date"), Map.entry("timestamp", "timestamp"),
      Map.entry("timestamptz", "timestamptz"), Map.entry("timestamp with time zone", "timestamptz"),
      Map.entry("decimal", "numeric"), Map.entry("numeric", "numeric"), Map.entry("uuid", "uuid"),
      Map.entry("time", "time"), Map.entry("interval", "interval"), Map.entry("blob", "bytea"),
      Map.entry("bytea", "bytea"), Map.entry("json", "json"));

  private OutputNames() {}

  /**
   * Every column name of the top-level select list, or empty if none needs renaming or a {@code *}
   * makes positions unknown.
   */
  static List<String> of(JsonNode node) {
    while (node.path("type").asText().equals("SET_OPERATION_NODE")) {
      JsonNode children = node.path("children");
      node = children.isArray() && !children.isEmpty() ? children.get(0) : node.path("left");
    }
    if (!node.path("type").asText().equals("SELECT_NODE")) {
      return List.of();
    }
    List<String> names = new ArrayList<>();
    boolean any = false;
    for (JsonNode item : node.path("select_list")) {
      String cls = item.path("class").asText();
      if (cls.equals("STAR") || cls.equals("COLUMNS")) {
        return List.of();
      }
      String alias = item.path("alias").asText();
      if (!alias.isEmpty()) {
        names.add(alias);
      } else {
        any |= !cls.equals("COLUMN_REF");
        names.add(name(item));
      }
    }
    return any ? names : List.of();
  }

  /** Every column name of the top-level select list (aliases included), or empty when a {@code *} hides them. */
  static List<String> all(JsonNode node) {
    if (!node.path("type").asText().equals("SELECT_NODE")) {
      return List.of();
    }
    List<String> names = new ArrayList<>();
    for (JsonNode item : node.path("select_list")) {
      String cls = item.path("class").asText();
      if (cls.equals("STAR") || cls.equals("COLUMNS")) {
        return List.of();
      }
      String alias = item.path("alias").asText();
      names.add(alias.isEmpty() ? name(item) : alias);
    }
    return names;
  }

  private static String name(JsonNode expr) {
    switch (expr.path("class").asText()) {
      case "COLUMN_REF" -> {
        JsonNode parts = expr.path("column_names");
        return parts.get(parts.size() - 1).asText();
      }
      case "FUNCTION", "AGGREGATE" -> {
        if (expr.path("is_operator").asBoolean(false)) {
          return UNNAMED;
        }
        String fn = expr.path("function_name").asText().toLowerCase(Locale.ROOT);
        String renamed = PgSyntax.renamedFrom(fn); // a PostgreSQL function Floe answers: its own name
        return switch (fn) {
          case "count_star" -> "count";
          case "date_part" -> "date_part";
          default -> renamed != null ? renamed : fn.matches("[a-z_][a-z0-9_]*") ? fn : UNNAMED;
        };
      }
      case "WINDOW" -> {
        String fn = expr.path("function_name").asText().toLowerCase(Locale.ROOT);
        return fn.equals("count_star") ? "count" : fn.isEmpty() ? UNNAMED : fn;
      }
      case "CAST" -> {
        JsonNode child = expr.path("child");
        String cls = child.path("class").asText();
        if (cls.equals("COLUMN_REF") || cls.equals("FUNCTION") || cls.equals("WINDOW") || cls.equals("CAST")) {
          String inner = name(child);
          if (!inner.equals(UNNAMED)) {
            return inner;
          }
        }
        String type = expr.path("type_expr").path("type_name").asText(expr.path("cast_type").path("id").asText())
            .toLowerCase(Locale.ROOT);
        return TYPE_NAMES.getOrDefault(type, UNNAMED);
      }
      case "CASE" -> {
        return "case";
      }
      case "SUBQUERY" -> {
        String kind = expr.path("subquery_type").asText();
        if (kind.equals("EXISTS")) {
          return "exists";
        }
        if (kind.equals("SCALAR")) {
          List<String> inner = of(expr.path("subquery").path("node"));
          return inner.isEmpty() || inner.get(0) == null ? columnName(expr.path("subquery").path("node")) : inner.get(0);
        }
        return UNNAMED;
      }
      default -> {
        return UNNAMED;
      }
    }
  }

  private static String columnName(JsonNode node) {
    JsonNode first = node.path("select_list").path(0);
    if (first.path("class").asText().equals("COLUMN_REF")) {
      return name(first);
    }
    return first.path("alias").asText().isEmpty() ? UNNAMED : first.path("alias").asText();
  }
}
