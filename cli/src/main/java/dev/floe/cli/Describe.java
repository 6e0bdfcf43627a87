package dev.floe.cli;

import dev.floe.Column;
import dev.floe.Database;
import dev.floe.Result;
import dev.floe.Row;
import dev.floe.Session;
import dev.floe.TableInfo;
import dev.floe.sql.Lexer;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The informational backslash commands: {@code \d} in psql's layout, and the listings {@code \dt}, {@code \dn},
 * {@code \l}, {@code \du}, {@code \di}, each read from the catalogs psql reads where Floe has them.
 */
final class Describe {
  private final Database db;
  private final Session session;

  Describe(Database db, Session session) {
    this.db = db;
    this.session = session;
  }

  void listTables(PrintStream out, String schema) {
    listTables(out, schema, false);
  }

  /**
   * {@code \dt [SCHEMA]}; with {@code verbose} ({@code \dt+}) psql's columns of {@code \dt+}, the size being the
   * table's data and delete files in its current version (its Iceberg summary's {@code total-files-size}).
   */
  void listTables(PrintStream out, String schema, boolean verbose) {
    String sql = schema == null ? "SHOW TABLES" : "SHOW TABLES FROM " + schema;
    String shown = schema == null ? session.currentSchema() : schema;
    List<String[]> rows = new ArrayList<>();
    try (Result r = session.sql(sql)) {
      for (Row row : r) {
        rows.add(new String[] {shown, row.getString(0)});
      }
    }
    if (rows.isEmpty()) {
      out.println("Did not find any tables.");
      return;
    }
    if (!verbose) {
      printList(out, "List of tables", List.of("Schema", "Name"), rows);
      return;
    }
    List<String[]> wide = new ArrayList<>();
    for (String[] r : rows) {
      TableInfo info = db.table(Lexer.quoteIdentifier(r[0]) + "." + Lexer.quoteIdentifier(r[1]));
      wide.add(new String[] {r[0], r[1], "table", "floe", "permanent", "iceberg", prettySize(filesSize(info)), ""});
    }
    printList(out, "List of tables", List.of("Schema", "Name", "Type", "Owner", "Persistence", "Access method",
        "Size", "Description"), wide);
  }

