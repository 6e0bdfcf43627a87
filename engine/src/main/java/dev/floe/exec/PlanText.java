package dev.floe.exec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * EXPLAIN's text as PostgreSQL's reads: one line per row of a {@code QUERY PLAN} column, each operator
 * with its estimated rows, its details indented under it and its inputs after {@code ->}, drawn from
 * DuckDB's JSON plan; then how Floe reads each table (files read of the snapshot's, or a point read).
 * DuckDB's projections, which PostgreSQL's plans do not show, are left out.
 */
final class PlanText {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** Operators PostgreSQL's plans do not show: their input is shown in their place. */
  private static final java.util.Set<String> PASSED_THROUGH = java.util.Set.of("PROJECTION", "RESULT_COLLECTOR",
      "EXPLAIN_ANALYZE");
  /** A detail longer than this (a list of files) is cut, with the count of what was left out. */
  private static final int MAX_DETAIL = 160;

  private PlanText() {}

  /** The lines of DuckDB's {@code EXPLAIN (FORMAT json)} plan {@code json}, then {@code floeNotes}. */
  static List<String> lines(String json, List<String> floeNotes) {
    List<String> out = new ArrayList<>();
    try {
      JsonNode root = JSON.readTree(json);
      if (root.isObject() && root.has("operator")) {
        root = root.get("operator"); // EXPLAIN ANALYZE's profile
      }
      for (JsonNode node : root.isArray() ? root : List.of(root)) {
        node(node, 0, true, out);
      }
    } catch (java.io.IOException e) {
      out.addAll(json.lines().toList()); // not JSON: DuckDB's own text
    }
    out.addAll(floeNotes);
    return out;
  }

  private static void node(JsonNode node, int indent, boolean first, List<String> out) {
    String name = node.has("name") ? node.path("name").asText("") : node.path("type").asText("");
    JsonNode children = node.path("children");
    if (PASSED_THROUGH.contains(name) && children.size() == 1) {
      node(children.get(0), indent, first, out); // PostgreSQL's plans show no projections
      return;
    }
    JsonNode info = node.path("extra_info");
    String rows = info.path("Estimated Cardinality").asText("");
    String pad = " ".repeat(indent);
    String actual = node.has("timing") ? String.format(Locale.ROOT, " (actual time=%.3f ms rows=%d)",
        node.path("timing").asDouble() * 1000, node.path("intermediate_rows").asLong()) : "";
    out.add(pad + (first ? "" : "->  ") + title(name) + (rows.isEmpty() ? "" : "  (rows=" + rows + ")") + actual);
    String detailPad = pad + (first ? "  " : "      ");
    info.fields().forEachRemaining(e -> {
      // file names are the server's paths, which a client is not told
      if (e.getKey().equals("Estimated Cardinality") || e.getKey().equals("Projections")
          || e.getKey().toLowerCase(Locale.ROOT).contains("filename")) {
        return;
      }
      out.add(detailPad + e.getKey() + ": " + detail(e.getValue()));
    });
    for (JsonNode child : children) {
      node(child, indent + (first ? 2 : 6), false, out);
    }
  }

  /** A DuckDB operator's name as a title: {@code HASH_GROUP_BY} is {@code Hash Group By}. */
  private static String title(String name) {
    StringBuilder b = new StringBuilder();
    for (String word : name.toLowerCase(Locale.ROOT).split("_")) {
      if (!word.isEmpty()) {
        b.append(b.length() > 0 ? " " : "").append(Character.toUpperCase(word.charAt(0))).append(word.substring(1));
      }
    }
    return b.toString();
  }

  private static String detail(JsonNode value) {
    List<String> parts = new ArrayList<>();
    if (value.isArray()) {
      value.forEach(v -> parts.add(v.asText()));
    } else {
      parts.add(value.asText());
    }
    String text = String.join(", ", parts).replace('\n', ' ');
    if (text.length() <= MAX_DETAIL) {
      return text;
    }
    int shown = 0;
    int length = 0;
    while (shown < parts.size() && length + parts.get(shown).length() < MAX_DETAIL) {
      length += parts.get(shown++).length() + 2;
    }
    return shown == 0 ? text.substring(0, MAX_DETAIL) + "…"
        : String.join(", ", parts.subList(0, shown)) + ", … (" + (parts.size() - shown) + " more)";
  }
}
