package dev.floe.sql;

import com.fasterxml.jackson.databind.JsonNode;
import dev.floe.FloeException;
import dev.floe.SqlState;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What SQL from a network client may reach besides tables: nothing of the host. A client names Floe's
 * tables, its CTEs, the system catalogs and table functions that compute rows from their arguments
 * alone; every other DuckDB table function (files, globs, settings, DuckDB's own catalog, nested SQL,
 * logging, checkpoints, and any DuckDB adds later) is refused, and so is a name Floe does not resolve,
 * which DuckDB would otherwise read as a file ({@code FROM '/etc/passwd'}).
 *
 * <p>This is the second of two fences (docs/security.md): the first is DuckDB's own, which a fenced
 * engine sets for the whole process (no file outside the warehouse, no network, no extension,
 * configuration locked). This one keeps a client from the files inside the warehouse that are not its
 * tables' rows: the users file, the TLS key, the catalog. Text Floe composes around the client's (its
 * own references, positions mapping to 0) is Floe's and is not checked.
 */
public final class ClientAccess {
  /** DuckDB table functions whose rows depend on their arguments only. */
  static final Set<String> PURE_TABLE_FUNCTIONS = Set.of("range", "generate_series", "unnest", "json_each",
      "json_tree");

  private ClientAccess() {}

  /** Refuses a table function that is neither pure nor Floe's own ({@link SystemFunctions#DB}). */
  static void checkTableFunction(JsonNode tableRef, int position) {
    JsonNode function = tableRef.path("function");
    String name = function.path("function_name").asText().toLowerCase(Locale.ROOT);
    String catalog = function.path("catalog").asText();
    if (catalog.equalsIgnoreCase(SystemFunctions.DB)) {
      return;
    }
    boolean qualified = !function.path("schema").asText().isEmpty() || !catalog.isEmpty();
    if (!qualified && PURE_TABLE_FUNCTIONS.contains(name)) {
      return;
    }
    throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, "permission denied for function " + name, null,
        "A client session reads tables, never the server's files or settings; to load a file the client has, use "
            + "COPY ... FROM STDIN (psql's \\copy).", position, null);
  }

  /** A table name Floe does not know, which a client may not leave to DuckDB. */
  static FloeException undefinedRelation(List<String> parts, int position) {
    return FloeException.undefinedTable(String.join(".", parts), position);
  }
}