  /** The bytes of a table's data and delete files in its current version (0 for a table never written). */
  static long filesSize(TableInfo info) {
    if (info.snapshots().isEmpty()) {
      return 0;
    }
    String size = info.snapshots().get(info.snapshots().size() - 1).summary().get("total-files-size");
    try {
      return size == null ? 0 : Long.parseLong(size);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** A size as PostgreSQL's {@code pg_size_pretty} writes it: {@code 8 bytes}, {@code 12 kB}, {@code 3 MB}. */
  static String prettySize(long bytes) {
    long limit = 10 * 1024;
    if (Math.abs(bytes) < limit) {
      return bytes + " bytes";
    }
    long size = bytes >> 9; // one extra bit to round with
    for (String unit : new String[] {"kB", "MB", "GB", "TB"}) {
      if (Math.abs(size) < limit * 2 - 1 || unit.equals("TB")) {
        return (size + (size < 0 ? -1 : 1)) / 2 + " " + unit;
      }
      size >>= 10;
    }
    throw new AssertionError();
  }

  void listSchemas(PrintStream out) {
    List<String[]> rows = new ArrayList<>();
    try (Result r = session.sql("SHOW SCHEMAS")) {
      for (Row row : r) {
        rows.add(new String[] {row.getString(0)});
      }
    }
    printList(out, "List of schemas", List.of("Name"), rows);
  }

  void listDatabases(PrintStream out) {
    catalogList(out, "List of databases", List.of("Name", "Owner", "Encoding", "Collate", "Ctype"),
        "SELECT datname, pg_get_userbyid(datdba), pg_encoding_to_char(encoding), datcollate, datctype "
            + "FROM pg_database ORDER BY 1", "Did not find any databases.");
  }

  void listRoles(PrintStream out) {
    catalogList(out, "List of roles", List.of("Role name", "Attributes"),
        "SELECT rolname, concat_ws(', ', CASE WHEN rolsuper THEN 'Superuser' END, CASE WHEN rolcreaterole THEN "
            + "'Create role' END, CASE WHEN rolcreatedb THEN 'Create DB' END, CASE WHEN NOT rolcanlogin THEN "
            + "'Cannot login' END) FROM pg_roles ORDER BY 1", "Did not find any roles.");
  }

  void listViews(PrintStream out) {
    catalogList(out, "List of relations", List.of("Schema", "Name", "Type", "Owner"),
        "SELECT schemaname, viewname, 'view', viewowner FROM pg_views WHERE schemaname = "
            + Lexer.quoteString(session.currentSchema()) + " ORDER BY 2", "Did not find any relations.");
  }

  void listIndexes(PrintStream out) {
    catalogList(out, "List of relations", List.of("Schema", "Name", "Type", "Owner", "Table"),
        "SELECT schemaname, indexname, 'index', 'floe', tablename FROM pg_indexes WHERE schemaname = "
            + Lexer.quoteString(session.currentSchema()) + " ORDER BY 2",
        "Did not find any relations.");
  }

  /** The first column of what {@code sql} returns. */
  private List<String> lines(String sql) {
    List<String> lines = new ArrayList<>();
    try (Result r = session.sql(sql)) {
      for (Row row : r) {
        lines.add(row.getString(0));
      }
    }
    return lines;
  }

  /** A titled section of \d: the lines {@code sql} returns, if any. */
  private void section(PrintStream out, String title, String sql) {
    List<String> lines = lines(sql);
    if (!lines.isEmpty()) {
      out.println(title);
      lines.forEach(out::println);
    }
  }

  /** {@code \d VIEW}: its columns, and with {@code verbose} its definition, as psql shows a view; false if none. */
  private boolean describeView(PrintStream out, String name, boolean verbose) {
    String relation = Lexer.quoteString(name) + "::regclass";
    List<String[]> rows = new ArrayList<>();
    String title = null;
    String definition = null;
    try (Result r = session.sql("SELECT n.nspname, c.relname, pg_get_viewdef(c.oid) FROM pg_class c JOIN "
        + "pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'v' AND c.oid = " + relation)) {
      for (Row row : r) {
        title = "View \"" + row.getString(0) + "." + row.getString(1) + "\"";
        definition = row.getString(2);
      }
    } catch (dev.floe.FloeException e) {
      return false;
    }
    if (title == null) {
      return false;
    }
    try (Result r = session.sql("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
        + relation + " ORDER BY attnum")) {
      for (Row row : r) {
        rows.add(verbose ? new String[] {row.getString(0), row.getString(1), "", "", "", "plain", ""}
            : new String[] {row.getString(0), row.getString(1), "", "", ""});
      }
    }
    List<String> headers = verbose ? List.of("Column", "Type", "Collation", "Nullable", "Default", "Storage",
        "Description") : List.of("Column", "Type", "Collation", "Nullable", "Default");
    AlignedTable table = new AlignedTable(headers, new boolean[headers.size()]);
    rows.forEach(table::fit);
    table.printTitle(out, title);
    table.printHeader(out);
    rows.forEach(r -> table.printRow(out, r));
    if (verbose) {
      out.println("View definition:");
      out.println(definition);
    }
    out.println();
    return true;
  }

  /** A psql listing of what {@code sql} returns, or {@code none} when it returns nothing. */
  private void catalogList(PrintStream out, String title, List<String> headers, String sql, String none) {
    List<String[]> rows = new ArrayList<>();
    try (Result r = session.sql(sql)) {
      for (Row row : r) {
        String[] cells = new String[headers.size()];
        for (int c = 0; c < cells.length; c++) {
          cells[c] = row.getString(c) == null ? "" : row.getString(c);
        }
        rows.add(cells);
      }
    }
    if (rows.isEmpty()) {
      out.println(none);
      return;
    }
    printList(out, title, headers, rows);
  }

  static void printList(PrintStream out, String title, List<String> headers, List<String[]> rows) {
    AlignedTable table = new AlignedTable(headers, new boolean[headers.size()]);
    rows.forEach(table::fit);
    table.printTitle(out, title);
    table.printHeader(out);
    rows.forEach(r -> table.printRow(out, r));
    out.println(AlignedTable.footer(rows.size()));
    out.println();
  }

  /**
   * psql's {@code \d}: the columns with their collation, nullability and default, the primary key under
   * Indexes (from the catalogs psql reads), then the table's Iceberg layout and history below.
   */
  void describe(PrintStream out, String name) {
    describe(out, name, false);
  }

  /**
   * {@code \d NAME}; with {@code verbose} ({@code \d+}) also psql's Description column (empty: Floe keeps no comments),
   * the table's size and files, and its properties.
   */
  void describe(PrintStream out, String name, boolean verbose) {
    TableInfo info;
    try {
      info = db.table(name);
    } catch (dev.floe.FloeException e) {
      if (!describeView(out, name, verbose)) {
        throw e;
      }
      return;
    }
    String relation = Lexer.quoteString(Lexer.quoteIdentifier(info.schema()) + "."
        + Lexer.quoteIdentifier(info.name())) + "::regclass";
    Map<String, String> defaults = new HashMap<>();
    try (Result r = session.sql("SELECT a.attname, pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d "
        + "JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.adrelid = " + relation)) {
      for (Row row : r) {
        defaults.put(row.getString(0), row.getString(1));
      }
    }
    List<String> indexes = new ArrayList<>();
    // psql's lines: the primary key first, then the other indexes by name
    try (Result r = session.sql("SELECT i.relname, x.indisprimary, x.indisunique, pg_get_indexdef("
        + "x.indexrelid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = " + relation
        + " ORDER BY x.indisprimary DESC, i.relname")) {
      for (Row row : r) {
        String def = row.getString(3);
        String columns = def.substring(def.indexOf('('));
        String kind = Boolean.TRUE.equals(row.get(1)) ? "PRIMARY KEY, " : Boolean.TRUE.equals(row.get(2))
            ? "UNIQUE, " : "";
        indexes.add("    \"" + row.getString(0) + "\" " + kind + "btree " + columns);
      }
    }
    List<String> uniqueConstraints = lines("SELECT conname FROM pg_constraint WHERE contype = 'u' AND conrelid = "
        + relation);
    indexes.replaceAll(line -> uniqueConstraints.stream().anyMatch(n -> line.startsWith("    \"" + n + "\" UNIQUE, "))
        ? line.replaceFirst(" UNIQUE, ", " UNIQUE CONSTRAINT, ") : line);
    List<String[]> rows = new ArrayList<>();
    for (Column c : info.columns()) {
      String[] cells = {c.name(), c.type().displayName(), "", c.nullable() ? "" : "not null",
          defaults.getOrDefault(c.name(), ""), ""};
      rows.add(verbose ? cells : java.util.Arrays.copyOf(cells, 5));
    }
    List<String> headers = verbose ? List.of("Column", "Type", "Collation", "Nullable", "Default", "Description")
        : List.of("Column", "Type", "Collation", "Nullable", "Default");
    AlignedTable table = new AlignedTable(headers, new boolean[headers.size()]);
    rows.forEach(table::fit);
    table.printTitle(out, "Table \"" + info.schema() + "." + info.name() + "\"");
    table.printHeader(out);
    rows.forEach(r -> table.printRow(out, r));
    if (!indexes.isEmpty()) {
      out.println("Indexes:");
      indexes.forEach(out::println);
    }
    // psql's sections of the table's constraints, and of the foreign keys of other tables that reference it
    section(out, "Check constraints:", "SELECT '    \"' || conname || '\" ' || pg_get_constraintdef(oid, true) FROM "
        + "pg_constraint WHERE contype = 'c' AND conrelid = " + relation + " ORDER BY conname");
    section(out, "Foreign-key constraints:", "SELECT '    \"' || conname || '\" ' || pg_get_constraintdef(oid) "
        + "FROM pg_constraint WHERE contype = 'f' AND conrelid = " + relation + " ORDER BY conname");
    section(out, "Referenced by:", "SELECT '    TABLE \"' || c.relname || '\" CONSTRAINT \"' || k.conname || '\" ' "
        + "|| pg_get_constraintdef(k.oid) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid WHERE "
        + "k.contype = 'f' AND k.confrelid = " + relation + " ORDER BY c.relname, k.conname");
    if (!info.partitioning().isEmpty()) {
      out.println("Partition key: " + String.join(", ", info.partitioning()));
    }
    if (!info.sortOrder().isEmpty()) {
      out.println("Sort order: " + String.join(", ", info.sortOrder()));
    }
    out.println("Version: " + info.currentVersion().map(String::valueOf).orElse("none (never written)") + " ("
        + info.snapshots().size() + (info.snapshots().size() == 1 ? " snapshot" : " snapshots") + ")");
    out.println("Format: Iceberg v" + info.formatVersion());
    out.println("Location: " + info.location());
    if (verbose) {
      Map<String, String> summary = info.snapshots().isEmpty() ? Map.of()
          : info.snapshots().get(info.snapshots().size() - 1).summary();
      out.println("Size: " + prettySize(filesSize(info)) + " (" + summary.getOrDefault("total-data-files", "0")
          + " data files, " + summary.getOrDefault("total-delete-files", "0") + " delete files, "
          + summary.getOrDefault("total-records", "0") + " rows)");
      out.println("Access method: iceberg");
      if (!info.properties().isEmpty()) {
        out.println("Options: " + String.join(", ", new java.util.TreeMap<>(info.properties()).entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue()).toList()));
      }
    }
    out.println();
  }
}
